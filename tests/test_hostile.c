/*
 * Hostile values: every length, count and iteration count of the format
 * at its boundaries (0, 1, the limit, the limit + 1, 0x7FFFFFFF, -1 and
 * INT_MIN) gives the right clean error class, quickly, and without
 * allocating more than a small multiple of the input; and a store of
 * 100,000 entries loads in bounded time and memory.
 *
 * Memory is measured by counting the heap: this program defines malloc,
 * calloc, realloc, free and the aligned allocators (over glibc's
 * __libc_* functions), which interposes them for every library in the
 * process (libwks and OpenSSL included), and records the peak of the
 * bytes in use during each call.  Under ASan/TSan (which bring their own
 * allocator) the counting is compiled out and the memory bounds are not
 * checked (say so in the output); the classes and times still are.
 *
 * Base image: a store saved by libwks at 10000 iterations with a private
 * key (2-certificate chain), a secret key and a trusted certificate; each
 * case patches one field of a copy and loads it without and with the
 * password (the store MAC recomputed when the file must load).
 */
#include "testutil.h"

#include <limits.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "format/format.h"
#include "store/decode.h"
#include "util/buf.h"

#define PW "hostile-password"
#define PW_LEN (sizeof(PW) - 1)

/* ---- heap counting ------------------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOSTILE_NO_COUNT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define HOSTILE_NO_COUNT 1
#endif
#endif

static _Atomic long long heap_cur, heap_peak;

#ifndef HOSTILE_NO_COUNT
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t a, size_t n);
void __libc_free(void *p);

void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);
void free(void *p);
int posix_memalign(void **out, size_t a, size_t n);
void *aligned_alloc(size_t a, size_t n);
void *memalign(size_t a, size_t n);
void *valloc(size_t n);
void *pvalloc(size_t n);

static void *counted(void *p)
{
	if (p) {
		long long c = atomic_fetch_add(&heap_cur,
		                               (long long)malloc_usable_size(p)) +
		              (long long)malloc_usable_size(p);
		long long pk = atomic_load(&heap_peak);

		while (c > pk && !atomic_compare_exchange_weak(&heap_peak, &pk, c))
			;
	}
	return p;
}

static void uncount(void *p)
{
	if (p)
		atomic_fetch_sub(&heap_cur, (long long)malloc_usable_size(p));
}

void *malloc(size_t n)
{
	return counted(__libc_malloc(n));
}

void *calloc(size_t n, size_t m)
{
	return counted(__libc_calloc(n, m));
}

void *realloc(void *p, size_t n)
{
	void *q;
	long long old = p ? (long long)malloc_usable_size(p) : 0;

	q = __libc_realloc(p, n);
	if (q || n == 0 || !p) {
		atomic_fetch_sub(&heap_cur, old);
		counted(q);
	}
	return q;
}

void free(void *p)
{
	uncount(p);
	__libc_free(p);
}

int posix_memalign(void **out, size_t a, size_t n)
{
	void *p = __libc_memalign(a, n);

	if (!p)
		return 12; /* ENOMEM */
	*out = counted(p);
	return 0;
}

void *aligned_alloc(size_t a, size_t n)
{
	return counted(__libc_memalign(a, n));
}

void *memalign(size_t a, size_t n)
{
	return counted(__libc_memalign(a, n));
}

void *valloc(size_t n)
{
	return counted(__libc_memalign(4096, n));
}

void *pvalloc(size_t n)
{
	return counted(__libc_memalign(4096, (n + 4095) & ~(size_t)4095));
}
#endif

static int counting(void)
{
#ifdef HOSTILE_NO_COUNT
	return 0;
#else
	return 1;
#endif
}

