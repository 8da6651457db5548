/*
 * wks passwd: a new store password.  The store is verified with the old
 * one and saved (re-MACed, with a fresh salt) with the new one, under the
 * store's lock.  Every key entry whose password was the old store
 * password gets the new one with it (as keytool -storepasswd does for
 * PKCS#12): a server whose key reference gives only the store password
 * must still open its key when the password file holds the new one.  Keys
 * with a password of their own keep it, and are named.  --store-only
 * changes the store password alone (no key is opened); --keys, the former
 * way to ask for the keys, is the default now and still accepted.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/* How many kept aliases the report names before "and N more". */
#define KEPT_SHOWN 10

/*
 * Give every key entry in keys[0..n) whose password is `old` the password
 * `npw`.  wks_store_change_key_password() derives once with the old
 * password (the entry MAC tells whether it is the key's, and the same
 * derived key decrypts it) and, for those it opens, once with the new:
 * never more than one derivation per key per password.  own[i] is set for
 * the keys the old password does not open.  The keys are independent of
 * one another: a batch derivation can replace this loop as a whole.
 * Returns 0 or an exit status (message printed; the caller must then not
 * save).
 */
static int rekey(wks_store *st, const char *file, char **keys, size_t n,
		 const cli_pw *old, const cli_pw *npw, unsigned char *own)
{
	for (size_t i = 0; i < n; i++) {
		int err = wks_store_change_key_password(st, keys[i], old->p,
							old->len, npw->p,
							npw->len);

		own[i] = err == WKS_ERR_INTEGRITY;
		if (err < 0 && !own[i]) {
			int rc = cli_lib_err(file, keys[i], err, NULL);

			cli_err(file, "nothing changed (--store-only changes "
				"the store password alone)");
			return rc;
		}
	}
	return 0;
}

/* "Store password changed; ..." on stdout: what happened to the keys. */
static void report(const cli_ctx *c, char **keys, size_t n,
		   const unsigned char *own)
{
	size_t kept = 0, shown = 0;

	if (c->store_only) {
		printf("Store password changed (--store-only); the key "
		       "entries keep their passwords, the old store password "
		       "included (wks keypasswd changes one)\n");
		return;
	}
	for (size_t i = 0; i < n; i++)
		kept += own[i];
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

			if (!own[i])
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
	char prompt[512], **aliases = NULL, **keys = NULL;
	unsigned char *own = NULL;
	size_t count = 0, n = 0;
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
					  "--new-storepass", "store")) != 0 ||
	    (rc = cli_store_edit_lock(&e, c)) != 0)
		goto done;
	if (!c->store_only) {
		if ((err = wks_store_aliases(&aliases, &count, e.st)) < 0) {
			rc = cli_lib_err(c->keystore, NULL, err, NULL);
			goto done;
		}
		keys = calloc(count + 1, sizeof(*keys));
		own = calloc(count + 1, 1);
		if (!keys || !own) {
			cli_err(NULL, "out of memory");
			rc = CLI_EXIT_FAIL;
			goto done;
		}
		for (size_t i = 0; i < count; i++) {
			wks_entry_type t = wks_store_entry_type(e.st,
								aliases[i]);

			if (t == WKS_ENTRY_PRIVATE_KEY ||
			    t == WKS_ENTRY_SECRET_KEY)
				keys[n++] = aliases[i];
		}
		if ((rc = rekey(e.st, c->keystore, keys, n, &e.pw, &npw,
				own)) != 0)
			goto done;
	}
	if ((rc = cli_store_edit_commit(&e, c, &npw)) != 0)
		goto done;
	report(c, keys, n, own);
done:
	free(keys);
	free(own);
	wks_aliases_free(aliases);
	cli_store_edit_end(&e);
	cli_pw_clear(&npw);
	return rc;
}
