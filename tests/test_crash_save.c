/*
 * Crash safety of wks_store_save_file() (store/file.c, the atomic writer).
 *
 * 1. SIGKILL at random moments: a child process saves version A and
 *    version B of a store to the same path in a loop; the parent kills it
 *    after a random 0-20 ms (or up to three save times, on a machine so
 *    loaded that a save takes longer), hundreds of times; children start
 *    with A and B in turn.  After every kill the file
 *    must load with the password and hold exactly version A or version B:
 *    every byte before the trailer is identical to A's or B's (a save
 *    writes a fresh random salt, so the salt and MAC differ from save to
 *    save; the store MAC verifying proves those are whole too).
 *
 *    A killed process cannot remove its temporary file: a kill between
 *    creating ".<name>.tmp-XXXXXX" and the rename leaves it behind (and a
 *    kill right after the backup hard link was made leaves that second
 *    name of the old file).  The test counts those, checks that they
 *    match the documented name pattern and nothing else appears, removes
 *    them, and checks that a later successful save leaves no temporary
 *    file.  This is the documented contract: the keystore itself is never
 *    partial; stale ".*.tmp-*" files of a crashed writer may remain
 *    (docs/SECURITY.md).
 *
 * 2. An I/O fault matrix through wks__file_set_fault_hook(): open, write,
 *    ENOSPC, a short write followed by a failure, fsync, close, rename and
 *    the folder fsync each fail in turn (over an existing file and for a
 *    new one): wks_store_save_file() returns WKS_ERR_IO, the old file is
 *    byte-identical and loads (or, for a new path, nothing exists), and no
 *    temporary file remains.  Retryable conditions (EINTR, short writes
 *    alone) must succeed with the new version.
 *
 * Environment: WKS_CRASH_TRIALS (default 100: enough for both versions
 * to be caught, which the test asserts from 100 on; 300 in full mode,
 * WKS_TEST_FULL=1, tests/run.sh --help).
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "store/file.h"

#define PW "crash-test-password"
#define PW_LEN (sizeof(PW) - 1)

/* ---- fixtures ------------------------------------------------------------------ */

typedef struct {
	char *dir;
	char path[4096];
	wks_store *a, *b;
	uint8_t *a_bytes, *b_bytes; /* one save of each, for the prefix */
	size_t a_len, b_len;
} fixture;

static wks_store *make_store(int version)
{
	wks_store *st = tu_store_fast();
	uint8_t key[32];
	char alias[32];
	size_t i, n = version == 0 ? 3 : 40;
	tu_der *certs = NULL;
	size_t nc = tu_pem_ders(&certs, tu_input("trusted-200.pem"),
	                        "CERTIFICATE");

	TU_OK(wks_store_set_property(st, "libwks.kdf.threads", "1"));
	for (i = 0; i < n; i++) {
		memset(key, (int)(i + 16 * version), sizeof(key));
		snprintf(alias, sizeof(alias), "key-%02zu", i);
		TU_OK(wks_store_set_secret_key(st, alias, "AES", key, sizeof(key),
		                               PW, PW_LEN));
	}
	/* Version B is larger (about 100 KB), so that writes take a while. */
	for (i = 0; i < (version == 0 ? 2 : nc); i++) {
		snprintf(alias, sizeof(alias), "cert-%03zu", i);
		TU_OK(wks_store_set_cert_der(st, alias, certs[i].der, certs[i].len));
	}
	tu_ders_free(certs, nc);
	return st;
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->dir = tu_tmpdir();
	snprintf(f->path, sizeof(f->path), "%s/ks.wks", f->dir);
	f->a = make_store(0);
	f->b = make_store(1);
	TU_OK(wks_store_save_buffer(f->a, &f->a_bytes, &f->a_len, PW, PW_LEN));
	TU_OK(wks_store_save_buffer(f->b, &f->b_bytes, &f->b_len, PW, PW_LEN));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	wks__file_set_fault_hook(NULL, NULL);
	wks_store_free(f->a);
	wks_store_free(f->b);
	wks_free(f->a_bytes);
	wks_free(f->b_bytes);
	tu_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* Names in the folder other than ks.wks: temporary ones (".ks.wks.tmp-"
 * followed by six characters) counted in *tmp, anything else fails. */
static size_t list_tmp(const fixture *f, int remove_them)
{
	DIR *d = opendir(f->dir);
	struct dirent *de;
	size_t tmp = 0;
	char p[4096];

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		const char *n = de->d_name;

		if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "ks.wks"))
			continue;
		if (strncmp(n, ".ks.wks.tmp-", 12) != 0 || strlen(n) != 18)
			fail_msg("unexpected file in the folder: \"%s\"", n);
		tmp++;
		if (remove_them) {
			snprintf(p, sizeof(p), "%s/%s", f->dir, n);
			assert_int_equal(unlink(p), 0);
		}
	}
	closedir(d);
	return tmp;
}

