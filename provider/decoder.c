/*
 * The decoder for key reference files (ref.h, docs/PROVIDER.md "Key
 * references"): registered only with `references = yes` in the
 * provider's openssl.cnf section, as a "pem" decoder for input "pem"
 * (PEM to PEM), so that OpenSSL 3's PEM_read_bio_PrivateKey() and
 * SSL_CTX_use_PrivateKey_file() (pem_read_bio_key ->
 * OSSL_DECODER_CTX_new_for_pkey(..., "PEM", ...)) and the file: store
 * loader try it first, before OpenSSL's own PEM-to-DER decoder.  Named so,
 * it is chained after that decoder's instance only; named "DER" (as that
 * decoder is), OpenSSL 3.0's chain builder would make and drop an
 * instance of it for each of the ~80 key decoders taking DER, at every
 * PEM key read (docs/PROVIDER.md, "What a reference costs").
 *
 * For any other PEM block it reads lines up to the first BEGIN line,
 * compares it with its own and returns "nothing decoded" (1 without a
 * callback): no allocation, no copy of the block (OpenSSL seeks the input
 * back for the next decoder).  For a reference it reads the block
 * and what follows it (bounded), parses it (wks_ref_parse(), which
 * refuses a second reference after the first), opens the store through the kept stores
 * (keep.c: the KEK cache as for wks: URIs) and passes the key on as a
 * PEM "PRIVATE KEY" block (PKCS#8 PrivateKeyInfo) to OpenSSL's own PEM
 * decoder, whose DER its key decoders turn into a key of the
 * application's providers, exactly as the store loader's keys.
 *
 * Passwords: the reference's storepass=/keypass= sources (file:, env:,
 * fd:); a store password it does not give comes from the application's
 * passphrase callback (nginx ssl_password_file, apache
 * SSLPassPhraseDialog, openssl -passin/-pass), and is also the key
 * password; a key password it does not give is the store password, and
 * if that does not open the key while the store password came from the
 * reference, the callback is asked for it.  Prompts and errors name the
 * store and the alias, never a password.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/core_object.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <openssl/bio.h>

#include <wks/uri.h>
#include <wks/wks.h>

#include "prov.h"

/* Bytes of text before a BEGIN line looked through before giving up. */
#define PREAMBLE_MAX 65536
/* Size of the buffer the passphrase callback fills. */
#define PW_CB_MAX 4096

/* The decoder context is the provider context: nothing is allocated. */
static void *ref_newctx(void *provctx)
{
	return provctx;
}

static void ref_freectx(void *vctx)
{
	(void)vctx;
}

/*
 * "No" to every selection.  OpenSSL 3.0 asks this only where it collects
 * the decoders that produce keys (ossl_decoder_ctx_setup_for_pkey(), which
 * compares each decoder that says yes with every key type name, about
 * 44,000 instructions for this one at each PEM_read_bio_PrivateKey()):
 * this decoder produces none, it hands a PEM block to OpenSSL's PEM
 * decoder.  It still joins the chain (OSSL_DECODER_CTX_add_extra() does
 * not ask), and ref_decode() checks the selection itself.
 */
static int ref_does_selection(void *provctx, int selection)
{
	(void)provctx;
	(void)selection;
	return 0;
}

/*
 * Skip to the first BEGIN line: 1 if it is a reference's (its text in
 * line[]), 0 if it is another block's or there is none.
 */
static int find_begin(wksp_provctx *pc, OSSL_CORE_BIO *in, char *line,
		      int size)
{
	size_t seen = 0;
	int at_start = 1, n;

	while (seen < PREAMBLE_MAX && (n = pc->bio_gets(in, line, size)) > 0) {
		int starts = at_start;

		seen += (size_t)n;
		at_start = line[n - 1] == '\n';
		if (!starts || n < 11 || memcmp(line, "-----BEGIN ", 11) != 0)
			continue;
		return wks_ref_is_begin(line, (size_t)n) && at_start;
	}
	return 0;
}

/* Whether line[0..n) is the END line (its end and trailing blanks
 * aside), as the parser sees it. */
static int is_end(const char *line, size_t n)
{
	const size_t el = sizeof(WKS_REF_END) - 1;

	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' ||
		     line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	return n == el && !memcmp(line, WKS_REF_END, el);
}

/*
 * Read the rest of the input after the BEGIN line: the block up to its END
 * line (at most WKS_REF_BLOCK_MAX bytes), then what follows it (at most
 * WKS_REF_TEXT_MAX bytes and one more, to tell that there is more), so
 * that the parser sees a second reference after the first and refuses
 * the file.  *out (malloc'ed) holds BEGIN line to there.  Where the core
 * lets the decoder tell and seek, the input is put back just after the
 * END line, for a caller that reads further objects from it (a file
 * store holding a reference, then certificates).  0, or -1 (raised).
 */
