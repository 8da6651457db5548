/*
 * wks(1): the shared declarations that take OpenSSL types, or need
 * wks/convert.h (Java keystores, PKCS#12), which only the OpenSSL build
 * has.  cli.h includes this file in that build; the files that use these
 * are built only there (cli/CMakeLists.txt).
 */
#ifndef WKS_CLI_OPENSSL_H
#define WKS_CLI_OPENSSL_H

#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "wks/convert.h" /* (includes wks/wks.h) */

#include "cli.h"

/* A keystore type the wks_java_*() reader takes (or refuses, saying why:
 * UBER): JKS, JCEKS, BKS, BCFKS, UBER. */
int cli_java_type(wks_keystore_type t);

/* Refuse password-based encryption whose iteration count exceeds
 * libwks.wks.maxIterationCount, before OpenSSL runs it: 0 or
 * CLI_EXIT_LIMIT with a message (pki.c). */
int cli_pbe_check(const X509_ALGOR *alg, const char *file, const char *what);

/* Store an entry's certificates (chain or single) into a new stack. */
int cli_store_certs(STACK_OF(X509) **out, wks_store *st, const char *file,
		    const char *alias);

/* ---- keys and certificates (pki.c) ------------------------------------ */

/*
 * Read a private key from `path`: PEM or DER; PKCS#8 (plain or
 * encrypted) or traditional RSA/EC.  An encrypted key's passphrase comes
 * from `inpass` (or the prompt).  *pkcs8 is the key as PKCS#8 DER: the
 * exact input bytes when the input was unencrypted PKCS#8, else OpenSSL's
 * encoding.  Certificates found in a PEM key file are appended to `certs`
 * (if not NULL).
 */
int cli_load_key(EVP_PKEY **pkey, uint8_t **pkcs8, size_t *pkcs8_len,
		 STACK_OF(X509) *certs, const char *path,
		 const cli_pwsrc *inpass);

/* Append every certificate of `path` (as cli_load_certs_p7: PEM bundle,
 * PKCS#7, or DER certificates) to `certs`, each remembering the file and
 * its position for chain errors.  Returns 0 or an exit status. */
int cli_load_certs(STACK_OF(X509) *certs, const char *path);

/*
 * Order `pool` into a chain, leaf first: the leaf is `leaf` if given,
 * else the certificate whose public key is `key`'s; then each issuer in
 * turn.  Duplicates are dropped; with `strict` a certificate that is not
 * part of the chain is an error.  *out holds new references.
 */
int cli_order_chain(STACK_OF(X509) **out, X509 *leaf, EVP_PKEY *key,
		    STACK_OF(X509) *pool, const char *file, int strict);


/* The DER of a certificate (heap, free()). */
int cli_cert_der(uint8_t **out, size_t *out_len, X509 *x);

/* "RSA 2048", "EC P-256", "ED25519", "ML-DSA-44" for a certificate's key. */
void cli_key_desc(char *out, size_t out_len, X509 *x);

/* Print verbose certificate details (subject, issuer, validity,
 * fingerprint, key) indented by `indent` spaces. */
void cli_print_cert(FILE *f, X509 *x, int indent);

/* ---- PKCS#12 (pkcs12.c, over wks/convert.h) ------------------------- */

typedef struct {
	char *alias;            /* friendlyName, or NULL */
	wks_entry_type type;    /* PRIVATE_KEY, CERTIFICATE or SECRET_KEY */
	uint8_t *pkcs8;         /* private key: PKCS#8 DER; secret key: the
	                         * raw key */
	size_t pkcs8_len;
	char *algorithm;        /* secret key: JCA name ("AES", ...) */
	STACK_OF(X509) *chain;  /* private key: leaf first; certificate: 1 */
} cli_p12_entry;

/* Parse a PKCS#12 file into entries (wks_p12_parse()): keys with their
 * chains (matched by localKeyID, else by public key), secret keys, and
 * the certificates that belong to no chain or that Java marked trusted.  A file without a MAC is refused (CLI_EXIT_INVALID) unless
 * `no_mac_ok` (--no-mac-ok).  Every failure to decrypt or to decode what
 * was decrypted gives the same message.  Returns 0 or an exit status
 * (message printed). */
int cli_p12_read(cli_p12_entry **out, size_t *count, const char *file,
		 const uint8_t *data, size_t len, const cli_pw *pw,
		 int no_mac_ok);
void cli_p12_free(cli_p12_entry *e, size_t count);

/* Put the entries into `st` (only `only` if not NULL; names for entries
 * without a friendlyName are made up).  The new keys' derivations run
 * first as one batch, unless `prepared` (cli_store_edit_prekeys did).
 * Returns 0 or an exit status. */
int cli_p12_import(wks_store *st, cli_ctx *c, const char *p12file,
		   cli_p12_entry *e, size_t count, const char *only,
		   const cli_pw *keypw, int prepared);
/* How many key entries cli_p12_import() would set (for
 * cli_store_edit_prekeys). */
size_t cli_p12_key_count(const cli_p12_entry *e, size_t count,
			 const char *only);

