/*
 * Shared by the fuzz targets of the provider's own parsers, fuzz_uri.c
 * (wks: URIs, provider/uri.c) and fuzz_ref.c (key references,
 * provider/ref.c): the entry points, the check that aborts, and the
 * oracles on a parsed password source.  (fuzz_common.h is the library
 * targets' counterpart; these two link only the provider's parsers.)
 */
#ifndef WKS_FUZZ_PWSRC_H
#define WKS_FUZZ_PWSRC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uri.h"

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
 * range; pass: only where `pass_ok`. */
static inline void fuzz_check_src(const wksp_pwsrc *s, size_t size,
				  int pass_ok)
{
	switch (s->kind) {
	case WKSP_PW_NONE:
		PW_CHECK(!s->value, "no source but a value");
		break;
	case WKSP_PW_PASS:
		PW_CHECK(pass_ok, "source kind (pass: accepted?)");
		/* fall through */
	case WKSP_PW_ENV:
	case WKSP_PW_FILE:
		PW_CHECK(s->value && s->value_len > 0 && s->value_len < size &&
			 strlen(s->value) == s->value_len, "source value");
		break;
	case WKSP_PW_FD:
		PW_CHECK(s->fd >= 0 && s->fd <= 1000000, "fd range");
		break;
	default:
		PW_CHECK(0, "source kind");
	}
}

/* The same source (kind and value, or fd). */
static inline int fuzz_same_src(const wksp_pwsrc *a, const wksp_pwsrc *b)
{
	if (a->kind != b->kind)
		return 0;
	if (a->kind == WKSP_PW_FD)
		return a->fd == b->fd;
	if (a->kind == WKSP_PW_NONE)
		return 1;
	return a->value_len == b->value_len &&
	       !memcmp(a->value, b->value, a->value_len);
}

#endif
