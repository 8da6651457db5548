/*
 * The mechanism table: every mechanism the module offers, the key type
 * it takes, its key sizes and CK_MECHANISM_INFO flags, the digest of a
 * combined mechanism, and whether it has a multi-part form.
 * C_GetMechanismList and C_GetMechanismInfo answer from this table
 * alone, and every operation looks its mechanism up here, so what the
 * module says it does is what it does.
 *
 * Also the OpenSSL algorithms the operations use, fetched once from the
 * module's own library context (w11_libctx) and kept until C_Finalize.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "p11.h"

#define EC_FLAGS (CKF_EC_F_P | CKF_EC_NAMEDCURVE | CKF_EC_UNCOMPRESS)
#define SV (CKF_SIGN | CKF_VERIFY)
#define ED (CKF_ENCRYPT | CKF_DECRYPT)
#define WU (CKF_WRAP | CKF_UNWRAP)

static const w11_mech mechs[] = {
	/* RSA */
	{ CKM_RSA_PKCS_KEY_PAIR_GEN, W11_K_GEN_RSA, CKK_RSA, 1024, 16384,
	  CKF_GENERATE_KEY_PAIR, NULL, 0 },
	{ CKM_RSA_PKCS, W11_K_RSA_PKCS, CKK_RSA, 1024, 16384, SV | ED, NULL,
	  0 },
	{ CKM_RSA_PKCS_PSS, W11_K_RSA_PSS, CKK_RSA, 1024, 16384, SV, NULL, 0 },
	{ CKM_RSA_PKCS_OAEP, W11_K_RSA_OAEP, CKK_RSA, 1024, 16384, ED, NULL,
	  0 },
	{ CKM_SHA1_RSA_PKCS, W11_K_RSA_PKCS, CKK_RSA, 1024, 16384, SV, "SHA1",
	  1 },
	{ CKM_SHA224_RSA_PKCS, W11_K_RSA_PKCS, CKK_RSA, 1024, 16384, SV,
	  "SHA224", 1 },
	{ CKM_SHA256_RSA_PKCS, W11_K_RSA_PKCS, CKK_RSA, 1024, 16384, SV,
	  "SHA256", 1 },
	{ CKM_SHA384_RSA_PKCS, W11_K_RSA_PKCS, CKK_RSA, 1024, 16384, SV,
	  "SHA384", 1 },
	{ CKM_SHA512_RSA_PKCS, W11_K_RSA_PKCS, CKK_RSA, 1024, 16384, SV,
	  "SHA512", 1 },
	{ CKM_SHA1_RSA_PKCS_PSS, W11_K_RSA_PSS, CKK_RSA, 1024, 16384, SV,
	  "SHA1", 1 },
	{ CKM_SHA224_RSA_PKCS_PSS, W11_K_RSA_PSS, CKK_RSA, 1024, 16384, SV,
	  "SHA224", 1 },
	{ CKM_SHA256_RSA_PKCS_PSS, W11_K_RSA_PSS, CKK_RSA, 1024, 16384, SV,
	  "SHA256", 1 },
	{ CKM_SHA384_RSA_PKCS_PSS, W11_K_RSA_PSS, CKK_RSA, 1024, 16384, SV,
	  "SHA384", 1 },
	{ CKM_SHA512_RSA_PKCS_PSS, W11_K_RSA_PSS, CKK_RSA, 1024, 16384, SV,
	  "SHA512", 1 },
	/* EC */
	{ CKM_EC_KEY_PAIR_GEN, W11_K_GEN_EC, CKK_EC, 256, 521,
	  CKF_GENERATE_KEY_PAIR | EC_FLAGS, NULL, 0 },
	{ CKM_ECDSA, W11_K_ECDSA, CKK_EC, 256, 521, SV | EC_FLAGS, NULL, 0 },
	{ CKM_ECDSA_SHA1, W11_K_ECDSA, CKK_EC, 256, 521, SV | EC_FLAGS, "SHA1",
	  1 },
	{ CKM_ECDSA_SHA224, W11_K_ECDSA, CKK_EC, 256, 521, SV | EC_FLAGS,
	  "SHA224", 1 },
	{ CKM_ECDSA_SHA256, W11_K_ECDSA, CKK_EC, 256, 521, SV | EC_FLAGS,
	  "SHA256", 1 },
	{ CKM_ECDSA_SHA384, W11_K_ECDSA, CKK_EC, 256, 521, SV | EC_FLAGS,
	  "SHA384", 1 },
	{ CKM_ECDSA_SHA512, W11_K_ECDSA, CKK_EC, 256, 521, SV | EC_FLAGS,
	  "SHA512", 1 },
	{ CKM_ECDH1_DERIVE, W11_K_ECDH, CKK_EC, 256, 521,
	  CKF_DERIVE | EC_FLAGS, NULL, 0 },
	/* the same on P-256/384/521, whose cofactor is 1 */
	{ CKM_ECDH1_COFACTOR_DERIVE, W11_K_ECDH, CKK_EC, 256, 521,
	  CKF_DERIVE | EC_FLAGS, NULL, 0 },
	/* Edwards curves */
	{ CKM_EC_EDWARDS_KEY_PAIR_GEN, W11_K_GEN_ED, CKK_EC_EDWARDS, 255, 448,
	  CKF_GENERATE_KEY_PAIR, NULL, 0 },
	{ CKM_EDDSA, W11_K_EDDSA, CKK_EC_EDWARDS, 255, 448, SV, NULL, 1 },
	/* AES (key sizes in bytes) */
	{ CKM_AES_KEY_GEN, W11_K_GEN_AES, CKK_AES, 16, 32, CKF_GENERATE, NULL,
	  0 },
	{ CKM_AES_ECB, W11_K_AES_ECB, CKK_AES, 16, 32, ED, NULL, 1 },
	{ CKM_AES_CBC, W11_K_AES_CBC, CKK_AES, 16, 32, ED, NULL, 1 },
	{ CKM_AES_CBC_PAD, W11_K_AES_CBC_PAD, CKK_AES, 16, 32, ED, NULL, 1 },
	{ CKM_AES_CTR, W11_K_AES_CTR, CKK_AES, 16, 32, ED, NULL, 1 },
	{ CKM_AES_GCM, W11_K_AES_GCM, CKK_AES, 16, 32, ED, NULL, 1 },
	/* key wrap (RFC 3394, RFC 5649): C_WrapKey/C_UnwrapKey of secret
	 * keys, and single-part C_Encrypt/C_Decrypt */
	{ CKM_AES_KEY_WRAP, W11_K_AES_KW, CKK_AES, 16, 32, WU | ED, NULL, 0 },
	{ CKM_AES_KEY_WRAP_PAD, W11_K_AES_KWP, CKK_AES, 16, 32, WU | ED, NULL,
	  0 },
	{ CKM_AES_CMAC, W11_K_CMAC, CKK_AES, 16, 32, SV, NULL, 1 },
	{ CKM_AES_CMAC_GENERAL, W11_K_CMAC, CKK_AES, 16, 32, SV, NULL, 1 },
	/* Triple DES: three-key only (24 bytes with their parity bits) */
	{ CKM_DES3_KEY_GEN, W11_K_GEN_DES3, CKK_DES3, 24, 24, CKF_GENERATE,
	  NULL, 0 },
	{ CKM_DES3_ECB, W11_K_AES_ECB, CKK_DES3, 24, 24, ED, NULL, 1 },
	{ CKM_DES3_CBC, W11_K_AES_CBC, CKK_DES3, 24, 24, ED, NULL, 1 },
	{ CKM_DES3_CBC_PAD, W11_K_AES_CBC_PAD, CKK_DES3, 24, 24, ED, NULL, 1 },
	/* generic secrets and HMAC (bytes) */
	{ CKM_GENERIC_SECRET_KEY_GEN, W11_K_GEN_GENERIC, CKK_GENERIC_SECRET, 1,
	  512, CKF_GENERATE, NULL, 0 },
	{ CKM_SHA256_HMAC, W11_K_HMAC, CKK_GENERIC_SECRET, 1, 512, SV,
	  "SHA256", 1 },
	{ CKM_SHA384_HMAC, W11_K_HMAC, CKK_GENERIC_SECRET, 1, 512, SV,
	  "SHA384", 1 },
	{ CKM_SHA512_HMAC, W11_K_HMAC, CKK_GENERIC_SECRET, 1, 512, SV,
	  "SHA512", 1 },
	/* HKDF (RFC 5869) on generic secret and CKK_HKDF keys (bytes) */
	{ CKM_HKDF_KEY_GEN, W11_K_GEN_GENERIC, CKK_HKDF, 1, 512, CKF_GENERATE,
	  NULL, 0 },
	{ CKM_HKDF_DERIVE, W11_K_HKDF, CKK_GENERIC_SECRET, 1, 512, CKF_DERIVE,
	  NULL, 0 },
	{ CKM_HKDF_DATA, W11_K_HKDF, CKK_GENERIC_SECRET, 1, 512, CKF_DERIVE,
	  NULL, 0 },
	/* digests */
	{ CKM_SHA_1, W11_K_DIGEST, CKK_VENDOR_DEFINED, 0, 0, CKF_DIGEST,
	  "SHA1", 1 },
	{ CKM_SHA224, W11_K_DIGEST, CKK_VENDOR_DEFINED, 0, 0, CKF_DIGEST,
	  "SHA224", 1 },
	{ CKM_SHA256, W11_K_DIGEST, CKK_VENDOR_DEFINED, 0, 0, CKF_DIGEST,
	  "SHA256", 1 },
	{ CKM_SHA384, W11_K_DIGEST, CKK_VENDOR_DEFINED, 0, 0, CKF_DIGEST,
	  "SHA384", 1 },
	{ CKM_SHA512, W11_K_DIGEST, CKK_VENDOR_DEFINED, 0, 0, CKF_DIGEST,
	  "SHA512", 1 },
};