static int read_block(wksp_provctx *pc, OSSL_CORE_BIO *in, char **out,
		      size_t *out_len)
{
	const size_t bl = sizeof(WKS_REF_BEGIN) - 1;
	size_t cap = WKS_REF_BLOCK_MAX + WKS_REF_TEXT_MAX + 1;
	size_t limit = WKS_REF_BLOCK_MAX, len, line_start;
	char *buf = malloc(cap + 1);
	int n, after_end = -1, seen_end = 0;

	*out = NULL;
	*out_len = 0;
	if (!buf) {
		wksp_raise(pc, WKSP_R_INTERNAL, "out of memory");
		return -1;
	}
	memcpy(buf, WKS_REF_BEGIN "\n", bl + 1);
	len = bl + 1;
	for (;;) {
		line_start = len;
		if (len >= limit)
			break;
		n = pc->bio_gets(in, buf + len, (int)(limit + 1 - len));
		if (n <= 0)
			break;
		len += (size_t)n;
		if (buf[len - 1] != '\n' && len < limit)
			continue; /* the last line, without a line end */
		if (!seen_end && is_end(buf + line_start, len - line_start)) {
			seen_end = 1;
			limit = len + WKS_REF_TEXT_MAX + 1;
			if (pc->bio_ctrl)
				after_end = pc->bio_ctrl(in, BIO_C_FILE_TELL, 0,
							 NULL);
		}
	}
	if (after_end >= 0)
		(void)pc->bio_ctrl(in, BIO_C_FILE_SEEK, after_end, NULL);
	/* No END line within the limit, or the input ended: the parser
	 * says which. */
	*out = buf;
	*out_len = len;
	return 0;
}

/*
 * A password from the application's passphrase callback with `info`
 * (the store and alias) for the prompt.  0 with *pw NULL if there is none;
 * what the callback put on the error queue is then dropped.
 */
