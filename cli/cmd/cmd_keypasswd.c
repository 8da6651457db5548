/*
 * wks keypasswd: a new password for one key entry.  The key is decrypted
 * with the old password and encrypted again with the new one, under a
 * fresh salt and IV; the creation time is kept.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int cmd_keypasswd(cli_ctx *c)
{
	cli_edit e;
	wks_store *st;
	cli_pw kp = CLI_PW_INIT, nkp = CLI_PW_INIT;
	wks_entry_type t;
	char prompt[512], *d = NULL;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0)
		return rc;
	if ((rc = cli_store_edit_prepare(&e, c)) != 0)
		return rc;
	d = cli_display(c->alias);
	/* Every password before the lock (cli_store_edit_prepare). */
	if ((rc = cli_pw_dup(&kp, &e.kp)) != 0)
		goto done;
	snprintf(prompt, sizeof(prompt), "New key password for \"%s\": ",
		 d ? d : "");
	if ((rc = cli_pw_get(&nkp, &c->new_keypass, prompt, "--new-keypass",
			     CLI_PW_NEW)) != 0 ||
	    (rc = cli_java_password_check(c, &nkp, c->keystore,
					  "--new-keypass", "key")) != 0 ||
	    (rc = cli_store_edit_lock(&e, c)) != 0)
		goto done;
	st = e.st;
	t = wks_store_entry_type(st, c->alias);
	if (t == WKS_ENTRY_NONE) {
		rc = cli_lib_err(c->keystore, c->alias, WKS_ERR_NOTFOUND, NULL);
		goto done;
	}
	if (t == WKS_ENTRY_CERTIFICATE) {
		cli_err(c->keystore, "entry \"%s\" is a certificate: it has no "
			"key password", d ? d : "");
		rc = CLI_EXIT_INVALID;
		goto done;
	}
	if ((err = wks_store_change_key_password(st, c->alias, kp.p, kp.len,
						 nkp.p, nkp.len)) < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, NULL);
		goto done;
	}
	if ((rc = cli_store_edit_commit(&e, c, NULL)) == 0)
		cli_warn_short_pw(c->keystore, &nkp, "key");
done:
	free(d);
	cli_store_edit_end(&e);
	cli_pw_clear(&kp);
	cli_pw_clear(&nkp);
	return rc;
}