/* Start measuring: returns the bytes in use now. */
static long long heap_mark(void)
{
	long long c = atomic_load(&heap_cur);

	atomic_store(&heap_peak, c);
	return c;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- the base image ------------------------------------------------------- */

typedef struct {
	uint8_t *img;
	size_t len;
	wks_file_info fi;
	wks_record_pos pos[3];
	wks_entry *e[3]; /* a-private, b-secret, c-cert */
	/* field offsets */
	size_t p_salt_len, p_iter, p_iv_len, p_enc_len, p_chain, p_cert_type,
	       p_cert_len, p_mac_len;
	size_t s_alg_len, s_salt_len, s_iter, s_iv_len, s_enc_len, s_mac_len;
	size_t c_type_len, c_cert_len;
} base_img;

static base_img g;

static void build_base(void)
{
	wks_store *st = tu_store_fast();
	tu_der *ca = NULL;
	size_t nca, n = 0, b, i;
	uint8_t *out = NULL, key[16];
	wks_entry **v = NULL;
	wks_record_pos *pos = NULL;
	wks_settings cfg;

	TU_OK(tu_set_key_files(st, "a-private", "server-key.pem",
	                       "server-cert-chain2.pem", PW));
	memset(key, 0x42, sizeof(key));
	TU_OK(wks_store_set_secret_key(st, "b-secret", "AES", key, sizeof(key),
	                               PW, PW_LEN));
	nca = tu_pem_ders(&ca, tu_input("ca-cert.pem"), "CERTIFICATE");
	TU_OK(wks_store_set_cert_der(st, "c-cert", ca[0].der, ca[0].len));
	tu_ders_free(ca, nca);
	TU_OK(wks_store_save_buffer(st, &out, &g.len, PW, PW_LEN));
	g.img = malloc(g.len);
	assert_non_null(g.img);
	memcpy(g.img, out, g.len);
	wks_free(out);
	wks_store_free(st);

	wks__settings_get(&cfg, NULL);
	TU_OK(wks__decode(&v, &n, &pos, &g.fi, g.img, g.len, &cfg));
	assert_int_equal(n, 3);
	for (i = 0; i < 3; i++) {
		g.e[i] = v[i];
		g.pos[i] = pos[i];
	}
	free(v);
	free(pos);
	assert_int_equal(g.e[0]->type, WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(g.e[1]->type, WKS_ENTRY_SECRET_KEY);
	assert_int_equal(g.e[2]->type, WKS_ENTRY_CERTIFICATE);

	b = g.pos[0].body_offset;
	g.p_salt_len = b + 8;
	g.p_iter = b + 28;
	g.p_iv_len = b + 32;
	g.p_enc_len = b + 52;
	g.p_chain = b + 56 + g.e[0]->enc.len;
	g.p_cert_type = g.p_chain + 4;
	g.p_cert_len = g.p_cert_type + 7;
	g.p_mac_len = b + g.e[0]->mac_input_len;
	assert_int_equal(tu_get_be32(g.img + g.p_iter), 10000);
	assert_int_equal(tu_get_be32(g.img + g.p_chain), 2);
	assert_int_equal(tu_get_be32(g.img + g.p_mac_len), 64);
	assert_int_equal(tu_get_be32(g.img + g.p_cert_len),
	                 g.e[0]->certs[0].len);

	b = g.pos[1].body_offset;
	g.s_alg_len = b + 8;
	g.s_salt_len = b + 10 + 3;
	g.s_iter = g.s_salt_len + 20;
	g.s_iv_len = g.s_iter + 4;
	g.s_enc_len = g.s_iv_len + 20;
	g.s_mac_len = b + g.e[1]->mac_input_len;
	assert_int_equal(tu_get_be32(g.img + g.s_iter), 10000);
	assert_int_equal(tu_get_be32(g.img + g.s_enc_len), 16 + 16);

	b = g.pos[2].body_offset;
	g.c_type_len = b + 8;
	g.c_cert_len = b + 15;
	assert_int_equal(tu_get_be32(g.img + g.c_cert_len), g.e[2]->certs[0].len);
}

static int setup(void **state)
{
	(void)state;
	build_base();
	return 0;
}

static int teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++)
		wks__entry_unref(g.e[i]);
	free(g.img);
	return 0;
}

/* ---- one case --------------------------------------------------------------- */

#define ANY_CLEAN 100 /* FORMAT or LIMIT (a shifted parse) */

typedef struct {
	const char *field;
	size_t *off;    /* into g */
	int width;      /* 2 (u16) or 4 (i32) */
	int64_t value;
	int want;       /* class, WKS_OK, or ANY_CLEAN */
	const char *prop, *prop_value; /* a store property for the case */
} hcase;

