/*
 * wks verify: the store MAC, then every key entry with the key password
 * (its entry MAC, decryption, and that a private key matches its leaf
 * certificate).  The entries that take the default key password are
 * opened first, all together (wks_store_get_keys(): their derivations in
 * one batch); the others, and those it does not open, one by one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct {
	const char *status; /* "ok" or a short failure class */
	char message[256];
} check;

static const char *type_name(wks_entry_type t)
{
	return t == WKS_ENTRY_PRIVATE_KEY ? "private-key" :
	       t == WKS_ENTRY_SECRET_KEY ? "secret-key" : "certificate";
}

/* Open in one batch the key entries without a --keypass-for password
 * with the default key password kp: *res[i] WKS_OK and (*out)[i] the key
 * where it opened them; any other result leaves entry i to the one by one
 * path.  Returns 0 or an exit status. */
static int open_batch(wks_key ***out, int **res, wks_store *st, cli_ctx *c,
		      char **aliases, size_t count, const cli_pw *kp)
{
	const char **ba = calloc(count ? count : 1, sizeof(*ba));
	int err = WKS_OK, rc = 0;

	*out = calloc(count ? count : 1, sizeof(**out));
	*res = calloc(count ? count : 1, sizeof(**res));
	if (!ba || !*out || !*res) {
		cli_err(c->keystore, "out of memory");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	for (size_t i = 0; i < count; i++) {
		wks_entry_type t = wks_store_entry_type(st, aliases[i]);

		(*res)[i] = WKS_ERR_INVALID;
		if (t != WKS_ENTRY_CERTIFICATE &&
		    !cli_keypass_for_has(c, aliases[i]))
			ba[i] = aliases[i]; /* NULL: not in the batch */
	}
	if (kp->p && kp->len)
		err = wks_store_get_keys(*out, *res, st, ba, count, kp->p,
					 kp->len);
	if (err < 0)
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
done:
	free(ba);
	return rc;
}

int cmd_verify(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT, kp = CLI_PW_INIT;
	char **aliases = NULL;
	wks_key **bkeys = NULL;
	int *bres = NULL;
	size_t count = 0, keys = 0, failed = 0;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if ((rc = cli_store_open(&st, &pw, c, CLI_STORE_VERIFY)) != 0)
		return rc;
	if ((rc = cli_keypass(&kp, c, &pw, NULL)) != 0)
		goto done;
	if ((err = wks_store_aliases(&aliases, &count, st)) < 0) {
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
		goto done;
	}
	if ((rc = open_batch(&bkeys, &bres, st, c, aliases, count, &kp)) != 0)
		goto done;
	if (c->json) {
		fputs("{\"store_mac\": \"ok\", \"entries\": [", stdout);
	} else {
		char *dk = cli_display(c->keystore); /* as in list */

		printf("%s: store MAC ok\n", dk ? dk : "");
		free(dk);
	}
	for (size_t i = 0; i < count; i++) {
		const char *a = aliases[i];
		wks_entry_type t = wks_store_entry_type(st, a);
		wks_key *key = NULL;
		check r = { "ok", "" };
		char *d, *m;

		if (t == WKS_ENTRY_CERTIFICATE) {
			if (!c->verbose && !c->json)
				continue;
			snprintf(r.message, sizeof(r.message),
				 "certificate (covered by the store MAC)");
		} else {
			keys++;
			/* Key passwords may differ per entry: its
			 * --keypass-for password, else --keypass, else the
			 * store password, else the prompt (terminal). */
			err = WKS_OK;
			if (bres[i] == WKS_OK) {
				key = bkeys[i];
				bkeys[i] = NULL;
			} else {
				(void)cli_key_get(&key, st, c->keystore, a, &kp,
						  &pw, CLI_KEY_QUIET, &err);
			}
			if (err == WKS_ERR_INTEGRITY) {
				char *dd = cli_display(a);

				r.status = "integrity_failure";
				snprintf(r.message, sizeof(r.message),
					 "integrity check failed: wrong key "
					 "password (give it with --keypass-for "
					 "%s=SRC), or the entry was modified",
					 dd ? dd : "");
				free(dd);
			} else if (err < 0) {
				r.status = err == WKS_ERR_LIMIT ?
						   "limit_exceeded" :
					   err == WKS_ERR_UNSUPPORTED ?
						   "unsupported" : "malformed";
				snprintf(r.message, sizeof(r.message), "%s: %s",
					 wks_strerror(err),
					 wks_error_detail());
			} else if (t == WKS_ENTRY_PRIVATE_KEY) {
				const char *bad = cli_check_key_leaf(
					r.message, sizeof(r.message), st, a,
					key);

				if (bad)
					r.status = bad;
			}
			wks_key_free(key);
		}
		if (strcmp(r.status, "ok"))
			failed++;
		if (c->json) {
			fputs(i ? ",\n  {\"alias\": " : "\n  {\"alias\": ",
			      stdout);
			cli_json_string(stdout, a);
			printf(", \"type\": \"%s\", \"status\": \"%s\"",
			       type_name(t), r.status);
			if (*r.message) {
				fputs(", \"message\": ", stdout);
				cli_json_string(stdout, r.message);
			}
			fputc('}', stdout);
			continue;
		}
		/* The message may quote the library's detail, which may
		 * quote the file: escaped like the alias. */
		d = cli_display(a);
		m = cli_display(r.message);
		if (!strcmp(r.status, "ok"))
			printf("  %s (%s): ok%s%s\n", d && *d ? d : "\"\"",
			       type_name(t),
			       *r.message ? ": " : "", m ? m : "");
		else
			printf("  %s (%s): FAILED: %s\n", d && *d ? d : "\"\"",
			       type_name(t), m ? m : "");
		free(m);
		free(d);
	}
	if (c->json) {
		printf("%s], \"ok\": %s}\n", count ? "\n" : "",
		       failed ? "false" : "true");
	} else if (failed) {
		printf("%zu of %zu key entries FAILED\n", failed, keys);
	} else {
		printf("all %zu key entr%s ok\n", keys,
		       keys == 1 ? "y" : "ies");
	}
	if (failed) {
		cli_err(c->keystore, "%zu entr%s failed verification", failed,
			failed == 1 ? "y" : "ies");
		rc = CLI_EXIT_FAIL;
	}
done:
	for (size_t i = 0; bkeys && i < count; i++)
		wks_key_free(bkeys[i]);
	free(bkeys);
	free(bres);
	wks_aliases_free(aliases);
	wks_store_free(st);
	cli_pw_clear(&pw);
	cli_pw_clear(&kp);
	return rc;
}