/* 0 if the file holds version A, 1 for B; fails the test otherwise. */
static int check_file(const fixture *f, const char *when)
{
	wks_store *st = NULL;
	uint8_t *data;
	size_t len;
	int rc, which = -1;

	data = tu_read_file(f->path, &len);
	TU_OK(wks_store_new(&st));
	rc = wks_store_load_buffer(st, data, len, PW, PW_LEN);
	if (rc != WKS_OK)
		fail_msg("%s: the keystore does not load: %d (%s)", when, rc,
		         wks_error_detail());
	if (len == f->a_len &&
	    memcmp(data, f->a_bytes, len - WKS_TRAILER_LEN) == 0)
		which = 0;
	else if (len == f->b_len &&
	         memcmp(data, f->b_bytes, len - WKS_TRAILER_LEN) == 0)
		which = 1;
	else
		fail_msg("%s: the keystore (%zu bytes) is neither version A nor "
		         "B", when, len);
	wks_store_free(st);
	free(data);
	return which;
}

/* ---- 1. SIGKILL ---------------------------------------------------------- */

/* Save A and B in turn, starting with `first` (0 = A, 1 = B), so that a
 * child killed after its first save leaves either version. */
static void child_loop(const fixture *f, unsigned first)
{
	unsigned i;

	for (i = first;; i++)
		if (wks_store_save_file(i & 1 ? f->b : f->a, f->path, PW,
		                        PW_LEN) != WKS_OK)
			_exit(3);
}

static void test_crash__sigkill_during_saves(void **state)
{
	fixture *f = *state;
	size_t trials = tu_env_count("WKS_CRASH_TRIALS", 100, 300), t;
	size_t seen[2] = { 0, 0 }, left_tmp = 0, trials_with_tmp = 0;
	unsigned seed = (unsigned)time(NULL);
	struct timespec ts, s0, s1;
	time_t t0 = time(NULL);
	long window_us;

	/* The kill window: 0-20 ms, or up to 3 saves where saving is slower
	 * (a loaded machine), so that saves do complete before some kills. */
	clock_gettime(CLOCK_MONOTONIC, &s0);
	TU_OK(wks_store_save_file(f->a, f->path, PW, PW_LEN));
	clock_gettime(CLOCK_MONOTONIC, &s1);
	window_us = ((long)(s1.tv_sec - s0.tv_sec) * 1000000L +
	             (s1.tv_nsec - s0.tv_nsec) / 1000) * 3;
	if (window_us < 20000)
		window_us = 20000;
	srand(seed);
	for (t = 0; t < trials; t++) {
		pid_t pid = fork();
		int status = 0;
		char when[64];
		size_t n;

		assert_true(pid >= 0);
		if (pid == 0)
			child_loop(f, (unsigned)(t & 1)); /* never returns */
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(rand() % (window_us + 1)) * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec = ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
		}
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFSIGNALED(status))
			fail_msg("trial %zu: the saving child exited (status %d)", t,
			         status);
		snprintf(when, sizeof(when), "after kill %zu", t);
		seen[check_file(f, when)]++;
		if ((n = list_tmp(f, 1)) > 0) {
			left_tmp += n;
			trials_with_tmp++;
		}
	}
	print_message("crash: %zu kills within %ld ms (seed %u, %lds): keystore "
	              "intact every time (version A %zu times, B %zu times); %zu "
	              "kills left %zu temporary file(s) of the killed writer "
	              "(removed)\n", trials, window_us / 1000, seed,
	              (long)(time(NULL) - t0), seen[0], seen[1],
	              trials_with_tmp, left_tmp);
	/* Both versions must have been caught, or the kill times are off. */
	if (trials >= 100) {
		assert_true(seen[0] > 0);
		assert_true(seen[1] > 0);
	}
	/* A later successful save leaves nothing behind. */
	TU_OK(wks_store_save_file(f->b, f->path, PW, PW_LEN));
	assert_int_equal(check_file(f, "after a clean save"), 1);
	assert_int_equal(list_tmp(f, 0), 0);
}

