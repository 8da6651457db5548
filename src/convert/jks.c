/*
 * Java keystores in: JKS and JCEKS (see jks.h for the format).
 *
 * Why a serialization reader: a JCEKS secret key entry is a Java-serialized
 * SealedObject written straight into the keystore stream with no length in
 * front, so even skipping one needs its grammar.  The reader below knows
 * the few constructs those objects use and refuses everything else (class
 * annotations, proxies, externalizable classes, long strings, arrays of
 * anything but bytes); every structure is bounded (handles, classes,
 * objects, fields, nesting).  Nothing is ever instantiated: the result is a
 * small tree of spans into the input.
 *
 * OpenSSL's error queue: the public entry points (java.c) set a mark and
 * pop to it, so nothing here clears the queue (the caller's entries stay).
 */
#include "jks.h"
#include "bc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include "format/mutf8.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/reader.h"
#include "util/wipe.h"
#include "wks/wks.h"

#define JKS_MAGIC 0xFEEDFEEDu
#define JCEKS_MAGIC 0xCECECECEu
#define OID_JKS_KP "1.3.6.1.4.1.42.2.17.1.1"
#define OID_JCE_PBE "1.3.6.1.4.1.42.2.19.1"
#define SEAL_ALG "PBEWithMD5AndTripleDES"

wks_keystore_type wks_keystore_detect(const uint8_t *d, size_t n)
{
	wks_keystore_type t;
	uint32_t m;

	if ((t = wks__bc_detect(d, n)) != WKS_KEYSTORE_UNKNOWN)
		return t; /* BKS, UBER, BCFKS (bc.c) */
	if (n < 4)
		return n >= 1 && d[0] == 0x30 ? WKS_KEYSTORE_PKCS12 : WKS_KEYSTORE_UNKNOWN;
	m = wks_load_u32be(d);
	if (m == JKS_MAGIC)
		return WKS_KEYSTORE_JKS;
	if (m == JCEKS_MAGIC)
		return WKS_KEYSTORE_JCEKS;
	if (wks_probe(d, n))
		return WKS_KEYSTORE_WKS;
	if (d[0] == 0x30)
		return WKS_KEYSTORE_PKCS12;
	return WKS_KEYSTORE_UNKNOWN;
}

const char *wks_keystore_type_name(wks_keystore_type t)
{
	switch (t) {
	case WKS_KEYSTORE_WKS: return "WKS";
	case WKS_KEYSTORE_JKS: return "JKS";
	case WKS_KEYSTORE_JCEKS: return "JCEKS";
	case WKS_KEYSTORE_PKCS12: return "PKCS12";
	case WKS_KEYSTORE_BKS: return "BKS";
	case WKS_KEYSTORE_BCFKS: return "BCFKS";
	case WKS_KEYSTORE_UBER: return "UBER";
	default: return "unknown";
	}
}

/* ---- Java serialization (just enough, strictly) ------------------------ */

enum {
	TC_NULL = 0x70, TC_REFERENCE = 0x71, TC_CLASSDESC = 0x72,
	TC_OBJECT = 0x73, TC_STRING = 0x74, TC_ARRAY = 0x75,
	TC_BLOCKDATA = 0x77, TC_ENDBLOCKDATA = 0x78, TC_BLOCKDATALONG = 0x7A,
	TC_ENUM = 0x7E
};
#define SC_WRITE_METHOD 0x01
#define SC_SERIALIZABLE 0x02
#define SC_EXTERNALIZABLE 0x04
#define SC_ENUM 0x10
#define BASE_HANDLE 0x7E0000u

#define JS_MAX_HANDLES 64
#define JS_MAX_CLASSES 16
#define JS_MAX_OBJS 8
#define JS_MAX_FIELDS 16
#define JS_MAX_VALS 32
#define JS_MAX_DEPTH 6

enum { JV_NULL, JV_PRIM, JV_BYTES, JV_STRING, JV_OBJ, JV_ENUM };

typedef struct js_class js_class;
typedef struct js_obj js_obj;

typedef struct {
	int kind;
	const uint8_t *p; /* bytes, string, or enum constant name */
	size_t len;
	js_obj *obj;
	const js_class *cls; /* enum */
} js_val;

struct js_class {
	const uint8_t *name;
	size_t name_len;
	uint8_t flags;
	size_t nfields;
	struct {
		uint8_t type;
		const uint8_t *name;
		size_t name_len;
	} f[JS_MAX_FIELDS];
	const js_class *super;
};

struct js_obj {
	const js_class *cls;
	size_t nvals;
	const uint8_t *fname[JS_MAX_VALS];
	size_t fname_len[JS_MAX_VALS];
	js_val v[JS_MAX_VALS];
};

typedef struct {
	wks_reader r;
	int depth;
	size_t nh, ncls, nobj;
	struct {
		const js_class *cls; /* a class descriptor, or */
		js_val val;          /* a value */
	} h[JS_MAX_HANDLES];
	js_class cls[JS_MAX_CLASSES];
	js_obj obj[JS_MAX_OBJS];
} js_ctx;

static int js_fail(js_ctx *x, int code, const char *what)
{
	if (!x->r.err)
		x->r.err = wks__err(code, "serialized object: %s", what);
	return x->r.err;
}

static int js_handle(js_ctx *x, const js_class *cls, const js_val *v)
{
	if (x->nh >= JS_MAX_HANDLES)
		return js_fail(x, WKS_ERR_LIMIT, "too many objects");
	x->h[x->nh].cls = cls;
	if (v)
		x->h[x->nh].val = *v;
	x->nh++;
	return 0;
}

