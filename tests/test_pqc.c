/*
 * ML-DSA and SLH-DSA private keys (spec 4 and 7.1), which OpenSSL 3.0
 * can neither parse nor compare with a certificate:
 *
 *   - both PKCS#8 shapes of wolfCrypt's ML-DSA keys, version 0 and
 *     version 1 with the public key attached, go through
 *     set_private_key -> save -> load -> get_key byte for byte, named
 *     "ML-DSA-44", also through wksdump.py in both directions;
 *   - the set-time key/certificate check is wolfJCE's: the certificate's
 *     SubjectPublicKeyInfo, with an explicit NULL AlgorithmIdentifier
 *     parameter stripped, against the one of the key; anything else
 *     (another OID, other parameters, another public key) is refused.
 *
 * Material.  The ML-DSA-44 key and certificate are those of the wolfJCE
 * vector client-mldsa44.wks (its key is version 0: SEQUENCE { INTEGER 0,
 * SEQUENCE { OID 2.16.840.1.101.3.4.3.17 }, OCTET STRING { SEQUENCE {
 * OCTET STRING seed(32), OCTET STRING expandedKey(2560) } } }).  From it
 * the test builds, by hand:
 *
 *   version 1:  SEQUENCE { INTEGER 1, the same AlgorithmIdentifier, the
 *               same privateKey, [1] IMPLICIT BIT STRING { 00, pk } }
 *               (81 82 05 21 00 pk: pk = the certificate's 1312 bytes),
 *               and the same as wolfSSL's SetAsymKeyDer() writes it,
 *               without the unused-bits octet (81 82 05 20 pk);
 *   certificates: Certificate { tbs { [0] v3, serial 1, AlgorithmIdentifier,
 *               Name CN=pqc, Validity 2025-2035, Name CN=pqc,
 *               SubjectPublicKeyInfo { AlgorithmIdentifier { OID
 *               [, params] }, BIT STRING { 00, pk } } }, AlgorithmIdentifier,
 *               BIT STRING { 00, 64 zero bytes } } -- the signature is
 *               never checked (a chain of one: wolfJCE and libwks check
 *               links only), so OID, parameters and key can be varied.
 *
 * SLH-DSA (no vector has one): SLH-DSA-SHA2-128s (OID ...3.4.3.20, n =
 * 16) with the private key SK.seed || SK.prf || PK.seed || PK.root =
 * bytes 0x00..0x3f, so the public key is bytes 0x20..0x3f (RFC 9909: the
 * privateKey OCTET STRING holds those 64 bytes as they are), and
 * SLH-DSA-SHAKE-256s (...3.4.3.30, n = 32) likewise with 128 bytes.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tu_ossl.h"

#define VPW "wolfsslpassword"
#define PW "pqc-store-password"
#define KP "pqc-key-password"

/* ---- DER building and reading (independent of the library's) ---------- */

static void put(wks_buf *b, const void *p, size_t n)
{
	assert_int_equal(wks_buf_put(b, p, n), WKS_OK);
}

static void put_tlv(wks_buf *b, uint8_t tag, const void *c, size_t n)
{
	uint8_t h[6];
	size_t k = 0;

	h[k++] = tag;
	if (n < 0x80) {
		h[k++] = (uint8_t)n;
	} else if (n < 0x100) {
		h[k++] = 0x81;
		h[k++] = (uint8_t)n;
	} else {
		assert_true(n < 0x10000);
		h[k++] = 0x82;
		h[k++] = (uint8_t)(n >> 8);
		h[k++] = (uint8_t)n;
	}
	put(b, h, k);
	put(b, c, n);
}

/* tag || len || contents-of-b, into out; b is emptied. */
static void wrap(wks_buf *out, uint8_t tag, wks_buf *b)
{
	put_tlv(out, tag, b->ptr, b->len);
	wks_buf_dispose(b);
}

/* The TLV at p: its header length and content length. */
static void tlv(const uint8_t *p, size_t *hdr, size_t *len)
{
	size_t k, i;

	if (p[1] < 0x80) {
		*hdr = 2;
		*len = p[1];
		return;
	}
	k = p[1] & 0x7f;
	for (*len = 0, i = 0; i < k; i++)
		*len = *len << 8 | p[2 + i];
	*hdr = 2 + k;
}

static const uint8_t OID_MLDSA44[] = { 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
	0x65, 0x03, 0x04, 0x03, 0x11 };
static const uint8_t OID_MLDSA65[] = { 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
	0x65, 0x03, 0x04, 0x03, 0x12 };
static const uint8_t OID_SLH128S[] = { 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
	0x65, 0x03, 0x04, 0x03, 0x14 };