#define NMECHS (sizeof(mechs) / sizeof(mechs[0]))

const w11_mech *w11_mech_find(CK_MECHANISM_TYPE t)
{
	for (size_t i = 0; i < NMECHS; i++)
		if (mechs[i].type == t)
			return &mechs[i];
	return NULL;
}

size_t w11_mech_count(void)
{
	return NMECHS;
}

const w11_mech *w11_mech_at(size_t i)
{
	return i < NMECHS ? &mechs[i] : NULL;
}

int w11_mech_takes(const w11_mech *m, CK_KEY_TYPE kt)
{
	if (m->ktype == kt)
		return 1;
	/* HKDF takes its own key type as well as generic secrets */
	return m->kind == W11_K_HKDF && kt == CKK_HKDF;
}

int w11_secret_len_ok(CK_KEY_TYPE kt, size_t len)
{
	switch (kt) {
	case CKK_AES:
		return len == 16 || len == 24 || len == 32;
	case CKK_DES3:
		return len == 24;
	case CKK_GENERIC_SECRET:
	case CKK_HKDF:
		return len >= 1 && len <= 512;
	default:
		return 0;
	}
}

/* A WKS secret-key entry's algorithm is a JCA name. */
CK_KEY_TYPE w11_ktype_of_jca(const char *alg)
{
	if (strcasecmp(alg, "AES") == 0)
		return CKK_AES;
	if (strcasecmp(alg, "DESede") == 0 || strcasecmp(alg, "TripleDES") == 0)
		return CKK_DES3;
	return CKK_GENERIC_SECRET;
}