static int js_utf(js_ctx *x, const uint8_t **p, size_t *n)
{
	*n = wks_rd_u16(&x->r);
	*p = wks_rd_take(&x->r, *n);
	return *p ? 0 : js_fail(x, WKS_ERR_FORMAT, "truncated");
}

static int js_eq(const uint8_t *p, size_t n, const char *s)
{
	return n == strlen(s) && memcmp(p, s, n) == 0;
}

/* A string value (className1 of a field, an enum constant): TC_STRING or
 * a reference to one. */
static int js_string(js_ctx *x, js_val *out)
{
	const uint8_t *t = wks_rd_take(&x->r, 1);
	uint32_t h;

	if (!t)
		return js_fail(x, WKS_ERR_FORMAT, "truncated");
	if (*t == TC_STRING) {
		out->kind = JV_STRING;
		if (js_utf(x, &out->p, &out->len))
			return x->r.err;
		return js_handle(x, NULL, out);
	}
	if (*t != TC_REFERENCE)
		return js_fail(x, WKS_ERR_UNSUPPORTED, "expected a string");
	h = (uint32_t)wks_rd_i32(&x->r) - BASE_HANDLE;
	if (x->r.err || h >= x->nh || x->h[h].cls ||
	    x->h[h].val.kind != JV_STRING)
		return js_fail(x, WKS_ERR_FORMAT, "bad string reference");
	*out = x->h[h].val;
	return 0;
}

static int js_classdesc(js_ctx *x, const js_class **out);

static int js_newclass(js_ctx *x, const js_class **out)
{
	js_class *c;
	const uint8_t *t;

	if (x->ncls >= JS_MAX_CLASSES)
		return js_fail(x, WKS_ERR_LIMIT, "too many classes");
	c = &x->cls[x->ncls++];
	memset(c, 0, sizeof(*c));
	if (js_utf(x, &c->name, &c->name_len) ||
	    !wks_rd_take(&x->r, 8) /* serialVersionUID */ ||
	    js_handle(x, c, NULL))
		return js_fail(x, WKS_ERR_FORMAT, "truncated");
	t = wks_rd_take(&x->r, 1);
	c->flags = t ? *t : 0;
	c->nfields = wks_rd_u16(&x->r);
	if (x->r.err)
		return js_fail(x, WKS_ERR_FORMAT, "truncated");
	if ((c->flags & SC_EXTERNALIZABLE) ||
	    !(c->flags & SC_SERIALIZABLE))
		return js_fail(x, WKS_ERR_UNSUPPORTED,
			       "class is not plainly serializable");
	if (c->nfields > JS_MAX_FIELDS)
		return js_fail(x, WKS_ERR_LIMIT, "too many fields");
	for (size_t i = 0; i < c->nfields; i++) {
		js_val cn;

		t = wks_rd_take(&x->r, 1);
		if (!t || js_utf(x, &c->f[i].name, &c->f[i].name_len))
			return js_fail(x, WKS_ERR_FORMAT, "truncated");
		c->f[i].type = *t;
		if (*t == '[' || *t == 'L') {
			if (js_string(x, &cn))
				return x->r.err;
		} else if (!strchr("BCDFIJSZ", *t) || !*t) {
			return js_fail(x, WKS_ERR_FORMAT, "bad field type");
		}
	}
	/* classAnnotation: nothing but its end. */
	t = wks_rd_take(&x->r, 1);
	if (!t || *t != TC_ENDBLOCKDATA)
		return js_fail(x, WKS_ERR_UNSUPPORTED, "class annotation");
	if (js_classdesc(x, &c->super))
		return x->r.err;
	*out = c;
	return 0;
}

/* classDesc: a new descriptor, a reference to one, or null. */
static int js_classdesc(js_ctx *x, const js_class **out)
{
	const uint8_t *t;
	uint32_t h;
	int rc;

	*out = NULL;
	if (++x->depth > JS_MAX_DEPTH) {
		x->depth--;
		return js_fail(x, WKS_ERR_LIMIT, "nested too deeply");
	}
	t = wks_rd_take(&x->r, 1);
	if (!t) {
		rc = js_fail(x, WKS_ERR_FORMAT, "truncated");
	} else if (*t == TC_NULL) {
		rc = 0;
	} else if (*t == TC_CLASSDESC) {
		rc = js_newclass(x, out);
	} else if (*t == TC_REFERENCE) {
		h = (uint32_t)wks_rd_i32(&x->r) - BASE_HANDLE;
		if (x->r.err || h >= x->nh || !x->h[h].cls)
			rc = js_fail(x, WKS_ERR_FORMAT, "bad class reference");
		else {
			*out = x->h[h].cls;
			rc = 0;
		}
	} else {
		rc = js_fail(x, WKS_ERR_UNSUPPORTED, "class descriptor kind");
	}
	x->depth--;
	return rc;
}

static int js_content(js_ctx *x, js_val *out);

/* Block data written by a writeObject method, up to its end marker; no
 * objects inside. */
static int js_skip_blockdata(js_ctx *x)
{
	for (;;) {
		const uint8_t *t = wks_rd_take(&x->r, 1);
		size_t n;

		if (!t)
			return js_fail(x, WKS_ERR_FORMAT, "truncated");
		if (*t == TC_ENDBLOCKDATA)
			return 0;
		if (*t == TC_BLOCKDATA) {
			const uint8_t *b = wks_rd_take(&x->r, 1);

			n = b ? *b : 0;
		} else if (*t == TC_BLOCKDATALONG) {
			int32_t l = wks_rd_i32(&x->r);

			if (l < 0)
				return js_fail(x, WKS_ERR_FORMAT, "bad block");
			n = (size_t)l;
		} else {
			return js_fail(x, WKS_ERR_UNSUPPORTED,
				       "objects in custom data");
		}
		if (!wks_rd_take(&x->r, n))
			return js_fail(x, WKS_ERR_FORMAT, "truncated");
	}
}