static const uint8_t OID_SLH128F[] = { 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
	0x65, 0x03, 0x04, 0x03, 0x15 };
static const uint8_t OID_SLHSHAKE256S[] = { 0x06, 0x09, 0x60, 0x86, 0x48,
	0x01, 0x65, 0x03, 0x04, 0x03, 0x1e };
static const uint8_t NULL_PARAM[] = { 0x05, 0x00 };
static const uint8_t OTHER_PARAM[] = { 0x04, 0x00 };

/*
 * A certificate (see the top) with SubjectPublicKeyInfo
 * { { oid [, params] }, BIT STRING { 00, pk } }.
 */
static void make_cert(wks_buf *out, const uint8_t *oid, size_t oid_len,
                      const uint8_t *params, size_t params_len,
                      const uint8_t *pk, size_t pk_len)
{
	static const uint8_t v3[] = { 0xa0, 0x03, 0x02, 0x01, 0x02 };
	static const uint8_t serial[] = { 0x02, 0x01, 0x01 };
	static const uint8_t name[] = { 0x30, 0x0e, 0x31, 0x0c, 0x30, 0x0a,
		0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x03, 'p', 'q', 'c' };
	static const char validity[] = "\x30\x1e"
		"\x17\x0d" "250101000000Z" "\x17\x0d" "350101000000Z";
	wks_buf tbs = WKS_BUF_INIT, alg = WKS_BUF_INIT, spki = WKS_BUF_INIT,
	        bits = WKS_BUF_INIT, cert = WKS_BUF_INIT, tmp = WKS_BUF_INIT;
	uint8_t sig[65] = { 0 };

	put(&alg, oid, oid_len);
	if (params_len)
		put(&alg, params, params_len);
	wrap(&spki, 0x30, &alg);
	put(&bits, "", 1);
	put(&bits, pk, pk_len);
	wrap(&spki, 0x03, &bits);

	put(&tbs, v3, sizeof(v3));
	put(&tbs, serial, sizeof(serial));
	put(&tmp, oid, oid_len);
	wrap(&tbs, 0x30, &tmp);
	put(&tbs, name, sizeof(name));
	put(&tbs, validity, sizeof(validity) - 1);
	put(&tbs, name, sizeof(name));
	wrap(&tbs, 0x30, &spki);

	wrap(&cert, 0x30, &tbs);
	put(&tmp, oid, oid_len);
	wrap(&cert, 0x30, &tmp);
	put_tlv(&cert, 0x03, sig, sizeof(sig));
	wrap(out, 0x30, &cert);
}

/* ---- the ML-DSA-44 vector ---------------------------------------------- */

static uint8_t *g_v0, *g_v1, *g_v1w, *g_cert, *g_pk;
static size_t g_v0_len, g_v1_len, g_v1w_len, g_cert_len, g_pk_len;
static uint8_t g_alg_tlv[64], g_priv_tlv[4096];
static size_t g_alg_tlv_len, g_priv_tlv_len;

/* version 1 of a key: INTEGER 1, `alg`, `priv` (whole TLVs), and the
 * public key as [1] IMPLICIT BIT STRING { 00, pk } (RFC 5958), or, with
 * `raw`, as wolfSSL's SetAsymKeyDer() writes it: 81 len pk, without the
 * unused-bits octet. */
static void make_v1_as(wks_buf *out, const uint8_t *alg, size_t alg_len,
                       const uint8_t *priv, size_t priv_len,
                       const uint8_t *pk, size_t pk_len, int raw)
{
	static const uint8_t one[] = { 0x02, 0x01, 0x01 };
	wks_buf seq = WKS_BUF_INIT, bits = WKS_BUF_INIT;

	put(&seq, one, sizeof(one));
	put(&seq, alg, alg_len);
	put(&seq, priv, priv_len);
	if (!raw)
		put(&bits, "", 1);
	put(&bits, pk, pk_len);
	wrap(&seq, 0x81, &bits);
	wrap(out, 0x30, &seq);
}

static void make_v1(wks_buf *out, const uint8_t *alg, size_t alg_len,
                    const uint8_t *priv, size_t priv_len, const uint8_t *pk,
                    size_t pk_len)
{
	make_v1_as(out, alg, alg_len, priv, priv_len, pk, pk_len, 0);
}

