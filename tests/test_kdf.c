/* PBKDF2-HMAC-SHA512, native implementation (src/crypto/kdf_native.c):
 * published vectors, and byte-for-byte agreement with OpenSSL's
 * PKCS5_PBKDF2_HMAC on every code path and thread setting.
 *
 * Usage: test_kdf [PATTERN]   (runs the tests whose name matches) */
#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tu_ossl.h"

#include "crypto/crypto.h"
#include "crypto/kdf.h"

#define MAX_OUT 200

static const wks_kdf_path all_paths[] = {
	WKS_KDF_PATH_AUTO, WKS_KDF_PATH_SCALAR, WKS_KDF_PATH_OPENSSL,
	WKS_KDF_PATH_AVX2, WKS_KDF_PATH_AVX512, WKS_KDF_PATH_AVX512X8
};
#define NPATHS (sizeof(all_paths) / sizeof(all_paths[0]))

/* 1 = one thread, 2 = the pool, 0 = auto */
static const int all_threads[] = { 1, 2, 0 };
#define NTHREADS (sizeof(all_threads) / sizeof(all_threads[0]))

/* ------------------------------------------------------------------------
 * Inputs
 */

typedef struct {
	const char *name;
	uint8_t bytes[300];
	size_t len;
} blob;

/* Passwords: empty; short ASCII; non-ASCII UTF-8 with a NUL inside;
 * exactly one HMAC block (not hashed); one byte more and much longer
 * (hashed first, RFC 2104). */
static blob pws[6];
/* Salts: empty; WKS's 16 random bytes; lengths at the SHA-512 padding
 * edges of the first inner block (128 + salt + 4 bytes: 107, 108, 111,
 * 112, 124); more than one block. */
static blob salts[8];

static void fill(blob *b, const char *name, size_t len, uint8_t seed)
{
	size_t i;

	b->name = name;
	b->len = len;
	for (i = 0; i < len; i++)
		b->bytes[i] = (uint8_t)(seed + i * 31 + (i >> 3));
}

static void make_inputs(void)
{
	static const char utf8[] = "p\xc3\xa4ss\xe2\x82\xac" "\x00" "w\xc3\xb6rd\xf0\x9f\x94\x91";

	fill(&pws[0], "empty", 0, 0);
	pws[1].name = "password";
	memcpy(pws[1].bytes, "password", 8);
	pws[1].len = 8;
	pws[2].name = "utf8+nul";
	memcpy(pws[2].bytes, utf8, sizeof(utf8) - 1);
	pws[2].len = sizeof(utf8) - 1;
	fill(&pws[3], "128", 128, 0x41);
	fill(&pws[4], "129", 129, 0x42);
	fill(&pws[5], "300", 300, 0xc3);

	fill(&salts[0], "empty", 0, 0);
	fill(&salts[1], "16", 16, 0x99);
	fill(&salts[2], "107", 107, 1);
	fill(&salts[3], "108", 108, 2);
	fill(&salts[4], "111", 111, 3);
	fill(&salts[5], "112", 112, 4);
	fill(&salts[6], "124", 124, 5);
	fill(&salts[7], "260", 260, 6);
}

static void ref(uint8_t *out, size_t len, const blob *pw, const blob *salt,
                uint32_t iter)
{
	assert_int_equal(PKCS5_PBKDF2_HMAC((const char *)pw->bytes,
	                                   (int)pw->len, salt->bytes,
	                                   (int)salt->len, (int)iter,
	                                   EVP_sha512(), (int)len, out), 1);
}

static void check(const uint8_t *want, size_t len, const blob *pw,
                  const blob *salt, uint32_t iter, int threads,
                  wks_kdf_path path)
{
	uint8_t got[MAX_OUT + 1];

	memset(got, 0xee, sizeof(got));
	TU_OK(wks__pbkdf2_sha512_native(got, len, pw->bytes, pw->len,
	                                salt->bytes, salt->len, iter, threads,
	                                path));
	if (memcmp(got, want, len) != 0)
		fail_msg("path %s threads %d: pw %s salt %s iter %u len %zu: "
		         "differs from OpenSSL", wks__kdf_path_name(path),
		         threads, pw->name, salt->name, iter, len);
	/* not one byte past the end */
	assert_int_equal(got[len], 0xee);
}

