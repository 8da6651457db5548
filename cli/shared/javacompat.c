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
 *
 * And passwords: wolfJCE turns Java's char[] into bytes with standard
 * UTF-8 (an unpaired surrogate becomes '?'), so a new password that is
 * not valid UTF-8 (Latin-1 "p\xe4ssword") makes a store or key that Java
 * can never open: refused unless --allow-non-utf8-password.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	char oid[80] = "";
	int ok = 0;

	snprintf(name, name_len, "unknown");
	if (cli_pkcs8_alg(oid, sizeof(oid), name, name_len, pkcs8,
			  pkcs8_len)) {
		ok = is_slh_dsa(oid);
		for (size_t i = 0; java_oids[i] && !ok; i++)
			ok = !strcmp(oid, java_oids[i]);
	}
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

/* 1 if p[0..len) is UTF-8 that Java's encoder can produce: no overlong
 * form, no surrogate, nothing above U+10FFFF. */
static int java_utf8(const unsigned char *p, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned long cp;
		size_t k;

		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if (p[i] >= 0xC2 && p[i] <= 0xDF) {
			k = 2;
			cp = p[i] & 0x1Fu;
		} else if (p[i] >= 0xE0 && p[i] <= 0xEF) {
			k = 3;
			cp = p[i] & 0x0Fu;
		} else if (p[i] >= 0xF0 && p[i] <= 0xF4) {
			k = 4;
			cp = p[i] & 0x07u;
		} else {
			return 0;
		}
		if (k > len - i)
			return 0;
		for (size_t j = 1; j < k; j++) {
			if ((p[i + j] & 0xC0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + j] & 0x3Fu);
		}
		if (k == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
			return 0; /* overlong, or a surrogate (CESU-8) */
		if (k == 4 && (cp < 0x10000 || cp > 0x10FFFF))
			return 0;
		i += k;
	}
	return 1;
}

int cli_java_password_check(const cli_ctx *c, const cli_pw *pw,
			    const char *file, const char *option,
			    const char *what)
{
	if (java_utf8((const unsigned char *)pw->p, pw->len))
		return 0;
	/* Never the bytes themselves: they are the password. */
	if (c->allow_non_utf8) {
		cli_err(file, "warning: the new %s password is not valid "
			"UTF-8: wolfJCE (Java) will never open this %s "
			"(--allow-non-utf8-password)", what, what);
		return 0;
	}
	cli_err(file, "%s: the new %s password is not valid UTF-8: wolfJCE "
		"turns Java's passwords into UTF-8, so Java could never open "
		"this %s; give it in UTF-8 (a password file in Latin-1: iconv "
		"-f LATIN1 -t UTF-8 FILE), or keep these bytes with "
		"--allow-non-utf8-password", option, what, what);
	return CLI_EXIT_USAGE;
}