const char *w11_jca_of_ktype(CK_KEY_TYPE kt)
{
	switch (kt) {
	case CKK_AES:
		return "AES";
	case CKK_DES3:
		return "DESede";
	case CKK_GENERIC_SECRET:
		return "HmacSHA256"; /* Java's name for an HMAC key */
	default:
		return NULL; /* no JCA name: a session key only */
	}
}

void w11_des_parity(unsigned char *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned b = k[i] & 0xfe, ones = 0;

		for (unsigned v = b; v; v >>= 1)
			ones += v & 1;
		k[i] = (unsigned char)(b | !(ones & 1));
	}
}

/* ---- fetched algorithms ------------------------------------------------ */

static const char *const md_names[] = { "SHA1", "SHA224", "SHA256", "SHA384",
					"SHA512" };
#define NMDS (sizeof(md_names) / sizeof(md_names[0]))
static _Atomic(EVP_MD *) mds[NMDS];
static pthread_mutex_t fetch_lock = PTHREAD_MUTEX_INITIALIZER;

const EVP_MD *w11_md(const char *name)
{
	for (size_t i = 0; i < NMDS; i++) {
		EVP_MD *md;

		if (strcmp(name, md_names[i]) != 0)
			continue;
		if ((md = atomic_load(&mds[i])) != NULL)
			return md;
		pthread_mutex_lock(&fetch_lock);
		if (!(md = atomic_load(&mds[i])) &&
		    (md = EVP_MD_fetch(w11_libctx, name, NULL)) != NULL)
			atomic_store(&mds[i], md);
		pthread_mutex_unlock(&fetch_lock);
		return md;
	}
	return NULL;
}

