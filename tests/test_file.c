/* Bounded file read and atomic replace (src/store/file.c), with every
 * system call of the save failed in turn through the fault hook. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/file.h"

/* ---- helpers -------------------------------------------------------------- */

typedef struct {
	char *dir;
	char *path; /* dir/store.wks */
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->dir = tu_tmpdir();
	f->path = malloc(strlen(f->dir) + 16);
	assert_non_null(f->path);
	sprintf(f->path, "%s/store.wks", f->dir);
	umask(022);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	wks__file_set_fault_hook(NULL, NULL);
	tu_rmtree(f->dir);
	free(f->dir);
	free(f->path);
	free(f);
	return 0;
}

/* Number of entries in dir other than "." and "..". */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static void assert_content(const char *path, const void *want, size_t len)
{
	size_t n;
	uint8_t *got = tu_read_file(path, &n);

	assert_int_equal(n, len);
	if (len)
		assert_memory_equal(got, want, len);
	free(got);
}

static mode_t file_mode(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static uint8_t *pattern(size_t len, unsigned seed)
{
	uint8_t *p = malloc(len ? len : 1);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 8));
	return p;
}

/* The fault hook: fail the nth call (1-based) of `op` with `err`; with
 * short_n > 0, every "write" writes at most short_n bytes. */
typedef struct {
	const char *op;
	int nth;
	int err;
	int short_n;
	int calls; /* calls of op seen */
	int writes;
} fault_plan;

static int hook(const char *op, void *ctx)
{
	fault_plan *p = ctx;

	if (strcmp(op, "write") == 0)
		p->writes++;
	if (p->op && strcmp(op, p->op) == 0 && ++p->calls == p->nth)
		return p->err;
	if (p->short_n > 0 && strcmp(op, "write") == 0)
		return -p->short_n;
	return 0;
}

/* ---- atomic write ------------------------------------------------------- */

static void test_file__new_file(void **state)
{
	fixture *f = *state;
	uint8_t *data = pattern(5000, 1);

	TU_OK(wks__file_write_atomic(f->path, data, 5000));
	assert_content(f->path, data, 5000);
	assert_int_equal(file_mode(f->path), 0600);
	assert_int_equal(dir_entries(f->dir), 1);
	free(data);

	/* Mode 0600 also under a permissive or restrictive umask. */
	assert_int_equal(unlink(f->path), 0);
	umask(0);
	TU_OK(wks__file_write_atomic(f->path, (const uint8_t *)"x", 1));
	assert_int_equal(file_mode(f->path), 0600);
	assert_int_equal(unlink(f->path), 0);
	umask(0277);
	TU_OK(wks__file_write_atomic(f->path, (const uint8_t *)"x", 1));
	assert_int_equal(file_mode(f->path), 0600);
	umask(022);

	/* Empty data: an empty file. */
	TU_OK(wks__file_write_atomic(f->path, NULL, 0));
	assert_content(f->path, "", 0);
	assert_int_equal(dir_entries(f->dir), 1);
}

static void test_file__existing_mode_kept(void **state)
{
	fixture *f = *state;
	static const mode_t modes[] = { 0644, 0640, 0600, 0444, 0604 };
	uint8_t *data = pattern(777, 2);
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		unlink(f->path); /* 0444 from the last round is not writable */
		tu_write_file(f->path, (const uint8_t *)"old", 3);
		assert_int_equal(chmod(f->path, modes[i]), 0);
		if (geteuid() != 0 && !(modes[i] & 0200)) {
			/* Not writable by its owner: refused (root may). */
			TU_EXPECT(WKS_ERR_IO, wks__file_write_atomic(f->path,
			                                             data, 777));
			assert_content(f->path, "old", 3);
			continue;
		}
		TU_OK(wks__file_write_atomic(f->path, data, 777));
		assert_content(f->path, data, 777);
		assert_int_equal(file_mode(f->path), modes[i]);
		assert_int_equal(dir_entries(f->dir), 1);
	}
	free(data);
}