static int js_object(js_ctx *x, js_val *out)
{
	const js_class *cls, *chain[JS_MAX_DEPTH + 1];
	size_t nchain = 0;
	js_obj *o;

	if (js_classdesc(x, &cls))
		return x->r.err;
	if (!cls || (cls->flags & SC_ENUM))
		return js_fail(x, WKS_ERR_FORMAT, "object without a class");
	if (x->nobj >= JS_MAX_OBJS)
		return js_fail(x, WKS_ERR_LIMIT, "too many objects");
	o = &x->obj[x->nobj++];
	memset(o, 0, sizeof(*o));
	o->cls = cls;
	out->kind = JV_OBJ;
	out->obj = o;
	if (js_handle(x, NULL, out))
		return x->r.err;
	for (const js_class *c = cls; c; c = c->super) {
		if (nchain > JS_MAX_DEPTH)
			return js_fail(x, WKS_ERR_LIMIT, "class chain too long");
		chain[nchain++] = c;
	}
	/* Superclass data first. */
	while (nchain--) {
		const js_class *c = chain[nchain];

		for (size_t i = 0; i < c->nfields; i++) {
			js_val *v;
			uint8_t ty = c->f[i].type;
			size_t sz;

			if (o->nvals >= JS_MAX_VALS)
				return js_fail(x, WKS_ERR_LIMIT, "too many fields");
			v = &o->v[o->nvals];
			o->fname[o->nvals] = c->f[i].name;
			o->fname_len[o->nvals] = c->f[i].name_len;
			o->nvals++;
			if (ty == '[' || ty == 'L') {
				if (js_content(x, v))
					return x->r.err;
				continue;
			}
			sz = (ty == 'B' || ty == 'Z') ? 1 :
			     (ty == 'C' || ty == 'S') ? 2 :
			     (ty == 'I' || ty == 'F') ? 4 : 8;
			v->kind = JV_PRIM;
			v->p = wks_rd_take(&x->r, sz);
			v->len = sz;
			if (!v->p)
				return js_fail(x, WKS_ERR_FORMAT, "truncated");
		}
		if ((c->flags & SC_WRITE_METHOD) && js_skip_blockdata(x))
			return x->r.err;
	}
	return 0;
}

static int js_content(js_ctx *x, js_val *out)
{
	const js_class *cls;
	const uint8_t *t;
	uint32_t h;
	int32_t n;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (++x->depth > JS_MAX_DEPTH) {
		x->depth--;
		return js_fail(x, WKS_ERR_LIMIT, "nested too deeply");
	}
	t = wks_rd_take(&x->r, 1);
	switch (t ? *t : -1) {
	case TC_NULL:
		out->kind = JV_NULL;
		break;
	case TC_REFERENCE:
		h = (uint32_t)wks_rd_i32(&x->r) - BASE_HANDLE;
		if (x->r.err || h >= x->nh || x->h[h].cls)
			rc = js_fail(x, WKS_ERR_FORMAT, "bad reference");
		else
			*out = x->h[h].val;
		break;
	case TC_STRING:
		x->r.p--, x->r.left++; /* js_string reads the tag itself */
		rc = js_string(x, out);
		break;
	case TC_ARRAY:
		if ((rc = js_classdesc(x, &cls)) != 0)
			break;
		if (!cls || !js_eq(cls->name, cls->name_len, "[B")) {
			rc = js_fail(x, WKS_ERR_UNSUPPORTED,
				     "array of other than bytes");
			break;
		}
		out->kind = JV_BYTES;
		if ((rc = js_handle(x, NULL, out)) != 0)
			break;
		n = wks_rd_i32(&x->r);
		if (n < 0 || (size_t)n > x->r.left) {
			rc = js_fail(x, WKS_ERR_FORMAT, "bad array length");
			break;
		}
		out->len = (size_t)n;
		out->p = wks_rd_take(&x->r, out->len);
		x->h[x->nh - 1].val = *out;
		break;
	case TC_ENUM:
		if ((rc = js_classdesc(x, &cls)) != 0)
			break;
		if (!cls || !(cls->flags & SC_ENUM)) {
			rc = js_fail(x, WKS_ERR_FORMAT, "enum without a class");
			break;
		}
		out->kind = JV_ENUM;
		out->cls = cls;
		if ((rc = js_handle(x, NULL, out)) != 0)
			break;
		{
			js_val name;
			size_t me = x->nh - 1;

			if ((rc = js_string(x, &name)) != 0)
				break;
			out->p = name.p;
			out->len = name.len;
			x->h[me].val = *out;
		}
		break;
	case TC_OBJECT:
		rc = js_object(x, out);
		break;
	case -1:
		rc = js_fail(x, WKS_ERR_FORMAT, "truncated");
		break;
	default:
		rc = js_fail(x, WKS_ERR_UNSUPPORTED, "unexpected element");
		break;
	}
	x->depth--;
	if (!rc && x->r.err)
		rc = js_fail(x, WKS_ERR_FORMAT, "truncated");
	return rc;
}

/* A serialization stream at r: magic, version, one object.  The reader
 * moves past it. */
