/*
 * Making keys, names, extensions and signatures for wks(1) genkeypair and
 * certreq (certgen.c), keytool's syntax and defaults.
 */
#ifndef WKS_CLI_CERTGEN_H
#define WKS_CLI_CERTGEN_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "cli.h"

/* --dname ("CN=a\, b, O=Org, C=US", most specific first) as an X509_NAME
 * (encoded the other way round, as keytool does).  Returns 0 or an exit
 * status (message printed). */
int cli_parse_dname(X509_NAME **out, const char *dname);

/* Every --ext of `c` (san=..., ku=..., eku=..., bc=...; NAME:critical)
 * as extensions (*out NULL when there are none). */
int cli_parse_exts(STACK_OF(X509_EXTENSION) **out, const cli_ctx *c);

/* A new key from --keyalg (RSA, default; EC), --keysize, --curve; `desc`
 * gets "2048-bit RSA" or "256-bit EC (P-256)". */
int cli_keygen(EVP_PKEY **out, char *desc, size_t desc_len,
	       const cli_ctx *c);

/* The digest for --sigalg (NULL: keytool's default for the key); `name`
 * gets the Java name ("SHA256withRSA"). */
int cli_sigalg(const EVP_MD **md, char *name, size_t name_len, EVP_PKEY *key,
	       const char *sigalg);

/* Append a SubjectKeyIdentifier (SHA-1 of the public key bits) of `cert`
 * or `req` to *exts. */
int cli_add_ski(STACK_OF(X509_EXTENSION) **exts, X509 *cert, X509_REQ *req);

#endif