int w11_digest(unsigned char *out, const char *name, const void *p, size_t n)
{
	const EVP_MD *md = w11_md(name);

	return md && EVP_Digest(p, n, out, NULL, md, NULL) == 1;
}

const EVP_MD *w11_md_of_ckm(CK_MECHANISM_TYPE t)
{
	switch (t) {
	case CKM_SHA_1:
		return w11_md("SHA1");
	case CKM_SHA224:
		return w11_md("SHA224");
	case CKM_SHA256:
		return w11_md("SHA256");
	case CKM_SHA384:
		return w11_md("SHA384");
	case CKM_SHA512:
		return w11_md("SHA512");
	default:
		return NULL;
	}
}

const EVP_MD *w11_md_of_mgf(CK_ULONG mgf)
{
	switch (mgf) {
	case CKG_MGF1_SHA1:
		return w11_md("SHA1");
	case CKG_MGF1_SHA224:
		return w11_md("SHA224");
	case CKG_MGF1_SHA256:
		return w11_md("SHA256");
	case CKG_MGF1_SHA384:
		return w11_md("SHA384");
	case CKG_MGF1_SHA512:
		return w11_md("SHA512");
	default:
		return NULL;
	}
}

static _Atomic(EVP_MAC *) hmac;

EVP_MAC *w11_hmac(void)
{
	EVP_MAC *m;

	if ((m = atomic_load(&hmac)) != NULL)
		return m;
	pthread_mutex_lock(&fetch_lock);
	if (!(m = atomic_load(&hmac)) &&
	    (m = EVP_MAC_fetch(w11_libctx, "HMAC", NULL)) != NULL)
		atomic_store(&hmac, m);
	pthread_mutex_unlock(&fetch_lock);
	return m;
}

/* The block ciphers, by name, fetched once per initialisation. */
static const char *const cipher_names[] = {
	"AES-128-ECB", "AES-192-ECB", "AES-256-ECB",
	"AES-128-CBC", "AES-192-CBC", "AES-256-CBC",
	"AES-128-CTR", "AES-192-CTR", "AES-256-CTR",
	"AES-128-GCM", "AES-192-GCM", "AES-256-GCM",
	"AES-128-WRAP", "AES-192-WRAP", "AES-256-WRAP",
	"AES-128-WRAP-PAD", "AES-192-WRAP-PAD", "AES-256-WRAP-PAD",
	"DES-EDE3-ECB", "DES-EDE3-CBC",
};
#define NCIPHERS (sizeof(cipher_names) / sizeof(cipher_names[0]))
static _Atomic(EVP_CIPHER *) ciphers[NCIPHERS];

static const EVP_CIPHER *cipher_at(size_t i)
{
	EVP_CIPHER *c;

	if ((c = atomic_load(&ciphers[i])) != NULL)
		return c;
	pthread_mutex_lock(&fetch_lock);
	if (!(c = atomic_load(&ciphers[i])) &&
	    (c = EVP_CIPHER_fetch(w11_libctx, cipher_names[i], NULL)) != NULL)
		atomic_store(&ciphers[i], c);
	pthread_mutex_unlock(&fetch_lock);
	return c;
}

const EVP_CIPHER *w11_cipher(CK_KEY_TYPE kt, int kind, size_t key_len)
{
	int mode, size;

	if (kt == CKK_DES3) {
		if (key_len != 24)
			return NULL;
		switch (kind) {
		case W11_K_AES_ECB:
			return cipher_at(NCIPHERS - 2);
		case W11_K_AES_CBC:
		case W11_K_AES_CBC_PAD:
			return cipher_at(NCIPHERS - 1);
		default:
			return NULL;
		}
	}
	if (kt != CKK_AES)
		return NULL;
	switch (kind) {
	case W11_K_AES_ECB:
		mode = 0;
		break;
	case W11_K_AES_CBC:
	case W11_K_AES_CBC_PAD:
	case W11_K_CMAC: /* CMAC names its cipher in CBC mode */
		mode = 1;
		break;
	case W11_K_AES_CTR:
		mode = 2;
		break;
	case W11_K_AES_GCM:
		mode = 3;
		break;
	case W11_K_AES_KW:
		mode = 4;
		break;
	case W11_K_AES_KWP:
		mode = 5;
		break;
	default:
		return NULL;
	}
	if (key_len != 16 && key_len != 24 && key_len != 32)
		return NULL;
	size = key_len == 16 ? 0 : key_len == 24 ? 1 : 2;
	return cipher_at((size_t)(mode * 3 + size));
}

