/*
 * LD_PRELOAD helper of tests/cli/defects.sh (item 9c): every free() looks
 * for the text of $WKS_FREE_MARKER in the block being freed and ends the
 * process with status 99 ("freed unwiped") if it is there.  The marker is
 * a piece of a private key's PEM text: a buffer that held the key and is
 * freed without being wiped is caught at the moment it is freed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void (*real_free)(void *);

void free(void *p)
{
	static const char *marker;
	static size_t mlen;

	if (!real_free)
		real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	if (p) {
		if (!marker) {
			const char *m = getenv("WKS_FREE_MARKER");

			marker = m ? m : "";
			mlen = strlen(marker);
		}
		if (mlen && memmem(p, malloc_usable_size(p), marker, mlen)) {
			(void)!write(2, "wks: freed unwiped\n", 19);
			_exit(99);
		}
	}
	real_free(p);
}
