/*
 * wks-getkey-bench: how long wks_store_get_key() takes, with and without
 * the KEK cache (the libwks version of the getKey benchmark of wolfJCE's
 * KEK cache pull request).
 *
 *   wks-getkey-bench [-enableCache] [-iterations N] [-cacheTtl SEC]
 *                    [-privateOnly | -secretOnly] [-threads T] [-json]
 *                    [-save FILE | -store FILE]
 *
 * It builds its own keystore in memory: an RSA-2048 private key with a
 * self-signed certificate and an AES-256 secret key, both at 210,000
 * PBKDF2 iterations, saved and loaded back (so the entries are parsed as
 * from a file).  -save FILE also writes that store to FILE; -store FILE
 * loads FILE instead (a store -save wrote, password and aliases as here):
 * the same store measured by the OpenSSL and the wolfCrypt build
 * (docs/KDF.md).  On wolfCrypt the RSA-2048 key and its self-signed
 * certificate come from tests/data/pki (rsa-cakey.key, rsa-ca.pem), the
 * AES key from /dev/urandom.  Then for each key type:
 *
 *   - one first call, alone (with the cache on, the one that runs PBKDF2
 *     and fills the cache);
 *   - then T threads started together each make their calls, N per
 *     thread in all (thread 0 counts the first call among its N), each
 *     call timed on its own.
 *
 * Reported: calls (N x T), total (wall time of all calls), average,
 * median, min and max of the single calls, throughput (the calls after
 * the first divided by the wall time of the threaded phase, from the
 * first thread's first call to the last thread's last), the first
 * call, the average of the others, and the speedup (first / average of
 * the others).  -json prints the same as one JSON object.
 *
 * Only the public API is used.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wks/wks.h"

#ifdef WKS_CRYPTO_OPENSSL
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#endif

#define PBKDF2_ITERATIONS 210000
#define PRIV_ALIAS "rsa-2048"
#define SECRET_ALIAS "aes-256"

static const char PW[] = "wks-getkey-bench password";

typedef struct {
	int cache;
	long iterations;
	long ttl_s; /* -1: not given */
	int private_only, secret_only;
	int threads;
	int json;
	const char *save, *store;
} options;

typedef struct {
	const char *key_type;
	const char *alias;
	size_t calls;
	double total_ms, avg_ms, median_ms, min_ms, max_ms, ops_per_sec;
	double first_ms, avg_subsequent_ms, speedup;
} result;

static void die(const char *what, int rc)
{
	fprintf(stderr, "wks-getkey-bench: %s: %s (%s)\n", what,
	        wks_strerror(rc), wks_error_detail());
	exit(1);
}

#ifdef WKS_CRYPTO_OPENSSL
static void die_ssl(const char *what)
{
	fprintf(stderr, "wks-getkey-bench: %s failed (OpenSSL)\n", what);
	exit(1);
}
#endif

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the keystore ------------------------------------------------------- */

#ifdef WKS_CRYPTO_OPENSSL
static X509 *self_signed(EVP_PKEY *key)
{
	X509 *x = X509_new();
	X509_NAME *name;

	if (!x || !X509_set_version(x, 2) ||
	    !ASN1_INTEGER_set(X509_get_serialNumber(x), 1) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), 0) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600) ||
	    !X509_set_pubkey(x, key))
		die_ssl("certificate");
	name = X509_get_subject_name(x);
	if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                                (const unsigned char *)"wks-getkey-bench",
	                                -1, -1, 0) ||
	    !X509_set_issuer_name(x, name) || !X509_sign(x, key, EVP_sha256()))
		die_ssl("certificate signature");
	return x;
}

