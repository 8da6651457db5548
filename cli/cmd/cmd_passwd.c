/*
 * wks passwd: a new store password.  The store is verified with the old
 * one and saved (re-MACed, with a fresh salt) with the new one, under the
 * store's lock.  Every key entry whose password was the old store
 * password gets the new one with it (as keytool -storepasswd does for
 * PKCS#12): a server whose key reference gives only the store password
 * must still open its key when the password file holds the new one.  Keys
 * with a password of their own keep it, and are named.  --store-only
 * changes the store password alone (no key is opened, no key derivation
 * runs); --keys, the former way to ask for the keys, is the default now
 * and still accepted.
 *
 * The keys' derivations (one per key with the old password, which both
 * tells whether it is the key's and decrypts it, and one per key moved
 * with the new) run as batches over every SIMD lane and core
 * (wks_rekey_prepare), on the store loaded before the lock is taken: the
 * lock is held only to load the store again, put the re-encrypted entries
 * in (wks_rekey_apply: only those still as they were) and save.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/* How many kept aliases the report names before "and N more". */
#define KEPT_SHOWN 10

/* The key entries' aliases of st: *keys (free) points into *aliases
 * (wks_aliases_free), *n of them.  0 or an exit status (printed). */
static int key_aliases(char ***aliases, char ***keys, size_t *n,
		       wks_store *st, const char *file)
{
	size_t count = 0;
	int err;

	*aliases = NULL;
	*keys = NULL;
	*n = 0;
	if ((err = wks_store_aliases(aliases, &count, st)) < 0)
		return cli_lib_err(file, NULL, err, NULL);
	if (!(*keys = calloc(count + 1, sizeof(**keys)))) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	for (size_t i = 0; i < count; i++) {
		wks_entry_type t = wks_store_entry_type(st, (*aliases)[i]);

		if (t == WKS_ENTRY_PRIVATE_KEY || t == WKS_ENTRY_SECRET_KEY)
			(*keys)[(*n)++] = (*aliases)[i];
	}
	return 0;
}

/* After a batch over keys[0..n): res[i] is WKS_OK (moved),
 * WKS_ERR_INTEGRITY (a password of its own: kept) or an error that stops
 * the change.  0 or an exit status (printed; nothing is saved). */
static int check_results(const int *res, char **keys, size_t n, int err,
			 const char *file)
{
	const char *alias = NULL;
	int rc;

	for (size_t i = 0; err == WKS_OK && i < n; i++)
		if (res[i] < 0 && res[i] != WKS_ERR_INTEGRITY) {
			err = res[i];
			alias = keys[i];
		}
	if (err == WKS_OK)
		return 0;
	rc = cli_lib_err(file, alias, err, NULL);
	cli_err(file, "nothing changed (--store-only changes the store "
		"password alone)");
	return rc;
}

/* "Store password changed; ..." on stdout: what happened to the keys. */
static void report(const cli_ctx *c, char **keys, size_t n,
		   const int *res)
{
	size_t kept = 0, shown = 0;

	if (c->store_only) {
		printf("Store password changed (--store-only); the key "
		       "entries keep their passwords, the old store password "
		       "included (wks keypasswd changes one)\n");
		return;
	}
	for (size_t i = 0; i < n; i++)
		kept += res[i] == WKS_ERR_INTEGRITY;
	if (n == 0) {
		printf("Store password changed (no key entries)\n");
		return;
	}
	printf("Store password changed; %zu of %zu key entr%s had the old "
	       "store password as key password and now ha%s the new one",
	       n - kept, n, n == 1 ? "y" : "ies",
	       n - kept == 1 ? "s" : "ve");
	if (kept) {
		printf("; %zu kept %s own password:", kept,
		       kept == 1 ? "its" : "their");
		for (size_t i = 0; i < n && shown < KEPT_SHOWN; i++) {
			char *d;

			if (res[i] != WKS_ERR_INTEGRITY)
				continue;
			d = cli_display(keys[i]);
			printf("%s \"%s\"", shown ? "," : "", d ? d : "");
			free(d);
			shown++;
		}
		if (kept > shown)
			printf(" and %zu more", kept - shown);
	}
	printf("\n");
}

int cmd_passwd(cli_ctx *c)
{
	cli_edit e;
	cli_pw npw = CLI_PW_INIT;
	wks_store *pre = NULL;
	wks_rekey *rk = NULL;
	char prompt[512], **aliases = NULL, **keys = NULL;
	int *res = NULL;
	size_t n = 0;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if (c->store_only && c->change_keys) {
		cli_err(NULL, "passwd: --store-only and --keys exclude each "
			"other");
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_store_edit_prepare(&e, c)) != 0)
		return rc;
	/* Both passwords before the lock (cli_store_edit_prepare). */
	snprintf(prompt, sizeof(prompt), "New keystore password for %s: ",
		 c->keystore);
	if ((rc = cli_pw_get(&npw, &c->new_storepass, prompt,
			     "--new-storepass", CLI_PW_NEW)) != 0 ||
	    (rc = cli_java_password_check(c, &npw, c->keystore,
					  "--new-storepass", "store")) != 0)
		goto done;
	if (!c->store_only) {
		/* The keys' derivations, without the lock. */
		if ((rc = cli_store_edit_peek(&pre, &e, c)) != 0 ||
		    (rc = key_aliases(&aliases, &keys, &n, pre,
				      c->keystore)) != 0)
			goto done;
		if (!(res = calloc(n + 1, sizeof(*res)))) {
			cli_err(NULL, "out of memory");
			rc = CLI_EXIT_FAIL;
			goto done;
		}
		err = n ? wks_rekey_prepare(&rk, res, pre,
					    (const char *const *)keys, n,
					    e.pw.p, e.pw.len, npw.p, npw.len)
			: WKS_OK;
		if ((rc = check_results(res, keys, n, err, c->keystore)) != 0)
			goto done;
	}
	if ((rc = cli_store_edit_lock(&e, c)) != 0)
		goto done;
	if (rk && (err = wks_rekey_apply(e.st, rk, NULL)) != WKS_OK) {
		/* Changed between the two loads (WKS_ERR_INVALID: another
		 * edit came first): the keys as they are now, moved here. */
		if (err == WKS_ERR_INVALID) {
			free(keys);
			free(res);
			wks_aliases_free(aliases);
			res = NULL;
			if ((rc = key_aliases(&aliases, &keys, &n, e.st,
					      c->keystore)) != 0)
				goto done;
			if (!(res = calloc(n + 1, sizeof(*res)))) {
				cli_err(NULL, "out of memory");
				rc = CLI_EXIT_FAIL;
				goto done;
			}
			err = n ? wks_store_change_key_passwords(res, e.st,
					(const char *const *)keys, n, e.pw.p,
					e.pw.len, npw.p, npw.len) : WKS_OK;
		}
		if ((rc = check_results(res, keys, n, err, c->keystore)) != 0)
			goto done;
	}
	if ((rc = cli_store_edit_commit(&e, c, &npw)) != 0)
		goto done;
	report(c, keys, n, res);
done:
	free(keys);
	free(res);
	wks_aliases_free(aliases);
	wks_rekey_free(rk);
	wks_store_free(pre);
	cli_store_edit_end(&e);
	cli_pw_clear(&npw);
	return rc;
}
