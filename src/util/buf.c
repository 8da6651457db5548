#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/wipe.h"

int wks_buf_reserve(wks_buf *b, size_t extra)
{
	size_t need, cap;
	uint8_t *p;

	if (b->err)
		return b->err;
	if (extra > SIZE_MAX - b->len)
		return b->err = wks__err(WKS_ERR_LIMIT, "buffer size overflow");
	need = b->len + extra;
	if (need <= b->cap)
		return WKS_OK;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	/* Not realloc: the old block may hold secrets and must be wiped. */
	p = malloc(cap);
	if (!p)
		return b->err = wks__err(WKS_ERR_NOMEM, "out of memory (%zu bytes)", cap);
	if (b->len)
		memcpy(p, b->ptr, b->len);
	wks_wipe_free(b->ptr, b->cap);
	b->ptr = p;
	b->cap = cap;
	return WKS_OK;
}

int wks_buf_put(wks_buf *b, const void *data, size_t n)
{
	int err;

	if ((err = wks_buf_reserve(b, n)) < 0)
		return err;
	if (n)
		memcpy(b->ptr + b->len, data, n);
	b->len += n;
	return WKS_OK;
}

int wks_buf_put_u16be(wks_buf *b, uint16_t v)
{
	uint8_t t[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	return wks_buf_put(b, t, 2);
}

int wks_buf_put_i32be(wks_buf *b, int32_t v)
{
	uint8_t t[4];

	wks_store_u32be(t, (uint32_t)v);
	return wks_buf_put(b, t, 4);
}

int wks_buf_put_i64be(wks_buf *b, int64_t v)
{
	uint8_t t[8];

	wks_store_u32be(t, (uint32_t)((uint64_t)v >> 32));
	wks_store_u32be(t + 4, (uint32_t)v);
	return wks_buf_put(b, t, 8);
}

void wks_buf_dispose(wks_buf *b)
{
	wks_wipe_free(b->ptr, b->cap);
	b->ptr = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}

#define OUT_HDR 16 /* keeps the user pointer 16-byte aligned */

void *wks__out_alloc(size_t n)
{
	uint8_t *p;

	if (n > SIZE_MAX - OUT_HDR)
		return NULL;
	p = malloc(OUT_HDR + n);
	if (!p)
		return NULL;
	memcpy(p, &n, sizeof(n));
	return p + OUT_HDR;
}

void *wks__out_dup(const void *src, size_t n)
{
	uint8_t *p;

	if (n == SIZE_MAX || !(p = wks__out_alloc(n + 1)))
		return NULL;
	if (n)
		memcpy(p, src, n);
	p[n] = 0;
	return p;
}

void wks_free(void *ptr)
{
	uint8_t *p = ptr;
	size_t n;

	if (!p)
		return;
	p -= OUT_HDR;
	memcpy(&n, p, sizeof(n));
	wks_wipe_free(p, OUT_HDR + n);
}
