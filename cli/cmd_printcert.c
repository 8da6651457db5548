/*
 * wks printcert: certificates from a file (PEM, DER, PKCS#7; several) as
 * keytool -printcert shows them: owner, issuer, serial number, validity,
 * SHA-1 and SHA-256 fingerprints, signature algorithm, public key,
 * version, and the extensions sorted by name as keytool sorts them
 * (SubjectAlternativeName, KeyUsage,
 * ExtendedKeyUsage, BasicConstraints, Subject/AuthorityKeyIdentifier in
 * keytool's words; others as OpenSSL prints them).  Every text taken from
 * the file is escaped before it is printed.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cli.h"

/* Print a memory BIO's text line by line, each escaped, after `indent`. */
static void put_bio(FILE *f, BIO *b, const char *indent)
{
	char *mem, *s, *line, *nl;
	long n = BIO_get_mem_data(b, &mem);

	if (n <= 0 || !(s = malloc((size_t)n + 1)))
		return;
	memcpy(s, mem, (size_t)n);
	s[n] = 0;
	for (line = s; line && *line; line = nl) {
		char *d;

		if ((nl = strchr(line, '\n')))
			*nl++ = 0;
		d = cli_display_escaped(line);
		fprintf(f, "%s%s\n", indent, d ? d : "");
		free(d);
	}
	free(s);
}

/* keytool's X500Name.toString(): most specific first, ", " between,
 * values with special characters quoted. */
static void put_name(FILE *f, X509_NAME *name)
{
	BIO *b = BIO_new(BIO_s_mem());
	unsigned long flags = ((ASN1_STRFLGS_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) |
			       ASN1_STRFLGS_ESC_QUOTE | XN_FLAG_SEP_CPLUS_SPC |
			       XN_FLAG_DN_REV | XN_FLAG_FN_SN |
			       XN_FLAG_DUMP_UNKNOWN_FIELDS);
	char *mem, *s, *d;
	long n;

	if (!b)
		return;
	X509_NAME_print_ex(b, name, 0, flags);
	n = BIO_get_mem_data(b, &mem);
	if (n >= 0 && (s = malloc((size_t)n + 1))) {
		memcpy(s, mem, (size_t)n);
		s[n] = 0;
		d = cli_display_escaped(s);
		fputs(d ? d : "", f);
		free(d);
		free(s);
	}
	BIO_free(b);
}

static void put_time(FILE *f, const ASN1_TIME *t)
{
	struct tm tm;
	char buf[64];

	if (!t || !ASN1_TIME_to_tm(t, &tm) ||
	    !strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S UTC %Y", &tm))
		snprintf(buf, sizeof(buf), "?");
	fputs(buf, f);
}

/* keytool prints BigInteger.toString(16): lowercase, no leading zeros. */
static void put_serial(FILE *f, const ASN1_INTEGER *serial)
{
	BIGNUM *bn = ASN1_INTEGER_to_BN(serial, NULL);
	char *hex = bn ? BN_bn2hex(bn) : NULL, *p;

	if (!hex) {
		fputs("?", f);
	} else {
		p = hex;
		if (*p == '-')
			fputc(*p++, f);
		while (p[0] == '0' && p[1])
			p++;
		for (; *p; p++)
			fputc(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p, f);
	}
	OPENSSL_free(hex);
	BN_free(bn);
}

static void put_fingerprint(FILE *f, X509 *x, const EVP_MD *md,
			    const char *name)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	char hex[EVP_MAX_MD_SIZE * 3 + 1] = "?";

	if (X509_digest(x, md, d, &n))
		cli_hex(hex, d, n, ':');
	fprintf(f, "\t %s: %s\n", name, hex);
}

/* Java's names: SHA256withRSA, SHA384withECDSA, Ed25519, RSASSA-PSS. */
static void sigalg_name(char *out, size_t out_len, X509 *x)
{
	int sig = X509_get_signature_nid(x), md = NID_undef, pk = NID_undef;

	if (sig != NID_undef && OBJ_find_sigid_algs(sig, &md, &pk) &&
	    md != NID_undef) {
		const char *kind = pk == NID_rsaEncryption ? "RSA" :
				   pk == NID_X9_62_id_ecPublicKey ? "ECDSA" :
				   pk == NID_dsa ? "DSA" : OBJ_nid2sn(pk);
		const char *mds = OBJ_nid2sn(md);
		char mdu[32];
		size_t i;

		for (i = 0; mds && mds[i] && i + 1 < sizeof(mdu); i++)
			mdu[i] = (char)(mds[i] >= 'a' && mds[i] <= 'z' ?
					mds[i] - 'a' + 'A' : mds[i]);
		mdu[i] = 0;
		snprintf(out, out_len, "%swith%s", mdu, kind ? kind : "?");
	} else if (sig == NID_ED25519) {
		snprintf(out, out_len, "Ed25519");
	} else if (sig == NID_ED448) {
		snprintf(out, out_len, "Ed448");
	} else if (sig == NID_rsassaPss) {
		snprintf(out, out_len, "RSASSA-PSS");
	} else {
		const X509_ALGOR *alg = NULL;
		const ASN1_OBJECT *obj = NULL;

		X509_get0_signature(NULL, &alg, x);
		if (alg)
			X509_ALGOR_get0(&obj, NULL, NULL, alg);
		if (!obj || OBJ_obj2txt(out, (int)out_len, obj, 1) <= 0)
			snprintf(out, out_len, "?");
	}
	ERR_clear_error();
}

