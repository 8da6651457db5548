/*
 * Keys and certificates for wks(1), through OpenSSL: reading key files in
 * every common encoding, reading certificate bundles, putting a chain in
 * order, describing certificates.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cli.h"
#include "wks/convert.h"

static int is_cert_name(const char *name)
{
	return !strcmp(name, PEM_STRING_X509) ||
	       !strcmp(name, PEM_STRING_X509_OLD) ||
	       !strcmp(name, PEM_STRING_X509_TRUSTED);
}

static int is_key_name(const char *name)
{
	size_t n = strlen(name);

	return n >= 11 && !strcmp(name + n - 11, "PRIVATE KEY");
}

/* ---- where a certificate came from ---------------------------------------- */

/* Each certificate read from a file remembers the file and its position
 * there (ex_data), so that a chain error can say "certificate 2 (CN=...)
 * from chain.pem". */
typedef struct {
	const char *path; /* argv: lives as long as the process */
	int pos;          /* 1-based */
} cert_origin;

static int origin_idx = -1;

static void origin_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad,
			int idx, long argl, void *argp)
{
	(void)parent;
	(void)ad;
	(void)idx;
	(void)argl;
	(void)argp;
	free(ptr);
}

static void set_origins(STACK_OF(X509) *certs, int from, const char *path)
{
	if (origin_idx < 0)
		origin_idx = X509_get_ex_new_index(0, NULL, NULL, NULL,
						   origin_free);
	if (origin_idx < 0)
		return;
	for (int i = from; i < sk_X509_num(certs); i++) {
		X509 *x = sk_X509_value(certs, i);
		cert_origin *o;

		if (X509_get_ex_data(x, origin_idx))
			continue;
		if (!(o = malloc(sizeof(*o))))
			return;
		o->path = path;
		o->pos = i - from + 1;
		if (!X509_set_ex_data(x, origin_idx, o))
			free(o);
	}
}

/* ---- reading keys ---------------------------------------------------------- */

typedef struct {
	const cli_pwsrc *src;
	const char *path;
	int asked; /* the key is encrypted: a passphrase was asked for */
	int rc;    /* getting the passphrase failed with this status */
	cli_pw pw;
} pass_state;

static int pass_cb(char *pass, size_t pass_size, size_t *pass_len,
		   const OSSL_PARAM params[], void *arg)
{
	pass_state *ps = arg;
	char prompt[512];

	(void)params;
	ps->asked = 1;
	if (!ps->pw.p) {
		if ((!ps->src || ps->src->kind == CLI_PWSRC_NONE) &&
		    !cli_have_tty()) {
			/* Name the file: the key is what needs it. */
			cli_err(ps->path, "the key is encrypted: no passphrase "
				"given and no terminal to ask for it (use "
				"--inpass pass:|env:|file:|fd:)");
			ps->rc = CLI_EXIT_USAGE;
			return 0;
		}
		snprintf(prompt, sizeof(prompt), "Passphrase for %s: ",
			 ps->path);
		ps->rc = cli_pw_get(&ps->pw, ps->src, prompt, "--inpass", 0);
		if (ps->rc)
			return 0;
	}
	if (ps->pw.len > pass_size)
		return 0;
	memcpy(pass, ps->pw.p, ps->pw.len);
	*pass_len = ps->pw.len;
	return 1;
}

/* An encrypted PKCS#8 key (DER, or PEM "ENCRYPTED PRIVATE KEY") names
 * its own PBKDF2 iteration count: bound it before OpenSSL runs it. */
static int check_encrypted_pkcs8(const uint8_t *data, size_t len,
                                 const char *path)
{
	const unsigned char *p = data;
	const X509_ALGOR *alg = NULL;
	X509_SIG *sig;
	int rc = 0;

	if (len > INT_MAX) /* not a key file; left to the decoders to refuse */
		return 0;
	sig = d2i_X509_SIG(NULL, &p, (long)len);
	if (!sig) {
		BIO *b = BIO_new_mem_buf(data, (int)len);

		sig = b ? PEM_read_bio_PKCS8(b, NULL, NULL, NULL) : NULL;
		BIO_free(b);
	}
	if (sig) {
		X509_SIG_get0(sig, &alg, NULL);
		rc = cli_pbe_check(alg, path, "encrypted private key");
	}
	X509_SIG_free(sig);
	ERR_clear_error();
	return rc;
}