/* WKS_KDF_STRIDE=n: the cross products against OpenSSL below call
 * check_some(), which runs check() on every n-th of its calls only: by
 * default every 7th (a prime, so that each of the 12 or 15 path and thread
 * settings per length still meets many lengths), in the full mode
 * (WKS_TEST_FULL=1, CI's plain stage) every call. */
static size_t g_stride = 1, g_calls;

static void check_some(const uint8_t *want, size_t len, const blob *pw,
                       const blob *salt, uint32_t iter, int threads,
                       wks_kdf_path path)
{
	if (g_calls++ % g_stride == 0)
		check(want, len, pw, salt, iter, threads, path);
}

/* ------------------------------------------------------------------------
 * Published vectors (the PBKDF2-HMAC-SHA512 analogues of RFC 6070's)
 */

static void test_kdf__published_vectors(void **state)
{
	static const struct {
		const char *pw;
		size_t pw_len;
		const char *salt;
		size_t salt_len;
		uint32_t iter;
		const char *hex;
	} v[] = {
		{ "password", 8, "salt", 4, 1,
		  "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252"
		  "c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce" },
		{ "password", 8, "salt", 4, 2,
		  "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53c"
		  "f76cab2868a39b9f7840edce4fef5a82be67335c77a6068e04112754f27ccf4e" },
		{ "password", 8, "salt", 4, 4096,
		  "d197b1b33db0143e018b12f3d1d1479e6cdebdcc97c5c0f87f6902e072f457b5"
		  "143f30602641b3d55cd335988cb36b84376060ecd532e039b742a239434af2d5" },
		{ "passwordPASSWORDpassword", 24,
		  "saltSALTsaltSALTsaltSALTsaltSALTsalt", 36, 4096,
		  "8c0511f4c6e597c6ac6315d8f0362e225f3c501495ba23b868c005174dc4ee71"
		  "115b59f9e60cd9532fa33e0f75aefe30225c583a186cd82bd4daea9724a3d3b8" },
		{ "pass\0word", 9, "sa\0lt", 5, 4096,
		  "9d9e9c4cd21fe4be24d5b8244c759665" },
	};
	uint8_t got[64], *want;
	size_t i, p, t, len;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		want = tu_unhex(v[i].hex, &len);
		for (p = 0; p < NPATHS; p++) {
			if (!wks__kdf_path_available(all_paths[p]))
				continue;
			for (t = 0; t < NTHREADS; t++) {
				memset(got, 0, sizeof(got));
				TU_OK(wks__pbkdf2_sha512_native(
					got, len, (const uint8_t *)v[i].pw,
					v[i].pw_len, (const uint8_t *)v[i].salt,
					v[i].salt_len, v[i].iter, all_threads[t],
					all_paths[p]));
				if (memcmp(got, want, len) != 0)
					fail_msg("vector %zu, path %s, threads %d",
					         i, wks__kdf_path_name(all_paths[p]),
					         all_threads[t]);
			}
		}
		free(want);
	}
}

/* ------------------------------------------------------------------------
 * Against OpenSSL
 */

/* Every length 1..200 for iteration counts 1, 2, 3, every path and thread
 * setting, over several password/salt pairs. */
static void test_kdf__openssl_low_iterations(void **state)
{
	static const struct { int pw, salt; } pairs[] = {
		{ 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 3 }, { 4, 4 }, { 5, 5 },
		{ 1, 6 }, { 2, 7 }, { 0, 1 }
	};
	uint8_t (*want)[MAX_OUT];
	uint32_t iter;
	size_t i, len, p, t;

	(void)state;
	want = malloc(sizeof(*want) * (MAX_OUT + 1));
	assert_non_null(want);
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const blob *pw = &pws[pairs[i].pw], *salt = &salts[pairs[i].salt];

		for (iter = 1; iter <= 3; iter++) {
			for (len = 1; len <= MAX_OUT; len++)
				ref(want[len], len, pw, salt, iter);
			for (p = 0; p < NPATHS; p++) {
				if (!wks__kdf_path_available(all_paths[p]))
					continue;
				for (t = 0; t < NTHREADS; t++)
					for (len = 1; len <= MAX_OUT; len++)
						check_some(want[len], len, pw, salt, iter,
						      all_threads[t], all_paths[p]);
			}
		}
	}
	free(want);
}

