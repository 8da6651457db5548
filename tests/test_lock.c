/* Advisory file locks (wks_lock_acquire / wks_lock_release, store/lock.c):
 * exclusion between threads and processes, the retry when a save renamed a
 * new file over the locked one, and concurrent load-modify-save cycles
 * that lose no update when they hold the lock. */
#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/file.h"
#include "store/lock.h"

#define PW "lock-test-password"
#define PW_LEN (sizeof(PW) - 1)

typedef struct {
	char *dir;
	char path[4096];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->dir = tu_tmpdir();
	snprintf(f->path, sizeof(f->path), "%s/store.wks", f->dir);
	tu_write_file(f->path, (const uint8_t *)"v1", 2);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	wks__lock_set_test_hook(NULL, NULL);
	tu_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* 1 if `flags` can be had at once on path (and releases it again). */
static int can_lock(const char *path, unsigned flags)
{
	wks_lock *l = NULL;
	int rc = wks_lock_acquire(&l, path, flags | WKS_LOCK_NOWAIT);

	wks_lock_release(l);
	if (rc != WKS_OK && rc != WKS_ERR_BUSY)
		fail_msg("wks_lock_acquire: %d (%s)", rc, wks_error_detail());
	if (rc == WKS_ERR_BUSY && !strstr(wks_error_detail(), "locked"))
		fail_msg("unexpected detail: %s", wks_error_detail());
	return rc == WKS_OK;
}

/* Exclusive excludes everything, shared excludes only exclusive; a
 * released lock is free again.  Two wks_locks of one thread conflict (they
 * are separate open file descriptions). */
static void test_lock__modes(void **state)
{
	fixture *f = *state;
	wks_lock *a = NULL, *b = NULL;

	TU_OK(wks_lock_acquire(&a, f->path, WKS_LOCK_EXCLUSIVE));
	assert_non_null(a);
	assert_false(can_lock(f->path, WKS_LOCK_EXCLUSIVE));
	assert_false(can_lock(f->path, WKS_LOCK_SHARED));
	wks_lock_release(a);
	assert_true(can_lock(f->path, WKS_LOCK_EXCLUSIVE));

	TU_OK(wks_lock_acquire(&a, f->path, WKS_LOCK_SHARED));
	TU_OK(wks_lock_acquire(&b, f->path, WKS_LOCK_SHARED | WKS_LOCK_NOWAIT));
	assert_false(can_lock(f->path, WKS_LOCK_EXCLUSIVE));
	wks_lock_release(a);
	assert_false(can_lock(f->path, WKS_LOCK_EXCLUSIVE));
	wks_lock_release(b);
	assert_true(can_lock(f->path, WKS_LOCK_EXCLUSIVE));
	wks_lock_release(NULL);

	/* A read-only file can be locked exclusively (flock needs no write
	 * access). */
	assert_int_equal(chmod(f->path, 0444), 0);
	TU_OK(wks_lock_acquire(&a, f->path, WKS_LOCK_EXCLUSIVE));
	wks_lock_release(a);
}

static void test_lock__errors(void **state)
{
	fixture *f = *state;
	wks_lock *l = (wks_lock *)1;
	char p[4200];

	snprintf(p, sizeof(p), "%s/missing.wks", f->dir);
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_lock_acquire(&l, p, WKS_LOCK_EXCLUSIVE));
	assert_null(l);
	assert_non_null(strstr(wks_error_detail(), p));
	TU_EXPECT(WKS_ERR_IO, wks_lock_acquire(&l, f->dir, WKS_LOCK_SHARED));
	assert_null(l);
	TU_EXPECT(WKS_ERR_INVALID, wks_lock_acquire(&l, f->path, 0));
	TU_EXPECT(WKS_ERR_INVALID, wks_lock_acquire(&l, f->path,
	                                            WKS_LOCK_EXCLUSIVE |
	                                            WKS_LOCK_SHARED));
	TU_EXPECT(WKS_ERR_INVALID, wks_lock_acquire(&l, f->path, WKS_LOCK_NOWAIT));
	TU_EXPECT(WKS_ERR_INVALID, wks_lock_acquire(&l, f->path, 0x80 |
	                                            WKS_LOCK_SHARED));
	TU_EXPECT(WKS_ERR_INVALID, wks_lock_acquire(&l, NULL, WKS_LOCK_SHARED));
	TU_EXPECT(WKS_ERR_INVALID, wks_lock_acquire(&l, "", WKS_LOCK_SHARED));
	TU_EXPECT(WKS_ERR_INVALID, wks_lock_acquire(NULL, f->path,
	                                            WKS_LOCK_SHARED));
}

