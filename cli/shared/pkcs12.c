/*
 * PKCS#12 for wks(1): the tool's side of import-p12, export-p12, convert
 * and import-keystore's PKCS#12 branch.  The file is read and written by
 * the library (wks/convert.h: wks_p12_parse(), wks_convert_write_p12_keys();
 * MAC first, bounded iteration counts and chain building); here are what
 * the tool decides per entry: names, the checks before anything changes,
 * key passwords (--keypass-for, prompts) and the messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include "cli.h"
#include "wks/convert.h"

/* ---- reading -------------------------------------------------------------- */

void cli_p12_free(cli_p12_entry *e, size_t count)
{
	for (size_t i = 0; e && i < count; i++) {
		free(e[i].alias);
		cli_free_secret(e[i].pkcs8, e[i].pkcs8_len);
		free(e[i].algorithm);
		sk_X509_pop_free(e[i].chain, X509_free);
	}
	free(e);
}

/* What the library skipped: one note each, then the count. */
static void skip_notes(const wks_p12_file *f, const char *file)
{
	const wks_convert_report *r = wks_p12_skipped(f);
	size_t n = wks_convert_report_skipped(r);

	for (size_t i = 0; i < n; i++) {
		const char *a = wks_convert_report_alias(r, i);
		char *d = a && *a ? cli_display(a) : NULL;
		char *why = cli_display(wks_convert_report_detail(r, i));

		if (d)
			cli_note(file, "\"%s\" skipped: %s", d, why ? why : "");
		else
			cli_note(file, "an unnamed item skipped: %s",
				 why ? why : "");
		free(d);
		free(why);
	}
	if (n)
		cli_note(file, "%zu item(s) skipped (named above)", n);
}

static char *dup_or_null(const char *s, int *fail)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*fail = 1;
	return d;
}

int cli_p12_read(cli_p12_entry **out, size_t *count, const char *file,
		 const uint8_t *data, size_t len, const cli_pw *pw,
		 int no_mac_ok)
{
	wks_p12_file *f = NULL;
	OSSL_PROVIDER *legacy;
	cli_p12_entry *e = NULL;
	size_t n = 0;
	int mac, err, rc = 0;

	*out = NULL;
	*count = 0;
	if ((mac = wks_p12_has_mac(data, len)) < 0) {
		cli_err(file, "not a PKCS#12 file");
		return CLI_EXIT_MALFORMED;
	}
	if (!mac && !no_mac_ok) {
		/* Without a MAC nothing is authenticated: the contents
		 * would be decrypted and imported as they are. */
		cli_err(file, "has no MAC: its contents cannot be "
			"authenticated (use --no-mac-ok to import it anyway)");
		return CLI_EXIT_INVALID;
	}
	if (!mac)
		cli_note(file, "no MAC: contents not authenticated");
	/* Old files use RC2/3DES with SHA-1: in OpenSSL 3 RC2 needs the
	 * legacy provider (keeping the default one). */
	legacy = OSSL_PROVIDER_try_load(NULL, "legacy", 1);
	ERR_clear_error();
	err = wks_p12_parse(&f, data, len, pw->p ? pw->p : "", pw->len,
			    no_mac_ok ? WKS_CONVERT_NO_MAC_OK : 0);
	if (legacy)
		OSSL_PROVIDER_unload(legacy);
	if (err < 0) {
		char *d = cli_display(wks_error_detail());

		cli_err(file, "%s", d ? d : "cannot read");
		free(d);
		return cli_exit_for(err);
	}
	skip_notes(f, file);
	n = wks_p12_count(f);
	if (!(e = calloc(n ? n : 1, sizeof(*e))))
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *k;
		size_t kl = 0, nc = wks_p12_cert_count(f, i);
		int fail = 0;

		e[i].type = wks_p12_entry_type(f, i);
		e[i].alias = dup_or_null(wks_p12_alias(f, i), &fail);
		e[i].algorithm = dup_or_null(wks_p12_secret_algorithm(f, i),
					     &fail);
		if (fail)
			goto nomem;
		if ((k = wks_p12_key(f, i, &kl)) != NULL) {
			if (!(e[i].pkcs8 = malloc(kl ? kl : 1)))
				goto nomem;
			memcpy(e[i].pkcs8, k, kl);
			e[i].pkcs8_len = kl;
		}
		if (e[i].type == WKS_ENTRY_SECRET_KEY)
			continue;
		if (nc == 0) {
			cli_err(file, "a private key has no certificate (no "
				"localKeyID matches, and no certificate "
				"matches its public key)");
			rc = CLI_EXIT_INVALID;
			goto done;
		}
		if (!(e[i].chain = sk_X509_new_null()))
			goto nomem;
		for (size_t j = 0; j < nc; j++) {
			X509 *x = wks_p12_get_cert(f, i, j);

			if (!x || !sk_X509_push(e[i].chain, x)) {
				X509_free(x);
				goto nomem;
			}
		}
	}
	*out = e;
	*count = n;
	e = NULL;
	goto done;