static int js_parse(js_ctx *x, wks_reader *r, js_val *out)
{
	const uint8_t *m;

	memset(x, 0, sizeof(*x));
	x->r = *r;
	m = wks_rd_take(&x->r, 4);
	if (!m)
		return js_fail(x, WKS_ERR_FORMAT, "truncated");
	if (m[0] != 0xAC || m[1] != 0xED || m[2] != 0 || m[3] != 5)
		return js_fail(x, WKS_ERR_FORMAT, "bad stream header");
	if (js_content(x, out))
		return x->r.err;
	if (out->kind != JV_OBJ)
		return js_fail(x, WKS_ERR_FORMAT, "not an object");
	*r = x->r;
	return 0;
}

static const js_val *js_field(const js_obj *o, const char *name, int kind)
{
	for (size_t i = 0; i < o->nvals; i++)
		if (js_eq(o->fname[i], o->fname_len[i], name))
			return o->v[i].kind == kind ? &o->v[i] : NULL;
	return NULL;
}

/* ---- keystore file ----------------------------------------------------- */

/* A UTF-8 password as Java's char[] in UTF-16BE. */
int wks__pw_utf16be(wks_buf *out, const char *pw, size_t n)
{
	const uint8_t *s = (const uint8_t *)pw;
	size_t i = 0;

	while (i < n) {
		uint32_t cp;
		size_t k;

		if (s[i] < 0x80) {
			cp = s[i];
			k = 1;
		} else if ((s[i] & 0xE0) == 0xC0) {
			cp = s[i] & 0x1Fu;
			k = 2;
		} else if ((s[i] & 0xF0) == 0xE0) {
			cp = s[i] & 0x0Fu;
			k = 3;
		} else if ((s[i] & 0xF8) == 0xF0) {
			cp = s[i] & 0x07u;
			k = 4;
		} else {
			goto bad;
		}
		if (k > n - i)
			goto bad;
		for (size_t j = 1; j < k; j++) {
			if ((s[i + j] & 0xC0) != 0x80)
				goto bad;
			cp = cp << 6 | (s[i + j] & 0x3Fu);
		}
		if ((k == 2 && cp < 0x80) || (k == 3 && cp < 0x800) ||
		    (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			goto bad;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			wks_buf_put_u16be(out, (uint16_t)(0xD800 | cp >> 10));
			wks_buf_put_u16be(out, (uint16_t)(0xDC00 | (cp & 0x3FF)));
		} else {
			wks_buf_put_u16be(out, (uint16_t)cp);
		}
		i += k;
	}
	return out->err ? out->err : 0;
bad:
	return wks__err(WKS_ERR_INVALID, "the password is not valid UTF-8");
}

static int sha1_parts(uint8_t md[20], const void *a, size_t an,
		      const void *b, size_t bn, const void *c, size_t cn)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int mdn = 0;
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) &&
		 EVP_DigestUpdate(ctx, a, an) && EVP_DigestUpdate(ctx, b, bn) &&
		 (!c || EVP_DigestUpdate(ctx, c, cn)) &&
		 EVP_DigestFinal_ex(ctx, md, &mdn) && mdn == 20;

	EVP_MD_CTX_free(ctx);
	return ok ? 0 : wks__err(WKS_ERR_CRYPTO, "SHA-1 failed");
}

static int take_alias(char **out, wks_reader *r)
{
	wks_buf b = WKS_BUF_INIT;
	size_t n = wks_rd_u16(r);
	const uint8_t *p = wks_rd_take(r, n);
	int err;

	*out = NULL;
	if (!p)
		return WKS_ERR_FORMAT;
	if ((err = wks__mutf8_to_api(&b, p, n)) < 0 ||
	    (err = wks_buf_put(&b, "", 1)) < 0) {
		wks_buf_dispose(&b);
		return err;
	}
	*out = (char *)b.ptr;
	return 0;
}

/* One certificate: (v2) its type, then length + DER. */
static int take_cert(jks_entry *e, size_t i, wks_reader *r, int version,
		     const jks_limits *lim)
{
	int32_t n;

	if (version == 2) {
		size_t tn = wks_rd_u16(r);
		const uint8_t *t = wks_rd_take(r, tn);

		if (!t)
			return WKS_ERR_FORMAT;
		if (!js_eq(t, tn, "X.509"))
			e->non_x509 = 1;
	}
	n = wks_rd_i32(r);
	if (r->err)
		return WKS_ERR_FORMAT;
	if (n <= 0 || (size_t)n > r->left)
		return wks__err(WKS_ERR_FORMAT, "certificate length %d with %zu "
				"bytes left", (int)n, r->left);
	if ((size_t)n > lim->max_blob)
		return wks__err(WKS_ERR_LIMIT, "certificate of %d bytes exceeds "
				"the limit %zu", (int)n, lim->max_blob);
	e->cert_len[i] = (size_t)n;
	e->cert[i] = wks_rd_take(r, (size_t)n);
	return 0;
}

int jks_entry_alloc_certs(jks_entry *e, size_t n)
{
	e->ncerts = n;
	if (n == 0)
		return 0;
	e->cert = calloc(n, sizeof(*e->cert));
	e->cert_len = calloc(n, sizeof(*e->cert_len));
	return e->cert && e->cert_len ? 0 : WKS_ERR_NOMEM;
}

