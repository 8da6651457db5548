/*
 * Shared by the fuzz targets that link no libwks (the PKCS#11 module's
 * configuration parser, shared-login record and attribute record, and
 * the password-source parser's helper): the entry point names (as in
 * fuzz_common.h, renamed by the replay builds) and the check that aborts
 * naming its condition, which libFuzzer and the replay driver report as
 * a crash.
 */
#ifndef WKS_FUZZ_PLAIN_H
#define WKS_FUZZ_PLAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif
#ifndef FUZZ_INIT
#define FUZZ_INIT LLVMFuzzerInitialize
#endif

/* Abort, naming the condition and `what`. */
#define CHECK(cond, what) do { \
	if (!(cond)) { \
		fprintf(stderr, "FUZZ_CHECK failed: %s (%s:%d): %s\n", #cond, \
		        __FILE__, __LINE__, (what)); \
		abort(); \
	} \
} while (0)

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

/* A target with nothing to set up defines its FUZZ_INIT with this. */
#define FUZZ_PLAIN_INIT() \
	int FUZZ_INIT(int *argc, char ***argv) \
	{ \
		(void)argc; \
		(void)argv; \
		return 0; \
	}

#endif