static size_t g_cases, g_max_ratio_case;
static double g_max_ratio, g_max_time;

/* Load img with and without the password; check class, time, memory. */
static void check_load(const char *what, const uint8_t *img, size_t len,
                       int want, const char *prop, const char *prop_value)
{
	wks_store *st = NULL;
	long long base, peak;
	double t0, dt;
	int pass, rc;

	for (pass = 0; pass < 2; pass++) {
		TU_OK(wks_store_new(&st));
		TU_OK(wks_store_set_property(st, "libwks.kdf.threads", "1"));
		if (prop)
			TU_OK(wks_store_set_property(st, prop, prop_value));
		base = heap_mark();
		t0 = now_s();
		rc = wks_store_load_buffer(st, img, len, pass ? PW : NULL,
		                           pass ? PW_LEN : 0);
		dt = now_s() - t0;
		peak = atomic_load(&heap_peak) - base;
		if (want == ANY_CLEAN ? (rc != WKS_ERR_FORMAT && rc != WKS_ERR_LIMIT)
		                      : rc != want)
			fail_msg("%s (%s password): got %d (%s: %s), want %d", what,
			         pass ? "with" : "without", rc, wks_strerror(rc),
			         wks_error_detail(), want);
		/* No long run: a hostile iteration count must be refused before
		 * any PBKDF2 (0x7FFFFFFF iterations would take ~20 minutes). */
		if (dt > 30.0)
			fail_msg("%s: took %.1f s", what, dt);
		if (dt > g_max_time)
			g_max_time = dt;
		/* No allocation beyond the input's size: the peak heap growth
		 * during the call is bounded by 3x the input plus 256 KiB for
		 * OpenSSL's certificate parsing and the error detail. */
		if (counting() && rc != WKS_OK &&
		    peak > (long long)(3 * len) + 256 * 1024)
			fail_msg("%s: %lld bytes allocated for a %zu-byte input", what,
			         peak, len);
		if (counting() && (double)peak / (double)len > g_max_ratio) {
			g_max_ratio = (double)peak / (double)len;
			g_max_ratio_case = g_cases;
		}
		wks_store_free(st);
	}
	g_cases++;
}

static void run_case(const hcase *c)
{
	uint8_t *img = malloc(g.len);
	char what[160];
	size_t off = *c->off;

	assert_non_null(img);
	memcpy(img, g.img, g.len);
	if (c->width == 2) {
		img[off] = (uint8_t)((uint64_t)c->value >> 8);
		img[off + 1] = (uint8_t)c->value;
	} else {
		tu_put_be32(img + off, (uint32_t)(int32_t)c->value);
	}
	if (c->want == WKS_OK)
		tu_restamp(img, g.len, PW);
	snprintf(what, sizeof(what), "%s = %lld%s%s%s%s", c->field,
	         (long long)c->value, c->prop ? " with " : "",
	         c->prop ? c->prop : "", c->prop ? "=" : "",
	         c->prop ? c->prop_value : "");
	check_load(what, img, g.len, c->want, c->prop, c->prop_value);
	print_message("hostile: %-62s -> %s\n", what,
	              c->want == ANY_CLEAN ? "FORMAT/LIMIT"
	              : c->want == WKS_OK ? "loads" : wks_strerror(c->want));
	free(img);
}

/* ---- the boundary table -------------------------------------------------- */

#define F WKS_ERR_FORMAT
#define L WKS_ERR_LIMIT
#define MAXE 10485760 /* default wolfjce.wks.maxEntrySize */
#define MAXI 5000000  /* default libwks.wks.maxIterationCount */

static size_t o_count = 8;
static size_t o_body_len0, o_alias_len0, o_type0, o_body_len1;

