/*
 * Certificate details for wks(1): what `list -v` and `list --json` add to
 * the basics of cli_print_cert() (serial, signature algorithm,
 * fingerprints, extensions, validity status), the warning that an import
 * of an expired certificate gets, and the line an import prints.
 *
 * Everything here quotes bytes of a certificate from anywhere: text goes
 * through cli_display() (or cli_json_string()) before it is printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cli.h"

int cli_cert_validity(X509 *x)
{
	if (X509_cmp_current_time(X509_get0_notAfter(x)) < 0)
		return 1;
	if (X509_cmp_current_time(X509_get0_notBefore(x)) > 0)
		return -1;
	return 0;
}

/* The contents of a memory BIO as a heap string (NULL on failure). */
static char *bio_string(BIO *b)
{
	char *mem, *s;
	long n = BIO_get_mem_data(b, &mem);

	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (s) {
		memcpy(s, mem, (size_t)n);
		s[n] = 0;
	}
	return s;
}

static char *name_text(X509_NAME *name)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s = NULL;

	if (b && X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253 &
				    ~ASN1_STRFLGS_ESC_MSB) >= 0)
		s = bio_string(b);
	BIO_free(b);
	return s;
}

static void iso_time(char *out, size_t out_len, const ASN1_TIME *t)
{
	struct tm tm;

	if (!t || !ASN1_TIME_to_tm(t, &tm) ||
	    !strftime(out, out_len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, out_len, "?");
}

/* The serial as uppercase hex, as `openssl x509 -serial` prints it. */
static char *serial_hex(X509 *x)
{
	BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	char *h = bn ? BN_bn2hex(bn) : NULL, *s = NULL;

	BN_free(bn);
	if (h) {
		s = strdup(h);
		OPENSSL_free(h);
	}
	return s;
}

/* One extension printed by OpenSSL ("DNS:a, IP Address:1.2.3.4"), or
 * NULL when absent. */
static char *ext_text(X509 *x, int nid, int *critical)
{
	int i = X509_get_ext_by_NID(x, nid, -1);
	X509_EXTENSION *ext = i >= 0 ? X509_get_ext(x, i) : NULL;
	BIO *b;
	char *s = NULL;

	if (!ext)
		return NULL;
	*critical = X509_EXTENSION_get_critical(ext);
	if (!(b = BIO_new(BIO_s_mem())))
		return NULL;
	if (!X509V3_EXT_print(b, ext, 0, 0))
		ASN1_STRING_print(b, X509_EXTENSION_get_data(ext));
	s = bio_string(b);
	BIO_free(b);
	/* One line: multi-line values are joined. */
	for (char *p = s; p && *p; p++)
		if (*p == '\n')
			*p = p[1] ? ';' : 0;
	ERR_clear_error();
	return s;
}

static void fingerprint(char *out, X509 *x, const EVP_MD *md)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (X509_digest(x, md, d, &n))
		cli_hex(out, d, n, ':');
	else
		strcpy(out, "?");
}

static const char *sig_name(X509 *x)
{
	int nid = X509_get_signature_nid(x);

	return nid != NID_undef ? OBJ_nid2ln(nid) : "?";
}

/* Key algorithm ("RSA", "EC", "ED25519", "ML-DSA-44", or an OID), size in
 * bits (0 if not known) and EC curve ("" if none). */
static void key_info(X509 *x, char *alg, size_t alg_len, int *bits,
		     char *curve, size_t curve_len)
{
	EVP_PKEY *pk = X509_get0_pubkey(x);
	char desc[128];

	*bits = 0;
	*curve = 0;
	if (pk) {
		const char *t = EVP_PKEY_get0_type_name(pk);
		char group[64] = "";

		snprintf(alg, alg_len, "%s", t ? t : "?");
		*bits = EVP_PKEY_get_bits(pk);
		if (EVP_PKEY_is_a(pk, "EC") &&
		    EVP_PKEY_get_utf8_string_param(pk,
				OSSL_PKEY_PARAM_GROUP_NAME, group,
				sizeof(group), NULL)) {
			const char *nist = EC_curve_nid2nist(OBJ_sn2nid(group));

			snprintf(curve, curve_len, "%s", nist ? nist : group);
		}
	} else {
		cli_key_desc(desc, sizeof(desc), x);
		snprintf(alg, alg_len, "%s", desc);
	}
	if (*bits < 0)
		*bits = 0;
	ERR_clear_error();
}