const EVP_CIPHER *w11_aes(int kind, size_t key_len)
{
	return w11_cipher(CKK_AES, kind, key_len);
}

/* MACs and KDFs by name: CMAC, HKDF, X963KDF */
static const char *const mac_names[] = { "CMAC" };
static _Atomic(EVP_MAC *) macs[1];
static const char *const kdf_names[] = { "HKDF", "X963KDF" };
static _Atomic(EVP_KDF *) kdfs[2];

EVP_MAC *w11_mac(const char *name)
{
	EVP_MAC *m;

	if (strcmp(name, "HMAC") == 0)
		return w11_hmac();
	if (strcmp(name, mac_names[0]) != 0)
		return NULL;
	if ((m = atomic_load(&macs[0])) != NULL)
		return m;
	pthread_mutex_lock(&fetch_lock);
	if (!(m = atomic_load(&macs[0])) &&
	    (m = EVP_MAC_fetch(w11_libctx, name, NULL)) != NULL)
		atomic_store(&macs[0], m);
	pthread_mutex_unlock(&fetch_lock);
	return m;
}

EVP_KDF *w11_kdf(const char *name)
{
	for (size_t i = 0; i < 2; i++) {
		EVP_KDF *k;

		if (strcmp(name, kdf_names[i]) != 0)
			continue;
		if ((k = atomic_load(&kdfs[i])) != NULL)
			return k;
		pthread_mutex_lock(&fetch_lock);
		if (!(k = atomic_load(&kdfs[i])) &&
		    (k = EVP_KDF_fetch(w11_libctx, name, NULL)) != NULL)
			atomic_store(&kdfs[i], k);
		pthread_mutex_unlock(&fetch_lock);
		return k;
	}
	return NULL;
}

/* Called by C_Finalize with no other thread in the module. */
void w11_mech_fini(void)
{
	for (size_t i = 0; i < NMDS; i++) {
		EVP_MD_free(atomic_load(&mds[i]));
		atomic_store(&mds[i], NULL);
	}
	EVP_MAC_free(atomic_load(&hmac));
	atomic_store(&hmac, NULL);
	for (size_t i = 0; i < NCIPHERS; i++) {
		EVP_CIPHER_free(atomic_load(&ciphers[i]));
		atomic_store(&ciphers[i], NULL);
	}
	EVP_MAC_free(atomic_load(&macs[0]));
	atomic_store(&macs[0], NULL);
	for (size_t i = 0; i < 2; i++) {
		EVP_KDF_free(atomic_load(&kdfs[i]));
		atomic_store(&kdfs[i], NULL);
	}
}

/* ---- C_GetMechanismList, C_GetMechanismInfo ------------------------------ */

CK_RV C_GetMechanismList(CK_SLOT_ID slot, CK_MECHANISM_TYPE_PTR list,
			 CK_ULONG_PTR n)
{
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if (!n) {
		rv = CKR_ARGUMENTS_BAD;
	} else if (!w11_slot_token(slot)) {
		rv = CKR_SLOT_ID_INVALID;
	} else if (!list) {
		*n = NMECHS;
	} else if (*n < NMECHS) {
		*n = NMECHS;
		rv = CKR_BUFFER_TOO_SMALL;
	} else {
		for (size_t i = 0; i < NMECHS; i++)
			list[i] = mechs[i].type;
		*n = NMECHS;
	}
	w11_leave();
	return rv;
}

CK_RV C_GetMechanismInfo(CK_SLOT_ID slot, CK_MECHANISM_TYPE type,
			 CK_MECHANISM_INFO_PTR info)
{
	const w11_mech *m;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if (!info) {
		rv = CKR_ARGUMENTS_BAD;
	} else if (!w11_slot_token(slot)) {
		rv = CKR_SLOT_ID_INVALID;
	} else if (!(m = w11_mech_find(type))) {
		rv = CKR_MECHANISM_INVALID;
	} else {
		info->ulMinKeySize = m->min;
		info->ulMaxKeySize = m->max;
		info->flags = m->flags;
	}
	w11_leave();
	return rv;
}
