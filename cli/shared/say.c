/*
 * wks(1): what an import says it did (cli_say_imported) and the report
 * of a whole-store import or conversion (cli_say_entry, cli_say_summary).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

void cli_say_imported(wks_store *st, const char *alias)
{
	wks_entry_type t = wks_store_entry_type(st, alias);
	char *d = cli_display(alias);
	size_t n = 0;

	if (t == WKS_ENTRY_PRIVATE_KEY) {
		(void)wks_store_cert_count(&n, st, alias);
		printf("Imported private key entry \"%s\" with a chain of %zu\n",
		       d ? d : "", n);
	} else if (t == WKS_ENTRY_CERTIFICATE) {
		printf("Imported certificate entry \"%s\"\n", d ? d : "");
	} else if (t == WKS_ENTRY_SECRET_KEY) {
		char *alg = NULL, *da = NULL;

		if (wks_store_secret_algorithm(&alg, st, alias) == WKS_OK)
			da = cli_display(alg);
		printf("Imported secret key entry \"%s\" (%s)\n", d ? d : "",
		       da ? da : "?");
		free(da);
		wks_free(alg);
	}
	free(d);
}

/* The size of a secret key as Java states it: DES and DESede keys carry
 * a parity bit in every byte (keytool: "168-bit DESede"). */
static size_t key_bits(const char *alg, size_t len)
{
	if (!strcasecmp(alg, "DES") || !strcasecmp(alg, "DESede") ||
	    !strcasecmp(alg, "TripleDES"))
		return len * 7;
	return len * 8;
}

void cli_say_entry(const char *verb, const char *alias, const char *as,
		   wks_entry_type type, size_t ncerts, const char *algorithm,
		   size_t key_len, const char *skip)
{
	char *da = cli_display(alias);
	char *dd = as ? cli_display(as) : NULL;
	char *dw = skip ? cli_display(skip) : NULL;
	char *dalg = algorithm ? cli_display(algorithm) : NULL;

	printf("%s: \"%s\"", skip ? "skipped" : verb, da ? da : "");
	if (dd)
		printf(" as \"%s\"", dd);
	printf(" (%s", type == WKS_ENTRY_PRIVATE_KEY ? "private key" :
		       type == WKS_ENTRY_CERTIFICATE ? "trusted certificate" :
						       "secret key");
	if (type == WKS_ENTRY_PRIVATE_KEY && ncerts)
		printf(", %zu certificate%s", ncerts, ncerts == 1 ? "" : "s");
	if (type == WKS_ENTRY_SECRET_KEY && dalg && !skip)
		printf(", %s %zu bits", dalg, key_bits(algorithm, key_len));
	printf(")%s%s\n", dw ? ": " : "", dw ? dw : "");
	free(da);
	free(dd);
	free(dw);
	free(dalg);
}

void cli_say_summary(const char *verb, size_t done, size_t skipped)
{
	size_t n = done + skipped;

	printf("%zu entr%s: %zu %s, %zu skipped\n", n, n == 1 ? "y" : "ies",
	       done, verb, skipped);
}