/* 1000 iterations: every length 1..200 on every path and thread setting
 * (one password/salt pair); other pairs on the lengths at block edges. */
static void test_kdf__openssl_1000(void **state)
{
	static const size_t edges[] = { 1, 63, 64, 65, 96, 128, 129, 200 };
	uint8_t (*want)[MAX_OUT];
	size_t i, e, len, p, t, k;

	(void)state;
	want = malloc(sizeof(*want) * (MAX_OUT + 1));
	assert_non_null(want);
	for (len = 1; len <= MAX_OUT; len++)
		ref(want[len], len, &pws[2], &salts[1], 1000);
	for (p = 0; p < NPATHS; p++) {
		if (!wks__kdf_path_available(all_paths[p]))
			continue;
		for (t = 0; t < NTHREADS; t++)
			for (len = 1; len <= MAX_OUT; len++)
				check_some(want[len], len, &pws[2], &salts[1], 1000,
				      all_threads[t], all_paths[p]);
	}
	for (i = 0; i < 6; i++) {
		k = (i + 3) % 8;
		for (e = 0; e < sizeof(edges) / sizeof(edges[0]); e++) {
			len = edges[e];
			ref(want[len], len, &pws[i], &salts[k], 1000);
			for (p = 0; p < NPATHS; p++) {
				if (!wks__kdf_path_available(all_paths[p]))
					continue;
				for (t = 0; t < NTHREADS; t++)
					check_some(want[len], len, &pws[i], &salts[k],
					      1000, all_threads[t], all_paths[p]);
			}
		}
	}
	free(want);
}

/* 10000 iterations (libwks's minimum for files): the WKS shapes (64 and
 * 96 bytes, 16-byte salt) and the block edges, every path and setting. */
static void test_kdf__openssl_10000(void **state)
{
	static const struct { int pw, salt; size_t len; } cases[] = {
		{ 1, 1, 96 }, { 1, 1, 64 }, { 2, 1, 96 }, { 5, 1, 64 },
		{ 0, 0, 1 }, { 4, 7, 65 }, { 3, 2, 129 }, { 2, 5, 200 },
	};
	uint8_t want[MAX_OUT];
	size_t i, p, t;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const blob *pw = &pws[cases[i].pw];
		const blob *salt = &salts[cases[i].salt];

		ref(want, cases[i].len, pw, salt, 10000);
		for (p = 0; p < NPATHS; p++) {
			if (!wks__kdf_path_available(all_paths[p]))
				continue;
			for (t = 0; t < NTHREADS; t++)
				check_some(want, cases[i].len, pw, salt, 10000,
				      all_threads[t], all_paths[p]);
		}
	}
}

/* Every thread count up to more than the pool has, on every path: the
 * split of blocks between threads never changes a byte. */
static void test_kdf__thread_counts(void **state)
{
	uint8_t want[MAX_OUT];
	size_t p;
	int t;

	(void)state;
	ref(want, MAX_OUT, &pws[1], &salts[1], 50);
	for (p = 0; p < NPATHS; p++) {
		if (!wks__kdf_path_available(all_paths[p]))
			continue;
		for (t = 0; t <= 20; t++)
			check(want, MAX_OUT, &pws[1], &salts[1], 50, t,
			      all_paths[p]);
	}
}

/* Long outputs: more blocks than SIMD lanes and threads. */
static void test_kdf__long_output(void **state)
{
	uint8_t want[1000], got[1000];
	size_t p;
	int t;

	(void)state;
	assert_int_equal(PKCS5_PBKDF2_HMAC("pw", 2, (const uint8_t *)"s", 1, 20,
	                                   EVP_sha512(), (int)sizeof(want),
	                                   want), 1);
	for (p = 0; p < NPATHS; p++) {
		if (!wks__kdf_path_available(all_paths[p]))
			continue;
		for (t = 0; t <= 3; t++) {
			memset(got, 0, sizeof(got));
			TU_OK(wks__pbkdf2_sha512_native(got, sizeof(got),
			                                (const uint8_t *)"pw", 2,
			                                (const uint8_t *)"s", 1,
			                                20, t, all_paths[p]));
			assert_memory_equal(got, want, sizeof(want));
		}
	}
}

