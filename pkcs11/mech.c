/*
 * The mechanism table: every mechanism the module offers, the key type
 * it takes, its key sizes and CK_MECHANISM_INFO flags, the digest of a
 * combined mechanism, and whether it has a multi-part form.
 * C_GetMechanismList and C_GetMechanismInfo answer from this table
 * alone, and every operation looks its mechanism up here, so what the
 * module says it does is what it does.
 *
 * Also the OpenSSL algorithms the operations use, fetched once (from the
 * default library context, which is where libwks's stores put their
 * keys) and kept until C_Finalize.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "p11.h"

#define EC_FLAGS (CKF_EC_F_P | CKF_EC_NAMEDCURVE | CKF_EC_UNCOMPRESS)
#define SV (CKF_SIGN | CKF_VERIFY)
#define ED (CKF_ENCRYPT | CKF_DECRYPT)

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
	/* generic secrets and HMAC (bytes) */
	{ CKM_GENERIC_SECRET_KEY_GEN, W11_K_GEN_GENERIC, CKK_GENERIC_SECRET, 1,
	  512, CKF_GENERATE, NULL, 0 },
	{ CKM_SHA256_HMAC, W11_K_HMAC, CKK_GENERIC_SECRET, 1, 512, SV,
	  "SHA256", 1 },
	{ CKM_SHA384_HMAC, W11_K_HMAC, CKK_GENERIC_SECRET, 1, 512, SV,
	  "SHA384", 1 },
	{ CKM_SHA512_HMAC, W11_K_HMAC, CKK_GENERIC_SECRET, 1, 512, SV,
	  "SHA512", 1 },
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

/* AES-{128,192,256}-{ECB,CBC,CTR,GCM} */
static const char *const cipher_modes[] = { "ECB", "CBC", "CTR", "GCM" };
static _Atomic(EVP_CIPHER *) ciphers[3][4];

const EVP_CIPHER *w11_aes(int kind, size_t key_len)
{
	int mode, size;
	EVP_CIPHER *c;
	char name[32];

	switch (kind) {
	case W11_K_AES_ECB:
		mode = 0;
		break;
	case W11_K_AES_CBC:
	case W11_K_AES_CBC_PAD:
		mode = 1;
		break;
	case W11_K_AES_CTR:
		mode = 2;
		break;
	case W11_K_AES_GCM:
		mode = 3;
		break;
	default:
		return NULL;
	}
	if (key_len != 16 && key_len != 24 && key_len != 32)
		return NULL;
	size = key_len == 16 ? 0 : key_len == 24 ? 1 : 2;
	if ((c = atomic_load(&ciphers[size][mode])) != NULL)
		return c;
	snprintf(name, sizeof(name), "AES-%zu-%s", key_len * 8,
		 cipher_modes[mode]);
	pthread_mutex_lock(&fetch_lock);
	if (!(c = atomic_load(&ciphers[size][mode])) &&
	    (c = EVP_CIPHER_fetch(w11_libctx, name, NULL)) != NULL)
		atomic_store(&ciphers[size][mode], c);
	pthread_mutex_unlock(&fetch_lock);
	return c;
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
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 4; j++) {
			EVP_CIPHER_free(atomic_load(&ciphers[i][j]));
			atomic_store(&ciphers[i][j], NULL);
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
