/*
 * wks certreq: a PKCS#10 certificate request for a private key entry, as
 * keytool -certreq makes it: the subject of the entry's certificate, its
 * public key, an extension request with a SubjectKeyIdentifier and the
 * extensions of --ext, signed with the key (keytool's default algorithm
 * or --sigalg).  PEM output.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cli.h"
#include "certgen.h"

int cmd_certreq(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT, kp = CLI_PW_INIT;
	STACK_OF(X509_EXTENSION) *exts = NULL, *all = NULL;
	EVP_PKEY *key = NULL;
	X509 *cert = NULL;
	X509_REQ *req = NULL;
	const EVP_MD *md;
	char sigalg[32];
	unsigned char *der = NULL;
	uint8_t *pem = NULL;
	size_t pem_len = 0;
	int rc, err, der_len;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0 ||
	    (rc = cli_output_check(c, c->out)) != 0)
		return rc;
	if ((rc = cli_parse_exts(&exts, c)) != 0)
		return rc;
	if ((rc = cli_store_open(&st, &pw, c, CLI_STORE_VERIFY)) != 0)
		goto done;
	if (wks_store_entry_type(st, c->alias) != WKS_ENTRY_PRIVATE_KEY) {
		char *d = cli_display(c->alias);

		if (!wks_store_contains(st, c->alias)) {
			cli_err(c->keystore, "no entry \"%s\"", d ? d : "");
			rc = CLI_EXIT_NOTFOUND;
		} else {
			cli_err(c->keystore, "entry \"%s\" is not a private "
				"key entry", d ? d : "");
			rc = CLI_EXIT_INVALID;
		}
		free(d);
		goto done;
	}
	if ((err = wks_store_get_cert(&cert, st, c->alias, 0)) < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err,
				 "no certificate to take the subject from");
		goto done;
	}
	if ((rc = cli_keypass(&kp, c, &pw, c->alias)) != 0)
		goto done;
	if ((err = wks_store_get_pkey(&key, st, c->alias, kp.p, kp.len)) < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, NULL);
		goto done;
	}
	if ((rc = cli_sigalg(&md, sigalg, sizeof(sigalg), key,
			     c->sigalg)) != 0)
		goto done;
	if (!(req = X509_REQ_new()) || !X509_REQ_set_version(req, 0) ||
	    !X509_REQ_set_subject_name(req, X509_get_subject_name(cert)) ||
	    !X509_REQ_set_pubkey(req, key)) {
		rc = cli_ssl_err(CLI_EXIT_FAIL, NULL,
				 "cannot make the request");
		goto done;
	}
	if ((rc = cli_add_ski(&all, NULL, req)) != 0)
		goto done;
	for (int i = 0; i < sk_X509_EXTENSION_num(exts); i++)
		if (!X509v3_add_ext(&all, sk_X509_EXTENSION_value(exts, i),
				    -1)) {
			cli_err(NULL, "out of memory");
			rc = CLI_EXIT_FAIL;
			goto done;
		}
	if (!X509_REQ_add_extensions(req, all) ||
	    X509_REQ_sign(req, key, md) <= 0 ||
	    (der_len = i2d_X509_REQ(req, &der)) <= 0) {
		rc = cli_ssl_err(CLI_EXIT_FAIL, NULL,
				 "cannot sign the request");
		goto done;
	}
	if ((rc = cli_pem_encode(&pem, &pem_len, PEM_STRING_X509_REQ, der,
				 (size_t)der_len)) != 0)
		goto done;
	rc = cli_write_output(c, c->out, pem, pem_len, 0, 0);
done:
	free(pem);
	OPENSSL_free(der);
	X509_REQ_free(req);
	X509_free(cert);
	EVP_PKEY_free(key);
	sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	sk_X509_EXTENSION_pop_free(all, X509_EXTENSION_free);
	wks_store_free(st);
	cli_pw_clear(&kp);
	cli_pw_clear(&pw);
	return rc;
}
