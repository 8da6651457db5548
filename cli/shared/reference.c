/*
 * wks export-key --reference: write a key reference file (a PEM block
 * "WKS KEY REFERENCE" holding a wks: URI, provider/ref.h) that servers
 * read as their private key through wks.so's decoder (docs/PROVIDER.md,
 * "Key references").  It names the store (absolute path), the alias and
 * where the passwords come from (--ref-storepass, --ref-keypass: file:,
 * env:, fd:; never pass:), and is checked before it is written: parsed
 * back as the decoder parses it, and the key opened with the passwords it
 * names (a source the tool cannot read now, fd:, is replaced by
 * --storepass / --keypass or the prompt).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "pwsrc.h"
#include "ref.h"

/* A --ref-storepass / --ref-keypass value as a reference source; file:
 * paths made absolute (the server's working directory is not ours). */
static int ref_src(wksp_pwsrc *out, const char *arg, const char *option)
{
	char *abs;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (!arg)
		return 0;
	if (!strncmp(arg, "pass:", 5)) {
		cli_err(NULL, "%s: a key reference holds no password: use "
			"file:PATH, env:VAR or fd:N, not pass:", option);
		return CLI_EXIT_USAGE;
	}
	if (!strncmp(arg, "env:", 4) && arg[4]) {
		out->kind = WKSP_PW_ENV;
		out->value = strdup(arg + 4);
	} else if (!strncmp(arg, "file:", 5) && arg[5]) {
		if (!(abs = realpath(arg + 5, NULL))) {
			cli_err(arg + 5, "%s: %s", option, strerror(errno));
			return CLI_EXIT_IO;
		}
		out->kind = WKSP_PW_FILE;
		out->value = abs;
	} else if (!strncmp(arg, "fd:", 3) && arg[3] &&
		   strspn(arg + 3, "0123456789") == strlen(arg + 3) &&
		   strlen(arg + 3) <= 7) {
		out->kind = WKSP_PW_FD;
		out->fd = atoi(arg + 3);
		return 0;
	} else {
		cli_err(NULL, "%s: expected file:PATH, env:VAR or fd:N", option);
		return CLI_EXIT_USAGE;
	}
	if (!out->value) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	out->value_len = strlen(out->value);
	return 0;
}

/* Read a file:/env: source as the provider will (provider/pwsrc.c):
 * 0 with *pw set, 0 with *pw NULL for fd: (not readable here), or an
 * exit status. */
static int read_src(cli_pw *pw, const wksp_pwsrc *s, const char *option)
{
	char err[256];

	pw->p = NULL;
	pw->len = 0;
	if (s->kind != WKSP_PW_FILE && s->kind != WKSP_PW_ENV)
		return 0;
	if (s->kind == WKSP_PW_ENV && !getenv(s->value)) {
		/* The server's environment, not ours. */
		fprintf(stderr, "wks: note: %s: %s is not set here; checking "
			"with %s or the prompt instead\n", option, s->value,
			strcmp(option, "--ref-keypass") ? "--storepass" :
			"--keypass");
		return 0;
	}
	if (wksp_pw_read(&pw->p, &pw->len, s, option, err, sizeof(err)) < 0) {
		cli_err(NULL, "%s", err);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

static int same_pw(const cli_pw *a, const cli_pw *b)
{
	return a->len == b->len && CRYPTO_memcmp(a->p, b->p, a->len) == 0;
}

int cli_export_reference(cli_ctx *c)
{
	wksp_pwsrc rs, rk;
	wksp_uri u;
	wks_store *st = NULL;
	wks_key *key = NULL;
	cli_pw pw = CLI_PW_INIT, rpw = CLI_PW_INIT, kpw = CLI_PW_INIT;
	char *abs = NULL, *uri = NULL, *pem = NULL, *text = NULL, *d = NULL;
	char err[256];
	size_t pem_len = 0, text_len;
	int rc, e, parsed = 0, k_from_ref;

	memset(&rs, 0, sizeof(rs));
	memset(&rk, 0, sizeof(rk));
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
	if ((rc = read_src(&rpw, &rs, "--ref-storepass")) != 0)
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
	if ((rc = read_src(&kpw, &rk, "--ref-keypass")) != 0)
		goto done;
	k_from_ref = kpw.p != NULL;
	if (!kpw.p && rk.kind == WKSP_PW_NONE &&
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
		if (rk.kind == WKSP_PW_NONE)
			fprintf(stderr, "wks: note: the key's password is not "
				"the store password: the server must give it "
				"(its passphrase callback), or use "
				"--ref-keypass\n");
	} else if (e < 0) {
		rc = cli_lib_err(c->keystore, c->alias, e, NULL);
		goto done;
	}

	if (wksp_ref_uri(&uri, abs, c->alias, &rs, &rk, err, sizeof(err)) < 0 ||
	    wksp_ref_pem(&pem, &pem_len, uri, err, sizeof(err)) < 0) {
		cli_err(c->keystore, "%s", err);
		rc = CLI_EXIT_INVALID;
		goto done;
	}
	/* What the decoder will read: the same store, alias and sources. */
	if (wksp_ref_parse(&u, pem, pem_len, err, sizeof(err)) < 0) {
		cli_err(c->keystore, "internal error: %s", err);
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	parsed = 1;
	if (strcmp(u.path, abs) != 0 || strcmp(u.alias, c->alias) != 0 ||
	    u.storepass.kind != rs.kind || u.keypass.kind != rk.kind) {
		cli_err(c->keystore, "internal error: the reference does not "
			"read back as written");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	if (!d)
		d = cli_display(c->alias);
	text_len = strlen(abs) + (d ? strlen(d) : 0) + pem_len + 512;
	if (!(text = malloc(text_len))) {
		cli_err(NULL, "out of memory");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	/* A note for people before the block (PEM readers skip it). */
	snprintf(text, text_len,
		 "# wks key reference: the private key \"%s\" of the store\n"
		 "# %s.  It holds no password (only where the passwords come\n"
		 "# from) and is not secret; keep it writable by its owner only\n"
		 "# (0644, like the server's configuration).  Read by wks.so\n"
		 "# with references = yes (docs/PROVIDER.md).\n%s",
		 d ? d : "", abs, pem);
	rc = cli_write_output(c, c->out, (const uint8_t *)text, strlen(text),
			      0, 0);
done:
	if (parsed)
		wksp_uri_clear(&u);
	free(text);
	free(pem);
	free(uri);
	free(abs);
	free(d);
	wks_key_free(key);
	wks_store_free(st);
	cli_pw_clear(&pw);
	cli_pw_clear(&rpw);
	cli_pw_clear(&kpw);
	wksp_pwsrc_clear(&rs);
	wksp_pwsrc_clear(&rk);
	return rc;
}