static void test_hostile__boundaries(void **state)
{
	char bl0[16], bl0m1[16], cl[16];
	size_t i;
	hcase cases[] = {
		/* entryCount: no preallocation from it, ever. */
		{ "entryCount", &o_count, 4, 0, F, NULL, NULL },
		{ "entryCount", &o_count, 4, 1, F, NULL, NULL },
		{ "entryCount", &o_count, 4, 4, F, NULL, NULL },
		{ "entryCount", &o_count, 4, INT_MAX, F, NULL, NULL },
		{ "entryCount", &o_count, 4, -1, F, NULL, NULL },
		{ "entryCount", &o_count, 4, INT_MIN, F, NULL, NULL },
		/* typeId */
		{ "typeId", &o_type0, 4, 0, F, NULL, NULL },
		{ "typeId", &o_type0, 4, 4, F, NULL, NULL },
		{ "typeId", &o_type0, 4, INT_MAX, F, NULL, NULL },
		{ "typeId", &o_type0, 4, -1, F, NULL, NULL },
		/* alias length (u16): a shifted parse, or truncation */
		{ "aliasLen", &o_alias_len0, 2, 0, ANY_CLEAN, NULL, NULL },
		{ "aliasLen", &o_alias_len0, 2, 1, ANY_CLEAN, NULL, NULL },
		{ "aliasLen", &o_alias_len0, 2, 0xFFFF, F, NULL, NULL },
		/* bodyLen: 0 invalid, 1 too short, the limit (more than the
		 * bytes left), limit + 1, 0x7FFFFFFF, negative */
		{ "bodyLen", &o_body_len0, 4, 0, F, NULL, NULL },
		{ "bodyLen", &o_body_len0, 4, 1, ANY_CLEAN, NULL, NULL },
		{ "bodyLen", &o_body_len0, 4, MAXE, F, NULL, NULL },
		{ "bodyLen", &o_body_len0, 4, MAXE + 1, L, NULL, NULL },
		{ "bodyLen", &o_body_len0, 4, INT_MAX, L, NULL, NULL },
		{ "bodyLen", &o_body_len0, 4, -1, F, NULL, NULL },
		{ "bodyLen", &o_body_len0, 4, INT_MIN, F, NULL, NULL },
		{ "bodyLen(secret)", &o_body_len1, 4, INT_MAX, L, NULL, NULL },
		/* bodyLen at a configured maxEntrySize: equal loads, one more
		 * is refused (values filled in below) */
		{ "bodyLen", &o_body_len0, 4, 0, WKS_OK,
		  "wolfjce.wks.maxEntrySize", bl0 },
		{ "bodyLen", &o_body_len0, 4, 0, L, "wolfjce.wks.maxEntrySize",
		  bl0m1 },
		/* entry salt / IV / MAC lengths: exactly 16, 16, 64 */
		{ "saltLen(private)", &g.p_salt_len, 4, 0, F, NULL, NULL },
		{ "saltLen(private)", &g.p_salt_len, 4, 15, F, NULL, NULL },
		{ "saltLen(private)", &g.p_salt_len, 4, 17, F, NULL, NULL },
		{ "saltLen(private)", &g.p_salt_len, 4, INT_MAX, F, NULL, NULL },
		{ "saltLen(private)", &g.p_salt_len, 4, -1, F, NULL, NULL },
		{ "saltLen(secret)", &g.s_salt_len, 4, INT_MAX, F, NULL, NULL },
		{ "ivLen(private)", &g.p_iv_len, 4, 0, F, NULL, NULL },
		{ "ivLen(private)", &g.p_iv_len, 4, 15, F, NULL, NULL },
		{ "ivLen(private)", &g.p_iv_len, 4, INT_MAX, F, NULL, NULL },
		{ "ivLen(secret)", &g.s_iv_len, 4, -1, F, NULL, NULL },
		{ "macLen(private)", &g.p_mac_len, 4, 0, F, NULL, NULL },
		{ "macLen(private)", &g.p_mac_len, 4, 63, F, NULL, NULL },
		{ "macLen(private)", &g.p_mac_len, 4, 65, F, NULL, NULL },
		{ "macLen(private)", &g.p_mac_len, 4, INT_MAX, F, NULL, NULL },
		{ "macLen(secret)", &g.s_mac_len, 4, -1, F, NULL, NULL },
		/* encKeyLen */
		{ "encKeyLen(private)", &g.p_enc_len, 4, 0, ANY_CLEAN, NULL, NULL },
		{ "encKeyLen(private)", &g.p_enc_len, 4, 1, ANY_CLEAN, NULL, NULL },
		{ "encKeyLen(private)", &g.p_enc_len, 4, MAXE, F, NULL, NULL },
		{ "encKeyLen(private)", &g.p_enc_len, 4, MAXE + 1, L, NULL, NULL },
		{ "encKeyLen(private)", &g.p_enc_len, 4, INT_MAX, L, NULL, NULL },
		{ "encKeyLen(private)", &g.p_enc_len, 4, -1, F, NULL, NULL },
		{ "encKeyLen(secret)", &g.s_enc_len, 4, 0, F, NULL, NULL },
		{ "encKeyLen(secret)", &g.s_enc_len, 4, INT_MAX, L, NULL, NULL },
		{ "encKeyLen(secret)", &g.s_enc_len, 4, INT_MIN, F, NULL, NULL },
		/* chainCount: limit 100 (default), then a configured one */
		{ "chainCount", &g.p_chain, 4, 0, F, NULL, NULL },
		{ "chainCount", &g.p_chain, 4, 1, F, NULL, NULL },
		{ "chainCount", &g.p_chain, 4, 100, F, NULL, NULL },
		{ "chainCount", &g.p_chain, 4, 101, L, NULL, NULL },
		{ "chainCount", &g.p_chain, 4, 1000000, L, NULL, NULL },
		{ "chainCount", &g.p_chain, 4, INT_MAX, L, NULL, NULL },
		{ "chainCount", &g.p_chain, 4, -1, F, NULL, NULL },
		{ "chainCount", &g.p_chain, 4, INT_MIN, F, NULL, NULL },
		{ "chainCount", &g.p_chain, 4, 2, WKS_OK,
		  "wolfjce.wks.maxCertChainLength", "2" },
		{ "chainCount", &g.p_chain, 4, 2, L,
		  "wolfjce.wks.maxCertChainLength", "1" },
		/* certificate type string and length */
		{ "certTypeLen(private)", &g.p_cert_type, 2, 0, ANY_CLEAN, NULL,
		  NULL },
		{ "certTypeLen(private)", &g.p_cert_type, 2, 0xFFFF, F, NULL,
		  NULL },
		{ "certLen(private)", &g.p_cert_len, 4, 0, F, NULL, NULL },
		{ "certLen(private)", &g.p_cert_len, 4, 1, F, NULL, NULL },
		{ "certLen(private)", &g.p_cert_len, 4, MAXE, F, NULL, NULL },
		{ "certLen(private)", &g.p_cert_len, 4, MAXE + 1, L, NULL, NULL },
		{ "certLen(private)", &g.p_cert_len, 4, INT_MAX, L, NULL, NULL },
		{ "certLen(private)", &g.p_cert_len, 4, -1, F, NULL, NULL },
		{ "certLen(cert)", &g.c_cert_len, 4, 0, F, NULL, NULL },
		{ "certLen(cert)", &g.c_cert_len, 4, INT_MAX, L, NULL, NULL },
		{ "certLen(cert)", &g.c_cert_len, 4, INT_MIN, F, NULL, NULL },
		{ "certLen(cert)", &g.c_cert_len, 4, 0, L,
		  "wolfjce.wks.maxEntrySize", cl },
		/* algorithm name length (u16) */
		{ "algorithmLen", &g.s_alg_len, 2, 0, ANY_CLEAN, NULL, NULL },
		{ "algorithmLen", &g.s_alg_len, 2, 0xFFFF, F, NULL, NULL },
		/* entry iterations: minimum 10000, maximum maxIterationCount */
		{ "iterations(private)", &g.p_iter, 4, 0, L, NULL, NULL },
		{ "iterations(private)", &g.p_iter, 4, 1, L, NULL, NULL },
		{ "iterations(private)", &g.p_iter, 4, 9999, L, NULL, NULL },
		{ "iterations(private)", &g.p_iter, 4, MAXI + 1, L, NULL, NULL },
		{ "iterations(private)", &g.p_iter, 4, INT_MAX, L, NULL, NULL },
		{ "iterations(private)", &g.p_iter, 4, -1, L, NULL, NULL },
		{ "iterations(private)", &g.p_iter, 4, INT_MIN, L, NULL, NULL },
		{ "iterations(secret)", &g.s_iter, 4, 20000, WKS_OK,
		  "libwks.wks.maxIterationCount", "20000" },
		{ "iterations(secret)", &g.s_iter, 4, 20001, L,
		  "libwks.wks.maxIterationCount", "20000" },
		{ "iterations(secret)", &g.s_iter, 4, INT_MAX, L, NULL, NULL },
		/* the trailer */
		{ "storeSaltLen", &g.fi.trailer_offset, 4, 0, F, NULL, NULL },
		{ "storeSaltLen", &g.fi.trailer_offset, 4, 17, F, NULL, NULL },
		{ "storeSaltLen", &g.fi.trailer_offset, 4, INT_MAX, F, NULL, NULL },
		{ "storeSaltLen", &g.fi.trailer_offset, 4, -1, F, NULL, NULL },
	};

	(void)state;
	o_type0 = g.pos[0].offset;
	o_alias_len0 = g.pos[0].offset + 4;
	o_body_len0 = g.pos[0].body_offset - 4;
	o_body_len1 = g.pos[1].body_offset - 4;
	snprintf(bl0, sizeof(bl0), "%zu", g.e[0]->body_len);
	snprintf(bl0m1, sizeof(bl0m1), "%zu", g.e[0]->body_len - 1);
	snprintf(cl, sizeof(cl), "%zu", g.e[2]->certs[0].len - 1);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hcase c = cases[i];

		/* The configured-limit cases keep the real length. */
		if (c.off == &o_body_len0 && c.prop)
			c.value = (int64_t)g.e[0]->body_len;
		if (c.off == &g.c_cert_len && c.prop)
			c.value = (int64_t)g.e[2]->certs[0].len;
		run_case(&c);
	}
	/* The unpatched image loads. */
	check_load("base image", g.img, g.len, WKS_OK, NULL, NULL);
}

