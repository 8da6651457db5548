/* Atomic whole-file replace (reading is util/readfile.c).
 *
 * wks__file_write_atomic() in detail (see also docs/PROPERTIES.md,
 * "Atomic saving"):
 *
 *  1. If `path` is a symbolic link, the file it points to is replaced (the
 *     link stays a link): the target is found with realpath().  A dangling
 *     link is an error.
 *  2. An existing `path` must be a regular file that the caller could
 *     write itself (faccessat(W_OK, AT_EACCESS): a read-only file is
 *     refused with "Permission denied" although rename() would ignore its
 *     mode; root may write anyway, as with any file).  Its owner, group
 *     and permission bits are kept.  A new file gets mode 0600 whatever
 *     the umask, and the caller's owner and group.
 *  3. The data goes to ".<name>.tmp-XXXXXX" in the same folder, created
 *     with O_CREAT|O_EXCL (mode 0600, then fchown to the old file's owner
 *     and group if they differ from the caller's, then fchmod to the final
 *     mode, all before any byte is written), written with retries on EINTR
 *     and short writes, fsync()ed and closed.  If the owner or group
 *     cannot be kept (EPERM: only root may give a file away, and a user
 *     may only choose a group of their own), the save fails and the old
 *     file stays: a store never silently changes hands.
 *  4. If `path` exists, a second name for it (a hard link, also
 *     ".<name>.tmp-XXXXXX") is made, then the temporary file is renamed
 *     over `path` and the folder is fsync()ed.  If that folder sync fails,
 *     the old file is renamed back (or the new one removed if there was no
 *     old one), so a failure at any step leaves `path` as it was.  The
 *     hard link is then removed.  On a file system without hard links a
 *     failed folder sync cannot be undone: the error is still reported.
 *  5. On any failure every temporary name is removed.
 *
 * Every step after the first acts in the target's folder through one
 * descriptor of it (openat, fstatat, linkat, renameat, unlinkat, fsync),
 * or by full paths where the folder cannot be opened for reading.  With an
 * expected identity (wks__file_write_atomic_ex(), for saves through a
 * lock) the name replaced must still be that regular file before the
 * temporary file is made and again just before the rename; with a kept
 * descriptor the new file is flock()ed before the rename.
 *
 * A crash (not a failure) can leave a ".<name>.tmp-XXXXXX" file behind,
 * never a partial `path`. */
#include "store/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"

#define IO_CHUNK ((size_t)1 << 30) /* largest single read()/write() */
#define TMP_TRIES 100
#define TMP_BASE_MAX 200 /* bytes of the file name kept in the temp name */

/* ---- fault injection ------------------------------------------------------ */

static _Atomic(wks_io_fault_fn) g_fault_fn;
static _Atomic(void *) g_fault_ctx;

void wks__file_set_fault_hook(wks_io_fault_fn fn, void *ctx)
{
	atomic_store(&g_fault_ctx, ctx);
	atomic_store(&g_fault_fn, fn);
}

/* 0, or the errno (or, for "write", -n) the hook wants for `op`. */
static int fault(const char *op)
{
	wks_io_fault_fn fn = atomic_load(&g_fault_fn);

	return fn ? fn(op, atomic_load(&g_fault_ctx)) : 0;
}

/* ---- helpers -------------------------------------------------------------- */

typedef struct {
	char text[128];
} errbuf;

static const char *errtext(errbuf *b, int e)
{
	/* XSI strerror_r (we do not define _GNU_SOURCE): thread-safe. */
	if (strerror_r(e, b->text, sizeof(b->text)) != 0)
		snprintf(b->text, sizeof(b->text), "error %d", e);
	return b->text;
}

/* ---- atomic write ------------------------------------------------------- */

