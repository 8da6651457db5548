/*
 * Making certificates for wks(1) genkeypair and certreq, as keytool does:
 * keytool's -dname syntax (comma-separated RDNs, most specific first,
 * "\," and quotes for commas in values, "+" for multi-valued RDNs), its
 * -ext syntax (SAN, KU, EKU, BC; ":critical"), and its choice of
 * signature algorithm (the digest as strong as the key: SHA-256 up to
 * 128-bit security, SHA-384 up to 192, SHA-512 above).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cli.h"
#include "certgen.h"

int cli_ext_add(cli_ctx *c, const char *value)
{
	const char **n = realloc(c->ext, (c->ext_count + 1) * sizeof(*n));

	if (!n) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	n[c->ext_count++] = value;
	c->ext = n;
	return 0;
}

/* ---- --dname ------------------------------------------------------------ */

static const struct {
	const char *key;
	const char *sn; /* OpenSSL short name */
} dname_keys[] = {
	{ "CN", "CN" }, { "C", "C" }, { "L", "L" }, { "S", "ST" },
	{ "ST", "ST" }, { "O", "O" }, { "OU", "OU" }, { "T", "title" },
	{ "TITLE", "title" }, { "STREET", "street" }, { "DC", "DC" },
	{ "EMAIL", "emailAddress" }, { "EMAILADDRESS", "emailAddress" },
	{ "UID", "UID" }, { "SERIALNUMBER", "serialNumber" },
	{ "GIVENNAME", "GN" }, { "SURNAME", "SN" }, { "INITIALS", "initials" },
	{ "GENERATION", "generationQualifier" },
	{ "DNQUALIFIER", "dnQualifier" }, { "DNQ", "dnQualifier" },
};

typedef struct {
	ASN1_OBJECT *obj;
	char *value;
	int new_rdn; /* first attribute of its RDN */
} ava;

static char *trim(char *s)
{
	size_t n;

	while (*s == ' ')
		s++;
	n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = 0;
	return s;
}

static ASN1_OBJECT *dname_obj(const char *key)
{
	for (size_t i = 0; i < sizeof(dname_keys) / sizeof(dname_keys[0]); i++)
		if (!strcasecmp(key, dname_keys[i].key))
			return OBJ_txt2obj(dname_keys[i].sn, 0);
	/* A dotted OID ("2.5.4.3=..."; keytool also takes "OID.2.5.4.3"). */
	if (!strncasecmp(key, "OID.", 4))
		key += 4;
	if (*key >= '0' && *key <= '9')
		return OBJ_txt2obj(key, 1);
	return NULL;
}

