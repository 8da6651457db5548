/* wks-kdf-bench: libwks's native PBKDF2-HMAC-SHA512 against OpenSSL's
 * PKCS5_PBKDF2_HMAC, for the two derivations of the WKS format: 64 bytes
 * (store MAC key) and 96 bytes (entry keys), at 210,000 iterations.
 *
 *   wks-kdf-bench [-runs N] [-iter N] [-threads N]
 *                 [-path auto|scalar|openssl|avx2|avx512|avx512x8] [-json]
 *                 [-all] [-batch]
 *
 * Each figure is the median of N runs (default 7); native and OpenSSL runs
 * alternate so that both see the same machine.  -all adds a table of every
 * code path with 1 and 2 threads.  -batch adds batches of M independent
 * 96-byte derivations (each its own password and salt) on every path,
 * against one 96-byte derivation (AUTO) timed in the same run.  Exit
 * status 1 if an output differs from OpenSSL's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wks/backend.h"

/* The backend's PBKDF2 as the reference: OpenSSL's PKCS5_PBKDF2_HMAC, or
 * on the wolfCrypt build wc_PBKDF2 under the same name (the figures
 * labelled "OpenSSL" are then wolfCrypt's). */
#ifdef WKS_CRYPTO_OPENSSL
#include <openssl/evp.h>
#else
#include <stdint.h>

#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/hash.h>
#include <wolfssl/wolfcrypt/pwdbased.h>
#define EVP_sha512() WC_SHA512
static int PKCS5_PBKDF2_HMAC(const char *pw, int pw_len, const uint8_t *salt,
                             int salt_len, int iter, int md, int len,
                             uint8_t *out)
{
	return wc_PBKDF2(out, (const uint8_t *)pw, pw_len, salt, salt_len, iter,
	                 len, md) == 0;
}
#endif

#include "crypto/kdf.h"
#include "wks/wks.h"

#define MAX_RUNS 101

