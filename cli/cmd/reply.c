/*
 * wks import-cert onto a private key entry: installing a CA's reply, by
 * keytool's rules (sun.security.tools.keytool.Main.installReply):
 *
 *   - the reply (one certificate, a PEM chain, a PKCS#7 in PEM or DER)
 *     must hold a certificate whose public key is the entry's, else
 *     "Public keys in reply and keystore don't match";
 *   - a reply with several certificates must form one chain from that
 *     certificate (each signed by the next);
 *   - a chain that does not end in a self-signed certificate is completed
 *     from the store's trusted certificate entries, issuer by issuer; when
 *     an issuer is missing: "Failed to establish chain from reply", naming
 *     the issuer;
 *   - the key itself is kept (the same PKCS#8 bytes, encrypted again
 *     under the key password) and only the chain is replaced.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cli.h"

/* ---- the chain ------------------------------------------------------------ */

static char *name_text(X509_NAME *n)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *mem, *s = NULL, *d = NULL;
	long len;

	if (!b)
		return NULL;
	X509_NAME_print_ex(b, n, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
	len = BIO_get_mem_data(b, &mem);
	if ((s = malloc((size_t)len + 1))) {
		memcpy(s, mem, (size_t)len);
		s[len] = 0;
		d = cli_display_escaped(s);
		free(s);
	}
	BIO_free(b);
	return d;
}

static int signed_by(X509 *subject, X509 *issuer)
{
	EVP_PKEY *pk;
	int ok;

	if (X509_check_issued(issuer, subject) != X509_V_OK)
		return 0;
	pk = X509_get0_pubkey(issuer);
	ok = pk && X509_verify(subject, pk) == 1;
	ERR_clear_error();
	return ok;
}

static int self_signed(X509 *x)
{
	return X509_check_issued(x, x) == X509_V_OK;
}