/* ---- the rename retry --------------------------------------------------------- */

typedef struct {
	fixture *f;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int opens;    /* "open" steps seen by the waiter */
	wks_lock *got;
	int rc;
} race;

static void on_open(const char *step, void *ctx)
{
	race *r = ctx;

	if (strcmp(step, "open") != 0)
		return;
	pthread_mutex_lock(&r->mu);
	r->opens++;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

static void *waiter(void *arg)
{
	race *r = arg;

	r->rc = wks_lock_acquire(&r->got, r->f->path, WKS_LOCK_EXCLUSIVE);
	return NULL;
}

/*
 * A holds the lock; B opens the file and waits in flock(); A saves (a new
 * file is renamed over the path) and releases.  B is then granted the
 * lock of the old, replaced inode: it must notice, and lock the new file.
 * Proof: B's lock excludes a lock of what the path names now, and B opened
 * the file twice.
 */
static void test_lock__retry_after_rename(void **state)
{
	fixture *f = *state;
	race r = { f, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0,
	           NULL, -1 };
	wks_lock *a = NULL;
	pthread_t t;
	struct stat before, after;

	TU_OK(wks_lock_acquire(&a, f->path, WKS_LOCK_EXCLUSIVE));
	assert_int_equal(stat(f->path, &before), 0);
	wks__lock_set_test_hook(on_open, &r);
	assert_int_equal(pthread_create(&t, NULL, waiter, &r), 0);
	pthread_mutex_lock(&r.mu);
	while (r.opens < 1)
		pthread_cond_wait(&r.cv, &r.mu);
	pthread_mutex_unlock(&r.mu);
	/* B has the old inode open.  Save while holding A, then release. */
	TU_OK(wks__file_write_atomic(f->path, (const uint8_t *)"v2", 2));
	assert_int_equal(stat(f->path, &after), 0);
	assert_true(after.st_ino != before.st_ino);
	wks_lock_release(a);
	pthread_join(t, NULL);
	wks__lock_set_test_hook(NULL, NULL);
	TU_OK(r.rc);
	assert_non_null(r.got);
	assert_int_equal(r.opens, 2);
	/* B holds the current file: nobody else gets it. */
	assert_false(can_lock(f->path, WKS_LOCK_EXCLUSIVE));
	wks_lock_release(r.got);
	assert_true(can_lock(f->path, WKS_LOCK_EXCLUSIVE));
}

/* ---- load-modify-save from several processes ------------------------------------ */

#define WORKERS 6

/* One child: lock, load, add certificate `k` as "cert-k", save, unlock.
 * Returns the exit code (0 = ok). */
static int worker(const char *path, const tu_der *cert, int k)
{
	wks_store *st = tu_store_fast();
	wks_lock *lk = NULL;
	char alias[32];
	int err;

	snprintf(alias, sizeof(alias), "cert-%d", k);
	if ((err = wks_lock_acquire(&lk, path, WKS_LOCK_EXCLUSIVE)) == WKS_OK &&
	    (err = wks_store_load_locked(st, lk, PW, PW_LEN)) == WKS_OK &&
	    (err = wks_store_set_cert_der(st, alias, cert->der,
	                                  cert->len)) == WKS_OK)
		err = wks_store_save_locked(st, lk, PW, PW_LEN);
	if (err != WKS_OK)
		fprintf(stderr, "worker %d: %s\n", k, wks_error_detail());
	wks_lock_release(lk);
	wks_store_free(st);
	return err == WKS_OK ? 0 : 1;
}

static void test_lock__no_lost_updates(void **state)
{
	fixture *f = *state;
	tu_der *certs = NULL;
	size_t n = tu_pem_ders(&certs, tu_input("trusted-200.pem"),
	                       "CERTIFICATE");
	pid_t pids[WORKERS];
	int round, k, status;

	assert_true(n >= WORKERS);
	for (round = 0; round < 3; round++) {
		wks_store *st = tu_store_fast();

		TU_OK(wks_store_save_file(st, f->path, PW, PW_LEN));
		wks_store_free(st);
		for (k = 0; k < WORKERS; k++) {
			pids[k] = fork();
			assert_true(pids[k] >= 0);
			if (pids[k] == 0)
				_exit(worker(f->path, &certs[k], k));
		}
		for (k = 0; k < WORKERS; k++) {
			assert_int_equal(waitpid(pids[k], &status, 0), pids[k]);
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
		}
		st = tu_store_fast();
		TU_OK(wks_store_load_file(st, f->path, PW, PW_LEN));
		assert_int_equal(wks_store_size(st), WORKERS);
		wks_store_free(st);
	}
	tu_ders_free(certs, n);
}

/* ---- loading and saving through the lock ----------------------------------- */

/* Names in `dir` that start with ".store.wks.tmp-" (temporary files). */
static int tmp_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (!strncmp(e->d_name, ".store.wks.tmp-", 15))
			n++;
	closedir(d);
	return n;
}

