/*
 * wks export-key --reference: write a key reference file (a PEM block
 * "WKS KEY REFERENCE" holding a wks: URI, wks/uri.h) that servers read as
 * their private key through wks.so's decoder (docs/PROVIDER.md, "Key
 * references").  It names the store (absolute path), the alias and where
 * the passwords come from (--ref-storepass, --ref-keypass: file:, env:,
 * fd:; never pass:), and is checked before it is written: parsed back as
 * the decoder parses it, and the key opened with the passwords it names
 * (a source the tool cannot read now, fd:, is replaced by --storepass /
 * --keypass or the prompt).  The library writes the file
 * (wks_ref_encode()), note included, escaped so that no store path adds a
 * line to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include <wks/uri.h>

#include "cli.h"

/* A --ref-storepass / --ref-keypass value as a reference source (*out
 * NULL: none); file: paths made absolute (the server's working directory
 * is not ours). */
static int ref_src(wks_pwsrc **out, const char *arg, const char *option)
{
	char *abs = NULL, *text = NULL;
	size_t n;
	int rc = 0;

	*out = NULL;
	if (!arg)
		return 0;
	if (!strncmp(arg, "pass:", 5)) {
		cli_err(NULL, "%s: a key reference holds no password: use "
			"file:PATH, env:VAR or fd:N, not pass:", option);
		return CLI_EXIT_USAGE;
	}
	if (!strncmp(arg, "file:", 5) && arg[5]) {
		if (!(abs = realpath(arg + 5, NULL))) {
			cli_err(arg + 5, "%s: %s", option, strerror(errno));
			return CLI_EXIT_IO;
		}
		n = strlen(abs) + 6;
		if (!(text = malloc(n))) {
			free(abs);
			cli_err(NULL, "out of memory");
			return CLI_EXIT_FAIL;
		}
		snprintf(text, n, "file:%s", abs);
		arg = text;
	} else if (!(!strncmp(arg, "env:", 4) && arg[4]) &&
		   !(!strncmp(arg, "fd:", 3) && arg[3] &&
		     strspn(arg + 3, "0123456789") == strlen(arg + 3) &&
		     strlen(arg + 3) <= 7)) {
		cli_err(NULL, "%s: expected file:PATH, env:VAR or fd:N", option);
		return CLI_EXIT_USAGE;
	}
	if (wks_pwsrc_parse(out, arg, strlen(arg)) < 0) {
		cli_err(NULL, "%s: %s", option, wks_error_detail());
		rc = CLI_EXIT_USAGE;
	}
	free(text);
	free(abs);
	return rc;
}

/* Read a file:/env: source as the provider will (wks_pwsrc_read()):
 * 0 with *pw set, 0 with *pw NULL for fd: (not readable here), or an
 * exit status. */
static int read_src(cli_pw *pw, const wks_pwsrc *s, const char *option)
{
	cli_pw got = CLI_PW_INIT;
	wks_pw_kind kind = wks_pwsrc_kind(s);
	const char *var = wks_pwsrc_value(s, NULL);
	int rc;

	pw->p = NULL;
	pw->len = 0;
	if (kind != WKS_PW_FILE && kind != WKS_PW_ENV)
		return 0;
	if (kind == WKS_PW_ENV && !getenv(var)) {
		/* The server's environment, not ours. */
		fprintf(stderr, "wks: note: %s: %s is not set here; checking "
			"with %s or the prompt instead\n", option, var,
			strcmp(option, "--ref-keypass") ? "--storepass" :
			"--keypass");
		return 0;
	}
	if (wks_pwsrc_read(&got.p, &got.len, s, option) < 0) {
		cli_err(NULL, "%s", wks_error_detail());
		return CLI_EXIT_USAGE;
	}
	rc = cli_pw_dup(pw, &got);
	wks_free(got.p); /* wipes */
	return rc;
}

static int same_pw(const cli_pw *a, const cli_pw *b)
{
	return a->len == b->len && CRYPTO_memcmp(a->p, b->p, a->len) == 0;
}

