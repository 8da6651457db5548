/* Entry bodies (spec section 3): parsing with the load rules, building,
 * and the reference-counted entry object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/mutf8.h"
#include "format/format.h"
#include "util/error.h"
#include "util/reader.h"
#include "util/wipe.h"

static atomic_uint_fast64_t next_entry_id = 1;

/*
 * A length field (spec 3.4): negative -> MALFORMED, above the limit ->
 * LIMIT, more than the bytes left -> MALFORMED.  Returns the length or -1
 * with r->err set.
 */
static int64_t rd_len(wks_reader *r, int32_t limit, const char *field,
                      const char *what, int *err)
{
	int32_t v = wks_rd_i32(r);

	if (r->err) {
		*err = wks__err(WKS_ERR_FORMAT, "%s: truncated before %s", what, field);
		return -1;
	}
	if (v < 0) {
		*err = wks__err(WKS_ERR_FORMAT, "%s: %s %d is negative", what, field, v);
		return -1;
	}
	if (v > limit) {
		*err = wks__err(WKS_ERR_LIMIT, "%s: %s %d exceeds limit %d", what,
		                field, v, limit);
		return -1;
	}
	if ((size_t)v > r->left) {
		*err = wks__err(WKS_ERR_FORMAT,
		                "%s: %s %d is more than the %zu bytes left", what,
		                field, v, r->left);
		return -1;
	}
	return v;
}

static int rd_fixed(wks_reader *r, int32_t want, const char *field,
                    const char *what)
{
	int32_t v = wks_rd_i32(r);

	if (r->err)
		return wks__err(WKS_ERR_FORMAT, "%s: truncated at %s", what, field);
	if (v != want)
		return wks__err(WKS_ERR_FORMAT, "%s: %s is %d, must be %d", what,
		                field, v, want);
	return WKS_OK;
}

static int rd_iterations(wks_reader *r, int32_t *out, const wks_limits *lim,
                         const char *what)
{
	int32_t v = wks_rd_i32(r);

	if (r->err)
		return wks__err(WKS_ERR_FORMAT, "%s: truncated at iterations", what);
	if (v < lim->min_iterations)
		return wks__err(WKS_ERR_LIMIT,
		                "%s: iteration count %d is below the minimum %d", what,
		                v, lim->min_iterations);
	if (v > lim->max_iterations)
		return wks__err(WKS_ERR_LIMIT,
		                "%s: iteration count %d exceeds limit %d "
		                "(libwks.wks.maxIterationCount)", what, v,
		                lim->max_iterations);
	*out = v;
	return WKS_OK;
}

/* A utf string field, decoded to the API form (malloc'ed, NUL-terminated). */
static int rd_utf(wks_reader *r, char **out, size_t *out_len, const char *field,
                  const char *what)
{
	wks_buf b = WKS_BUF_INIT;
	uint16_t n = wks_rd_u16(r);
	const uint8_t *p = r->err ? NULL : wks_rd_take(r, n);
	int err;

	*out = NULL;
	if (!p)
		return wks__err(WKS_ERR_FORMAT, "%s: truncated in %s", what, field);
	if ((err = wks__mutf8_to_api(&b, p, n)) < 0 ||
	    (err = wks_buf_put(&b, "", 1)) < 0) {
		wks_buf_dispose(&b);
		return wks__err(err, "%s: invalid modified UTF-8 in %s", what, field);
	}
	*out = (char *)b.ptr;
	if (out_len)
		*out_len = b.len - 1;
	return WKS_OK;
}

/* certType "X.509", certLen, certDer: records the DER span, then runs
 * the caller's certificate check on it. */
static int rd_cert(wks_reader *r, wks_span *span, const uint8_t *body,
                   const wks_limits *lim, const char *what)
{
	char *type = NULL;
	int64_t len;
	int err;

	if ((err = rd_utf(r, &type, NULL, "certificate type", what)) < 0)
		return err;
	if (strcmp(type, "X.509") != 0) {
		err = wks__err(WKS_ERR_FORMAT,
		               "%s: certificate type \"%.20s\" is not \"X.509\"",
		               what, type);
		free(type);
		return err;
	}
	free(type);
	if ((len = rd_len(r, lim->max_entry_size, "certificate length", what,
	                  &err)) < 0)
		return err;
	span->off = (size_t)(r->p - body);
	span->len = (size_t)len;
	wks_rd_take(r, (size_t)len);
	if (lim->check_cert &&
	    (err = lim->check_cert(lim->check_arg, body + span->off,
	                                span->len)) < 0)
		return wks__err(err, "%s: unparsable X.509 certificate", what);
	return WKS_OK;
}

