/*
 * A strict DER cursor for the BCFKS reader (bcfks.c): one-byte tags,
 * definite lengths in their shortest form (at most 4 bytes), contents
 * within the bytes left; no recursion (the caller walks its fixed
 * structure).  Failures are WKS_ERR_FORMAT with the detail set.
 */
#ifndef WKS_CONVERT_DER_H
#define WKS_CONVERT_DER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/error.h"

enum {
	T_INT = 0x02, T_BITS = 0x03, T_OCT = 0x04, T_NULL = 0x05, T_OID = 0x06,
	T_UTF8 = 0x0C, T_GTIME = 0x18, T_SEQ = 0x30, T_CTX0 = 0xA0
};

typedef struct {
	const uint8_t *p;
	size_t left;
} der;

typedef struct {
	int tag;
	const uint8_t *tlv, *v; /* the whole element, its contents */
	size_t tlv_len, len;
} der_item;

static inline int der_bad(const char *what)
{
	return wks__err(WKS_ERR_FORMAT, "BCFKS: %s", what);
}

/* The next element: a one-byte tag, a definite length in its shortest
 * form, contents within the bytes left. */
static inline int der_next(der *c, der_item *it)
{
	size_t len = 0, n, i = 2;

	memset(it, 0, sizeof(*it)); /* (also on failure) */
	it->tag = -1;
	if (c->left < 2 || (c->p[0] & 0x1F) == 0x1F)
		return der_bad("truncated or malformed DER");
	if (c->p[1] < 0x80) {
		len = c->p[1];
	} else {
		n = c->p[1] & 0x7Fu;
		if (n == 0 || n > 4 || c->left - 2 < n || c->p[2] == 0)
			return der_bad("malformed DER length");
		for (size_t k = 0; k < n; k++)
			len = len << 8 | c->p[2 + k];
		if (len < 0x80)
			return der_bad("malformed DER length");
		i += n;
	}
	if (len > c->left - i)
		return der_bad("truncated DER");
	it->tag = c->p[0];
	it->tlv = c->p;
	it->v = c->p + i;
	it->len = len;
	it->tlv_len = i + len;
	c->p += it->tlv_len;
	c->left -= it->tlv_len;
	return 0;
}

static inline int der_get(der *c, int tag, der_item *it, const char *what)
{
	int err = der_next(c, it);

	if (err == 0 && it->tag != tag)
		err = wks__err(WKS_ERR_FORMAT, "BCFKS: %s: unexpected element",
			       what);
	return err;
}

static inline int der_peek(const der *c)
{
	return c->left ? c->p[0] : -1;
}

static inline void der_in(der *c, const der_item *it)
{
	c->p = it->v;
	c->left = it->len;
}

static inline int der_done(const der *c, const char *what)
{
	return c->left ? wks__err(WKS_ERR_FORMAT, "BCFKS: %s: trailing "
				  "elements", what) : 0;
}

/* A non-negative INTEGER of at most 63 bits, minimally encoded. */
static inline int der_uint(const der_item *it, uint64_t *out)
{
	uint64_t v = 0;

	if (it->tag != T_INT || it->len == 0 || it->len > 9 ||
	    (it->v[0] & 0x80) ||
	    (it->len > 1 && it->v[0] == 0 && !(it->v[1] & 0x80)) ||
	    (it->len == 9 && it->v[0] != 0))
		return der_bad("bad INTEGER");
	for (size_t i = 0; i < it->len; i++)
		v = v << 8 | it->v[i];
	if (v > INT64_MAX)
		return der_bad("INTEGER out of range");
	*out = v;
	return 0;
}

static inline int der_get_uint(der *c, uint64_t *out, const char *what)
{
	der_item it;
	int err = der_get(c, T_INT, &it, what);

	return err ? err : der_uint(&it, out);
}

/* AlgorithmIdentifier: its OID and parameters (par.tag -1: absent). */
static inline int der_alg(const der_item *alg, der_item *oid, der_item *par,
		   const char *what)
{
	der c;
	int err;

	if (alg->tag != T_SEQ)
		return wks__err(WKS_ERR_FORMAT, "BCFKS: %s: not an "
				"AlgorithmIdentifier", what);
	der_in(&c, alg);
	if ((err = der_get(&c, T_OID, oid, what)) < 0)
		return err;
	par->tag = -1;
	par->len = 0;
	if (c.left && (err = der_next(&c, par)) < 0)
		return err;
	return der_done(&c, what);
}

#endif