static int take_sealed(jks_entry *e, wks_reader *r)
{
	js_ctx *x = calloc(1, sizeof(*x));
	const js_val *params, *data, *alg;
	const uint8_t *start = r->p;
	js_val top;
	int err;

	if (!x)
		return WKS_ERR_NOMEM;
	if ((err = js_parse(x, r, &top)) < 0)
		goto done;
	e->blob = start;
	e->blob_len = (size_t)(r->p - start);
	params = js_field(top.obj, "encodedParams", JV_BYTES);
	data = js_field(top.obj, "encryptedContent", JV_BYTES);
	alg = js_field(top.obj, "sealAlg", JV_STRING);
	if (!params || !data || !alg) {
		err = wks__err(WKS_ERR_FORMAT, "sealed key: not a SealedObject");
		goto done;
	}
	e->seal_params = params->p;
	e->seal_params_len = params->len;
	e->seal_data = data->p;
	e->seal_data_len = data->len;
	e->seal_pbe = js_eq(alg->p, alg->len, SEAL_ALG);
done:
	free(x);
	return err;
}

static int take_entry(jks_entry *e, wks_reader *r, const jks_file *f,
		      const jks_limits *lim)
{
	int32_t n;
	int err;

	e->tag = wks_rd_i32(r);
	if (r->err)
		return WKS_ERR_FORMAT;
	if (e->tag < JKS_TAG_KEY || e->tag > JKS_TAG_SECRET ||
	    (e->tag == JKS_TAG_SECRET && !f->jceks))
		return wks__err(WKS_ERR_FORMAT, "unknown entry tag %d", e->tag);
	if ((err = take_alias(&e->alias, r)) < 0)
		return err;
	e->date_ms = wks_rd_i64(r);
	if (r->err)
		return WKS_ERR_FORMAT;
	switch (e->tag) {
	case JKS_TAG_KEY:
		n = wks_rd_i32(r);
		if (r->err || n <= 0 || (size_t)n > r->left)
			return wks__err(WKS_ERR_FORMAT, "key length %d with %zu "
					"bytes left", (int)n, r->left);
		if ((size_t)n > lim->max_blob)
			return wks__err(WKS_ERR_LIMIT, "key of %d bytes exceeds "
					"the limit %zu", (int)n, lim->max_blob);
		e->blob_len = (size_t)n;
		e->blob = wks_rd_take(r, e->blob_len);
		n = wks_rd_i32(r);
		if (r->err || n < 0)
			return wks__err(WKS_ERR_FORMAT, "bad chain length %d",
					(int)n);
		/* Each certificate takes at least 5 bytes. */
		if ((size_t)n > lim->max_chain || (size_t)n > r->left / 5)
			return wks__err((size_t)n > r->left / 5 ?
					WKS_ERR_FORMAT : WKS_ERR_LIMIT,
					"chain length %d (limit %zu, %zu bytes "
					"left)", (int)n, lim->max_chain, r->left);
		if (jks_entry_alloc_certs(e, (size_t)n) < 0)
			return WKS_ERR_NOMEM;
		for (size_t i = 0; i < e->ncerts; i++)
			if ((err = take_cert(e, i, r, f->version, lim)) < 0)
				return err;
		return 0;
	case JKS_TAG_CERT:
		if (jks_entry_alloc_certs(e, 1) < 0)
			return WKS_ERR_NOMEM;
		return take_cert(e, 0, r, f->version, lim);
	default:
		return take_sealed(e, r);
	}
}

static int cmp_alias(const void *a, const void *b)
{
	return strcmp((*(jks_entry *const *)a)->alias,
		      (*(jks_entry *const *)b)->alias);
}

/* Java keeps one entry per alias; a file with two is not one Java wrote. */
static int check_unique(const jks_file *f)
{
	jks_entry **v;
	int err = 0;

	if (f->count < 2)
		return 0;
	if (!(v = malloc(f->count * sizeof(*v))))
		return WKS_ERR_NOMEM;
	for (size_t i = 0; i < f->count; i++)
		v[i] = &f->e[i];
	qsort(v, f->count, sizeof(*v), cmp_alias);
	for (size_t i = 1; i < f->count && !err; i++)
		if (!strcmp(v[i - 1]->alias, v[i]->alias))
			err = wks__err(WKS_ERR_FORMAT, "alias appears twice");
	free(v);
	return err;
}

