/* The known properties: names, defaults, and how a text value becomes the
 * value in force (spec section 8 for the wolfjce.* ones, the table in
 * wks.h for the libwks.* ones).  Pure functions, no state.
 *
 * Every value, wolfjce.* and libwks.* alike, is trimmed first, as wolfJCE
 * sees it: Java's Security.getProperty() returns String.trim() of the
 * value, so " 20000", "20000 " and "\t20000\r\n" all mean 20000 there
 * (spec section 8).  One rule for every property, so that one properties
 * file means the same to wolfJCE and to libwks. */
#include "config/config.h"

#include <stdio.h>
#include <string.h>

const wks_prop_desc wks__prop_descs[WKS_PROP_COUNT] = {
	[WKS_P_ITERATIONS] = { "wolfjce.wks.iterationCount", WKS_PK_INT,
		WKS_DEFAULT_ITERATIONS, WKS_MIN_ITERATIONS, INT32_MAX },
	[WKS_P_MAX_CHAIN] = { "wolfjce.wks.maxCertChainLength", WKS_PK_INT,
		WKS_DEFAULT_MAX_CHAIN, 1, INT32_MAX },
	[WKS_P_MAX_ENTRY] = { "wolfjce.wks.maxEntrySize", WKS_PK_INT,
		WKS_DEFAULT_MAX_ENTRY_SIZE, 1, INT32_MAX },
	[WKS_P_CACHE_ENABLED] = { "wolfjce.keystore.kekCacheEnabled",
		WKS_PK_BOOL, 0, 0, 1 },
	[WKS_P_CACHE_TTL] = { "wolfjce.keystore.kekCacheTtlSec",
		WKS_PK_LONG, WKS_DEFAULT_CACHE_TTL_SEC, 1, INT64_MAX },
	[WKS_P_MAX_ITERATIONS] = { "libwks.wks.maxIterationCount", WKS_PK_INT,
		WKS_DEFAULT_MAX_ITERATIONS, WKS_MIN_ITERATIONS, INT32_MAX },
	[WKS_P_REQUIRE_INTEGRITY] = { "libwks.wks.requireIntegrity",
		WKS_PK_BOOL, 0, 0, 1 },
	[WKS_P_CACHE_MAX] = { "libwks.keystore.kekCacheMaxEntries", WKS_PK_INT,
		WKS_DEFAULT_CACHE_MAX, 1, INT32_MAX },
	[WKS_P_CACHE_IDLE] = { "libwks.keystore.kekCacheIdleSec",
		WKS_PK_LONG, 0, 0, INT64_MAX },
	[WKS_P_KDF_IMPL] = { "libwks.kdf.impl", WKS_PK_KDF_IMPL,
		WKS_KDF_NATIVE, 0, 1 },
	[WKS_P_KDF_THREADS] = { "libwks.kdf.threads", WKS_PK_INT,
		0, 0, WKS_MAX_KDF_THREADS },
	[WKS_P_MAX_FILE] = { "libwks.wks.maxFileSize", WKS_PK_LONG,
		WKS_DEFAULT_MAX_FILE_SIZE, 1, INT64_MAX },
	[WKS_P_MAX_KDF_ITER] = { "libwks.convert.maxKdfIterations", WKS_PK_LONG,
		WKS_DEFAULT_MAX_KDF_ITERATIONS, 1, INT64_MAX },
};

int wks__prop_find(const char *name)
{
	int i;

	for (i = 0; i < WKS_PROP_COUNT; i++)
		if (strcmp(name, wks__prop_descs[i].name) == 0)
			return i;
	return -1;
}

/*
 * Java's Integer.parseInt / Long.parseLong in radix 10 over the whole
 * string: an optional '+' or '-', then one or more ASCII digits, within
 * [lo, hi].  (Java also takes other Unicode decimal digits; such values
 * are refused here, which falls back to the default with a warning.)
 * Returns 1 and *out, or 0 if unparsable.
 */
static int parse_java_integer(const char *s, size_t n, int64_t lo, int64_t hi,
                              int64_t *out)
{
	uint64_t acc = 0, limit;
	size_t i = 0;
	int neg = 0, d;

	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i >= n)
		return 0;
	/* The magnitude bound: -lo = (uint64_t)-(lo + 1) + 1 avoids
	 * overflowing int64 for INT64_MIN. */
	limit = neg ? (uint64_t)-(lo + 1) + 1 : (uint64_t)hi;
	if (neg && lo >= 0)
		limit = 0;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		d = s[i] - '0';
		if (acc > (limit - (uint64_t)d) / 10 || (uint64_t)d > limit)
			return 0;
		acc = acc * 10 + (uint64_t)d;
	}
	if (neg)
		*out = acc == 0 ? 0 : -(int64_t)(acc - 1) - 1;
	else
		*out = (int64_t)acc;
	return 1;
}

void wks__prop_trim(const char *s, size_t len, size_t *start, size_t *out_len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t a = 0, b = len;

	for (;;) {
		if (a < b && u[a] <= 0x20)
			a++;
		else if (b - a >= 2 && u[a] == 0xC0 && u[a + 1] == 0x80)
			a += 2;
		else
			break;
	}
	for (;;) {
		if (b > a && u[b - 1] <= 0x20)
			b--;
		else if (b - a >= 2 && u[b - 2] == 0xC0 && u[b - 1] == 0x80)
			b -= 2;
		else
			break;
	}
	*start = a;
	*out_len = b - a;
}

