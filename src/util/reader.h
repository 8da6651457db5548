/* Bounded cursor over untrusted bytes.  Every read checks the bytes left
 * first; the first error is sticky and later reads return zeros/NULL. */
#ifndef WKS_UTIL_READER_H
#define WKS_UTIL_READER_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct {
	const uint8_t *base; /* start of the whole input (for offsets) */
	const uint8_t *p;
	size_t left;
	int err;
} wks_reader;

static inline void wks_reader_init(wks_reader *r, const uint8_t *p, size_t n)
{
	r->base = p;
	r->p = p;
	r->left = n;
	r->err = 0;
}

static inline size_t wks_reader_pos(const wks_reader *r)
{
	return (size_t)(r->p - r->base);
}

/* n bytes, or NULL (and err = WKS_ERR_FORMAT) if fewer are left. */
const uint8_t *wks_rd_take(wks_reader *r, size_t n);
int32_t wks_rd_i32(wks_reader *r);
int64_t wks_rd_i64(wks_reader *r);
uint16_t wks_rd_u16(wks_reader *r);

#endif