/* Decode one key (PEM block or DER) into *pkey. */
static int decode_key(EVP_PKEY **pkey, const uint8_t *data, size_t len,
		      const char *path, pass_state *ps)
{
	OSSL_DECODER_CTX *dctx;
	const unsigned char *p = data;
	size_t left = len;
	PKCS8_PRIV_KEY_INFO *p8;
	int ok, rc;

	*pkey = NULL;
	/* Plain PKCS#8 DER directly: the decoders of OpenSSL 3.0 do not
	 * guess every key type from DER (Ed25519). */
	p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)len);
	if (p8 && p == data + len)
		*pkey = EVP_PKCS82PKEY(p8);
	PKCS8_PRIV_KEY_INFO_free(p8);
	if (*pkey)
		return 0;
	ERR_clear_error();
	if ((rc = check_encrypted_pkcs8(data, len, path)) != 0)
		return rc;
	p = data;
	dctx = OSSL_DECODER_CTX_new_for_pkey(pkey, NULL, NULL, NULL,
					     EVP_PKEY_KEYPAIR, NULL, NULL);
	if (!dctx)
		return cli_ssl_err(CLI_EXIT_FAIL, path, "cannot decode keys");
	OSSL_DECODER_CTX_set_passphrase_cb(dctx, pass_cb, ps);
	ok = OSSL_DECODER_from_data(dctx, &p, &left);
	OSSL_DECODER_CTX_free(dctx);
	if (ok && *pkey)
		return 0;
	EVP_PKEY_free(*pkey);
	*pkey = NULL;
	if (ps->rc) {
		ERR_clear_error();
		return ps->rc;
	}
	if (ps->asked) {
		/* One message, without OpenSSL's reason: bad padding and a
		 * plaintext that does not decode must look the same (an
		 * encrypted key file has no MAC: no padding oracle). */
		ERR_clear_error();
		cli_err(path, "cannot decrypt the private key: wrong "
			"passphrase, or the file was modified");
		return CLI_EXIT_INTEGRITY;
	}
	return cli_ssl_err(CLI_EXIT_MALFORMED, path,
			   "not a private key that OpenSSL can read (PKCS#8, "
			   "RSA or EC; PEM or DER)");
}

/* The exact bytes when `der` is a complete unencrypted PKCS#8. */
static int exact_pkcs8(uint8_t **out, size_t *out_len, const uint8_t *der,
		       size_t len)
{
	const unsigned char *p = der;
	PKCS8_PRIV_KEY_INFO *p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)len);

	if (!p8)
		return -1;
	PKCS8_PRIV_KEY_INFO_free(p8);
	if (p != der + len)
		return -1;
	*out = malloc(len);
	if (!*out)
		return -1;
	memcpy(*out, der, len);
	*out_len = len;
	return 0;
}

/* The next PEM block of `in`: 1 with the block (free name and header
 * with OPENSSL_free, der with OPENSSL_clear_free), or 0 at the end of the
 * input or with *rc set on a bad block. */
static int pem_next(BIO *in, const char *path, int *rc, char **name,
		    char **header, unsigned char **der, long *dlen)
{
	*name = *header = NULL;
	*der = NULL;
	*dlen = 0;
	if (PEM_read_bio(in, name, header, der, dlen))
		return 1;
	if (ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE)
		ERR_clear_error();
	else
		*rc = cli_ssl_err(CLI_EXIT_MALFORMED, path, "bad PEM");
	return 0;
}