/* Store iteration counts, including the maximum, with the password:
 * refused before any PBKDF2, or accepted at the configured limit. */
static void test_hostile__store_iterations(void **state)
{
	static const struct {
		int64_t v;
		int want;
		const char *max;
	} it[] = {
		{ 0, L, NULL }, { 1, L, NULL }, { 9999, L, NULL },
		{ 10000, WKS_OK, NULL }, { MAXI, L, "4999999" },
		{ MAXI + 1, L, NULL }, { INT_MAX, L, NULL }, { -1, L, NULL },
		{ INT_MIN, L, NULL }, { 20000, WKS_OK, "20000" },
		{ 20001, L, "20000" },
	};
	size_t off = g.fi.trailer_offset + 20, i;
	uint8_t *img = malloc(g.len);
	char what[96];

	(void)state;
	assert_non_null(img);
	for (i = 0; i < sizeof(it) / sizeof(it[0]); i++) {
		memcpy(img, g.img, g.len);
		tu_put_be32(img + off, (uint32_t)(int32_t)it[i].v);
		if (it[i].want == WKS_OK)
			tu_restamp(img, g.len, PW);
		snprintf(what, sizeof(what), "storeIterations = %lld%s%s",
		         (long long)it[i].v,
		         it[i].max ? " with maxIterationCount=" : "",
		         it[i].max ? it[i].max : "");
		check_load(what, img, g.len, it[i].want,
		           it[i].max ? "libwks.wks.maxIterationCount" : NULL,
		           it[i].max);
		print_message("hostile: %-62s -> %s\n", what,
		              it[i].want == WKS_OK ? "loads"
		                                   : wks_strerror(it[i].want));
	}
	free(img);
}

