/*
 * wks genkeypair: a new key pair and a self-signed certificate, made in
 * memory and stored as a private key entry (the key never touches a file),
 * as keytool -genkeypair does: version 3, a random positive 64-bit serial
 * number, a SubjectKeyIdentifier, the extensions of --ext, valid from now
 * for --validity days (90), signed with keytool's default algorithm for
 * the key.  A store that does not exist is created (as keytool does).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cli.h"
#include "certgen.h"

static int random_serial(X509 *x)
{
	BIGNUM *bn = BN_new();
	int ok = 0;

	/* keytool: new BigInteger(64, SecureRandom), never zero. */
	while (bn && BN_rand(bn, 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
	       !(ok = !BN_is_zero(bn)))
		;
	ok = ok && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok;
}

/* The self-signed certificate of `key`. */
static int make_cert(X509 **out, EVP_PKEY *key, X509_NAME *name, long days,
		     STACK_OF(X509_EXTENSION) *exts, const EVP_MD *md)
{
	STACK_OF(X509_EXTENSION) *all = NULL;
	X509 *x = X509_new();
	int rc;

	*out = NULL;
	if (!x || !X509_set_version(x, X509_VERSION_3) || !random_serial(x) ||
	    !X509_set_subject_name(x, name) || !X509_set_issuer_name(x, name) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), 0) ||
	    !X509_time_adj_ex(X509_getm_notAfter(x), (int)days, 0, NULL) ||
	    !X509_set_pubkey(x, key)) {
		rc = cli_ssl_err(CLI_EXIT_FAIL, NULL,
				 "cannot make the certificate");
		goto done;
	}
	/* The SubjectKeyIdentifier first, then --ext in the order given. */
	if ((rc = cli_add_ski(&all, x, NULL)) != 0)
		goto done;
	for (int i = 0; i < sk_X509_EXTENSION_num(exts); i++)
		if (!X509v3_add_ext(&all, sk_X509_EXTENSION_value(exts, i), -1))
			goto nomem;
	for (int i = 0; i < sk_X509_EXTENSION_num(all); i++)
		if (!X509_add_ext(x, sk_X509_EXTENSION_value(all, i), -1))
			goto nomem;
	if (X509_sign(x, key, md) <= 0) {
		rc = cli_ssl_err(CLI_EXIT_FAIL, NULL,
				 "cannot sign the certificate");
		goto done;
	}
	*out = x;
	x = NULL;
	rc = 0;
	goto done;
nomem:
	cli_err(NULL, "out of memory");
	rc = CLI_EXIT_FAIL;
done:
	sk_X509_EXTENSION_pop_free(all, X509_EXTENSION_free);
	X509_free(x);
	return rc;
}

static void print_name(FILE *f, X509_NAME *name)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *mem, *s, *d;
	long n;

	if (!b)
		return;
	X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
	n = BIO_get_mem_data(b, &mem);
	if ((s = malloc((size_t)n + 1))) {
		memcpy(s, mem, (size_t)n);
		s[n] = 0;
		d = cli_display_escaped(s);
		fputs(d ? d : "", f);
		free(d);
		free(s);
	}
	BIO_free(b);
}