int cli_load_key(EVP_PKEY **pkey, uint8_t **pkcs8, size_t *pkcs8_len,
		 STACK_OF(X509) *certs, const char *path,
		 const cli_pwsrc *inpass)
{
	pass_state ps;
	uint8_t *data = NULL, *block = NULL;
	size_t len = 0, block_len = 0;
	int rc, keys = 0;

	int before = certs ? sk_X509_num(certs) : 0;

	memset(&ps, 0, sizeof(ps));
	ps.src = inpass;
	ps.path = path;
	*pkey = NULL;
	*pkcs8 = NULL;
	*pkcs8_len = 0;
	if ((rc = cli_read_file(&data, &len, path)) != 0)
		return rc;

	if (cli_has_pem(data, len)) {
		BIO *in = BIO_new_mem_buf(data, (int)len);

		rc = 0;
		while (in && rc == 0) {
			char *name, *header;
			unsigned char *der;
			long dlen;

			if (!pem_next(in, path, &rc, &name, &header, &der,
				      &dlen))
				break;
			if (is_cert_name(name) && certs) {
				rc = cli_push_cert_der(
					certs, der, dlen, path,
					!strcmp(name, PEM_STRING_X509_TRUSTED));
			} else if (is_key_name(name)) {
				if (keys++) {
					cli_err(path, "holds more than one "
						"private key");
					rc = CLI_EXIT_INVALID;
				} else {
					BIO *one = BIO_new(BIO_s_mem());
					char *mem;
					long mlen;

					/* Re-wrap the block alone, headers
					 * included (legacy encryption). */
					if (!one || !PEM_write_bio(one, name,
								   header, der,
								   dlen)) {
						rc = cli_ssl_err(CLI_EXIT_FAIL,
								 path, "PEM");
					} else {
						mlen = BIO_get_mem_data(one, &mem);
						rc = decode_key(pkey,
								(uint8_t *)mem,
								(size_t)mlen,
								path, &ps);
						OPENSSL_cleanse(mem,
								(size_t)mlen);
					}
					BIO_free(one);
					if (rc == 0 &&
					    !strcmp(name, PEM_STRING_PKCS8INF))
						(void)exact_pkcs8(&block,
								  &block_len,
								  der,
								  (size_t)dlen);
				}
			}
			OPENSSL_free(name);
			OPENSSL_free(header);
			if (der) {
				OPENSSL_cleanse(der, (size_t)dlen);
				OPENSSL_free(der);
			}
		}
		BIO_free(in);
		if (certs)
			set_origins(certs, before, path);
		if (rc)
			goto done;
		if (!keys) {
			cli_err(path, "no private key found (expected a PEM "
				"\"PRIVATE KEY\" block)");
			rc = CLI_EXIT_MALFORMED;
			goto done;
		}
	} else {
		if ((rc = decode_key(pkey, data, len, path, &ps)) != 0)
			goto done;
		(void)exact_pkcs8(&block, &block_len, data, len);
	}

	if (!block) {
		/* Encrypted or traditional input: OpenSSL's PKCS#8. */
		PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(*pkey);
		unsigned char *der = NULL;
		int dlen = p8 ? i2d_PKCS8_PRIV_KEY_INFO(p8, &der) : -1;

		PKCS8_PRIV_KEY_INFO_free(p8);
		if (dlen <= 0) {
			rc = cli_ssl_err(CLI_EXIT_INVALID, path,
					 "cannot encode the key as PKCS#8");
			goto done;
		}
		block = malloc((size_t)dlen);
		if (block) {
			memcpy(block, der, (size_t)dlen);
			block_len = (size_t)dlen;
		}
		OPENSSL_clear_free(der, (size_t)dlen);
		if (!block) {
			cli_err(path, "out of memory");
			rc = CLI_EXIT_FAIL;
			goto done;
		}
	}
	*pkcs8 = block;
	*pkcs8_len = block_len;
	block = NULL;
	rc = 0;
done:
	if (rc) {
		EVP_PKEY_free(*pkey);
		*pkey = NULL;
	}
	cli_free_secret(block, block_len);
	cli_pw_clear(&ps.pw);
	cli_free_secret(data, len);
	return rc;
}

