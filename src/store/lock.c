/* Advisory locks on keystore files (wks_lock_acquire, wks_lock_release).
 *
 * The lock is a flock() on the store file itself, not on a separate lock
 * file: nothing is left behind and any program that locks the same file
 * takes part.  Saving replaces the file by rename() (store/file.c), so the
 * inode locked may stop being the file at `path`: a waiter that opened the
 * old inode gets the lock only after the writer renamed the new file in.
 * Hence, after each flock() the descriptor is compared (st_dev, st_ino)
 * with what `path` names now; if they differ the file was replaced
 * meanwhile, and the lock is dropped and taken again on the new file.
 *
 * flock() rather than fcntl() locks: fcntl() locks belong to the process
 * (a second descriptor on the same file in the same process shares them,
 * and closing any descriptor of the file drops them: loading the store
 * would release the lock), while flock() locks belong to the open file
 * description, so two wks_locks conflict even between threads, and an
 * exclusive lock needs only a read-only descriptor (read-only stores can
 * be locked to be read). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/lock.h"
#include "util/error.h"
#include "wks/wks.h"

/* How often the file may be replaced under us before we give up (each
 * round means another process saved: progress, not a livelock). */
#define LOCK_TRIES 10000

struct wks_lock {
	int fd;         /* the locked file (O_RDONLY, or O_RDWR after a save) */
	unsigned kind;  /* WKS_LOCK_EXCLUSIVE or WKS_LOCK_SHARED */
	wks_file_id id; /* its device and inode */
	char *path;     /* as given to wks_lock_acquire() */
};

int wks__lock_get(const wks_lock *l, int *fd, wks_file_id *id,
                  const char **path, unsigned *kind)
{
	if (!l)
		return wks__err(WKS_ERR_INVALID, "lock is NULL");
	*fd = l->fd;
	*id = l->id;
	*path = l->path;
	*kind = l->kind;
	return WKS_OK;
}

void wks__lock_moved(wks_lock *l, int fd)
{
	struct stat st;

	/* The new file was flock()ed on fd before it got the name; the old
	 * descriptor's lock is dropped with it. */
	if (fstat(fd, &st) == 0) {
		l->id.dev = st.st_dev;
		l->id.ino = st.st_ino;
	}
	(void)flock(l->fd, LOCK_UN);
	close(l->fd);
	l->fd = fd;
}

static _Atomic(wks_lock_hook_fn) g_hook;
static _Atomic(void *) g_hook_ctx;

void wks__lock_set_test_hook(wks_lock_hook_fn fn, void *ctx)
{
	atomic_store(&g_hook_ctx, ctx);
	atomic_store(&g_hook, fn);
}

static const char *errtext(char *buf, size_t cap, int e)
{
	if (strerror_r(e, buf, cap) != 0)
		snprintf(buf, cap, "error %d", e);
	return buf;
}

int wks_lock_acquire(wks_lock **out, const char *path, unsigned flags)
{
	const unsigned kind = flags & (WKS_LOCK_EXCLUSIVE | WKS_LOCK_SHARED);
	struct stat fst, pst;
	wks_lock_hook_fn hook;
	char eb[128];
	int fd = -1, op, rc, tries, e;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out = NULL;
	if (!path || !*path)
		return wks__err(WKS_ERR_INVALID, "NULL or empty path");
	if ((kind != WKS_LOCK_EXCLUSIVE && kind != WKS_LOCK_SHARED) ||
	    (flags & ~(WKS_LOCK_EXCLUSIVE | WKS_LOCK_SHARED | WKS_LOCK_NOWAIT)))
		return wks__err(WKS_ERR_INVALID, "lock flags 0x%x: give exactly "
		                "one of WKS_LOCK_EXCLUSIVE and WKS_LOCK_SHARED",
		                flags);
	op = (kind == WKS_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH) |
	     (flags & WKS_LOCK_NOWAIT ? LOCK_NB : 0);
	for (tries = 0; tries < LOCK_TRIES; tries++) {
		/* O_NONBLOCK: a FIFO must not hang the open (refused below). */
		do
			fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
			          O_NONBLOCK);
		while (fd < 0 && errno == EINTR);
		if (fd < 0) {
			e = errno;
			if (e == ENOENT)
				return wks__err(WKS_ERR_NOTFOUND, "cannot lock "
				                "\"%s\": %s", path,
				                errtext(eb, sizeof(eb), e));
			return wks__err(WKS_ERR_IO, "cannot lock \"%s\": %s",
			                path, errtext(eb, sizeof(eb), e));
		}
		if (fstat(fd, &fst) != 0) {
			e = errno;
			close(fd);
			return wks__err(WKS_ERR_IO, "cannot lock \"%s\": %s",
			                path, errtext(eb, sizeof(eb), e));
		}
		if (!S_ISREG(fst.st_mode)) {
			close(fd);
			return wks__err(WKS_ERR_IO, "cannot lock \"%s\": not a "
			                "regular file", path);
		}
		hook = atomic_load(&g_hook);
		if (hook)
			hook("open", atomic_load(&g_hook_ctx));
		do
			rc = flock(fd, op);
		while (rc != 0 && errno == EINTR);
		if (rc != 0) {
			e = errno;
			close(fd);
			if (e == EWOULDBLOCK)
				return wks__err(WKS_ERR_BUSY, "cannot lock \"%s\": "
				                "it is locked by another process or "
				                "thread (%s)", path,
				                errtext(eb, sizeof(eb), e));
			return wks__err(WKS_ERR_IO, "cannot lock \"%s\": %s",
			                path, errtext(eb, sizeof(eb), e));
		}
		/* Still the file at `path`?  (A save renamed a new one in
		 * while we waited: lock that one instead.) */
		if (stat(path, &pst) == 0 && pst.st_dev == fst.st_dev &&
		    pst.st_ino == fst.st_ino) {
			wks_lock *l = malloc(sizeof(*l));

			if (!l || !(l->path = strdup(path))) {
				free(l);
				close(fd);
				return wks__err(WKS_ERR_NOMEM, "out of memory");
			}
			l->fd = fd;
			l->kind = kind;
			l->id.dev = fst.st_dev;
			l->id.ino = fst.st_ino;
			*out = l;
			return WKS_OK;
		}
		close(fd); /* releases the lock of the stale inode */
		fd = -1;
	}
	return wks__err(WKS_ERR_IO, "cannot lock \"%s\": it was replaced %d "
	                "times while waiting", path, LOCK_TRIES);
}

void wks_lock_release(wks_lock *lock)
{
	if (!lock)
		return;
	/* Closing the only descriptor of the open file description drops
	 * the flock; LOCK_UN first in case a fork()ed child shares it. */
	(void)flock(lock->fd, LOCK_UN);
	close(lock->fd);
	free(lock->path);
	free(lock);
}