static int pw_from_callback(wksp_provctx *pc, char **pw, size_t *pw_len,
			    const char *info, OSSL_PASSPHRASE_CALLBACK *pw_cb,
			    void *pw_cbarg)
{
	OSSL_PARAM params[2];
	char *buf;
	size_t len = 0;
	int ok;

	*pw = NULL;
	*pw_len = 0;
	if (!pw_cb)
		return 0;
	if (!(buf = malloc(PW_CB_MAX + 1))) {
		wksp_raise(pc, WKSP_R_INTERNAL, "out of memory");
		return -1;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PASSPHRASE_PARAM_INFO,
						     (char *)info, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (pc->set_error_mark)
		pc->set_error_mark(pc->handle);
	ok = pw_cb(buf, PW_CB_MAX, &len, params, pw_cbarg);
	if (ok && len > 0 && len <= PW_CB_MAX) {
		if (pc->clear_last_error_mark)
			pc->clear_last_error_mark(pc->handle);
		if ((*pw = malloc(len + 1)) != NULL) {
			memcpy(*pw, buf, len);
			(*pw)[len] = 0;
			*pw_len = len;
		}
	} else if (pc->pop_error_to_mark) {
		pc->pop_error_to_mark(pc->handle);
	}
	OPENSSL_cleanse(buf, PW_CB_MAX + 1);
	free(buf);
	if (ok && len > 0 && len <= PW_CB_MAX && !*pw) {
		wksp_raise(pc, WKSP_R_INTERNAL, "out of memory");
		return -1;
	}
	return 0;
}

/* What ref_load() uses of a reference (wks/uri.h). */
typedef struct {
	const char *path, *alias;
	const wks_pwsrc *storepass, *keypass; /* NULL: none */
} ref_view;

/* A libwks failure, naming the store and the alias. */
static void raise_ref(wksp_provctx *pc, int err, const ref_view *u)
{
	if (err == WKS_ERR_INTEGRITY)
		wksp_raise(pc, WKSP_R_INTEGRITY, "store %s (key reference to "
			   "alias \"%s\")", u->path, u->alias);
	else
		wksp_raise(pc, WKSP_R_LOAD, "store %s (key reference to alias "
			   "\"%s\"): %s%s%s", u->path, u->alias,
			   wks_strerror(err), *wks_error_detail() ? ": " : "",
			   wks_error_detail());
}

#define PEM_KEY_BEGIN "-----BEGIN PRIVATE KEY-----\n"
#define PEM_KEY_END "-----END PRIVATE KEY-----\n"

/* PKCS#8 PrivateKeyInfo DER as a PEM "PRIVATE KEY" block (malloc'ed, NUL
 * not counted in *out_len), or NULL. */
static char *to_pem(const uint8_t *der, size_t len, size_t *out_len)
{
	size_t lines = (len + 47) / 48;
	size_t max = sizeof(PEM_KEY_BEGIN) + sizeof(PEM_KEY_END) +
		     lines * 65 + 1;
	char *pem, *p;

	*out_len = 0;
	if (len > INT_MAX / 2 || !(pem = malloc(max)))
		return NULL;
	p = pem;
	memcpy(p, PEM_KEY_BEGIN, sizeof(PEM_KEY_BEGIN) - 1);
	p += sizeof(PEM_KEY_BEGIN) - 1;
	for (size_t i = 0; i < len; i += 48) {
		size_t n = len - i < 48 ? len - i : 48;

		p += EVP_EncodeBlock((unsigned char *)p, der + i, (int)n);
		*p++ = '\n';
	}
	memcpy(p, PEM_KEY_END, sizeof(PEM_KEY_END));
	p += sizeof(PEM_KEY_END) - 1;
	*out_len = (size_t)(p - pem);
	return pem;
}

/* Open the store, decrypt the key and pass it on.  1 or 0 (raised). */
static int ref_load(wksp_provctx *pc, const ref_view *u,
		    OSSL_CALLBACK *data_cb, void *data_cbarg,
		    OSSL_PASSPHRASE_CALLBACK *pw_cb, void *pw_cbarg)
{
	char *spw = NULL, *kpw = NULL, err[256], info[512];
	size_t spw_len = 0, kpw_len = 0, len = 0, pem_len = 0;
	int spw_from_ref = u->storepass != NULL;
	int kpw_from_ref = u->keypass != NULL;
	wks_store *st = NULL;
	wksp_kept *kept = NULL;
	wks_key *key = NULL;
	const uint8_t *data;
	char *der = NULL;     /* the key as a PEM block */
	OSSL_PARAM params[3];
	int objtype = OSSL_OBJECT_PKEY, rc = 0, e;
	wks_entry_type t;

	snprintf(info, sizeof(info), "key \"%s\" in %s", u->alias, u->path);
	if (spw_from_ref) {
		if (wksp_pw_read(&spw, &spw_len, u->storepass, "storepass",
				 err, sizeof(err)) < 0) {
			wksp_raise(pc, WKSP_R_PASSWORD, "%s (key reference to "
				   "alias \"%s\" in %s)", err, u->alias,
				   u->path);
			goto done;
		}
	} else if (pw_from_callback(pc, &spw, &spw_len, info, pw_cb,
				    pw_cbarg) < 0) {
		goto done;
	}
	if (u->keypass &&
	    wksp_pw_read(&kpw, &kpw_len, u->keypass, "keypass", err,
			 sizeof(err)) < 0) {
		wksp_raise(pc, WKSP_R_PASSWORD, "%s (key reference to alias "
			   "\"%s\" in %s)", err, u->alias, u->path);
		goto done;
	}
	if (!spw && !kpw) {
		wksp_raise(pc, WKSP_R_NO_PASSWORD, "store %s (key reference to "
			   "alias \"%s\"): no password was given (none in the "
			   "reference, none from the application)", u->path,
			   u->alias);
		goto done;
	}
	if ((e = wksp_keep_open(pc, &st, &kept, u->path, spw, spw_len)) < 0) {
		raise_ref(pc, e, u);
		goto done;
	}
	t = wks_store_entry_type(st, u->alias);
	if (t == WKS_ENTRY_NONE) {
		wksp_raise(pc, WKSP_R_NOT_FOUND, "no entry \"%s\" in %s (key "
			   "reference)", u->alias, u->path);
		goto done;
	}
	if (t != WKS_ENTRY_PRIVATE_KEY) {
		wksp_raise(pc, WKSP_R_NOT_FOUND, "entry \"%s\" in %s is not a "
			   "private key (key reference)", u->alias, u->path);
		goto done;
	}
	e = wks_store_get_key(&key, st, u->alias, kpw ? kpw : spw,
			      kpw ? kpw_len : spw_len);
	if (e == WKS_ERR_INTEGRITY && !kpw && spw_from_ref) {
		/* The key has a password of its own: the application's. */
		if (pw_from_callback(pc, &kpw, &kpw_len, info, pw_cb,
				     pw_cbarg) < 0)
			goto done;
		if (kpw)
			e = wks_store_get_key(&key, st, u->alias, kpw,
					      kpw_len);
	}
	if (e < 0) {
		if (e != WKS_ERR_INTEGRITY)
			raise_ref(pc, e, u);
		else if (kpw_from_ref)
			wksp_raise(pc, WKSP_R_INTEGRITY, "key entry \"%s\" in "
				   "%s (key reference): wrong key password (the "
				   "reference's keypass=), or the entry was "
				   "modified", u->alias, u->path);
		else if (kpw)
			wksp_raise(pc, WKSP_R_INTEGRITY, "key entry \"%s\" in "
				   "%s (key reference): neither the store "
				   "password nor the application's password "
				   "opens it (wrong key password, or the entry "
				   "was modified)", u->alias, u->path);
		else
			wksp_raise(pc, WKSP_R_INTEGRITY, "key entry \"%s\" in "
				   "%s (key reference): " WKSP_OWN_KEY_PW_HINT
				   " in the reference: wks export-key "
				   "--reference --ref-keypass, or the "
				   "application's passphrase callback)",
				   u->alias, u->path);
		goto done;
	}
	data = wks_key_data(key, &len);
	if (!(der = to_pem(data, len, &pem_len))) {
		wksp_raise(pc, WKSP_R_INTERNAL, "out of memory");
		goto done;
	}
	wks_key_free(key);
	key = NULL;
	/* Release the store before OpenSSL builds the key: nothing of it is
	 * needed any more. */
	wksp_keep_release(pc, kept);
	kept = NULL;
	/* A PEM block for OpenSSL's own PEM decoder, the next in the chain
	 * (this decoder is "pem" to "pem"), which takes it to DER and on to
	 * the key decoders: no data type or structure, which would keep it
	 * from that decoder. */
	params[0] = OSSL_PARAM_construct_int(OSSL_OBJECT_PARAM_TYPE, &objtype);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_OBJECT_PARAM_DATA,
						      der, pem_len);
	params[2] = OSSL_PARAM_construct_end();
	rc = data_cb(params, data_cbarg);
done:
	if (der) {
		OPENSSL_cleanse(der, pem_len);
		free(der);
	}
	wks_key_free(key);
	wksp_keep_release(pc, kept);
	wksp_pw_free(spw, spw_len);
	wksp_pw_free(kpw, kpw_len);
	return rc;
}