nomem:
	cli_err(file, "out of memory");
	rc = CLI_EXIT_FAIL;
done:
	cli_p12_free(e, n);
	wks_p12_free(f);
	return rc;
}

size_t cli_p12_key_count(const cli_p12_entry *e, size_t count,
			 const char *only)
{
	size_t n = 0;

	for (size_t i = 0; i < count; i++)
		n += e[i].type != WKS_ENTRY_CERTIFICATE;
	return only && n ? 1 : n;
}

int cli_p12_import(wks_store *st, cli_ctx *c, const char *p12file,
		   cli_p12_entry *e, size_t count, const char *only,
		   const cli_pw *keypw, int prepared)
{
	char **names = calloc(count ? count : 1, sizeof(*names));
	size_t selected = 0, counter = 0, imported = 0, nkeys = 0;
	int rc = 0, err;

	if (!names) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	/* Names: friendlyName, else 1, 2, ... (as Java does). */
	for (size_t i = 0; i < count; i++) {
		char buf[32];

		if (e[i].alias) {
			names[i] = strdup(e[i].alias);
		} else {
			int clash;

			do {
				snprintf(buf, sizeof(buf), "%zu", ++counter);
				clash = 0;
				for (size_t j = 0; j < count; j++)
					clash |= e[j].alias &&
						 !strcmp(e[j].alias, buf);
			} while (clash);
			names[i] = strdup(buf);
		}
		if (!names[i]) {
			cli_err(NULL, "out of memory");
			rc = CLI_EXIT_FAIL;
			goto done;
		}
	}
	if (count == 0) {
		cli_err(p12file, "holds no key or certificate");
		rc = CLI_EXIT_NOTFOUND;
		goto done;
	}
	if (only) {
		for (size_t i = 0; i < count; i++)
			if (!strcmp(names[i], only))
				selected++;
		if (!selected && count == 1) {
			/* A single entry takes the name asked for. */
			free(names[0]);
			names[0] = strdup(only);
			if (!names[0]) {
				rc = CLI_EXIT_FAIL;
				goto done;
			}
			selected = 1;
		}
		if (!selected) {
			char *d = cli_display(only);

			cli_err(p12file, "no entry named \"%s\"", d ? d : "");
			free(d);
			for (size_t i = 0; i < count; i++) {
				d = cli_display(names[i]);
				cli_note(p12file, "it holds \"%s\" (%s)",
					 d ? d : "",
					 e[i].type == WKS_ENTRY_PRIVATE_KEY ?
						 "private-key" :
					 e[i].type == WKS_ENTRY_SECRET_KEY ?
						 "secret-key" : "certificate");
				free(d);
			}
			rc = CLI_EXIT_NOTFOUND;
			goto done;
		}
	}
	/* Check everything before changing anything. */
	for (size_t i = 0; i < count; i++) {
		if (only && strcmp(names[i], only))
			continue;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]) &&
			    (!only || !strcmp(names[j], only))) {
				char *d = cli_display(names[i]);

				cli_err(p12file, "two entries are named \"%s\"",
					d ? d : "");
				free(d);
				rc = CLI_EXIT_INVALID;
				goto done;
			}
		if ((rc = cli_check_alias_free(st, c, names[i])) != 0)
			goto done;
		/* What Java cannot read: a warning, or with --strict-java an
		 * error before anything changed; and an expired chain. */
		if (e[i].type == WKS_ENTRY_PRIVATE_KEY &&
		    (rc = cli_java_check(c, p12file, names[i], e[i].pkcs8,
					 e[i].pkcs8_len)) != 0)
			goto done;
		if (e[i].type == WKS_ENTRY_SECRET_KEY &&
		    (rc = cli_java_check(c, p12file, names[i], NULL, 0)) != 0)
			goto done;
		for (int m = 0; m < sk_X509_num(e[i].chain); m++)
			cli_warn_validity(p12file, names[i],
					  sk_X509_value(e[i].chain, m));
	}
	/* The new keys' derivations in one batch (if that fails, each set
	 * derives its own). */
	for (size_t i = 0; i < count; i++)
		nkeys += e[i].type != WKS_ENTRY_CERTIFICATE &&
			 (!only || !strcmp(names[i], only));
	if (nkeys > 1 && !prepared)
		(void)wks_store_prepare_keys(st, keypw->p, keypw->len,
					     nkeys < 1024 ? nkeys : 1024);
	for (size_t i = 0; i < count; i++) {
		if (only && strcmp(names[i], only))
			continue;
		if (e[i].type == WKS_ENTRY_PRIVATE_KEY) {
			int n = sk_X509_num(e[i].chain);
			const uint8_t **ders = calloc((size_t)n, sizeof(*ders));
			size_t *lens = calloc((size_t)n, sizeof(*lens));
			unsigned char **bufs = calloc((size_t)n, sizeof(*bufs));

			err = (ders && lens && bufs) ? 0 : WKS_ERR_NOMEM;
			for (int m = 0; m < n && !err; m++) {
				int dl = i2d_X509(sk_X509_value(e[i].chain, m),
						  &bufs[m]);

				if (dl <= 0)
					err = WKS_ERR_FORMAT;
				ders[m] = bufs[m];
				lens[m] = dl > 0 ? (size_t)dl : 0;
			}
			if (!err)
				err = wks_store_set_private_key(st, names[i],
						e[i].pkcs8, e[i].pkcs8_len,
						ders, lens, (size_t)n,
						keypw->p, keypw->len);
			for (int m = 0; bufs && m < n; m++)
				OPENSSL_free(bufs[m]);
			free(bufs);
			free(lens);
			free((void *)ders);
		} else if (e[i].type == WKS_ENTRY_SECRET_KEY) {
			err = wks_store_set_secret_key(st, names[i],
						       e[i].algorithm,
						       e[i].pkcs8,
						       e[i].pkcs8_len,
						       keypw->p, keypw->len);
		} else {
			err = wks_store_set_cert(st, names[i],
						 sk_X509_value(e[i].chain, 0));
		}
		if (err < 0) {
			rc = cli_lib_err(p12file, names[i], err,
					 "cannot import");
			goto done;
		}
		cli_say_entry("imported", names[i], NULL, e[i].type,
			      e[i].chain && e[i].type == WKS_ENTRY_PRIVATE_KEY ?
				      (size_t)sk_X509_num(e[i].chain) : 0,
			      e[i].algorithm, e[i].pkcs8_len, NULL);
		imported++;
	}
	cli_say_summary("imported", imported, 0);
