/*
 * wks rename: give an entry a new alias.  The entry is moved as it is:
 * the encrypted key, its MAC and the creation time are kept (the entry
 * MAC does not cover the alias), so no key password is needed.
 */
#include <string.h>

#include "cli.h"

int cmd_rename(cli_ctx *c)
{
	cli_edit e;
	wks_store *st;
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
	if ((rc = cli_store_edit_begin(&e, c)) != 0)
		return rc;
	st = e.st;
	if (!wks_store_contains(st, c->alias)) {
		rc = cli_lib_err(c->keystore, c->alias, WKS_ERR_NOTFOUND, NULL);
		goto done;
	}
	if ((rc = cli_check_alias_free(st, c, c->new_alias)) != 0)
		goto done;
	/* --force: the entry replaced goes first.  All of this happens in
	 * memory; the file changes only with the final save. */
	if (wks_store_contains(st, c->new_alias) &&
	    (err = wks_store_delete(st, c->new_alias)) < 0) {
		rc = cli_lib_err(c->keystore, c->new_alias, err, NULL);
		goto done;
	}
	if ((err = wks_store_rename(st, c->alias, c->new_alias)) < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, "cannot rename");
		goto done;
	}
	rc = cli_store_edit_commit(&e, c, NULL);
done:
	cli_store_edit_end(&e);
	return rc;
}