/* Salt, iterations, IV and ciphertext of a key body. */
static int rd_key_fields(wks_reader *r, wks_entry *e, const wks_limits *lim,
                         const char *what)
{
	const uint8_t *p;
	int64_t len;
	int err;

	if ((err = rd_fixed(r, WKS_SALT_LEN, "salt length", what)) < 0)
		return err;
	if (!(p = wks_rd_take(r, WKS_SALT_LEN)))
		return wks__err(WKS_ERR_FORMAT, "%s: truncated in salt", what);
	memcpy(e->salt, p, WKS_SALT_LEN);
	if ((err = rd_iterations(r, &e->iterations, lim, what)) < 0)
		return err;
	if ((err = rd_fixed(r, WKS_IV_LEN, "IV length", what)) < 0)
		return err;
	if (!(p = wks_rd_take(r, WKS_IV_LEN)))
		return wks__err(WKS_ERR_FORMAT, "%s: truncated in IV", what);
	memcpy(e->iv, p, WKS_IV_LEN);
	if ((len = rd_len(r, lim->max_entry_size, "encrypted key length", what,
	                  &err)) < 0)
		return err;
	e->enc.off = (size_t)(r->p - e->body);
	e->enc.len = (size_t)len;
	wks_rd_take(r, (size_t)len);
	return WKS_OK;
}

static int rd_mac(wks_reader *r, wks_entry *e, const char *what)
{
	int err;

	e->mac_input_len = (size_t)(r->p - e->body);
	if ((err = rd_fixed(r, WKS_MAC_LEN, "MAC length", what)) < 0)
		return err;
	e->mac.off = (size_t)(r->p - e->body);
	e->mac.len = WKS_MAC_LEN;
	if (!wks_rd_take(r, WKS_MAC_LEN))
		return wks__err(WKS_ERR_FORMAT, "%s: truncated in MAC", what);
	return WKS_OK;
}

static int parse_body(wks_entry *e, const wks_limits *lim, const char *what)
{
	wks_reader r;
	int32_t count;
	size_t i;
	int err;

	wks_reader_init(&r, e->body, e->body_len);
	e->created_ms = wks_rd_i64(&r);
	if (r.err)
		return wks__err(WKS_ERR_FORMAT, "%s: truncated in creation time", what);
	switch (e->type) {
	case WKS_ENTRY_PRIVATE_KEY:
		if ((err = rd_key_fields(&r, e, lim, what)) < 0)
			return err;
		count = wks_rd_i32(&r);
		if (r.err)
			return wks__err(WKS_ERR_FORMAT, "%s: truncated at chain length",
			                what);
		if (count < 0)
			return wks__err(WKS_ERR_FORMAT, "%s: chain length %d is negative",
			                what, count);
		if (count > lim->max_chain)
			return wks__err(WKS_ERR_LIMIT,
			                "%s: chain length %d exceeds limit %d "
			                "(wolfjce.wks.maxCertChainLength)", what,
			                count, lim->max_chain);
		/* Each certificate takes at least 6 bytes: never allocate for
		 * more than the bytes left can hold. */
		if ((size_t)count > r.left / 6)
			return wks__err(WKS_ERR_FORMAT,
			                "%s: chain length %d is more than the %zu bytes "
			                "left can hold", what, count, r.left);
		if (count && !(e->certs = calloc((size_t)count, sizeof(*e->certs))))
			return wks__err(WKS_ERR_NOMEM, "out of memory");
		for (i = 0; i < (size_t)count; i++) {
			if ((err = rd_cert(&r, &e->certs[i], e->body, lim, what)) < 0)
				return err;
			e->cert_count++;
		}
		if ((err = rd_mac(&r, e, what)) < 0)
			return err;
		break;
	case WKS_ENTRY_SECRET_KEY:
		if ((err = rd_utf(&r, &e->algorithm, NULL, "algorithm", what)) < 0)
			return err;
		if ((err = rd_key_fields(&r, e, lim, what)) < 0)
			return err;
		if ((err = rd_mac(&r, e, what)) < 0)
			return err;
		break;
	case WKS_ENTRY_CERTIFICATE:
		if (!(e->certs = calloc(1, sizeof(*e->certs))))
			return wks__err(WKS_ERR_NOMEM, "out of memory");
		if ((err = rd_cert(&r, &e->certs[0], e->body, lim, what)) < 0)
			return err;
		e->cert_count = 1;
		break;
	default:
		return wks__err(WKS_ERR_FORMAT, "%s: unknown entry type %d", what,
		                (int)e->type);
	}
	/* Java ignores bytes after the last field, but never writes them;
	 * they would be outside the entry MAC, so refuse them. */
	if (r.left)
		return wks__err(WKS_ERR_FORMAT, "%s: %zu unexpected bytes after the "
		                "last field", what, r.left);
	return WKS_OK;
}

