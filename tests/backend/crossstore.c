/*
 * wks-crossstore: the stores of one backend read by the other (issue 31,
 * tests/backend/cross.sh).  Built in every build on the public API only.
 *
 *   wks-crossstore write FILE PKI_DIR   a store with a secret key, RSA,
 *                                       RSASSA-PSS, P-384 and Ed448 keys
 *                                       with their chains (PKI_DIR is
 *                                       tests/data/pki) and a trusted
 *                                       certificate, password PW below
 *   wks-crossstore read FILE            load it with PW, get every key;
 *                                       print every entry's type, data
 *                                       and certificates as hex
 *
 * Salts and IVs are random, so two writes differ; what `read` prints of
 * a file is the same whichever build reads it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wks/wks.h>

#define PW "cross-store-password"

static void die(const char *what, int r)
{
	fprintf(stderr, "wks-crossstore: %s: %s (%s)\n", what, wks_strerror(r),
	        wks_error_detail());
	exit(1);
}

static int b64(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* The DER of the first PEM block of a file. */
static uint8_t *pem_der(const char *dir, const char *name, size_t *len)
{
	char path[4096], line[256];
	FILE *f;
	uint8_t *out = malloc(1 << 16);
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0, in = 0, v;
	char *p;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!out || !(f = fopen(path, "r"))) {
		fprintf(stderr, "wks-crossstore: cannot read %s\n", path);
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "-----BEGIN", 10) == 0) {
			in = 1;
			continue;
		}
		if (strncmp(line, "-----END", 8) == 0 && in)
			break;
		if (!in)
			continue;
		for (p = line; *p; p++) {
			if ((v = b64((unsigned char)*p)) < 0)
				continue;
			acc = acc << 6 | (unsigned)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				out[n++] = (uint8_t)(acc >> bits);
			}
		}
	}
	fclose(f);
	*len = n;
	return out;
}

static void add_key(wks_store *st, const char *dir, const char *alias,
                    const char *alg)
{
	char k[64], l[64], c[64];
	uint8_t *key, *chain[2];
	size_t kl, lens[2];
	int r;

	snprintf(k, sizeof(k), "%s-leafkey.key", alg);
	snprintf(l, sizeof(l), "%s-leaf.pem", alg);
	snprintf(c, sizeof(c), "%s-ca.pem", alg);
	key = pem_der(dir, k, &kl);
	chain[0] = pem_der(dir, l, &lens[0]);
	chain[1] = pem_der(dir, c, &lens[1]);
	if ((r = wks_store_set_private_key(st, alias, key, kl,
	                                   (const uint8_t *const *)chain, lens,
	                                   2, PW, strlen(PW))) < 0)
		die(alias, r);
	free(key);
	free(chain[0]);
	free(chain[1]);
}

static void hex(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	wks_store *st = NULL;
	int r;

	if (argc == 4 && strcmp(argv[1], "write") == 0) {
		static const uint8_t aes[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
		uint8_t *der;
		size_t dl;

		if ((r = wks_store_new(&st)) < 0)
			die("new", r);
		if ((r = wks_store_set_property(st, "wolfjce.wks.iterationCount",
		                                "10000")) < 0)
			die("property", r);
		if ((r = wks_store_set_secret_key(st, "secret", "AES", aes,
		                                  sizeof(aes), PW, strlen(PW))) < 0)
			die("secret", r);
		add_key(st, argv[3], "rsa", "rsa");
		add_key(st, argv[3], "pss", "pss");
		add_key(st, argv[3], "p384", "p384");
		add_key(st, argv[3], "ed448", "ed448");
		der = pem_der(argv[3], "p521-ca.pem", &dl);
		if ((r = wks_store_set_cert_der(st, "trusted", der, dl)) < 0)
			die("trusted", r);
		free(der);
		if ((r = wks_store_save_file(st, argv[2], PW, strlen(PW))) < 0)
			die("save", r);
	} else if (argc == 3 && strcmp(argv[1], "read") == 0) {
		char **al = NULL;
		size_t n = 0, i, j, cc;

		if ((r = wks_store_new(&st)) < 0)
			die("new", r);
		if ((r = wks_store_load_file(st, argv[2], PW, strlen(PW))) < 0)
			die("load", r);
		if ((r = wks_store_aliases(&al, &n, st)) < 0)
			die("aliases", r);
		qsort(al, n, sizeof(*al), cmp);
		for (i = 0; i < n; i++) {
			wks_entry_type t = wks_store_entry_type(st, al[i]);
			int64_t ms = 0;

			wks_store_creation_time(&ms, st, al[i]);
			printf("%s type %d created %lld\n", al[i], (int)t,
			       (long long)ms);
			if (t != WKS_ENTRY_CERTIFICATE) {
				wks_key *k = NULL;
				const uint8_t *d;
				size_t dl;

				if ((r = wks_store_get_key(&k, st, al[i], PW,
				                           strlen(PW))) < 0)
					die(al[i], r);
				d = wks_key_data(k, &dl);
				printf("  key %s ", wks_key_algorithm(k));
				hex(d, dl);
				wks_key_free(k);
			}
			if (t == WKS_ENTRY_SECRET_KEY)
				continue;
			if ((r = wks_store_cert_count(&cc, st, al[i])) < 0)
				die(al[i], r);
			for (j = 0; j < cc; j++) {
				uint8_t *der = NULL;
				size_t dl = 0;

				if ((r = wks_store_get_cert_der(&der, &dl, st, al[i],
				                                j)) < 0)
					die(al[i], r);
				printf("  cert %zu ", j);
				hex(der, dl);
				wks_free(der);
			}
		}
		wks_aliases_free(al);
	} else {
		fprintf(stderr, "usage: wks-crossstore write FILE PKI_DIR | "
		        "read FILE\n");
		return 2;
	}
	wks_store_free(st);
	return 0;
}
