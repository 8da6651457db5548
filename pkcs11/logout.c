/*
 * wks-pkcs11-logout: end a token's login from the shell (docs/PKCS11.md,
 * "Shared login").  pkcs11-tool and p11tool never call C_Logout, so
 * without this a shared login lasts its whole TTL.
 *
 *     wks-pkcs11-logout [--module PATH] [--token LABEL]...
 *
 * It loads the module (by default libwks-pkcs11.so where `cmake
 * --install` put it beside this program), opens a session on every token
 * (or on those with the labels given) and calls C_Logout: the module's
 * own logout, which removes the token's shared login from the user's
 * kernel keyring whether or not this process took it over, so that no
 * process takes it over until the next C_Login with the PIN.  The module
 * reads its configuration as in every program ($WKS_PKCS11_CONF, else
 * its default file).  Any PKCS#11 module can be named; through
 * p11-kit-client.so it ends the login of a `p11-kit server`.
 *
 * Prints "LABEL: logged out" or "LABEL: not logged in" per token.  Exit
 * status: 0 when every token was logged out or was not logged in, 1 when
 * a label matched no token or a call failed, 2 for a usage error.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pkcs11v3.h"

#define PROG "wks-pkcs11-logout"

/* The installed module, relative to this program's folder (see
 * CMakeLists.txt), or an absolute path. */
#ifndef WKS_LOGOUT_MODULE
#define WKS_LOGOUT_MODULE "../lib/pkcs11/libwks-pkcs11.so"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--module PATH] [--token LABEL]...\n"
		"Ends the login of every token of a PKCS#11 module (or of the "
		"tokens named),\n"
		"the shared login of libwks-pkcs11.so included: C_Logout on "
		"each.\n"
		"  --module PATH   the module (default: the installed "
		"libwks-pkcs11.so)\n"
		"  --token LABEL   only the token with this label (repeatable)\n");
}

static int default_module(char *out, size_t cap)
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (WKS_LOGOUT_MODULE[0] == '/')
		return snprintf(out, cap, "%s", WKS_LOGOUT_MODULE) < (int)cap
		       ? 0 : -1;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	if (!(slash = strrchr(self, '/')))
		return -1;
	*slash = '\0';
	return snprintf(out, cap, "%s/%s", self, WKS_LOGOUT_MODULE) < (int)cap
	       ? 0 : -1;
}

/* CK_TOKEN_INFO's label without its padding. */
static void label_of(char out[33], const CK_UTF8CHAR in[32])
{
	size_t n = 32;

	memcpy(out, in, 32);
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

int main(int argc, char **argv)
{
	const char *module = NULL, **want = NULL;
	char path[PATH_MAX + 64], label[33];
	int nwant = 0, *seen = NULL, rc = 1, init = 0;
	CK_C_GetFunctionList gfl;
	CK_FUNCTION_LIST *f = NULL;
	CK_SLOT_ID *slots = NULL;
	CK_ULONG n = 0;
	CK_RV rv;
	void *lib;

	if (!(want = calloc((size_t)argc, sizeof(*want))) ||
	    !(seen = calloc((size_t)argc, sizeof(*seen)))) {
		fprintf(stderr, PROG ": out of memory\n");
		goto done;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--module") == 0 && i + 1 < argc) {
			module = argv[++i];
		} else if (strcmp(argv[i], "--token") == 0 && i + 1 < argc) {
			want[nwant++] = argv[++i];
		} else if (strcmp(argv[i], "--help") == 0 ||
			   strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			rc = 0;
			goto done;
		} else {
			usage(stderr);
			rc = 2;
			goto done;
		}
	}
	if (!module) {
		if (default_module(path, sizeof(path)) != 0) {
			fprintf(stderr, PROG ": cannot find the installed "
				"module; name it with --module\n");
			goto done;
		}
		module = path;
	}
	if (!(lib = dlopen(module, RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, PROG ": %s\n", dlerror());
		goto done;
	}
	gfl = (CK_C_GetFunctionList)(uintptr_t)dlsym(lib, "C_GetFunctionList");
	if (!gfl || gfl(&f) != CKR_OK) {
		fprintf(stderr, PROG ": %s: not a PKCS#11 module\n", module);
		goto done;
	}
	if ((rv = f->C_Initialize(NULL)) != CKR_OK) {
		fprintf(stderr, PROG ": C_Initialize: 0x%lx\n",
			(unsigned long)rv);
		goto done;
	}
	init = 1;
	if ((rv = f->C_GetSlotList(CK_TRUE, NULL, &n)) != CKR_OK ||
	    (n && !(slots = calloc(n, sizeof(*slots)))) ||
	    (n && (rv = f->C_GetSlotList(CK_TRUE, slots, &n)) != CKR_OK)) {
		fprintf(stderr, PROG ": C_GetSlotList: 0x%lx\n",
			(unsigned long)rv);
		goto done;
	}
	rc = 0;
	for (CK_ULONG i = 0; i < n; i++) {
		CK_TOKEN_INFO ti;
		CK_SESSION_HANDLE s;
		int match = nwant == 0;

		if (f->C_GetTokenInfo(slots[i], &ti) != CKR_OK)
			continue;
		label_of(label, ti.label);
		for (int j = 0; j < nwant; j++)
			if (strcmp(want[j], label) == 0)
				match = seen[j] = 1;
		if (!match)
			continue;
		/* A read-only session: the module takes a shared login over
		 * here, if there is one to take. */
		if ((rv = f->C_OpenSession(slots[i], CKF_SERIAL_SESSION, NULL,
					   NULL, &s)) != CKR_OK) {
			fprintf(stderr, PROG ": %s: C_OpenSession: 0x%lx\n",
				label, (unsigned long)rv);
			rc = 1;
			continue;
		}
		rv = f->C_Logout(s);
		if (rv == CKR_OK) {
			printf("%s: logged out\n", label);
		} else if (rv == CKR_USER_NOT_LOGGED_IN) {
			printf("%s: not logged in\n", label);
		} else {
			fprintf(stderr, PROG ": %s: C_Logout: 0x%lx\n", label,
				(unsigned long)rv);
			rc = 1;
		}
		(void)f->C_CloseSession(s);
	}
	for (int j = 0; j < nwant; j++)
		if (!seen[j]) {
			fprintf(stderr, PROG ": no token labelled \"%s\"\n",
				want[j]);
			rc = 1;
		}
done:
	if (init)
		(void)f->C_Finalize(NULL);
	free(slots);
	free(want);
	free(seen);
	return rc;
}