/* ---- reading certificates ------------------------------------------------- */

int cli_load_certs(STACK_OF(X509) *certs, const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int before = sk_X509_num(certs), rc;

	if ((rc = cli_read_file(&data, &len, path)) != 0)
		return rc;
	rc = cli_parse_certs_p7(certs, data, len, path);
	set_origins(certs, before, path);
	cli_free_secret(data, len);
	return rc;
}

/* ---- chains --------------------------------------------------------------- */

static char *subject_text(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *mem, *s = NULL, *d;
	long n;

	if (!b)
		return NULL;
	X509_NAME_print_ex(b, X509_get_subject_name(x), 0,
			   XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
	n = BIO_get_mem_data(b, &mem);
	s = malloc((size_t)n + 1);
	if (s) {
		memcpy(s, mem, (size_t)n);
		s[n] = 0;
	}
	BIO_free(b);
	if (!s)
		return NULL;
	d = cli_display_escaped(s);
	free(s);
	return d;
}

/* "certificate 2 (CN=...) from chain.pem", or "certificate (CN=...)"
 * when its file is not known. */
static char *cert_text(X509 *x)
{
	const cert_origin *o = origin_idx >= 0 ?
			       X509_get_ex_data(x, origin_idx) : NULL;
	char *s = subject_text(x), *f = o ? cli_display(o->path) : NULL;
	char *out;
	size_t n = (s ? strlen(s) : 1) + (f ? strlen(f) : 0) + 64;

	if ((out = malloc(n)) != NULL) {
		if (o && f)
			snprintf(out, n, "certificate %d (%s) from %s", o->pos,
				 s ? s : "?", f);
		else
			snprintf(out, n, "certificate (%s)", s ? s : "?");
	}
	free(s);
	free(f);
	return out;
}

static int issued_by(X509 *subject, X509 *issuer)
{
	EVP_PKEY *pk;

	if (X509_check_issued(issuer, subject) != X509_V_OK)
		return 0;
	pk = X509_get0_pubkey(issuer);
	if (!pk) {
		ERR_clear_error();
		return 1; /* a key OpenSSL cannot use: trust the names */
	}
	if (X509_verify(subject, pk) == 1)
		return 1;
	ERR_clear_error();
	return 0;
}

int cli_order_chain(STACK_OF(X509) **out, X509 *leaf, EVP_PKEY *key,
		    STACK_OF(X509) *pool, const char *file, int strict)
{
	STACK_OF(X509) *left = sk_X509_new_null(), *chain = sk_X509_new_null();
	X509 *cur = NULL;
	int rc = CLI_EXIT_FAIL;

	*out = NULL;
	if (!left || !chain)
		goto nomem;
	/* Unique certificates of the pool. */
	for (int i = 0; i < sk_X509_num(pool); i++) {
		X509 *x = sk_X509_value(pool, i);
		int dup = 0;

		for (int j = 0; j < sk_X509_num(left) && !dup; j++)
			dup = X509_cmp(x, sk_X509_value(left, j)) == 0;
		if (!dup && !sk_X509_push(left, x))
			goto nomem;
	}
	if (leaf) {
		cur = leaf;
	} else {
		for (int i = 0; i < sk_X509_num(left) && !cur; i++) {
			EVP_PKEY *pk = X509_get0_pubkey(sk_X509_value(left, i));

			if (pk && EVP_PKEY_eq(pk, key) == 1)
				cur = sk_X509_value(left, i);
		}
		ERR_clear_error();
		if (!cur) {
			cli_err(file, "the private key matches none of the "
				"certificates given");
			rc = CLI_EXIT_INVALID;
			goto done;
		}
	}
	for (;;) {
		X509 *next = NULL;

		for (int i = 0; i < sk_X509_num(left); i++)
			if (X509_cmp(sk_X509_value(left, i), cur) == 0) {
				(void)sk_X509_delete(left, i);
				break;
			}
		if (!X509_up_ref(cur))
			goto nomem;
		if (!sk_X509_push(chain, cur)) {
			X509_free(cur);
			goto nomem;
		}
		if (X509_check_issued(cur, cur) == X509_V_OK)
			break; /* self-issued: the root */
		for (int i = 0; i < sk_X509_num(left) && !next; i++)
			if (issued_by(cur, sk_X509_value(left, i)))
				next = sk_X509_value(left, i);
		if (!next)
			break;
		cur = next;
	}
	if (strict && sk_X509_num(left) > 0) {
		/* Which link is missing: the certificate left over, and the
		 * top of the chain built so far (that it does not sign). */
		X509 *top = sk_X509_value(chain, sk_X509_num(chain) - 1);
		char *a = cert_text(sk_X509_value(left, 0));
		char *b = cert_text(top);

		if (X509_check_issued(top, top) == X509_V_OK)
			cli_err(NULL, "%s is not part of the chain of the key: "
				"the chain already ends at the root, %s",
				a ? a : "?", b ? b : "?");
		else
			cli_err(NULL, "%s is not the issuer of %s (each "
				"certificate must be signed by the next)",
				a ? a : "?", b ? b : "?");
		free(a);
		free(b);
		rc = CLI_EXIT_INVALID;
		goto done;
	}
	*out = chain;
	chain = NULL;
	rc = 0;
	goto done;
nomem:
	cli_err(file, "out of memory");
done:
	sk_X509_free(left);
	sk_X509_pop_free(chain, X509_free);
	return rc;
}

/* ---- encodings and descriptions ------------------------------------------- */

int cli_pem_encode(uint8_t **out, size_t *out_len, const char *name,
		   const uint8_t *der, size_t der_len)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *mem;
	long n;
	int rc = CLI_EXIT_FAIL;

	*out = NULL;
	*out_len = 0;
	if (b && PEM_write_bio(b, name, "", der, (long)der_len) > 0) {
		n = BIO_get_mem_data(b, &mem);
		*out = malloc((size_t)n + 1);
		if (*out) {
			memcpy(*out, mem, (size_t)n);
			*out_len = (size_t)n;
			rc = 0;
		}
		OPENSSL_cleanse(mem, (size_t)n);
	}
	BIO_free(b);
	if (rc)
		cli_err(NULL, "out of memory");
	return rc;
}

