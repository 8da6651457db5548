/*
 * wks-batch-bench: whole-store operations against one uncached get_key.
 *
 *   wks-batch-bench [-runs R] [-iter N] [-sizes 1,4,16,20,64] [-no-jks]
 *                   [-no-single]
 *
 * Makes stores of N EC (P-256) key entries, each with its self-signed
 * certificate, at `iter` PBKDF2 iterations (default 210000), all with the
 * store password as key password, and times, in the same runs as one
 * uncached wks_store_get_key() of one such entry (the unit of every
 * ratio printed):
 *
 *   verify          load (store MAC) + every key opened with the store
 *                   password (wks_store_get_keys(), as `wks verify`)
 *   passwd --keys   load + every key to a new password
 *                   (wks_store_change_key_passwords()) + save
 *   store pw alone  load + save under a new store password (no key entry
 *                   is derived: what `passwd` without --keys needs)
 *   convert JKS     a JKS of N keys (made once with keytool from a
 *                   PKCS#12 the library writes, kept in
 *                   $TMPDIR/wks-batch-bench/) read into a new store
 *                   (wks_convert_read()) + save
 *   cache warm      load + wks_store_cache_warm() (cache enabled)
 *
 * and, for N = 20 (the sizes the goals are stated for) unless
 * -no-single, the same verify and passwd --keys one entry at a time as
 * before batches (get_key per entry; get_key + change_key_password per
 * entry).  Each figure is the best (lowest) of R runs (default 3): on a
 * machine shared with other work the best run is the least disturbed
 * one; the ratios divide best by best.  Also printed: per-entry cost at
 * the largest N (its time / N / one get_key).
 *
 * Only the public API is used.
 */
#define _DEFAULT_SOURCE 1 /* getloadavg() */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "wks/convert.h"
#include "wks/wks.h"

#define MAX_SIZES 8
#define MAX_RUNS 25

static const char PW[] = "batch-bench-password";
static const char NEWPW[] = "batch-bench-new-password";

static char iterations[16] = "210000";

static void die(const char *what, int rc)
{
	fprintf(stderr, "wks-batch-bench: %s: %s (%s)\n", what,
	        wks_strerror(rc), wks_error_detail());
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double best(const double *v, int n)
{
	double b = v[0];
	int i;

	for (i = 1; i < n; i++)
		if (v[i] < b)
			b = v[i];
	return b;
}

static wks_store *new_store(int cache)
{
	wks_store *st = NULL;
	int rc;

	if ((rc = wks_store_new(&st)) < 0 ||
	    (rc = wks_store_set_property(st, "wolfjce.wks.iterationCount",
	                                 iterations)) < 0 ||
	    (rc = wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
	                                 cache ? "true" : "false")) < 0)
		die("a store", rc);
	return st;
}

static X509 *self_signed(EVP_PKEY *key, const char *cn)
{
	X509 *x = X509_new();
	X509_NAME *n;

	if (!x)
		die("X509_new", WKS_ERR_NOMEM);
	n = X509_get_subject_name(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 365);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	                           (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, n);
	if (X509_sign(x, key, EVP_sha256()) <= 0)
		die("X509_sign", WKS_ERR_CRYPTO);
	return x;
}

/* A store of n EC keys, as file bytes (its keys made ahead in one batch). */
static uint8_t *make_store(size_t n, size_t *len)
{
	wks_store *st = new_store(0);
	uint8_t *out = NULL;
	char alias[32];
	size_t i;
	int rc;

	if (n > 1 && (rc = wks_store_prepare_keys(st, PW, strlen(PW), n)) < 0)
		die("wks_store_prepare_keys", rc);
	for (i = 0; i < n; i++) {
		EVP_PKEY *k = EVP_EC_gen("P-256");
		X509 *x;

		snprintf(alias, sizeof(alias), "key%03zu", i);
		if (!k)
			die("EVP_EC_gen", WKS_ERR_CRYPTO);
		x = self_signed(k, alias);
		if ((rc = wks_store_set_pkey(st, alias, k, &x, 1, PW,
		                             strlen(PW))) < 0)
			die("wks_store_set_pkey", rc);
		X509_free(x);
		EVP_PKEY_free(k);
	}
	if ((rc = wks_store_save_buffer(st, &out, len, PW, strlen(PW))) < 0)
		die("wks_store_save_buffer", rc);
	wks_store_free(st);
	return out;
}

static void load(wks_store *st, const uint8_t *file, size_t len)
{
	int rc = wks_store_load_buffer(st, file, len, PW, strlen(PW));

	if (rc < 0)
		die("wks_store_load_buffer", rc);
}