/* ------------------------------------------------------------------------
 * Batches: many derivations side by side (wks__pbkdf2_sha512_batch)
 */

/* Job j of a batch of m: its password, salt, iteration count and output
 * length vary with j (and `seed`), so that a batch mixes counts and
 * lengths and its lanes refill at different times. */
static void batch_job(wks_kdf_job *job, uint8_t *out, size_t j, size_t seed)
{
	static const uint32_t iters[] = { 1, 2, 3, 7, 50, 129, 400, 1000 };
	static const size_t lens[] = { 1, 63, 64, 65, 96, 128, 129, 200 };
	const blob *pw = &pws[(j + seed) % 6], *salt = &salts[(j * 3 + seed) % 8];

	job->out = out;
	job->out_len = lens[(j * 5 + seed) % 8];
	job->pw = pw->bytes;
	job->pw_len = pw->len;
	job->salt = salt->bytes;
	job->salt_len = salt->len;
	job->iter = iters[(j * 7 + seed * 3) % 8];
}

static void check_batch(size_t m, size_t seed, int threads, wks_kdf_path path)
{
	enum { MAXM = 40 };
	wks_kdf_job jobs[MAXM];
	uint8_t got[MAXM][MAX_OUT + 1], want[MAX_OUT];
	size_t j;

	assert_true(m <= MAXM);
	memset(got, 0xee, sizeof(got));
	for (j = 0; j < m; j++)
		batch_job(&jobs[j], got[j], j, seed);
	TU_OK(wks__pbkdf2_sha512_batch(jobs, m, threads, path));
	for (j = 0; j < m; j++) {
		assert_int_equal(PKCS5_PBKDF2_HMAC((const char *)jobs[j].pw,
		                                   (int)jobs[j].pw_len,
		                                   jobs[j].salt,
		                                   (int)jobs[j].salt_len,
		                                   (int)jobs[j].iter, EVP_sha512(),
		                                   (int)jobs[j].out_len, want), 1);
		if (memcmp(got[j], want, jobs[j].out_len) != 0)
			fail_msg("batch of %zu (seed %zu), path %s, threads %d: "
			         "job %zu (iter %u, len %zu) differs from OpenSSL",
			         m, seed, wks__kdf_path_name(path), threads, j,
			         jobs[j].iter, jobs[j].out_len);
		assert_int_equal(got[j][jobs[j].out_len], 0xee);
	}
}

/* Batches of 1, odd sizes, and more derivations than all the lanes of
 * all the threads (8 x 2 here), with mixed iteration counts and output
 * lengths, on every path and thread setting, against OpenSSL one by one.
 * Sampled (WKS_KDF_STRIDE) by default, all in the full mode. */
static void test_kdf__batch_openssl(void **state)
{
	static const size_t ms[] = { 1, 2, 3, 5, 7, 8, 9, 16, 17, 33, 40 };
	size_t k, p, t, seed;

	(void)state;
	for (seed = 0; seed < 3; seed++)
		for (k = 0; k < sizeof(ms) / sizeof(ms[0]); k++)
			for (p = 0; p < NPATHS; p++) {
				if (!wks__kdf_path_available(all_paths[p]))
					continue;
				for (t = 0; t < NTHREADS; t++)
					if (g_calls++ % g_stride == 0)
						check_batch(ms[k], seed,
						            all_threads[t],
						            all_paths[p]);
			}
	/* every path at least once whatever the stride: odd M, mixed */
	for (p = 0; p < NPATHS; p++)
		if (wks__kdf_path_available(all_paths[p]))
			check_batch(17, 1, 2, all_paths[p]);
}

/* One long chain among many short ones: the lanes that finish early take
 * the next jobs while the long one runs on (every SIMD path, one
 * thread). */
