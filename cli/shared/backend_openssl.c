/*
 * wks(1) on OpenSSL: what the tool does with the crypto library, behind
 * the interface that cli.h declares for both backends ("what differs per
 * crypto backend"); backend_wolfcrypt.c is the other side.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "cli.h"

void cli_cleanse(void *p, size_t n)
{
	OPENSSL_cleanse(p, n);
}

int cli_memeq_ct(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n);
}

int cli_sha256(uint8_t md[32], const uint8_t *data, size_t len)
{
	unsigned int mdlen = 0;

	return EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) &&
	       mdlen == 32 ? 0 : -1;
}

int cli_random_key(uint8_t *out, size_t n)
{
	return n <= INT_MAX && RAND_priv_bytes(out, (int)n) == 1 ? 0 : -1;
}

void cli_crypto_clear(void)
{
	ERR_clear_error();
}

const char *cli_crypto_version(void)
{
	return OpenSSL_version(OPENSSL_VERSION);
}

/* OpenSSL's reason strings in plain words (they name the internals:
 * "nested asn1 error").  Decryption failures are never told apart from
 * decoding failures where that would help an attacker (PKCS#12, keys):
 * those paths print one fixed message of their own. */
static const char *plain_reason(const char *r)
{
	static const struct { const char *ssl, *plain; } map[] = {
		{ "nested asn1 error", "malformed or truncated data" },
		{ "wrong tag", "malformed data: a field is not what was expected" },
		{ "header too long", "truncated data" },
		{ "too long", "malformed or truncated data" },
		{ "not enough data", "truncated data" },
		{ "asn1 parse error", "malformed data" },
		{ "expecting an asn1 sequence", "malformed data" },
		{ "decode error", "malformed data" },
		{ "bad object header", "malformed data" },
		{ "illegal padding", "malformed data" },
		{ "unsupported", "unrecognised data" },
		{ "cipherfinal error", "decryption failed" },
		{ "bad decrypt", "decryption failed" },
		{ "bad end line", "the PEM block is cut short: no END line" },
		{ "bad base64 decode", "the PEM block is not valid base64" },
		{ "no start line", "no PEM block found" },
		{ "short header", "the PEM block is cut short" },
		{ "bad iv chars", "bad PEM encryption header" },
		{ "unsupported encryption", "unsupported PEM encryption" },
		{ "unknown message digest algorithm",
		  "unknown digest algorithm" },
		{ "unsupported algorithm", "unsupported algorithm" },
		{ "invalid", "invalid data" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(r, map[i].ssl))
			return map[i].plain;
	return r;
}

int cli_ssl_err(int status, const char *file, const char *fmt, ...)
{
	char buf[512], msg[768];
	unsigned long e, last = 0;
	va_list ap;

	while ((e = ERR_get_error()) != 0)
		if (ERR_GET_REASON(e) != 0 || !last)
			last = e;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (last) {
		const char *r = ERR_reason_error_string(last);

		if (r)
			snprintf(buf, sizeof(buf), "%s", plain_reason(r));
		else
			ERR_error_string_n(last, buf, sizeof(buf));
		cli_err(file, "%s (%s)", msg, buf);
	} else {
		cli_err(file, "%s", msg);
	}
	return status;
}

int cli_store_certs(STACK_OF(X509) **out, wks_store *st, const char *file,
		    const char *alias)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	size_t n = 0;
	int err;

	*out = NULL;
	if (!sk) {
		cli_err(file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((err = wks_store_cert_count(&n, st, alias)) < 0)
		goto lib_fail;
	for (size_t i = 0; i < n; i++) {
		X509 *x = NULL;

		if ((err = wks_store_get_cert(&x, st, alias, i)) < 0)
			goto lib_fail;
		if (!sk_X509_push(sk, x)) {
			X509_free(x);
			sk_X509_pop_free(sk, X509_free);
			cli_err(file, "out of memory");
			return CLI_EXIT_FAIL;
		}
	}
	*out = sk;
	return 0;
lib_fail:
	sk_X509_pop_free(sk, X509_free);
	return cli_lib_err(file, alias, err, NULL);
}

int cli_java_type(wks_keystore_type t)
{
	return t == WKS_KEYSTORE_JKS || t == WKS_KEYSTORE_JCEKS ||
	       t == WKS_KEYSTORE_BKS || t == WKS_KEYSTORE_BCFKS ||
	       t == WKS_KEYSTORE_UBER;
}

int cli_foreign_store_err(const char *file, const uint8_t *data, size_t len)
{
	wks_keystore_type t = wks_keystore_detect(data, len);

	if (cli_java_type(t))
		cli_err(file, "this is a %s keystore; convert it with: wks "
			"import-keystore --srckeystore %s -k NEW.wks",
			wks_keystore_type_name(t), file);
	else if (t == WKS_KEYSTORE_PKCS12)
		cli_err(file, "not a WKS keystore (a PKCS#12 file?); import it "
			"with: wks import-keystore --srckeystore %s -k NEW.wks",
			file);
	else
		return 0;
	return 1;
}

void cli_keystore_note(const cli_ctx *c, const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;
	wks_keystore_type t;
	PKCS12 *p12 = NULL;
	const unsigned char *p;

	struct stat sb;

	/* Only a regular file is read again (standard input, a pipe or a
	 * FIFO could not be, or would wait). */
	if (!path || !strcmp(path, "-") || stat(path, &sb) != 0 ||
	    !S_ISREG(sb.st_mode) || cli_read_file(&data, &len, path) != 0)
		return;
	t = wks_keystore_detect(data, len);
	if (cli_java_type(t) || t == WKS_KEYSTORE_WKS) {
		cli_note(path, "this is a %s keystore; import its entries with: "
			 "wks import-keystore --srckeystore %s -k %s "
			 "[--srcalias ALIAS]", wks_keystore_type_name(t), path,
			 c->keystore ? c->keystore : "STORE");
	} else if (t == WKS_KEYSTORE_PKCS12 && len <= LONG_MAX) {
		p = data;
		p12 = d2i_PKCS12(NULL, &p, (long)len);
		if (p12 && p == data + len)
			cli_note(path, "this is a PKCS#12 file; import it with: "
				 "wks import-p12 --in %s -k %s [-a ALIAS]", path,
				 c->keystore ? c->keystore : "STORE");
		PKCS12_free(p12);
	}
	ERR_clear_error();
	cli_free_secret(data, len);
}

int cli_pkcs8_alg(char *oid, size_t oid_len, char *name, size_t name_len,
		  const uint8_t *pkcs8, size_t pkcs8_len)
{
	const unsigned char *p = pkcs8;
	PKCS8_PRIV_KEY_INFO *p8;
	const ASN1_OBJECT *obj = NULL;
	char txt[80] = "";
	int ok = 0, nid;

	if (pkcs8_len > 0x7fffffff)
		return 0;
	p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)pkcs8_len);
	if (p8 && PKCS8_pkey_get0(&obj, NULL, NULL, NULL, p8) && obj &&
	    OBJ_obj2txt(txt, sizeof(txt), obj, 1) > 0) {
		ok = 1;
		snprintf(oid, oid_len, "%s", txt);
		nid = OBJ_obj2nid(obj);
		snprintf(name, name_len, "%s",
			 nid != NID_undef ? OBJ_nid2sn(nid) : txt);
	}
	PKCS8_PRIV_KEY_INFO_free(p8);
	ERR_clear_error();
	return ok;
}