static void print_field(FILE *f, int indent, const char *label,
			const char *value)
{
	char *d = cli_display(value ? value : "?");

	fprintf(f, "%*s%-8s %s\n", indent, "", label, d ? d : "");
	free(d);
}

void cli_print_cert_details(FILE *f, X509 *x, int indent)
{
	static const struct { int nid; const char *label; } exts[] = {
		{ NID_subject_alt_name, "SAN:" },
		{ NID_key_usage, "KeyUse:" },
		{ NID_ext_key_usage, "ExtUse:" },
		{ NID_basic_constraints, "Basic:" },
	};
	char fp[EVP_MAX_MD_SIZE * 3 + 1];
	char *serial = serial_hex(x);
	int v = cli_cert_validity(x);

	print_field(f, indent, "Status:", v > 0 ? "EXPIRED" :
		    v < 0 ? "NOT YET VALID" : "valid");
	print_field(f, indent, "Serial:", serial);
	print_field(f, indent, "SigAlg:", sig_name(x));
	fingerprint(fp, x, EVP_sha1());
	print_field(f, indent, "SHA-1:", fp);
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		int crit = 0;
		char *t = ext_text(x, exts[i].nid, &crit), *line;

		if (!t)
			continue;
		line = malloc(strlen(t) + 16);
		if (line) {
			sprintf(line, "%s%s", t, crit ? " (critical)" : "");
			print_field(f, indent, exts[i].label, line);
			free(line);
		}
		free(t);
	}
	free(serial);
}

void cli_json_cert(FILE *f, X509 *x)
{
	char nb[32], na[32], alg[128], curve[64], fp[EVP_MAX_MD_SIZE * 3 + 1];
	char *s;
	int bits, v = cli_cert_validity(x);

	fputs("{\"subject\": ", f);
	s = name_text(X509_get_subject_name(x));
	cli_json_string(f, s ? s : "");
	free(s);
	fputs(", \"issuer\": ", f);
	s = name_text(X509_get_issuer_name(x));
	cli_json_string(f, s ? s : "");
	free(s);
	fputs(", \"serial\": ", f);
	s = serial_hex(x);
	cli_json_string(f, s ? s : "");
	free(s);
	iso_time(nb, sizeof(nb), X509_get0_notBefore(x));
	iso_time(na, sizeof(na), X509_get0_notAfter(x));
	fprintf(f, ", \"not_before\": \"%s\", \"not_after\": \"%s\"", nb, na);
	fprintf(f, ", \"status\": \"%s\"", v > 0 ? "expired" :
		v < 0 ? "not_yet_valid" : "valid");
	fputs(", \"signature_algorithm\": ", f);
	cli_json_string(f, sig_name(x));
	fingerprint(fp, x, EVP_sha1());
	fprintf(f, ", \"sha1\": \"%s\"", fp);
	key_info(x, alg, sizeof(alg), &bits, curve, sizeof(curve));
	fputs(", \"key_algorithm\": ", f);
	cli_json_string(f, alg);
	if (bits)
		fprintf(f, ", \"key_size\": %d", bits);
	else
		fputs(", \"key_size\": null", f);
	if (*curve) {
		fputs(", \"key_curve\": ", f);
		cli_json_string(f, curve);
	}
	fputc('}', f);
}

void cli_warn_validity(const char *file, const char *alias, X509 *x)
{
	char when[32];
	char *d, *s;
	int v = x ? cli_cert_validity(x) : 0;

	if (!v)
		return;
	iso_time(when, sizeof(when), v > 0 ? X509_get0_notAfter(x)
					   : X509_get0_notBefore(x));
	s = name_text(X509_get_subject_name(x));
	d = cli_display_escaped(s ? s : "");
	if (alias) {
		char *da = cli_display(alias);

		cli_err(file, "warning: entry \"%s\": certificate \"%s\" %s %s",
			da ? da : "", d ? d : "", v > 0 ? "EXPIRED on" :
			"is NOT YET VALID: it starts on", when);
		free(da);
	} else {
		cli_err(file, "warning: certificate \"%s\" %s %s", d ? d : "",
			v > 0 ? "EXPIRED on" : "is NOT YET VALID: it starts on",
			when);
	}
	free(d);
	free(s);
}