static int setup(void **state)
{
	wks_store *st = NULL;
	wks_key *k = NULL;
	uint8_t *file;
	size_t file_len, hdr, len, off;
	const uint8_t *d;
#ifdef WKS_CRYPTO_OPENSSL
	X509 *x = NULL;
	const ASN1_BIT_STRING *bs;
#endif
	wks_buf v1 = WKS_BUF_INIT, v1w = WKS_BUF_INIT;

	(void)state;
	file = tu_read_file(tu_shared("vectors/wolfjce/client-mldsa44.wks"),
	                    &file_len);
	TU_OK(wks_store_new(&st));
	/* Without the store password: the entry MAC still checks the key,
	 * and one PBKDF2 at 210000 iterations is saved. */
	TU_OK(wks_store_load_buffer(st, file, file_len, NULL, 0));
	TU_OK(wks_store_get_key(&k, st, "client-mldsa44", VPW, strlen(VPW)));
	d = wks_key_data(k, &g_v0_len);
	g_v0 = malloc(g_v0_len);
	memcpy(g_v0, d, g_v0_len);
	wks_key_free(k);
	TU_OK(wks_store_get_cert_der(&g_cert, &g_cert_len, st, "client-mldsa44",
	                             0));
#ifdef WKS_CRYPTO_OPENSSL
	TU_OK(wks_store_get_cert(&x, st, "client-mldsa44", 0));
	bs = X509_get0_pubkey_bitstr(x);
	g_pk_len = (size_t)ASN1_STRING_length(bs);
	assert_int_equal(g_pk_len, 1312);
	g_pk = malloc(g_pk_len);
	memcpy(g_pk, ASN1_STRING_get0_data(bs), g_pk_len);
	X509_free(x);
#else
	{
		/* The SubjectPublicKeyInfo's BIT STRING, by hand: Certificate
		 * > tbsCertificate > [0] version, serial, signature, issuer,
		 * validity, subject, spki > { alg, BIT STRING }. */
		const uint8_t *q = g_cert;
		size_t h, l, i;

		tlv(q, &h, &l);
		q += h; /* into Certificate */
		tlv(q, &h, &l);
		q += h; /* into tbsCertificate */
		for (i = 0; i < 7; i++) {
			tlv(q, &h, &l);
			if (i == 0 && q[0] != 0xa0)
				i++; /* no version */
			if (i < 6 || (i == 6 && q[0] != 0x30))
				q += h + l;
		}
		assert_int_equal(q[0], 0x30); /* spki */
		tlv(q, &h, &l);
		q += h;
		tlv(q, &h, &l);
		q += h + l; /* past the AlgorithmIdentifier */
		assert_int_equal(q[0], 0x03);
		tlv(q, &h, &l);
		g_pk_len = l - 1;
		assert_int_equal(g_pk_len, 1312);
		g_pk = malloc(g_pk_len);
		memcpy(g_pk, q + h + 1, g_pk_len);
	}
#endif
	wks_store_free(st);
	free(file);

	/* v0: 30 82 LL LL | 02 01 00 | 30 0b 06 09 OID | 04 82 LL LL priv */
	assert_int_equal(g_v0_len, 2626);
	tlv(g_v0, &hdr, &len);
	assert_int_equal(hdr + len, g_v0_len);
	off = hdr;
	assert_memory_equal(g_v0 + off, "\x02\x01\x00", 3);
	off += 3;
	tlv(g_v0 + off, &hdr, &len);
	g_alg_tlv_len = hdr + len;
	memcpy(g_alg_tlv, g_v0 + off, g_alg_tlv_len);
	off += g_alg_tlv_len;
	tlv(g_v0 + off, &hdr, &len);
	g_priv_tlv_len = hdr + len;
	assert_int_equal(off + g_priv_tlv_len, g_v0_len);
	memcpy(g_priv_tlv, g_v0 + off, g_priv_tlv_len);

	make_v1(&v1, g_alg_tlv, g_alg_tlv_len, g_priv_tlv, g_priv_tlv_len, g_pk,
	        g_pk_len);
	g_v1 = v1.ptr;
	g_v1_len = v1.len;
	assert_int_equal(g_v1_len, g_v0_len + 1317); /* 81 82 05 21 00 pk */
	make_v1_as(&v1w, g_alg_tlv, g_alg_tlv_len, g_priv_tlv, g_priv_tlv_len,
	           g_pk, g_pk_len, 1);
	g_v1w = v1w.ptr;
	g_v1w_len = v1w.len;
	assert_int_equal(g_v1w_len, g_v0_len + 1316); /* 81 82 05 20 pk */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(g_v0);
	free(g_v1);
	free(g_v1w);
	wks_free(g_cert);
	free(g_pk);
	return 0;
}