static int ref_decode(void *vctx, OSSL_CORE_BIO *in, int selection,
		      OSSL_CALLBACK *data_cb, void *data_cbarg,
		      OSSL_PASSPHRASE_CALLBACK *pw_cb, void *pw_cbarg)
{
	wksp_provctx *pc = vctx;
	char line[128], *block = NULL;
	size_t block_len = 0;
	wks_uri *ref = NULL;
	ref_view u;
	int rc;

	/* Not asked for a private key, or no way to read: nothing here. */
	if ((selection != 0 &&
	     !(selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY)) || !pc->bio_gets)
		return 1;
	if (!find_begin(pc, in, line, (int)sizeof(line)))
		return 1; /* another PEM block: not ours */
	if (pc->config_error[0]) {
		wksp_raise(pc, WKSP_R_CONFIG, "%s", pc->config_error);
		return 0;
	}
	if (read_block(pc, in, &block, &block_len) < 0)
		return 0;
	rc = wks_ref_parse(&ref, block, block_len);
	/* A (refused) pass: source would be in it, base64-encoded. */
	OPENSSL_cleanse(block, block_len);
	free(block);
	if (rc < 0) {
		wksp_raise(pc, WKSP_R_BAD_REFERENCE, "%s", wks_error_detail());
		return 0;
	}
	u.path = wks_uri_path(ref);
	u.alias = wks_uri_alias(ref);
	u.storepass = wks_uri_storepass(ref);
	u.keypass = wks_uri_keypass(ref);
	/* Stores whose file changed or went, or idle too long, go now, as
	 * at every wks: open. */
	wksp_keep_sweep(pc);
	rc = ref_load(pc, &u, data_cb, data_cbarg, pw_cb, pw_cbarg);
	wks_uri_free(ref);
	return rc;
}

const OSSL_DISPATCH wksp_ref_decoder_functions[] = {
	{ OSSL_FUNC_DECODER_NEWCTX, (void (*)(void))ref_newctx },
	{ OSSL_FUNC_DECODER_FREECTX, (void (*)(void))ref_freectx },
	{ OSSL_FUNC_DECODER_DOES_SELECTION,
	  (void (*)(void))ref_does_selection },
	{ OSSL_FUNC_DECODER_DECODE, (void (*)(void))ref_decode },
	{ 0, NULL }
};
