/* Whole files (spec sections 2 and 5): header, outer records, trailer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "format/mutf8.h"
#include "util/error.h"
#include "util/reader.h"

void wks__format_describe(char *out, size_t out_len, size_t index,
                          const char *alias)
{
	char a[44];
	size_t i;

	for (i = 0; alias && alias[i] && i < 40; i++)
		a[i] = (alias[i] >= 0x20 && alias[i] < 0x7F && alias[i] != '"')
		       ? alias[i] : '?';
	a[i] = '\0';
	snprintf(out, out_len, "entry %zu (\"%s%s\")", index, a,
	         alias && alias[i] ? "..." : "");
}

static int grow(wks_entry ***v, wks_record_pos **pos, size_t *cap, size_t n,
                int want_pos)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	void *p;

	if (n < *cap)
		return WKS_OK;
	if (!(p = realloc(*v, ncap * sizeof(**v))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	*v = p;
	if (want_pos) {
		if (!(p = realloc(*pos, ncap * sizeof(**pos))))
			return wks__err(WKS_ERR_NOMEM, "out of memory");
		*pos = p;
	}
	*cap = ncap;
	return WKS_OK;
}

static int decode_entry(wks_entry **out, wks_reader *r, size_t index,
                        const wks_limits *lim)
{
	wks_buf alias = WKS_BUF_INIT;
	char what[96];
	const uint8_t *p, *body;
	int32_t type, body_len;
	uint16_t alias_n;
	int err;

	snprintf(what, sizeof(what), "entry %zu", index);
	type = wks_rd_i32(r);
	if (r->err)
		return wks__err(WKS_ERR_FORMAT, "%s: truncated at its type", what);
	if (type < 0)
		return wks__err(WKS_ERR_FORMAT, "%s: negative type %d", what, type);
	alias_n = wks_rd_u16(r);
	if (!(p = wks_rd_take(r, alias_n)))
		return wks__err(WKS_ERR_FORMAT, "%s: truncated in its alias", what);
	if ((err = wks__mutf8_to_api(&alias, p, alias_n)) < 0 ||
	    (err = wks_buf_put(&alias, "", 1)) < 0) {
		wks_buf_dispose(&alias);
		return wks__err(err, "%s: alias is not valid modified UTF-8", what);
	}
	wks__format_describe(what, sizeof(what), index, (const char *)alias.ptr);
	body_len = wks_rd_i32(r);
	if (r->err)
		err = wks__err(WKS_ERR_FORMAT, "%s: truncated at its length", what);
	else if (body_len <= 0)
		err = wks__err(WKS_ERR_FORMAT, "%s: invalid length %d", what,
		               body_len);
	else if (body_len > lim->max_entry_size)
		err = wks__err(WKS_ERR_LIMIT, "%s: length %d exceeds limit %d "
		               "(wolfjce.wks.maxEntrySize)", what, body_len,
		               lim->max_entry_size);
	else if (!(body = wks_rd_take(r, (size_t)body_len)))
		err = wks__err(WKS_ERR_FORMAT, "%s: length %d is more than the "
		               "%zu bytes left", what, body_len, r->left);
	else if (type < 1 || type > 3)
		err = wks__err(WKS_ERR_FORMAT, "%s: unknown entry type %d", what,
		               type);
	else
		err = wks__format_entry(out, type, (const char *)alias.ptr,
		                        alias.len - 1, body, (size_t)body_len,
		                        lim, what);
	wks_buf_dispose(&alias);
	return err;
}

int wks__format_decode(wks_entry ***out, size_t *out_n, wks_record_pos **pos,
                       wks_file_info *info, const uint8_t *data, size_t len,
                       const wks_limits *lim)
{
	wks_entry **v = NULL;
	wks_record_pos *ps = NULL;
	wks_file_info fi;
	wks_reader r;
	const uint8_t *p;
	size_t n = 0, cap = 0, i;
	int32_t magic, version, count;
	int err;

	*out = NULL;
	*out_n = 0;
	if (pos)
		*pos = NULL;
	memset(&fi, 0, sizeof(fi));
	wks_reader_init(&r, data, len);
	magic = wks_rd_i32(&r);
	version = wks_rd_i32(&r);
	count = wks_rd_i32(&r);
	if (r.err) {
		err = wks__err(WKS_ERR_FORMAT, "truncated header (%zu bytes)", len);
		goto fail;
	}
	if (magic != WKS_MAGIC) {
		/* Name the keystores people mistake for WKS; the number in
		 * hex, as formats write their magic. */
		uint32_t m = (uint32_t)magic;

		if (m == 0xFEEDFEEDu)
			err = wks__err(WKS_ERR_FORMAT, "magic number 0xFEEDFEED: a "
			               "JKS keystore, not WKS");
		else if (m == 0xCECECECEu)
			err = wks__err(WKS_ERR_FORMAT, "magic number 0xCECECECE: a "
			               "JCEKS keystore, not WKS");
		else if ((m >> 24) == 0x30u)
			err = wks__err(WKS_ERR_FORMAT, "bad magic number 0x%08X: "
			               "not a WKS keystore (a DER SEQUENCE: "
			               "PKCS#12?)", (unsigned)m);
		else
			err = wks__err(WKS_ERR_FORMAT, "bad magic number 0x%08X: "
			               "not a WKS keystore", (unsigned)m);
		goto fail;
	}
	if (version != WKS_FORMAT_VERSION) {
		err = wks__err(WKS_ERR_FORMAT, "unsupported WKS version %d", version);
		goto fail;
	}
	if (count < 0) {
		err = wks__err(WKS_ERR_FORMAT, "negative entry count %d", count);
		goto fail;
	}
	fi.entry_count = count;
	/* No preallocation from count: the array grows as entries parse. */
	for (i = 0; i < (size_t)count; i++) {
		size_t at = wks_reader_pos(&r);

		if ((err = grow(&v, &ps, &cap, n, pos != NULL)) < 0)
			goto fail;
		if ((err = decode_entry(&v[n], &r, i, lim)) < 0)
			goto fail;
		if (pos) {
			ps[n].offset = at;
			ps[n].body_offset = wks_reader_pos(&r) - v[n]->body_len;
		}
		n++;
	}
	fi.trailer_offset = wks_reader_pos(&r);
	if (wks_rd_i32(&r) != WKS_SALT_LEN || r.err) {
		err = wks__err(WKS_ERR_FORMAT, r.err ? "truncated at the store salt"
		               : "store salt length is not 16");
		goto fail;
	}
	if (!(p = wks_rd_take(&r, WKS_SALT_LEN))) {
		err = wks__err(WKS_ERR_FORMAT, "truncated in the store salt");
		goto fail;
	}
	memcpy(fi.salt, p, WKS_SALT_LEN);
	fi.iterations = wks_rd_i32(&r);
	if (r.err) {
		err = wks__err(WKS_ERR_FORMAT, "truncated at the store iterations");
		goto fail;
	}
	if (fi.iterations < lim->min_iterations) {
		err = wks__err(WKS_ERR_LIMIT, "store iteration count %d is below the "
		               "minimum %d", fi.iterations, lim->min_iterations);
		goto fail;
	}
	if (fi.iterations > lim->max_iterations) {
		err = wks__err(WKS_ERR_LIMIT, "store iteration count %d exceeds "
		               "limit %d (libwks.wks.maxIterationCount)",
		               fi.iterations, lim->max_iterations);
		goto fail;
	}
	fi.mac_input_len = wks_reader_pos(&r);
	if (wks_rd_i32(&r) != WKS_MAC_LEN || r.err) {
		err = wks__err(WKS_ERR_FORMAT, r.err ? "truncated at the store MAC"
		               : "store MAC length is not 64");
		goto fail;
	}
	if (!(p = wks_rd_take(&r, WKS_MAC_LEN))) {
		err = wks__err(WKS_ERR_FORMAT, "truncated in the store MAC");
		goto fail;
	}
	memcpy(fi.mac, p, WKS_MAC_LEN);
	if (r.left) {
		err = wks__err(WKS_ERR_FORMAT, "%zu unexpected bytes after the "
		               "store MAC", r.left);
		goto fail;
	}
	*out = v;
	*out_n = n;
	if (pos)
		*pos = ps;
	else
		free(ps);
	if (info)
		*info = fi;
	return WKS_OK;
