/*
 * wks delete: remove an entry.
 */
#include "cli.h"

int cmd_delete(cli_ctx *c)
{
	cli_edit e;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0)
		return rc;
	if ((rc = cli_store_edit_begin(&e, c)) != 0)
		return rc;
	if ((err = wks_store_delete(e.st, c->alias)) < 0)
		rc = cli_lib_err(c->keystore, c->alias, err, NULL);
	else
		rc = cli_store_edit_commit(&e, c, NULL);
	cli_store_edit_end(&e);
	return rc;
}
