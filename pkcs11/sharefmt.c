/* The shared login's record (sharefmt.h): bounded cursor-style reading. */
#include <string.h>

#include "sharefmt.h"

static const uint8_t MAGIC[8] = { 'W', 'K', 'S', 'P', '1', '1', 'L', '3' };
#define FIXED (8 + 3 * 8 + 8 + 4 + 8 + 4 + 8 + 2 + 4 + 2)

size_t w11_share_len(const w11_share_rec *r)
{
	if (r->pw_len == 0 || r->pw_len > W11_SHARE_PW_MAX ||
	    r->reckey_len > W11_SHARE_RECKEY_MAX ||
	    r->blob_len > W11_SHARE_MAX - FIXED - r->pw_len - r->reckey_len)
		return 0;
	return FIXED + r->pw_len + r->blob_len + r->reckey_len;
}

static uint8_t *put(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

void w11_share_encode(uint8_t *out, const w11_share_rec *r)
{
	uint8_t *p = out;

	memcpy(p, MAGIC, sizeof(MAGIC));
	p += sizeof(MAGIC);
	p = put(p, r->dev, 8);
	p = put(p, r->ino, 8);
	p = put(p, r->size, 8);
	p = put(p, (uint64_t)r->mtime_s, 8);
	p = put(p, r->mtime_ns, 4);
	p = put(p, (uint64_t)r->ctime_s, 8);
	p = put(p, r->ctime_ns, 4);
	p = put(p, (uint64_t)r->deadline, 8);
	p = put(p, r->pw_len, 2);
	memcpy(p, r->pw, r->pw_len);
	p += r->pw_len;
	p = put(p, r->blob_len, 4);
	if (r->blob_len)
		memcpy(p, r->blob, r->blob_len);
	p += r->blob_len;
	p = put(p, r->reckey_len, 2);
	if (r->reckey_len)
		memcpy(p, r->reckey, r->reckey_len);
}

typedef struct {
	const uint8_t *p;
	size_t left;
	int err;
} cursor;

static const uint8_t *take(cursor *c, size_t n)
{
	const uint8_t *q = c->p;

	if (c->err || n > c->left) {
		c->err = 1;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return q;
}

static uint64_t get(cursor *c, int bytes)
{
	const uint8_t *q = take(c, (size_t)bytes);
	uint64_t v = 0;

	if (!q)
		return 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | q[i];
	return v;
}

int w11_share_decode(w11_share_rec *r, const uint8_t *p, size_t n)
{
	cursor c = { p, n, 0 };
	const uint8_t *m;

	memset(r, 0, sizeof(*r));
	if (n > W11_SHARE_MAX)
		return -1;
	m = take(&c, sizeof(MAGIC));
	if (!m || memcmp(m, MAGIC, sizeof(MAGIC)) != 0)
		return -1;
	r->dev = get(&c, 8);
	r->ino = get(&c, 8);
	r->size = get(&c, 8);
	r->mtime_s = (int64_t)get(&c, 8);
	r->mtime_ns = (uint32_t)get(&c, 4);
	r->ctime_s = (int64_t)get(&c, 8);
	r->ctime_ns = (uint32_t)get(&c, 4);
	r->deadline = (int64_t)get(&c, 8);
	r->pw_len = (size_t)get(&c, 2);
	if (c.err || r->pw_len == 0 || r->pw_len > W11_SHARE_PW_MAX ||
	    r->mtime_ns > 999999999u || r->ctime_ns > 999999999u)
		goto fail;
	r->pw = take(&c, r->pw_len);
	r->blob_len = (size_t)get(&c, 4);
	r->blob = take(&c, r->blob_len);
	r->reckey_len = (size_t)get(&c, 2);
	if (c.err || r->reckey_len > W11_SHARE_RECKEY_MAX)
		goto fail;
	r->reckey = take(&c, r->reckey_len);
	if (c.err || c.left != 0)
		goto fail;
	return 0;
fail:
	memset(r, 0, sizeof(*r));
	return -1;
}