int cli_cert_der(uint8_t **out, size_t *out_len, X509 *x)
{
	unsigned char *der = NULL;
	int n = i2d_X509(x, &der);

	*out = NULL;
	*out_len = 0;
	if (n <= 0)
		return cli_ssl_err(CLI_EXIT_FAIL, NULL,
				   "cannot encode a certificate");
	*out = malloc((size_t)n);
	if (*out) {
		memcpy(*out, der, (size_t)n);
		*out_len = (size_t)n;
	}
	OPENSSL_free(der);
	if (!*out) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	return 0;
}

void cli_key_desc(char *out, size_t out_len, X509 *x)
{
	EVP_PKEY *pk;

	if (!x) {
		/* A private key entry may have no chain (the spec and Java
		 * accept a chain count of 0). */
		snprintf(out, out_len, "no certificate");
		return;
	}
	pk = X509_get0_pubkey(x);
	if (pk) {
		char group[64] = "";
		const char *type = EVP_PKEY_get0_type_name(pk);

		if (EVP_PKEY_is_a(pk, "EC") &&
		    EVP_PKEY_get_utf8_string_param(pk,
				OSSL_PKEY_PARAM_GROUP_NAME, group,
				sizeof(group), NULL)) {
			const char *nist = EC_curve_nid2nist(OBJ_sn2nid(group));

			snprintf(out, out_len, "EC %s", nist ? nist : group);
		} else if (EVP_PKEY_is_a(pk, "RSA") ||
			   EVP_PKEY_is_a(pk, "DSA")) {
			snprintf(out, out_len, "%s %d", type ? type : "?",
				 EVP_PKEY_get_bits(pk));
		} else {
			snprintf(out, out_len, "%s", type ? type : "?");
		}
	} else {
		/* OpenSSL cannot use the key (ML-DSA on OpenSSL 3.0): name it
		 * from its OID. */
		ASN1_OBJECT *alg = NULL;
		char oid[80] = "?";

		ERR_clear_error();
		if (X509_PUBKEY_get0_param(&alg, NULL, NULL, NULL,
					   X509_get_X509_PUBKEY(x)) && alg)
			OBJ_obj2txt(oid, sizeof(oid), alg, 1);
		if (!strcmp(oid, "2.16.840.1.101.3.4.3.17"))
			snprintf(out, out_len, "ML-DSA-44");
		else if (!strcmp(oid, "2.16.840.1.101.3.4.3.18"))
			snprintf(out, out_len, "ML-DSA-65");
		else if (!strcmp(oid, "2.16.840.1.101.3.4.3.19"))
			snprintf(out, out_len, "ML-DSA-87");
		else
			snprintf(out, out_len, "%s", oid);
	}
}