/* set_private_key of one key and one certificate in a fast store. */
static int set_one(wks_store *st, const char *alias, const uint8_t *key,
                   size_t key_len, const uint8_t *cert, size_t cert_len)
{
	const uint8_t *c[1] = { cert };
	size_t l[1] = { cert_len };

	return wks_store_set_private_key(st, alias, key, key_len, c, l, 1, KP,
	                                 strlen(KP));
}

/* The same with a built certificate. */
static int set_built(wks_store *st, const uint8_t *key, size_t key_len,
                     const uint8_t *oid, size_t oid_len,
                     const uint8_t *params, size_t params_len,
                     const uint8_t *pk, size_t pk_len)
{
	wks_buf cert = WKS_BUF_INIT;
	int rc;

	make_cert(&cert, oid, oid_len, params, params_len, pk, pk_len);
	rc = set_one(st, "k", key, key_len, cert.ptr, cert.len);
	wks_buf_dispose(&cert);
	return rc;
}

/* Save, load into a fresh store, and check that get_key gives `want`
 * for `alias`, named `alg`. */
static void check_round_trip(wks_store *st, const char *alias,
                             const uint8_t *want, size_t want_len,
                             const char *alg)
{
	wks_store *st2 = NULL;
	wks_key *k = NULL;
	uint8_t *file = NULL;
	size_t file_len = 0, len;
	const uint8_t *d;

	TU_OK(wks_store_save_buffer(st, &file, &file_len, PW, strlen(PW)));
	TU_OK(wks_store_new(&st2));
	TU_OK(wks_store_load_buffer(st2, file, file_len, PW, strlen(PW)));
	TU_OK(wks_store_get_key(&k, st2, alias, KP, strlen(KP)));
	assert_int_equal(wks_key_type(k), WKS_ENTRY_PRIVATE_KEY);
	assert_string_equal(wks_key_algorithm(k), alg);
	d = wks_key_data(k, &len);
	assert_int_equal(len, want_len);
	assert_memory_equal(d, want, len);
	wks_key_free(k);
	wks_free(file);
	wks_store_free(st2);
}

#ifdef WKS_CRYPTO_OPENSSL
static int openssl_has(const char *alg)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, alg, NULL);

	EVP_PKEY_CTX_free(c);
	return c != NULL;
}
#endif

/* ---- ML-DSA ------------------------------------------------------------ */

static void test_pqc__mldsa_v0_v1_round_trip(void **state)
{
	wks_store *st = tu_store_fast();
#ifdef WKS_CRYPTO_OPENSSL
	EVP_PKEY *pk = NULL;
#endif

	(void)state;
	TU_OK(set_one(st, "v0", g_v0, g_v0_len, g_cert, g_cert_len));
	TU_OK(set_one(st, "v1", g_v1, g_v1_len, g_cert, g_cert_len));
	TU_OK(set_one(st, "v1w", g_v1w, g_v1w_len, g_cert, g_cert_len));
	check_round_trip(st, "v0", g_v0, g_v0_len, "ML-DSA-44");
	check_round_trip(st, "v1", g_v1, g_v1_len, "ML-DSA-44");
	check_round_trip(st, "v1w", g_v1w, g_v1w_len, "ML-DSA-44");
#ifdef WKS_CRYPTO_OPENSSL
	if (!openssl_has("ML-DSA-44")) {
		/* OpenSSL 3.0: no EVP_PKEY; "unsupported", not "malformed". */
		TU_EXPECT(WKS_ERR_UNSUPPORTED,
		          wks_store_get_pkey(&pk, st, "v0", KP, strlen(KP)));
		TU_EXPECT(WKS_ERR_UNSUPPORTED,
		          wks_store_get_pkey(&pk, st, "v1", KP, strlen(KP)));
		assert_null(pk);
	}
#endif
	wks_store_free(st);
}