/* keytool: "2048-bit RSA key", "384-bit EC (secp384r1) key". */
static void key_text(char *out, size_t out_len, X509 *x)
{
	EVP_PKEY *pk = X509_get0_pubkey(x);
	char group[64] = "";

	if (pk && EVP_PKEY_is_a(pk, "EC")) {
		EVP_PKEY_get_utf8_string_param(pk, OSSL_PKEY_PARAM_GROUP_NAME,
					       group, sizeof(group), NULL);
		/* Java names P-256 secp256r1, as the other NIST curves. */
		snprintf(out, out_len, "%d-bit EC (%s) key",
			 EVP_PKEY_get_bits(pk),
			 strcmp(group, "prime256v1") ? group : "secp256r1");
	} else if (pk && (EVP_PKEY_is_a(pk, "RSA") ||
			  EVP_PKEY_is_a(pk, "RSA-PSS") ||
			  EVP_PKEY_is_a(pk, "DSA"))) {
		snprintf(out, out_len, "%d-bit %s key", EVP_PKEY_get_bits(pk),
			 EVP_PKEY_is_a(pk, "DSA") ? "DSA" :
			 EVP_PKEY_is_a(pk, "RSA") ? "RSA" : "RSASSA-PSS");
	} else if (pk && EVP_PKEY_is_a(pk, "ED25519")) {
		snprintf(out, out_len, "Ed25519 key");
	} else if (pk && EVP_PKEY_is_a(pk, "ED448")) {
		snprintf(out, out_len, "Ed448 key");
	} else {
		char desc[96];

		cli_key_desc(desc, sizeof(desc), x);
		snprintf(out, out_len, "%s key", desc);
	}
	ERR_clear_error();
}

/* sun.security.util.HexDumpEncoder: 16 bytes a line, offset, ASCII. */
static void hexdump(FILE *f, const unsigned char *p, int len)
{
	for (int off = 0; off < len; off += 16) {
		fprintf(f, "%04X: ", off);
		for (int i = 0; i < 16; i++) {
			if (off + i < len)
				fprintf(f, "%02X ", p[off + i]);
			else
				fputs("   ", f);
			if (i == 7)
				fputs("  ", f);
		}
		fputc(' ', f);
		for (int i = 0; i < 16 && off + i < len; i++) {
			unsigned char ch = p[off + i];

			/* HexDumpEncoder prints ' ' to 'z' only. */
			fputc(ch >= ' ' && ch <= 'z' ? ch : '.', f);
		}
		fputc('\n', f);
	}
}

static void put_ia5(FILE *f, const char *label, const ASN1_STRING *s)
{
	char *raw = malloc((size_t)ASN1_STRING_length(s) + 1), *d;

	if (!raw)
		return;
	memcpy(raw, ASN1_STRING_get0_data(s), (size_t)ASN1_STRING_length(s));
	raw[ASN1_STRING_length(s)] = 0;
	/* An embedded NUL ends the text here; escape the rest. */
	d = cli_display(raw);
	fprintf(f, "  %s: %s\n", label, d ? d : "");
	free(d);
	free(raw);
}

static void put_san(FILE *f, GENERAL_NAMES *gens)
{
	fputs("SubjectAlternativeName [\n", f);
	for (int i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);

		switch (g->type) {
		case GEN_DNS:
			put_ia5(f, "DNSName", g->d.dNSName);
			break;
		case GEN_EMAIL:
			put_ia5(f, "RFC822Name", g->d.rfc822Name);
			break;
		case GEN_URI:
			put_ia5(f, "URIName", g->d.uniformResourceIdentifier);
			break;
		case GEN_IPADD: {
			const ASN1_OCTET_STRING *a = g->d.iPAddress;
			char ip[INET6_ADDRSTRLEN] = "?";

			if (ASN1_STRING_length(a) == 4 || ASN1_STRING_length(a) == 16)
				inet_ntop(ASN1_STRING_length(a) == 4 ? AF_INET :
					  AF_INET6, ASN1_STRING_get0_data(a), ip,
					  sizeof(ip));
			fprintf(f, "  IPAddress: %s\n", ip);
			break;
		}
		case GEN_DIRNAME:
			fputs("  DirectoryName: ", f);
			put_name(f, g->d.directoryName);
			fputc('\n', f);
			break;
		case GEN_RID: {
			char oid[80];

			OBJ_obj2txt(oid, sizeof(oid), g->d.registeredID, 1);
			fprintf(f, "  OIDName: %s\n", oid);
			break;
		}
		default: {
			BIO *b = BIO_new(BIO_s_mem());

			if (b && GENERAL_NAME_print(b, g) > 0) {
				BIO_puts(b, "\n");
				put_bio(f, b, "  ");
			}
			BIO_free(b);
		}
		}
	}
	fputs("]\n", f);
}