/* A file elsewhere (a "root-only" folder) that a redirected save would
 * replace; its path in out. */
static void make_victim(const fixture *f, char *out, size_t cap)
{
	char d[4200];

	snprintf(d, sizeof(d), "%s/private", f->dir);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(out, cap, "%s/target", d);
	tu_write_file(out, (const uint8_t *)"VICTIM", 6);
	assert_int_equal(chmod(out, 0640), 0);
}

static void assert_victim(const char *victim)
{
	size_t n = 0;
	uint8_t *v = tu_read_file(victim, &n);
	struct stat st;

	assert_true(n == 6 && memcmp(v, "VICTIM", 6) == 0);
	free(v);
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
}

/* Item 3: between the load and the save, someone who may write the folder
 * replaces the store with a symbolic link to another file.  The save
 * through the lock refuses (nothing written, the link's target intact, no
 * temporary file); a save by path (wks_store_save_file) would have
 * replaced the target. */
static void test_lock__save_locked_refuses_link_swap(void **state)
{
	fixture *f = *state;
	wks_store *st = tu_store_fast();
	wks_lock *lk = NULL;
	char victim[4300];

	make_victim(f, victim, sizeof(victim));
	TU_OK(wks_store_save_file(st, f->path, PW, PW_LEN));
	TU_OK(wks_lock_acquire(&lk, f->path, WKS_LOCK_EXCLUSIVE));
	TU_OK(wks_store_load_locked(st, lk, PW, PW_LEN));
	assert_int_equal(unlink(f->path), 0);
	assert_int_equal(symlink(victim, f->path), 0);
	TU_EXPECT(WKS_ERR_IO, wks_store_save_locked(st, lk, PW, PW_LEN));
	if (!strstr(wks_error_detail(), "not saved") ||
	    !strstr(wks_error_detail(), "symbolic link"))
		fail_msg("detail: %s", wks_error_detail());
	assert_victim(victim);
	assert_int_equal(tmp_files(f->dir), 0);
	/* Another regular file renamed over it: refused as well. */
	assert_int_equal(unlink(f->path), 0);
	tu_write_file(f->path, (const uint8_t *)"OTHER", 5);
	TU_EXPECT(WKS_ERR_IO, wks_store_save_locked(st, lk, PW, PW_LEN));
	assert_non_null(strstr(wks_error_detail(), "another file"));
	/* Removed: refused. */
	assert_int_equal(unlink(f->path), 0);
	TU_EXPECT(WKS_ERR_IO, wks_store_save_locked(st, lk, PW, PW_LEN));
	assert_non_null(strstr(wks_error_detail(), "gone"));
	assert_int_equal(access(f->path, F_OK), -1);
	assert_int_equal(tmp_files(f->dir), 0);
	wks_lock_release(lk);
	wks_store_free(st);
}

/* The swap comes during the save itself, after the temporary file was
 * written (the fault hook runs before its fsync): the last check, just
 * before the rename, refuses. */
typedef struct {
	const char *path, *victim;
	int done;
} swap_ctx;

static int swap_at_fsync(const char *op, void *ctx)
{
	swap_ctx *s = ctx;

	if (!s->done && !strcmp(op, "fsync")) {
		s->done = 1;
		if (unlink(s->path) != 0 || symlink(s->victim, s->path) != 0)
			return EIO;
	}
	return 0;
}