static void print_name(FILE *f, X509_NAME *name)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *mem, *s, *d;
	long n;

	if (!b)
		return;
	X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
	n = BIO_get_mem_data(b, &mem);
	s = malloc((size_t)n + 1);
	if (s) {
		memcpy(s, mem, (size_t)n);
		s[n] = 0;
		d = cli_display_escaped(s);
		fputs(d ? d : "", f);
		free(d);
		free(s);
	}
	BIO_free(b);
}

static void format_asn1_time(char *out, size_t out_len, const ASN1_TIME *t)
{
	struct tm tm;

	if (!t || !ASN1_TIME_to_tm(t, &tm) ||
	    !strftime(out, out_len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(out, out_len, "?");
}

void cli_print_cert(FILE *f, X509 *x, int indent)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char fp[EVP_MAX_MD_SIZE * 3 + 1] = "?", nb[64], na[64], key[128];

	if (X509_digest(x, EVP_sha256(), md, &mdlen))
		cli_hex(fp, md, mdlen, ':');
	format_asn1_time(nb, sizeof(nb), X509_get0_notBefore(x));
	format_asn1_time(na, sizeof(na), X509_get0_notAfter(x));
	cli_key_desc(key, sizeof(key), x);
	fprintf(f, "%*sSubject: ", indent, "");
	print_name(f, X509_get_subject_name(x));
	fprintf(f, "\n%*sIssuer:  ", indent, "");
	print_name(f, X509_get_issuer_name(x));
	fprintf(f, "\n%*sValid:   %s to %s\n", indent, "", nb, na);
	fprintf(f, "%*sSHA-256: %s\n", indent, "", fp);
	fprintf(f, "%*sKey:     %s\n", indent, "", key);
	ERR_clear_error();
}

/* ---- bounds on the work factor of password-based encryption ----------------
 *
 * An encrypted PKCS#8 key names its own PBKDF2 iteration count; OpenSSL
 * runs whatever it says, so a hostile file with 0x7FFFFFFF iterations
 * would make an import run for hours.  This check runs before any
 * decryption and applies the library's own ceiling,
 * libwks.wks.maxIterationCount (default 5,000,000), with the library's
 * reading of the count (wks_pbe_iterations()).  (PKCS#12 files are read
 * by the library, which checks them itself.) */

static long max_iterations(void)
{
	char buf[32];

	if (wks_get_property(buf, sizeof(buf), NULL,
	                     "libwks.wks.maxIterationCount") != WKS_OK)
		return 5000000;
	return strtol(buf, NULL, 10);
}

static int check(long iter, const char *file, const char *what)
{
	long max = max_iterations();

	if (iter > max) {
		cli_err(file, "%s: iteration count %ld exceeds limit %ld "
		        "(libwks.wks.maxIterationCount)", what, iter, max);
		return CLI_EXIT_LIMIT;
	}
	return 0;
}

int cli_pbe_check(const X509_ALGOR *alg, const char *file, const char *what)
{
	return check(wks_pbe_iterations(alg), file, what);
}
