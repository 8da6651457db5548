/*
 * wks passwd: a new store password.  The store is verified with the old
 * one and saved (re-MACed, with a fresh salt) with the new one; key
 * entries are copied as they are.
 */
#include <stdio.h>

#include "cli.h"

int cmd_passwd(cli_ctx *c)
{
	cli_edit e;
	cli_pw npw = CLI_PW_INIT;
	char prompt[512];
	int rc;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if ((rc = cli_store_edit_begin(&e, c)) != 0)
		return rc;
	snprintf(prompt, sizeof(prompt), "New keystore password for %s: ",
		 c->keystore);
	if ((rc = cli_pw_get(&npw, &c->new_storepass, prompt,
			     "--new-storepass", CLI_PW_NEW)) != 0)
		goto done;
	rc = cli_store_edit_commit(&e, c, &npw);
done:
	cli_store_edit_end(&e);
	cli_pw_clear(&npw);
	return rc;
}