/* The key aliases of st (all of them: every entry is a key here). */
static char **aliases_of(wks_store *st, size_t *n)
{
	char **a = NULL;
	int rc = wks_store_aliases(&a, n, st);

	if (rc < 0)
		die("wks_store_aliases", rc);
	return a;
}

/* ---- the operations, each timed from its load on ------------------------- */

static double op_getkey(const uint8_t *file, size_t len)
{
	wks_store *st = new_store(0);
	wks_key *k = NULL;
	double t0;
	int rc;

	load(st, file, len);
	t0 = now_ms();
	if ((rc = wks_store_get_key(&k, st, "key000", PW, strlen(PW))) < 0)
		die("wks_store_get_key", rc);
	t0 = now_ms() - t0;
	wks_key_free(k);
	wks_store_free(st);
	return t0;
}

static double op_verify(const uint8_t *file, size_t len, int single)
{
	wks_store *st = new_store(0);
	wks_key **keys;
	char **a;
	int *res, rc;
	size_t n, i;
	double t0 = now_ms();

	load(st, file, len);
	a = aliases_of(st, &n);
	keys = calloc(n, sizeof(*keys));
	res = calloc(n, sizeof(*res));
	if (!keys || !res)
		die("calloc", WKS_ERR_NOMEM);
	if (single) {
		for (i = 0; i < n; i++)
			if ((rc = wks_store_get_key(&keys[i], st, a[i], PW,
			                            strlen(PW))) < 0)
				die("wks_store_get_key", rc);
	} else {
		if ((rc = wks_store_get_keys(keys, res, st,
		                             (const char *const *)a, n, PW,
		                             strlen(PW))) < 0)
			die("wks_store_get_keys", rc);
		for (i = 0; i < n; i++)
			if (res[i] != WKS_OK)
				die("wks_store_get_keys: an entry", res[i]);
	}
	t0 = now_ms() - t0;
	for (i = 0; i < n; i++)
		wks_key_free(keys[i]);
	free(keys);
	free(res);
	wks_aliases_free(a);
	wks_store_free(st);
	return t0;
}

static double op_passwd_keys(const uint8_t *file, size_t len, int single)
{
	wks_store *st = new_store(0);
	uint8_t *out = NULL;
	size_t out_len = 0, n, i;
	char **a;
	int *res, rc;
	double t0 = now_ms();

	load(st, file, len);
	a = aliases_of(st, &n);
	if (!(res = calloc(n, sizeof(*res))))
		die("calloc", WKS_ERR_NOMEM);
	if (single) {
		/* as `wks passwd --keys` did: does it open with the store
		 * password?  then change it */
		for (i = 0; i < n; i++) {
			wks_key *k = NULL;

			if ((rc = wks_store_get_key(&k, st, a[i], PW,
			                            strlen(PW))) < 0)
				die("wks_store_get_key", rc);
			wks_key_free(k);
			if ((rc = wks_store_change_key_password(st, a[i], PW,
			                  strlen(PW), NEWPW, strlen(NEWPW))) < 0)
				die("wks_store_change_key_password", rc);
		}
	} else {
		if ((rc = wks_store_change_key_passwords(res, st,
		                  (const char *const *)a, n, PW, strlen(PW),
		                  NEWPW, strlen(NEWPW))) < 0)
			die("wks_store_change_key_passwords", rc);
		for (i = 0; i < n; i++)
			if (res[i] != WKS_OK)
				die("wks_store_change_key_passwords: an entry",
				    res[i]);
	}
	if ((rc = wks_store_save_buffer(st, &out, &out_len, NEWPW,
	                                strlen(NEWPW))) < 0)
		die("wks_store_save_buffer", rc);
	t0 = now_ms() - t0;
	wks_free(out);
	free(res);
	wks_aliases_free(a);
	wks_store_free(st);
	return t0;
}

static double op_store_pw(const uint8_t *file, size_t len)
{
	wks_store *st = new_store(0);
	uint8_t *out = NULL;
	size_t out_len = 0;
	double t0 = now_ms();
	int rc;

	load(st, file, len);
	if ((rc = wks_store_save_buffer(st, &out, &out_len, NEWPW,
	                                strlen(NEWPW))) < 0)
		die("wks_store_save_buffer", rc);
	t0 = now_ms() - t0;
	wks_free(out);
	wks_store_free(st);
	return t0;
}