/* s[0..n) equals the lowercase ASCII word w, in any case. */
static int eq_nocase_n(const char *s, size_t n, const char *w)
{
	size_t i;

	for (i = 0; i < n && w[i]; i++) {
		char x = s[i];

		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (x != w[i])
			return 0;
	}
	return i == n && !w[i];
}

int64_t wks__prop_eval(int id, const char *v, char *why, size_t why_len)
{
	const wks_prop_desc *d = &wks__prop_descs[id];
	const char *s;
	size_t n, at;
	int64_t x;

	if (why_len)
		why[0] = '\0';
	if (!v)
		return d->def;
	wks__prop_trim(v, strlen(v), &at, &n);
	s = v + at;
	if (n == 0)
		return d->def; /* unset, empty or blank: the default, silently */
	switch (d->kind) {
	case WKS_PK_BOOL:
		/* Boolean: "true" in any case; anything else is false.  Only
		 * values that are not "false" either warn. */
		if (eq_nocase_n(s, n, "true"))
			return 1;
		if (!eq_nocase_n(s, n, "false"))
			snprintf(why, why_len, "is not \"true\" or \"false\"");
		return 0;
	case WKS_PK_KDF_IMPL:
		if (eq_nocase_n(s, n, "native"))
			return WKS_KDF_NATIVE;
		if (eq_nocase_n(s, n, "openssl"))
			return WKS_KDF_OPENSSL;
#ifdef WKS_CRYPTO_WOLFCRYPT
		/* The backend's PBKDF2 (wc_PBKDF2); "openssl" above stays
		 * accepted for it, so that one properties file serves both
		 * builds. */
		if (eq_nocase_n(s, n, "wolfcrypt"))
			return WKS_KDF_OPENSSL;
		snprintf(why, why_len,
		         "is not \"native\", \"wolfcrypt\" or \"openssl\"");
#else
		snprintf(why, why_len, "is not \"native\" or \"openssl\"");
#endif
		return d->def;
	case WKS_PK_LONG:
		if (!parse_java_integer(s, n, INT64_MIN, INT64_MAX, &x)) {
			snprintf(why, why_len, "is not an integer");
			return d->def;
		}
		break;
	case WKS_PK_INT:
	default:
		if (!parse_java_integer(s, n, INT32_MIN, INT32_MAX, &x)) {
			snprintf(why, why_len, "is not a 32-bit integer");
			return d->def;
		}
		break;
	}
	if (x < d->min || x > d->max) {
		if (d->max != INT32_MAX && d->max != INT64_MAX)
			snprintf(why, why_len, "is not in %lld..%lld",
			         (long long)d->min, (long long)d->max);
		else if (d->min == 1)
			snprintf(why, why_len, "is not positive");
		else if (d->min == 0)
			snprintf(why, why_len, "is negative");
		else
			snprintf(why, why_len, "is below %lld", (long long)d->min);
		return d->def;
	}
	return x;
}

void wks__prop_format(char *buf, size_t buf_len, int id, int64_t v)
{
	const wks_prop_desc *d = &wks__prop_descs[id];

	if (!buf_len)
		return;
	switch (d->kind) {
	case WKS_PK_BOOL:
		snprintf(buf, buf_len, "%s", v ? "true" : "false");
		break;
	case WKS_PK_KDF_IMPL:
		snprintf(buf, buf_len, "%s",
		         v == WKS_KDF_OPENSSL ? WKS_KDF_BACKEND_NAME : "native");
		break;
	default:
		snprintf(buf, buf_len, "%lld", (long long)v);
		break;
	}
}

static uint64_t sec_to_ms(int64_t sec)
{
	if (sec <= 0)
		return 0;
	if ((uint64_t)sec > UINT64_MAX / 1000)
		return UINT64_MAX; /* saturate, never wrap */
	return (uint64_t)sec * 1000;
}

void wks__settings_from_values(wks_settings *s, const int64_t v[WKS_PROP_COUNT])
{
	memset(s, 0, sizeof(*s));
	s->iteration_count = (int32_t)v[WKS_P_ITERATIONS];
	s->max_chain = (int32_t)v[WKS_P_MAX_CHAIN];
	s->max_entry_size = (int32_t)v[WKS_P_MAX_ENTRY];
	s->max_iterations = (int32_t)v[WKS_P_MAX_ITERATIONS];
	s->max_file_size = (uint64_t)v[WKS_P_MAX_FILE];
	s->max_kdf_iterations = (uint64_t)v[WKS_P_MAX_KDF_ITER];
	s->require_integrity = v[WKS_P_REQUIRE_INTEGRITY] != 0;
	s->cache_enabled = v[WKS_P_CACHE_ENABLED] != 0;
	s->cache_ttl_ms = sec_to_ms(v[WKS_P_CACHE_TTL]);
	s->cache_idle_ms = sec_to_ms(v[WKS_P_CACHE_IDLE]);
	s->cache_max_entries = (size_t)v[WKS_P_CACHE_MAX];
	s->kdf_impl = v[WKS_P_KDF_IMPL] == WKS_KDF_OPENSSL ? WKS_KDF_OPENSSL
	                                                  : WKS_KDF_NATIVE;
	s->kdf_threads = (int)v[WKS_P_KDF_THREADS];
}