static void test_pqc__mldsa_match_rules(void **state)
{
	wks_store *st = tu_store_fast();
	uint8_t *pk2 = malloc(g_pk_len);
	wks_buf v1bad = WKS_BUF_INIT, seed_only = WKS_BUF_INIT,
	        seed_v1 = WKS_BUF_INIT, exp_only = WKS_BUF_INIT, tmp = WKS_BUF_INIT;
	const uint8_t *seed, *expanded;
	size_t hdr, len;

	(void)state;
	memcpy(pk2, g_pk, g_pk_len);
	pk2[700] ^= 0x01;

	/* The certificate as built, without parameters: the baseline. */
	TU_OK(set_built(st, g_v0, g_v0_len, OID_MLDSA44, sizeof(OID_MLDSA44),
	                NULL, 0, g_pk, g_pk_len));
	TU_OK(set_built(st, g_v1, g_v1_len, OID_MLDSA44, sizeof(OID_MLDSA44),
	                NULL, 0, g_pk, g_pk_len));
	/* An explicit NULL parameter is stripped (wolfJCE). */
	TU_OK(set_built(st, g_v0, g_v0_len, OID_MLDSA44, sizeof(OID_MLDSA44),
	                NULL_PARAM, sizeof(NULL_PARAM), g_pk, g_pk_len));
	TU_OK(set_built(st, g_v1, g_v1_len, OID_MLDSA44, sizeof(OID_MLDSA44),
	                NULL_PARAM, sizeof(NULL_PARAM), g_pk, g_pk_len));
	TU_OK(set_built(st, g_v1w, g_v1w_len, OID_MLDSA44, sizeof(OID_MLDSA44),
	                NULL_PARAM, sizeof(NULL_PARAM), g_pk, g_pk_len));
	/* Other parameters are not. */
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, g_v0, g_v0_len, OID_MLDSA44, sizeof(OID_MLDSA44),
	                    OTHER_PARAM, sizeof(OTHER_PARAM), g_pk, g_pk_len));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, g_v1, g_v1_len, OID_MLDSA44, sizeof(OID_MLDSA44),
	                    OTHER_PARAM, sizeof(OTHER_PARAM), g_pk, g_pk_len));
	/* The same bytes under another algorithm's OID. */
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, g_v0, g_v0_len, OID_MLDSA65, sizeof(OID_MLDSA65),
	                    NULL, 0, g_pk, g_pk_len));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, g_v1, g_v1_len, OID_MLDSA65, sizeof(OID_MLDSA65),
	                    NULL, 0, g_pk, g_pk_len));
	/* Another public key in the certificate. */
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, g_v0, g_v0_len, OID_MLDSA44, sizeof(OID_MLDSA44),
	                    NULL, 0, pk2, g_pk_len));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, g_v1, g_v1_len, OID_MLDSA44, sizeof(OID_MLDSA44),
	                    NULL, 0, pk2, g_pk_len));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, g_v1w, g_v1w_len, OID_MLDSA44,
	                    sizeof(OID_MLDSA44), NULL, 0, pk2, g_pk_len));
	/* A version 1 key whose attached public key is not the certificate's
	 * (nor its own: the expanded key names the real one). */
	make_v1(&v1bad, g_alg_tlv, g_alg_tlv_len, g_priv_tlv, g_priv_tlv_len,
	        pk2, g_pk_len);
	TU_EXPECT(WKS_ERR_INVALID, set_one(st, "k", v1bad.ptr, v1bad.len, g_cert,
	                                   g_cert_len));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, v1bad.ptr, v1bad.len, OID_MLDSA44,
	                    sizeof(OID_MLDSA44), NULL, 0, pk2, g_pk_len));

	/* The other shapes of the private key: 30 { 04 seed, 04 expanded }
	 * split up.  priv TLV = 04 82 LL LL 30 82 LL LL 04 20 seed 04 82 0a 00
	 * expanded. */
	tlv(g_priv_tlv, &hdr, &len);
	tlv(g_priv_tlv + hdr, &hdr, &len);
	seed = g_priv_tlv + 4 + 4 + 2;
	expanded = seed + 32 + 4;
	assert_memory_equal(seed - 2, "\x04\x20", 2);
	assert_memory_equal(expanded - 4, "\x04\x82\x0a\x00", 4);
	/* expandedKey only (04 ...): checked by rho and tr. */
	put(&tmp, "\x02\x01\x00", 3);
	put(&tmp, g_alg_tlv, g_alg_tlv_len);
	{
		wks_buf inner = WKS_BUF_INIT;

		put_tlv(&inner, 0x04, expanded, 2560);
		wrap(&tmp, 0x04, &inner);
	}
	wrap(&exp_only, 0x30, &tmp);
	TU_OK(set_one(st, "k", exp_only.ptr, exp_only.len, g_cert, g_cert_len));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, exp_only.ptr, exp_only.len, OID_MLDSA44,
	                    sizeof(OID_MLDSA44), NULL, 0, pk2, g_pk_len));
	/* seed only (80 20 seed): without ML-DSA arithmetic it cannot be
	 * checked, unless the public key is attached. */
	{
		uint8_t priv_tlv[36] = { 0x04, 0x22, 0x80, 0x20 };

		memcpy(priv_tlv + 4, seed, 32);
		put(&tmp, "\x02\x01\x00", 3);
		put(&tmp, g_alg_tlv, g_alg_tlv_len);
		put(&tmp, priv_tlv, sizeof(priv_tlv));
		wrap(&seed_only, 0x30, &tmp);
		make_v1(&seed_v1, g_alg_tlv, g_alg_tlv_len, priv_tlv,
		        sizeof(priv_tlv), g_pk, g_pk_len);
	}
	TU_EXPECT(WKS_ERR_UNSUPPORTED, set_one(st, "k", seed_only.ptr,
	                                       seed_only.len, g_cert, g_cert_len));
	TU_OK(set_one(st, "k", seed_v1.ptr, seed_v1.len, g_cert, g_cert_len));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, seed_v1.ptr, seed_v1.len, OID_MLDSA44,
	                    sizeof(OID_MLDSA44), NULL, 0, pk2, g_pk_len));
	/* A broken attached public key is malformed input. */
	{
		wks_buf bad = WKS_BUF_INIT;

		make_v1(&bad, g_alg_tlv, g_alg_tlv_len, g_priv_tlv, g_priv_tlv_len,
		        g_pk, 100);
		TU_EXPECT(WKS_ERR_FORMAT, set_one(st, "k", bad.ptr, bad.len, g_cert,
		                                  g_cert_len));
		wks_buf_dispose(&bad);
	}
	wks_buf_dispose(&v1bad);
	wks_buf_dispose(&seed_only);
	wks_buf_dispose(&seed_v1);
	wks_buf_dispose(&exp_only);
	free(pk2);
	wks_store_free(st);
}

