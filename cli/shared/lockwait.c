/*
 * Waiting for a store's lock (wks(1) edits): another edit of the same
 * store holds it while it loads, changes and saves.  After about a second
 * wks says so on stderr, naming the holder where the system tells it;
 * --wait SECONDS bounds the wait (then CLI_EXIT_BUSY, nothing changed),
 * without it wks waits as long as it takes.
 *
 * The lock is flock(2) on the store file (wks_lock_acquire): fcntl's
 * F_GETLK does not see it, but Linux lists every flock in /proc/locks
 * with the pid of the process that took it and the file's device and
 * inode ("1: FLOCK  ADVISORY  WRITE 4577 fe:00:10970108 0 EOF").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* How often a bounded wait tries again. */
#define POLL_MS 50
/* When the wait is announced. */
#define ANNOUNCE_MS 1000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The pid holding a flock on the file `sb` (from /proc/locks), or 0. */
static long lock_holder(const struct stat *sb)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256];
	long pid = 0;

	if (!f)
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long ino;
		char kind[16];
		long p;

		/* "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INO ..."; waiters
		 * ("N: -> FLOCK ...") do not hold it. */
		if (strstr(line, "->") ||
		    sscanf(line, "%*s %15s %*s %*s %ld %x:%x:%llu", kind, &p,
			   &maj, &min, &ino) != 5)
			continue;
		if (strcmp(kind, "FLOCK") || p <= 0 || p == (long)getpid())
			continue;
		if (ino == (unsigned long long)sb->st_ino &&
		    maj == major(sb->st_dev) && min == minor(sb->st_dev))
			pid = p;
	}
	fclose(f);
	return pid;
}

/* " (process 1234, name)", or "" when it is not known. */
static void holder_text(char *out, size_t n, const char *path)
{
	char comm[64] = "", proc[64];
	struct stat sb;
	long pid;
	FILE *f;

	out[0] = 0;
	if (stat(path, &sb) != 0 || !(pid = lock_holder(&sb)))
		return;
	snprintf(proc, sizeof(proc), "/proc/%ld/comm", pid);
	if ((f = fopen(proc, "re")) != NULL) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	if (comm[0]) {
		char *d = cli_display(comm);

		snprintf(out, n, " (process %ld, %s)", pid, d ? d : "?");
		free(d);
	} else {
		snprintf(out, n, " (process %ld)", pid);
	}
}

int cli_lock_wait(wks_lock **out, const char *path, const cli_ctx *c)
{
	const long long start = now_ms();
	const long long limit = c->has_wait ? c->wait_s * 1000LL : -1;
	char who[160];
	int announced = 0, err;

	*out = NULL;
	for (;;) {
		long long waited;

		err = wks_lock_acquire(out, path,
				       WKS_LOCK_EXCLUSIVE | WKS_LOCK_NOWAIT);
		if (err != WKS_ERR_BUSY)
			break;
		waited = now_ms() - start;
		if (limit >= 0 && waited >= limit) {
			holder_text(who, sizeof(who), path);
			cli_err(path, "busy: the store is locked by another "
				"edit%s; gave up after %ld s (--wait); nothing "
				"changed", who, c->wait_s);
			return CLI_EXIT_BUSY;
		}
		if (!announced && waited >= ANNOUNCE_MS) {
			holder_text(who, sizeof(who), path);
			cli_note(path, "waiting for the store's lock, held by "
				 "another edit%s%s", who, limit >= 0 ? "" :
				 " (--wait SECONDS bounds the wait)");
			announced = 1;
			if (limit < 0) {
				/* No bound: wait in the kernel, woken when
				 * the holder lets go. */
				err = wks_lock_acquire(out, path,
						       WKS_LOCK_EXCLUSIVE);
				break;
			}
		}
		sleep_ms(POLL_MS);
	}
	return err < 0 ? err : 0;
}
