/* Whole-file read with a size bound, and atomic whole-file replace. */
#ifndef WKS_STORE_FILE_H
#define WKS_STORE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Read all of `path` into out (at most max_len bytes, else WKS_ERR_LIMIT).
 * WKS_ERR_IO with strerror(errno) in the detail if it cannot be read.
 * Only regular files are read (a folder, FIFO or device is WKS_ERR_IO; a
 * FIFO is refused without blocking).  On success out's previous contents
 * are released and replaced; on failure out is unchanged. */
int wks__file_read(wks_buf *out, const char *path, size_t max_len);

/*
 * Replace `path` atomically with data[len]: create a temporary file in the
 * same folder (O_EXCL, mode 0600, or the mode of the existing file), write
 * everything (retrying short writes and EINTR), fsync, close, rename over
 * path, fsync the folder.  On any failure the temporary file is removed and
 * `path` is untouched.  WKS_ERR_IO with the failing step in the detail.
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

/*
 * Fault injection for tests: when set, called before each system call of
 * wks__file_write_atomic() with its name ("open", "write", "fsync",
 * "close", "rename", "fsyncdir"); a non-zero return is an errno value with
 * which that call fails instead (for "write", a negative value -n means: write
 * at most n bytes this time, a short write).  NULL = no faults.
 */
typedef int (*wks_io_fault_fn)(const char *op, void *ctx);
void wks__file_set_fault_hook(wks_io_fault_fn fn, void *ctx);

#endif