/* A relative path (no folder part) works in the current folder. */
static void test_file__relative_path(void **state)
{
	fixture *f = *state;
	char cwd[4096];

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(f->dir), 0);
	TU_OK(wks__file_write_atomic("rel.wks", (const uint8_t *)"abc", 3));
	assert_content("rel.wks", "abc", 3);
	assert_int_equal(dir_entries("."), 1);
	assert_int_equal(chdir(cwd), 0);
}

static void test_file__large_with_short_writes(void **state)
{
	fixture *f = *state;
	size_t len = 3u << 20;
	uint8_t *data = pattern(len, 3);
	fault_plan plan = { NULL, 0, 0, 65521, 0, 0 };

	wks__file_set_fault_hook(hook, &plan);
	TU_OK(wks__file_write_atomic(f->path, data, len));
	wks__file_set_fault_hook(NULL, NULL);
	assert_true(plan.writes >= (int)(len / 65521));
	assert_content(f->path, data, len);
	free(data);
}

/* EINTR is retried, for write, fsync and open. */
static void test_file__eintr_retried(void **state)
{
	fixture *f = *state;
	static const char *ops[] = { "write", "fsync", "open" };
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		fault_plan plan = { ops[i], 1, EINTR, 0, 0, 0 };

		tu_write_file(f->path, (const uint8_t *)"old", 3);
		wks__file_set_fault_hook(hook, &plan);
		TU_OK(wks__file_write_atomic(f->path, (const uint8_t *)"new!", 4));
		wks__file_set_fault_hook(NULL, NULL);
		assert_true(plan.calls >= 2);
		assert_content(f->path, "new!", 4);
		assert_int_equal(dir_entries(f->dir), 1);
	}
}

/* Every step failed in turn: WKS_ERR_IO naming the path and the step, the
 * old file byte-identical (or still absent), no temporary file left. */
static void test_file__faults(void **state)
{
	fixture *f = *state;
	static const struct {
		const char *op;
		int nth;
		int err;
		int short_n;
		const char *step;
	} faults[] = {
		{ "open", 1, EACCES, 0, "temporary" },
		{ "open", 1, ENOSPC, 0, "temporary" },
		{ "write", 1, EIO, 0, "write" },
		{ "write", 1, ENOSPC, 0, "write" },
		{ "write", 3, ENOSPC, 1000, "write" }, /* after short writes */
		{ "write", 2, EDQUOT, 7, "write" },
		{ "fsync", 1, EIO, 0, "fsync" },
		{ "close", 1, EIO, 0, "close" },
		{ "rename", 1, EXDEV, 0, "rename" },
		{ "rename", 1, EACCES, 0, "rename" },
		{ "fsyncdir", 1, EIO, 0, "folder" },
	};
	uint8_t *old = pattern(4096, 4), *data = pattern(10000, 5);
	size_t i;
	int existing;
	char want[64];

	for (existing = 1; existing >= 0; existing--) {
		for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
			fault_plan plan = { faults[i].op, faults[i].nth,
			                    faults[i].err, faults[i].short_n, 0, 0 };

			if (existing) {
				tu_write_file(f->path, old, 4096);
				assert_int_equal(chmod(f->path, 0640), 0);
			} else {
				unlink(f->path);
			}
			wks__file_set_fault_hook(hook, &plan);
			TU_EXPECT(WKS_ERR_IO,
			          wks__file_write_atomic(f->path, data, 10000));
			wks__file_set_fault_hook(NULL, NULL);
			if (plan.calls < faults[i].nth)
				fail_msg("%s fault never injected", faults[i].op);
			if (!strstr(wks_error_detail(), f->path) ||
			    !strstr(wks_error_detail(), faults[i].step))
				fail_msg("%s: detail \"%s\"", faults[i].op,
				         wks_error_detail());
			snprintf(want, sizeof(want), "%s", strerror(faults[i].err));
			if (!strstr(wks_error_detail(), want))
				fail_msg("%s: detail \"%s\" lacks \"%s\"",
				         faults[i].op, wks_error_detail(), want);
			if (existing) {
				assert_content(f->path, old, 4096);
				assert_int_equal(file_mode(f->path), 0640);
				assert_int_equal(dir_entries(f->dir), 1);
			} else {
				assert_int_equal(access(f->path, F_OK), -1);
				assert_int_equal(dir_entries(f->dir), 0);
			}
		}
	}
	/* And the save works again afterwards. */
	TU_OK(wks__file_write_atomic(f->path, data, 10000));
	assert_content(f->path, data, 10000);
	assert_int_equal(dir_entries(f->dir), 1);
	free(old);
	free(data);
}