int cli_parse_dname(X509_NAME **out, const char *dname)
{
	size_t len = strlen(dname), n = 0, cap = 0;
	char *buf = malloc(len + 1), *w, *key = NULL;
	const char *p = dname;
	ava *avas = NULL;
	X509_NAME *name = NULL;
	int rc = CLI_EXIT_USAGE, new_rdn = 1;

	*out = NULL;
	if (!buf)
		goto nomem;
	/* One pass: unescape "key=value" pairs; ',' or ';' ends an RDN,
	 * '+' an attribute of a multi-valued RDN. */
	while (*p) {
		int quoted = 0, had_value = 0, closed = 0;
		char *val;

		w = buf;
		key = NULL;
		for (;; p++) {
			char ch = *p;

			if (!ch)
				break;
			if (quoted) {
				if (ch == '"') {
					quoted = 0;
					closed = 1;
					continue;
				}
				if (ch == '\\' && p[1])
					ch = *++p;
				*w++ = ch;
				continue;
			}
			if (ch == '\\') {
				if (!p[1]) {
					cli_err(NULL, "--dname: a \"\\\" at the "
						"end");
					goto done;
				}
				*w++ = *++p;
				had_value = 1;
				continue;
			}
			if (ch == '"' && key) {
				/* A quoted value: spaces before it are not
				 * part of it. */
				w = key + strlen(key) + 1;
				quoted = 1;
				had_value = 1;
				continue;
			}
			if (ch == '=' && !key) {
				*w++ = 0;
				key = buf;
				continue;
			}
			if (ch == ',' || ch == ';' || ch == '+')
				break;
			if (closed && ch == ' ')
				continue; /* spaces after a quoted value */
			*w++ = ch;
		}
		*w = 0;
		if (quoted) {
			cli_err(NULL, "--dname: a quote is not closed");
			goto done;
		}
		if (!key) {
			cli_err(NULL, "--dname: \"%s\" is not KEY=VALUE (e.g. "
				"\"CN=www.example.com, O=Example, C=US\")",
				buf);
			goto done;
		}
		val = key + strlen(key) + 1;
		key = trim(key);
		if (!had_value)
			val = trim(val);
		if (!*val) {
			cli_err(NULL, "--dname: %s has no value", key);
			goto done;
		}
		if (n == cap) {
			ava *g = realloc(avas, (cap = cap ? 2 * cap : 8) *
					 sizeof(*g));

			if (!g)
				goto nomem;
			avas = g;
		}
		avas[n].value = strdup(val);
		avas[n].obj = dname_obj(key);
		avas[n].new_rdn = new_rdn;
		n++;
		if (!avas[n - 1].value)
			goto nomem;
		if (!avas[n - 1].obj) {
			ERR_clear_error();
			cli_err(NULL, "--dname: unknown attribute \"%s\" (CN, "
				"OU, O, L, ST, C, EMAILADDRESS, DC, ... or an "
				"OID)", key);
			goto done;
		}
		new_rdn = *p != '+';
		if (*p)
			p++;
		if (!*p && !new_rdn) {
			cli_err(NULL, "--dname: a \"+\" at the end");
			goto done;
		}
	}
	if (n == 0) {
		cli_err(NULL, "--dname: empty");
		goto done;
	}
	if (!(name = X509_NAME_new()))
		goto nomem;
	/* The string names the most specific RDN first (RFC 2253, as
	 * keytool): the encoding is the other way round.  The attributes of
	 * one RDN keep their order. */
	for (size_t end = n; end > 0;) {
		size_t start = end - 1;

		while (start > 0 && !avas[start].new_rdn)
			start--;
		for (size_t i = start; i < end; i++) {
			if (!X509_NAME_add_entry_by_OBJ(name, avas[i].obj,
					MBSTRING_UTF8,
					(const unsigned char *)avas[i].value,
					-1, -1, i == start ? 0 : -1)) {
				char sn[80];

				OBJ_obj2txt(sn, sizeof(sn), avas[i].obj, 0);
				rc = cli_ssl_err(CLI_EXIT_USAGE, NULL,
						 "--dname: bad value for %s",
						 sn);
				goto done;
			}
		}
		end = start;
	}
	*out = name;
	name = NULL;
	rc = 0;
	goto done;
nomem:
	cli_err(NULL, "out of memory");
	rc = CLI_EXIT_FAIL;
done:
	for (size_t i = 0; i < n; i++) {
		free(avas[i].value);
		ASN1_OBJECT_free(avas[i].obj);
	}
	free(avas);
	free(buf);
	X509_NAME_free(name);
	return rc;
}

/* ---- --ext ------------------------------------------------------------------- */

static int ext_err(const char *ext, const char *what)
{
	cli_err(NULL, "--ext \"%s\": %s", ext, what);
	return CLI_EXIT_USAGE;
}

/* Split "a,b,c" in place; returns the next item or NULL. */
static char *next_item(char **s)
{
	char *item = *s, *comma;

	if (!item || !*item)
		return NULL;
	comma = strchr(item, ',');
	if (comma) {
		*comma = 0;
		*s = comma + 1;
	} else {
		*s = NULL;
	}
	return item;
}

static int ext_san(STACK_OF(X509_EXTENSION) **exts, const char *ext,
		   char *value, int crit)
{
	GENERAL_NAMES *gens = GENERAL_NAMES_new();
	char *item;
	int rc = CLI_EXIT_USAGE;

	if (!gens)
		goto nomem;
	while ((item = next_item(&value))) {
		static const struct { const char *t; int type; } types[] = {
			{ "dns", GEN_DNS }, { "ip", GEN_IPADD },
			{ "email", GEN_EMAIL }, { "uri", GEN_URI },
			{ "oid", GEN_RID },
		};
		char *colon = strchr(item, ':');
		GENERAL_NAME *g = NULL;
		int type = -1;

		if (colon) {
			*colon = 0;
			for (size_t i = 0; i < sizeof(types) / sizeof(*types);
			     i++)
				if (!strcasecmp(item, types[i].t))
					type = types[i].type;
		}
		if (type < 0 || !colon[1]) {
			rc = ext_err(ext, "each name is TYPE:VALUE, TYPE one "
				     "of dns, ip, email, uri, oid");
			goto done;
		}
		g = a2i_GENERAL_NAME(NULL, NULL, NULL, type, colon + 1, 0);
		if (!g) {
			ERR_clear_error();
			cli_err(NULL, "--ext \"%s\": bad %s name \"%s\"", ext,
				item, colon + 1);
			goto done;
		}
		if (!sk_GENERAL_NAME_push(gens, g)) {
			GENERAL_NAME_free(g);
			goto nomem;
		}
	}
	if (sk_GENERAL_NAME_num(gens) == 0) {
		rc = ext_err(ext, "no name (e.g. san=dns:www.example.com,"
			     "ip:192.0.2.1)");
		goto done;
	}
	if (X509V3_add1_i2d(exts, NID_subject_alt_name, gens, crit,
			    X509V3_ADD_REPLACE) != 1)
		goto nomem;
	rc = 0;
	goto done;
nomem:
	cli_err(NULL, "out of memory");
	rc = CLI_EXIT_FAIL;
done:
	GENERAL_NAMES_free(gens);
	return rc;
}

