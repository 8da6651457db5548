/* util/wipe.h's functions, on the backend's cleanse (crypto.h): here in
 * crypto/, which util/ may not include. */
#include "util/wipe.h"

#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"

void wks_wipe(void *p, size_t n)
{
	if (p && n)
		wks__cleanse(p, n);
}

void wks_wipe_free(void *p, size_t n)
{
	if (!p)
		return;
	wks_wipe(p, n);
	free(p);
}

void wks_wipe_str(char *s)
{
	if (s)
		wks_wipe_free(s, strlen(s));
}