int jks_parse(jks_file *out, const uint8_t *data, size_t len, const char *pw,
	      size_t pw_len, const jks_limits *lim)
{
	jks_file f = JKS_FILE_INIT;
	wks_reader r;
	size_t cap = 0;
	uint32_t magic;
	int32_t count;
	int err = 0;

	*out = f;
	if (len < 12 + 20)
		return wks__err(WKS_ERR_FORMAT, "file of %zu bytes is too short "
				"for a Java keystore", len);
	magic = wks_load_u32be(data);
	if (magic != JKS_MAGIC && magic != JCEKS_MAGIC)
		return wks__err(WKS_ERR_FORMAT, "not a JKS or JCEKS keystore");
	f.jceks = magic == JCEKS_MAGIC;
	f.version = (int)wks_load_u32be(data + 4);
	if (f.version != 1 && f.version != 2)
		return wks__err(WKS_ERR_UNSUPPORTED, "%s version %u",
				f.jceks ? "JCEKS" : "JKS",
				(unsigned)wks_load_u32be(data + 4));
	/* The digest before any entry is trusted. */
	if (pw) {
		wks_buf u = WKS_BUF_INIT;
		uint8_t md[20];

		if ((err = wks__pw_utf16be(&u, pw, pw_len)) == 0)
			err = sha1_parts(md, u.ptr ? u.ptr : (uint8_t *)"", u.len,
					 "Mighty Aphrodite", 16, data, len - 20);
		wks_buf_dispose(&u);
		if (err == 0 && CRYPTO_memcmp(md, data + len - 20, 20) != 0)
			err = wks__err(WKS_ERR_INTEGRITY, "keystore password "
				       "incorrect, or the file was modified");
		wks_wipe(md, sizeof(md));
		if (err < 0)
			return err;
	}
	wks_reader_init(&r, data, len - 20);
	wks_rd_take(&r, 8);
	count = wks_rd_i32(&r);
	if (count < 0)
		return wks__err(WKS_ERR_FORMAT, "negative entry count %d",
				(int)count);
	if (count > JKS_MAX_ENTRIES)
		return wks__err(WKS_ERR_LIMIT, "entry count %d exceeds the limit "
				"%d", (int)count, JKS_MAX_ENTRIES);
	/* The array grows as entries parse: never sized from the count. */
	for (size_t i = 0; i < (size_t)count; i++) {
		size_t pos = wks_reader_pos(&r);

		wks__err_clear();

		if (f.count == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			jks_entry *n = realloc(f.e, ncap * sizeof(*n));

			if (!n) {
				err = WKS_ERR_NOMEM;
				break;
			}
			f.e = n;
			cap = ncap;
		}
		memset(&f.e[f.count], 0, sizeof(f.e[0]));
		f.count++;
		err = take_entry(&f.e[i], &r, &f, lim);
		if (err == 0 && r.err)
			err = WKS_ERR_FORMAT;
		if (err < 0) {
			char d[256];

			if (err == WKS_ERR_NOMEM)
				break;
			snprintf(d, sizeof(d), "%s", wks_error_detail());
			err = wks__err(err, "entry %zu (offset %zu): %s", i, pos,
				       *d ? d : "truncated or malformed");
			break;
		}
	}
	if (err == 0 && r.left != 0)
		err = wks__err(WKS_ERR_FORMAT, "%zu bytes after the last entry",
			       r.left);
	if (err == 0)
		err = check_unique(&f);
	if (err < 0) {
		if (err == WKS_ERR_NOMEM)
			wks__err(err, "out of memory");
		jks_file_free(&f);
		return err;
	}
	*out = f;
	return 0;
}

void jks_file_free(jks_file *f)
{
	for (size_t i = 0; f->e && i < f->count; i++) {
		free(f->e[i].alias);
		free(f->e[i].cert);
		free(f->e[i].cert_len);
	}
	free(f->e);
	*f = (jks_file)JKS_FILE_INIT;
}

/* ---- key protection ----------------------------------------------------- */

/* Sun's JKS KeyProtector: salt(20) || key XOR stream || SHA-1 check. */
static int jks_kp_recover(uint8_t **out, size_t *out_len, const uint8_t *d,
			  size_t n, const char *pw, size_t pw_len)
{
	wks_buf u = WKS_BUF_INIT;
	uint8_t dig[20], chk[20], *plain = NULL;
	size_t klen;
	int err;

	if (n < 40)
		return wks__err(WKS_ERR_FORMAT, "protected key of %zu bytes", n);
	klen = n - 40;
	if ((err = wks__pw_utf16be(&u, pw, pw_len)) < 0)
		goto done;
	if (!(plain = malloc(klen ? klen : 1))) {
		err = WKS_ERR_NOMEM;
		goto done;
	}
	memcpy(dig, d, 20);
	for (size_t off = 0; off < klen; off += 20) {
		if ((err = sha1_parts(dig, u.ptr ? u.ptr : (uint8_t *)"", u.len,
				      dig, 20, NULL, 0)) < 0)
			goto done;
		for (size_t j = 0; j < 20 && off + j < klen; j++)
			plain[off + j] = d[20 + off + j] ^ dig[j];
	}
	if ((err = sha1_parts(chk, u.ptr ? u.ptr : (uint8_t *)"", u.len,
			      plain, klen, NULL, 0)) < 0)
		goto done;
	if (CRYPTO_memcmp(chk, d + 20 + klen, 20) != 0) {
		err = wks__err(WKS_ERR_INTEGRITY, "key password incorrect");
		goto done;
	}
	*out = plain;
	*out_len = klen;
	plain = NULL;
done:
	if (plain) {
		wks_wipe(plain, klen);
		free(plain);
	}
	wks_wipe(dig, sizeof(dig));
	wks_wipe(chk, sizeof(chk));
	wks_buf_dispose(&u);
	return err;
}

/* PBEParameter DER: 8-byte salt and an iteration count within limits. */
static int pbe_params(uint8_t salt[8], uint32_t *iter, const uint8_t *der,
		      size_t len, const jks_limits *lim)
{
	const unsigned char *p = der;
	PBEPARAM *pp = len <= 64 ? d2i_PBEPARAM(NULL, &p, (long)len) : NULL;
	int64_t it = 0;
	int err = 0;

	if (!pp || (size_t)(p - der) != len ||
	    ASN1_STRING_length(pp->salt) != 8 ||
	    !ASN1_INTEGER_get_int64(&it, pp->iter)) {
		err = wks__err(WKS_ERR_FORMAT, "bad PBE parameters");
	} else if (it < 1 || it > (int64_t)lim->max_iterations) {
		err = wks__err(WKS_ERR_LIMIT, "PBE iteration count %lld outside "
			       "1..%u (libwks.wks.maxIterationCount)",
			       (long long)it, lim->max_iterations);
	} else {
		memcpy(salt, ASN1_STRING_get0_data(pp->salt), 8);
		*iter = (uint32_t)it;
	}
	PBEPARAM_free(pp);
	return err;
}

/* The key and IV of PBEWithMD5AndTripleDES (Sun's PBES1Core): MD5
 * iterated over each salt half and the ASCII password. */
struct jce_kdf {
	const uint8_t *salt;
	uint32_t iter;
	const char *pw;
	size_t pw_len;
};

