#include "util/reader.h"

#include "wks/wks.h"

const uint8_t *wks_rd_take(wks_reader *r, size_t n)
{
	const uint8_t *q = r->p;

	if (r->err)
		return NULL;
	if (n > r->left) { /* compare lengths, never pointers */
		r->err = WKS_ERR_FORMAT;
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return q;
}

int32_t wks_rd_i32(wks_reader *r)
{
	const uint8_t *b = wks_rd_take(r, 4);

	return b ? (int32_t)wks_load_u32be(b) : 0;
}

int64_t wks_rd_i64(wks_reader *r)
{
	const uint8_t *b = wks_rd_take(r, 8);

	return b ? (int64_t)((uint64_t)wks_load_u32be(b) << 32 |
	                     wks_load_u32be(b + 4)) : 0;
}

uint16_t wks_rd_u16(wks_reader *r)
{
	const uint8_t *b = wks_rd_take(r, 2);

	return b ? (uint16_t)(b[0] << 8 | b[1]) : 0;
}