/* ---- SLH-DSA ----------------------------------------------------------- */

/* PKCS#8 version 0 (or 1 with `pk` attached) of an SLH-DSA key. */
static void make_slh(wks_buf *out, const uint8_t *oid, size_t oid_len,
                     const uint8_t *sk, size_t sk_len, const uint8_t *pk,
                     size_t pk_len)
{
	wks_buf alg = WKS_BUF_INIT, a = WKS_BUF_INIT, p = WKS_BUF_INIT,
	        seq = WKS_BUF_INIT;

	put(&alg, oid, oid_len);
	wrap(&a, 0x30, &alg);
	put_tlv(&p, 0x04, sk, sk_len);
	if (pk) {
		make_v1(out, a.ptr, a.len, p.ptr, p.len, pk, pk_len);
	} else {
		put(&seq, "\x02\x01\x00", 3);
		put(&seq, a.ptr, a.len);
		put(&seq, p.ptr, p.len);
		wrap(out, 0x30, &seq);
	}
	wks_buf_dispose(&a);
	wks_buf_dispose(&p);
}

static void test_pqc__slhdsa(void **state)
{
	wks_store *st = tu_store_fast();
	uint8_t sk[128], pk2[32];
	wks_buf v0 = WKS_BUF_INIT, v1 = WKS_BUF_INIT, v1bad = WKS_BUF_INIT,
	        short_sk = WKS_BUF_INIT, big = WKS_BUF_INIT;
	const uint8_t *pk = sk + 32;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sk); i++)
		sk[i] = (uint8_t)i;
	memcpy(pk2, pk, 32);
	pk2[31] ^= 0x80;
	make_slh(&v0, OID_SLH128S, sizeof(OID_SLH128S), sk, 64, NULL, 0);
	make_slh(&v1, OID_SLH128S, sizeof(OID_SLH128S), sk, 64, pk, 32);
	make_slh(&v1bad, OID_SLH128S, sizeof(OID_SLH128S), sk, 64, pk2, 32);
	make_slh(&short_sk, OID_SLH128S, sizeof(OID_SLH128S), sk, 63, NULL, 0);

	TU_OK(set_built(st, v0.ptr, v0.len, OID_SLH128S, sizeof(OID_SLH128S),
	                NULL, 0, pk, 32));
	TU_OK(set_built(st, v1.ptr, v1.len, OID_SLH128S, sizeof(OID_SLH128S),
	                NULL, 0, pk, 32));
	TU_OK(set_built(st, v0.ptr, v0.len, OID_SLH128S, sizeof(OID_SLH128S),
	                NULL_PARAM, sizeof(NULL_PARAM), pk, 32));
	check_round_trip(st, "k", v0.ptr, v0.len, "SLH-DSA");
	TU_OK(set_built(st, v1.ptr, v1.len, OID_SLH128S, sizeof(OID_SLH128S),
	                NULL_PARAM, sizeof(NULL_PARAM), pk, 32));
	check_round_trip(st, "k", v1.ptr, v1.len, "SLH-DSA");

	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, v0.ptr, v0.len, OID_SLH128S, sizeof(OID_SLH128S),
	                    OTHER_PARAM, sizeof(OTHER_PARAM), pk, 32));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, v0.ptr, v0.len, OID_SLH128F, sizeof(OID_SLH128F),
	                    NULL, 0, pk, 32));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, v0.ptr, v0.len, OID_SLH128S, sizeof(OID_SLH128S),
	                    NULL, 0, pk2, 32));
	/* The first half of the key is not its public key. */
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, v0.ptr, v0.len, OID_SLH128S, sizeof(OID_SLH128S),
	                    NULL, 0, sk, 32));
	/* An attached public key that is not the key's own. */
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, v1bad.ptr, v1bad.len, OID_SLH128S,
	                    sizeof(OID_SLH128S), NULL, 0, pk2, 32));
	TU_EXPECT(WKS_ERR_FORMAT,
	          set_built(st, short_sk.ptr, short_sk.len, OID_SLH128S,
	                    sizeof(OID_SLH128S), NULL, 0, pk, 32));
	/* n = 32: SLH-DSA-SHAKE-256s, 128-byte key, pk = its last 64. */
	make_slh(&big, OID_SLHSHAKE256S, sizeof(OID_SLHSHAKE256S), sk, 128, NULL,
	         0);
	TU_OK(set_built(st, big.ptr, big.len, OID_SLHSHAKE256S,
	                sizeof(OID_SLHSHAKE256S), NULL, 0, sk + 64, 64));
	TU_EXPECT(WKS_ERR_INVALID,
	          set_built(st, big.ptr, big.len, OID_SLHSHAKE256S,
	                    sizeof(OID_SLHSHAKE256S), NULL, 0, sk + 32, 64));
	wks_buf_dispose(&v0);
	wks_buf_dispose(&v1);
	wks_buf_dispose(&v1bad);
	wks_buf_dispose(&short_sk);
	wks_buf_dispose(&big);
	wks_store_free(st);
}

