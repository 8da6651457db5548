/*
 * wks import-certs: a trust store from a CA bundle.
 *
 * The input is a PEM bundle (CERTIFICATE, TRUSTED CERTIFICATE and PKCS7
 * blocks), a PKCS#7 file (PEM or DER), DER certificates, or a folder of
 * such files (certbundle.c reads them).  Every certificate becomes a
 * trusted certificate entry under a readable alias, unless the store
 * already holds it (same SHA-256 of the DER) as a certificate entry.
 * Everything is read and checked before the store is touched: a
 * malformed certificate or PEM block anywhere fails the whole import,
 * and the store is unchanged.  A missing store is created.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

int cmd_import_certs(cli_ctx *c)
{
	cli_cert_list l;
	cli_edit e = CLI_EDIT_INIT;
	wks_store *st = NULL;
	cli_pw newpw = CLI_PW_INIT;
	struct stat sb;
	size_t imported = 0, present = 0;
	int rc, err, create = 0;

	memset(&l, 0, sizeof(l));
	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->in, "--in")) != 0)
		return rc;
	if (c->alias_prefix && strlen(c->alias_prefix) > 256) {
		cli_err(NULL, "--alias-prefix: longer than 256 bytes");
		return CLI_EXIT_USAGE;
	}
	/* Everything is read before the store is opened. */
	if ((rc = cli_cert_list_read(&l, c->in)) != 0)
		goto done;

	create = stat(c->keystore, &sb) != 0 && errno == ENOENT;
	if (create) {
		char prompt[512];

		if ((rc = cli_output_check(c, c->keystore)) != 0)
			goto done;
		snprintf(prompt, sizeof(prompt),
			 "New keystore password for %s: ", c->keystore);
		if ((rc = cli_pw_get(&newpw, &c->storepass, prompt,
				     "--storepass", CLI_PW_NEW)) != 0 ||
		    (rc = cli_java_password_check(c, &newpw, c->keystore,
						  "--storepass", "store")) != 0)
			goto done;
		if ((err = wks_store_new(&st)) < 0) {
			rc = cli_lib_err(c->keystore, NULL, err, NULL);
			goto done;
		}
		if ((rc = cli_store_iterations(st, c)) != 0)
			goto done;
	} else {
		if ((rc = cli_store_edit_begin(&e, c)) != 0)
			goto done;
		st = e.st;
		if ((rc = cli_cert_list_mark_present(&l, st, c->keystore,
						      &present)) != 0)
			goto done;
	}
	if ((rc = cli_cert_list_store(&l, st, c->alias_prefix, c->verbose,
				      c->in, &imported)) != 0)
		goto done;
	if (create) {
		rc = cli_store_create(st, c, c->keystore, &newpw);
		if (rc == 0)
			cli_note(c->keystore, "a new keystore was created");
	} else if (imported)
		rc = cli_store_edit_commit(&e, c, NULL);
	if (rc)
		goto done;
	printf("%zu imported, %zu already present", imported, present);
	if (l.dups)
		printf(" (%zu duplicate%s in the input ignored)", l.dups,
		       l.dups == 1 ? "" : "s");
	printf("\n");
done:
	if (st != e.st)
		wks_store_free(st); /* a new store */
	cli_store_edit_end(&e);
	cli_pw_clear(&newpw);
	cli_cert_list_free(&l);
	return rc;
}