const char *cli_check_key_leaf(char *msg, size_t msg_len, wks_store *st,
			       const char *alias, wks_key *key)
{
	const char *status = NULL;
	const uint8_t *der;
	size_t len;
	PKCS8_PRIV_KEY_INFO *p8;
	EVP_PKEY *pk = NULL, *pub;
	X509 *leaf = NULL;
	size_t n = 0;

	der = wks_key_data(key, &len);
	p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &der, (long)len);
	if (p8)
		pk = EVP_PKCS82PKEY(p8);
	PKCS8_PRIV_KEY_INFO_free(p8);
	if (wks_store_cert_count(&n, st, alias) == WKS_OK && n == 0) {
		/* A chain of 0: valid (the spec and Java accept it), but
		 * there is nothing to match the key with. */
		snprintf(msg, msg_len, "key decrypted; it "
			 "has no certificate to match it with");
	} else if (wks_store_get_cert(&leaf, st, alias, 0) < 0) {
		status = "malformed";
		snprintf(msg, msg_len, "no certificate");
	} else if (!pk) {
		snprintf(msg, msg_len, "%s key decrypted; "
			 "OpenSSL cannot read it, so its match with the "
			 "certificate was not checked", wks_key_algorithm(key));
	} else if (!(pub = X509_get0_pubkey(leaf)) ||
		   EVP_PKEY_eq(pk, pub) != 1) {
		status = "key_mismatch";
		snprintf(msg, msg_len,
			 "the key does not match its certificate");
	}
	ERR_clear_error();
	X509_free(leaf);
	EVP_PKEY_free(pk);
	return status;
}