static void add_keys(wks_store *st)
{
	EVP_PKEY *rsa;
	X509 *cert;
	uint8_t aes[32];
	int rc;

	if (!(rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)))
		die_ssl("RSA-2048 key generation");
	cert = self_signed(rsa);
	if ((rc = wks_store_set_pkey(st, PRIV_ALIAS, rsa, &cert, 1, PW,
	                             strlen(PW))) < 0)
		die("wks_store_set_pkey", rc);
	if (RAND_bytes(aes, sizeof(aes)) != 1)
		die_ssl("RAND_bytes");
	if ((rc = wks_store_set_secret_key(st, SECRET_ALIAS, "AES", aes,
	                                   sizeof(aes), PW, strlen(PW))) < 0)
		die("wks_store_set_secret_key", rc);
	OPENSSL_cleanse(aes, sizeof(aes));
	X509_free(cert);
	EVP_PKEY_free(rsa);
}
#else
static int b64(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* The DER of the PEM file WKS_BENCH_PKI_DIR/name (one block). */
static uint8_t *pem_der(const char *name, size_t *len)
{
	char path[4096], line[256];
	FILE *f;
	uint8_t *out = malloc(1 << 16);
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0, in = 0, v;
	char *p;

	snprintf(path, sizeof(path), "%s/%s", WKS_BENCH_PKI_DIR, name);
	if (!out || !(f = fopen(path, "r"))) {
		fprintf(stderr, "wks-getkey-bench: cannot read %s\n", path);
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "-----", 5) == 0) {
			if (in)
				break;
			in = 1;
			continue;
		}
		for (p = line; in && *p; p++) {
			if ((v = b64((unsigned char)*p)) < 0)
				continue;
			acc = acc << 6 | (unsigned)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				out[n++] = (uint8_t)(acc >> bits);
			}
		}
	}
	fclose(f);
	*len = n;
	return out;
}

static void add_keys(wks_store *st)
{
	uint8_t aes[32], *key, *cert;
	size_t kl, cl;
	const uint8_t *chain[1];
	FILE *f;
	int rc;

	key = pem_der("rsa-cakey.key", &kl);
	cert = pem_der("rsa-ca.pem", &cl);
	chain[0] = cert;
	if ((rc = wks_store_set_private_key(st, PRIV_ALIAS, key, kl, chain, &cl,
	                                    1, PW, strlen(PW))) < 0)
		die("wks_store_set_private_key", rc);
	if (!(f = fopen("/dev/urandom", "rb")) ||
	    fread(aes, 1, sizeof(aes), f) != sizeof(aes)) {
		fprintf(stderr, "wks-getkey-bench: cannot read /dev/urandom\n");
		exit(1);
	}
	fclose(f);
	if ((rc = wks_store_set_secret_key(st, SECRET_ALIAS, "AES", aes,
	                                   sizeof(aes), PW, strlen(PW))) < 0)
		die("wks_store_set_secret_key", rc);
	memset(aes, 0, sizeof(aes));
	free(key);
	free(cert);
}
#endif

static wks_store *make_store(const options *o)
{
	wks_store *st = NULL, *loaded = NULL;
	uint8_t *file = NULL;
	size_t file_len = 0;
	char ttl[32];
	int rc;

	if (o->store) {
		if ((rc = wks_store_new(&loaded)) < 0)
			die("wks_store_new", rc);
		if ((rc = wks_store_load_file(loaded, o->store, PW, strlen(PW))) < 0)
			die(o->store, rc);
		goto settings;
	}
	if ((rc = wks_store_new(&st)) < 0)
		die("wks_store_new", rc);
	if ((rc = wks_store_set_property(st, "wolfjce.wks.iterationCount",
	                                 "210000")) < 0)
		die("set iterationCount", rc);
	add_keys(st);
	if (o->save && (rc = wks_store_save_file(st, o->save, PW, strlen(PW))) < 0)
		die(o->save, rc);

	/* Round trip through the file format, as an application would. */
	if ((rc = wks_store_save_buffer(st, &file, &file_len, PW, strlen(PW))) < 0)
		die("wks_store_save_buffer", rc);
	wks_store_free(st);
	if ((rc = wks_store_new(&loaded)) < 0)
		die("wks_store_new", rc);
	if ((rc = wks_store_load_buffer(loaded, file, file_len, PW, strlen(PW))) < 0)
		die("wks_store_load_buffer", rc);
	wks_free(file);
settings:

	if ((rc = wks_store_set_property(loaded,
	                                 "wolfjce.keystore.kekCacheEnabled",
	                                 o->cache ? "true" : "false")) < 0)
		die("set kekCacheEnabled", rc);
	if (o->ttl_s >= 0) {
		snprintf(ttl, sizeof(ttl), "%ld", o->ttl_s);
		if ((rc = wks_store_set_property(loaded,
		                                 "wolfjce.keystore.kekCacheTtlSec",
		                                 ttl)) < 0)
			die("set kekCacheTtlSec", rc);
	}
	return loaded;
}

