/*
 * wks list: the entries of a store, as text (-v for certificate details)
 * or as one JSON object (--json) for scripts.  It runs without a password
 * on files from anywhere: every string from the file is escaped, and an
 * entry may lack what a well-formed one has (a private key with a chain
 * of 0).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/x509.h>

#include "cli.h"

static const char *type_name(wks_entry_type t)
{
	switch (t) {
	case WKS_ENTRY_PRIVATE_KEY: return "private-key";
	case WKS_ENTRY_CERTIFICATE: return "certificate";
	case WKS_ENTRY_SECRET_KEY: return "secret-key";
	default: return "unknown";
	}
}

/* The JCA algorithm of a secret key entry (stored in clear). */
static char *secret_algorithm(wks_store *st, const char *alias)
{
	char *alg = NULL, *copy = NULL;

	if (wks_store_secret_algorithm(&alg, st, alias) == WKS_OK)
		copy = strdup(alg);
	wks_free(alg);
	return copy;
}

static int json_entry(FILE *f, wks_store *st, const char *file,
		      const char *alias, int first)
{
	wks_entry_type t = wks_store_entry_type(st, alias);
	int64_t ms = 0;
	size_t n = 0;
	int err;

	if ((err = wks_store_creation_time(&ms, st, alias)) < 0)
		return cli_lib_err(file, alias, err, NULL);
	fputs(first ? "\n  {\"alias\": " : ",\n  {\"alias\": ", f);
	cli_json_string(f, alias);
	fprintf(f, ", \"type\": \"%s\", \"created_ms\": %" PRId64,
		type_name(t), ms);
	if (t == WKS_ENTRY_PRIVATE_KEY || t == WKS_ENTRY_CERTIFICATE) {
		if ((err = wks_store_cert_count(&n, st, alias)) < 0)
			return cli_lib_err(file, alias, err, NULL);
		fputs(t == WKS_ENTRY_PRIVATE_KEY ? ", \"chain_sha256\": ["
						 : ", \"cert_sha256\": ", f);
		for (size_t i = 0; i < n; i++) {
			uint8_t *der = NULL;
			size_t len = 0;
			char hex[65];

			err = wks_store_get_cert_der(&der, &len, st, alias, i);
			if (err < 0)
				return cli_lib_err(file, alias, err, NULL);
			cli_sha256_hex(hex, der, len);
			wks_free(der);
			fprintf(f, "%s\"%s\"", i ? ", " : "", hex);
			if (t == WKS_ENTRY_CERTIFICATE)
				break;
		}
		if (t == WKS_ENTRY_PRIVATE_KEY)
			fputc(']', f);
		/* Details per certificate (for monitoring: not_after). */
		fputs(", \"certificates\": [", f);
		for (size_t i = 0; i < n; i++) {
			X509 *x = NULL;

			if (i)
				fputs(", ", f);
			/* A certificate OpenSSL cannot parse still has its
			 * SHA-256 above: null here, not a failed listing. */
			if (wks_store_get_cert(&x, st, alias, i) < 0)
				fputs("null", f);
			else
				cli_json_cert(f, x);
			X509_free(x);
		}
		fputc(']', f);
	} else if (t == WKS_ENTRY_SECRET_KEY) {
		char *alg = secret_algorithm(st, alias);

		if (alg) {
			fputs(", \"algorithm\": ", f);
			cli_json_string(f, alg);
		} else {
			fputs(", \"algorithm\": null", f);
		}
		free(alg);
	}
	fputc('}', f);
	return 0;
}