static const char pw[] = "wolfsslpassword";
static const uint8_t salt[16] = {
	0x5a, 0x17, 0x9e, 0x02, 0xc4, 0x81, 0x3b, 0x6f,
	0xd0, 0x44, 0x29, 0xe7, 0x1c, 0xa8, 0x73, 0x95
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int mismatch;

static double time_native(uint8_t *out, size_t len, uint32_t iter,
                          int threads, wks_kdf_path path)
{
	double t0 = now_ms();
	int rc = wks__pbkdf2_sha512_native(out, len, (const uint8_t *)pw,
	                                   strlen(pw), salt, sizeof(salt),
	                                   iter, threads, path);

	if (rc != WKS_OK) {
		fprintf(stderr, "wks-kdf-bench: %s: %s\n", wks_strerror(rc),
		        wks_error_detail());
		exit(2);
	}
	return now_ms() - t0;
}

static double time_openssl(uint8_t *out, size_t len, uint32_t iter)
{
	double t0 = now_ms();

	if (PKCS5_PBKDF2_HMAC(pw, (int)strlen(pw), salt, (int)sizeof(salt),
	                      (int)iter, EVP_sha512(), (int)len, out) != 1) {
		fprintf(stderr, "wks-kdf-bench: PKCS5_PBKDF2_HMAC failed\n");
		exit(2);
	}
	return now_ms() - t0;
}

/* Median native and OpenSSL times for one output length. */
static void measure(double *native_ms, double *openssl_ms, size_t len,
                    uint32_t iter, int threads, wks_kdf_path path, int runs)
{
	double tn[MAX_RUNS], to[MAX_RUNS];
	uint8_t a[128], b[128];
	int r;

	for (r = 0; r < runs; r++) {
		tn[r] = time_native(a, len, iter, threads, path);
		if (openssl_ms)
			to[r] = time_openssl(b, len, iter);
		if (openssl_ms && memcmp(a, b, len) != 0)
			mismatch = 1;
	}
	*native_ms = median(tn, runs);
	if (openssl_ms)
		*openssl_ms = median(to, runs);
}

static int parse_path(const char *s, wks_kdf_path *out)
{
	static const wks_kdf_path all[] = {
		WKS_KDF_PATH_AUTO, WKS_KDF_PATH_SCALAR, WKS_KDF_PATH_OPENSSL,
		WKS_KDF_PATH_AVX2, WKS_KDF_PATH_AVX512, WKS_KDF_PATH_AVX512X8
	};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(s, wks__kdf_path_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: wks-kdf-bench [-runs N] [-iter N] [-threads N] "
	        "[-path auto|scalar|openssl|avx2|avx512|avx512x8] [-json] "
	        "[-all] [-batch]\n");
	exit(2);
}

/* Every path with 1 and 2 threads, and OpenSSL, for 64 and 96 bytes. */
static void table(uint32_t iter, int runs)
{
	static const wks_kdf_path paths[] = {
		WKS_KDF_PATH_SCALAR, WKS_KDF_PATH_OPENSSL, WKS_KDF_PATH_AVX2,
		WKS_KDF_PATH_AVX512, WKS_KDF_PATH_AVX512X8, WKS_KDF_PATH_AUTO
	};
	static const size_t lens[] = { 64, 96 };
	double ms[2][2], ossl[2], dummy;
	size_t p, l;
	int t;

	for (l = 0; l < 2; l++)
		measure(&dummy, &ossl[l], lens[l], iter, 1, WKS_KDF_PATH_OPENSSL,
		        runs);
	printf("\n%-8s %12s %12s %12s %12s\n", "path", "64B 1 thr",
	       "64B 2 thr", "96B 1 thr", "96B 2 thr");
	for (p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
		if (!wks__kdf_path_available(paths[p]))
			continue;
		for (l = 0; l < 2; l++)
			for (t = 1; t <= 2; t++)
				measure(&ms[l][t - 1], NULL, lens[l], iter, t,
				        paths[p], runs);
		printf("%-8s", wks__kdf_path_name(paths[p]));
		for (l = 0; l < 2; l++)
			for (t = 0; t < 2; t++)
				printf(" %6.1f (%.2f)", ms[l][t],
				       ms[l][t] / ossl[l]);
		printf("\n");
	}
	printf("%-8s %12.1f %12s %12.1f\n", "OpenSSL", ossl[0], "", ossl[1]);
	printf("(ms, median of %d; in parentheses: ratio to OpenSSL)\n", runs);
}

/* ---- batches ------------------------------------------------------------ */

#define MAX_BATCH 64

static double time_batch(uint8_t (*out)[96], size_t m, uint32_t iter,
                         int threads, wks_kdf_path path)
{
	wks_kdf_job jobs[MAX_BATCH];
	uint8_t pws[MAX_BATCH][16], salts[MAX_BATCH][16];
	double t0;
	size_t j;
	int rc;

	for (j = 0; j < m; j++) {
		memcpy(pws[j], "batch-password..", 16);
		pws[j][15] = (uint8_t)j;
		memcpy(salts[j], salt, 16);
		salts[j][0] = (uint8_t)j;
		jobs[j].out = out[j];
		jobs[j].out_len = 96;
		jobs[j].pw = pws[j];
		jobs[j].pw_len = 16;
		jobs[j].salt = salts[j];
		jobs[j].salt_len = 16;
		jobs[j].iter = iter;
	}
	t0 = now_ms();
	rc = wks__pbkdf2_sha512_batch(jobs, m, threads, path);
	if (rc != WKS_OK) {
		fprintf(stderr, "wks-kdf-bench: %s: %s\n", wks_strerror(rc),
		        wks_error_detail());
		exit(2);
	}
	return now_ms() - t0;
}

/*
 * Batches of M 96-byte derivations on every path (threads as given, 0 =
 * auto), each against one 96-byte AUTO derivation timed just before it:
 * the ratio says how many single derivations the batch costs.  The
 * outputs are compared with the one-by-one derivations of the same jobs
 * (on one M = 4 batch per path).
 */
static void batch_table(uint32_t iter, int threads, int runs)
{
	static const wks_kdf_path paths[] = {
		WKS_KDF_PATH_OPENSSL, WKS_KDF_PATH_AVX2, WKS_KDF_PATH_AVX512,
		WKS_KDF_PATH_AVX512X8, WKS_KDF_PATH_AUTO
	};
	static const size_t ms[] = { 1, 4, 8, 16, 20, 32, 64 };
	static uint8_t out[MAX_BATCH][96], one[96];
	double tb[MAX_RUNS], ts[MAX_RUNS], b, s1;
	size_t p, k, j;
	int r;

	printf("\nbatches of M derivations of 96 bytes, threads %d "
	       "(ms; ratio to one AUTO derivation in the same runs; "
	       "median of %d)\n%-9s", threads, runs, "path");
	for (k = 0; k < sizeof(ms) / sizeof(ms[0]); k++)
		printf(" %13s%-2zu", "M=", ms[k]);
	printf("\n");
	for (p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
		if (!wks__kdf_path_available(paths[p]))
			continue;
		/* the same bytes as one derivation at a time */
		time_batch(out, 4, 1000, threads, paths[p]);
		for (j = 0; j < 4; j++) {
			uint8_t pwj[16], sj[16];

			memcpy(pwj, "batch-password..", 16);
			pwj[15] = (uint8_t)j;
			memcpy(sj, salt, 16);
			sj[0] = (uint8_t)j;
			if (PKCS5_PBKDF2_HMAC((const char *)pwj, 16, sj, 16, 1000,
			                      EVP_sha512(), 96, one) != 1 ||
			    memcmp(one, out[j], 96) != 0)
				mismatch = 1;
		}
		printf("%-9s", wks__kdf_path_name(paths[p]));
		for (k = 0; k < sizeof(ms) / sizeof(ms[0]); k++) {
			for (r = 0; r < runs; r++) {
				ts[r] = time_native(one, 96, iter, 0,
				                    WKS_KDF_PATH_AUTO);
				tb[r] = time_batch(out, ms[k], iter, threads,
				                   paths[p]);
			}
			b = median(tb, runs);
			s1 = median(ts, runs);
			printf(" %7.0f (%5.2f)", b, b / s1);
			fflush(stdout);
		}
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	static const size_t lens[] = { 64, 96 };
	wks_kdf_path path = WKS_KDF_PATH_AUTO, rpath;
	uint32_t iter = 210000;
	int runs = 7, threads = 0, json = 0, all = 0, batch = 0, rthreads, i;
	double nat[2], ossl[2];
	uint8_t warm[96];
	size_t l;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-json") == 0) {
			json = 1;
		} else if (strcmp(argv[i], "-all") == 0) {
			all = 1;
		} else if (strcmp(argv[i], "-batch") == 0) {
			batch = 1;
		} else if (strcmp(argv[i], "-runs") == 0 && i + 1 < argc) {
			runs = atoi(argv[++i]);
			if (runs < 1 || runs > MAX_RUNS)
				usage();
		} else if (strcmp(argv[i], "-iter") == 0 && i + 1 < argc) {
			long v = atol(argv[++i]);

			if (v < 1 || v > 100000000)
				usage();
			iter = (uint32_t)v;
		} else if (strcmp(argv[i], "-threads") == 0 && i + 1 < argc) {
			threads = atoi(argv[++i]);
			if (threads < 0)
				usage();
		} else if (strcmp(argv[i], "-path") == 0 && i + 1 < argc) {
			if (parse_path(argv[++i], &path) != 0)
				usage();
		} else {
			usage();
		}
	}
	if (!wks__kdf_path_available(path)) {
		fprintf(stderr, "wks-kdf-bench: path %s not available on this "
		        "CPU\n", wks__kdf_path_name(path));
		return 2;
	}

	/* Warm up: start the worker pool, let the clock ramp up. */
	time_native(warm, sizeof(warm), iter / 10 + 1, 2, WKS_KDF_PATH_OPENSSL);
	time_openssl(warm, sizeof(warm), iter / 10 + 1);

	for (l = 0; l < 2; l++)
		measure(&nat[l], &ossl[l], lens[l], iter, threads, path, runs);

	if (json) {
		printf("{\"iterations\": %u, \"results\": [", iter);
		for (l = 0; l < 2; l++)
			printf("%s{\"bytes\": %zu, \"native_ms\": %.1f, "
			       "\"openssl_ms\": %.1f, \"ratio\": %.3f}",
			       l ? ", " : "", lens[l], nat[l], ossl[l],
			       nat[l] / ossl[l]);
		printf("]}\n");
	} else {
		printf("PBKDF2-HMAC-SHA512, %u iterations, median of %d runs\n",
		       iter, runs);
		printf("%5s  %-22s %10s %11s %7s\n", "bytes", "native (path, threads)",
		       "native ms", "OpenSSL ms", "ratio");
		for (l = 0; l < 2; l++) {
			char how[64];

			rpath = path;
			rthreads = threads;
			wks__kdf_resolve(&rpath, &rthreads, lens[l]);
			snprintf(how, sizeof(how), "%s%s, %d", wks__kdf_path_name(rpath),
			         path == WKS_KDF_PATH_AUTO ? " (auto)" : "", rthreads);
			printf("%5zu  %-22s %10.1f %11.1f %7.3f\n", lens[l], how,
			       nat[l], ossl[l], nat[l] / ossl[l]);
		}
		if (all)
			table(iter, runs);
		if (batch)
			batch_table(iter, threads, runs);
	}
	if (mismatch) {
		fprintf(stderr, "wks-kdf-bench: output differs from OpenSSL's\n");
		return 1;
	}
	return 0;
}