/* get_key re-checks the entry's count against the limit in force: an
 * entry accepted at load is refused after the limit is lowered, before
 * any PBKDF2. */
static void test_hostile__get_key_iteration_limit(void **state)
{
	uint8_t *img = malloc(g.len);
	wks_store *st = NULL;
	wks_key *k = NULL;
	double t0;

	(void)state;
	assert_non_null(img);
	memcpy(img, g.img, g.len);
	tu_put_be32(img + g.s_iter, 4000000); /* MAC fails, if ever tried */
	TU_OK(wks_store_new(&st));
	TU_OK(wks_store_load_buffer(st, img, g.len, NULL, 0));
	TU_OK(wks_store_set_property(st, "libwks.wks.maxIterationCount",
	                             "3999999"));
	t0 = now_s();
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_get_key(&k, st, "b-secret", PW,
	                                           PW_LEN));
	assert_true(now_s() - t0 < 1.0);
	assert_null(k);
	wks_store_free(st);
	free(img);
}

/* An alias of the largest encodable length (65535 bytes) loads. */
static void test_hostile__longest_alias(void **state)
{
	wks_buf b = WKS_BUF_INIT;
	uint8_t salt[16] = { 0 };
	char *alias = malloc(65536);
	wks_entry *e = NULL;
	wks_settings cfg;

	(void)state;
	assert_non_null(alias);
	memset(alias, 'x', 65535);
	alias[65535] = '\0';
	wks__settings_get(&cfg, NULL);
	TU_OK(wks__entry_from_body(&e, WKS_ENTRY_CERTIFICATE, alias, 65535,
	                           g.e[2]->body, g.e[2]->body_len, &cfg, "t"));
	TU_OK(wks__encode(&b, &e, 1, salt, 10000));
	wks_buf_put_i32be(&b, 64);
	wks_buf_put(&b, salt, 16);
	wks_buf_put(&b, salt, 16);
	wks_buf_put(&b, salt, 16);
	wks_buf_put(&b, salt, 16);
	tu_restamp(b.ptr, b.len, PW);
	check_load("alias of 65535 bytes", b.ptr, b.len, WKS_OK, NULL, NULL);
	/* One byte more could not be saved: the setters refuse it when it
	 * is given (WKS_ERR_LIMIT), not the save later (issue 22 item 12);
	 * counted in modified UTF-8, where a 4-byte character takes 6. */
	{
		wks_store *st = tu_store_fast();
		const uint8_t *der = g.img + g.pos[2].body_offset + 19;
		const size_t der_len = g.e[2]->certs[0].len;
		char *a2 = malloc(65537);
		uint8_t *out = NULL;
		size_t ol = 0, i;

		assert_non_null(a2);
		memset(a2, 'y', 65536);
		a2[65536] = '\0';
		TU_EXPECT(WKS_ERR_LIMIT, wks_store_set_cert_der(st, a2, der,
		                                                der_len));
		assert_non_null(strstr(wks_error_detail(), "65535"));
		TU_EXPECT(WKS_ERR_LIMIT, wks_store_set_secret_key(st, a2, "AES",
		                         salt, 16, PW, PW_LEN));
		a2[65535] = '\0'; /* the longest: taken, and saved */
		TU_OK(wks_store_set_cert_der(st, a2, der, der_len));
		TU_OK(wks_store_rename(st, a2, "z"));
		/* 10922 x U+1F600 (4 bytes here, 6 in the file) + "abc":
		 * 43691 bytes, 65535 in the file; one more 'd' is too long. */
		for (i = 0; i < 10922; i++)
			memcpy(a2 + 4 * i, "\xF0\x9F\x98\x80", 4);
		memcpy(a2 + 4 * i, "abcd", 5);
		TU_EXPECT(WKS_ERR_LIMIT, wks_store_rename(st, "z", a2));
		a2[4 * i + 3] = '\0';
		TU_OK(wks_store_rename(st, "z", a2));
		TU_OK(wks_store_save_buffer(st, &out, &ol, PW, PW_LEN));
		wks_free(out);
		free(a2);
		wks_store_free(st);
	}
	wks__entry_unref(e);
	wks_buf_dispose(&b);
	free(alias);
}

