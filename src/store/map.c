/* The alias -> entry map: a sorted array of entry references. */
#include <stdlib.h>
#include <string.h>

#include "format/mutf8.h"
#include "store/store_int.h"
#include "util/error.h"

static int alias_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	return c ? c : (an < bn ? -1 : an > bn);
}

int wks__alias_key(wks_buf *b, const char *alias)
{
	size_t n, i;
	int err;

	if (!alias)
		return wks__err(WKS_ERR_INVALID, "alias is NULL");
	n = strlen(alias);
	/* Plain ASCII is already canonical: the common case, kept cheap. */
	for (i = 0; i < n && (unsigned char)alias[i] < 0x80; i++)
		;
	if (i == n)
		err = wks_buf_put(b, alias, n);
	else
		err = wks__api_canon(b, alias, n);
	if (err < 0)
		return err;
	if ((err = wks_buf_put(b, "", 1)) < 0)
		return err;
	b->len--;
	return WKS_OK;
}

int wks__alias_key_new(wks_buf *b, const char *alias)
{
	size_t n, i;
	int err;

	if ((err = wks__alias_key(b, alias)) < 0)
		return err;
	/* Java's writeUTF length: the API form's, but a 4-byte sequence
	 * becomes two 3-byte surrogates (U+0000 is C0 80 in both). */
	for (i = 0, n = b->len; i < b->len; i++)
		if (((const unsigned char *)b->ptr)[i] >= 0xF0)
			n += 2;
	if (n > 65535)
		return wks__err(WKS_ERR_LIMIT, "alias of %zu bytes (in Java's "
		                "modified UTF-8): longer than the 65535 bytes a "
		                "keystore can hold", n);
	return WKS_OK;
}

int wks__map_find(const wks_store *st, const char *alias, size_t len,
                  size_t *idx)
{
	size_t lo = 0, hi = st->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const wks_entry *e = st->v[mid];
		int c = alias_cmp(e->alias, e->alias_len, alias, len);

		if (c == 0) {
			*idx = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*idx = lo;
	return 0;
}

int wks__map_put(wks_store *st, wks_entry *e, wks_entry **old)
{
	size_t i;

	*old = NULL;
	if (wks__map_find(st, e->alias, e->alias_len, &i)) {
		*old = st->v[i];
		st->v[i] = e;
		return WKS_OK;
	}
	if (st->n == st->cap) {
		size_t ncap = st->cap ? st->cap * 2 : 16;
		wks_entry **p = realloc(st->v, ncap * sizeof(*p));

		if (!p)
			return wks__err(WKS_ERR_NOMEM, "out of memory");
		st->v = p;
		st->cap = ncap;
	}
	memmove(st->v + i + 1, st->v + i, (st->n - i) * sizeof(*st->v));
	st->v[i] = e;
	st->n++;
	return WKS_OK;
}

wks_entry *wks__map_take(wks_store *st, size_t i)
{
	wks_entry *e = st->v[i];

	memmove(st->v + i, st->v + i + 1, (st->n - i - 1) * sizeof(*st->v));
	st->n--;
	return e;
}

int wks__alias_lookup(const char **k, size_t *n, wks_buf *tmp,
                      const char *alias)
{
	size_t i;
	int err;

	if (!alias)
		return wks__err(WKS_ERR_INVALID, "alias is NULL");
	/* Plain ASCII is canonical as it is: no copy on the get_key path. */
	for (i = 0; alias[i] && (unsigned char)alias[i] < 0x80; i++)
		;
	if (!alias[i]) {
		*k = alias;
		*n = i;
		return WKS_OK;
	}
	if ((err = wks__alias_key(tmp, alias)) < 0)
		return err;
	*k = (const char *)tmp->ptr;
	*n = tmp->len;
	return WKS_OK;
}

int wks__store_get_entry(wks_entry **out, wks_store *st, const char *alias)
{
	wks_buf tmp = WKS_BUF_INIT;
	const char *k = NULL;
	size_t i, n = 0;
	unsigned rs;
	int err;

	*out = NULL;
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	if ((err = wks__alias_lookup(&k, &n, &tmp, alias)) < 0)
		return err;
	rs = wks__rdlock(st);
	if (wks__map_find(st, k, n, &i))
		*out = wks__entry_ref(st->v[i]);
	wks__rdunlock(st, rs);
	wks_buf_dispose(&tmp);
	if (!*out)
		return wks__err(WKS_ERR_NOTFOUND, "no entry with that alias");
	return WKS_OK;
}