/* ---- timing ------------------------------------------------------------- */

typedef struct {
	wks_store *st;
	const char *alias;
	long calls;
	double *samples; /* calls of them, in ms */
	const uint8_t *want;
	size_t want_len;
	pthread_barrier_t *start;
	double t_start, t_end; /* this thread's calls, wall clock */
	int failed;
} worker;

static int one_call(wks_store *st, const char *alias, double *ms,
                    const uint8_t *want, size_t want_len)
{
	wks_key *k = NULL;
	const uint8_t *d;
	size_t len;
	double t0, t1;
	int rc;

	t0 = now_ms();
	rc = wks_store_get_key(&k, st, alias, PW, strlen(PW));
	t1 = now_ms();
	*ms = t1 - t0;
	if (rc < 0) {
		fprintf(stderr, "wks-getkey-bench: get_key(%s): %s (%s)\n", alias,
		        wks_strerror(rc), wks_error_detail());
		return -1;
	}
	/* (outside the timed part) cached and uncached bytes must agree */
	d = wks_key_data(k, &len);
	rc = want && (len != want_len || memcmp(d, want, len) != 0) ? -1 : 0;
	if (rc < 0)
		fprintf(stderr, "wks-getkey-bench: get_key(%s) returned "
		        "different bytes\n", alias);
	wks_key_free(k);
	return rc;
}