/* ---- 2. fault matrix ------------------------------------------------------- */

typedef struct {
	const char *op;   /* which call fails */
	int nth;          /* at its nth occurrence (1-based) */
	int err;          /* errno to inject (or -n: short writes of n bytes) */
	int then_err;     /* short writes: the errno of write nth + 1 */
	int want;         /* WKS_ERR_IO, or WKS_OK for retryable faults */
	const char *what;
} fault_spec;

typedef struct {
	const fault_spec *s;
	int seen;
	int fired;
} fault;

static int fault_hook(const char *op, void *ctx)
{
	fault *fl = ctx;
	const fault_spec *s = fl->s;

	if (strcmp(op, s->op) != 0)
		return 0;
	fl->seen++;
	if (s->err < 0) {
		/* short writes of -err bytes, until then_err fires */
		if (s->then_err && fl->seen > s->nth) {
			fl->fired++;
			return s->then_err;
		}
		return s->err;
	}
	if (fl->seen == s->nth) {
		fl->fired++;
		return s->err;
	}
	return 0;
}

static void run_fault(fixture *f, const fault_spec *s, int existing)
{
	fault fl = { s, 0, 0 };
	uint8_t *before = NULL, *after;
	size_t before_len = 0, after_len;
	struct stat sb;
	int rc;

	unlink(f->path);
	if (existing) {
		TU_OK(wks_store_save_file(f->a, f->path, PW, PW_LEN));
		before = tu_read_file(f->path, &before_len);
	}
	wks__file_set_fault_hook(fault_hook, &fl);
	rc = wks_store_save_file(f->b, f->path, PW, PW_LEN);
	wks__file_set_fault_hook(NULL, NULL);
	if (fl.fired == 0 && (s->err > 0 || s->then_err))
		fail_msg("%s: the fault never fired", s->what);
	if (rc != s->want)
		fail_msg("%s (%s file): got %d (%s: %s), want %d", s->what,
		         existing ? "existing" : "new", rc, wks_strerror(rc),
		         wks_error_detail(), s->want);
	if (rc == WKS_OK) {
		assert_int_equal(check_file(f, s->what), 1);
	} else if (existing) {
		after = tu_read_file(f->path, &after_len);
		if (after_len != before_len || memcmp(after, before, after_len))
			fail_msg("%s: the old keystore changed", s->what);
		assert_int_equal(check_file(f, s->what), 0);
		free(after);
	} else if (stat(f->path, &sb) == 0) {
		fail_msg("%s: a failed save of a new keystore left a file",
		         s->what);
	}
	if (list_tmp(f, 0) != 0)
		fail_msg("%s (%s file): a temporary file remains", s->what,
		         existing ? "existing" : "new");
	free(before);
}

