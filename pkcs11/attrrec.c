/*
 * The attribute record's bytes (attrrec.h): a bounded cursor reader, a
 * writer, and the item table.  No OpenSSL: fuzzed alone
 * (fuzz/fuzz_pkcs11_rec.c).
 */
#include <stdlib.h>
#include <string.h>

#include "attrrec.h"

/* ---- reading --------------------------------------------------------------- */

typedef struct {
	const uint8_t *p;
	size_t left;
	int bad;
} cur;

static const uint8_t *take(cur *c, size_t n)
{
	const uint8_t *r = c->p;

	if (c->bad || n > c->left) {
		c->bad = 1;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return r;
}

static uint64_t get_be(cur *c, size_t n)
{
	const uint8_t *b = take(c, n);
	uint64_t v = 0;

	for (size_t i = 0; b && i < n; i++)
		v = (v << 8) | b[i];
	return v;
}

static void item_free(w11_ritem *it)
{
	for (uint32_t i = 0; i < it->n; i++)
		free(it->a[i].val);
	free(it->a);
	memset(it, 0, sizeof(*it));
}

void w11_rec_free(w11_rec *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->n; i++)
		item_free(&r->items[i]);
	free(r->items);
	memset(r, 0, sizeof(*r));
}

static int grow_items(w11_rec *r)
{
	w11_ritem *nv;
	uint32_t cap;

	if (r->n < r->cap)
		return 0;
	if (r->n >= W11_REC_MAX_ITEMS)
		return -1;
	cap = r->cap ? r->cap * 2 : 8;
	if (cap > W11_REC_MAX_ITEMS)
		cap = W11_REC_MAX_ITEMS;
	if (!(nv = realloc(r->items, cap * sizeof(*nv))))
		return -1;
	r->items = nv;
	r->cap = cap;
	return 0;
}

static int parse_item(cur *c, w11_ritem *it)
{
	const uint8_t *e;
	uint32_t n;

	memset(it, 0, sizeof(*it));
	it->kind = (uint8_t)get_be(c, 1);
	if ((e = take(c, 32)))
		memcpy(it->entry, e, 32);
	it->role = (uint8_t)get_be(c, 1);
	it->index = (uint32_t)get_be(c, 4);
	it->flags = (uint8_t)get_be(c, 1);
	n = (uint32_t)get_be(c, 4);
	if (c->bad || n > W11_REC_MAX_ATTRS)
		return -1;
	if (it->kind == W11_REC_KIND_OBJ) {
		if (it->role == 0 || it->role > 6 ||
		    (it->flags & ~W11_REC_F_DELETED))
			return -1;
	} else if (it->kind == W11_REC_KIND_DATA) {
		if (it->role || it->index || it->flags)
			return -1;
	} else {
		return -1;
	}
	if (n && !(it->a = calloc(n, sizeof(*it->a))))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		w11_rattr *a = &it->a[i];
		const uint8_t *v;

		a->type = get_be(c, 8);
		a->len = (uint32_t)get_be(c, 4);
		if (c->bad || a->len > W11_REC_MAX_VALUE ||
		    !(v = take(c, a->len)))
			return -1;
		it->n = i + 1;
		for (uint32_t j = 0; j < i; j++)
			if (it->a[j].type == a->type)
				return -1;
		if (!(a->val = malloc(a->len ? a->len : 1)))
			return -1;
		memcpy(a->val, v, a->len);
	}
	return 0;
}

int w11_rec_parse(w11_rec *r, const uint8_t *p, size_t len,
		  size_t *body_len)
{
	cur c = { p, len, 0 };
	const uint8_t *m, *s;
	uint32_t n;

	memset(r, 0, sizeof(*r));
	*body_len = 0;
	if (!p || len > W11_REC_MAX_FILE || len < 8 + W11_REC_MAC_LEN)
		return -1;
	/* the MAC is the last 64 bytes; everything before is parsed */
	c.left = len - W11_REC_MAC_LEN;
	if (!(m = take(&c, 8)) || memcmp(m, W11_REC_MAGIC, 8) != 0)
		return -1;
	r->iterations = (uint32_t)get_be(&c, 4);
	if ((s = take(&c, 16)))
		memcpy(r->salt, s, 16);
	n = (uint32_t)get_be(&c, 4);
	if (c.bad || n > W11_REC_MAX_ITEMS || r->iterations == 0)
		goto bad;
	for (uint32_t i = 0; i < n; i++) {
		w11_ritem it;

		if (grow_items(r) != 0)
			goto bad;
		if (parse_item(&c, &it) != 0) {
			item_free(&it);
			goto bad;
		}
		if (w11_rec_find(r, it.entry, it.role, it.index)) {
			item_free(&it);
			goto bad;
		}
		r->items[r->n++] = it;
	}
	if (c.left != 0)
		goto bad;
	*body_len = len - W11_REC_MAC_LEN;
	return 0;
bad:
	w11_rec_free(r);
	return -1;
}

/* ---- writing --------------------------------------------------------------- */

typedef struct {
	uint8_t *p;
	size_t len, cap;
	int bad;
} wbuf;