/* A symbolic link: its target is replaced, the link stays. */
static void test_file__symlink(void **state)
{
	fixture *f = *state;
	char *sub = malloc(strlen(f->dir) + 32), *target = malloc(strlen(f->dir) + 32);
	char *dangling = malloc(strlen(f->dir) + 32);
	struct stat st;

	assert_non_null(sub);
	assert_non_null(target);
	assert_non_null(dangling);
	sprintf(sub, "%s/real", f->dir);
	sprintf(target, "%s/real/target.wks", f->dir);
	sprintf(dangling, "%s/dangling.wks", f->dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	tu_write_file(target, (const uint8_t *)"old", 3);
	assert_int_equal(chmod(target, 0644), 0);
	assert_int_equal(symlink("real/target.wks", f->path), 0);

	TU_OK(wks__file_write_atomic(f->path, (const uint8_t *)"new", 3));
	assert_int_equal(lstat(f->path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_content(target, "new", 3);
	assert_int_equal(file_mode(target), 0644);
	assert_int_equal(dir_entries(sub), 1);
	assert_int_equal(dir_entries(f->dir), 2); /* the link and real/ */

	/* A dangling link is an error; nothing is created. */
	assert_int_equal(symlink("real/none.wks", dangling), 0);
	TU_EXPECT(WKS_ERR_IO, wks__file_write_atomic(dangling,
	                                             (const uint8_t *)"x", 1));
	assert_non_null(strstr(wks_error_detail(), dangling));
	assert_int_equal(dir_entries(sub), 1);
	free(sub);
	free(target);
	free(dangling);
}

static void test_file__not_regular(void **state)
{
	fixture *f = *state;
	char *fifo = malloc(strlen(f->dir) + 16);

	assert_non_null(fifo);
	/* A folder at path: refused, nothing created. */
	assert_int_equal(mkdir(f->path, 0700), 0);
	TU_EXPECT(WKS_ERR_IO, wks__file_write_atomic(f->path,
	                                             (const uint8_t *)"x", 1));
	assert_non_null(strstr(wks_error_detail(), f->path));
	assert_int_equal(dir_entries(f->dir), 1);
	assert_int_equal(rmdir(f->path), 0);
	/* A FIFO: not replaced. */
	sprintf(fifo, "%s/fifo", f->dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	TU_EXPECT(WKS_ERR_IO, wks__file_write_atomic(fifo, (const uint8_t *)"x", 1));
	assert_int_equal(dir_entries(f->dir), 1);
	/* A missing folder. */
	sprintf(fifo, "%s/no/such.wks", f->dir);
	TU_EXPECT(WKS_ERR_IO, wks__file_write_atomic(fifo, (const uint8_t *)"x", 1));
	assert_non_null(strstr(wks_error_detail(), fifo));
	/* Bad arguments. */
	TU_EXPECT(WKS_ERR_INVALID, wks__file_write_atomic(NULL, NULL, 0));
	TU_EXPECT(WKS_ERR_INVALID, wks__file_write_atomic("", NULL, 0));
	TU_EXPECT(WKS_ERR_INVALID, wks__file_write_atomic(f->path, NULL, 1));
	sprintf(fifo, "%s/", f->dir);
	TU_EXPECT(WKS_ERR_INVALID, wks__file_write_atomic(fifo, (const uint8_t *)"x", 1));
	free(fifo);
}

/* A folder we cannot write to: the error names the path (as root every
 * folder is writable, so this runs only as another user). */
static void test_file__read_only_folder(void **state)
{
	fixture *f = *state;

	if (geteuid() == 0)
		skip();
	tu_write_file(f->path, (const uint8_t *)"old", 3);
	assert_int_equal(chmod(f->dir, 0500), 0);
	TU_EXPECT(WKS_ERR_IO, wks__file_write_atomic(f->path,
	                                             (const uint8_t *)"new", 3));
	assert_int_equal(chmod(f->dir, 0700), 0);
	assert_non_null(strstr(wks_error_detail(), f->path));
	assert_content(f->path, "old", 3);
	assert_int_equal(dir_entries(f->dir), 1);
}

/* ---- owner, group, mode and write permission (run as root) ----------- */

typedef struct {
	uid_t uid;
	gid_t gid;
} ids;

/* The ids of "nobody" and its group, or 0 if there is no such user. */
static int nobody_ids(ids *out)
{
	struct passwd *pw = getpwnam("nobody");
	struct group *gr = getgrnam("nogroup");

	if (!pw)
		return 0;
	out->uid = pw->pw_uid;
	out->gid = gr ? gr->gr_gid : pw->pw_gid;
	return out->uid != 0;
}

/* Run fn(f) in a child process as nobody:nogroup with no supplementary
 * groups; returns its exit status (fn's return value).  fn must not use
 * cmocka's assertions (they cannot fail across fork): it returns 0 for
 * success, else a line number. */
static int as_nobody(const ids *nb, int (*fn)(fixture *), fixture *f)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setgid(nb->gid) != 0 ||
		    setuid(nb->uid) != 0)
			_exit(99);
		_exit(fn(f));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void owner_of(const char *path, ids *out, mode_t *mode)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	out->uid = st.st_uid;
	out->gid = st.st_gid;
	*mode = st.st_mode & 07777;
}

/*
 * Root edits a store of a service account (nobody:nogroup 0640): the new
 * file keeps owner, group and mode, so the service can still read it.
 * When fchown fails (injected EPERM), the save fails and the old file
 * stays as it was.
 */
static void test_file__owner_kept(void **state)
{
	fixture *f = *state;
	ids nb = { 0, 0 }, got;
	mode_t mode;
	fault_plan plan = { "fchown", 1, EPERM, 0, 0, 0 };

	if (geteuid() != 0 || !nobody_ids(&nb))
		skip();
	tu_write_file(f->path, (const uint8_t *)"old", 3);
	assert_int_equal(chown(f->path, nb.uid, nb.gid), 0);
	assert_int_equal(chmod(f->path, 0640), 0);
	TU_OK(wks__file_write_atomic(f->path, (const uint8_t *)"new", 3));
	assert_content(f->path, "new", 3);
	owner_of(f->path, &got, &mode);
	assert_int_equal(got.uid, nb.uid);
	assert_int_equal(got.gid, nb.gid);
	assert_int_equal(mode, 0640);

	/* Only the group differs (root:nogroup 0660): kept too. */
	assert_int_equal(chown(f->path, 0, nb.gid), 0);
	assert_int_equal(chmod(f->path, 0660), 0);
	TU_OK(wks__file_write_atomic(f->path, (const uint8_t *)"newer", 5));
	owner_of(f->path, &got, &mode);
	assert_int_equal(got.uid, 0);
	assert_int_equal(got.gid, nb.gid);
	assert_int_equal(mode, 0660);

	/* fchown refused: the save is refused, nothing changes. */
	assert_int_equal(chown(f->path, nb.uid, nb.gid), 0);
	wks__file_set_fault_hook(hook, &plan);
	TU_EXPECT(WKS_ERR_IO, wks__file_write_atomic(f->path,
	                                             (const uint8_t *)"x", 1));
	wks__file_set_fault_hook(NULL, NULL);
	assert_int_equal(plan.calls, 1);
	assert_non_null(strstr(wks_error_detail(), "owner"));
	assert_non_null(strstr(wks_error_detail(), f->path));
	assert_content(f->path, "newer", 5);
	owner_of(f->path, &got, &mode);
	assert_int_equal(got.uid, nb.uid);
	assert_int_equal(mode, 0660);
	assert_int_equal(dir_entries(f->dir), 1);
}

/* As nobody: save over a file that nobody may write but does not own. */
static int save_foreign(fixture *f)
{
	int rc = wks__file_write_atomic(f->path, (const uint8_t *)"new", 3);

	if (rc != WKS_ERR_IO)
		return __LINE__;
	if (!strstr(wks_error_detail(), "cannot keep its owner") ||
	    !strstr(wks_error_detail(), strerror(EPERM)))
		return __LINE__;
	return 0;
}

/*
 * A non-root editor of a file owned by another user (root:root 0666 in a
 * folder everyone may write): the new file could not be root's, so the
 * save is refused rather than hand the store to the editor.
 */
static void test_file__owner_cannot_be_kept(void **state)
{
	fixture *f = *state;
	ids nb = { 0, 0 }, got;
	mode_t mode;

	if (geteuid() != 0 || !nobody_ids(&nb))
		skip();
	assert_int_equal(chmod(f->dir, 0777), 0);
	tu_write_file(f->path, (const uint8_t *)"old", 3);
	assert_int_equal(chown(f->path, 0, 0), 0);
	assert_int_equal(chmod(f->path, 0666), 0);
	assert_int_equal(as_nobody(&nb, save_foreign, f), 0);
	assert_content(f->path, "old", 3);
	owner_of(f->path, &got, &mode);
	assert_int_equal(got.uid, 0);
	assert_int_equal(mode, 0666);
	assert_int_equal(dir_entries(f->dir), 1);
}

static int save_read_only(fixture *f)
{
	int rc = wks__file_write_atomic(f->path, (const uint8_t *)"new", 3);

	if (rc != WKS_ERR_IO)
		return __LINE__;
	if (!strstr(wks_error_detail(), "Permission denied") ||
	    !strstr(wks_error_detail(), f->path))
		return __LINE__;
	return 0;
}

/*
 * A read-only store (0444, owned by nobody, in a folder nobody can write):
 * rename() would replace it; the save refuses with "Permission denied" and
 * the file is byte-identical.  Root may still write it.
 */
static void test_file__read_only_refused(void **state)
{
	fixture *f = *state;
	ids nb = { 0, 0 }, got;
	mode_t mode;

	if (geteuid() != 0 || !nobody_ids(&nb))
		skip();
	assert_int_equal(chown(f->dir, nb.uid, nb.gid), 0);
	assert_int_equal(chmod(f->dir, 0755), 0);
	tu_write_file(f->path, (const uint8_t *)"old", 3);
	assert_int_equal(chown(f->path, nb.uid, nb.gid), 0);
	assert_int_equal(chmod(f->path, 0444), 0);
	assert_int_equal(as_nobody(&nb, save_read_only, f), 0);
	assert_content(f->path, "old", 3);
	assert_int_equal(dir_entries(f->dir), 1);
	/* Root writes it, keeping owner and mode. */
	TU_OK(wks__file_write_atomic(f->path, (const uint8_t *)"root", 4));
	assert_content(f->path, "root", 4);
	owner_of(f->path, &got, &mode);
	assert_int_equal(got.uid, nb.uid);
	assert_int_equal(mode, 0444);
}

/* A file name near NAME_MAX still gets a valid temporary name. */
static void test_file__long_name(void **state)
{
	fixture *f = *state;
	char *p = malloc(strlen(f->dir) + 300);
	size_t n;

	assert_non_null(p);
	n = (size_t)sprintf(p, "%s/", f->dir);
	memset(p + n, 'n', 250);
	p[n + 250] = '\0';
	TU_OK(wks__file_write_atomic(p, (const uint8_t *)"abc", 3));
	assert_content(p, "abc", 3);
	TU_OK(wks__file_write_atomic(p, (const uint8_t *)"abcd", 4));
	assert_content(p, "abcd", 4);
	assert_int_equal(dir_entries(f->dir), 1);
	free(p);
}

typedef struct {
	const char *path;
	uint8_t byte;
	int rc;
} writer_arg;

static void *writer(void *arg)
{
	writer_arg *a = arg;
	uint8_t buf[4096];
	int i;

	memset(buf, a->byte, sizeof(buf));
	for (i = 0; i < 20 && a->rc == WKS_OK; i++)
		a->rc = wks__file_write_atomic(a->path, buf, sizeof(buf));
	return NULL;
}

/* Concurrent saves of one path: each save is whole, none leaves litter. */
static void test_file__concurrent_writers(void **state)
{
	fixture *f = *state;
	pthread_t t[4];
	writer_arg a[4];
	uint8_t *got;
	size_t n, i;
	int k;

	for (k = 0; k < 4; k++) {
		a[k].path = f->path;
		a[k].byte = (uint8_t)('A' + k);
		a[k].rc = WKS_OK;
		assert_int_equal(pthread_create(&t[k], NULL, writer, &a[k]), 0);
	}
	for (k = 0; k < 4; k++) {
		pthread_join(t[k], NULL);
		assert_int_equal(a[k].rc, WKS_OK);
	}
	got = tu_read_file(f->path, &n);
	assert_int_equal(n, 4096);
	for (i = 1; i < n; i++)
		assert_int_equal(got[i], got[0]);
	free(got);
	assert_int_equal(dir_entries(f->dir), 1);
}

/* ---- read ------------------------------------------------------------------ */

static void test_file__read(void **state)
{
	fixture *f = *state;
	wks_buf b = WKS_BUF_INIT;
	uint8_t *data = pattern(100000, 6);

	tu_write_file(f->path, data, 100000);
	TU_OK(wks__file_read(&b, f->path, 100000, NULL)); /* equal to the bound: ok */
	assert_int_equal(b.len, 100000);
	assert_memory_equal(b.ptr, data, 100000);
	/* Reading again replaces the contents. */
	TU_OK(wks__file_read(&b, f->path, SIZE_MAX, NULL));
	assert_int_equal(b.len, 100000);
	wks_buf_dispose(&b);

	TU_EXPECT(WKS_ERR_LIMIT, wks__file_read(&b, f->path, 99999, NULL));
	assert_non_null(strstr(wks_error_detail(), f->path));
	assert_null(b.ptr);
	assert_int_equal(b.len, 0);
	TU_EXPECT(WKS_ERR_LIMIT, wks__file_read(&b, f->path, 0, NULL));

	tu_write_file(f->path, data, 0);
	TU_OK(wks__file_read(&b, f->path, 0, NULL)); /* empty file */
	assert_int_equal(b.len, 0);
	wks_buf_dispose(&b);
	free(data);
}

static void test_file__read_errors(void **state)
{
	fixture *f = *state;
	wks_buf b = WKS_BUF_INIT;
	char *p = malloc(strlen(f->dir) + 16);

	assert_non_null(p);
	/* Missing: WKS_ERR_IO with the path and strerror. */
	TU_EXPECT(WKS_ERR_IO, wks__file_read(&b, f->path, 1000, NULL));
	assert_non_null(strstr(wks_error_detail(), f->path));
	assert_non_null(strstr(wks_error_detail(), strerror(ENOENT)));
	/* A folder. */
	TU_EXPECT(WKS_ERR_IO, wks__file_read(&b, f->dir, 1000, NULL));
	assert_non_null(strstr(wks_error_detail(), f->dir));
	assert_non_null(strstr(wks_error_detail(), "folder"));
	/* A FIFO with no writer: refused at once, no hang. */
	sprintf(p, "%s/fifo", f->dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	TU_EXPECT(WKS_ERR_IO, wks__file_read(&b, p, 1000, NULL));
	assert_non_null(strstr(wks_error_detail(), "not a regular file"));
	/* A device. */
	TU_EXPECT(WKS_ERR_IO, wks__file_read(&b, "/dev/zero", 1000, NULL));
	TU_EXPECT(WKS_ERR_INVALID, wks__file_read(&b, NULL, 1000, NULL));
	assert_null(b.ptr);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_file__new_file),
		T(test_file__existing_mode_kept),
		T(test_file__relative_path),
		T(test_file__large_with_short_writes),
		T(test_file__eintr_retried),
		T(test_file__faults),
		T(test_file__symlink),
		T(test_file__not_regular),
		T(test_file__read_only_folder),
		T(test_file__owner_kept),
		T(test_file__owner_cannot_be_kept),
		T(test_file__read_only_refused),
		T(test_file__long_name),
		T(test_file__concurrent_writers),
		T(test_file__read),
		T(test_file__read_errors),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
