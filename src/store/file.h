/* Atomic whole-file replace (the whole-file read is in util/readfile.h). */
#ifndef WKS_STORE_FILE_H
#define WKS_STORE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"

/* Reading is wks__file_read() (util/readfile.h): config reads properties
 * files with it too. */
#include "util/readfile.h"

/*
 * Replace `path` atomically with data[len]: create a temporary file in the
 * same folder (O_EXCL, mode 0600, or the owner, group and mode of the
 * existing file), write everything (retrying short writes and EINTR),
 * fsync, close, rename over path, fsync the folder.  On any failure the
 * temporary file is removed and `path` is untouched.  WKS_ERR_IO with the
 * failing step in the detail.
 *
 * An existing `path` that the caller could not write itself
 * (faccessat(W_OK, AT_EACCESS); root can) is refused: WKS_ERR_IO, detail
 * "...: the file is not writable: Permission denied".  If its owner or
 * group cannot be given to the new file (a non-root caller saving a file
 * owned by someone else, or with a group the caller is not in), the save
 * is refused: WKS_ERR_IO, detail "...: cannot keep its owner ...".
 *
 * If `path` is a symbolic link, the file it points to (realpath()) is
 * replaced and the link kept; a dangling link is WKS_ERR_IO.  An existing
 * `path` that is not a regular file is refused (WKS_ERR_IO).  To undo the
 * rename when the folder fsync fails, the old file gets a second name (a
 * hard link ".<name>.tmp-XXXXXX") for the duration of the call; on file
 * systems without hard links that one failure leaves the new file in
 * place (still reported).  Details in file.c and docs/PROPERTIES.md.
 */
int wks__file_write_atomic(const char *path, const uint8_t *data, size_t len);

/* The identity of a file: what must still be at the path when a save
 * through a lock commits. */
typedef struct {
	dev_t dev;
	ino_t ino;
} wks_file_id;

/*
 * As wks__file_write_atomic(), with two additions for saving through a
 * lock (wks_store_save_locked()):
 *
 * `expect` (may be NULL): the name replaced (path, or what path links to
 * now) must be a regular file with this device and inode, checked before
 * anything is written and again just before the rename; otherwise
 * WKS_ERR_IO ("... not saved: it was replaced ... since it was locked")
 * and nothing changes.  All steps act through one descriptor of the
 * folder (openat/renameat), and rename() replaces a name, never what a
 * link points to: a link swapped in after the last check is itself
 * replaced, its target is never written.  A missing file is an error.
 *
 * `keep_fd` (may be NULL): on success *keep_fd is a read-write descriptor
 * of the new file, on which flock(LOCK_EX) was taken before the rename.
 */
int wks__file_write_atomic_ex(const char *path, const uint8_t *data,
                              size_t len, const wks_file_id *expect,
                              int *keep_fd);

/*
 * Fault injection for tests: when set, called before each system call of
 * wks__file_write_atomic() with its name ("access", "open", "fchown",
 * "write", "fsync", "close", "rename", "fsyncdir"); a non-zero return is
 * an errno value with which that call fails instead (for "write", a
 * negative value -n means: write at most n bytes this time, a short
 * write).  NULL = no faults.
 */
typedef int (*wks_io_fault_fn)(const char *op, void *ctx);
void wks__file_set_fault_hook(wks_io_fault_fn fn, void *ctx);

#endif