int cmd_genkeypair(cli_ctx *c)
{
	cli_edit e = CLI_EDIT_INIT;
	wks_store *created = NULL, *st;
	cli_pw newpw = CLI_PW_INIT, kp = CLI_PW_INIT;
	const cli_pw *storepw;
	X509_NAME *name = NULL;
	STACK_OF(X509_EXTENSION) *exts = NULL;
	EVP_PKEY *key = NULL;
	X509 *cert = NULL;
	const EVP_MD *md;
	char desc[64], sigalg[32];
	long days = 90;
	struct stat sb;
	int rc, err, create;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0 ||
	    (rc = cli_need(c->dname, "--dname")) != 0)
		return rc;
	/* Every option is checked before a password is asked. */
	if (c->validity) {
		char *end;

		errno = 0;
		days = strtol(c->validity, &end, 10);
		if (errno || end == c->validity || *end || days < 1 ||
		    days > 3000000) {
			cli_err(NULL, "--validity: \"%s\" is not a number of "
				"days from 1 to 3000000", c->validity);
			return CLI_EXIT_USAGE;
		}
		/* X.509 times end with 9999-12-31 23:59:59 UTC. */
		if ((double)time(NULL) + (double)days * 86400.0 >
		    253402300799.0) {
			cli_err(NULL, "--validity: %ld days from now is after "
				"9999-12-31, the last date a certificate can "
				"hold", days);
			return CLI_EXIT_USAGE;
		}
	}
	if ((rc = cli_parse_dname(&name, c->dname)) != 0 ||
	    (rc = cli_parse_exts(&exts, c)) != 0)
		goto done;
	if (c->keysize || c->curve || c->keyalg) {
		/* Only the checks: the key is made once the store is open. */
		const char *a = c->keyalg ? c->keyalg : "RSA";

		if (strcasecmp(a, "RSA") && strcasecmp(a, "EC")) {
			cli_err(NULL, "--keyalg: \"%s\" is not RSA or EC", a);
			rc = CLI_EXIT_USAGE;
			goto done;
		}
	}

	/* RSA and EC keys Java reads; the empty alias it never returns. */
	if ((rc = cli_java_check(c, c->keystore, c->alias, NULL, 0)) != 0)
		goto done;
	create = lstat(c->keystore, &sb) != 0 && errno == ENOENT;
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
		if ((err = wks_store_new(&created)) < 0) {
			rc = cli_lib_err(c->keystore, NULL, err, NULL);
			goto done;
		}
		if ((rc = cli_store_iterations(created, c)) != 0)
			goto done;
		st = created;
		storepw = &newpw;
	} else {
		if ((rc = cli_store_edit_begin(&e, c)) != 0)
			goto done;
		st = e.st;
		storepw = &e.pw;
	}
	if (wks_store_contains(st, c->alias)) {
		char *d = cli_display(c->alias);

		cli_err(c->keystore, "Key pair not generated, alias \"%s\" "
			"already exists", d ? d : "");
		free(d);
		rc = CLI_EXIT_EXISTS;
		goto done;
	}
	/* An edit read its key password before it took the lock. */
	if ((rc = create ? cli_keypass_new(&kp, c, storepw, c->alias) :
			  cli_pw_dup(&kp, &e.kp)) != 0)
		goto done;
	if ((rc = cli_keygen(&key, desc, sizeof(desc), c)) != 0 ||
	    (rc = cli_sigalg(&md, sigalg, sizeof(sigalg), key,
			     c->sigalg)) != 0 ||
	    (rc = make_cert(&cert, key, name, days, exts, md)) != 0)
		goto done;
	err = wks_store_set_pkey(st, c->alias, key, &cert, 1, kp.p, kp.len);
	if (err < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, "cannot store");
		goto done;
	}
	if (create)
		rc = cli_store_create(st, c, c->keystore, &newpw);
	else
		rc = cli_store_edit_commit(&e, c, NULL);
	if (rc == 0) {
		char *d = cli_display(c->alias);

		printf("Generated a %s key pair and a self-signed certificate "
		       "(%s) valid for %ld days\n\tfor: ", desc, sigalg, days);
		print_name(stdout, X509_get_subject_name(cert));
		printf("\nStored as entry \"%s\" in %s%s\n", d ? d : "",
		       c->keystore, create ? " (a new store)" : "");
		free(d);
	}
done:
	X509_free(cert);
	EVP_PKEY_free(key); /* OpenSSL clears the private key's numbers */
	sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	X509_NAME_free(name);
	wks_store_free(created);
	cli_store_edit_end(&e);
	cli_pw_clear(&kp);
	cli_pw_clear(&newpw);
	return rc;
}
