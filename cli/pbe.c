/* Bounds on the work factor of password-based encryption in input files.
 *
 * A PKCS#12 file or an encrypted PKCS#8 key names its own PBKDF2
 * iteration count; OpenSSL runs whatever it says, so a hostile file with
 * 0x7FFFFFFF iterations would make an import run for hours.  These checks
 * run before any decryption and apply the library's own ceiling,
 * libwks.wks.maxIterationCount (default 5,000,000). */
#include "cli.h"

#include <stdlib.h>

#include <openssl/asn1t.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

static long max_iterations(void)
{
	char buf[32];

	if (wks_get_property(buf, sizeof(buf), NULL,
	                     "libwks.wks.maxIterationCount") != WKS_OK)
		return 5000000;
	return strtol(buf, NULL, 10);
}

/* The iteration count of a PBES1 / PKCS#12 PBE or PBES2-with-PBKDF2
 * algorithm, or -1 if it cannot be read (left to OpenSSL to refuse). */
static long pbe_iterations(const X509_ALGOR *alg)
{
	long iter = -1;

	if (!alg || !alg->parameter)
		return -1;
	if (OBJ_obj2nid(alg->algorithm) == NID_pbes2) {
		PBE2PARAM *p2 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBE2PARAM),
		                                          alg->parameter);
		if (p2 && p2->keyfunc && p2->keyfunc->parameter &&
		    OBJ_obj2nid(p2->keyfunc->algorithm) == NID_id_pbkdf2) {
			PBKDF2PARAM *kdf = ASN1_TYPE_unpack_sequence(
				ASN1_ITEM_rptr(PBKDF2PARAM), p2->keyfunc->parameter);

			if (kdf)
				iter = ASN1_INTEGER_get(kdf->iter);
			PBKDF2PARAM_free(kdf);
		} else if (p2 && p2->keyfunc &&
		           OBJ_obj2nid(p2->keyfunc->algorithm) == NID_id_scrypt) {
			iter = LONG_MAX; /* not something we import */
		}
		PBE2PARAM_free(p2);
	} else {
		PBEPARAM *pbe = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBEPARAM),
		                                          alg->parameter);
		if (pbe)
			iter = ASN1_INTEGER_get(pbe->iter);
		PBEPARAM_free(pbe);
	}
	ERR_clear_error();
	return iter;
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
	return check(pbe_iterations(alg), file, what);
}

int cli_p12_mac_check(const PKCS12 *p12, const char *file)
{
	const ASN1_INTEGER *iter = NULL;

	PKCS12_get0_mac(NULL, NULL, NULL, &iter, p12);
	/* An absent count means 1 (RFC 7292). */
	return iter ? check(ASN1_INTEGER_get(iter), file, "PKCS#12 MAC") : 0;
}
