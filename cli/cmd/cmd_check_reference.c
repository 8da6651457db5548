/*
 * wks check-reference: read a key reference the way a server will, and say
 * what is wrong (docs/PROVIDER.md, "Checking a reference").
 *
 * A server reads its key with PEM_read_bio_PrivateKey() in OpenSSL's
 * default library context, which loaded OpenSSL's configuration
 * (OPENSSL_CONF, else OpenSSL's own file): wks.so must be loaded there
 * with references = yes, and its decoder then opens the store with the
 * reference's password sources, as the server's user.  This command does
 * exactly that, in its own process (so run it as that user with that
 * OPENSSL_CONF), and prints the provider's messages as the server would
 * log them.  apache2 -t does not read keys, and a reload that fails to
 * read one stops the server: this is the check to run first.
 *
 * When the read fails, the reference is gone through again with libwks
 * alone (the steps of the provider's decoder: password sources, store,
 * entry, key password) to name the step that fails and to choose the
 * exit status; if libwks opens the key, what is wrong is OpenSSL's
 * configuration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/conf.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include <wks/uri.h>

#include "cli.h"

/* How wks.so names itself (OSSL_PROV_PARAM_NAME), and its parameter
 * saying whether it reads references (docs/PROVIDER.md). */
#define WKS_PROV_NAME "wks: WKS keystores"
#define WKS_PROV_REFERENCES "wks-references"

typedef struct {
	const char *name;  /* the configuration's name of wks.so, or NULL */
	int references;    /* its references setting: 1, 0, -1 (bad) */
} prov_found;

static int find_wks(OSSL_PROVIDER *prov, void *arg)
{
	prov_found *f = arg;
	const char *name = NULL;
	int refs = 0;
	OSSL_PARAM p[3];

	p[0] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_NAME,
					     (char **)&name, 0);
	p[1] = OSSL_PARAM_construct_int(WKS_PROV_REFERENCES, &refs);
	p[2] = OSSL_PARAM_construct_end();
	if (OSSL_PROVIDER_get_params(prov, p) && name &&
	    !strncmp(name, WKS_PROV_NAME, strlen(WKS_PROV_NAME))) {
		f->name = OSSL_PROVIDER_get0_name(prov);
		f->references = OSSL_PARAM_modified(&p[1]) ? refs : 0;
		return 0; /* found: stop */
	}
	return 1;
}

/* The server's passphrase callback: --inpass, else nothing. */
static int pem_cb(char *buf, int size, int rwflag, void *arg)
{
	const cli_pw *pw = arg;

	(void)rwflag;
	if (!pw || !pw->p || pw->len == 0 || pw->len > (size_t)size)
		return -1;
	memcpy(buf, pw->p, pw->len);
	return (int)pw->len;
}

/* Print the wks provider's errors on OpenSSL's queue as the server logs
 * them (its other entries only when it has none); the queue is
 * cleared. */