static void *work(void *arg)
{
	worker *w = arg;
	long i;

	pthread_barrier_wait(w->start);
	w->t_start = now_ms();
	for (i = 0; i < w->calls && !w->failed; i++)
		if (one_call(w->st, w->alias, &w->samples[i], w->want,
		             w->want_len) < 0)
			w->failed = 1;
	w->t_end = now_ms();
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void run(result *r, wks_store *st, const char *key_type,
                const char *alias, const options *o)
{
	size_t total = (size_t)o->iterations * (size_t)o->threads, i, n = 0;
	double *samples = calloc(total, sizeof(double));
	worker *w = calloc((size_t)o->threads, sizeof(worker));
	pthread_t *t = calloc((size_t)o->threads, sizeof(pthread_t));
	pthread_barrier_t start;
	wks_key *first = NULL;
	const uint8_t *want;
	size_t want_len;
	double t0, t1 = 0, t2 = 0, sum = 0, rest = 0;
	int j, rc;

	if (!samples || !w || !t) {
		fprintf(stderr, "wks-getkey-bench: out of memory\n");
		exit(1);
	}
	memset(r, 0, sizeof(*r));
	r->key_type = key_type;
	r->alias = alias;
	r->calls = total;

	/* the first call, alone */
	t0 = now_ms();
	rc = wks_store_get_key(&first, st, alias, PW, strlen(PW));
	t1 = now_ms();
	if (rc < 0)
		die("wks_store_get_key", rc);
	want = wks_key_data(first, &want_len);
	samples[0] = r->first_ms = t1 - t0;

	/* then all threads at once */
	pthread_barrier_init(&start, NULL, (unsigned)o->threads + 1);
	for (j = 0; j < o->threads; j++) {
		w[j].st = st;
		w[j].alias = alias;
		w[j].calls = o->iterations - (j == 0);
		w[j].samples = samples + 1 + (size_t)j * (size_t)o->iterations -
		               (j > 0);
		w[j].want = want;
		w[j].want_len = want_len;
		w[j].start = &start;
		if (pthread_create(&t[j], NULL, work, &w[j]) != 0) {
			fprintf(stderr, "wks-getkey-bench: cannot start threads\n");
			exit(1);
		}
	}
	pthread_barrier_wait(&start);
	/* The threaded phase: from the first thread's start to the last
	 * one's end (thread creation is not counted). */
	for (j = 0; j < o->threads; j++) {
		pthread_join(t[j], NULL);
		if (w[j].failed)
			exit(1);
		if (j == 0 || w[j].t_start < t1)
			t1 = w[j].t_start;
		if (j == 0 || w[j].t_end > t2)
			t2 = w[j].t_end;
	}
	pthread_barrier_destroy(&start);
	wks_key_free(first);

	for (i = 0; i < total; i++) {
		sum += samples[i];
		if (i > 0)
			rest += samples[i];
	}
	r->total_ms = r->first_ms + (t2 - t1);
	r->avg_ms = sum / (double)total;
	r->avg_subsequent_ms = total > 1 ? rest / (double)(total - 1) : r->first_ms;
	r->ops_per_sec = total > 1 ? (double)(total - 1) / ((t2 - t1) / 1e3)
	                           : 1e3 / r->first_ms;
	r->speedup = r->avg_subsequent_ms > 0 ? r->first_ms / r->avg_subsequent_ms : 0;
	qsort(samples, total, sizeof(double), cmp_double);
	n = total;
	r->min_ms = samples[0];
	r->max_ms = samples[n - 1];
	r->median_ms = n % 2 ? samples[n / 2]
	                     : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	free(samples);
	free(w);
	free(t);
}

/* ---- output --------------------------------------------------------------- */

static void print_text(const result *r, const char *label)
{
	printf("\n%s, alias \"%s\":\n", label, r->alias);
	printf("  Iterations:      %zu\n", r->calls);
	printf("  Total:           %.3f ms\n", r->total_ms);
	printf("  Average:         %.6f ms\n", r->avg_ms);
	printf("  Median:          %.6f ms\n", r->median_ms);
	printf("  Min:             %.6f ms\n", r->min_ms);
	printf("  Max:             %.6f ms\n", r->max_ms);
	printf("  Throughput:      %.1f ops/sec\n", r->ops_per_sec);
	printf("  First call: %.3f ms\n", r->first_ms);
	printf("  Avg subsequent: %.6f ms\n", r->avg_subsequent_ms);
	printf("  Speedup: %.1fx\n", r->speedup);
}

static void print_json(const result *r, size_t n, const options *o, long ttl)
{
	size_t i;

	printf("{\"cache\": %s, \"ttl_s\": %ld, \"threads\": %d, "
	       "\"pbkdf2_iterations\": %d, \"results\": [",
	       o->cache ? "true" : "false", ttl, o->threads, PBKDF2_ITERATIONS);
	for (i = 0; i < n; i++)
		printf("%s{\"key_type\": \"%s\", \"alias\": \"%s\", \"calls\": %zu, "
		       "\"first_ms\": %.6f, \"avg_subsequent_ms\": %.6f, "
		       "\"median_ms\": %.6f, \"min_ms\": %.6f, \"max_ms\": %.6f, "
		       "\"ops_per_sec\": %.1f}",
		       i ? ", " : "", r[i].key_type, r[i].alias, r[i].calls,
		       r[i].first_ms, r[i].avg_subsequent_ms, r[i].median_ms,
		       r[i].min_ms, r[i].max_ms, r[i].ops_per_sec);
	printf("]}\n");
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: wks-getkey-bench [-enableCache] [-iterations N] "
	        "[-cacheTtl SEC]\n"
	        "                        [-privateOnly | -secretOnly] "
	        "[-threads T] [-json]\n"
	        "                        [-save FILE | -store FILE]\n"
	        "  -enableCache   turn the KEK cache on "
	        "(wolfjce.keystore.kekCacheEnabled=true)\n"
	        "  -iterations N  get_key calls per key type and thread "
	        "(default 100)\n"
	        "  -cacheTtl SEC  cache TTL (wolfjce.keystore.kekCacheTtlSec, "
	        "default 300)\n"
	        "  -privateOnly   only the RSA-2048 private key\n"
	        "  -secretOnly    only the AES-256 secret key\n"
	        "  -threads T     T threads calling get_key at once (default 1)\n"
	        "  -json          one JSON object on stdout\n"
	        "  -save FILE     also write the store it builds to FILE\n"
	        "  -store FILE    measure the store in FILE (one -save wrote)\n");
	exit(2);
}

