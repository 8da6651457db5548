/* PBKDF2-HMAC-SHA512, native implementation (design: docs/KDF.md).
 *
 * PBKDF2 output block i is T_i = U_1 ^ U_2 ^ ... ^ U_c with
 *   U_1 = HMAC(P, S || INT(i)),  U_j = HMAC(P, U_(j-1)).
 * With the HMAC states after the ipad and opad key blocks prepared once,
 * every U_j for j >= 2 costs exactly two SHA-512 compressions of one fixed
 * block (64 digest bytes + constant padding), which the chain kernels
 * (sha512_*.c) run with nothing else in the loop.  The blocks are
 * independent, within one derivation and between derivations: a SIMD
 * kernel advances four or eight of them at once, each lane with its own
 * HMAC states, and the calling thread and a small persistent pool of
 * workers take blocks from one shared feed until it is empty.  One
 * derivation is a batch of one.
 *
 * This file does the set-up (HMAC key, salt, U_1), the dispatch and the
 * pool.  Set-up uses the portable compression function: it is a handful of
 * compressions per derivation against 2(c-1) per block in the kernels.
 */
#include "crypto/kdf.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto/crypto.h"
#include "util/error.h"
#include "util/fork.h"
#include "util/wipe.h"

#define BLOCK_LEN 128 /* SHA-512 message block */
#define HASH_LEN 64   /* SHA-512 digest = one PBKDF2 output block */
#define MAX_THREADS 16

static const uint64_t IV[8] = WKS__SHA512_IV_INIT;

/* ------------------------------------------------------------------------
 * Byte order
 */