static double op_warm(const uint8_t *file, size_t len, size_t want)
{
	wks_store *st = new_store(1);
	size_t n = 0;
	double t0 = now_ms();
	int rc;

	load(st, file, len);
	if ((rc = wks_store_cache_warm(st, PW, strlen(PW), &n)) < 0)
		die("wks_store_cache_warm", rc);
	if (n != want)
		die("wks_store_cache_warm: not every entry", WKS_ERR_INTEGRITY);
	t0 = now_ms() - t0;
	wks_store_free(st);
	return t0;
}

static double op_convert(const uint8_t *jks, size_t len, size_t want)
{
	wks_store *st = new_store(0);
	wks_convert_report *rep = NULL;
	uint8_t *out = NULL;
	size_t out_len = 0;
	double t0 = now_ms();
	int rc;

	if ((rc = wks_convert_read(st, jks, len, PW, strlen(PW), 0, NULL, NULL,
	                           &rep)) < 0)
		die("wks_convert_read", rc);
	if (wks_convert_report_done(rep) != want)
		die("wks_convert_read: not every entry", WKS_ERR_INTEGRITY);
	if ((rc = wks_store_save_buffer(st, &out, &out_len, PW,
	                                strlen(PW))) < 0)
		die("wks_store_save_buffer", rc);
	t0 = now_ms() - t0;
	wks_free(out);
	wks_convert_report_free(rep);
	wks_store_free(st);
	return t0;
}

/* ---- the JKS files ---------------------------------------------------------- */

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n)) != NULL &&
	    fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	if (p)
		*len = (size_t)n;
	fclose(f);
	return p;
}

/* A JKS of the n keys of `file` (a WKS store), made once with keytool
 * and kept; NULL if keytool is not there. */
static uint8_t *jks_of(const uint8_t *file, size_t len, size_t n,
                       size_t *jlen)
{
	const char *tmp = getenv("TMPDIR");
	char dir[256], jks[300], p12[300], cmd[2048];
	wks_store *st;
	uint8_t *p, *der = NULL;
	size_t der_len = 0;
	FILE *f;
	int rc;

	snprintf(dir, sizeof(dir), "%s/wks-batch-bench", tmp && *tmp ? tmp :
	         "/tmp");
	snprintf(jks, sizeof(jks), "%s/keys-%zu.jks", dir, n);
	if ((p = read_all(jks, jlen)) != NULL)
		return p;
	if (system("command -v keytool >/dev/null 2>&1") != 0)
		return NULL;
	mkdir(dir, 0700);
	st = new_store(0);
	load(st, file, len);
	if ((rc = wks_convert_write_p12(&der, &der_len, st, NULL, PW,
	                                strlen(PW), PW, strlen(PW), 0, NULL,
	                                NULL, NULL)) < 0)
		die("wks_convert_write_p12", rc);
	wks_store_free(st);
	snprintf(p12, sizeof(p12), "%s/keys-%zu.p12", dir, n);
	if (!(f = fopen(p12, "wb")) || fwrite(der, 1, der_len, f) != der_len ||
	    fclose(f) != 0)
		die("writing the PKCS#12", WKS_ERR_IO);
	wks_free(der);
	fprintf(stderr, "wks-batch-bench: making %s with keytool (once)\n",
	        jks);
	snprintf(cmd, sizeof(cmd), "keytool -importkeystore -noprompt "
	         "-srckeystore '%s' -srcstoretype PKCS12 -srcstorepass '%s' "
	         "-destkeystore '%s.tmp' -deststoretype JKS "
	         "-deststorepass '%s' >/dev/null 2>&1 && mv '%s.tmp' '%s'",
	         p12, PW, jks, PW, jks, jks);
	rc = system(cmd);
	unlink(p12);
	if (rc != 0) {
		fprintf(stderr, "wks-batch-bench: keytool failed\n");
		return NULL;
	}
	return read_all(jks, jlen);
}

/* ---- the table --------------------------------------------------------------- */

enum { OP_VERIFY, OP_PASSWD, OP_STOREPW, OP_CONVERT, OP_WARM, NOPS };
static const char *const op_names[NOPS] = {
	"load + verify all", "passwd --keys", "store password alone",
	"convert JKS", "cache warm"
};

