/*
 * wks(1) on wolfCrypt: what the tool does with the crypto library, behind
 * the interface that cli.h declares for both backends ("what differs per
 * crypto backend"); backend_openssl.c is the other side, and what must
 * print the same (a key's description in list) prints the same here.
 *
 * wolfSSL's OpenSSL compatibility layer is not used (in 5.5.4 it has no
 * Ed25519/Ed448/PSS keys); what the tool reads of a certificate or a
 * PKCS#8 key here is its algorithm, by a strict DER walk of the
 * structure (RFC 5280 4.1, RFC 5208), so that a certificate this
 * wolfCrypt cannot parse (ML-DSA) is still described as on OpenSSL 3.0.
 * The checks that matter (chain signatures, key <-> leaf) are libwks's
 * own, through src/crypto on this same wolfCrypt.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/wolfcrypt/coding.h>
#include <wolfssl/wolfcrypt/random.h>
#include <wolfssl/wolfcrypt/sha256.h>

#include "cli.h"

void cli_cleanse(void *p, size_t n)
{
	if (p && n)
		explicit_bzero(p, n);
}

int cli_memeq_ct(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d;
}

int cli_sha256(uint8_t md[32], const uint8_t *data, size_t len)
{
	wc_Sha256 h;
	int ok;

	if (len > 0xffffffffu || wc_InitSha256(&h) != 0)
		return -1;
	ok = wc_Sha256Update(&h, data, (word32)len) == 0 &&
	     wc_Sha256Final(&h, md) == 0;
	wc_Sha256Free(&h);
	return ok ? 0 : -1;
}

int cli_random_key(uint8_t *out, size_t n)
{
	WC_RNG rng;
	int ok;

	if (n > 0xffffffffu || wc_InitRng(&rng) != 0)
		return -1;
	ok = wc_RNG_GenerateBlock(&rng, out, (word32)n) == 0;
	wc_FreeRng(&rng);
	return ok ? 0 : -1;
}

void cli_crypto_clear(void)
{
}

const char *cli_crypto_version(void)
{
	static char v[64];

	snprintf(v, sizeof(v), "wolfSSL %s, crypto backend " WKS_CRYPTO_BACKEND,
		 wolfSSL_lib_version());
	return v;
}

int cli_ssl_err(int status, const char *file, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_err(file, "%s", msg);
	return status;
}

/* ---- PEM ------------------------------------------------------------------ */

int cli_pem_encode(uint8_t **out, size_t *out_len, const char *name,
		   const uint8_t *der, size_t der_len)
{
	/* Base64 in lines of 64 characters, each ending in '\n', between
	 * the BEGIN and END lines: what OpenSSL's PEM_write_bio() writes. */
	size_t nl = strlen(name), b64 = (der_len + 2) / 3 * 4;
	size_t cap = b64 + b64 / 64 + 2 + 2 * nl + 64;
	word32 n;
	uint8_t *p;
	int k;

	*out = NULL;
	*out_len = 0;
	if (der_len > 0x3fffffff || !(p = malloc(cap))) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	k = snprintf((char *)p, cap, "-----BEGIN %s-----\n", name);
	n = (word32)(cap - (size_t)k);
	if (der_len && Base64_Encode(der, (word32)der_len, p + k, &n) != 0) {
		cli_free_secret(p, cap);
		cli_err(NULL, "cannot encode PEM");
		return CLI_EXIT_FAIL;
	}
	if (!der_len)
		n = 0;
	k += (int)n;
	k += snprintf((char *)p + k, cap - (size_t)k, "-----END %s-----\n",
		      name);
	*out = p;
	*out_len = (size_t)k;
	return 0;
}

/* ---- a strict DER walk ---------------------------------------------------- */

typedef struct {
	const uint8_t *p; /* the contents */
	size_t len;
	int tag;
} der_tlv;

/* Read one element at *p (before end); advances *p past it.  0 or -1. */
static int der_get(der_tlv *t, const uint8_t **p, const uint8_t *end)
{
	const uint8_t *q = *p;
	size_t len = 0;

	if (end - q < 2)
		return -1;
	t->tag = *q++;
	if ((t->tag & 0x1f) == 0x1f)
		return -1; /* (no high tag numbers in these structures) */
	if (*q < 0x80) {
		len = *q++;
	} else {
		int n = *q++ & 0x7f;

		if (n == 0 || n > 4 || end - q < n || *q == 0)
			return -1;
		while (n--)
			len = len << 8 | *q++;
		if (len < 0x80)
			return -1; /* not the shortest form: not DER */
	}
	if ((size_t)(end - q) < len)
		return -1;
	t->p = q;
	t->len = len;
	*p = q + len;
	return 0;
}

