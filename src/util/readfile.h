/* Whole-file read, bounded by the file's own size.  In util/ because both
 * the store (keystores) and config (properties files) read whole files. */
#ifndef WKS_UTIL_READFILE_H
#define WKS_UTIL_READFILE_H

#include <stddef.h>

#include "util/buf.h"

/*
 * Read all of `path` into out.  Only regular files are read (a folder,
 * FIFO or device is WKS_ERR_IO; a FIFO is refused without blocking).  The
 * file's size (fstat) is checked against max_len first: above it,
 * WKS_ERR_LIMIT with the path, the size and the limit in the detail (the
 * limit named `limit_name` there, if not NULL).  Then exactly that many
 * bytes are read: a file that shrinks or grows while it is read is
 * WKS_ERR_IO ("changed while being read"), never a silently cut or
 * over-long read.  WKS_ERR_IO with strerror(errno) if it cannot be read.
 * On success out's previous contents are released and replaced; on
 * failure out is unchanged.
 */
int wks__file_read(wks_buf *out, const char *path, size_t max_len,
                   const char *limit_name);

/* The same from an open descriptor (read with pread() from offset 0; its
 * offset is not moved), `path` naming it in messages. */
int wks__file_read_fd(wks_buf *out, int fd, const char *path, size_t max_len,
                      const char *limit_name);

#endif
