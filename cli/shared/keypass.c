/*
 * Key passwords the keytool way: every key entry may have its own
 * password.  A key is opened with its --keypass-for ALIAS=SRC password if
 * one was given, else with the key password of the command (--keypass,
 * default the store password), else with the store password; when none
 * opens it, the password is asked on the terminal naming the alias, or
 * (no terminal) the command fails naming the alias and the option.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct cli_keypass_for {
	char *alias;
	cli_pwsrc src;
	cli_pw pw;
	int got;
};

/* The command line, for cli_key_get() called from helpers that do not
 * take it (cli_p12_export): one per process. */
static cli_ctx *kp_ctx;
/* The store password to try after the key password (whole-store
 * exports); borrowed, see cli_key_fallback(). */
static const cli_pw *kp_fallback;

void cli_key_fallback(const cli_pw *storepw)
{
	kp_fallback = storepw;
}

static int is_source(const char *s)
{
	return !strncmp(s, "pass:", 5) || !strncmp(s, "env:", 4) ||
	       !strncmp(s, "file:", 5) || !strncmp(s, "fd:", 3) ||
	       !strcmp(s, "stdin");
}

int cli_keypass_for_add(cli_ctx *c, char *arg)
{
	struct cli_keypass_for *n;
	char *eq = NULL;
	int rc;

	/* ALIAS=SRC: the first '=' followed by a source (an alias may hold
	 * '=' itself). */
	for (char *p = strchr(arg, '='); p; p = strchr(p + 1, '='))
		if (is_source(p + 1)) {
			eq = p;
			break;
		}
	if (!eq) {
		cli_err(NULL, "--keypass-for: expected ALIAS=SRC (SRC: pass:TEXT, "
			"env:VAR, file:PATH, fd:N or stdin)");
		return CLI_EXIT_USAGE;
	}
	n = realloc(c->keypass_for, (c->keypass_for_count + 1) * sizeof(*n));
	if (!n) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	c->keypass_for = n;
	n += c->keypass_for_count;
	memset(n, 0, sizeof(*n));
	n->alias = malloc((size_t)(eq - arg) + 1);
	if (!n->alias) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	memcpy(n->alias, arg, (size_t)(eq - arg));
	n->alias[eq - arg] = 0;
	c->keypass_for_count++;
	kp_ctx = c;
	rc = cli_pwsrc_parse(&n->src, "--keypass-for", eq + 1);
	return rc;
}

int cli_keypass_for_has(const cli_ctx *c, const char *alias)
{
	for (size_t i = 0; alias && i < c->keypass_for_count; i++)
		if (!strcmp(c->keypass_for[i].alias, alias))
			return 1;
	return 0;
}

void cli_keypass_for_clear(cli_ctx *c)
{
	for (size_t i = 0; i < c->keypass_for_count; i++) {
		free(c->keypass_for[i].alias);
		cli_pwsrc_clear(&c->keypass_for[i].src);
		cli_pw_clear(&c->keypass_for[i].pw);
	}
	free(c->keypass_for);
	c->keypass_for = NULL;
	c->keypass_for_count = 0;
	kp_ctx = NULL;
}

/* The --keypass-for password of `alias`: 1 with *pw set, 0 if none was
 * given, or an exit status (negated) when reading it failed. */
static int keypass_for(const cli_pw **pw, const char *alias, int *rc)
{
	*rc = 0;
	if (!kp_ctx)
		return 0;
	for (size_t i = 0; i < kp_ctx->keypass_for_count; i++) {
		struct cli_keypass_for *k = &kp_ctx->keypass_for[i];

		if (strcmp(k->alias, alias))
			continue;
		if (!k->got) {
			if ((*rc = cli_pw_get(&k->pw, &k->src, "",
					      "--keypass-for", 0)) != 0)
				return 0;
			if (k->pw.len == 0) {
				char *d = cli_display(alias);

				cli_err(NULL, "--keypass-for %s: the key password "
					"must not be empty", d ? d : "");
				free(d);
				*rc = CLI_EXIT_USAGE;
				return 0;
			}
			k->got = 1;
		}
		*pw = &k->pw;
		return 1;
	}
	return 0;
}

int cli_keypass_for_get(const cli_pw **pw, const char *alias)
{
	int rc;

	*pw = NULL;
	if (keypass_for(pw, alias, &rc))
		return 1;
	return rc ? -rc : 0;
}

const char *cli_keypass_for_alias(const cli_ctx *c, size_t i)
{
	return i < c->keypass_for_count ? c->keypass_for[i].alias : NULL;
}

static int same_pw(const cli_pw *a, const cli_pw *b)
{
	return a && b && a->p && b->p && a->len == b->len &&
	       cli_memeq_ct(a->p, b->p, a->len) == 0;
}

int cli_key_get(wks_key **out, wks_store *st, const char *file,
		const char *alias, const cli_pw *keypw, const cli_pw *storepw,
		int flags, int *lib_err)
{
	const cli_pw *given = NULL;
	cli_pw asked = CLI_PW_INIT;
	char prompt[512], *d;
	int err = WKS_ERR_INTEGRITY, rc = 0;

	*out = NULL;
	if (keypass_for(&given, alias, &rc)) {
		err = wks_store_get_key(out, st, alias, given->p, given->len);
	} else if (rc) {
		if (lib_err)
			*lib_err = WKS_ERR_INVALID;
		return rc;
	} else {
		if (!storepw)
			storepw = kp_fallback;
		if (keypw && keypw->p && keypw->len)
			err = wks_store_get_key(out, st, alias, keypw->p,
						keypw->len);
		if (err == WKS_ERR_INTEGRITY && storepw && storepw->len &&
		    !same_pw(keypw, storepw))
			err = wks_store_get_key(out, st, alias, storepw->p,
						storepw->len);
	}
	if (err != WKS_ERR_INTEGRITY) {
		if (lib_err)
			*lib_err = err;
		goto report;
	}
	d = cli_display(alias);
	if (!given && !(flags & CLI_KEY_NOPROMPT) && cli_have_tty()) {
		/* keytool: "Enter key password for <alias>". */
		snprintf(prompt, sizeof(prompt), "Key password for \"%s\" (the "
			 "store password does not open it): ", d ? d : "");
		for (int tries = 0; tries < 3 && err == WKS_ERR_INTEGRITY;
		     tries++) {
			if ((rc = cli_pw_get(&asked, NULL, prompt, "--keypass-for",
					     0)) != 0)
				break;
			if (asked.len == 0)
				break;
			err = wks_store_get_key(out, st, alias, asked.p,
						asked.len);
		}
		cli_pw_clear(&asked);
	}
	if (rc == 0 && err == WKS_ERR_INTEGRITY && !(flags & CLI_KEY_QUIET)) {
		if (given)
			cli_err(file, "entry \"%s\": integrity check failed: "
				"wrong key password (--keypass-for), or the entry "
				"was modified", d ? d : "");
		else
			cli_err(file, "entry \"%s\": integrity check failed: "
				"wrong key password, or the entry was modified "
				"(give the key's own password with --keypass-for "
				"%s=SRC, or --keypass SRC)", d ? d : "",
				d ? d : "");
	}
	free(d);
	if (lib_err)
		*lib_err = err;
	if (rc)
		return rc;
	if (err == WKS_ERR_INTEGRITY)
		return CLI_EXIT_INTEGRITY;
report:
	if (err < 0) {
		if (flags & CLI_KEY_QUIET)
			return cli_exit_for(err);
		return cli_lib_err(file, alias, err, NULL);
	}
	return 0;
}