static void put_ku(FILE *f, ASN1_BIT_STRING *ku)
{
	static const char *const names[] = {
		"DigitalSignature", "Non_repudiation", "Key_Encipherment",
		"Data_Encipherment", "Key_Agreement", "Key_CertSign",
		"Crl_Sign", "Encipher_Only", "Decipher_Only"
	};

	fputs("KeyUsage [\n", f);
	for (int i = 0; i < 9; i++)
		if (ASN1_BIT_STRING_get_bit(ku, i))
			fprintf(f, "  %s\n", names[i]);
	fputs("]\n", f);
}

static void put_eku(FILE *f, EXTENDED_KEY_USAGE *eku)
{
	fputs("ExtendedKeyUsages [\n", f);
	for (int i = 0; i < sk_ASN1_OBJECT_num(eku); i++) {
		ASN1_OBJECT *o = sk_ASN1_OBJECT_value(eku, i);
		int nid = OBJ_obj2nid(o);
		char oid[80];

		if (nid != NID_undef && OBJ_nid2sn(nid))
			fprintf(f, "  %s\n", OBJ_nid2sn(nid));
		else {
			OBJ_obj2txt(oid, sizeof(oid), o, 1);
			fprintf(f, "  %s\n", oid);
		}
	}
	fputs("]\n", f);
}

static void put_bc(FILE *f, BASIC_CONSTRAINTS *bc)
{
	fprintf(f, "BasicConstraints:[\n  CA:%s\n", bc->ca ? "true" : "false");
	if (!bc->ca)
		fputs("  PathLen: undefined\n", f);
	else if (!bc->pathlen)
		fputs("  PathLen: no limit\n", f);
	else
		fprintf(f, "  PathLen:%ld\n", ASN1_INTEGER_get(bc->pathlen));
	fputs("]\n", f);
}

static void put_keyid(FILE *f, const char *what, const ASN1_OCTET_STRING *id)
{
	fprintf(f, "%s [\n", what);
	if (id) {
		fputs("KeyIdentifier [\n", f);
		hexdump(f, ASN1_STRING_get0_data(id), ASN1_STRING_length(id));
		fputs("]\n", f);
	}
	fputs("]\n", f);
}

static void put_extension(FILE *f, X509_EXTENSION *ext, int no)
{
	ASN1_OBJECT *obj = X509_EXTENSION_get_object(ext);
	int nid = OBJ_obj2nid(obj), crit = X509_EXTENSION_get_critical(ext);
	void *v = X509V3_EXT_d2i(ext);
	char oid[80];

	OBJ_obj2txt(oid, sizeof(oid), obj, 1);
	fprintf(f, "#%d: ObjectId: %s Criticality=%s\n", no, oid,
		crit ? "true" : "false");
	if (v && nid == NID_subject_alt_name) {
		put_san(f, v);
	} else if (v && nid == NID_key_usage) {
		put_ku(f, v);
	} else if (v && nid == NID_ext_key_usage) {
		put_eku(f, v);
	} else if (v && nid == NID_basic_constraints) {
		put_bc(f, v);
	} else if (v && nid == NID_subject_key_identifier) {
		put_keyid(f, "SubjectKeyIdentifier", v);
	} else if (v && nid == NID_authority_key_identifier) {
		put_keyid(f, "AuthorityKeyIdentifier",
			  ((AUTHORITY_KEYID *)v)->keyid);
	} else {
		BIO *b = BIO_new(BIO_s_mem());

		fprintf(f, "%s [\n", nid != NID_undef ? OBJ_nid2ln(nid) : oid);
		if (b && X509V3_EXT_print(b, ext, X509V3_EXT_DUMP_UNKNOWN,
					  0) > 0) {
			BIO_puts(b, "\n");
			put_bio(f, b, "  ");
		}
		BIO_free(b);
		fputs("]\n", f);
	}
	fputc('\n', f);
	if (v) {
		const X509V3_EXT_METHOD *m = X509V3_EXT_get(ext);

		if (m && m->it)
			ASN1_item_free(v, ASN1_ITEM_ptr(m->it));
		else if (m && m->ext_free)
			m->ext_free(v);
	}
	ERR_clear_error();
}