/* Every truncation of a version 1 key, and of a certificate built for
 * SLH-DSA, is malformed input (never accepted, never a crash); every
 * length under valgrind would take minutes, so it samples then. */
static void test_pqc__truncated(void **state)
{
	wks_store *st = tu_store_fast();
	wks_buf cert = WKS_BUF_INIT, slh = WKS_BUF_INIT;
	uint8_t sk[64];
	size_t n, step = getenv("WKS_UNDER_VALGRIND") ? 53 : 1;
	int rc;

	(void)state;
	for (n = 0; n < sizeof(sk); n++)
		sk[n] = (uint8_t)(0xa5 ^ n);
	for (n = 1; n < g_v1w_len; n += step) {
		rc = set_one(st, "k", g_v1w, n, g_cert, g_cert_len);
		if (rc != WKS_ERR_FORMAT)
			fail_msg("key truncated to %zu bytes: %d (%s)", n, rc,
			         wks_error_detail());
	}
	make_slh(&slh, OID_SLH128S, sizeof(OID_SLH128S), sk, 64, sk + 32, 32);
	make_cert(&cert, OID_SLH128S, sizeof(OID_SLH128S), NULL, 0, sk + 32, 32);
	for (n = 1; n < cert.len; n++) {
		rc = set_one(st, "k", slh.ptr, slh.len, cert.ptr, n);
		if (rc != WKS_ERR_FORMAT)
			fail_msg("certificate truncated to %zu bytes: %d (%s)", n, rc,
			         wks_error_detail());
	}
	for (n = 1; n < slh.len; n++) {
		rc = set_one(st, "k", slh.ptr, n, cert.ptr, cert.len);
		if (rc != WKS_ERR_FORMAT)
			fail_msg("SLH-DSA key truncated to %zu bytes: %d (%s)", n, rc,
			         wks_error_detail());
	}
	assert_int_equal(wks_store_size(st), 0);
	TU_OK(set_one(st, "k", slh.ptr, slh.len, cert.ptr, cert.len));
	wks_buf_dispose(&cert);
	wks_buf_dispose(&slh);
	wks_store_free(st);
}

/* ---- wksdump.py, both directions -------------------------------------- */

static cJSON *entry_of(cJSON *file, const char *alias)
{
	cJSON *e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItem(file, "entries")) {
		cJSON *a = cJSON_GetObjectItem(e, "alias");

		if (cJSON_IsString(a) && strcmp(a->valuestring, alias) == 0)
			return e;
	}
	fail_msg("no entry \"%s\" in wksdump's output", alias);
	return NULL;
}

