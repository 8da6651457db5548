/*
 * Shared by the fuzz targets of wks/uri.h, fuzz_uri.c (wks: URIs,
 * src/uri/uri.c) and fuzz_ref.c (key references, src/uri/ref.c and
 * refwrite.c): the entry points, the check that aborts, and the oracles
 * on a parsed password source.  (fuzz_common.h is the other library
 * targets' counterpart; these two use the public API only.)
 */
#ifndef WKS_FUZZ_PWSRC_H
#define WKS_FUZZ_PWSRC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wks/uri.h>

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif
#ifndef FUZZ_INIT
#define FUZZ_INIT LLVMFuzzerInitialize
#endif

/* Abort, naming the condition and `what`: a crash to libFuzzer and to the
 * replay driver. */
#define PW_CHECK(cond, what) do { \
	if (!(cond)) { \
		fprintf(stderr, "FUZZ_CHECK failed: %s (%s:%d): %s\n", #cond, \
		        __FILE__, __LINE__, (what)); \
		abort(); \
	} \
} while (0)

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

int FUZZ_INIT(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* A source parsed from `size` bytes of input is well formed: no value
 * without a kind, a non-empty value shorter than the input, an fd in
 * range; pass: only where `pass_ok`.  NULL is "no source". */
static inline void fuzz_check_src(const wks_pwsrc *s, size_t size,
				  int pass_ok)
{
	size_t len = 0;
	const char *v = wks_pwsrc_value(s, &len);

	switch (wks_pwsrc_kind(s)) {
	case WKS_PW_NONE:
		PW_CHECK(!s && !v, "no source but a value");
		break;
	case WKS_PW_PASS:
		PW_CHECK(pass_ok, "source kind (pass: accepted?)");
		/* fall through */
	case WKS_PW_ENV:
	case WKS_PW_FILE:
		PW_CHECK(v && len > 0 && len < size && strlen(v) == len &&
			 wks_pwsrc_fd(s) == -1, "source value");
		break;
	case WKS_PW_FD:
		PW_CHECK(!v && wks_pwsrc_fd(s) >= 0 &&
			 wks_pwsrc_fd(s) <= WKS_PW_FD_MAX, "fd range");
		break;
	default:
		PW_CHECK(0, "source kind");
	}
}

/* The same source (kind and value, or fd; NULL is none). */
static inline int fuzz_same_src(const wks_pwsrc *a, const wks_pwsrc *b)
{
	size_t la = 0, lb = 0;
	const char *va = wks_pwsrc_value(a, &la), *vb = wks_pwsrc_value(b, &lb);

	if (wks_pwsrc_kind(a) != wks_pwsrc_kind(b))
		return 0;
	if (wks_pwsrc_kind(a) == WKS_PW_FD)
		return wks_pwsrc_fd(a) == wks_pwsrc_fd(b);
	if (wks_pwsrc_kind(a) == WKS_PW_NONE)
		return 1;
	return la == lb && !memcmp(va, vb, la);
}

/* The detail of the last failure: never empty. */
static inline void fuzz_check_detail(void)
{
	PW_CHECK(wks_error_detail()[0] != 0, "no message");
}

#endif