int wks__format_entry(wks_entry **out, int type_id, const char *alias,
                      size_t alias_len, const uint8_t *body, size_t body_len,
                      const wks_limits *lim, const char *what)
{
	wks_entry *e;
	int err;

	*out = NULL;
	if (!(e = calloc(1, sizeof(*e))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	atomic_init(&e->refs, 1);
	e->id = atomic_fetch_add(&next_entry_id, 1);
	e->type = (wks_entry_type)type_id;
	e->alias = malloc(alias_len + 1);
	e->body = malloc(body_len ? body_len : 1);
	if (!e->alias || !e->body) {
		wks__entry_unref(e);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	memcpy(e->alias, alias, alias_len);
	e->alias[alias_len] = '\0';
	e->alias_len = alias_len;
	memcpy(e->body, body, body_len);
	e->body_len = body_len;
	if ((err = parse_body(e, lim, what)) < 0) {
		wks__entry_unref(e);
		return err;
	}
	*out = e;
	return WKS_OK;
}

int wks__format_check_entry(const wks_entry *e, const wks_limits *lim,
                            const char *what)
{
	wks_limits nocheck = *lim;
	wks_entry t;
	int err;

	if (e->body_len > (size_t)lim->max_entry_size)
		return wks__err(WKS_ERR_LIMIT, "%s: length %zu exceeds limit %d "
		                "(wolfjce.wks.maxEntrySize)", what, e->body_len,
		                lim->max_entry_size);
	/* The same parse as a load, on a scratch copy that shares the body
	 * (read only); only what parse_body allocates is freed. */
	nocheck.check_cert = NULL;
	memset(&t, 0, sizeof(t));
	t.type = e->type;
	t.body = e->body;
	t.body_len = e->body_len;
	err = parse_body(&t, &nocheck, what);
	free(t.algorithm);
	free(t.certs);
	return err;
}

wks_entry *wks__entry_ref(wks_entry *e)
{
	if (e)
		atomic_fetch_add(&e->refs, 1);
	return e;
}

void wks__entry_unref(wks_entry *e)
{
	if (!e || atomic_fetch_sub(&e->refs, 1) != 1)
		return;
	/* The body holds only ciphertext, but wipe it anyway: cheap. */
	wks_wipe_free(e->body, e->body_len);
	free(e->alias);
	free(e->algorithm);
	free(e->certs);
	wks_wipe(e, sizeof(*e));
	free(e);
}

void wks__entries_free(wks_entry **v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		wks__entry_unref(v[i]);
	free(v);
}

/* ---- building bodies ---------------------------------------------------- */

static int put_utf(wks_buf *out, const char *s)
{
	size_t at = out->len;
	int err;

	if ((err = wks_buf_put_u16be(out, 0)) < 0 ||
	    (err = wks__api_to_mutf8(out, s, strlen(s))) < 0)
		return err;
	out->ptr[at] = (uint8_t)((out->len - at - 2) >> 8);
	out->ptr[at + 1] = (uint8_t)(out->len - at - 2);
	return WKS_OK;
}

static int put_key_fields(wks_buf *out, const uint8_t salt[WKS_SALT_LEN],
                          int32_t iterations, const uint8_t iv[WKS_IV_LEN],
                          const uint8_t *enc, size_t enc_len)
{
	if (enc_len > INT32_MAX)
		return wks__err(WKS_ERR_LIMIT, "encrypted key too large");
	wks_buf_put_i32be(out, WKS_SALT_LEN);
	wks_buf_put(out, salt, WKS_SALT_LEN);
	wks_buf_put_i32be(out, iterations);
	wks_buf_put_i32be(out, WKS_IV_LEN);
	wks_buf_put(out, iv, WKS_IV_LEN);
	wks_buf_put_i32be(out, (int32_t)enc_len);
	return wks_buf_put(out, enc, enc_len);
}

static int put_cert(wks_buf *out, const uint8_t *der, size_t len)
{
	if (len > INT32_MAX)
		return wks__err(WKS_ERR_LIMIT, "certificate too large");
	put_utf(out, "X.509");
	wks_buf_put_i32be(out, (int32_t)len);
	return wks_buf_put(out, der, len);
}

int wks__body_private(wks_buf *out, int64_t created_ms,
                      const uint8_t salt[WKS_SALT_LEN], int32_t iterations,
                      const uint8_t iv[WKS_IV_LEN], const uint8_t *enc,
                      size_t enc_len, const uint8_t *const *certs,
                      const size_t *cert_lens, size_t cert_count)
{
	size_t i;
	int err;

	if (cert_count > INT32_MAX)
		return wks__err(WKS_ERR_LIMIT, "chain too long");
	wks_buf_put_i64be(out, created_ms);
	if ((err = put_key_fields(out, salt, iterations, iv, enc, enc_len)) < 0)
		return err;
	wks_buf_put_i32be(out, (int32_t)cert_count);
	for (i = 0; i < cert_count; i++)
		if ((err = put_cert(out, certs[i], cert_lens[i])) < 0)
			return err;
	return out->err;
}

int wks__body_secret(wks_buf *out, int64_t created_ms, const char *algorithm,
                     const uint8_t salt[WKS_SALT_LEN], int32_t iterations,
                     const uint8_t iv[WKS_IV_LEN], const uint8_t *enc,
                     size_t enc_len)
{
	int err;

	wks_buf_put_i64be(out, created_ms);
	if ((err = put_utf(out, algorithm)) < 0)
		return err;
	return put_key_fields(out, salt, iterations, iv, enc, enc_len);
}

int wks__body_cert(wks_buf *out, int64_t created_ms, const uint8_t *der,
                   size_t der_len)
{
	wks_buf_put_i64be(out, created_ms);
	return put_cert(out, der, der_len);
}