static void test_crash__io_fault_matrix(void **state)
{
	fixture *f = *state;
	static const fault_spec cases[] = {
		{ "open", 1, EACCES, 0, WKS_ERR_IO, "open fails (EACCES)" },
		{ "open", 1, ENOSPC, 0, WKS_ERR_IO, "open fails (ENOSPC)" },
		{ "open", 1, EINTR, 0, WKS_OK, "open interrupted (EINTR)" },
		{ "write", 1, EIO, 0, WKS_ERR_IO, "write fails (EIO)" },
		{ "write", 1, ENOSPC, 0, WKS_ERR_IO, "write fails (ENOSPC)" },
		{ "write", 1, EDQUOT, 0, WKS_ERR_IO, "write fails (EDQUOT)" },
		{ "write", 1, EINTR, 0, WKS_OK, "write interrupted (EINTR)" },
		{ "write", 0, -1000, 0, WKS_OK, "short writes of 1000 bytes" },
		{ "write", 0, -1, 0, WKS_OK, "short writes of 1 byte" },
		{ "write", 3, -777, ENOSPC, WKS_ERR_IO,
		  "short writes, then ENOSPC (disk full midway)" },
		{ "fsync", 1, EIO, 0, WKS_ERR_IO, "fsync fails (EIO)" },
		{ "fsync", 1, ENOSPC, 0, WKS_ERR_IO, "fsync fails (ENOSPC)" },
		{ "fsync", 1, EINTR, 0, WKS_OK, "fsync interrupted (EINTR)" },
		{ "close", 1, EIO, 0, WKS_ERR_IO, "close fails (EIO)" },
		{ "close", 1, ENOSPC, 0, WKS_ERR_IO, "close fails (ENOSPC, NFS)" },
		{ "rename", 1, EXDEV, 0, WKS_ERR_IO, "rename fails (EXDEV)" },
		{ "rename", 1, EACCES, 0, WKS_ERR_IO, "rename fails (EACCES)" },
		{ "fsyncdir", 1, EIO, 0, WKS_ERR_IO, "folder fsync fails (EIO)" },
	};
	size_t i;
	int existing;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (existing = 1; existing >= 0; existing--) {
			run_fault(f, &cases[i], existing);
			print_message("fault: %-46s %-8s -> %s\n", cases[i].what,
			              existing ? "existing" : "new",
			              cases[i].want == WKS_OK ? "saved"
			              : existing ? "WKS_ERR_IO, old file intact, no "
			                           "temp file"
			                         : "WKS_ERR_IO, no file, no temp file");
		}
}

/* Every call of the writer failing in turn, by position: whatever step
 * fails, the same guarantees hold. */
static int count_hook(const char *op, void *ctx)
{
	int *n = ctx;

	(void)op;
	(*n)++;
	return 0;
}

typedef struct {
	int target, n;
} nth_fault;

static int nth_hook(const char *op, void *ctx)
{
	nth_fault *nf = ctx;

	(void)op;
	return ++nf->n == nf->target ? EIO : 0;
}

static void test_crash__every_step_fails(void **state)
{
	fixture *f = *state;
	int calls = 0, i, rc;
	uint8_t *before, *after;
	size_t bl, al;

	TU_OK(wks_store_save_file(f->a, f->path, PW, PW_LEN));
	wks__file_set_fault_hook(count_hook, &calls);
	TU_OK(wks_store_save_file(f->a, f->path, PW, PW_LEN));
	wks__file_set_fault_hook(NULL, NULL);
	assert_true(calls >= 6);
	for (i = 1; i <= calls; i++) {
		nth_fault nf = { i, 0 };

		TU_OK(wks_store_save_file(f->a, f->path, PW, PW_LEN));
		before = tu_read_file(f->path, &bl);
		wks__file_set_fault_hook(nth_hook, &nf);
		rc = wks_store_save_file(f->b, f->path, PW, PW_LEN);
		wks__file_set_fault_hook(NULL, NULL);
		if (rc != WKS_ERR_IO)
			fail_msg("hook call %d of %d failing: got %d (%s)", i, calls,
			         rc, wks_error_detail());
		after = tu_read_file(f->path, &al);
		assert_true(al == bl && memcmp(after, before, al) == 0);
		assert_int_equal(list_tmp(f, 0), 0);
		free(before);
		free(after);
	}
	print_message("fault: each of the %d hooked calls failing in turn: "
	              "WKS_ERR_IO, old file intact, no temp file\n", calls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_crash__io_fault_matrix, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_crash__every_step_fails, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_crash__sigkill_during_saves,
		                                setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
