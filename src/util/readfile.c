/* Whole-file read, bounded by the file's own size (see readfile.h). */
#include "util/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "util/error.h"

#define IO_CHUNK ((size_t)1 << 30) /* largest single read() */

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

/* pread(), retrying EINTR and EAGAIN (the descriptor may be O_NONBLOCK). */
static ssize_t pread_some(int fd, void *p, size_t n, off_t off)
{
	ssize_t r;

	do
		r = pread(fd, p, n, off);
	while (r < 0 && (errno == EINTR || errno == EAGAIN));
	return r;
}

int wks__file_read_fd(wks_buf *out, int fd, const char *path, size_t max_len,
                      const char *limit_name)
{
	wks_buf b = WKS_BUF_INIT;
	struct stat st;
	errbuf eb;
	size_t size, n;
	ssize_t r;
	uint8_t extra;
	int err = WKS_OK;

	if (!out || !path || fd < 0)
		return wks__err(WKS_ERR_INVALID, "NULL buffer or path, or no file");
	if (fstat(fd, &st) != 0) {
		err = wks__err(WKS_ERR_IO, "cannot stat \"%s\": %s", path,
		               errtext(&eb, errno));
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		err = wks__err(WKS_ERR_IO, "cannot read \"%s\": %s", path,
		               S_ISDIR(st.st_mode) ? "it is a folder"
		                                   : "not a regular file");
		goto done;
	}
	if (st.st_size < 0 || (uintmax_t)st.st_size > max_len) {
		err = wks__err(WKS_ERR_LIMIT,
		               "\"%s\" has %jd bytes, more than the limit %zu%s%s%s",
		               path, (intmax_t)st.st_size, max_len,
		               limit_name ? " (" : "", limit_name ? limit_name : "",
		               limit_name ? ")" : "");
		goto done;
	}
	size = (size_t)st.st_size;
	if (size && (err = wks_buf_reserve(&b, size)) < 0)
		goto done;
	/* Exactly `size` bytes from offset 0 (pread: the descriptor's own
	 * offset is neither used nor moved): the bound is the file's size. */
	while (b.len < size) {
		n = size - b.len < IO_CHUNK ? size - b.len : IO_CHUNK;
		r = pread_some(fd, b.ptr + b.len, n, (off_t)b.len);
		if (r < 0) {
			err = wks__err(WKS_ERR_IO, "cannot read \"%s\": %s", path,
			               errtext(&eb, errno));
			goto done;
		}
		if (r == 0) {
			err = wks__err(WKS_ERR_IO, "\"%s\" changed while being read: "
			               "it shrank from %zu to %zu bytes", path, size,
			               b.len);
			goto done;
		}
		b.len += (size_t)r;
	}
	/* One more byte means it grew (or its size was not its length, as
	 * with /proc files): refuse rather than cut it. */
	r = pread_some(fd, &extra, 1, (off_t)size);
	if (r < 0) {
		err = wks__err(WKS_ERR_IO, "cannot read \"%s\": %s", path,
		               errtext(&eb, errno));
		goto done;
	}
	if (r > 0) {
		err = wks__err(WKS_ERR_IO, "\"%s\" changed while being read: it "
		               "grew beyond its size of %zu bytes", path, size);
		goto done;
	}
	wks_buf_dispose(out);
	*out = b;
	b = (wks_buf)WKS_BUF_INIT;
done:
	wks_buf_dispose(&b);
	return err;
}

int wks__file_read(wks_buf *out, const char *path, size_t max_len,
                   const char *limit_name)
{
	errbuf eb;
	int fd, err;

	if (!out || !path)
		return wks__err(WKS_ERR_INVALID, "NULL buffer or path");
	/* O_NONBLOCK: opening a FIFO must not hang; it is refused after. */
	do
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return wks__err(WKS_ERR_IO, "cannot open \"%s\": %s", path,
		                errtext(&eb, errno));
	err = wks__file_read_fd(out, fd, path, max_len, limit_name);
	close(fd);
	return err;
}