/* The trusted certificate entries of the store. */
static int trusted_certs(STACK_OF(X509) **out, wks_store *st,
			 const char *file)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	char **aliases = NULL;
	size_t n = 0;
	int err, rc = 0;

	*out = NULL;
	if (!sk) {
		cli_err(file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((err = wks_store_aliases(&aliases, &n, st)) < 0) {
		sk_X509_free(sk);
		return cli_lib_err(file, NULL, err, NULL);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		X509 *x = NULL;

		if (wks_store_entry_type(st, aliases[i]) !=
		    WKS_ENTRY_CERTIFICATE)
			continue;
		if ((err = wks_store_get_cert(&x, st, aliases[i], 0)) < 0) {
			rc = cli_lib_err(file, aliases[i], err, NULL);
		} else if (!sk_X509_push(sk, x)) {
			X509_free(x);
			cli_err(file, "out of memory");
			rc = CLI_EXIT_FAIL;
		}
	}
	wks_aliases_free(aliases);
	if (rc) {
		sk_X509_pop_free(sk, X509_free);
		return rc;
	}
	*out = sk;
	return 0;
}

/* Complete `chain` (leaf first) up to a self-signed certificate from
 * `trusted`; `file` is the reply, for messages. */
static int complete_chain(STACK_OF(X509) *chain, STACK_OF(X509) *trusted,
			  const char *file)
{
	/* Each trusted certificate is used at most once: no loops. */
	for (int guard = 0; guard <= sk_X509_num(trusted); guard++) {
		X509 *top = sk_X509_value(chain, sk_X509_num(chain) - 1), *next;
		char *d;

		if (self_signed(top))
			return 0;
		next = NULL;
		for (int i = 0; i < sk_X509_num(trusted) && !next; i++) {
			X509 *t = sk_X509_value(trusted, i);
			int used = 0;

			for (int j = 0; j < sk_X509_num(chain) && !used; j++)
				used = X509_cmp(t, sk_X509_value(chain, j)) == 0;
			if (!used && signed_by(top, t))
				next = t;
		}
		if (!next) {
			d = name_text(X509_get_issuer_name(top));
			cli_err(file, "Failed to establish chain from reply: the "
				"issuer \"%s\" is not a trusted certificate of "
				"the store (import it first with import-cert)",
				d ? d : "?");
			free(d);
			return CLI_EXIT_INVALID;
		}
		if (!X509_up_ref(next) || !sk_X509_push(chain, next)) {
			X509_free(next);
			cli_err(file, "out of memory");
			return CLI_EXIT_FAIL;
		}
	}
	cli_err(file, "Failed to establish chain from reply: the issuers "
		"form a loop");
	return CLI_EXIT_INVALID;
}

int cli_import_reply(cli_edit *e, cli_ctx *c, STACK_OF(X509) *certs)
{
	wks_store *st = e->st;
	cli_pw kp = CLI_PW_INIT;
	STACK_OF(X509) *chain = NULL, *trusted = NULL, *old = NULL;
	wks_key *key = NULL;
	EVP_PKEY *pub = NULL;
	X509 *leaf = NULL;
	uint8_t **ders = NULL;
	size_t *lens = NULL, n = 0, kl = 0;
	const uint8_t *pkcs8;
	char *da = cli_display(c->alias);
	int rc, err;

	/* The key's public half: the entry's certificate's (no password
	 * needed to refuse a wrong reply), else from the key itself. */
	if ((rc = cli_store_certs(&old, st, c->keystore, c->alias)) != 0)
		goto done;
	if (sk_X509_num(old) > 0) {
		pub = X509_get_pubkey(sk_X509_value(old, 0));
		ERR_clear_error();
	}
	if (!pub || sk_X509_num(old) == 0) {
		if ((rc = cli_pw_dup(&kp, &e->kp)) != 0)
			goto done;
		if ((err = wks_store_get_pkey(&pub, st, c->alias, kp.p,
					      kp.len)) < 0) {
			rc = cli_lib_err(c->keystore, c->alias, err, NULL);
			goto done;
		}
	}
	for (int i = 0; i < sk_X509_num(certs) && !leaf; i++) {
		EVP_PKEY *pk = X509_get0_pubkey(sk_X509_value(certs, i));

		if (pk && EVP_PKEY_eq(pk, pub) == 1)
			leaf = sk_X509_value(certs, i);
	}
	ERR_clear_error();
	if (!leaf) {
		cli_err(c->cert, "Public keys in reply and keystore don't "
			"match: no certificate of the reply is for the key of "
			"entry \"%s\"; the store is unchanged", da ? da : "");
		rc = CLI_EXIT_INVALID;
		goto done;
	}
	if (sk_X509_num(certs) == 1 && sk_X509_num(old) > 0 &&
	    X509_cmp(leaf, sk_X509_value(old, 0)) == 0) {
		cli_err(c->cert, "Certificate reply and certificate in "
			"keystore are identical");
		rc = CLI_EXIT_INVALID;
		goto done;
	}
	cli_warn_validity(c->cert, c->alias, leaf);
	/* The reply's own links: one chain from the leaf, nothing else. */
	if ((rc = cli_order_chain(&chain, leaf, NULL, certs, c->cert, 1)) != 0)
		goto done;
	if ((rc = trusted_certs(&trusted, st, c->keystore)) != 0 ||
	    (rc = complete_chain(chain, trusted, c->cert)) != 0)
		goto done;

	if (!kp.p && (rc = cli_pw_dup(&kp, &e->kp)) != 0)
		goto done;
	if ((err = wks_store_get_key(&key, st, c->alias, kp.p, kp.len)) < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, NULL);
		goto done;
	}
	pkcs8 = wks_key_data(key, &kl);
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
	err = wks_store_set_private_key(st, c->alias, pkcs8, kl,
					(const uint8_t *const *)ders, lens, n,
					kp.p, kp.len);
	if (err < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err,
				 "cannot install the reply");
		goto done;
	}
	rc = 0;
done:
	for (size_t i = 0; ders && i < n; i++)
		free(ders[i]);
	free(ders);
	free(lens);
	wks_key_free(key);
	EVP_PKEY_free(pub);
	sk_X509_pop_free(chain, X509_free);
	sk_X509_pop_free(trusted, X509_free);
	sk_X509_pop_free(old, X509_free);
	cli_pw_clear(&kp);
	free(da);
	return rc;
}