static int text_entry(FILE *f, wks_store *st, const char *file,
		      const char *alias, int verbose,
		      int width)
{
	wks_entry_type t = wks_store_entry_type(st, alias);
	STACK_OF(X509) *certs = NULL;
	char when[64], desc[128] = "";
	char *d = cli_display(alias);
	int64_t ms = 0;
	int err, rc = 0;

	if ((err = wks_store_creation_time(&ms, st, alias)) < 0) {
		rc = cli_lib_err(file, alias, err, NULL);
		goto done;
	}
	cli_format_time(when, sizeof(when), ms);
	if (t != WKS_ENTRY_SECRET_KEY &&
	    (rc = cli_store_certs(&certs, st, file, alias)) != 0)
		goto done;
	if (t == WKS_ENTRY_PRIVATE_KEY) {
		int n = sk_X509_num(certs);

		cli_key_desc(desc, sizeof(desc), sk_X509_value(certs, 0));
		snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc),
			 ", chain of %d", n);
	} else if (t == WKS_ENTRY_CERTIFICATE) {
		cli_key_desc(desc, sizeof(desc), sk_X509_value(certs, 0));
	} else {
		/* The algorithm name is text from the file: escaped, like
		 * the alias, so that it cannot drive the terminal. */
		char *alg = secret_algorithm(st, alias);
		char *da = alg ? cli_display(alg) : NULL;

		snprintf(desc, sizeof(desc), "%s",
			 !da ? "?" : *da ? da : "\"\"");
		free(da);
		free(alg);
	}
	if (!verbose) {
		fprintf(f, "%-*s  %-11s  %s  %s\n", width,
			d && *d ? d : "\"\"", type_name(t), when, desc);
		goto done;
	}
	fprintf(f, "Alias:    %s\nType:     %s\nCreated:  %s\n", d ? d : "",
		type_name(t), when);
	if (t == WKS_ENTRY_SECRET_KEY) {
		fprintf(f, "Algorithm: %s\n", desc);
	} else {
		if (t == WKS_ENTRY_PRIVATE_KEY)
			fprintf(f, "Chain:    %d certificate%s\n",
				sk_X509_num(certs),
				sk_X509_num(certs) == 1 ? "" : "s");
		for (int i = 0; i < sk_X509_num(certs); i++) {
			fprintf(f, "  [%d]\n", i);
			cli_print_cert(f, sk_X509_value(certs, i), 4);
			cli_print_cert_details(f, sk_X509_value(certs, i), 4);
		}
	}
	fputc('\n', f);
done:
	sk_X509_pop_free(certs, X509_free);
	free(d);
	return rc;
}

int cmd_list(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT;
	char **aliases = NULL, *one[2] = { NULL, NULL };
	char *const *list;
	size_t count = 0;
	int rc, err, width = 5;

	if ((rc = cli_store_open(&st, &pw, c, CLI_STORE_OPTIONAL)) != 0)
		return rc;
	if (c->alias) {
		if (!wks_store_contains(st, c->alias)) {
			rc = cli_lib_err(c->keystore, c->alias,
					 WKS_ERR_NOTFOUND, NULL);
			goto done;
		}
		one[0] = (char *)c->alias;
		list = one;
		count = 1;
	} else {
		if ((err = wks_store_aliases(&aliases, &count, st)) < 0) {
			rc = cli_lib_err(c->keystore, NULL, err, NULL);
			goto done;
		}
		list = aliases;
	}
	if (c->json) {
		fputs("{\"entries\": [", stdout);
		for (size_t i = 0; i < count && rc == 0; i++)
			rc = json_entry(stdout, st, c->keystore, list[i],
					i == 0);
		fputs(count ? "\n]}\n" : "]}\n", stdout);
		goto done;
	}
	for (size_t i = 0; i < count; i++) {
		char *d = cli_display(list[i]);
		int w = d ? (int)strlen(d) : 0;

		if (w > width && w < 40)
			width = w;
		free(d);
	}
	if (!c->alias) {
		/* A file name may hold control characters too (a name
		 * from a listing of someone else's folder). */
		char *dk = cli_display(c->keystore);

		printf("Keystore %s: %zu entr%s\n%s", dk ? dk : "", count,
		       count == 1 ? "y" : "ies", count ? "\n" : "");
		free(dk);
	}
	for (size_t i = 0; i < count && rc == 0; i++)
		rc = text_entry(stdout, st, c->keystore, list[i],
				c->verbose, width);
done:
	wks_aliases_free(aliases);
	wks_store_free(st);
	cli_pw_clear(&pw);
	return rc;
}
