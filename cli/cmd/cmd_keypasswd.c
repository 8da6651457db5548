/*
 * wks keypasswd: a new password for one key entry.  The key is decrypted
 * with the old password and encrypted again with the new one, under a
 * fresh salt and IV; the creation time is kept.  Both derivations run as
 * one batch (side by side on the SIMD lanes) before the store's lock is
 * taken (wks_rekey_prepare); under the lock the store is loaded again and
 * the new entry put in only if the entry is still the one re-encrypted
 * (wks_rekey_apply), else the change is made again under the lock.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/* The entry must exist and hold a key: 0 or an exit status (printed). */
static int check_entry(wks_store *st, const cli_ctx *c, const char *d)
{
	wks_entry_type t = wks_store_entry_type(st, c->alias);

	if (t == WKS_ENTRY_NONE)
		return cli_lib_err(c->keystore, c->alias, WKS_ERR_NOTFOUND,
				   NULL);
	if (t == WKS_ENTRY_CERTIFICATE) {
		cli_err(c->keystore, "entry \"%s\" is a certificate: it has no "
			"key password", d ? d : "");
		return CLI_EXIT_INVALID;
	}
	return 0;
}

int cmd_keypasswd(cli_ctx *c)
{
	cli_edit e;
	wks_store *pre = NULL;
	wks_rekey *rk = NULL;
	cli_pw kp = CLI_PW_INIT, nkp = CLI_PW_INIT;
	const char *aliases[1];
	char prompt[512], *d = NULL;
	int rc, err, res = 0;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0)
		return rc;
	if ((rc = cli_store_edit_prepare(&e, c)) != 0)
		return rc;
	d = cli_display(c->alias);
	aliases[0] = c->alias;
	/* Every password before the lock (cli_store_edit_prepare). */
	if ((rc = cli_pw_dup(&kp, &e.kp)) != 0)
		goto done;
	snprintf(prompt, sizeof(prompt), "New key password for \"%s\": ",
		 d ? d : "");
	if ((rc = cli_pw_get(&nkp, &c->new_keypass, prompt, "--new-keypass",
			     CLI_PW_NEW)) != 0 ||
	    (rc = cli_java_password_check(c, &nkp, c->keystore,
					  "--new-keypass", "key")) != 0)
		goto done;
	/* The derivations, without the lock. */
	if ((rc = cli_store_edit_peek(&pre, &e, c)) != 0 ||
	    (rc = check_entry(pre, c, d)) != 0)
		goto done;
	err = wks_rekey_prepare(&rk, &res, pre, aliases, 1, kp.p, kp.len,
				nkp.p, nkp.len);
	if (err == WKS_OK && res < 0)
		err = res;
	if (err < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, NULL);
		goto done;
	}
	/* Under the lock: the store as it is now, the entry replaced if it is
	 * still the one re-encrypted, else changed again here. */
	if ((rc = cli_store_edit_lock(&e, c)) != 0 ||
	    (rc = check_entry(e.st, c, d)) != 0)
		goto done;
	err = wks_rekey_apply(e.st, rk, NULL);
	if (err == WKS_ERR_INVALID)
		err = wks_store_change_key_password(e.st, c->alias, kp.p,
						    kp.len, nkp.p, nkp.len);
	if (err < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, NULL);
		goto done;
	}
	if ((rc = cli_store_edit_commit(&e, c, NULL)) == 0)
		cli_warn_short_pw(c->keystore, &nkp, "key");
done:
	free(d);
	wks_rekey_free(rk);
	wks_store_free(pre);
	cli_store_edit_end(&e);
	cli_pw_clear(&kp);
	cli_pw_clear(&nkp);
	return rc;
}