static void test_kdf__batch_refill(void **state)
{
	enum { M = 24 };
	wks_kdf_job jobs[M];
	uint8_t got[M][64], want[64];
	size_t j, p;

	(void)state;
	for (p = 0; p < NPATHS; p++) {
		if (!wks__kdf_path_available(all_paths[p]))
			continue;
		for (j = 0; j < M; j++) {
			jobs[j].out = got[j];
			jobs[j].out_len = 64;
			jobs[j].pw = pws[1].bytes;
			jobs[j].pw_len = pws[1].len;
			jobs[j].salt = salts[j % 8].bytes;
			jobs[j].salt_len = salts[j % 8].len;
			jobs[j].iter = j == 0 ? 3000 : (uint32_t)(1 + j * 13);
		}
		TU_OK(wks__pbkdf2_sha512_batch(jobs, M, 1, all_paths[p]));
		for (j = 0; j < M; j++) {
			assert_int_equal(PKCS5_PBKDF2_HMAC(
				(const char *)pws[1].bytes, (int)pws[1].len,
				jobs[j].salt, (int)jobs[j].salt_len,
				(int)jobs[j].iter, EVP_sha512(), 64, want), 1);
			if (memcmp(got[j], want, 64) != 0)
				fail_msg("path %s: job %zu differs",
				         wks__kdf_path_name(all_paths[p]), j);
		}
	}
}

/* A bad job refuses the whole batch before any work: no output
 * written. */
static void test_kdf__batch_arguments(void **state)
{
	wks_kdf_job jobs[3];
	uint8_t out[3][64];
	size_t j;

	(void)state;
	memset(out, 0x5a, sizeof(out));
	for (j = 0; j < 3; j++)
		batch_job(&jobs[j], out[j], j, 0);
	jobs[0].out_len = 64;
	jobs[1].out_len = 64;
	jobs[2].out_len = 64;
	jobs[2].iter = 0;
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_batch(jobs, 3, 1,
	                                                     WKS_KDF_PATH_AUTO));
	jobs[2].iter = 1;
	jobs[1].out = NULL;
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_batch(jobs, 3, 1,
	                                                     WKS_KDF_PATH_AUTO));
	for (j = 0; j < 3; j++)
		for (size_t i = 0; i < 64; i++)
			assert_int_equal(out[j][i], 0x5a);
	jobs[1].out = out[1];
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_batch(jobs, 3, -1,
	                                                     WKS_KDF_PATH_AUTO));
	TU_EXPECT(WKS_ERR_UNSUPPORTED, wks__pbkdf2_sha512_batch(
		jobs, 3, 1, (wks_kdf_path)99));
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_batch(NULL, 3, 1,
	                                                     WKS_KDF_PATH_AUTO));
	TU_OK(wks__pbkdf2_sha512_batch(NULL, 0, 1, WKS_KDF_PATH_AUTO));
	TU_OK(wks__pbkdf2_sha512_batch(jobs, 3, 0, WKS_KDF_PATH_AUTO));
}

/* ------------------------------------------------------------------------
 * Concurrency, fork, arguments
 */

typedef struct {
	wks_kdf_path path;
	int threads;
	int seed;
	int ok;
} worker_arg;

static void *app_thread(void *p)
{
	worker_arg *a = p;
	uint8_t want[MAX_OUT], got[MAX_OUT];
	uint8_t pw[4] = { 'p', 'w', 0, 0 };
	int i;

	a->ok = 1;
	if (a->seed % 2) {
		/* a batch through the same pool */
		enum { M = 9 };
		wks_kdf_job jobs[M];
		uint8_t out[M][MAX_OUT + 1];
		size_t j;

		for (j = 0; j < M; j++)
			batch_job(&jobs[j], out[j], j, (size_t)a->seed);
		if (wks__pbkdf2_sha512_batch(jobs, M, a->threads,
		                             a->path) != WKS_OK)
			a->ok = 0;
		for (j = 0; j < M && a->ok; j++)
			if (PKCS5_PBKDF2_HMAC((const char *)jobs[j].pw,
			                      (int)jobs[j].pw_len, jobs[j].salt,
			                      (int)jobs[j].salt_len,
			                      (int)jobs[j].iter, EVP_sha512(),
			                      (int)jobs[j].out_len, want) != 1 ||
			    memcmp(want, out[j], jobs[j].out_len) != 0)
				a->ok = 0;
	}
	for (i = 0; i < 12; i++) {
		size_t len = (size_t)(1 + (a->seed * 37 + i * 53) % MAX_OUT);

		pw[2] = (uint8_t)a->seed;
		pw[3] = (uint8_t)i;
		if (PKCS5_PBKDF2_HMAC((const char *)pw, 4, (const uint8_t *)"salt",
		                      4, 200, EVP_sha512(), (int)len, want) != 1 ||
		    wks__pbkdf2_sha512_native(got, len, pw, 4,
		                              (const uint8_t *)"salt", 4, 200,
		                              a->threads, a->path) != WKS_OK ||
		    memcmp(got, want, len) != 0)
			a->ok = 0;
	}
	return NULL;
}