static void print_errors(const char *file, const char *prov)
{
	unsigned long e;
	const char *data;
	int flags, shown = 0;

	while ((e = ERR_peek_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
		const char *lib = ERR_lib_error_string(e);
		const char *reason = ERR_reason_error_string(e);

		if (prov && lib && !strcmp(lib, prov)) {
			cli_err(file, "%s: %s%s%s", prov,
				reason ? reason : "error",
				(flags & ERR_TXT_STRING) && data && *data ?
				": " : "",
				(flags & ERR_TXT_STRING) && data ? data : "");
			shown = 1;
		}
		ERR_get_error();
		if (!ERR_peek_error() && !shown)
			cli_err(file, "OpenSSL read no key from it: %s%s%s",
				reason ? reason : "error",
				(flags & ERR_TXT_STRING) && data && *data ?
				": " : "",
				(flags & ERR_TXT_STRING) && data ? data : "");
	}
}

/* A password of a reference's source into *out (a source the server has
 * and this process has not is not this command's to fix).  0 or an exit
 * status, with a message naming the source. */
static int read_src(cli_pw *out, const wks_pwsrc *src, const char *file,
		    const char *what)
{
	cli_pw got = CLI_PW_INIT;
	int err, rc;

	if ((err = wks_pwsrc_read(&got.p, &got.len, src, what)) < 0) {
		cli_err(file, "%s", wks_error_detail());
		return err == WKS_ERR_LIMIT ? CLI_EXIT_LIMIT : CLI_EXIT_IO;
	}
	rc = cli_pw_dup(out, &got);
	wks_free(got.p); /* wipes */
	return rc;
}

/*
 * The reference's steps with libwks alone, as the provider's decoder
 * takes them: 0 if the key opens, else an exit status with a message
 * naming the step.
 */
static int diagnose(const char *file, const wks_uri *ref, const cli_pw *inpw)
{
	const char *path = wks_uri_path(ref), *alias = wks_uri_alias(ref);
	const wks_pwsrc *ss = wks_uri_storepass(ref), *ks = wks_uri_keypass(ref);
	cli_pw spw = CLI_PW_INIT, kpw = CLI_PW_INIT;
	wks_store *st = NULL;
	wks_key *key = NULL;
	wks_entry_type t;
	char *da = cli_display(alias);
	int rc, err;

	if (ss && (rc = read_src(&spw, ss, file, "storepass")) != 0)
		goto done;
	if (!ss && inpw->p && (rc = cli_pw_dup(&spw, inpw)) != 0)
		goto done;
	if (ks && (rc = read_src(&kpw, ks, file, "keypass")) != 0)
		goto done;
	if (!spw.p && !kpw.p) {
		cli_err(file, "no password: the reference names no store "
			"password and the server's passphrase callback gives "
			"none here (--inpass)");
		rc = CLI_EXIT_USAGE;
		goto done;
	}
	if ((err = wks_store_new(&st)) < 0 ||
	    (err = wks_store_load_file(st, path, spw.p, spw.len)) < 0) {
		if (err == WKS_ERR_INTEGRITY) {
			cli_err(file, "the store password (%s) does not open "
				"%s: integrity check failed (a wrong password, "
				"or the store was modified)", ss ? "its "
				"storepass= source" : "--inpass", path);
			rc = CLI_EXIT_INTEGRITY;
		} else {
			rc = cli_lib_err(path, NULL, err, NULL);
		}
		goto done;
	}
	t = wks_store_entry_type(st, alias);
	if (t != WKS_ENTRY_PRIVATE_KEY) {
		cli_err(file, t == WKS_ENTRY_NONE ? "no entry \"%s\" in %s" :
			"entry \"%s\" in %s is not a private key",
			da ? da : "", path);
		rc = t == WKS_ENTRY_NONE ? CLI_EXIT_NOTFOUND : CLI_EXIT_INVALID;
		goto done;
	}
	err = wks_store_get_key(&key, st, alias, kpw.p ? kpw.p : spw.p,
				kpw.p ? kpw.len : spw.len);
	/* As the decoder does: a store password from the reference that
	 * does not open the key, then the passphrase callback's. */
	if (err == WKS_ERR_INTEGRITY && !kpw.p && ss && inpw->p)
		err = wks_store_get_key(&key, st, alias, inpw->p, inpw->len);
	if (err == WKS_ERR_INTEGRITY) {
		cli_err(file, "the key password (%s) does not open the key "
			"\"%s\" of %s: integrity check failed", ks ? "its "
			"keypass= source" : ss && inpw->p ? "the store "
			"password, then --inpass" : ss ? "the store password; "
			"a key password of its own comes from keypass= or the "
			"server's passphrase callback, --inpass here" :
			"--inpass", da ? da : "", path);
		rc = CLI_EXIT_INTEGRITY;
	} else if (err < 0) {
		rc = cli_lib_err(path, alias, err, NULL);
	} else {
		rc = 0;
	}
done:
	wks_key_free(key);
	wks_store_free(st);
	cli_pw_clear(&spw);
	cli_pw_clear(&kpw);
	free(da);
	return rc;
}

/* The key against the first certificate of --cert.  0 or an exit
 * status. */
static int match_cert(const cli_ctx *c, EVP_PKEY *pkey)
{
	STACK_OF(X509) *certs = sk_X509_new_null();
	int rc;

	if (!certs) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((rc = cli_load_certs_p7(certs, c->cert)) == 0 &&
	    X509_check_private_key(sk_X509_value(certs, 0), pkey) != 1) {
		ERR_clear_error();
		cli_err(c->file, "the key does not match the first "
			"certificate of %s", c->cert);
		rc = CLI_EXIT_INVALID;
	}
	sk_X509_pop_free(certs, X509_free);
	return rc;
}

int cmd_check_reference(cli_ctx *c)
{
	uint8_t *text = NULL;
	size_t len = 0;
	wks_uri *ref = NULL;
	prov_found prov = { NULL, 0 };
	cli_pw inpw = CLI_PW_INIT;
	char *conf = NULL, *da = NULL;
	const char *env = getenv("OPENSSL_CONF");
	EVP_PKEY *pkey = NULL;
	BIO *in = NULL;
	int rc, err;

	if ((rc = cli_need(c->file, "--file")) != 0)
		return rc;
	if ((rc = cli_read_file(&text, &len, c->file)) != 0)
		return rc;
	if ((err = wks_ref_parse(&ref, (const char *)text, len)) < 0) {
		cli_err(c->file, "%s", wks_error_detail());
		rc = err == WKS_ERR_LIMIT ? CLI_EXIT_LIMIT : CLI_EXIT_MALFORMED;
		goto done;
	}
	if (c->inpass.kind != CLI_PWSRC_NONE &&
	    (rc = cli_pw_get(&inpw, &c->inpass, "", "--inpass", 0)) != 0)
		goto done;

	/* OpenSSL's configuration, as the server's libcrypto loads it. */
	ERR_clear_error();
	conf = CONF_get1_default_config_file();
	if (!OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL)) {
		print_errors(c->file, NULL);
		cli_err(c->file, "OpenSSL's configuration %s%s does not load",
			conf ? conf : "", env ? " (OPENSSL_CONF)" : "");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	OSSL_PROVIDER_do_all(NULL, find_wks, &prov);
	if (!prov.name) {
		cli_err(c->file, "OpenSSL's configuration %s%s loads no wks "
			"provider: a server with it reads this file as a PEM "
			"block no decoder knows (\"No supported data to "
			"decode\"); name the service's openssl.cnf with "
			"OPENSSL_CONF (docs/PROVIDER.md, \"Servers\")",
			conf ? conf : "", env ? " (OPENSSL_CONF)" : "");
		rc = CLI_EXIT_FAIL;
	} else if (prov.references == 0) {
		cli_err(c->file, "the wks provider (\"%s\" in %s) is loaded "
			"without references = yes in its section: a server "
			"with this configuration reads this file as a PEM block "
			"no decoder knows", prov.name, conf ? conf : "");
		rc = CLI_EXIT_FAIL;
	} else {
		/* The server's read: a file BIO, the default context, its
		 * passphrase callback. */
		if (!(in = BIO_new_file(c->file, "r")))
			print_errors(c->file, NULL);
		else
			pkey = PEM_read_bio_PrivateKey_ex(in, NULL, pem_cb,
							  &inpw, NULL, NULL);
		if (pkey) {
			ERR_clear_error();
			if (c->cert && (rc = match_cert(c, pkey)) != 0)
				goto done;
			da = cli_display(wks_uri_alias(ref));
			printf("%s: OK: the key \"%s\" (%s, %d bits) of %s%s; "
			       "read as a server reads it: OpenSSL "
			       "configuration %s, provider \"%s\", uid %ju\n",
			       c->file, da ? da : "",
			       EVP_PKEY_get0_type_name(pkey),
			       EVP_PKEY_get_bits(pkey), wks_uri_path(ref),
			       c->cert ? ", matching the certificate" : "",
			       conf ? conf : "", prov.name,
			       (uintmax_t)geteuid());
			rc = fflush(stdout) == 0 ? 0 : CLI_EXIT_IO;
			goto done;
		}
		print_errors(c->file, prov.name);
		rc = CLI_EXIT_FAIL;
	}
	/* Which step fails, with libwks alone (it sets the status). */
	if ((err = diagnose(c->file, ref, &inpw)) != 0)
		rc = err;
	else if (prov.name && prov.references != 0)
		cli_err(c->file, "libwks alone opens the key with what the "
			"reference names: the failure above is the provider's "
			"(its configuration in %s)", conf ? conf : "");
done:
	EVP_PKEY_free(pkey);
	BIO_free(in);
	OPENSSL_free(conf);
	free(da);
	cli_pw_clear(&inpw);
	wks_uri_free(ref);
	cli_free_secret(text, len);
	return rc;
}