static int ext_ku(STACK_OF(X509_EXTENSION) **exts, const char *ext,
		  char *value, int crit)
{
	static const char *const bits[] = {
		"digitalSignature", "nonRepudiation", "keyEncipherment",
		"dataEncipherment", "keyAgreement", "keyCertSign", "cRLSign",
		"encipherOnly", "decipherOnly"
	};
	ASN1_BIT_STRING *ku = ASN1_BIT_STRING_new();
	char *item;
	int rc = CLI_EXIT_USAGE, any = 0;

	if (!ku)
		goto nomem;
	while ((item = next_item(&value))) {
		int bit = -1;
		size_t il = strlen(item);

		if (!strcasecmp(item, "contentCommitment"))
			bit = 1;
		/* keytool takes a unique prefix too ("dig", "keyE"). */
		for (int i = 0; i < 9 && il; i++)
			if (!strncasecmp(item, bits[i], il)) {
				if (strlen(bits[i]) == il) {
					bit = i;
					break;
				}
				bit = bit < 0 ? i : -2;
			}
		if (bit < 0) {
			cli_err(NULL, "--ext \"%s\": unknown key usage \"%s\" "
				"(digitalSignature, nonRepudiation, "
				"keyEncipherment, dataEncipherment, keyAgreement, "
				"keyCertSign, cRLSign, encipherOnly, "
				"decipherOnly)", ext, item);
			goto done;
		}
		if (!ASN1_BIT_STRING_set_bit(ku, bit, 1))
			goto nomem;
		any = 1;
	}
	if (!any) {
		rc = ext_err(ext, "no key usage (e.g. ku=digitalSignature)");
		goto done;
	}
	if (X509V3_add1_i2d(exts, NID_key_usage, ku, crit,
			    X509V3_ADD_REPLACE) != 1)
		goto nomem;
	rc = 0;
	goto done;
nomem:
	cli_err(NULL, "out of memory");
	rc = CLI_EXIT_FAIL;
done:
	ASN1_BIT_STRING_free(ku);
	return rc;
}

static int ext_eku(STACK_OF(X509_EXTENSION) **exts, const char *ext,
		   char *value, int crit)
{
	static const char *const names[] = {
		"anyExtendedKeyUsage", "serverAuth", "clientAuth",
		"codeSigning", "emailProtection", "timeStamping", "OCSPSigning"
	};
	EXTENDED_KEY_USAGE *eku = sk_ASN1_OBJECT_new_null();
	char *item;
	int rc = CLI_EXIT_USAGE;

	if (!eku)
		goto nomem;
	while ((item = next_item(&value))) {
		ASN1_OBJECT *o = NULL;

		for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
			if (!strcasecmp(item, names[i]))
				o = OBJ_txt2obj(names[i], 0);
		if (!o && *item >= '0' && *item <= '9')
			o = OBJ_txt2obj(item, 1);
		if (!o) {
			ERR_clear_error();
			cli_err(NULL, "--ext \"%s\": unknown extended key usage "
				"\"%s\" (serverAuth, clientAuth, codeSigning, "
				"emailProtection, timeStamping, OCSPSigning, "
				"anyExtendedKeyUsage, or an OID)", ext, item);
			goto done;
		}
		if (!sk_ASN1_OBJECT_push(eku, o)) {
			ASN1_OBJECT_free(o);
			goto nomem;
		}
	}
	if (sk_ASN1_OBJECT_num(eku) == 0) {
		rc = ext_err(ext, "no usage (e.g. eku=serverAuth)");
		goto done;
	}
	if (X509V3_add1_i2d(exts, NID_ext_key_usage, eku, crit,
			    X509V3_ADD_REPLACE) != 1)
		goto nomem;
	rc = 0;
	goto done;
nomem:
	cli_err(NULL, "out of memory");
	rc = CLI_EXIT_FAIL;
done:
	sk_ASN1_OBJECT_pop_free(eku, ASN1_OBJECT_free);
	return rc;
}