/* Many application threads deriving at once share the pool (jobs queue up,
 * callers take back jobs no worker started). */
static void test_kdf__concurrent_callers(void **state)
{
	enum { N = 8 };
	pthread_t tid[N];
	worker_arg arg[N];
	int i;

	(void)state;
	for (i = 0; i < N; i++) {
		arg[i].path = i % 2 ? WKS_KDF_PATH_AUTO : WKS_KDF_PATH_OPENSSL;
		arg[i].threads = i % 3 == 0 ? 0 : 1 + i % 3;
		arg[i].seed = i;
		assert_int_equal(pthread_create(&tid[i], NULL, app_thread,
		                                &arg[i]), 0);
	}
	for (i = 0; i < N; i++) {
		pthread_join(tid[i], NULL);
		if (!arg[i].ok)
			fail_msg("thread %d: wrong output", i);
	}
}

/* A forked child has none of the parent's workers: it must still finish
 * (in its own thread) and get the right bytes. */
static void test_kdf__after_fork(void **state)
{
	uint8_t want[MAX_OUT];
	int status;
	pid_t pid;

	(void)state;
	ref(want, MAX_OUT, &pws[1], &salts[1], 100);
	/* make sure the pool exists before the fork */
	check(want, MAX_OUT, &pws[1], &salts[1], 100, 2, WKS_KDF_PATH_OPENSSL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint8_t got[MAX_OUT];

		alarm(60);
		if (wks__pbkdf2_sha512_native(got, MAX_OUT, pws[1].bytes,
		                              pws[1].len, salts[1].bytes,
		                              salts[1].len, 100, 2,
		                              WKS_KDF_PATH_OPENSSL) != WKS_OK)
			_exit(2);
		_exit(memcmp(got, want, MAX_OUT) == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_kdf__bad_arguments(void **state)
{
	uint8_t out[64];
	const uint8_t *pw = (const uint8_t *)"pw";

	(void)state;
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_native(
		out, sizeof(out), pw, 2, pw, 2, 0, 1, WKS_KDF_PATH_AUTO));
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_native(
		NULL, 64, pw, 2, pw, 2, 1, 1, WKS_KDF_PATH_AUTO));
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_native(
		out, 0, pw, 2, pw, 2, 1, 1, WKS_KDF_PATH_AUTO));
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_native(
		out, sizeof(out), NULL, 2, pw, 2, 1, 1, WKS_KDF_PATH_AUTO));
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_native(
		out, sizeof(out), pw, 2, NULL, 2, 1, 1, WKS_KDF_PATH_AUTO));
	TU_EXPECT(WKS_ERR_INVALID, wks__pbkdf2_sha512_native(
		out, sizeof(out), pw, 2, pw, 2, 1, -1, WKS_KDF_PATH_AUTO));
	TU_EXPECT(WKS_ERR_UNSUPPORTED, wks__pbkdf2_sha512_native(
		out, sizeof(out), pw, 2, pw, 2, 1, 1, (wks_kdf_path)99));
	assert_string_not_equal(wks_error_detail(), "");
	/* NULL with length 0 is an empty password / salt */
	TU_OK(wks__pbkdf2_sha512_native(out, sizeof(out), NULL, 0, NULL, 0, 1,
	                                1, WKS_KDF_PATH_AUTO));
	assert_int_equal(wks__kdf_path_available((wks_kdf_path)99), 0);
}

/* AUTO always resolves to an available path and at least one thread; the
 * scalar and OpenSSL paths exist everywhere. */