/* Write ".<base>.tmp-XXXXXX" (X random) into name, after dir + '/'. */
static void tmp_name(char *name, size_t cap, const char *dir, const char *base)
{
	static const char al[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static _Atomic uint64_t counter;
	struct timespec ts;
	char sfx[7];
	uint64_t x;
	int i;

	/* Unpredictability is not needed (O_EXCL / link() refuse existing
	 * names and we retry); only distinct names across threads and
	 * processes. */
	clock_gettime(CLOCK_REALTIME, &ts);
	x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^
	    (uint64_t)getpid() << 40 ^
	    atomic_fetch_add(&counter, UINT64_C(0x9E3779B97F4A7C15));
	x ^= x >> 30;
	x *= UINT64_C(0xBF58476D1CE4E5B9);
	x ^= x >> 27;
	x *= UINT64_C(0x94D049BB133111EB);
	x ^= x >> 31;
	for (i = 0; i < 6; i++) {
		sfx[i] = al[x % 62];
		x /= 62;
	}
	sfx[6] = '\0';
	snprintf(name, cap, "%s/.%.*s.tmp-%s", dir, TMP_BASE_MAX, base, sfx);
}

/* The state of one wks__file_write_atomic() call.  Names are used relative
 * to `dfd`, the folder opened once (so that every step acts in the same
 * folder whatever is renamed meanwhile): `tbase` is the file's name in it
 * and temporary names are "./.<name>.tmp-XXXXXX".  A folder that cannot be
 * opened for reading (mode 0300) gives dfd = AT_FDCWD and full paths. */
typedef struct {
	const char *path;   /* as given (for messages) */
	const char *target; /* the file replaced (path or its link target) */
	const char *tbase;  /* target, relative to dfd */
	const char *tdir;   /* the folder part of temporary names */
	char *dir;          /* the target's folder */
	char *tmp;          /* the temporary file, if created */
	char *bak;          /* the hard link to the old file, if made */
	size_t name_cap;
	int fd;
	int dfd;
} wctx;

static int io_fail(const wctx *w, const char *step, int e)
{
	errbuf eb;

	return wks__err(WKS_ERR_IO, "saving \"%s\": %s: %s", w->path, step,
	                errtext(&eb, e));
}

static int create_tmp(wctx *w, const char *base)
{
	int i, f;

	for (i = 0; i < TMP_TRIES; i++) {
		tmp_name(w->tmp, w->name_cap, w->tdir, base);
		if ((f = fault("open")) != 0) {
			errno = f;
		} else {
			/* O_RDWR: with a lock to carry over, the new file is
			 * locked through this descriptor and kept. */
			w->fd = openat(w->dfd, w->tmp, O_RDWR | O_CREAT | O_EXCL |
			               O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
			if (w->fd >= 0)
				return WKS_OK;
		}
		if (errno != EEXIST && errno != EINTR)
			break;
	}
	return io_fail(w, "cannot create a temporary file in its folder", errno);
}

static int write_all(wctx *w, const uint8_t *data, size_t len)
{
	size_t off = 0, n;
	ssize_t r;
	int f;

	while (off < len) {
		n = len - off < IO_CHUNK ? len - off : IO_CHUNK;
		if ((f = fault("write")) > 0) {
			errno = f;
			r = -1;
		} else {
			if (f < 0 && (size_t)-(long long)f < n)
				n = (size_t)-(long long)f; /* short write */
			r = write(w->fd, data + off, n);
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return io_fail(w, "write", errno);
		}
		if (r == 0)
			return io_fail(w, "write", EIO); /* no progress */
		off += (size_t)r;
	}
	return WKS_OK;
}

/* fsync fd, retrying EINTR; `op` names the hook call. */
static int sync_fd(int fd, const char *op)
{
	int f, rc;

	do {
		if ((f = fault(op)) != 0) {
			errno = f;
			rc = -1;
		} else {
			rc = fsync(fd);
		}
	} while (rc < 0 && errno == EINTR);
	return rc;
}

/* fsync the folder (dfd, or `dir` when it could not be opened).  With
 * `hooked` the fault hook applies ("fsyncdir"); folders that cannot be
 * opened for reading or synced (EACCES, EINVAL, ENOTSUP from a real call)
 * count as synced: nothing more can be done. */
static int sync_dir(const wctx *w, int hooked)
{
	int f, fd, rc, e;

	if (hooked && (f = fault("fsyncdir")) != 0) {
		errno = f;
		return -1;
	}
	if (w->dfd != AT_FDCWD) {
		fd = w->dfd;
	} else {
		do
			fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		while (fd < 0 && errno == EINTR);
		if (fd < 0)
			return errno == EACCES ? 0 : -1;
	}
	do
		rc = fsync(fd);
	while (rc < 0 && errno == EINTR);
	e = errno;
	if (fd != w->dfd)
		close(fd);
	if (rc < 0 && (e == EINVAL || e == ENOTSUP))
		rc = 0;
	errno = e;
	return rc;
}

/* A second name for the old file, so that the rename can be undone. */
static void make_backup(wctx *w, const char *base)
{
	int i;

	if (!(w->bak = malloc(w->name_cap)))
		return;
	for (i = 0; i < TMP_TRIES; i++) {
		tmp_name(w->bak, w->name_cap, w->tdir, base);
		if (linkat(w->dfd, w->tbase, w->dfd, w->bak, 0) == 0)
			return;
		if (errno != EEXIST)
			break;
	}
	free(w->bak);
	w->bak = NULL; /* no hard links here: proceed without */
}

/* With an expected identity: is the name still that file (a regular file,
 * not a link to one)?  WKS_OK, or WKS_ERR_IO ("replaced since it was
 * locked") with nothing written. */
static int check_identity(const wctx *w, const wks_file_id *expect)
{
	struct stat st;

	if (!expect)
		return WKS_OK;
	if (fstatat(w->dfd, w->tbase, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		errbuf eb;

		return wks__err(WKS_ERR_IO, "saving \"%s\": not saved: the "
		                "file that was locked is gone (%s)", w->path,
		                errtext(&eb, errno));
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != expect->dev ||
	    st.st_ino != expect->ino)
		return wks__err(WKS_ERR_IO, "saving \"%s\": not saved: it was "
		                "replaced (by %s) since it was locked and loaded",
		                w->path, w->target != w->path
		                ? "a symbolic link to another file"
		                : S_ISLNK(st.st_mode) ? "a symbolic link"
		                : S_ISREG(st.st_mode) ? "another file"
		                : "something that is not a regular file");
	return WKS_OK;
}

int wks__file_write_atomic_ex(const char *path, const uint8_t *data,
                              size_t len, const wks_file_id *expect,
                              int *keep_fd)
{
	wctx w = { path, path, path, NULL, NULL, NULL, NULL, 0, -1, AT_FDCWD };
	char *real = NULL;
	const char *base, *slash;
	struct stat st;
	mode_t mode = 0600;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	int err = WKS_OK, existed = 0, f, rc, e;

	if (!path || !*path || (!data && len))
		return wks__err(WKS_ERR_INVALID, "NULL or empty path, or NULL data");
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (!(real = realpath(path, NULL))) {
			err = io_fail(&w, "cannot resolve the symbolic link", errno);
			goto done;
		}
		w.target = real;
	}
	slash = strrchr(w.target, '/');
	base = slash ? slash + 1 : w.target;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		err = wks__err(WKS_ERR_INVALID, "saving \"%s\": not a file name",
		               path);
		goto done;
	}
	w.dir = slash ? strndup(w.target, slash == w.target ? 1
	                                  : (size_t)(slash - w.target))
	              : strdup(".");
	if (!w.dir) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	/* Every later step acts in this folder, through its descriptor. */
	do
		w.dfd = open(w.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (w.dfd < 0 && errno == EINTR);
	if (w.dfd >= 0) {
		w.tbase = base;
		w.tdir = ".";
	} else if (errno == EACCES) {
		w.dfd = AT_FDCWD; /* a folder we may write but not read */
		w.tbase = w.target;
		w.tdir = w.dir;
	} else {
		err = io_fail(&w, "cannot open its folder", errno);
		w.dfd = AT_FDCWD;
		goto done;
	}
	if ((err = check_identity(&w, expect)) < 0)
		goto done;
	if (fstatat(w.dfd, w.tbase, &st, 0) == 0) {
		if (!S_ISREG(st.st_mode)) {
			err = wks__err(WKS_ERR_IO, "saving \"%s\": it exists and "
			               "is not a regular file", path);
			goto done;
		}
		existed = 1;
		mode = st.st_mode & 07777;
		/* Owner and group to keep; (uid_t)-1 = already ours. */
		if (st.st_uid != geteuid())
			uid = st.st_uid;
		if (st.st_gid != getegid())
			gid = st.st_gid;
		/* rename() needs only the folder to be writable: refuse a file
		 * that the caller could not open for writing (as keytool's
		 * truncating open would).  AT_EACCESS: the effective ids. */
		if ((f = fault("access")) != 0) {
			errno = f;
			rc = -1;
		} else {
			rc = faccessat(w.dfd, w.tbase, W_OK, AT_EACCESS);
		}
		if (rc != 0) {
			err = io_fail(&w, "the file is not writable", errno);
			goto done;
		}
	} else if (errno != ENOENT || expect) {
		err = io_fail(&w, "stat", errno);
		goto done;
	}

	w.name_cap = strlen(w.tdir) + TMP_BASE_MAX + sizeof("/..tmp-XXXXXX");
	if (!(w.tmp = malloc(w.name_cap))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	if ((err = create_tmp(&w, base)) < 0) {
		free(w.tmp);
		w.tmp = NULL; /* nothing to remove */
		goto done;
	}
	/* The old file's owner and group, then the final mode (fchown may
	 * clear set-id bits; open() applied the umask to 0600 and an existing
	 * file's mode may be wider), before any byte is written. */
	if (uid != (uid_t)-1 || gid != (gid_t)-1) {
		if ((f = fault("fchown")) != 0) {
			errno = f;
			rc = -1;
		} else {
			rc = fchown(w.fd, uid, gid);
		}
		if (rc != 0) {
			errbuf eb;

			err = wks__err(WKS_ERR_IO, "saving \"%s\": cannot keep its "
			               "owner %ju and group %ju (refused rather "
			               "than hand the file to uid %ju, gid %ju): %s",
			               path, (uintmax_t)st.st_uid,
			               (uintmax_t)st.st_gid, (uintmax_t)geteuid(),
			               (uintmax_t)getegid(), errtext(&eb, errno));
			goto done;
		}
	}
	if (fchmod(w.fd, mode) != 0) {
		err = io_fail(&w, "fchmod", errno);
		goto done;
	}
	if ((err = write_all(&w, data, len)) < 0)
		goto done;
	if (sync_fd(w.fd, "fsync") != 0) {
		err = io_fail(&w, "fsync", errno);
		goto done;
	}
	if (keep_fd) {
		/* The new file is locked before it gets the name: the lock
		 * passes from the old file to the new one without a gap. */
		if ((f = fault("close")) != 0) {
			errno = f;
			rc = -1;
		} else {
			rc = flock(w.fd, LOCK_EX | LOCK_NB);
		}
		if (rc != 0) {
			err = io_fail(&w, "lock", errno);
			goto done;
		}
	} else {
		/* close: the descriptor is gone whatever close() returns
		 * (Linux), so never retry it; EINTR is not a failure, the
		 * data is synced. */
		f = fault("close");
		rc = close(w.fd);
		e = errno;
		w.fd = -1;
		if (f != 0 || (rc != 0 && e != EINTR)) {
			err = io_fail(&w, "close", f ? f : e);
			goto done;
		}
	}
	if (existed)
		make_backup(&w, base);
	/* Last check, as late as it can be: from here on only the name is
	 * replaced (rename never follows a link), so a link swapped in now
	 * is replaced itself and what it points to stays untouched. */
	if ((err = check_identity(&w, expect)) < 0)
		goto done;
	if ((f = fault("rename")) != 0) {
		errno = f;
		rc = -1;
	} else {
		rc = renameat(w.dfd, w.tmp, w.dfd, w.tbase);
	}
	if (rc != 0) {
		err = io_fail(&w, "rename", errno);
		goto done;
	}
	free(w.tmp);
	w.tmp = NULL; /* it is `target` now */
	if (sync_dir(&w, 1) != 0) {
		e = errno;
		/* Undo: put the old file back (or remove the new one). */
		if (w.bak && renameat(w.dfd, w.bak, w.dfd, w.tbase) != 0) {
			/* Cannot happen short of another process meddling:
			 * keep the only name the old contents still have. */
			err = wks__err(WKS_ERR_IO, "saving \"%s\": fsync of its "
			               "folder failed and the old file could not "
			               "be put back; it is in \"%s/%s\"", path,
			               w.dir, w.bak);
			free(w.bak);
			w.bak = NULL;
			goto done;
		}
		if (w.bak) {
			free(w.bak);
			w.bak = NULL;
		} else if (!existed) {
			unlinkat(w.dfd, w.tbase, 0);
		}
		(void)sync_dir(&w, 0);
		err = io_fail(&w, "fsync of its folder", e);
		goto done;
	}
	if (keep_fd) {
		*keep_fd = w.fd;
		w.fd = -1;
	}
done:
	if (w.fd >= 0)
		close(w.fd);
	if (w.tmp) {
		unlinkat(w.dfd, w.tmp, 0);
		free(w.tmp);
	}
	if (w.bak) {
		unlinkat(w.dfd, w.bak, 0);
		free(w.bak);
	}
	if (w.dfd >= 0)
		close(w.dfd);
	free(w.dir);
	free(real);
	return err;
}

int wks__file_write_atomic(const char *path, const uint8_t *data, size_t len)
{
	return wks__file_write_atomic_ex(path, data, len, NULL, NULL);
}
