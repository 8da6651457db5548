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
		cli_json_certs(f, st, alias, n);
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

/* Columns a code point takes on a terminal: 0 for combining marks and
 * zero-width characters, 2 for East Asian wide and fullwidth ones and
 * emoji, else 1 (the ranges wcwidth() uses, without depending on the
 * locale: aliases are UTF-8 whatever it is). */
static int cp_width(uint32_t c)
{
	static const uint32_t zero[][2] = {
		{ 0x0300, 0x036F }, { 0x0483, 0x0489 }, { 0x0591, 0x05BD },
		{ 0x0610, 0x061A }, { 0x064B, 0x065F }, { 0x0E31, 0x0E31 },
		{ 0x0E34, 0x0E3A }, { 0x0E47, 0x0E4E }, { 0x1AB0, 0x1AFF },
		{ 0x1DC0, 0x1DFF }, { 0x200B, 0x200F }, { 0x202A, 0x202E },
		{ 0x2060, 0x2064 }, { 0x20D0, 0x20FF }, { 0xFE00, 0xFE0F },
		{ 0xFE20, 0xFE2F }, { 0xFEFF, 0xFEFF }, { 0xE0100, 0xE01EF }
	};
	static const uint32_t wide[][2] = {
		{ 0x1100, 0x115F }, { 0x231A, 0x231B }, { 0x2329, 0x232A },
		{ 0x23E9, 0x23EC }, { 0x25FD, 0x25FE }, { 0x2614, 0x2615 },
		{ 0x2648, 0x2653 }, { 0x26AA, 0x26AB }, { 0x26BD, 0x26BE },
		{ 0x26F5, 0x26F5 }, { 0x26FA, 0x26FA }, { 0x26FD, 0x26FD },
		{ 0x2705, 0x2705 }, { 0x270A, 0x270B }, { 0x2728, 0x2728 },
		{ 0x274C, 0x274C }, { 0x2753, 0x2755 }, { 0x2757, 0x2757 },
		{ 0x2795, 0x2797 }, { 0x27B0, 0x27B0 }, { 0x27BF, 0x27BF },
		{ 0x2B1B, 0x2B1C }, { 0x2B50, 0x2B50 }, { 0x2B55, 0x2B55 },
		{ 0x2E80, 0x303E }, { 0x3041, 0x33FF }, { 0x3400, 0x4DBF },
		{ 0x4E00, 0x9FFF }, { 0xA000, 0xA4CF }, { 0xA960, 0xA97F },
		{ 0xAC00, 0xD7A3 }, { 0xF900, 0xFAFF }, { 0xFE10, 0xFE19 },
		{ 0xFE30, 0xFE6F }, { 0xFF00, 0xFF60 }, { 0xFFE0, 0xFFE6 },
		{ 0x16FE0, 0x18CFF }, { 0x1B000, 0x1B2FF }, { 0x1F004, 0x1F004 },
		{ 0x1F0CF, 0x1F0CF }, { 0x1F18E, 0x1F18E }, { 0x1F191, 0x1F19A },
		{ 0x1F200, 0x1F251 }, { 0x1F300, 0x1F320 }, { 0x1F32D, 0x1F335 },
		{ 0x1F337, 0x1F37C }, { 0x1F37E, 0x1F393 }, { 0x1F3A0, 0x1F3CA },
		{ 0x1F3CF, 0x1F3D3 }, { 0x1F3E0, 0x1F3F0 }, { 0x1F3F4, 0x1F3F4 },
		{ 0x1F3F8, 0x1F43E }, { 0x1F440, 0x1F440 }, { 0x1F442, 0x1F4FC },
		{ 0x1F4FF, 0x1F53D }, { 0x1F54B, 0x1F54E }, { 0x1F550, 0x1F567 },
		{ 0x1F57A, 0x1F57A }, { 0x1F595, 0x1F596 }, { 0x1F5A4, 0x1F5A4 },
		{ 0x1F5FB, 0x1F64F }, { 0x1F680, 0x1F6C5 }, { 0x1F6CC, 0x1F6CC },
		{ 0x1F6D0, 0x1F6D2 }, { 0x1F6D5, 0x1F6D7 }, { 0x1F6EB, 0x1F6EC },
		{ 0x1F6F4, 0x1F6FC }, { 0x1F7E0, 0x1F7EB }, { 0x1F90C, 0x1F93A },
		{ 0x1F93C, 0x1F945 }, { 0x1F947, 0x1F9FF }, { 0x1FA70, 0x1FAFF },
		{ 0x20000, 0x2FFFD }, { 0x30000, 0x3FFFD }
	};

	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		if (c >= zero[i][0] && c <= zero[i][1])
			return 0;
	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
		if (c >= wide[i][0] && c <= wide[i][1])
			return 2;
	return 1;
}

/* The display width of UTF-8 text (cli_display() output: printable;
 * a byte that starts no valid sequence counts one column). */
static int text_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int w = 0;

	while (p && *p) {
		uint32_t c = *p;
		int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 :
			(c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
		int k;

		if (n < 0) {
			w++;
			p++;
			continue;
		}
		c &= n ? 0x3Fu >> n : 0x7Fu;
		for (k = 1; k <= n && (p[k] & 0xC0) == 0x80; k++)
			c = c << 6 | (p[k] & 0x3Fu);
		if (k <= n) { /* truncated sequence: one column for the byte */
			w++;
			p++;
			continue;
		}
		w += cp_width(c);
		p += n + 1;
	}
	return w;
}

static int text_entry(FILE *f, wks_store *st, const char *file,
		      const char *alias, int verbose,
		      int width)
{
	wks_entry_type t = wks_store_entry_type(st, alias);
	cli_chain *certs = NULL;
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
	    (rc = cli_chain_load(&certs, st, file, alias)) != 0)
		goto done;
	if (t == WKS_ENTRY_PRIVATE_KEY) {
		int n = cli_chain_count(certs);

		cli_chain_key_desc(desc, sizeof(desc), certs, 0);
		snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc),
			 ", chain of %d", n);
	} else if (t == WKS_ENTRY_CERTIFICATE) {
		cli_chain_key_desc(desc, sizeof(desc), certs, 0);
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
		const char *a = d && *d ? d : "\"\"";
		int pad = width - text_width(a);

		/* Padded by display width, not bytes: a non-ASCII alias
		 * must not shift the columns after it. */
		fprintf(f, "%s%*s  %-11s  %s  %s\n", a, pad > 0 ? pad : 0, "",
			type_name(t), when, desc);
		goto done;
	}
	fprintf(f, "Alias:    %s\nType:     %s\nCreated:  %s\n", d ? d : "",
		type_name(t), when);
	if (t == WKS_ENTRY_SECRET_KEY) {
		fprintf(f, "Algorithm: %s\n", desc);
	} else {
		if (t == WKS_ENTRY_PRIVATE_KEY)
			fprintf(f, "Chain:    %d certificate%s\n",
				cli_chain_count(certs),
				cli_chain_count(certs) == 1 ? "" : "s");
		for (int i = 0; i < cli_chain_count(certs); i++) {
			fprintf(f, "  [%d]\n", i);
			cli_chain_print(f, certs, i, 4);
		}
	}
	fputc('\n', f);
done:
	cli_chain_free(certs);
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

	if ((c->verbose || c->json) && !cli_have_cert_details())
		return cli_needs_openssl(c->json ? "list --json" : "list -v");
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
		int w = d ? text_width(*d ? d : "\"\"") : 0;

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