static int parse_uint(long *out, const char *s, long max)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return !errno && end != s && !*end && *s >= '0' && *s <= '9' &&
	       *out <= max;
}

/* keytool: "bc", "bc=ca:true,pathlen:N", "bc=ca:false", "bc=N". */
static int ext_bc(STACK_OF(X509_EXTENSION) **exts, const char *ext,
		  char *value, int crit)
{
	BASIC_CONSTRAINTS *bc = BASIC_CONSTRAINTS_new();
	char *item;
	long len = -1;
	int rc = CLI_EXIT_USAGE, ca = 1;

	if (!bc)
		goto nomem;
	while ((item = next_item(&value))) {
		if (!strcasecmp(item, "ca:true") || !strcasecmp(item, "ca")) {
			ca = 1;
		} else if (!strcasecmp(item, "ca:false")) {
			ca = 0;
		} else if (!strncasecmp(item, "pathlen:", 8) &&
			   parse_uint(&len, item + 8, 1000000)) {
			;
		} else if (parse_uint(&len, item, 1000000)) {
			ca = 1;
		} else {
			rc = ext_err(ext, "basic constraints are ca:true|false"
				     "[,pathlen:N] or N");
			goto done;
		}
	}
	if (len >= 0 && !ca) {
		rc = ext_err(ext, "pathlen needs ca:true");
		goto done;
	}
	bc->ca = ca ? 0xff : 0;
	if (len >= 0 && (!(bc->pathlen = ASN1_INTEGER_new()) ||
			 !ASN1_INTEGER_set(bc->pathlen, len)))
		goto nomem;
	if (X509V3_add1_i2d(exts, NID_basic_constraints, bc, crit,
			    X509V3_ADD_REPLACE) != 1)
		goto nomem;
	rc = 0;
	goto done;
nomem:
	cli_err(NULL, "out of memory");
	rc = CLI_EXIT_FAIL;
done:
	BASIC_CONSTRAINTS_free(bc);
	return rc;
}

int cli_parse_exts(STACK_OF(X509_EXTENSION) **out, const cli_ctx *c)
{
	STACK_OF(X509_EXTENSION) *exts = NULL;
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; i < c->ext_count && rc == 0; i++) {
		const char *ext = c->ext[i];
		char *copy = strdup(ext), *eq, *value = NULL, *colon;
		int crit = 0;

		if (!copy) {
			cli_err(NULL, "out of memory");
			rc = CLI_EXIT_FAIL;
			break;
		}
		if ((eq = strchr(copy, '='))) {
			*eq = 0;
			value = eq + 1;
		}
		if ((colon = strchr(copy, ':'))) {
			*colon = 0;
			if (strcasecmp(colon + 1, "critical") &&
			    strcasecmp(colon + 1, "c")) {
				rc = ext_err(ext, "NAME:critical=VALUE is the "
					     "only form with a colon in the "
					     "name");
				free(copy);
				break;
			}
			crit = 1;
		}
		if (!strcasecmp(copy, "san") ||
		    !strcasecmp(copy, "SubjectAlternativeName"))
			rc = ext_san(&exts, ext, value, crit);
		else if (!strcasecmp(copy, "ku") ||
			 !strcasecmp(copy, "KeyUsage"))
			rc = ext_ku(&exts, ext, value, crit);
		else if (!strcasecmp(copy, "eku") ||
			 !strcasecmp(copy, "ExtendedKeyUsage"))
			rc = ext_eku(&exts, ext, value, crit);
		else if (!strcasecmp(copy, "bc") ||
			 !strcasecmp(copy, "BasicConstraints"))
			rc = ext_bc(&exts, ext, value, crit);
		else
			rc = ext_err(ext, "unknown extension (san, ku, eku, "
				     "bc)");
		free(copy);
	}
	if (rc) {
		sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
		return rc;
	}
	*out = exts;
	return 0;
}

/* ---- keys and signature algorithms ----------------------------------------- */

static const struct {
	const char *name; /* keytool's curve names and NIST names */
	const char *group;
	int bits;
} curves[] = {
	{ "P-256", "P-256", 256 }, { "secp256r1", "P-256", 256 },
	{ "prime256v1", "P-256", 256 }, { "P-384", "P-384", 384 },
	{ "secp384r1", "P-384", 384 }, { "P-521", "P-521", 521 },
	{ "secp521r1", "P-521", 521 },
};

