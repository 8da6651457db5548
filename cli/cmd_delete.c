/*
 * wks delete: remove an entry.
 */
#include "cli.h"

int cmd_delete(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0)
		return rc;
	if ((rc = cli_store_open(&st, &pw, c, CLI_STORE_VERIFY)) != 0)
		return rc;
	if ((err = wks_store_delete(st, c->alias)) < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, NULL);
		goto done;
	}
	rc = cli_store_save(st, c, &pw);
done:
	wks_store_free(st);
	cli_pw_clear(&pw);
	return rc;
}