static uint64_t load64_be(const uint8_t *p)
{
	return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 |
	       (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
	       (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
	       (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

static void store64_be(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static void compress_bytes(uint64_t h[8], const uint8_t blk[BLOCK_LEN])
{
	uint64_t w[16];
	int i;

	for (i = 0; i < 16; i++)
		w[i] = load64_be(blk + 8 * i);
	wks__sha512_compress(h, w);
	wks_wipe(w, sizeof(w));
}

/* ------------------------------------------------------------------------
 * A minimal streaming SHA-512 for the set-up work.  The byte count is kept
 * in 128 bits, as the padding needs.
 */

typedef struct {
	uint64_t h[8];
	uint8_t buf[BLOCK_LEN];
	size_t fill;
	uint64_t len_lo, len_hi; /* bytes hashed so far */
} sha512_stream;

static void stream_init(sha512_stream *s, const uint64_t h[8],
                        uint64_t done_bytes)
{
	memcpy(s->h, h, sizeof(s->h));
	s->fill = 0;
	s->len_lo = done_bytes;
	s->len_hi = 0;
}

static void stream_update(sha512_stream *s, const uint8_t *p, size_t n)
{
	size_t take;

	s->len_lo += (uint64_t)n;
	if (s->len_lo < (uint64_t)n)
		s->len_hi++;
	while (n > 0) {
		if (s->fill == 0 && n >= BLOCK_LEN) {
			compress_bytes(s->h, p);
			p += BLOCK_LEN;
			n -= BLOCK_LEN;
			continue;
		}
		take = BLOCK_LEN - s->fill;
		if (take > n)
			take = n;
		memcpy(s->buf + s->fill, p, take);
		s->fill += take;
		p += take;
		n -= take;
		if (s->fill == BLOCK_LEN) {
			compress_bytes(s->h, s->buf);
			s->fill = 0;
		}
	}
}

/* Finish into out (the digest as words); s is left for the caller to wipe. */
static void stream_final(sha512_stream *s, uint64_t out[8])
{
	uint64_t bits_hi = s->len_hi << 3 | s->len_lo >> 61;
	uint64_t bits_lo = s->len_lo << 3;

	s->buf[s->fill++] = 0x80;
	if (s->fill > BLOCK_LEN - 16) {
		memset(s->buf + s->fill, 0, BLOCK_LEN - s->fill);
		compress_bytes(s->h, s->buf);
		s->fill = 0;
	}
	memset(s->buf + s->fill, 0, BLOCK_LEN - 16 - s->fill);
	store64_be(s->buf + BLOCK_LEN - 16, bits_hi);
	store64_be(s->buf + BLOCK_LEN - 8, bits_lo);
	compress_bytes(s->h, s->buf);
	memcpy(out, s->h, sizeof(s->h));
}

/* ------------------------------------------------------------------------
 * CPU features and path selection
 */

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_X86 1
#endif

static int cpu_has_avx2(void)
{
#ifdef HAVE_X86
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
#else
	return 0;
#endif
}

static int cpu_has_avx512(void)
{
#ifdef HAVE_X86
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512vl");
#else
	return 0;
#endif
}

static int cpu_has_avx512f(void)
{
#ifdef HAVE_X86
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
#else
	return 0;
#endif
}

int wks__kdf_path_available(wks_kdf_path path)
{
	switch (path) {
	case WKS_KDF_PATH_AUTO:
	case WKS_KDF_PATH_SCALAR:
	case WKS_KDF_PATH_OPENSSL:
		return 1;
	case WKS_KDF_PATH_AVX2:
		return cpu_has_avx2();
	case WKS_KDF_PATH_AVX512:
		return cpu_has_avx512();
	case WKS_KDF_PATH_AVX512X8:
		return cpu_has_avx512f();
	default:
		return 0;
	}
}

const char *wks__kdf_path_name(wks_kdf_path path)
{
	switch (path) {
	case WKS_KDF_PATH_AUTO: return "auto";
	case WKS_KDF_PATH_SCALAR: return "scalar";
	case WKS_KDF_PATH_OPENSSL: return "openssl";
	case WKS_KDF_PATH_AVX2: return "avx2";
	case WKS_KDF_PATH_AVX512: return "avx512";
	case WKS_KDF_PATH_AVX512X8: return "avx512x8";
	default: return "?";
	}
}

size_t wks__kdf_path_lanes(wks_kdf_path path)
{
	switch (path) {
	case WKS_KDF_PATH_AVX2:
	case WKS_KDF_PATH_AVX512: return 4;
	case WKS_KDF_PATH_AVX512X8: return 8;
	default: return 1;
	}
}

static wks__kdf_lanes_fn *path_lanes_fn(wks_kdf_path path)
{
	switch (path) {
	case WKS_KDF_PATH_AVX2: return wks__kdf_lanes_avx2;
	case WKS_KDF_PATH_AVX512: return wks__kdf_lanes_avx512;
	case WKS_KDF_PATH_AVX512X8: return wks__kdf_lanes_avx512x8;
	default: return NULL;
	}
}

static wks__kdf_chain_fn *path_chain(wks_kdf_path path)
{
	return path == WKS_KDF_PATH_OPENSSL ? wks__kdf_chain_openssl
	                                    : wks__kdf_chain_scalar;
}

/*
 * Time of one kernel pass (one block on the one-lane kernels, up to four
 * or eight on the SIMD ones), relative to OpenSSL's assembly on one
 * block, as measured with wks-kdf-bench on the reference machine
 * (docs/KDF.md).  The SIMD kernels are bound by vector instruction
 * throughput, so their pass costs the same for one block or a full set.
 * Their speed varies from one process to the next there (AVX-512: 1.83
 * or 2.75, AVX2: 2.9 or 3.95); the slower figure is used, so that AUTO
 * picks them only where they win either way.
 */
static unsigned path_cost(wks_kdf_path path)
{
	switch (path) {
	case WKS_KDF_PATH_OPENSSL: return wks__kdf_chain_openssl_cost();
	case WKS_KDF_PATH_SCALAR: return 140;
	case WKS_KDF_PATH_AVX512: return 275;
	case WKS_KDF_PATH_AVX512X8: return 275;
	case WKS_KDF_PATH_AVX2: return 395;
	default: return 1000;
	}
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static size_t div_up(size_t a, size_t b)
{
	return a / b + (a % b != 0);
}

/* Estimated time of a derivation of `blocks` blocks on `path` with at
 * most `threads` threads; *used gets the thread count worth using. */
static size_t path_time(wks_kdf_path path, size_t blocks, int threads,
                        int *used)
{
	size_t passes = div_up(blocks, wks__kdf_path_lanes(path));
	size_t t = (size_t)threads < passes ? (size_t)threads : passes;

	if (t < 1)
		t = 1;
	*used = (int)t;
	return div_up(passes, t) * path_cost(path);
}

/*
 * AUTO picks the path with the lowest estimated time, and threads == 0
 * means one thread per CPU at most, no more than there are passes to run:
 * a thread costs a wake-up of some tens of microseconds, nothing next to a
 * chain of 2(c-1) compressions, but a second thread on blocks that one
 * SIMD pass computes anyway gains nothing.  On the reference machine
 * (2 cores, AVX-512) this gives OpenSSL's assembly with one thread per
 * block for 64 and 96 bytes, and the AVX-512 kernel once a thread would
 * have three blocks or more.
 */
void wks__kdf_resolve(wks_kdf_path *path, int *threads, size_t out_len)
{
	wks__kdf_resolve_blocks(path, threads,
	                        div_up(out_len ? out_len : 1, HASH_LEN));
}

/* wks__kdf_resolve_blocks(), returning the estimated time. */
static size_t resolve(wks_kdf_path *path, int *threads, size_t blocks)
{
	/* (On a tie the first wins: the 8-lane kernel before the 4-lane
	 * one, which costs the same per pass here.) */
	static const wks_kdf_path order[] = {
		WKS_KDF_PATH_OPENSSL, WKS_KDF_PATH_AVX512X8, WKS_KDF_PATH_AVX512,
		WKS_KDF_PATH_AVX2, WKS_KDF_PATH_SCALAR
	};
	int cpus = online_cpus();
	/* More threads than CPUs only take turns: estimate with the CPUs. */
	int limit = *threads > 0 && *threads < cpus ? *threads : cpus;
	size_t best = (size_t)-1, t;
	int used, best_used = 1;
	size_t i;

	if (blocks == 0)
		blocks = 1;
	if (*path == WKS_KDF_PATH_AUTO) {
		for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			if (!wks__kdf_path_available(order[i]))
				continue;
			t = path_time(order[i], blocks, limit, &used);
			if (t < best) {
				best = t;
				best_used = used;
				*path = order[i];
			}
		}
	} else {
		best = path_time(*path, blocks, limit, &best_used);
	}
	if (*threads == 0)
		*threads = best_used;
	return best;
}

void wks__kdf_resolve_blocks(wks_kdf_path *path, int *threads, size_t blocks)
{
	(void)resolve(path, threads, blocks);
}

size_t wks__kdf_estimate(size_t blocks, int threads)
{
	wks_kdf_path path = WKS_KDF_PATH_AUTO;

	return blocks ? resolve(&path, &threads, blocks) : 0;
}

/* ------------------------------------------------------------------------
 * Derivations, the feed of their blocks, and the shares of the threads
 */

/* One derivation, prepared. */
typedef struct {
	uint64_t ist[8], ost[8]; /* states after the ipad / opad blocks */
	uint64_t sst[8];         /* inner state after the whole salt blocks */
	uint8_t tail[BLOCK_LEN]; /* salt bytes after those */
	size_t tail_len;
	uint64_t len_lo, len_hi; /* bytes hashed: key block, salt (with tail) */
	uint32_t iter;
	uint8_t *out;
	size_t out_len;
} kdf_ctx;

/*
 * A batch: the derivations and a cursor over all their blocks, numbered
 * job by job (first[j] is the number of job j's block 0, first[njobs] the
 * total).  Every thread's kernel takes blocks from the cursor until it
 * passes the total; a block is written to its own bytes of its job's
 * output, so the threads share nothing else.
 */
typedef struct {
	wks__kdf_feed feed; /* first member: the kernels get &feed */
	const kdf_ctx *ctx;
	const size_t *first;
	size_t njobs;
	size_t total;
	atomic_size_t cursor;
	wks_kdf_path path;
} kdf_batch;

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

/* One thread's share of a batch: run the kernel until the feed is
 * empty. */
typedef struct kdf_job {
	kdf_batch *batch;
	int state;           /* under pool.mu once queued */
	struct kdf_job *next;
} kdf_job;

/* U_1 of block `index` (0-based; INT(i) is index + 1), as words. */
static void first_u(uint64_t u[8], const kdf_ctx *ctx, size_t index)
{
	sha512_stream s;
	uint64_t w[16];
	uint8_t ib[4];
	uint32_t i = (uint32_t)index + 1;
	int k;

	s.fill = 0;
	memcpy(s.h, ctx->sst, sizeof(s.h));
	s.len_lo = ctx->len_lo;
	s.len_hi = ctx->len_hi;
	memcpy(s.buf, ctx->tail, ctx->tail_len);
	s.fill = ctx->tail_len;
	ib[0] = (uint8_t)(i >> 24);
	ib[1] = (uint8_t)(i >> 16);
	ib[2] = (uint8_t)(i >> 8);
	ib[3] = (uint8_t)i;
	stream_update(&s, ib, sizeof(ib));
	stream_final(&s, w);
	/* outer: H(opad block || inner digest), one padded block */
	w[8] = UINT64_C(0x8000000000000000);
	for (k = 9; k < 15; k++)
		w[k] = 0;
	w[15] = (BLOCK_LEN + HASH_LEN) * 8;
	memcpy(u, ctx->ost, 8 * sizeof(uint64_t));
	wks__sha512_compress(u, w);
	wks_wipe(&s, sizeof(s));
	wks_wipe(w, sizeof(w));
}

static int feed_next(wks__kdf_feed *f, wks__kdf_block *b)
{
	kdf_batch *bt = (kdf_batch *)f;
	size_t k, lo = 0, hi, mid;
	const kdf_ctx *ctx;

	/* Relaxed: the jobs' set-up was published by the pool's mutex (or
	 * is this thread's own); the cursor only hands out numbers. */
	k = atomic_fetch_add_explicit(&bt->cursor, 1, memory_order_relaxed);
	if (k >= bt->total)
		return 0;
	/* The job holding block k: the last j with first[j] <= k. */
	hi = bt->njobs;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (bt->first[mid] <= k)
			lo = mid;
		else
			hi = mid;
	}
	ctx = &bt->ctx[lo];
	b->job = lo;
	b->index = k - bt->first[lo];
	b->ist = ctx->ist;
	b->ost = ctx->ost;
	b->n = ctx->iter - 1;
	first_u(b->t, ctx, b->index);
	return 1;
}

static void feed_done(wks__kdf_feed *f, wks__kdf_block *b)
{
	const kdf_ctx *ctx = &((kdf_batch *)f)->ctx[b->job];
	uint8_t be[HASH_LEN];
	size_t off = b->index * HASH_LEN, len;
	int i;

	for (i = 0; i < 8; i++)
		store64_be(be + 8 * i, b->t[i]);
	len = ctx->out_len - off < HASH_LEN ? ctx->out_len - off : HASH_LEN;
	memcpy(ctx->out + off, be, len);
	wks_wipe(be, sizeof(be));
	wks_wipe(b->t, sizeof(b->t));
}

/*
 * Overwrite the stack below the caller with zeros: the kernels keep state
 * words, message words and digests in locals and register spills (OpenSSL's
 * assembly too), which wks_wipe() on named buffers cannot reach.
 */
__attribute__((noinline)) static void burn_stack(void)
{
	uint8_t pad[16384];

	wks_wipe(pad, sizeof(pad));
	__asm__ __volatile__("" : : "r"(pad) : "memory");
}

static void run_job(const kdf_job *job)
{
	kdf_batch *bt = job->batch;
	wks__kdf_lanes_fn *lanes = path_lanes_fn(bt->path);
	wks__kdf_chain_fn *chain;
	wks__kdf_block b;

	if (lanes) {
		lanes(&bt->feed);
		return;
	}
	chain = path_chain(bt->path);
	while (feed_next(&bt->feed, &b)) {
		if (b.n)
			chain(&b.t, 1, b.ist, b.ost, b.n);
		feed_done(&bt->feed, &b);
	}
	wks_wipe(&b, sizeof(b));
}

/* ------------------------------------------------------------------------
 * The worker pool: created once, on the first derivation that asks for
 * more than one thread, with one worker fewer than the online CPUs (the
 * calling thread computes too), at least one.  Workers sleep on a
 * condition variable between jobs.
 *
 * A caller queues its extra jobs, runs its own share, then takes back any
 * of its jobs that no worker has started yet, so a busy pool (several
 * derivations at once) never makes a caller wait for work it could do
 * itself.  After fork() the child has no workers: the pool belongs to the
 * pid that made it, and a child computes everything in the calling thread.
 */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work; /* a job was queued */
	pthread_cond_t done; /* a job finished */
	kdf_job *head, *tail;
	int workers;
	int stop; /* set at exit: workers finish the queue and return */
	pid_t pid;
	pthread_t tid[MAX_THREADS];
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
	   PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0, 0, { 0 } };

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* pool.mu is held across fork() (util/fork.h, rank KDF); the child makes
 * it and the condition variables anew (the parent's workers may have been
 * waiting on them) and forgets the queue, whose jobs belong to the
 * parent's threads. */
static void pool_fork_prepare(void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&pool.mu);
}

static void pool_fork_parent(void *ctx)
{
	(void)ctx;
	pthread_mutex_unlock(&pool.mu);
}

static void pool_fork_child(void *ctx)
{
	(void)ctx;
	pthread_mutex_init(&pool.mu, NULL);
	pthread_cond_init(&pool.work, NULL);
	pthread_cond_init(&pool.done, NULL);
	pool.head = pool.tail = NULL;
}

static wks_fork_hook pool_fork_hook = {
	WKS_FORK_RANK_KDF, pool_fork_prepare, pool_fork_parent,
	pool_fork_child, NULL, NULL, NULL, 0
};

__attribute__((constructor)) static void pool_fork_init(void)
{
	wks__fork_hook_add(&pool_fork_hook);
}

static void *worker_main(void *arg)
{
	kdf_job *job;

	(void)arg;
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		while (!pool.head && !pool.stop)
			pthread_cond_wait(&pool.work, &pool.mu);
		if (!pool.head)
			break;
		job = pool.head;
		pool.head = job->next;
		if (!pool.head)
			pool.tail = NULL;
		job->state = JOB_RUNNING;
		pthread_mutex_unlock(&pool.mu);

		run_job(job);
		burn_stack();
		/* An idle worker keeps its registers until its next job:
		 * they must not hold the password's bytes meanwhile. */
		wks__wipe_registers();

		pthread_mutex_lock(&pool.mu);
		job->state = JOB_DONE;
		pthread_cond_broadcast(&pool.done);
	}
	pthread_mutex_unlock(&pool.mu);
	return NULL;
}

static void pool_start(void)
{
	sigset_t all, old;
	int i, want = online_cpus() - 1;

	if (want < 1)
		want = 1;
	/* Workers inherit this mask: signals go to the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < want; i++)
		if (pthread_create(&pool.tid[i], NULL, worker_main, NULL) != 0)
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_lock(&pool.mu);
	pool.workers = i;
	pool.pid = getpid();
	pthread_mutex_unlock(&pool.mu);
}

/*
 * At exit, stop and join the workers, so that leak checkers see every
 * thread's memory released.  A worker finishes the jobs still queued; a
 * derivation started after this runs in its caller's thread (no workers).
 */
__attribute__((destructor)) static void pool_stop(void)
{
	int i, n;

	if (pool.pid != getpid())
		return;
	pthread_mutex_lock(&pool.mu);
	n = pool.workers;
	pool.workers = 0;
	pool.stop = 1;
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.mu);
	for (i = 0; i < n; i++)
		pthread_join(pool.tid[i], NULL);
}

/* Number of workers usable by this process (0 in a forked child). */
static int pool_usable(void)
{
	int n;

	pthread_once(&pool_once, pool_start);
	if (pool.pid != getpid())
		return 0;
	pthread_mutex_lock(&pool.mu);
	n = pool.workers;
	pthread_mutex_unlock(&pool.mu);
	return n;
}

static void run_jobs(kdf_job *jobs, size_t njobs)
{
	kdf_job *p, *prev;
	size_t j;

	if (njobs > 1) {
		pthread_mutex_lock(&pool.mu);
		for (j = 1; j < njobs; j++) {
			jobs[j].state = JOB_QUEUED;
			jobs[j].next = NULL;
			if (pool.tail)
				pool.tail->next = &jobs[j];
			else
				pool.head = &jobs[j];
			pool.tail = &jobs[j];
		}
		pthread_cond_broadcast(&pool.work);
		pthread_mutex_unlock(&pool.mu);
	}
	run_job(&jobs[0]);
	for (j = 1; j < njobs; j++) {
		pthread_mutex_lock(&pool.mu);
		if (jobs[j].state == JOB_QUEUED) {
			/* Not started: unlink it and run it here. */
			for (prev = NULL, p = pool.head; p != &jobs[j];
			     prev = p, p = p->next)
				;
			if (prev)
				prev->next = p->next;
			else
				pool.head = p->next;
			if (pool.tail == p)
				pool.tail = prev;
			jobs[j].state = JOB_RUNNING;
			pthread_mutex_unlock(&pool.mu);
			run_job(&jobs[j]);
			continue;
		}
		while (jobs[j].state != JOB_DONE)
			pthread_cond_wait(&pool.done, &pool.mu);
		pthread_mutex_unlock(&pool.mu);
	}
	burn_stack();
}

/* The HMAC states for password pw (RFC 2104: a key longer than the
 * block is hashed first). */
static void hmac_states(kdf_ctx *ctx, const uint8_t *pw, size_t pw_len)
{
	uint8_t key[BLOCK_LEN];
	uint64_t kh[8];
	sha512_stream s;
	int i;

	memset(key, 0, sizeof(key));
	if (pw_len > BLOCK_LEN) {
		stream_init(&s, IV, 0);
		stream_update(&s, pw, pw_len);
		stream_final(&s, kh);
		for (i = 0; i < 8; i++)
			store64_be(key + 8 * i, kh[i]);
		wks_wipe(&s, sizeof(s));
		wks_wipe(kh, sizeof(kh));
	} else if (pw_len > 0) {
		memcpy(key, pw, pw_len);
	}
	for (i = 0; i < BLOCK_LEN; i++)
		key[i] ^= 0x36;
	memcpy(ctx->ist, IV, sizeof(ctx->ist));
	compress_bytes(ctx->ist, key);
	for (i = 0; i < BLOCK_LEN; i++)
		key[i] ^= 0x36 ^ 0x5c;
	memcpy(ctx->ost, IV, sizeof(ctx->ost));
	compress_bytes(ctx->ost, key);
	wks_wipe(key, sizeof(key));
}

/* Set up one derivation: HMAC states, the salt's whole blocks hashed
 * once for all its output blocks. */
static void prepare(kdf_ctx *ctx, const wks_kdf_job *j)
{
	sha512_stream s;

	memset(ctx, 0, sizeof(*ctx));
	hmac_states(ctx, j->pw, j->pw_len);
	stream_init(&s, ctx->ist, BLOCK_LEN);
	stream_update(&s, j->salt, j->salt_len);
	memcpy(ctx->sst, s.h, sizeof(ctx->sst));
	memcpy(ctx->tail, s.buf, s.fill);
	ctx->tail_len = s.fill;
	ctx->len_lo = s.len_lo;
	ctx->len_hi = s.len_hi;
	wks_wipe(&s, sizeof(s));
	ctx->iter = j->iter;
	ctx->out = j->out;
	ctx->out_len = j->out_len;
}

static int check_job(const wks_kdf_job *j, size_t *blocks)
{
	if (!j->out || j->out_len == 0)
		return wks__err(WKS_ERR_INVALID, "PBKDF2: no output buffer");
	if ((!j->pw && j->pw_len) || (!j->salt && j->salt_len))
		return wks__err(WKS_ERR_INVALID, "PBKDF2: NULL password or salt");
	if (j->iter == 0)
		return wks__err(WKS_ERR_INVALID, "PBKDF2: iteration count 0");
	*blocks = div_up(j->out_len, HASH_LEN);
	/* RFC 8018: at most 2^32 - 1 blocks. */
	if ((uint64_t)*blocks > UINT32_MAX)
		return wks__err(WKS_ERR_LIMIT, "PBKDF2: output length %zu too long",
		                j->out_len);
	return WKS_OK;
}

/* Up to this many derivations are set up on the stack; more are
 * allocated. */
#define SMALL_BATCH 4

int wks__pbkdf2_sha512_batch(const wks_kdf_job *jobs, size_t njobs,
                             int threads, wks_kdf_path path)
{
	kdf_ctx small_ctx[SMALL_BATCH], *ctx = small_ctx;
	size_t small_first[SMALL_BATCH + 1], *first = small_first;
	kdf_job share[MAX_THREADS];
	kdf_batch bt;
	size_t blocks = 0, total = 0, nshares, j;
	int workers, err = WKS_OK;

	if (!jobs && njobs)
		return wks__err(WKS_ERR_INVALID, "PBKDF2: no jobs");
	if (threads < 0)
		return wks__err(WKS_ERR_INVALID, "PBKDF2: thread count %d",
		                threads);
	for (j = 0; j < njobs && err == WKS_OK; j++) {
		err = check_job(&jobs[j], &blocks);
		if (err == WKS_OK && blocks > SIZE_MAX / 2 - total)
			err = wks__err(WKS_ERR_LIMIT, "PBKDF2: batch too large");
		total += blocks;
	}
	if (err == WKS_OK && !wks__kdf_path_available(path))
		err = wks__err(WKS_ERR_UNSUPPORTED,
		               "PBKDF2: code path %d not available on this CPU",
		               (int)path);
	if (err == WKS_OK) {
		wks__kdf_resolve_blocks(&path, &threads, total);
		if (path == WKS_KDF_PATH_AUTO)
			err = wks__err(WKS_ERR_UNSUPPORTED, "PBKDF2: code path %d "
			               "not available on this CPU", (int)path);
	}
	if (err == WKS_OK && njobs > SMALL_BATCH &&
	    (!(ctx = calloc(njobs, sizeof(*ctx))) ||
	     !(first = calloc(njobs + 1, sizeof(*first))))) {
		free(ctx);
		ctx = NULL;
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	if (err < 0)
		return err;
	if (njobs == 0)
		return WKS_OK;

	for (j = 0, total = 0; j < njobs; j++) {
		prepare(&ctx[j], &jobs[j]);
		first[j] = total;
		total += div_up(jobs[j].out_len, HASH_LEN);
	}
	first[njobs] = total;
	memset(&bt, 0, sizeof(bt));
	bt.feed.next = feed_next;
	bt.feed.done = feed_done;
	bt.ctx = ctx;
	bt.first = first;
	bt.njobs = njobs;
	bt.total = total;
	atomic_init(&bt.cursor, 0);
	bt.path = path;

	nshares = (size_t)threads < total ? (size_t)threads : total;
	if (nshares > MAX_THREADS)
		nshares = MAX_THREADS;
	if (nshares > 1) {
		workers = pool_usable();
		if (nshares > (size_t)workers + 1)
			nshares = (size_t)workers + 1;
	}
	for (j = 0; j < nshares; j++) {
		share[j].batch = &bt;
		share[j].next = NULL;
		share[j].state = JOB_QUEUED;
	}
	run_jobs(share, nshares);
	wks_wipe(ctx, njobs * sizeof(*ctx));
	if (ctx != small_ctx) {
		free(ctx);
		free(first);
	}
	wks_wipe(&bt, sizeof(bt));
	return WKS_OK;
}

int wks__pbkdf2_sha512_native(uint8_t *out, size_t out_len,
                              const uint8_t *pw, size_t pw_len,
                              const uint8_t *salt, size_t salt_len,
                              uint32_t iter, int threads, wks_kdf_path path)
{
	wks_kdf_job job;

	job.out = out;
	job.out_len = out_len;
	job.pw = pw;
	job.pw_len = pw_len;
	job.salt = salt;
	job.salt_len = salt_len;
	job.iter = iter;
	return wks__pbkdf2_sha512_batch(&job, 1, threads, path);
}
