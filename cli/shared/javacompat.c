/*
 * What Java (wolfJCE) can read back: a check that every command which puts
 * a private key into a store calls before it changes anything.
 *
 * wolfJCE's WolfSSLKeyStore.engineGetKey() rebuilds a private key from
 * its PKCS#8 through KeyFactory instances for RSA, RSASSA-PSS, EC, ML-DSA
 * and SLH-DSA only; a key of another kind (Ed25519, Ed448, X25519, X448,
 * DSA, DH, ...) is stored and listed, but getKey() fails.  And an entry
 * under the empty alias is listed by aliases() but getKey("") never
 * returns it.  libwks handles both; Java users must hear about it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include "cli.h"

/* The key algorithms wolfJCE's getKey() rebuilds, by OID. */
static const char *const java_oids[] = {
	"1.2.840.113549.1.1.1",   /* rsaEncryption */
	"1.2.840.113549.1.1.10",  /* RSASSA-PSS */
	"1.2.840.10045.2.1",      /* id-ecPublicKey */
	"2.16.840.1.101.3.4.3.17", /* ML-DSA-44 */
	"2.16.840.1.101.3.4.3.18", /* ML-DSA-65 */
	"2.16.840.1.101.3.4.3.19", /* ML-DSA-87 */
	NULL
};

/* SLH-DSA: id-slh-dsa-* are 2.16.840.1.101.3.4.3.20 to .31. */
static int is_slh_dsa(const char *oid)
{
	static const char pfx[] = "2.16.840.1.101.3.4.3.";
	char *end;
	long n;

	if (strncmp(oid, pfx, sizeof(pfx) - 1))
		return 0;
	n = strtol(oid + sizeof(pfx) - 1, &end, 10);
	return !*end && n >= 20 && n <= 31;
}

int cli_java_key_name(char *name, size_t name_len, const uint8_t *pkcs8,
		      size_t pkcs8_len)
{
	const unsigned char *p = pkcs8;
	PKCS8_PRIV_KEY_INFO *p8;
	const ASN1_OBJECT *obj = NULL;
	char oid[80] = "";
	int ok = 0, nid;

	snprintf(name, name_len, "unknown");
	if (pkcs8_len > 0x7fffffff)
		return 0;
	p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)pkcs8_len);
	if (p8 && PKCS8_pkey_get0(&obj, NULL, NULL, NULL, p8) && obj &&
	    OBJ_obj2txt(oid, sizeof(oid), obj, 1) > 0) {
		ok = is_slh_dsa(oid);
		for (size_t i = 0; java_oids[i] && !ok; i++)
			ok = !strcmp(oid, java_oids[i]);
		nid = OBJ_obj2nid(obj);
		snprintf(name, name_len, "%s",
			 nid != NID_undef ? OBJ_nid2sn(nid) : oid);
	}
	PKCS8_PRIV_KEY_INFO_free(p8);
	ERR_clear_error();
	return ok;
}

int cli_java_check(cli_ctx *c, const char *file, const char *alias,
		   const uint8_t *pkcs8, size_t pkcs8_len)
{
	char name[96];
	int rc = 0;

	if (pkcs8 && !cli_java_key_name(name, sizeof(name), pkcs8,
					pkcs8_len)) {
		char *d = cli_display(alias ? alias : "");

		if (c->strict_java) {
			cli_err(file, "entry \"%s\": wolfJCE cannot load "
				"%s private keys (getKey() reads RSA, RSASSA-PSS, "
				"EC, ML-DSA and SLH-DSA); refused "
				"(--strict-java)", d ? d : "", name);
			rc = CLI_EXIT_INVALID;
		} else {
			cli_err(file, "warning: entry \"%s\": wolfJCE cannot "
				"load %s private keys (getKey() reads RSA, "
				"RSASSA-PSS, EC, ML-DSA and SLH-DSA); Java will "
				"not read it", d ? d : "", name);
		}
		free(d);
	}
	if (rc == 0 && alias && !*alias) {
		if (c->strict_java) {
			cli_err(file, "a key entry under the empty alias: "
				"wolfJCE lists it but getKey(\"\") never returns "
				"it; refused (--strict-java)");
			rc = CLI_EXIT_INVALID;
		} else {
			cli_err(file, "warning: a key entry under the empty "
				"alias: wolfJCE lists it but getKey(\"\") never "
				"returns it");
		}
	}
	return rc;
}