int cli_export_reference(cli_ctx *c)
{
	wks_pwsrc *rs = NULL, *rk = NULL;
	wks_uri *u = NULL;
	wks_store *st = NULL;
	wks_key *key = NULL;
	cli_pw pw = CLI_PW_INIT, rpw = CLI_PW_INIT, kpw = CLI_PW_INIT;
	char *abs = NULL, *text = NULL, *d = NULL;
	size_t text_len = 0;
	int rc, e, k_from_ref;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0)
		return rc;
	if (c->der || c->encrypt || c->outpass.kind != CLI_PWSRC_NONE ||
	    c->no_storepass) {
		cli_err(NULL, "export-key --reference: --der, --encrypt, "
			"--outpass and --no-storepass do not apply");
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_output_check(c, c->out)) != 0 ||
	    (rc = ref_src(&rs, c->ref_storepass, "--ref-storepass")) != 0 ||
	    (rc = ref_src(&rk, c->ref_keypass, "--ref-keypass")) != 0)
		goto done;
	if (!(abs = realpath(c->keystore, NULL))) {
		cli_err(c->keystore, "%s", strerror(errno));
		rc = CLI_EXIT_IO;
		goto done;
	}
	/* The store password the server will use: the reference's source
	 * when the tool can read it (else --storepass or the prompt). */
	if ((rc = read_src(&rpw, rs, "--ref-storepass")) != 0)
		goto done;
	if (rpw.p && c->storepass.kind == CLI_PWSRC_NONE &&
	    (rc = cli_pwsrc_parse(&c->storepass, "--ref-storepass",
				  (char *)c->ref_storepass)) != 0)
		goto done;
	if ((rc = cli_store_open(&st, &pw, c, CLI_STORE_VERIFY)) != 0)
		goto done;
	if (rpw.p && !same_pw(&pw, &rpw)) {
		cli_err(c->keystore, "--ref-storepass gives another password "
			"than the store's");
		rc = CLI_EXIT_INTEGRITY;
		goto done;
	}
	if (wks_store_entry_type(st, c->alias) != WKS_ENTRY_PRIVATE_KEY) {
		d = cli_display(c->alias);
		if (wks_store_entry_type(st, c->alias) == WKS_ENTRY_NONE) {
			rc = cli_lib_err(c->keystore, c->alias,
					 WKS_ERR_NOTFOUND, NULL);
		} else {
			cli_err(c->keystore, "entry \"%s\" is not a private "
				"key: a reference names a private key",
				d ? d : "");
			rc = CLI_EXIT_INVALID;
		}
		goto done;
	}

	/* The key password the server will use: --ref-keypass, else the
	 * store password; if that is not it, the server's passphrase
	 * callback must give it (checked here with --keypass or the
	 * prompt). */
	if ((rc = read_src(&kpw, rk, "--ref-keypass")) != 0)
		goto done;
	k_from_ref = kpw.p != NULL;
	if (!kpw.p && !rk &&
	    (rc = cli_pw_dup(&kpw, &pw)) != 0)
		goto done;
	e = kpw.p ? wks_store_get_key(&key, st, c->alias, kpw.p, kpw.len) :
		    WKS_ERR_INTEGRITY;
	if (e == WKS_ERR_INTEGRITY && k_from_ref) {
		rc = cli_lib_err(c->keystore, c->alias, e, "--ref-keypass");
		goto done;
	}
	if (e == WKS_ERR_INTEGRITY) {
		cli_pw_clear(&kpw);
		if ((rc = cli_keypass(&kpw, c, &pw, c->alias)) != 0 ||
		    (rc = cli_key_get(&key, st, c->keystore, c->alias, &kpw,
				      NULL, 0, NULL)) != 0)
			goto done;
		if (!rk)
			fprintf(stderr, "wks: note: the key's password is not "
				"the store password: the server must give it "
				"(its passphrase callback), or use "
				"--ref-keypass\n");
	} else if (e < 0) {
		rc = cli_lib_err(c->keystore, c->alias, e, NULL);
		goto done;
	}

	/* The file (a note for people, then the block), and what the
	 * decoder will read of it: the same store, alias and sources. */
	if ((e = wks_ref_encode(&text, &text_len, abs, c->alias, rs, rk)) < 0) {
		rc = cli_lib_err(c->keystore, NULL, e, NULL);
		goto done;
	}
	if (wks_ref_parse(&u, text, text_len) < 0) {
		cli_err(c->keystore, "internal error: %s", wks_error_detail());
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	if (strcmp(wks_uri_path(u), abs) != 0 ||
	    strcmp(wks_uri_alias(u), c->alias) != 0 ||
	    wks_pwsrc_kind(wks_uri_storepass(u)) != wks_pwsrc_kind(rs) ||
	    wks_pwsrc_kind(wks_uri_keypass(u)) != wks_pwsrc_kind(rk)) {
		cli_err(c->keystore, "internal error: the reference does not "
			"read back as written");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	rc = cli_write_output(c, c->out, (const uint8_t *)text, text_len, 0, 0);
done:
	wks_uri_free(u);
	wks_free(text);
	free(abs);
	free(d);
	wks_key_free(key);
	wks_store_free(st);
	cli_pw_clear(&pw);
	cli_pw_clear(&rpw);
	cli_pw_clear(&kpw);
	wks_pwsrc_free(rs);
	wks_pwsrc_free(rk);
	return rc;
}