/* The dotted text of an OBJECT IDENTIFIER's contents.  0 or -1. */
static int oid_text(char *out, size_t out_len, const der_tlv *o)
{
	size_t k = 0;
	unsigned long v = 0;
	int first = 1;

	if (o->tag != 0x06 || o->len == 0 || (o->p[o->len - 1] & 0x80))
		return -1;
	for (size_t i = 0; i < o->len; i++) {
		if (v == 0 && o->p[i] == 0x80)
			return -1; /* a padded sub-identifier */
		if (v > (~0UL >> 7))
			return -1;
		v = v << 7 | (o->p[i] & 0x7f);
		if (o->p[i] & 0x80)
			continue;
		int n;

		if (first) {
			unsigned long a = v < 40 ? 0 : v < 80 ? 1 : 2;

			n = snprintf(out + k, out_len - k, "%lu.%lu", a,
				     v - a * 40);
			first = 0;
		} else {
			n = snprintf(out + k, out_len - k, ".%lu", v);
		}
		if (n < 0 || (size_t)n >= out_len - k)
			return -1;
		k += (size_t)n;
		v = 0;
	}
	return 0;
}

/* The bits of an unsigned INTEGER's contents (BN_num_bits). */
static int int_bits(const der_tlv *t)
{
	size_t i = 0;
	int bits;

	if (t->tag != 0x02)
		return 0;
	while (i < t->len && t->p[i] == 0)
		i++;
	if (i == t->len)
		return 0;
	bits = (int)(t->len - i - 1) * 8;
	for (uint8_t b = t->p[i]; b; b >>= 1)
		bits++;
	return bits;
}

/* The SubjectPublicKeyInfo of a DER certificate: its algorithm
 * (AlgorithmIdentifier's OID) and parameters, and its BIT STRING. */
static int cert_spki(der_tlv *alg, der_tlv *params, der_tlv *key,
		     const uint8_t *der, size_t len)
{
	const uint8_t *p = der, *end = der + len, *q, *qe;
	der_tlv cert, tbs, t, spki, ai;

	if (der_get(&cert, &p, end) || cert.tag != 0x30)
		return -1;
	p = cert.p;
	end = cert.p + cert.len;
	if (der_get(&tbs, &p, end) || tbs.tag != 0x30)
		return -1;
	q = tbs.p;
	qe = tbs.p + tbs.len;
	if (der_get(&t, &q, qe))
		return -1;
	if (t.tag == 0xa0 && der_get(&t, &q, qe)) /* version, then serial */
		return -1;
	/* signature, issuer, validity, subject */
	for (int i = 0; i < 4; i++)
		if (der_get(&t, &q, qe) || t.tag != 0x30)
			return -1;
	if (der_get(&spki, &q, qe) || spki.tag != 0x30)
		return -1;
	q = spki.p;
	qe = spki.p + spki.len;
	if (der_get(&ai, &q, qe) || ai.tag != 0x30 || der_get(key, &q, qe) ||
	    key->tag != 0x03)
		return -1;
	q = ai.p;
	qe = ai.p + ai.len;
	if (der_get(alg, &q, qe) || alg->tag != 0x06)
		return -1;
	params->tag = -1;
	params->p = NULL;
	params->len = 0;
	if (q < qe && der_get(params, &q, qe))
		return -1;
	return 0;
}

static const struct {
	const char *oid, *name;
} key_names[] = {
	{ "1.2.840.113549.1.1.1", "RSA" },
	{ "1.2.840.113549.1.1.10", "RSA-PSS" },
	{ "1.2.840.10040.4.1", "DSA" },
	{ "1.2.840.10045.2.1", "EC" },
	{ "1.3.101.110", "X25519" },
	{ "1.3.101.111", "X448" },
	{ "1.3.101.112", "ED25519" },
	{ "1.3.101.113", "ED448" },
};

/* The curves OpenSSL names by their NIST name; others by its short name. */
static const struct {
	const char *oid, *name;
} curves[] = {
	{ "1.2.840.10045.3.1.7", "P-256" },
	{ "1.3.132.0.34", "P-384" },
	{ "1.3.132.0.35", "P-521" },
	{ "1.3.132.0.33", "P-224" },
	{ "1.2.840.10045.3.1.1", "P-192" },
	{ "1.3.132.0.10", "secp256k1" },
	{ "1.3.36.3.3.2.8.1.1.7", "brainpoolP256r1" },
	{ "1.3.36.3.3.2.8.1.1.11", "brainpoolP384r1" },
	{ "1.3.36.3.3.2.8.1.1.13", "brainpoolP512r1" },
};