fail:
	wks__entries_free(v, n);
	free(ps);
	return err;
}

int wks__encode(wks_buf *out, wks_entry *const *entries, size_t n,
                const uint8_t salt[WKS_SALT_LEN], int32_t iterations)
{
	size_t i;
	int err;

	if (n > INT32_MAX)
		return wks__err(WKS_ERR_LIMIT, "too many entries");
	wks_buf_put_i32be(out, WKS_MAGIC);
	wks_buf_put_i32be(out, WKS_FORMAT_VERSION);
	wks_buf_put_i32be(out, (int32_t)n);
	for (i = 0; i < n; i++) {
		const wks_entry *e = entries[i];
		size_t at;

		if (e->body_len > INT32_MAX)
			return wks__err(WKS_ERR_LIMIT, "entry too large");
		wks_buf_put_i32be(out, (int32_t)e->type);
		at = out->len;
		wks_buf_put_u16be(out, 0);
		if ((err = wks__api_to_mutf8(out, e->alias, e->alias_len)) < 0)
			return err;
		out->ptr[at] = (uint8_t)((out->len - at - 2) >> 8);
		out->ptr[at + 1] = (uint8_t)(out->len - at - 2);
		wks_buf_put_i32be(out, (int32_t)e->body_len);
		wks_buf_put(out, e->body, e->body_len);
	}
	wks_buf_put_i32be(out, WKS_SALT_LEN);
	wks_buf_put(out, salt, WKS_SALT_LEN);
	return wks_buf_put_i32be(out, iterations);
}
