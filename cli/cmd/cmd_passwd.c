/*
 * wks passwd: a new store password.  The store is verified with the old
 * one and saved (re-MACed, with a fresh salt) with the new one; key
 * entries are copied as they are.  Key entries whose password is the old
 * store password are counted (keytool users expect store and key
 * passwords to move together): with --keys they get the new password too.
 */
#include <stdio.h>

#include "cli.h"

int cmd_passwd(cli_ctx *c)
{
	cli_edit e;
	cli_pw npw = CLI_PW_INIT;
	char prompt[512], **aliases = NULL;
	size_t count = 0, keys = 0, old = 0;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if ((rc = cli_store_edit_prepare(&e, c)) != 0)
		return rc;
	/* Both passwords before the lock (cli_store_edit_prepare). */
	snprintf(prompt, sizeof(prompt), "New keystore password for %s: ",
		 c->keystore);
	if ((rc = cli_pw_get(&npw, &c->new_storepass, prompt,
			     "--new-storepass", CLI_PW_NEW)) != 0)
		goto done;
	if ((rc = cli_store_edit_lock(&e, c)) != 0)
		goto done;
	if ((err = wks_store_aliases(&aliases, &count, e.st)) < 0) {
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
		goto done;
	}
	for (size_t i = 0; i < count; i++) {
		wks_entry_type t = wks_store_entry_type(e.st, aliases[i]);
		wks_key *key = NULL;

		if (t != WKS_ENTRY_PRIVATE_KEY && t != WKS_ENTRY_SECRET_KEY)
			continue;
		keys++;
		err = wks_store_get_key(&key, e.st, aliases[i], e.pw.p,
					e.pw.len);
		wks_key_free(key);
		if (err < 0)
			continue; /* its own password: left as it is */
		old++;
		if (c->change_keys &&
		    (err = wks_store_change_key_password(e.st, aliases[i],
				e.pw.p, e.pw.len, npw.p, npw.len)) < 0) {
			rc = cli_lib_err(c->keystore, aliases[i], err, NULL);
			goto done;
		}
	}
	if ((rc = cli_store_edit_commit(&e, c, &npw)) != 0)
		goto done;
	if (c->change_keys)
		printf("Store password changed; %zu of %zu key entr%s had the "
		       "old store password as key password and now ha%s the "
		       "new one\n", old, keys, keys == 1 ? "y" : "ies",
		       old == 1 ? "s" : "ve");
	else if (old)
		printf("Store password changed; %zu of %zu key entr%s still "
		       "ha%s the old store password as key password (use "
		       "--keys to change %s too, or keypasswd)\n", old, keys,
		       keys == 1 ? "y" : "ies", old == 1 ? "s" : "ve",
		       old == 1 ? "it" : "them");
	else
		printf("Store password changed; no key entry has the old "
		       "store password (%zu key entr%s)\n", keys,
		       keys == 1 ? "y" : "ies");
done:
	wks_aliases_free(aliases);
	cli_store_edit_end(&e);
	cli_pw_clear(&npw);
	return rc;
}