static void test_lock__save_locked_swap_during_save(void **state)
{
	fixture *f = *state;
	wks_store *st = tu_store_fast();
	wks_lock *lk = NULL;
	char victim[4300];
	swap_ctx s = { f->path, victim, 0 };

	make_victim(f, victim, sizeof(victim));
	TU_OK(wks_store_save_file(st, f->path, PW, PW_LEN));
	TU_OK(wks_lock_acquire(&lk, f->path, WKS_LOCK_EXCLUSIVE));
	TU_OK(wks_store_load_locked(st, lk, PW, PW_LEN));
	wks__file_set_fault_hook(swap_at_fsync, &s);
	TU_EXPECT(WKS_ERR_IO, wks_store_save_locked(st, lk, PW, PW_LEN));
	wks__file_set_fault_hook(NULL, NULL);
	assert_int_equal(s.done, 1);
	assert_non_null(strstr(wks_error_detail(), "symbolic link"));
	assert_victim(victim);
	assert_int_equal(tmp_files(f->dir), 0);
	wks_lock_release(lk);
	wks_store_free(st);
}

/* The lock moves to the new file (no gap for another editor), loads read
 * the locked file whatever the path names, a store reached through a
 * symbolic link of its own is saved through it (the link kept), and a
 * shared lock cannot save. */
static void test_lock__save_locked_keeps_lock(void **state)
{
	fixture *f = *state;
	wks_store *st = tu_store_fast(), *other = tu_store_fast();
	wks_lock *lk = NULL, *sh = NULL;
	const tu_der *c;
	tu_der *certs = NULL;
	size_t n = tu_pem_ders(&certs, tu_input("trusted-200.pem"),
	                       "CERTIFICATE");
	char real[4200], link_path[4200];
	struct stat ls;

	assert_true(n >= 2);
	c = &certs[0];
	TU_OK(wks_store_save_file(st, f->path, PW, PW_LEN));
	TU_OK(wks_lock_acquire(&lk, f->path, WKS_LOCK_EXCLUSIVE));
	TU_OK(wks_store_set_cert_der(st, "one", c->der, c->len));
	TU_OK(wks_store_save_locked(st, lk, PW, PW_LEN));
	assert_false(can_lock(f->path, WKS_LOCK_EXCLUSIVE)); /* still ours */
	TU_OK(wks_store_set_cert_der(st, "two", certs[1].der, certs[1].len));
	TU_OK(wks_store_save_locked(st, lk, PW, PW_LEN)); /* again */
	/* Renamed over by someone not taking the lock: the lock's load still
	 * reads the locked file (two entries), not the new one (empty). */
	snprintf(real, sizeof(real), "%s/new.wks", f->dir);
	TU_OK(wks_store_save_file(other, real, PW, PW_LEN));
	assert_int_equal(rename(real, f->path), 0);
	TU_OK(wks_store_load_locked(other, lk, PW, PW_LEN));
	assert_int_equal(wks_store_size(other), 2);
	wks_lock_release(lk);
	assert_true(can_lock(f->path, WKS_LOCK_EXCLUSIVE));

	/* A store that is a symbolic link to its file. */
	snprintf(link_path, sizeof(link_path), "%s/link.wks", f->dir);
	assert_int_equal(symlink("store.wks", link_path), 0);
	TU_OK(wks_lock_acquire(&lk, link_path, WKS_LOCK_EXCLUSIVE));
	TU_OK(wks_store_load_locked(st, lk, PW, PW_LEN));
	assert_int_equal(wks_store_size(st), 0); /* the file renamed in */
	TU_OK(wks_store_set_cert_der(st, "one", c->der, c->len));
	TU_OK(wks_store_save_locked(st, lk, PW, PW_LEN));
	wks_lock_release(lk);
	assert_int_equal(lstat(link_path, &ls), 0);
	assert_true(S_ISLNK(ls.st_mode));
	TU_OK(wks_store_load_file(other, f->path, PW, PW_LEN));
	assert_int_equal(wks_store_size(other), 1); /* saved through it */

	/* Shared: refused, nothing written. */
	TU_OK(wks_lock_acquire(&sh, f->path, WKS_LOCK_SHARED));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_save_locked(st, sh, PW, PW_LEN));
	wks_lock_release(sh);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_save_locked(st, NULL, PW, PW_LEN));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_load_locked(st, NULL, PW, PW_LEN));
	assert_int_equal(tmp_files(f->dir), 0);
	tu_ders_free(certs, n);
	wks_store_free(other);
	wks_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_lock__modes),
		T(test_lock__errors),
		T(test_lock__retry_after_rename),
		T(test_lock__no_lost_updates),
		T(test_lock__save_locked_refuses_link_swap),
		T(test_lock__save_locked_swap_during_save),
		T(test_lock__save_locked_keeps_lock),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