static void put(wbuf *b, const void *p, size_t n)
{
	if (b->bad)
		return;
	if (b->len + n > W11_REC_MAX_FILE) {
		b->bad = 1;
		return;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *np;

		while (cap < b->len + n)
			cap *= 2;
		if (!(np = realloc(b->p, cap))) {
			b->bad = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_be(wbuf *b, uint64_t v, size_t n)
{
	uint8_t t[8];

	for (size_t i = 0; i < n; i++)
		t[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	put(b, t, n);
}

int w11_rec_encode(const w11_rec *r, uint8_t **out, size_t *len)
{
	wbuf b = { 0 };

	*out = NULL;
	*len = 0;
	put(&b, W11_REC_MAGIC, 8);
	put_be(&b, r->iterations, 4);
	put(&b, r->salt, 16);
	put_be(&b, r->n, 4);
	for (uint32_t i = 0; i < r->n; i++) {
		const w11_ritem *it = &r->items[i];

		put_be(&b, it->kind, 1);
		put(&b, it->entry, 32);
		put_be(&b, it->role, 1);
		put_be(&b, it->index, 4);
		put_be(&b, it->flags, 1);
		put_be(&b, it->n, 4);
		for (uint32_t j = 0; j < it->n; j++) {
			put_be(&b, it->a[j].type, 8);
			put_be(&b, it->a[j].len, 4);
			put(&b, it->a[j].val, it->a[j].len);
		}
	}
	/* room for the MAC the caller appends */
	if (b.len + W11_REC_MAC_LEN > W11_REC_MAX_FILE)
		b.bad = 1;
	if (b.bad) {
		free(b.p);
		return -1;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

/* ---- the table ------------------------------------------------------------- */

w11_ritem *w11_rec_find(const w11_rec *r, const uint8_t entry[32],
			uint8_t role, uint32_t index)
{
	for (uint32_t i = 0; i < r->n; i++) {
		w11_ritem *it = &r->items[i];

		if (it->kind && it->role == role && it->index == index &&
		    memcmp(it->entry, entry, 32) == 0)
			return it;
	}
	return NULL;
}

w11_ritem *w11_rec_item(w11_rec *r, const uint8_t entry_in[32], uint8_t role,
			uint32_t index)
{
	w11_ritem *it = w11_rec_find(r, entry_in, role, index);
	uint8_t entry[32];

	if (it)
		return it;
	/* (entry_in may point into the table, which may move) */
	memcpy(entry, entry_in, 32);
	if (grow_items(r) != 0)
		return NULL;
	it = &r->items[r->n++];
	memset(it, 0, sizeof(*it));
	it->kind = W11_REC_KIND_OBJ;
	memcpy(it->entry, entry, 32);
	it->role = role;
	it->index = index;
	return it;
}

w11_ritem *w11_rec_data(w11_rec *r, const uint8_t id_in[32])
{
	uint8_t id[32];
	w11_ritem *it;

	memcpy(id, id_in, 32);
	if (w11_rec_find(r, id, 0, 0) || grow_items(r) != 0)
		return NULL;
	it = &r->items[r->n++];
	memset(it, 0, sizeof(*it));
	it->kind = W11_REC_KIND_DATA;
	memcpy(it->entry, id, 32);
	return it;
}

const w11_rattr *w11_ritem_get(const w11_ritem *it, uint64_t type)
{
	for (uint32_t i = 0; it && i < it->n; i++)
		if (it->a[i].type == type)
			return &it->a[i];
	return NULL;
}

int w11_ritem_set(w11_ritem *it, uint64_t type, const void *val,
		  uint32_t len)
{
	w11_rattr *a = (w11_rattr *)w11_ritem_get(it, type), *nv;
	unsigned char *v;

	if (len > W11_REC_MAX_VALUE || (len && !val) ||
	    !(v = malloc(len ? len : 1)))
		return -1;
	if (len)
		memcpy(v, val, len);
	if (!a) {
		if (it->n >= W11_REC_MAX_ATTRS ||
		    !(nv = realloc(it->a, (it->n + 1) * sizeof(*nv)))) {
			free(v);
			return -1;
		}
		it->a = nv;
		a = &it->a[it->n++];
		a->type = type;
	} else {
		free(a->val);
	}
	a->val = v;
	a->len = len;
	return 0;
}

void w11_rec_drop_entry(w11_rec *r, const uint8_t entry_in[32])
{
	uint8_t entry[32];
	uint32_t k = 0;

	/* (entry_in may point into an item freed here) */
	memcpy(entry, entry_in, 32);
	for (uint32_t i = 0; i < r->n; i++) {
		if (memcmp(r->items[i].entry, entry, 32) == 0)
			item_free(&r->items[i]);
		else
			r->items[k++] = r->items[i];
	}
	r->n = k;
}

void w11_rec_rebind(w11_rec *r, const uint8_t from_in[32],
		    const uint8_t to_in[32])
{
	uint8_t from[32], to[32];
	uint32_t k = 0;

	/* (either may point into an item changed here) */
	memcpy(from, from_in, 32);
	memcpy(to, to_in, 32);
	if (memcmp(from, to, 32) == 0)
		return;
	/* An item already bound to `to` was written by the same edit: it
	 * wins, and takes from the old item what it does not say itself;
	 * the old item then goes (item_free() leaves kind 0, which no item
	 * has). */
	for (uint32_t i = 0; i < r->n; i++) {
		w11_ritem *it = &r->items[i], *dup;

		if (it->kind != W11_REC_KIND_OBJ ||
		    memcmp(it->entry, from, 32) != 0)
			continue;
		if (!(dup = w11_rec_find(r, to, it->role, it->index))) {
			memcpy(it->entry, to, 32);
			continue;
		}
		for (uint32_t j = 0; j < it->n; j++)
			if (!w11_ritem_get(dup, it->a[j].type))
				(void)w11_ritem_set(dup, it->a[j].type,
						    it->a[j].val, it->a[j].len);
		dup->flags |= it->flags;
		item_free(it);
	}
	for (uint32_t i = 0; i < r->n; i++)
		if (r->items[i].kind)
			r->items[k++] = r->items[i];
	r->n = k;
}