static void test_kdf__auto_resolution(void **state)
{
	size_t lens[] = { 1, 64, 96, 200, 1000 };
	size_t i;
	int want_threads;

	(void)state;
	assert_true(wks__kdf_path_available(WKS_KDF_PATH_AUTO));
	assert_true(wks__kdf_path_available(WKS_KDF_PATH_SCALAR));
	assert_true(wks__kdf_path_available(WKS_KDF_PATH_OPENSSL));
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (want_threads = 0; want_threads <= 2; want_threads++) {
			wks_kdf_path path = WKS_KDF_PATH_AUTO;
			int threads = want_threads;

			wks__kdf_resolve(&path, &threads, lens[i]);
			assert_int_not_equal(path, WKS_KDF_PATH_AUTO);
			assert_true(wks__kdf_path_available(path));
			assert_true(threads >= 1);
			if (want_threads)
				assert_int_equal(threads, want_threads);
		}
	}
	for (i = 0; i < NPATHS; i++)
		print_message("path %-7s %s\n", wks__kdf_path_name(all_paths[i]),
		              wks__kdf_path_available(all_paths[i]) ?
		              "available" : "not available on this CPU");
}

/* Issue 31: which PBKDF2 serves libwks.kdf.impl=native.  On OpenSSL and
 * on a wolfCrypt that is not FIPS, a batch of two derivations runs on
 * the native kernels (one native batch more); on a FIPS wolfCrypt (or the
 * FIPS mode forced with -DWKS_WOLFCRYPT_FIPS_MODE=1) only the module's
 * wc_PBKDF2 runs, no native batch.  Either way the bytes are the
 * reference's. */
static void test_kdf__native_policy(void **state)
{
	static const uint8_t salt[16] = "policy-salt-0123";
	uint8_t a[96], b[96], ref[96];
	wks_kdf_job jobs[2] = {
		{ a, sizeof(a), (const uint8_t *)"pw-one", 6, salt, 16, 1000 },
		{ b, sizeof(b), (const uint8_t *)"pw-two", 6, salt, 16, 1000 },
	};
	unsigned long before = wks__kdf_test_batches();
	int fips = 0;

	(void)state;
#if defined(HAVE_FIPS) || (defined(WKS_WOLFCRYPT_FIPS_MODE) && WKS_WOLFCRYPT_FIPS_MODE)
	fips = 1;
#endif
	TU_OK(wks__pbkdf2_batch_cc(NULL, jobs, 2, WKS_KDF_NATIVE, 0));
	assert_int_equal(wks__kdf_test_batches() - before, fips ? 0 : 1);
	assert_int_equal(PKCS5_PBKDF2_HMAC("pw-one", 6, salt, 16, 1000,
	                                   EVP_sha512(), 96, ref), 1);
	assert_memory_equal(a, ref, 96);
	assert_int_equal(PKCS5_PBKDF2_HMAC("pw-two", 6, salt, 16, 1000,
	                                   EVP_sha512(), 96, ref), 1);
	assert_memory_equal(b, ref, 96);
	/* (no free lanes to offer where no native batch runs) */
	if (fips)
		assert_int_equal(wks__pbkdf2_batch_spare(NULL, 4, WKS_KDF_NATIVE,
		                                         0), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kdf__auto_resolution),
		cmocka_unit_test(test_kdf__bad_arguments),
		cmocka_unit_test(test_kdf__published_vectors),
		cmocka_unit_test(test_kdf__openssl_low_iterations),
		cmocka_unit_test(test_kdf__openssl_1000),
		cmocka_unit_test(test_kdf__openssl_10000),
		cmocka_unit_test(test_kdf__thread_counts),
		cmocka_unit_test(test_kdf__long_output),
		cmocka_unit_test(test_kdf__batch_openssl),
		cmocka_unit_test(test_kdf__batch_refill),
		cmocka_unit_test(test_kdf__batch_arguments),
		cmocka_unit_test(test_kdf__concurrent_callers),
		cmocka_unit_test(test_kdf__after_fork),
		cmocka_unit_test(test_kdf__native_policy),
	};

	make_inputs();
	g_stride = tu_env_count("WKS_KDF_STRIDE", 7, 1);
	if (g_stride == 0)
		g_stride = 1;
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