done:
	(void)wks_store_prepare_keys(st, NULL, 0, 0); /* any left: wiped */
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* ---- writing -------------------------------------------------------------- */

typedef struct {
	wks_store *st;
	const char *file;
	const cli_pw *keypw;
	int rc; /* cli_key_get()'s exit status */
	/* For the report: the size of each key opened (the last one for an
	 * alias counts). */
	char **alias;
	size_t *key_len, n;
} key_arg;

/* Each key with its own password (--keypass-for, --keypass, the
 * fallback, the prompt), its messages naming the alias. */
static int get_key(void *arg, const char *alias, wks_key **key)
{
	key_arg *k = arg;
	size_t len = 0;
	char **na;
	size_t *nl;

	k->rc = cli_key_get(key, k->st, k->file, alias, k->keypw, NULL, 0,
			    NULL);
	if (k->rc)
		return WKS_ERR_INTEGRITY;
	(void)wks_key_data(*key, &len);
	na = realloc(k->alias, (k->n + 1) * sizeof(*na));
	if (na)
		k->alias = na;
	nl = na ? realloc(k->key_len, (k->n + 1) * sizeof(*nl)) : NULL;
	if (nl)
		k->key_len = nl;
	if (na && nl && (na[k->n] = strdup(alias)) != NULL)
		nl[k->n++] = len;
	return 0; /* the report lacks a size: no reason to fail */
}

static size_t key_len_of(const key_arg *k, const char *alias)
{
	size_t len = 0;

	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->alias[i], alias))
			len = k->key_len[i];
	return len;
}

/* convert's report of a PKCS#12 written (cli_say_entry): every entry
 * exported or skipped, and the summary. */
static void say_exported(wks_store *st, const char *alias, const key_arg *k,
			 const wks_convert_report *rep)
{
	char **aliases = NULL;
	const char *const *list = &alias;
	size_t count = 1, done = 0, skipped = 0;

	if (!alias) {
		if (wks_store_aliases(&aliases, &count, st) < 0)
			return;
		list = (const char *const *)aliases;
	}
	for (size_t i = 0; i < count; i++) {
		const char *a = list[i], *why = NULL;
		wks_entry_type t = wks_store_entry_type(st, a);
		char *alg = NULL;
		size_t n = 0;

		for (size_t j = 0; j < wks_convert_report_skipped(rep); j++)
			if (!strcmp(wks_convert_report_alias(rep, j), a))
				why = wks_convert_report_detail(rep, j);
		if (t == WKS_ENTRY_PRIVATE_KEY || t == WKS_ENTRY_CERTIFICATE)
			(void)wks_store_cert_count(&n, st, a);
		if (t == WKS_ENTRY_PRIVATE_KEY && n == 0)
			why = "it has no certificate";
		if (t == WKS_ENTRY_SECRET_KEY)
			(void)wks_store_secret_algorithm(&alg, st, a);
		cli_say_entry("exported", a, NULL, t, n, alg, key_len_of(k, a),
			      why ? (*why ? why : "skipped") : NULL);
		wks_free(alg);
		if (why)
			skipped++;
		else
			done++;
	}
	cli_say_summary("exported", done, skipped);
	wks_aliases_free(aliases);
}