static int jce_derive(void *arg, uint8_t *dk, size_t dk_len)
{
	const struct jce_kdf *k = arg;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	/* Fetched once: EVP_md5() in EVP_DigestInit_ex() fetches the
	 * implementation again at every one of the 2 x iter inits, which cost
	 * several times the MD5 itself (keytool's default is 200000). */
	EVP_MD *md5 = EVP_MD_fetch(NULL, "MD5", NULL);
	int ok = md && md5 && dk_len == 32;

	for (int h = 0; ok && h < 2; h++) {
		uint8_t cur[16];
		size_t cur_len = 4;
		unsigned int mdn = 0;

		memcpy(cur, k->salt + 4 * h, 4);
		for (uint32_t i = 0; ok && i < k->iter; i++) {
			ok = EVP_DigestInit_ex(md, md5, NULL) &&
			     EVP_DigestUpdate(md, cur, cur_len) &&
			     EVP_DigestUpdate(md, k->pw, k->pw_len) &&
			     EVP_DigestFinal_ex(md, cur, &mdn) && mdn == 16;
			cur_len = 16;
		}
		memcpy(dk + 16 * h, cur, 16);
		wks_wipe(cur, sizeof(cur));
	}
	EVP_MD_CTX_free(md);
	EVP_MD_free(md5);
	return ok;
}

/* PBEWithMD5AndTripleDES as Sun's JCE has it (PBES1Core): ASCII password,
 * the key from jce_derive() (through the conversion's meter), 3DES-CBC
 * with PKCS#5 padding. */
static int jce_pbe_decrypt(uint8_t **out, size_t *out_len, const uint8_t *ct,
			   size_t ct_len, const uint8_t salt_in[8],
			   uint32_t iter, const char *pw, size_t pw_len,
			   const jks_limits *lim)
{
	uint8_t salt[8], dk[32], *plain = NULL;
	EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new();
	struct jce_kdf k = { salt, iter, pw, pw_len };
	wks__kdf_desc d = { "JCEKS/PBEWithMD5AndTripleDES", iter, sizeof(dk),
			    salt, sizeof(salt), pw, pw_len };
	int n1 = 0, n2 = 0, err = 0;

	for (size_t i = 0; i < pw_len; i++)
		if ((unsigned char)pw[i] < 0x20 || (unsigned char)pw[i] > 0x7E) {
			err = wks__err(WKS_ERR_INVALID, "JCEKS passwords are "
				       "printable ASCII (Java refuses others)");
			goto done;
		}
	if (ct_len == 0 || ct_len % 8 || ct_len > INT32_MAX) {
		err = wks__err(WKS_ERR_FORMAT, "encrypted data of %zu bytes",
			       ct_len);
		goto done;
	}
	if (!cc || !(plain = malloc(ct_len + 8))) {
		err = WKS_ERR_NOMEM;
		goto done;
	}
	memcpy(salt, salt_in, 8);
	if (!memcmp(salt, salt + 4, 4)) {
		/* Sun's "inversion" of equal halves (really a rotation with a
		 * typo): a b c d -> d a b d. */
		uint8_t a = salt[0], b = salt[1], c = salt[3];

		salt[0] = c;
		salt[1] = a;
		salt[2] = b;
	}
	if ((err = wks__kdf_run(lim->kdf, &d, iter, jce_derive, &k, dk,
				sizeof(dk))) < 0)
		goto done;
	if (!EVP_DecryptInit_ex(cc, EVP_des_ede3_cbc(), NULL, dk, dk + 24) ||
	    !EVP_DecryptUpdate(cc, plain, &n1, ct, (int)ct_len)) {
		err = wks__err(WKS_ERR_CRYPTO, "3DES failed");
		goto done;
	}
	if (!EVP_DecryptFinal_ex(cc, plain + n1, &n2)) {
		err = wks__err(WKS_ERR_INTEGRITY, "key password incorrect");
		goto done;
	}
	*out = plain;
	*out_len = (size_t)n1 + (size_t)n2;
	plain = NULL;
done:
	if (plain) {
		wks_wipe(plain, ct_len + 8);
		free(plain);
	}
	wks_wipe(dk, sizeof(dk));
	wks_wipe(salt, sizeof(salt));
	EVP_CIPHER_CTX_free(cc);
	return err;
}

static void free_secret(uint8_t *p, size_t n)
{
	if (p) {
		wks_wipe(p, n);
		free(p);
	}
}