/* ---- 100,000 entries ---------------------------------------------------------- */

/* A file of n secret key entries built directly with the body builder
 * (10000 iterations, random-looking bytes; no valid MAC needed: loaded
 * without a password).  same_alias: every record has the alias "dup". */
static void build_many(wks_buf *out, size_t n, int same_alias)
{
	uint8_t salt[16], iv[16], enc[32], mac[64];
	wks_buf body = WKS_BUF_INIT;
	char alias[16];
	size_t i;

	memset(mac, 0x5A, sizeof(mac));
	wks_buf_put_i32be(out, WKS_MAGIC);
	wks_buf_put_i32be(out, WKS_FORMAT_VERSION);
	wks_buf_put_i32be(out, (int32_t)n);
	for (i = 0; i < n; i++) {
		memset(salt, (int)i, sizeof(salt));
		memset(iv, (int)(i >> 8), sizeof(iv));
		memset(enc, (int)(i >> 16), sizeof(enc));
		body.len = 0;
		TU_OK(wks__body_secret(&body, 1700000000000 + (int64_t)i, "AES",
		                       salt, 10000, iv, enc, sizeof(enc)));
		wks_buf_put_i32be(&body, 64);
		wks_buf_put(&body, mac, sizeof(mac));
		snprintf(alias, sizeof(alias), same_alias ? "dup" : "e%06zu",
		         n - i); /* reverse order: the sort has work */
		wks_buf_put_i32be(out, WKS_ENTRY_SECRET_KEY);
		wks_buf_put_u16be(out, (uint16_t)strlen(alias));
		wks_buf_put(out, alias, strlen(alias));
		wks_buf_put_i32be(out, (int32_t)body.len);
		wks_buf_put(out, body.ptr, body.len);
	}
	wks_buf_put_i32be(out, 16);
	wks_buf_put(out, salt, 16);
	wks_buf_put_i32be(out, 10000);
	wks_buf_put_i32be(out, 64);
	wks_buf_put(out, mac, 64);
	assert_int_equal(out->err, 0);
	wks_buf_dispose(&body);
}

