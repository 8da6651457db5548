/* wks-kdf-bench: libwks's native PBKDF2-HMAC-SHA512 against OpenSSL's
 * PKCS5_PBKDF2_HMAC, for the two derivations of the WKS format: 64 bytes
 * (store MAC key) and 96 bytes (entry keys), at 210,000 iterations.
 *
 *   wks-kdf-bench [-runs N] [-iter N] [-threads N]
 *                 [-path auto|scalar|openssl|avx2|avx512] [-json] [-all]
 *
 * Each figure is the median of N runs (default 7); native and OpenSSL runs
 * alternate so that both see the same machine.  -all adds a table of every
 * code path with 1 and 2 threads.  Exit status 1 if an output differs
 * from OpenSSL's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

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
		WKS_KDF_PATH_AVX2, WKS_KDF_PATH_AVX512
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
	        "[-path auto|scalar|openssl|avx2|avx512] [-json] [-all]\n");
	exit(2);
}

/* Every path with 1 and 2 threads, and OpenSSL, for 64 and 96 bytes. */
static void table(uint32_t iter, int runs)
{
	static const wks_kdf_path paths[] = {
		WKS_KDF_PATH_SCALAR, WKS_KDF_PATH_OPENSSL, WKS_KDF_PATH_AVX2,
		WKS_KDF_PATH_AVX512, WKS_KDF_PATH_AUTO
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

int main(int argc, char **argv)
{
	static const size_t lens[] = { 64, 96 };
	wks_kdf_path path = WKS_KDF_PATH_AUTO, rpath;
	uint32_t iter = 210000;
	int runs = 7, threads = 0, json = 0, all = 0, rthreads, i;
	double nat[2], ossl[2];
	uint8_t warm[96];
	size_t l;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-json") == 0) {
			json = 1;
		} else if (strcmp(argv[i], "-all") == 0) {
			all = 1;
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
	}
	if (mismatch) {
		fprintf(stderr, "wks-kdf-bench: output differs from OpenSSL's\n");
		return 1;
	}
	return 0;
}
