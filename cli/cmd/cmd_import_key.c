/*
 * wks import-key: a private key and its certificate chain.
 */
#include <stdlib.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "cli.h"

int cmd_import_key(cli_ctx *c)
{
	cli_edit e = CLI_EDIT_INIT;
	cli_pw kp = CLI_PW_INIT;
	STACK_OF(X509) *pool = NULL, *chain = NULL;
	EVP_PKEY *pkey = NULL;
	uint8_t *pkcs8 = NULL, **ders = NULL;
	size_t pkcs8_len = 0, *lens = NULL, n = 0;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0 ||
	    (rc = cli_need(c->key, "--key")) != 0)
		return rc;
	/* Inputs first: nothing is asked for until they parse. */
	if (!(pool = sk_X509_new_null())) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	for (size_t i = 0; i < c->chain_count; i++)
		if ((rc = cli_load_certs(pool, c->chain[i])) != 0)
			goto done;
	if ((rc = cli_load_key(&pkey, &pkcs8, &pkcs8_len, pool, c->key,
			       &c->inpass)) != 0) {
		if (rc == CLI_EXIT_MALFORMED)
			cli_keystore_note(c, c->key);
		goto done;
	}
	if (sk_X509_num(pool) == 0) {
		cli_err(c->key, "no certificate: give the chain with --chain "
			"FILE");
		rc = CLI_EXIT_USAGE;
		goto done;
	}
	if ((rc = cli_order_chain(&chain, NULL, pkey, pool,
				  c->chain_count ? c->chain[0] : c->key, 1)))
		goto done;

	/* Java's view, before anything changes: a key wolfJCE cannot load,
	 * the empty alias, an expired certificate. */
	if ((rc = cli_java_check(c, c->key, c->alias, pkcs8, pkcs8_len)) != 0)
		goto done;
	for (int i = 0; i < sk_X509_num(chain); i++)
		cli_warn_validity(NULL, c->alias, sk_X509_value(chain, i));
	if ((rc = cli_store_edit_begin_or_create(&e, c)) != 0)
		goto done;
	if ((rc = cli_check_alias_free(e.st, c, c->alias)) != 0)
		goto done;
	if ((rc = cli_pw_dup(&kp, &e.kp)) != 0)
		goto done;
	n = (size_t)sk_X509_num(chain);
	ders = calloc(n, sizeof(*ders));
	lens = calloc(n, sizeof(*lens));
	if (!ders || !lens) {
		cli_err(NULL, "out of memory");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		if ((rc = cli_cert_der(&ders[i], &lens[i],
				       sk_X509_value(chain, (int)i))) != 0)
			goto done;
	err = wks_store_set_private_key(e.st, c->alias, pkcs8, pkcs8_len,
					(const uint8_t *const *)ders, lens, n,
					kp.p, kp.len);
	if (err < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, "cannot import");
		goto done;
	}
	if ((rc = cli_store_edit_commit(&e, c, NULL)) == 0)
		cli_say_imported(e.st, c->alias);
done:
	for (size_t i = 0; ders && i < n; i++)
		free(ders[i]);
	free(ders);
	free(lens);
	cli_free_secret(pkcs8, pkcs8_len);
	EVP_PKEY_free(pkey);
	sk_X509_pop_free(pool, X509_free);
	sk_X509_pop_free(chain, X509_free);
	cli_store_edit_end(&e);
	cli_pw_clear(&kp);
	return rc;
}
