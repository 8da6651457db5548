/*
 * wks import-p12: the keys and certificates of a PKCS#12 file.
 */
#include <stdio.h>

#include "cli.h"
#include "wks/convert.h"

int cmd_import_p12(cli_ctx *c)
{
	cli_edit ed = CLI_EDIT_INIT;
	cli_pw kp = CLI_PW_INIT, inpw = CLI_PW_INIT;
	cli_p12_entry *e = NULL;
	size_t count = 0, len = 0;
	uint8_t *data = NULL;
	char prompt[512];
	wks_keystore_type t;
	int rc, prepared = 0;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->in, "--in")) != 0)
		return rc;
	if ((rc = cli_read_file(&data, &len, c->in)) != 0)
		return rc;
	t = wks_keystore_detect(data, len);
	if (cli_java_type(t) || t == WKS_KEYSTORE_WKS) {
		/* Before any password: name the command that reads it. */
		cli_err(c->in, "this is a %s keystore, not PKCS#12; import it "
			"with: wks import-keystore --srckeystore %s -k %s",
			wks_keystore_type_name(t), c->in, c->keystore);
		rc = CLI_EXIT_MALFORMED;
		goto done;
	}
	snprintf(prompt, sizeof(prompt), "Password of %s: ", c->in);
	if ((rc = cli_pw_get(&inpw, &c->inpass, prompt, "--inpass",
			     CLI_PW_EMPTY_OK)) != 0)
		goto done;
	if ((rc = cli_p12_read(&e, &count, c->in, data, len, &inpw,
			       c->no_mac_ok)) != 0)
		goto done;
	/* The new keys derived before the store's lock is taken. */
	if ((rc = cli_store_edit_prepare_any(&ed, c)) != 0 ||
	    (rc = cli_store_edit_prekeys(&ed, c, cli_p12_key_count(e, count,
					 c->alias), &prepared)) != 0 ||
	    (rc = cli_store_edit_lock(&ed, c)) != 0)
		goto done;
	if ((rc = cli_pw_dup(&kp, &ed.kp)) != 0)
		goto done;
	if ((rc = cli_p12_import(ed.st, c, c->in, e, count, c->alias,
				 &kp, prepared)) != 0)
		goto done;
	rc = cli_store_edit_commit(&ed, c, NULL);
done:
	cli_p12_free(e, count);
	cli_free_secret(data, len);
	cli_store_edit_end(&ed);
	cli_pw_clear(&kp);
	cli_pw_clear(&inpw);
	return rc;
}
