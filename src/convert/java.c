/*
 * Java keystores (JKS, JCEKS; Bouncy Castle's BKS and BCFKS) through the
 * public API of convert.h: the entry-by-entry reader over jks.c and bc.h,
 * and wks_convert_read(), which puts a whole keystore (Java or PKCS#12)
 * into a wks_store.
 */
#include "convert/convert_int.h"
#include "convert/bc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/error.h"
#include "util/wipe.h"

#include <openssl/err.h>

struct wks_java_store {
	uint8_t *data; /* our copy: the entries point into it */
	size_t len;
	jks_limits lim;
	jks_file f;
	bc_store *bc; /* BKS, BCFKS (bc.h): f's entries are its */
};

int wks_java_parse(wks_java_store **out, const uint8_t *data, size_t len,
		   const char *pw, size_t pw_len)
{
	wks_java_store *js;
	int err;

	wks__err_clear();
	if (!out || (!data && len))
		return wks__err(WKS_ERR_INVALID, "NULL argument");
	*out = NULL;
	if (!(js = calloc(1, sizeof(*js))) ||
	    !(js->data = malloc(len ? len : 1))) {
		free(js);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	if (len)
		memcpy(js->data, data, len);
	js->len = len;
	wks__convert_limits(&js->lim);
	/* One budget for every key of this keystore (kdfmeter.h). */
	if (!(js->lim.kdf = wks__kdf_meter_new(js->lim.max_kdf_iterations))) {
		free(js->data);
		free(js);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	ERR_set_mark(); /* the caller's OpenSSL errors stay, ours go */
	switch (wks__bc_detect(data, len)) {
	case WKS_KEYSTORE_UNKNOWN:
		err = jks_parse(&js->f, js->data, len, pw, pw_len, &js->lim);
		break;
	default:
		err = (js->bc = calloc(1, sizeof(*js->bc))) ?
		      wks__bc_parse(js->bc, &js->f, js->data, len, pw, pw_len,
				    &js->lim) :
		      wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	ERR_pop_to_mark();
	if (err < 0) {
		wks__kdf_meter_free(js->lim.kdf);
		free(js->bc);
		free(js->data);
		free(js);
		return err;
	}
	*out = js;
	return WKS_OK;
}

void wks_java_free(wks_java_store *js)
{
	if (!js)
		return;
	jks_file_free(&js->f);
	wks__kdf_meter_free(js->lim.kdf);
	if (js->bc) {
		wks__bc_free(js->bc);
		free(js->bc);
	}
	wks_wipe_free(js->data, js->len ? js->len : 1);
	free(js);
}

wks_keystore_type wks_java_type(const wks_java_store *js)
{
	return !js ? WKS_KEYSTORE_UNKNOWN : js->bc ? js->bc->type :
	       js->f.jceks ? WKS_KEYSTORE_JCEKS : WKS_KEYSTORE_JKS;
}

int wks_java_version(const wks_java_store *js)
{
	return !js ? 0 : js->bc ? js->bc->version : js->f.version;
}

size_t wks_java_count(const wks_java_store *js)
{
	return js ? js->f.count : 0;
}

static const jks_entry *entry(const wks_java_store *js, size_t i)
{
	return js && i < js->f.count ? &js->f.e[i] : NULL;
}

const char *wks_java_alias(const wks_java_store *js, size_t i)
{
	const jks_entry *e = entry(js, i);

	return e ? e->alias : NULL;
}

wks_entry_type wks_java_entry_type(const wks_java_store *js, size_t i)
{
	const jks_entry *e = entry(js, i);

	if (!e)
		return WKS_ENTRY_NONE;
	return e->tag == JKS_TAG_KEY ? WKS_ENTRY_PRIVATE_KEY :
	       e->tag == JKS_TAG_CERT ? WKS_ENTRY_CERTIFICATE :
	       WKS_ENTRY_SECRET_KEY;
}

int64_t wks_java_creation_time(const wks_java_store *js, size_t i)
{
	const jks_entry *e = entry(js, i);

	return e ? e->date_ms : 0;
}

size_t wks_java_cert_count(const wks_java_store *js, size_t i)
{
	const jks_entry *e = entry(js, i);

	return e ? e->ncerts : 0;
}

const uint8_t *wks_java_cert_der(const wks_java_store *js, size_t i,
				 size_t j, size_t *len)
{
	const jks_entry *e = entry(js, i);

	if (len)
		*len = 0;
	if (!e || j >= e->ncerts)
		return NULL;
	if (len)
		*len = e->cert_len[j];
	return e->cert[j];
}

int wks_java_certs_x509(const wks_java_store *js, size_t i)
{
	const jks_entry *e = entry(js, i);

	return e ? !e->non_x509 : 0;
}

/* Move a malloc()ed secret into wks_free() memory. */
static int hand_out(uint8_t **out, uint8_t *p, size_t n)
{
	uint8_t *o = wks__out_alloc(n ? n : 1);

	if (o && n)
		memcpy(o, p, n);
	if (p)
		wks_wipe_free(p, n);
	if (!o)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	*out = o;
	return 0;
}

int wks_java_get_key(uint8_t **pkcs8, size_t *pkcs8_len,
		     const wks_java_store *js, size_t i, const char *pw,
		     size_t pw_len)
{
	const jks_entry *e;
	uint8_t *p = NULL;
	size_t n = 0;
	int err;

	wks__err_clear();
	if (!pkcs8 || !pkcs8_len || !js || (!pw && pw_len))
		return wks__err(WKS_ERR_INVALID, "NULL argument");
	*pkcs8 = NULL;
	*pkcs8_len = 0;
	if (!(e = entry(js, i)))
		return wks__err(WKS_ERR_INVALID, "no entry %zu", i);
	ERR_set_mark();
	err = js->bc ? wks__bc_get_key(&p, &n, js->bc, &js->f, i,
				       pw ? pw : "", pw_len) :
		       jks_recover_key(&p, &n, e, pw ? pw : "", pw_len,
				       &js->lim);
	ERR_pop_to_mark();
	if (err < 0)
		return err;
	if ((err = hand_out(pkcs8, p, n)) < 0)
		return err;
	*pkcs8_len = n;
	return WKS_OK;
}

int wks_java_get_secret(uint8_t **key, size_t *key_len, char **algorithm,
			const wks_java_store *js, size_t i, const char *pw,
			size_t pw_len)
{
	const jks_entry *e;
	uint8_t *p = NULL;
	char *alg = NULL;
	size_t n = 0;
	int err;

	wks__err_clear();
	if (!key || !key_len || !algorithm || !js || (!pw && pw_len))
		return wks__err(WKS_ERR_INVALID, "NULL argument");
	*key = NULL;
	*key_len = 0;
	*algorithm = NULL;
	if (!(e = entry(js, i)))
		return wks__err(WKS_ERR_INVALID, "no entry %zu", i);
	ERR_set_mark();
	err = js->bc ? wks__bc_get_secret(&p, &n, &alg, js->bc, &js->f, i,
					  pw ? pw : "", pw_len) :
		       jks_recover_secret(&p, &n, &alg, e, pw ? pw : "",
					  pw_len, &js->lim);
	ERR_pop_to_mark();
	if (err < 0)
		return err;
	*algorithm = wks__out_dup(alg, strlen(alg));
	free(alg);
	if (!*algorithm) {
		wks_wipe_free(p, n);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	if ((err = hand_out(key, p, n)) < 0) {
		wks_free(*algorithm);
		*algorithm = NULL;
		return err;
	}
	*key_len = n;
	return WKS_OK;
}

/* ---- a whole Java keystore into a store ---------------------------------- */

/* Skip entry `alias`: `reason` with the library's detail (or `what`). */
static int skip(wks_convert_report *rep, const char *alias, int reason,
		const char *what)
{
	char msg[512];
	const char *d = wks_error_detail();

	snprintf(msg, sizeof(msg), "%s%s%s", what ? what : "",
		 what && d[0] ? ": " : "", d);
	return wks__report_skip(rep, alias, reason, msg) < 0 ? WKS_ERR_NOMEM : 0;
}

/* Open entry i's key (or secret) with pw, then the callback's passwords,
 * and put it into dst under the password that opened it. */
static int take_key(wks_store *dst, const wks_java_store *js, size_t i,
		    const char *pw, size_t pw_len, wks_password_cb cb,
		    void *arg, int *skipped)
{
	const char *alias = wks_java_alias(js, i);
	int secret = wks_java_entry_type(js, i) == WKS_ENTRY_SECRET_KEY;
	char buf[WKS__CB_PW_MAX];
	const char *try_pw = pw ? pw : "";
	size_t try_len = pw ? pw_len : 0, n = 0;
	uint8_t *k = NULL;
	char *alg = NULL;
	int err = WKS_ERR_INTEGRITY;

	for (unsigned attempt = 0;; attempt++) {
		if (attempt > 0) {
			if (!wks__ask_pw(cb, arg, alias, attempt, buf, &try_len))
				break;
			try_pw = buf;
		} else if (!pw) {
			continue;
		}
		err = secret ? wks_java_get_secret(&k, &n, &alg, js, i, try_pw,
						   try_len)
			     : wks_java_get_key(&k, &n, js, i, try_pw, try_len);
		if (err != WKS_ERR_INTEGRITY && err != WKS_ERR_INVALID)
			break;
		if (attempt > 0)
			wks_wipe(buf, sizeof(buf));
	}
	if (err == WKS_OK) {
		if (secret) {
			err = wks_store_set_secret_key(dst, alias, alg, k, n,
						       try_pw, try_len);
		} else {
			size_t nc = wks_java_cert_count(js, i);
			const uint8_t **c = calloc(nc ? nc : 1, sizeof(*c));
			size_t *cl = calloc(nc ? nc : 1, sizeof(*cl));

			if (!c || !cl)
				err = WKS_ERR_NOMEM;
			for (size_t j = 0; !err && j < nc; j++)
				c[j] = wks_java_cert_der(js, i, j, &cl[j]);
			if (!err)
				err = wks_store_set_private_key(dst, alias, k, n,
								c, cl, nc,
								try_pw,
								try_len);
			free(c);
			free(cl);
		}
	}
	wks_wipe(buf, sizeof(buf));
	wks_free(k);
	wks_free(alg);
	if (err == WKS_ERR_NOMEM)
		return err;
	*skipped = err != WKS_OK;
	return err;
}

/* Entries keep the source's creation time (*ctx). */
static uint64_t source_time(void *ctx)
{
	return (uint64_t)*(const int64_t *)ctx;
}

static int read_java(wks_store *dst, const uint8_t *data, size_t len,
		     const char *pw, size_t pw_len, wks_password_cb cb,
		     void *arg, wks_convert_report *rep)
{
	wks_java_store *js = NULL;
	int64_t created = 0;
	int err;

	if ((err = wks_java_parse(&js, data, len, pw, pw_len)) < 0)
		return err;
	/* The new entries' keys are derived a batch pass at a time. */
	size_t keys = 0;
	for (size_t i = 0; i < wks_java_count(js); i++)
		keys += wks_java_entry_type(js, i) != WKS_ENTRY_CERTIFICATE;
	wks__store_expect_keys(dst, keys);
	wks_store_set_wallclock(dst, source_time, &created);
	for (size_t i = 0; i < wks_java_count(js); i++) {
		const char *alias = wks_java_alias(js, i);
		wks_entry_type t = wks_java_entry_type(js, i);
		int skipped = 0;

		created = wks_java_creation_time(js, i);

		if (wks_store_contains(dst, alias)) {
			wks__err_clear();
			if ((err = wks__report_skip(rep, alias, WKS_ERR_EXISTS,
						    "the store has this alias "
						    "already")) < 0)
				break;
			continue;
		}
		if (t != WKS_ENTRY_SECRET_KEY && !wks_java_certs_x509(js, i)) {
			wks__err_clear();
			if ((err = wks__report_skip(rep, alias,
						    WKS_ERR_UNSUPPORTED,
						    "a certificate type other "
						    "than X.509")) < 0)
				break;
			continue;
		}
		if (t == WKS_ENTRY_CERTIFICATE) {
			size_t n = 0;
			const uint8_t *der = wks_java_cert_der(js, i, 0, &n);

			err = wks_store_set_cert_der(dst, alias, der, n);
			skipped = err != WKS_OK;
		} else {
			err = take_key(dst, js, i, pw, pw_len, cb, arg,
				       &skipped);
		}
		if (err == WKS_ERR_NOMEM)
			break;
		if (err == WKS_ERR_LIMIT && wks__kdf_meter_spent(js->lim.kdf)) {
			/* The budget of the call: it fails (the detail names
			 * libwks.convert.maxKdfIterations). */
			char d[400];

			snprintf(d, sizeof(d), "%s", wks_error_detail());
			wks__err(err, "entry \"%s\": %s", alias, d);
			break;
		}
		if (skipped) {
			if ((err = skip(rep, alias, err, t == WKS_ENTRY_CERTIFICATE ?
					"certificate refused" :
					err == WKS_ERR_INTEGRITY ?
					"no password given opens this key" :
					"key not taken")) < 0)
				break;
		} else {
			rep->done++;
		}
		err = 0;
	}
	wks__store_expect_keys(dst, 0);
	{
		/* wks_store_set_wallclock() clears the detail: keep the
		 * loop's (the budget's). */
		char d[400];

		snprintf(d, sizeof(d), "%s", err < 0 ? wks_error_detail() : "");
		wks_store_set_wallclock(dst, NULL, NULL);
		if (err < 0)
			wks__err(err, "%s", d);
	}
	wks_java_free(js);
	return err;
}

int wks_convert_read(wks_store *dst, const uint8_t *data, size_t len,
		     const char *pw, size_t pw_len, unsigned flags,
		     wks_password_cb cb, void *cb_arg,
		     wks_convert_report **report)
{
	wks_convert_report *rep;
	int err;

	wks__err_clear();
	if (report)
		*report = NULL;
	if (!dst || (!data && len) || (!pw && pw_len))
		return wks__err(WKS_ERR_INVALID, "NULL argument");
	if (!(rep = wks__report_new()))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	ERR_set_mark();
	if (flags & ~WKS_CONVERT_NO_MAC_OK) {
		ERR_pop_to_mark();
		wks_convert_report_free(rep);
		return wks__err(WKS_ERR_INVALID, "unknown flags");
	}
	switch (wks_keystore_detect(data, len)) {
	case WKS_KEYSTORE_JKS:
	case WKS_KEYSTORE_JCEKS:
	case WKS_KEYSTORE_BKS:
	case WKS_KEYSTORE_BCFKS:
	case WKS_KEYSTORE_UBER: /* refused by the reader, saying why */
		err = read_java(dst, data, len, pw, pw_len, cb, cb_arg, rep);
		break;
	case WKS_KEYSTORE_PKCS12:
		err = wks__p12_read(dst, data, len, pw, pw_len, flags, rep);
		break;
	case WKS_KEYSTORE_WKS:
		err = wks__err(WKS_ERR_UNSUPPORTED, "a WKS keystore: load it "
			       "with wks_store_load_buffer()");
		break;
	default:
		err = wks__err(WKS_ERR_FORMAT, "not a JKS, JCEKS, BKS, BCFKS or "
			       "PKCS#12 keystore");
	}
	ERR_pop_to_mark();
	if (err == WKS_ERR_NOMEM)
		wks__err(err, "out of memory");
	if (report)
		*report = rep;
	else
		wks_convert_report_free(rep);
	return err < 0 ? err : WKS_OK;
}