int cli_keygen(EVP_PKEY **out, char *desc, size_t desc_len,
	       const cli_ctx *c)
{
	const char *alg = c->keyalg ? c->keyalg : "RSA";
	long bits = 0;

	*out = NULL;
	if (c->keysize && !parse_uint(&bits, c->keysize, 100000)) {
		cli_err(NULL, "--keysize: \"%s\" is not a number", c->keysize);
		return CLI_EXIT_USAGE;
	}
	if (!strcasecmp(alg, "RSA")) {
		if (c->curve) {
			cli_err(NULL, "--curve applies to --keyalg EC only");
			return CLI_EXIT_USAGE;
		}
		if (!bits)
			bits = 2048;
		if (bits < 2048 || bits > 8192) {
			cli_err(NULL, "--keysize: an RSA key has 2048 to 8192 "
				"bits");
			return CLI_EXIT_USAGE;
		}
		*out = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
		snprintf(desc, desc_len, "%ld-bit RSA", bits);
	} else if (!strcasecmp(alg, "EC")) {
		const char *group = NULL;

		for (size_t i = 0; i < sizeof(curves) / sizeof(*curves); i++)
			if (c->curve ? !strcasecmp(c->curve, curves[i].name)
				     : bits ? bits == curves[i].bits
					    : i == 0) {
				group = curves[i].group;
				if (bits && bits != curves[i].bits)
					group = NULL;
				break;
			}
		if (!group) {
			cli_err(NULL, "%s: EC keys are P-256, P-384 or P-521 "
				"(--curve, or --keysize 256, 384, 521)",
				c->curve ? "--curve" : "--keysize");
			return CLI_EXIT_USAGE;
		}
		*out = EVP_PKEY_Q_keygen(NULL, NULL, "EC", group);
		snprintf(desc, desc_len, "%s-bit EC (%s)",
			 group + 2, group);
	} else {
		cli_err(NULL, "--keyalg: \"%s\" is not RSA or EC", alg);
		return CLI_EXIT_USAGE;
	}
	if (!*out)
		return cli_ssl_err(CLI_EXIT_FAIL, NULL,
				   "cannot generate the key");
	return 0;
}

/* keytool's SignatureUtil.getDefaultSigAlgForKey: the security strength
 * of the key picks the digest. */
static int default_digest_bits(EVP_PKEY *key)
{
	int bits = EVP_PKEY_get_bits(key);

	if (EVP_PKEY_is_a(key, "EC"))
		return bits > 384 ? 512 : bits > 256 ? 384 : 256;
	/* RSA: 128-bit strength up to 7679 bits, 192 up to 15359. */
	return bits >= 15360 ? 512 : bits >= 7680 ? 384 : 256;
}

int cli_sigalg(const EVP_MD **md, char *name, size_t name_len, EVP_PKEY *key,
	       const char *sigalg)
{
	const char *kind = EVP_PKEY_is_a(key, "EC") ? "ECDSA" : "RSA";
	int dbits = default_digest_bits(key);

	if (sigalg) {
		static const int sizes[] = { 224, 256, 384, 512 };
		char want[32];

		dbits = 0;
		for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
			snprintf(want, sizeof(want), "SHA%dwith%s", sizes[i],
				 kind);
			if (!strcasecmp(sigalg, want))
				dbits = sizes[i];
		}
		if (!dbits) {
			cli_err(NULL, "--sigalg: \"%s\" is not one of "
				"SHA224with%s, SHA256with%s, SHA384with%s, "
				"SHA512with%s (for this %s key)", sigalg,
				kind, kind, kind, kind,
				EVP_PKEY_is_a(key, "EC") ? "EC" : "RSA");
			return CLI_EXIT_USAGE;
		}
	}
	*md = dbits == 224 ? EVP_sha224() : dbits == 256 ? EVP_sha256() :
	      dbits == 384 ? EVP_sha384() : EVP_sha512();
	snprintf(name, name_len, "SHA%dwith%s", dbits, kind);
	return 0;
}

int cli_add_ski(STACK_OF(X509_EXTENSION) **exts, X509 *cert, X509_REQ *req)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, cert, cert, req, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_key_identifier,
				  "hash");
	if (!ext)
		return cli_ssl_err(CLI_EXIT_FAIL, NULL,
				   "cannot make the subject key identifier");
	ok = X509v3_add_ext(exts, ext, -1) != NULL;
	X509_EXTENSION_free(ext);
	if (!ok) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	return 0;
}
