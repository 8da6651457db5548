/*
 * wks create: a new, empty keystore.  Created exclusively: an existing
 * file is kept (exit 7) unless --force, even if it appears while the
 * password is being asked.
 */
#include <stdio.h>

#include "cli.h"

int cmd_create(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT;
	char prompt[512];
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if ((rc = cli_output_check(c, c->keystore)) != 0)
		return rc;
	snprintf(prompt, sizeof(prompt), "New keystore password for %s: ",
		 c->keystore);
	if ((rc = cli_pw_get(&pw, &c->storepass, prompt, "--storepass",
			     CLI_PW_NEW)) != 0 ||
	    (rc = cli_java_password_check(c, &pw, c->keystore,
					  "--storepass", "store")) != 0)
		goto done;
	if ((err = wks_store_new(&st)) < 0) {
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
		goto done;
	}
	if ((rc = cli_store_iterations(st, c)) != 0)
		goto done;
	rc = cli_store_create(st, c, c->keystore, &pw);
done:
	wks_store_free(st);
	cli_pw_clear(&pw);
	return rc;
}