static void key_desc(char *out, size_t out_len, const uint8_t *der,
		     size_t len)
{
	der_tlv alg, params, key, t;
	char oid[80] = "?", curve[80];
	const char *type = NULL;

	if (!der) {
		snprintf(out, out_len, "no certificate");
		return;
	}
	if (cert_spki(&alg, &params, &key, der, len) ||
	    oid_text(oid, sizeof(oid), &alg)) {
		snprintf(out, out_len, "?");
		return;
	}
	for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
		if (!strcmp(oid, key_names[i].oid))
			type = key_names[i].name;
	if (!type) {
		if (!strcmp(oid, "2.16.840.1.101.3.4.3.17"))
			type = "ML-DSA-44";
		else if (!strcmp(oid, "2.16.840.1.101.3.4.3.18"))
			type = "ML-DSA-65";
		else if (!strcmp(oid, "2.16.840.1.101.3.4.3.19"))
			type = "ML-DSA-87";
		snprintf(out, out_len, "%s", type ? type : oid);
		return;
	}
	if (!strcmp(type, "EC") && oid_text(curve, sizeof(curve), &params) == 0) {
		const char *nist = curve;

		for (size_t i = 0; i < sizeof(curves) / sizeof(curves[0]); i++)
			if (!strcmp(curve, curves[i].oid))
				nist = curves[i].name;
		snprintf(out, out_len, "EC %s", nist);
	} else if (!strcmp(type, "RSA") && key.len > 1 && key.p[0] == 0) {
		/* BIT STRING { RSAPublicKey ::= SEQUENCE { n, e } } */
		const uint8_t *p = key.p + 1, *e = key.p + key.len;
		der_tlv seq;

		if (der_get(&seq, &p, e) || seq.tag != 0x30) {
			snprintf(out, out_len, "RSA");
			return;
		}
		p = seq.p;
		if (der_get(&t, &p, seq.p + seq.len))
			t.tag = 0;
		snprintf(out, out_len, "RSA %d", int_bits(&t));
	} else if (!strcmp(type, "DSA") && params.tag == 0x30) {
		/* Dss-Parms ::= SEQUENCE { p, q, g } */
		const uint8_t *p = params.p;

		if (der_get(&t, &p, params.p + params.len))
			t.tag = 0;
		snprintf(out, out_len, "DSA %d", int_bits(&t));
	} else {
		snprintf(out, out_len, "%s", type);
	}
}

int cli_pkcs8_alg(char *oid, size_t oid_len, char *name, size_t name_len,
		  const uint8_t *pkcs8, size_t pkcs8_len)
{
	/* OpenSSL's short names of these OIDs (OBJ_nid2sn), for the same
	 * messages; others by their OID, as OpenSSL 3.0 names ML-DSA. */
	static const struct {
		const char *oid, *sn;
	} sn[] = {
		{ "1.2.840.113549.1.1.1", "rsaEncryption" },
		{ "1.2.840.113549.1.1.10", "RSASSA-PSS" },
		{ "1.2.840.10040.4.1", "DSA" },
		{ "1.2.840.10045.2.1", "id-ecPublicKey" },
		{ "1.2.840.113549.1.3.1", "dhKeyAgreement" },
		{ "1.3.101.110", "X25519" },
		{ "1.3.101.111", "X448" },
		{ "1.3.101.112", "ED25519" },
		{ "1.3.101.113", "ED448" },
	};
	const uint8_t *p = pkcs8, *end = pkcs8 + pkcs8_len;
	der_tlv seq, ver, ai, alg, key;
	char txt[80];
	const char *s;

	if (der_get(&seq, &p, end) || seq.tag != 0x30 || p != end)
		return 0;
	p = seq.p;
	end = seq.p + seq.len;
	if (der_get(&ver, &p, end) || ver.tag != 0x02 ||
	    der_get(&ai, &p, end) || ai.tag != 0x30 ||
	    der_get(&key, &p, end) || key.tag != 0x04)
		return 0;
	p = ai.p;
	if (der_get(&alg, &p, ai.p + ai.len) ||
	    oid_text(txt, sizeof(txt), &alg))
		return 0;
	s = txt;
	for (size_t i = 0; i < sizeof(sn) / sizeof(sn[0]); i++)
		if (!strcmp(txt, sn[i].oid))
			s = sn[i].sn;
	snprintf(oid, oid_len, "%s", txt);
	snprintf(name, name_len, "%s", s);
	return 1;
}

/* ---- verify: the key against its leaf --------------------------------------
 *
 * libwks's set-time check is the match (src/crypto on wolfCrypt): the key
 * is set, with its leaf alone, into a scratch store at the lowest
 * iteration count the library takes; nothing of it is saved. */