/*
 * Build a PKCS#12 of the key, secret key and certificate entries of `st`
 * (only `alias` if not NULL; wks_convert_write_p12_keys()), keys opened
 * by cli_key_get() with `keypw`, encrypted with
 * AES-256-CBC/PBKDF2 under `p12pw`, MAC HMAC-SHA-256, `iterations` for
 * all three (see cli_export_iterations()).  *out is DER.  With `report`
 * (convert) each entry is reported as exported or skipped, with a
 * summary (cli_say_entry).
 */
int cli_p12_export(uint8_t **out, size_t *out_len, wks_store *st,
		   const char *file, const char *alias, const cli_pw *keypw,
		   const cli_pw *p12pw, int iterations, int report);

/* ---- CA bundles (certbundle.c; wks import-certs) ---------------------- */

typedef struct {
	X509 *x;
	unsigned char fp[32]; /* SHA-256 of the DER */
	char *alias;          /* the alias given (imported ones) */
	int present;          /* the store holds it already */
} cli_cert_item;

typedef struct {
	cli_cert_item *v;
	size_t n, cap;
	size_t dups; /* the same certificate again within the input */
} cli_cert_list;

/*
 * Read certificates into `l`, each once (by SHA-256; repeats counted in
 * l->dups): cli_cert_list_read() from a file ("-": stdin) or every
 * regular file of a folder (in name order; dot files, subfolders and
 * files that hold no certificate are skipped with a note);
 * cli_cert_list_read_buffer() from bytes (`path` names them; with
 * `in_folder` a buffer without certificates is skipped with a note
 * rather than an error).  PEM (CERTIFICATE, TRUSTED CERTIFICATE, PKCS7
 * blocks; others skipped with a note), a DER PKCS#7 or DER certificates
 * back to back.  Bad PEM or a malformed certificate is an error
 * (CLI_EXIT_MALFORMED, naming the PEM block).  Returns 0 or an exit
 * status (message printed).
 */
int cli_cert_list_read(cli_cert_list *l, const char *path);
int cli_cert_list_read_buffer(cli_cert_list *l, const uint8_t *data,
			      size_t len, const char *path, int in_folder);
/* Mark what `st` holds already as a certificate entry; *present counts. */
int cli_cert_list_mark_present(cli_cert_list *l, wks_store *st,
			       const char *file, size_t *present);
/*
 * Put the certificates not present into `st` as trusted certificate
 * entries: alias `prefix` + the lowercased CN (else O, else the first 16
 * hex digits of the SHA-256), runs of other characters one '-', with
 * -2, -3, ... where the store or this import has it already.  With
 * `verbose` each alias and subject is printed; a certificate that has
 * expired or is not yet valid warns.  *imported counts.
 */
int cli_cert_list_store(cli_cert_list *l, wks_store *st, const char *prefix,
			int verbose, const char *file, size_t *imported);
void cli_cert_list_free(cli_cert_list *l);


/* ---- certificate details (certinfo.c) ---------------------------------- */

/* 1 if `x` has expired, -1 if it is not yet valid, else 0. */
int cli_cert_validity(X509 *x);
/* list -v: status (valid, EXPIRED, NOT YET VALID), serial, signature
 * algorithm, SHA-1, SubjectAltName, key usage, extended key usage and
 * basic constraints, indented, after cli_print_cert(). */
void cli_print_cert_details(FILE *f, X509 *x, int indent);
/* list --json: one JSON object of subject, issuer, serial, not_before,
 * not_after (ISO 8601 UTC), status, signature_algorithm, sha1,
 * key_algorithm, key_size (and key_curve). */
void cli_json_cert(FILE *f, X509 *x);
/* Warn on stderr when `x` (imported under `alias`, may be NULL) has
 * expired or is not yet valid. */
void cli_warn_validity(const char *file, const char *alias, X509 *x);

/*
 * import-cert onto a private key entry (a CA reply): `certs` (the reply:
 * one certificate, a chain, or the contents of a PKCS#7) must hold the
 * key's certificate; the new chain is the reply's, completed from the
 * store's trusted certificates, and replaces the entry's chain, the key
 * kept as it is.  Runs inside an edit (e); does not commit.  Returns 0
 * or an exit status (message printed; the store then is unchanged).
 */
int cli_import_reply(cli_edit *e, cli_ctx *c, STACK_OF(X509) *certs);

/* Load certificates for import-cert / printcert: PEM (CERTIFICATE or
 * PKCS7 blocks), a DER PKCS#7, or DER certificates.  Returns 0 or an
 * exit status. */
int cli_load_certs_p7(STACK_OF(X509) *certs, const char *path);
/* The same from memory (`path` names it in messages) (certfile.c). */
int cli_parse_certs_p7(STACK_OF(X509) *certs, const uint8_t *data,
		       size_t len, const char *path);
/* Append the DER certificate der[0..len) (exactly; with `aux`, a
 * TRUSTED CERTIFICATE) to `certs`.  Returns 0 or an exit status. */
int cli_push_cert_der(STACK_OF(X509) *certs, const unsigned char *der,
		      long len, const char *path, int aux);

/* Print `certs` as keytool -printcert does (cmd_printcert.c), and its
 * warnings about weak algorithms and keys on `warn` (NULL: none). */
void cli_print_certs(FILE *f, STACK_OF(X509) *certs, FILE *warn);

#endif