int jks_recover_key(uint8_t **pkcs8, size_t *pkcs8_len, const jks_entry *e,
		    const char *pw, size_t pw_len, const jks_limits *lim)
{
	const unsigned char *p = e->blob;
	X509_SIG *sig = NULL;
	const X509_ALGOR *alg = NULL;
	const ASN1_OCTET_STRING *oct = NULL;
	const ASN1_OBJECT *oid = NULL;
	const void *pval = NULL;
	int ptype = 0;
	uint8_t *plain = NULL;
	size_t plain_len = 0;
	char name[64];
	int err = 0;

	*pkcs8 = NULL;
	*pkcs8_len = 0;
	if (e->tag != JKS_TAG_KEY)
		return wks__err(WKS_ERR_INVALID, "not a key entry");
	sig = e->blob_len <= LONG_MAX ? d2i_X509_SIG(NULL, &p, (long)e->blob_len)
				      : NULL;
	if (!sig || (size_t)(p - e->blob) != e->blob_len) {
		err = wks__err(WKS_ERR_FORMAT, "the protected key is not an "
			       "EncryptedPrivateKeyInfo");
		goto done;
	}
	X509_SIG_get0(sig, &alg, &oct);
	X509_ALGOR_get0(&oid, &ptype, &pval, alg);
	if (OBJ_obj2txt(name, sizeof(name), oid, 1) <= 0)
		name[0] = 0;
	if (!strcmp(name, OID_JKS_KP)) {
		err = jks_kp_recover(&plain, &plain_len,
				     ASN1_STRING_get0_data(oct),
				     (size_t)ASN1_STRING_length(oct), pw, pw_len);
	} else if (!strcmp(name, OID_JCE_PBE)) {
		const ASN1_STRING *seq = pval;
		uint8_t salt[8];
		uint32_t iter = 0;

		if (ptype != V_ASN1_SEQUENCE || !seq) {
			err = wks__err(WKS_ERR_FORMAT, "bad PBE parameters");
			goto done;
		}
		if ((err = pbe_params(salt, &iter, ASN1_STRING_get0_data(seq),
				      (size_t)ASN1_STRING_length(seq), lim)) < 0)
			goto done;
		err = jce_pbe_decrypt(&plain, &plain_len,
				      ASN1_STRING_get0_data(oct),
				      (size_t)ASN1_STRING_length(oct), salt, iter,
				      pw, pw_len, lim);
	} else {
		err = wks__err(WKS_ERR_UNSUPPORTED, "key protection %s",
			       name[0] ? name : "(unknown)");
	}
	if (err < 0)
		goto done;
	/* What was decrypted must be exactly one PKCS#8 structure (for
	 * JCEKS the only check of the password beyond the padding). */
	{
		const unsigned char *q = plain;
		PKCS8_PRIV_KEY_INFO *p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &q,
								  (long)plain_len);
		int ok = p8 && (size_t)(q - plain) == plain_len;

		PKCS8_PRIV_KEY_INFO_free(p8);
		if (!ok) {
			err = wks__err(WKS_ERR_INTEGRITY, "key password incorrect "
				       "(the decrypted key is not PKCS#8)");
			goto done;
		}
	}
	*pkcs8 = plain;
	*pkcs8_len = plain_len;
	plain = NULL;
done:
	free_secret(plain, plain_len);
	X509_SIG_free(sig);
	return err;
}

int jks_recover_secret(uint8_t **key, size_t *key_len, char **algorithm,
		       const jks_entry *e, const char *pw, size_t pw_len,
		       const jks_limits *lim)
{
	uint8_t salt[8], *plain = NULL;
	size_t plain_len = 0;
	uint32_t iter = 0;
	js_ctx *x = NULL;
	wks_reader r;
	js_val top;
	const js_val *k = NULL, *a = NULL;
	wks_buf ab = WKS_BUF_INIT;
	int err;

	*key = NULL;
	*key_len = 0;
	*algorithm = NULL;
	if (e->tag != JKS_TAG_SECRET)
		return wks__err(WKS_ERR_INVALID, "not a secret key entry");
	if (!e->seal_pbe)
		return wks__err(WKS_ERR_UNSUPPORTED, "sealed with another "
				"algorithm than " SEAL_ALG);
	if ((err = pbe_params(salt, &iter, e->seal_params, e->seal_params_len,
			      lim)) < 0 ||
	    (err = jce_pbe_decrypt(&plain, &plain_len, e->seal_data,
				   e->seal_data_len, salt, iter, pw,
				   pw_len, lim)) < 0)
		goto done;
	if (!(x = calloc(1, sizeof(*x)))) {
		err = WKS_ERR_NOMEM;
		goto done;
	}
	wks_reader_init(&r, plain, plain_len);
	if ((err = js_parse(x, &r, &top)) < 0 || r.left != 0) {
		/* Garbage after a good padding byte: a wrong password. */
		err = wks__err(WKS_ERR_INTEGRITY, "key password incorrect (the "
			       "unsealed data is not a key)");
		goto done;
	}
	if (js_eq(top.obj->cls->name, top.obj->cls->name_len,
		  "javax.crypto.spec.SecretKeySpec")) {
		k = js_field(top.obj, "key", JV_BYTES);
		a = js_field(top.obj, "algorithm", JV_STRING);
	} else if (js_eq(top.obj->cls->name, top.obj->cls->name_len,
			 "java.security.KeyRep")) {
		const js_val *t = js_field(top.obj, "type", JV_ENUM);
		const js_val *f = js_field(top.obj, "format", JV_STRING);

		if (t && js_eq(t->p, t->len, "SECRET") && f &&
		    js_eq(f->p, f->len, "RAW")) {
			k = js_field(top.obj, "encoded", JV_BYTES);
			a = js_field(top.obj, "algorithm", JV_STRING);
		}
	}
	if (!k || !a || k->len == 0 || a->len == 0) {
		err = wks__err(WKS_ERR_UNSUPPORTED, "the sealed object is not a "
			       "raw secret key (SecretKeySpec or KeyRep)");
		goto done;
	}
	if ((err = wks__mutf8_to_api(&ab, a->p, a->len)) < 0 ||
	    (err = wks_buf_put(&ab, "", 1)) < 0)
		goto done;
	if (!(*key = malloc(k->len))) {
		err = WKS_ERR_NOMEM;
		goto done;
	}
	memcpy(*key, k->p, k->len);
	*key_len = k->len;
	*algorithm = (char *)ab.ptr;
	ab = (wks_buf)WKS_BUF_INIT;
done:
	free(x);
	wks_buf_dispose(&ab);
	free_secret(plain, plain_len);
	wks_wipe(salt, sizeof(salt));
	return err;
}