const char *cli_check_key_leaf(char *msg, size_t msg_len, wks_store *st,
			       const char *alias, wks_key *key)
{
	wks_store *scratch = NULL;
	uint8_t *leaf = NULL;
	const uint8_t *der, *chain[1];
	size_t len, leaf_len = 0, n = 0;
	const char *status = NULL;
	int err;

	der = wks_key_data(key, &len);
	if (wks_store_cert_count(&n, st, alias) == WKS_OK && n == 0) {
		snprintf(msg, msg_len, "key decrypted; it has no certificate "
			 "to match it with");
		return NULL;
	}
	if (wks_store_get_cert_der(&leaf, &leaf_len, st, alias, 0) < 0) {
		snprintf(msg, msg_len, "no certificate");
		return "malformed";
	}
	chain[0] = leaf;
	err = wks_store_new(&scratch);
	if (err == WKS_OK)
		err = wks_store_set_property(scratch,
					     "wolfjce.wks.iterationCount",
					     "10000");
	if (err == WKS_OK)
		err = wks_store_set_private_key(scratch, "k", der, len, chain,
						&leaf_len, 1, "x", 1);
	if (err == WKS_ERR_UNSUPPORTED || err == WKS_ERR_FORMAT) {
		snprintf(msg, msg_len, "%s key decrypted; wolfCrypt cannot "
			 "read it, so its match with the certificate was not "
			 "checked", wks_key_algorithm(key));
	} else if (err == WKS_ERR_INVALID) {
		status = "key_mismatch";
		snprintf(msg, msg_len, "the key does not match its certificate");
	} else if (err < 0) {
		status = "malformed";
		snprintf(msg, msg_len, "%s: %s", wks_strerror(err),
			 wks_error_detail());
	}
	wks_store_free(scratch);
	wks_free(leaf);
	return status;
}

int cli_pkcs8_encrypt(uint8_t **out, size_t *out_len, const uint8_t *der,
		      size_t der_len, const cli_pw *pw, int iter,
		      const char *file)
{
	(void)der;
	(void)der_len;
	(void)pw;
	(void)iter;
	(void)file;
	*out = NULL;
	*out_len = 0;
	return cli_needs_openssl("export-key --encrypt/--outpass");
}

int cli_foreign_store_err(const char *file, const uint8_t *data, size_t len)
{
	(void)file;
	(void)data;
	(void)len;
	return 0; /* (Java keystores and PKCS#12: wks/convert.h, OpenSSL) */
}

void cli_keystore_note(const cli_ctx *c, const char *path)
{
	(void)c;
	(void)path;
}

/* ---- an entry's certificates, for list ---------------------------------- */

struct cli_chain {
	uint8_t **der;
	size_t *len;
	size_t n;
};

int cli_have_cert_details(void)
{
	return 0;
}

void cli_chain_free(cli_chain *ch)
{
	if (!ch)
		return;
	for (size_t i = 0; i < ch->n; i++)
		wks_free(ch->der[i]);
	free(ch->der);
	free(ch->len);
	free(ch);
}

int cli_chain_load(cli_chain **out, wks_store *st, const char *file,
		   const char *alias)
{
	cli_chain *ch = calloc(1, sizeof(*ch));
	size_t n = 0;
	int err;

	*out = NULL;
	if (!ch) {
		cli_err(file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((err = wks_store_cert_count(&n, st, alias)) < 0) {
		cli_chain_free(ch);
		return cli_lib_err(file, alias, err, NULL);
	}
	ch->der = calloc(n ? n : 1, sizeof(*ch->der));
	ch->len = calloc(n ? n : 1, sizeof(*ch->len));
	if (!ch->der || !ch->len) {
		cli_chain_free(ch);
		cli_err(file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	for (; ch->n < n; ch->n++) {
		err = wks_store_get_cert_der(&ch->der[ch->n], &ch->len[ch->n],
					     st, alias, ch->n);
		if (err < 0) {
			cli_chain_free(ch);
			return cli_lib_err(file, alias, err, NULL);
		}
	}
	*out = ch;
	return 0;
}

int cli_chain_count(const cli_chain *ch)
{
	return (int)ch->n;
}

void cli_chain_key_desc(char *out, size_t out_len, const cli_chain *ch,
			int i)
{
	if (i < 0 || (size_t)i >= ch->n)
		key_desc(out, out_len, NULL, 0);
	else
		key_desc(out, out_len, ch->der[i], ch->len[i]);
}

void cli_chain_print(FILE *f, const cli_chain *ch, int i, int indent)
{
	/* Not reached: list -v asks cli_have_cert_details() first. */
	(void)ch;
	(void)i;
	fprintf(f, "%*s(details need the OpenSSL build)\n", indent, "");
}

void cli_json_certs(FILE *f, wks_store *st, const char *alias, size_t n)
{
	(void)st;
	(void)alias;
	for (size_t i = 0; i < n; i++)
		fputs(i ? ", null" : "null", f);
}