/* keytool lists extensions sorted by their Java name (a TreeMap); the
 * ones Java has no class for by their OID. */
static const char *java_ext_name(X509_EXTENSION *ext, char *oid, size_t len)
{
	static const struct { int nid; const char *name; } names[] = {
		{ NID_authority_key_identifier, "AuthorityKeyIdentifier" },
		{ NID_info_access, "AuthorityInfoAccess" },
		{ NID_basic_constraints, "BasicConstraints" },
		{ NID_crl_distribution_points, "CRLDistributionPoints" },
		{ NID_certificate_policies, "CertificatePolicies" },
		{ NID_ext_key_usage, "ExtendedKeyUsage" },
		{ NID_freshest_crl, "FreshestCRL" },
		{ NID_inhibit_any_policy, "InhibitAnyPolicy" },
		{ NID_issuer_alt_name, "IssuerAlternativeName" },
		{ NID_key_usage, "KeyUsage" },
		{ NID_name_constraints, "NameConstraints" },
		{ NID_netscape_cert_type, "NetscapeCertType" },
		{ NID_policy_constraints, "PolicyConstraints" },
		{ NID_policy_mappings, "PolicyMappings" },
		{ NID_private_key_usage_period, "PrivateKeyUsage" },
		{ NID_subject_alt_name, "SubjectAlternativeName" },
		{ NID_sinfo_access, "SubjectInfoAccess" },
		{ NID_subject_key_identifier, "SubjectKeyIdentifier" },
	};
	int nid = OBJ_obj2nid(X509_EXTENSION_get_object(ext));

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (names[i].nid == nid)
			return names[i].name;
	OBJ_obj2txt(oid, (int)len, X509_EXTENSION_get_object(ext), 1);
	return oid;
}

static void put_extensions(FILE *f, const STACK_OF(X509_EXTENSION) *exts)
{
	int n = sk_X509_EXTENSION_num(exts), *order;
	char (*keys)[80];

	order = malloc((size_t)n * sizeof(*order));
	keys = malloc((size_t)n * sizeof(*keys));
	if (!order || !keys) {
		free(order);
		free(keys);
		cli_err(NULL, "out of memory");
		return;
	}
	for (int i = 0; i < n; i++) {
		char oid[80];

		snprintf(keys[i], sizeof(keys[i]), "%s",
			 java_ext_name(sk_X509_EXTENSION_value(exts, i), oid,
				       sizeof(oid)));
		order[i] = i;
	}
	/* Insertion sort (stable): extensions are few. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 &&
		     strcmp(keys[order[j - 1]], keys[order[j]]) > 0; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	fputs("\nExtensions: \n\n", f);
	for (int i = 0; i < n; i++)
		put_extension(f, sk_X509_EXTENSION_value(exts, order[i]),
			      i + 1);
	free(order);
	free(keys);
}

static void print_one(FILE *f, X509 *x)
{
	const STACK_OF(X509_EXTENSION) *exts = X509_get0_extensions(x);
	char sig[96], key[128];

	sigalg_name(sig, sizeof(sig), x);
	key_text(key, sizeof(key), x);
	fputs("Owner: ", f);
	put_name(f, X509_get_subject_name(x));
	fputs("\nIssuer: ", f);
	put_name(f, X509_get_issuer_name(x));
	fputs("\nSerial number: ", f);
	put_serial(f, X509_get0_serialNumber(x));
	fputs("\nValid from: ", f);
	put_time(f, X509_get0_notBefore(x));
	fputs(" until: ", f);
	put_time(f, X509_get0_notAfter(x));
	fputs("\nCertificate fingerprints:\n", f);
	put_fingerprint(f, x, EVP_sha1(), "SHA1");
	put_fingerprint(f, x, EVP_sha256(), "SHA256");
	fprintf(f, "Signature algorithm name: %s\n", sig);
	fprintf(f, "Subject Public Key Algorithm: %s\n", key);
	fprintf(f, "Version: %ld\n", X509_get_version(x) + 1);
	if (sk_X509_EXTENSION_num(exts) > 0)
		put_extensions(f, exts);
}

void cli_print_certs(FILE *f, STACK_OF(X509) *certs)
{
	int n = sk_X509_num(certs);

	for (int i = 0; i < n; i++) {
		if (n > 1)
			fprintf(f, "%sCertificate[%d]:\n", i ? "\n" : "", i + 1);
		print_one(f, sk_X509_value(certs, i));
	}
}

int cmd_printcert(cli_ctx *c)
{
	STACK_OF(X509) *certs = sk_X509_new_null();
	const char *file = c->file ? c->file : "-";
	int rc;

	if (!certs) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((rc = cli_load_certs_p7(certs, file)) == 0)
		cli_print_certs(stdout, certs);
	sk_X509_pop_free(certs, X509_free);
	return rc;
}