static void check_dumped(cJSON *file, const char *alias, const uint8_t *der,
                         size_t len, int version)
{
	cJSON *e = entry_of(file, alias), *k = cJSON_GetObjectItem(e, "key");
	char sha[65];

	tu_sha256_hex(sha, der, len);
	assert_string_equal(cJSON_GetObjectItem(e, "key_status")->valuestring,
	                    "ok");
	assert_string_equal(cJSON_GetObjectItem(k, "plaintext_sha256")->valuestring,
	                    sha);
	assert_int_equal(cJSON_GetObjectItem(k, "pkcs8_version")->valueint,
	                 version);
	assert_string_equal(cJSON_GetObjectItem(k, "algorithm")->valuestring,
	                    "ML-DSA-44");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(e,
	                    "key_matches_leaf"), "result")->valuestring, "match");
}

static void test_pqc__wksdump_both_ways(void **state)
{
	char *dir = tu_tmpdir(), path[4096], v0p[4096], cp[4096], out[4096];
	wks_store *st = tu_store_fast();
	uint8_t *file = NULL;
	size_t file_len = 0, len;
	wks_key *k = NULL;
	const uint8_t *d;
	cJSON *j;

	(void)state;
	if (tu_system("python3 -c 'import cryptography' >/dev/null 2>&1") != 0)
		fail_msg("python3 with the cryptography package is required");
	/* libwks writes, wksdump reads (MACs, decryption, key vs leaf). */
	TU_OK(set_one(st, "v0", g_v0, g_v0_len, g_cert, g_cert_len));
	TU_OK(set_one(st, "v1", g_v1, g_v1_len, g_cert, g_cert_len));
	TU_OK(set_one(st, "v1w", g_v1w, g_v1w_len, g_cert, g_cert_len));
	TU_OK(wks_store_save_buffer(st, &file, &file_len, PW, strlen(PW)));
	snprintf(path, sizeof(path), "%s/libwks.wks", dir);
	tu_write_file(path, file, file_len);
	snprintf(out, sizeof(out), "%s/dump.json", dir);
	assert_int_equal(tu_system("python3 %s/tools/wksdump.py dump --password "
	                           "%s --key-password %s %s > %s", WKS_SHARED_DIR,
	                           PW, KP, path, out), 0);
	j = tu_json_file(out);
	{
		cJSON *f = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "files"),
		                               "libwks.wks");

		assert_non_null(f);
		check_dumped(f, "v0", g_v0, g_v0_len, 0);
		check_dumped(f, "v1", g_v1, g_v1_len, 1);
		check_dumped(f, "v1w", g_v1w, g_v1w_len, 1);
	}
	cJSON_Delete(j);
	wks_free(file);
	wks_store_free(st);

	/* wksdump writes (its own key/leaf check on), libwks reads. */
	{
		static const char *const names[3] = { "v0", "v1", "v1w" };
		const uint8_t *keys[3] = { g_v0, g_v1, g_v1w };
		size_t lens[3] = { g_v0_len, g_v1_len, g_v1w_len }, i;
		char args[3][8300];

		snprintf(cp, sizeof(cp), "%s/cert.der", dir);
		tu_write_file(cp, g_cert, g_cert_len);
		for (i = 0; i < 3; i++) {
			snprintf(v0p, sizeof(v0p), "%s/%s.der", dir, names[i]);
			tu_write_file(v0p, keys[i], lens[i]);
			snprintf(args[i], sizeof(args[i]), "--key %s %s %s", names[i],
			         v0p, cp);
		}
		snprintf(path, sizeof(path), "%s/wksdump.wks", dir);
		assert_int_equal(tu_system("python3 %s/tools/wksdump.py write %s "
		                           "--password %s --key-password %s "
		                           "--iterations 10000 %s %s %s > %s",
		                           WKS_SHARED_DIR, path, PW, KP, args[0],
		                           args[1], args[2], out), 0);
		TU_OK(wks_store_new(&st));
		TU_OK(wks_store_load_file(st, path, PW, strlen(PW)));
		for (i = 0; i < 3; i++) {
			TU_OK(wks_store_get_key(&k, st, names[i], KP, strlen(KP)));
			d = wks_key_data(k, &len);
			assert_string_equal(wks_key_algorithm(k), "ML-DSA-44");
			assert_int_equal(len, lens[i]);
			assert_memory_equal(d, keys[i], len);
			wks_key_free(k);
			k = NULL;
		}
		wks_store_free(st);
	}
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pqc__mldsa_v0_v1_round_trip),
		cmocka_unit_test(test_pqc__mldsa_match_rules),
		cmocka_unit_test(test_pqc__slhdsa),
		cmocka_unit_test(test_pqc__truncated),
		cmocka_unit_test(test_pqc__wksdump_both_ways),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
