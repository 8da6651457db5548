/*
 * wks passwd: a new store password.  The store is verified with the old
 * one and saved (re-MACed, with a fresh salt) with the new one; key
 * entries are copied as they are.
 */
#include <stdio.h>

#include "cli.h"

int cmd_passwd(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT, npw = CLI_PW_INIT;
	char prompt[512];
	int rc;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if ((rc = cli_store_open(&st, &pw, c, CLI_STORE_VERIFY)) != 0)
		return rc;
	snprintf(prompt, sizeof(prompt), "New keystore password for %s: ",
		 c->keystore);
	if ((rc = cli_pw_get(&npw, &c->new_storepass, prompt,
			     "--new-storepass", CLI_PW_NEW)) != 0)
		goto done;
	rc = cli_store_save(st, c, &npw);
done:
	wks_store_free(st);
	cli_pw_clear(&pw);
	cli_pw_clear(&npw);
	return rc;
}
