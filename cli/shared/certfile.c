/*
 * Certificates from a file for wks(1) import-key --chain, import-cert and
 * printcert: PEM ("CERTIFICATE", "TRUSTED CERTIFICATE", "PKCS7" blocks,
 * others such as a private key skipped and wiped), a DER PKCS#7
 * SignedData, or DER certificates back to back.  Everything is parsed
 * from memory with exact lengths (trailing bytes after a DER object are
 * refused).  Fuzzed by fuzz/fuzz_printcert.c and fuzz/fuzz_import.c.
 * (A CA bundle or folder for import-certs has its own reader,
 * certbundle.c, which names and skips what is not a certificate.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

#include "cli.h"

static int push_p7(STACK_OF(X509) *certs, const unsigned char *der, long len,
		   const char *path, int *found)
{
	const unsigned char *p = der;
	PKCS7 *p7 = d2i_PKCS7(NULL, &p, len);
	STACK_OF(X509) *in = NULL;
	int rc = 0;

	if (!p7 || p != der + len) {
		PKCS7_free(p7);
		return cli_ssl_err(CLI_EXIT_MALFORMED, path,
				   "malformed PKCS#7");
	}
	if (PKCS7_type_is_signed(p7) && p7->d.sign) {
		in = p7->d.sign->cert;
		*found = 1;
	} else {
		cli_err(path, "a PKCS#7 that is not SignedData holds no "
			"certificates");
		rc = CLI_EXIT_MALFORMED;
	}
	for (int i = 0; rc == 0 && i < sk_X509_num(in); i++) {
		X509 *x = sk_X509_value(in, i);

		if (!X509_up_ref(x) || !sk_X509_push(certs, x)) {
			X509_free(x);
			cli_err(path, "out of memory");
			rc = CLI_EXIT_FAIL;
		}
	}
	PKCS7_free(p7);
	return rc;
}

int cli_push_cert_der(STACK_OF(X509) *certs, const unsigned char *der,
		      long len, const char *path, int aux)
{
	const unsigned char *p = der;
	X509 *x = aux ? d2i_X509_AUX(NULL, &p, len) : d2i_X509(NULL, &p, len);

	if (!x || p != der + len) {
		X509_free(x);
		return cli_ssl_err(CLI_EXIT_MALFORMED, path,
				   "malformed certificate");
	}
	if (!sk_X509_push(certs, x)) {
		X509_free(x);
		cli_err(path, "out of memory");
		return CLI_EXIT_FAIL;
	}
	return 0;
}

int cli_has_pem(const uint8_t *data, size_t len)
{
	static const char tag[] = "-----BEGIN ";

	for (size_t i = 0; i + sizeof(tag) - 1 <= len; i++)
		if (!memcmp(data + i, tag, sizeof(tag) - 1))
			return 1;
	return 0;
}

int cli_parse_certs_p7(STACK_OF(X509) *certs, const uint8_t *data,
		       size_t len, const char *path)
{
	int rc = 0, found = 0, before = sk_X509_num(certs);

	if (len > (size_t)INT32_MAX) {
		cli_err(path, "too large");
		rc = CLI_EXIT_LIMIT;
	} else if (cli_has_pem(data, len)) {
		BIO *in = BIO_new_mem_buf(data, (int)len);

		while (in && rc == 0) {
			char *name = NULL, *header = NULL;
			unsigned char *der = NULL;
			long dlen = 0;

			if (PEM_read_bio(in, &name, &header, &der, &dlen) != 1) {
				unsigned long e = ERR_peek_last_error();

				if (ERR_GET_REASON(e) == PEM_R_NO_START_LINE)
					ERR_clear_error();
				else
					rc = cli_ssl_err(CLI_EXIT_MALFORMED,
							 path, "malformed PEM");
				break;
			}
			if (!strcmp(name, PEM_STRING_PKCS7) ||
			    !strcmp(name, "CERTIFICATE CHAIN"))
				rc = push_p7(certs, der, dlen, path, &found);
			else if (!strcmp(name, PEM_STRING_X509) ||
				 !strcmp(name, PEM_STRING_X509_OLD))
				rc = cli_push_cert_der(certs, der, dlen, path,
						       0);
			else if (!strcmp(name, PEM_STRING_X509_TRUSTED))
				rc = cli_push_cert_der(certs, der, dlen, path,
						       1);
			OPENSSL_free(name);
			OPENSSL_free(header);
			/* a chain file may hold the private key too */
			OPENSSL_clear_free(der, (size_t)(dlen > 0 ? dlen : 0));
		}
		if (!in) {
			cli_err(path, "out of memory");
			rc = CLI_EXIT_FAIL;
		}
		BIO_free(in);
	} else {
		/* DER: one PKCS#7, or certificates back to back. */
		const unsigned char *p = data;
		PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long)len);

		if (p7 && p == data + len) {
			PKCS7_free(p7);
			rc = push_p7(certs, data, (long)len, path, &found);
		} else {
			const unsigned char *end = data + len;

			PKCS7_free(p7);
			ERR_clear_error();
			p = data;
			while (rc == 0 && p < end) {
				const unsigned char *q = p;
				X509 *x = d2i_X509(NULL, &q, end - p);

				if (!x) {
					rc = cli_ssl_err(CLI_EXIT_MALFORMED, path,
							 "not a certificate or "
							 "PKCS#7 (PEM or DER)");
					break;
				}
				if (!sk_X509_push(certs, x)) {
					X509_free(x);
					cli_err(path, "out of memory");
					rc = CLI_EXIT_FAIL;
				}
				p = q;
			}
		}
	}
	if (rc == 0 && sk_X509_num(certs) == before) {
		cli_err(path, found ? "the PKCS#7 holds no certificate" :
			"no certificate found");
		rc = CLI_EXIT_MALFORMED;
	}
	return rc;
}

int cli_load_certs_p7(STACK_OF(X509) *certs, const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	if ((rc = cli_read_file(&data, &len, path)) != 0)
		return rc;
	rc = cli_parse_certs_p7(certs, data, len, path);
	cli_free_secret(data, len);
	return rc;
}

