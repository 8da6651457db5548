/*
 * What the provider benchmarks (wks-provider-bench, wks-ref-bench,
 * wks-search-bench) share: a clock, medians, how they fail, a throwaway
 * certificate, and a library context with wks.so.  Header-only (each
 * benchmark is one program of one file); the including file defines
 * BENCH_NAME, its program name, first.
 */
#ifndef WKS_BENCH_BENCHUTIL_H
#define WKS_BENCH_BENCHUTIL_H

#ifndef BENCH_NAME
#error "define BENCH_NAME (the program's name) before including benchutil.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include "wks/wks.h"

/* Milliseconds of the monotonic clock. */
static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n-1] (n > 0; sorts v). */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Exit 1 with `what`, libwks's last detail and OpenSSL's error queue. */
static inline void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", BENCH_NAME, what, wks_error_detail());
	ERR_print_errors_fp(stderr);
	exit(1);
}

/* A self-signed certificate for `key`, subject CN=`cn`, serial `serial`,
 * valid for a day. */
static inline X509 *bench_cert(EVP_PKEY *key, const char *cn, long serial)
{
	X509 *x = X509_new();
	X509_NAME *n;

	if (!x)
		die("X509_new");
	n = X509_get_subject_name(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400L);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, n);
	if (X509_sign(x, key, EVP_sha256()) <= 0)
		die("X509_sign");
	return x;
}

/*
 * A library context from an openssl.cnf (written to DIR/NAME.cnf, removed
 * once loaded) with the default provider and wks.so from `pdir`, wks's
 * section holding `settings`.  settings NULL: the default provider only;
 * "null": the default and the null provider (a control that offers
 * nothing).
 */
static inline OSSL_LIB_CTX *bench_context(const char *dir, const char *pdir,
					  const char *name,
					  const char *settings)
{
	char cnf[4200];
	OSSL_LIB_CTX *lc;
	FILE *f;

	snprintf(cnf, sizeof(cnf), "%s/%s.cnf", dir, name);
	if (!(f = fopen(cnf, "w")))
		die("writing an openssl.cnf");
	fprintf(f, "openssl_conf = openssl_init\n[openssl_init]\n"
		"providers = provider_sect\n[provider_sect]\n"
		"default = default_sect\n%s[default_sect]\nactivate = 1\n",
		!settings ? "" : strcmp(settings, "null") ? "wks = wks_sect\n" :
		"null = null_sect\n[null_sect]\nactivate = 1\n");
	if (settings && !strcmp(settings, "null"))
		settings = NULL;
	if (settings)
		fprintf(f, "[wks_sect]\nmodule = %s/wks.so\nactivate = 1\n%s",
			pdir, settings);
	fclose(f);
	if (!(lc = OSSL_LIB_CTX_new()) || !OSSL_LIB_CTX_load_config(lc, cnf) ||
	    (settings && !OSSL_PROVIDER_available(lc, "wks")))
		die("a library context");
	unlink(cnf);
	return lc;
}

#endif