static void many(size_t n, int same_alias)
{
	wks_buf b = WKS_BUF_INIT;
	wks_store *st = NULL;
	long long base, peak;
	double t0, dt;
	char **aliases = NULL;
	size_t count = 0;

	build_many(&b, n, same_alias);
	TU_OK(wks_store_new(&st));
	base = heap_mark();
	t0 = now_s();
	TU_OK(wks_store_load_buffer(st, b.ptr, b.len, NULL, 0));
	dt = now_s() - t0;
	peak = atomic_load(&heap_peak) - base;
	assert_int_equal(wks_store_size(st), same_alias ? 1 : n);
	TU_OK(wks_store_aliases(&aliases, &count, st));
	assert_int_equal(count, same_alias ? 1 : n);
	if (!same_alias) {
		assert_string_equal(aliases[0], "e000001");
		assert_int_equal(wks_store_entry_type(st, "e100000"),
		                 WKS_ENTRY_SECRET_KEY);
	}
	wks_aliases_free(aliases);
	print_message("hostile: %zu entries%s, %zu-byte file: loaded without "
	              "password in %.2f s, peak heap growth %s%lld bytes "
	              "(%.1fx the file)\n", n,
	              same_alias ? " (all named \"dup\")" : "", b.len, dt,
	              counting() ? "" : "(not measured) ", peak,
	              (double)peak / (double)b.len);
	/* Bounded: linear memory (entry objects and a body copy: at most 6x
	 * the file) and time (generous for valgrind and sanitizers). */
	if (counting() && peak > (long long)(6 * b.len))
		fail_msg("%zu entries: %lld bytes of heap for a %zu-byte file", n,
		         peak, b.len);
	assert_true(dt < 120.0);
	/* Freeing is bounded too. */
	t0 = now_s();
	wks_store_free(st);
	assert_true(now_s() - t0 < 60.0);
	wks_buf_dispose(&b);
}

static void test_hostile__100000_entries(void **state)
{
	(void)state;
	many(100000, 0);
}

static void test_hostile__100000_duplicates(void **state)
{
	(void)state;
	many(100000, 1);
}

static void test_hostile__summary(void **state)
{
	(void)state;
	print_message("hostile: %zu boundary loads, slowest %.3f s, largest "
	              "heap growth %s%.2fx the input (case %zu)\n", g_cases,
	              g_max_time, counting() ? "" : "(not measured) ",
	              g_max_ratio, g_max_ratio_case);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile__boundaries),
		cmocka_unit_test(test_hostile__store_iterations),
		cmocka_unit_test(test_hostile__get_key_iteration_limit),
		cmocka_unit_test(test_hostile__longest_alias),
		cmocka_unit_test(test_hostile__100000_entries),
		cmocka_unit_test(test_hostile__100000_duplicates),
		cmocka_unit_test(test_hostile__summary),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
