/* Growable byte buffer for building output.  Disposing wipes it, so it may
 * hold secrets.  Every append checks for size overflow. */
#ifndef WKS_UTIL_BUF_H
#define WKS_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint8_t *ptr;
	size_t len;
	size_t cap;
	int err; /* sticky: first failure wins (WKS_ERR_NOMEM / _LIMIT) */
} wks_buf;

#define WKS_BUF_INIT { NULL, 0, 0, 0 }

int wks_buf_reserve(wks_buf *b, size_t extra);
int wks_buf_put(wks_buf *b, const void *data, size_t n);
int wks_buf_put_u16be(wks_buf *b, uint16_t v);
int wks_buf_put_i32be(wks_buf *b, int32_t v);
int wks_buf_put_i64be(wks_buf *b, int64_t v);
/* Wipe and free the contents; the buffer is reusable afterwards. */
void wks_buf_dispose(wks_buf *b);

/* Memory handed to callers and released by wks_free(): a size header
 * lets wks_free() wipe it. */
void *wks__out_alloc(size_t n);
/* Copy n bytes (+ a NUL terminator) into caller-owned memory. */
void *wks__out_dup(const void *p, size_t n);

static inline uint32_t wks_load_u32be(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

static inline void wks_store_u32be(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

#endif