static void usage(void)
{
	fprintf(stderr, "usage: wks-batch-bench [-runs R] [-iter N] "
	        "[-sizes N,N,...] [-no-jks] [-no-single]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	size_t sizes[MAX_SIZES] = { 1, 4, 16, 20, 64 }, nsizes = 5;
	static double t[MAX_SIZES][NOPS][MAX_RUNS];
	double one[2][MAX_RUNS], b, g = 1e300, x;
	uint8_t *file[MAX_SIZES], *jks[MAX_SIZES];
	size_t len[MAX_SIZES], jlen[MAX_SIZES], s, o;
	int runs = 3, use_jks = 1, single = 1, r, i, i20 = -1;
	double load0[3], load1[3];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-runs") && i + 1 < argc) {
			runs = atoi(argv[++i]);
			if (runs < 1 || runs > MAX_RUNS)
				usage();
		} else if (!strcmp(argv[i], "-iter") && i + 1 < argc) {
			long v = atol(argv[++i]);

			if (v < 10000 || v > 5000000)
				usage();
			snprintf(iterations, sizeof(iterations), "%ld", v);
		} else if (!strcmp(argv[i], "-sizes") && i + 1 < argc) {
			char *p = argv[++i], *end;

			for (nsizes = 0; *p && nsizes < MAX_SIZES; nsizes++) {
				long v = strtol(p, &end, 10);

				if (end == p || v < 1 || v > 1000)
					usage();
				sizes[nsizes] = (size_t)v;
				p = *end == ',' ? end + 1 : end;
			}
			if (nsizes == 0)
				usage();
		} else if (!strcmp(argv[i], "-no-jks")) {
			use_jks = 0;
		} else if (!strcmp(argv[i], "-no-single")) {
			single = 0;
		} else {
			usage();
		}
	}
	for (s = 0; s < nsizes; s++) {
		file[s] = make_store(sizes[s], &len[s]);
		jks[s] = use_jks ? jks_of(file[s], len[s], sizes[s], &jlen[s]) :
		         NULL;
		if (sizes[s] == 20)
			i20 = (int)s;
	}
	if (getloadavg(load0, 3) < 0)
		load0[0] = -1;
	/* Each run: every operation of every size, each right after an
	 * uncached get_key of the same size's store. */
	for (r = 0; r < runs; r++) {
		for (s = 0; s < nsizes; s++) {
			for (o = 0; o < NOPS; o++) {
				if ((x = op_getkey(file[s], len[s])) < g)
					g = x;
				switch (o) {
				case OP_VERIFY:
					t[s][o][r] = op_verify(file[s], len[s], 0);
					break;
				case OP_PASSWD:
					t[s][o][r] = op_passwd_keys(file[s], len[s],
					                            0);
					break;
				case OP_STOREPW:
					t[s][o][r] = op_store_pw(file[s], len[s]);
					break;
				case OP_CONVERT:
					t[s][o][r] = jks[s] ? op_convert(jks[s],
					             jlen[s], sizes[s]) : -1;
					break;
				default:
					t[s][o][r] = op_warm(file[s], len[s],
					                     sizes[s]);
				}
			}
		}
		if (single && i20 >= 0) {
			one[0][r] = op_verify(file[i20], len[i20], 1);
			one[1][r] = op_passwd_keys(file[i20], len[i20], 1);
		}
	}
	if (getloadavg(load1, 3) < 0)
		load1[0] = -1;

	printf("wks-batch-bench: EC P-256 key entries at %s PBKDF2 iterations, "
	       "best of %d runs\n", iterations, runs);
	printf("one uncached get_key: %.1f ms (the unit of the ratios)\n", g);
	printf("load average %.2f before, %.2f after\n\n", load0[0], load1[0]);
	printf("%-22s", "ms (x get_key)");
	for (s = 0; s < nsizes; s++)
		printf("        N=%-4zu", sizes[s]);
	printf("  per entry at N=%zu\n", sizes[nsizes - 1]);
	for (o = 0; o < NOPS; o++) {
		double last = -1;

		printf("%-22s", op_names[o]);
		for (s = 0; s < nsizes; s++) {
			b = best(t[s][o], runs);
			if (b < 0) {
				printf(" %14s", "n/a");
				continue;
			}
			printf(" %6.0f (%5.2f)", b, b / g);
			last = b;
		}
		if (last >= 0 && o != OP_STOREPW)
			printf("  %.3f", last / (double)sizes[nsizes - 1] / g);
		printf("\n");
	}
	if (single && i20 >= 0) {
		printf("\none entry at a time, N=20 (as before batches):\n");
		printf("%-22s %6.0f (%5.2f)\n", op_names[OP_VERIFY],
		       best(one[0], runs), best(one[0], runs) / g);
		printf("%-22s %6.0f (%5.2f)\n", op_names[OP_PASSWD],
		       best(one[1], runs), best(one[1], runs) / g);
	}
	for (s = 0; s < nsizes; s++) {
		wks_free(file[s]);
		free(jks[s]);
	}
	return 0;
}