/* A PKCS#12 key goes with its certificate (localKeyID), and readers
 * (ours, Java's) expect one: a key entry with a chain of 0 (valid in
 * WKS) is named before anything is asked, an error for -a.  Returns 0 or
 * an exit status. */
static int no_chain_check(wks_store *st, const char *file, const char *a,
			  int explicit)
{
	size_t n = 0;
	char *d;
	int err;

	if (wks_store_entry_type(st, a) != WKS_ENTRY_PRIVATE_KEY)
		return 0;
	if ((err = wks_store_cert_count(&n, st, a)) < 0)
		return cli_lib_err(file, a, err, NULL);
	if (n)
		return 0;
	d = cli_display(a);
	if (explicit)
		cli_err(file, "entry \"%s\" has no certificate: PKCS#12 export "
			"needs one", d ? d : "");
	else
		cli_note(file, "private key entry \"%s\" skipped: it has no "
			 "certificate", d ? d : "");
	free(d);
	return explicit ? CLI_EXIT_INVALID : 0;
}

int cli_p12_export(uint8_t **out, size_t *out_len, wks_store *st,
		   const char *file, const char *alias, const cli_pw *keypw,
		   const cli_pw *p12pw, int iterations, int report)
{
	key_arg k = { st, file, keypw, 0, NULL, NULL, 0 };
	wks_convert_report *rep = NULL;
	char **aliases = NULL;
	uint8_t *der = NULL;
	size_t count = 0, der_len = 0;
	int rc = 0, err;

	*out = NULL;
	*out_len = 0;
	if (alias) {
		if (!wks_store_contains(st, alias))
			return cli_lib_err(file, alias, WKS_ERR_NOTFOUND, NULL);
		if ((rc = no_chain_check(st, file, alias, 1)) != 0)
			return rc;
	} else {
		if ((err = wks_store_aliases(&aliases, &count, st)) < 0)
			return cli_lib_err(file, NULL, err, NULL);
		for (size_t i = 0; i < count && rc == 0; i++)
			rc = no_chain_check(st, file, aliases[i], 0);
		wks_aliases_free(aliases);
		if (rc)
			return rc;
	}
	err = wks_convert_write_p12_keys(&der, &der_len, st, alias, get_key,
					 &k, p12pw->p ? p12pw->p : "",
					 p12pw->len, (unsigned)iterations, &rep);
	/* Secret keys PKCS#12 cannot hold (no OID): named. */
	for (size_t i = 0; i < wks_convert_report_skipped(rep); i++) {
		char *d, *why;

		if (wks_convert_report_reason(rep, i) != WKS_ERR_UNSUPPORTED)
			continue; /* no certificate: named above */
		d = cli_display(wks_convert_report_alias(rep, i));
		why = cli_display(wks_convert_report_detail(rep, i));
		cli_note(file, "secret key entry \"%s\" skipped: %s",
			 d ? d : "", why ? why : "");
		free(d);
		free(why);
	}
	if (k.rc) {
		rc = k.rc; /* named by cli_key_get() */
	} else if (err == WKS_ERR_UNSUPPORTED && alias) {
		char *d = cli_display(alias), *why = cli_display(
						      wks_error_detail());

		cli_err(file, "secret key entry \"%s\": %s", d ? d : "",
			why ? why : "");
		free(d);
		free(why);
		rc = CLI_EXIT_INVALID;
	} else if (err == WKS_ERR_INVALID && !alias &&
		   wks_convert_report_done(rep) == 0) {
		cli_err(file, "no entry to export");
		rc = CLI_EXIT_NOTFOUND;
	} else if (err < 0) {
		rc = cli_lib_err(file, alias, err,
				 "cannot build the PKCS#12 file");
	} else if (!(*out = malloc(der_len ? der_len : 1))) {
		cli_err(file, "out of memory");
		rc = CLI_EXIT_FAIL;
	} else {
		memcpy(*out, der, der_len);
		*out_len = der_len;
		if (report)
			say_exported(st, alias, &k, rep);
	}
	for (size_t i = 0; i < k.n; i++)
		free(k.alias[i]);
	free(k.alias);
	free(k.key_len);
	wks_free(der);
	wks_convert_report_free(rep);
	return rc;
}