int cli_pkcs8_encrypt(uint8_t **out, size_t *out_len, const uint8_t *der,
		      size_t der_len, const cli_pw *pw, int iter,
		      const char *file)
{
	const unsigned char *p = der;
	PKCS8_PRIV_KEY_INFO *p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p,
							  (long)der_len);
	X509_SIG *sig = NULL;
	unsigned char *enc = NULL;
	int n = 0, rc = 0;

	*out = NULL;
	*out_len = 0;
	if (!p8)
		return cli_ssl_err(CLI_EXIT_MALFORMED, file,
				   "the stored key is not PKCS#8");
	/* PBES2: AES-256-CBC, PBKDF2 with OpenSSL's default PRF
	 * (HMAC-SHA-256); works for algorithms OpenSSL cannot use. */
	sig = PKCS8_encrypt(-1, EVP_aes_256_cbc(), pw->p, (int)pw->len, NULL,
			    0, iter, p8);
	if (!sig || (n = i2d_X509_SIG(sig, &enc)) <= 0) {
		rc = cli_ssl_err(CLI_EXIT_FAIL, file, "cannot encrypt the key");
		goto done;
	}
	*out = malloc((size_t)n);
	if (!*out) {
		cli_err(file, "out of memory");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	memcpy(*out, enc, (size_t)n);
	*out_len = (size_t)n;
done:
	OPENSSL_free(enc);
	X509_SIG_free(sig);
	PKCS8_PRIV_KEY_INFO_free(p8);
	return rc;
}

/* ---- an entry's certificates, for list ---------------------------------- */

struct cli_chain {
	STACK_OF(X509) *sk;
};

int cli_have_cert_details(void)
{
	return 1;
}

int cli_chain_load(cli_chain **out, wks_store *st, const char *file,
		   const char *alias)
{
	int rc;

	*out = calloc(1, sizeof(**out));
	if (!*out) {
		cli_err(file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((rc = cli_store_certs(&(*out)->sk, st, file, alias)) != 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

int cli_chain_count(const cli_chain *ch)
{
	return sk_X509_num(ch->sk);
}

void cli_chain_key_desc(char *out, size_t out_len, const cli_chain *ch,
			int i)
{
	cli_key_desc(out, out_len, sk_X509_value(ch->sk, i));
}

void cli_chain_print(FILE *f, const cli_chain *ch, int i, int indent)
{
	cli_print_cert(f, sk_X509_value(ch->sk, i), indent);
	cli_print_cert_details(f, sk_X509_value(ch->sk, i), indent);
}

void cli_chain_free(cli_chain *ch)
{
	if (ch) {
		sk_X509_pop_free(ch->sk, X509_free);
		free(ch);
	}
}

void cli_json_certs(FILE *f, wks_store *st, const char *alias, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		X509 *x = NULL;

		if (i)
			fputs(", ", f);
		/* A certificate OpenSSL cannot parse still has its
		 * SHA-256 above: null here, not a failed listing. */
		if (wks_store_get_cert(&x, st, alias, i) < 0)
			fputs("null", f);
		else
			cli_json_cert(f, x);
		X509_free(x);
	}
}
