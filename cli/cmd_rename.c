/*
 * wks rename: give an entry a new alias.
 *
 * libwks has no call that moves an entry, so a key entry is decrypted
 * and stored again under the new alias (fresh salt and IV; the creation
 * time becomes now), and the old alias is deleted.  Certificates are
 * copied as they are.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_rename(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT, kp = CLI_PW_INIT;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0)
		return rc;
	if (!c->new_alias) {
		cli_err(NULL, "option --new-alias is required");
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(c->alias, c->new_alias)) {
		cli_err(NULL, "--alias and --new-alias are the same");
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_store_open(&st, &pw, c, CLI_STORE_VERIFY)) != 0)
		return rc;
	if (!wks_store_contains(st, c->alias)) {
		rc = cli_lib_err(c->keystore, c->alias, WKS_ERR_NOTFOUND, NULL);
		goto done;
	}
	if ((rc = cli_check_alias_free(st, c, c->new_alias)) != 0)
		goto done;
	if (wks_store_entry_type(st, c->alias) != WKS_ENTRY_CERTIFICATE &&
	    (rc = cli_keypass(&kp, c, &pw, c->alias)) != 0)
		goto done;
	/* --force: the entry replaced goes first (a certificate may not
	 * replace a key).  All of this happens in memory; the file changes
	 * only with the final save. */
	if (wks_store_contains(st, c->new_alias) &&
	    (err = wks_store_delete(st, c->new_alias)) < 0) {
		rc = cli_lib_err(c->keystore, c->new_alias, err, NULL);
		goto done;
	}
	if ((rc = cli_store_copy_entry(st, c->keystore, c->alias, c->new_alias,
				       &kp, &kp)) != 0)
		goto done;
	if ((err = wks_store_delete(st, c->alias)) < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, NULL);
		goto done;
	}
	rc = cli_store_save(st, c, &pw);
done:
	wks_store_free(st);
	cli_pw_clear(&pw);
	cli_pw_clear(&kp);
	return rc;
}