static long number(const char *s, long min, long max)
{
	char *end;
	long v;

	if (!s)
		usage();
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < min || v > max)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	options o = { 0, 100, -1, 0, 0, 1, 0, NULL, NULL };
	result r[2];
	size_t n = 0;
	wks_store *st;
	char ttl[32], impl[32], backend[4200];
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-enableCache") == 0)
			o.cache = 1;
		else if (strcmp(a, "-iterations") == 0)
			o.iterations = number(argv[++i], 1, 100000000);
		else if (strcmp(a, "-cacheTtl") == 0)
			o.ttl_s = number(argv[++i], 1, 1000000000);
		else if (strcmp(a, "-privateOnly") == 0)
			o.private_only = 1;
		else if (strcmp(a, "-secretOnly") == 0)
			o.secret_only = 1;
		else if (strcmp(a, "-threads") == 0)
			o.threads = (int)number(argv[++i], 1, 256);
		else if (strcmp(a, "-json") == 0)
			o.json = 1;
		else if (strcmp(a, "-save") == 0 && i + 1 < argc)
			o.save = argv[++i];
		else if (strcmp(a, "-store") == 0 && i + 1 < argc)
			o.store = argv[++i];
		else
			usage();
	}
	if ((o.private_only && o.secret_only) || (o.save && o.store))
		usage();

	st = make_store(&o);
	if (wks_get_property(ttl, sizeof(ttl), st,
	                     "wolfjce.keystore.kekCacheTtlSec") < 0)
		snprintf(ttl, sizeof(ttl), "300");
	/* The backend and the PBKDF2 in the header line: always on
	 * wolfCrypt, on OpenSSL when a store file is named (the default
	 * output stays as it was). */
	if (wks_get_property(impl, sizeof(impl), st, "libwks.kdf.impl") < 0)
		snprintf(impl, sizeof(impl), "?");
	snprintf(backend, sizeof(backend), " on %s, libwks.kdf.impl %s%s%s",
	         WKS_CRYPTO_BACKEND, impl, o.store ? ", store " : "",
	         o.store ? o.store : "");
#ifdef WKS_CRYPTO_OPENSSL
	if (!o.store && !o.save)
		backend[0] = '\0';
#endif
	if (!o.json)
		printf("wks-getkey-bench (libwks %s%s): KEK cache %s, TTL %s s, "
		       "%d thread%s, %ld call%s per thread, PBKDF2-HMAC-SHA512 "
		       "%d iterations\n", wks_version(), backend,
		       o.cache ? "enabled" : "disabled", ttl, o.threads,
		       o.threads == 1 ? "" : "s", o.iterations,
		       o.iterations == 1 ? "" : "s", PBKDF2_ITERATIONS);
	if (!o.secret_only) {
		run(&r[n], st, "private", PRIV_ALIAS, &o);
		if (!o.json)
			print_text(&r[n], "Private key (RSA-2048)");
		n++;
	}
	if (!o.private_only) {
		run(&r[n], st, "secret", SECRET_ALIAS, &o);
		if (!o.json)
			print_text(&r[n], "Secret key (AES-256)");
		n++;
	}
	if (o.json) {
		print_json(r, n, &o, strtol(ttl, NULL, 10));
	} else if (o.cache) {
		wks_cache_stats s;

		if (wks_store_cache_stats(&s, st) == WKS_OK)
			printf("\nCache: %llu hits, %llu misses, %llu PBKDF2 runs, "
			       "%zu cached\n", (unsigned long long)s.hits,
			       (unsigned long long)s.misses,
			       (unsigned long long)s.derivations, s.size);
	}
	wks_store_free(st);
	return 0;
}
