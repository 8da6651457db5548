/*
 * fuzz_gen_seeds OUTDIR FILE...: seed stores for the fuzz corpora.
 *
 * Fuzz builds accept at most FUZZ_MAX_ITER iterations (fuzz_common.h),
 * but most vectors use 210000.  For each WKS file this rewrites every key
 * entry at SEED_ITER (= FUZZ_ITER) iterations under the password
 * "wolfsslpassword" (same salt, IV, alias, creation time, certificates
 * and plaintext; the original key password is found among the vectors'
 * passwords), keeps certificate entries as they are, keeps the file's
 * entry order and duplicates (at most the first 8 records), and MACs
 * the result at SEED_ITER iterations.  A file that does not parse is
 * copied unchanged as "raw-<name>".
 *
 * The committed corpora were made with:
 *   fuzz_gen_seeds OUT ../shared/vectors/{wolfjce,edge,wolfjce-live}/\*.wks
 * and the inputs the fuzzers found at the earlier 10000 iterations were
 * rewritten the same way (fuzz_gen_seeds OUT fuzz/corpus/TARGET/\*).
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "crypto/crypto.h"
#include "format/format.h"
#include "store/decode.h"
#include "util/buf.h"

#define SEED_PW "wolfsslpassword"
#define SEED_ITER 2 /* FUZZ_ITER in fuzz_common.h */
#define SEED_MAX_ENTRIES 8

/* The vectors' passwords (UTF-8). */
static const char *const passwords[] = {
	"wolfsslpassword",
	"another-key-password",
	"p\xc3\xa4ssw\xc3\xb6rd-\xe6\x97\xa5\xe6\x9c\xac-\xf0\x9f\x94\x91",
	("P\xc3\xa4ssw\xc3\xb6rd-\xce\xa9\xce\xbc\xce\xad\xce\xb3\xce\xb1-"
	 "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e-\xf0\x9f\x94\x91"),
};

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		return NULL;
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static int write_all(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;

	if (f && fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

/* Decrypt a key entry with one of the vectors' passwords. */
static int open_entry(wks_buf *plain, const wks_entry *e)
{
	uint8_t dk[WKS_DK_LEN], mac[WKS_MAC_LEN];
	size_t i;

	for (i = 0; i < sizeof(passwords) / sizeof(passwords[0]); i++) {
		if (wks__pbkdf2(dk, sizeof(dk), (const uint8_t *)passwords[i],
		                strlen(passwords[i]), e->salt, WKS_SALT_LEN,
		                (uint32_t)e->iterations, WKS_KDF_NATIVE, 0) < 0)
			return -1;
		wks__hmac_sha512(mac, dk + WKS_AES_KEY_LEN,
		                 WKS_DK_LEN - WKS_AES_KEY_LEN, e->body,
		                 e->mac_input_len);
		if (memcmp(mac, e->body + e->mac.off, WKS_MAC_LEN) == 0)
			return wks__aes256cbc_decrypt(plain, dk, e->iv,
			                              e->body + e->enc.off,
			                              e->enc.len);
	}
	return -1;
}

/* The entry rebuilt at SEED_ITER under SEED_PW, or NULL. */
static wks_entry *reseal(const wks_entry *e, const wks_settings *cfg)
{
	wks_buf plain = WKS_BUF_INIT, enc = WKS_BUF_INIT, body = WKS_BUF_INIT;
	uint8_t dk[WKS_DK_LEN], mac[WKS_MAC_LEN];
	const uint8_t *certs[128];
	size_t lens[128], i;
	wks_entry *ne = NULL;
	int rc;

	if (e->type == WKS_ENTRY_CERTIFICATE) {
		wks__entry_from_body(&ne, (int)e->type, e->alias, e->alias_len,
		                     e->body, e->body_len, cfg, "seed");
		return ne;
	}
	if (open_entry(&plain, e) < 0 || e->cert_count > 128)
		goto done;
	if (wks__pbkdf2(dk, sizeof(dk), (const uint8_t *)SEED_PW,
	                strlen(SEED_PW), e->salt, WKS_SALT_LEN, SEED_ITER,
	                WKS_KDF_NATIVE, 0) < 0 ||
	    wks__aes256cbc_encrypt(&enc, dk, e->iv, plain.ptr, plain.len) < 0)
		goto done;
	for (i = 0; i < e->cert_count; i++)
		certs[i] = wks__entry_cert(e, i, &lens[i]);
	if (e->type == WKS_ENTRY_PRIVATE_KEY)
		rc = wks__body_private(&body, e->created_ms, e->salt, SEED_ITER,
		                       e->iv, enc.ptr, enc.len, certs, lens,
		                       e->cert_count);
	else
		rc = wks__body_secret(&body, e->created_ms, e->algorithm, e->salt,
		                      SEED_ITER, e->iv, enc.ptr, enc.len);
	if (rc < 0)
		goto done;
	wks__hmac_sha512(mac, dk + WKS_AES_KEY_LEN, WKS_DK_LEN - WKS_AES_KEY_LEN,
	                 body.ptr, body.len);
	wks_buf_put_i32be(&body, WKS_MAC_LEN);
	wks_buf_put(&body, mac, sizeof(mac));
	wks__entry_from_body(&ne, (int)e->type, e->alias, e->alias_len,
	                     body.ptr, body.len, cfg, "seed");
done:
	wks_buf_dispose(&plain);
	wks_buf_dispose(&enc);
	wks_buf_dispose(&body);
	return ne;
}

static int seed_one(const char *outdir, const char *path)
{
	char out[4096], tmp[4096], pdir[4096], *dir, *base, *parent;
	wks_entry **v = NULL, *nv[SEED_MAX_ENTRIES];
	wks_buf file = WKS_BUF_INIT;
	wks_file_info fi;
	wks_settings cfg;
	uint8_t key[WKS_STORE_KEY_LEN], mac[WKS_MAC_LEN], *data;
	size_t len, n = 0, i, k = 0;
	int rc = -1;

	if (!(data = read_all(path, &len)))
		return -1;
	/* out = OUTDIR/<parent folder>-<file name>; basename() and dirname()
	 * may return pointers into their argument, so each gets its own
	 * copy of the path. */
	snprintf(tmp, sizeof(tmp), "%s", path);
	base = basename(tmp);
	snprintf(pdir, sizeof(pdir), "%s", path);
	dir = dirname(pdir);
	parent = basename(dir);
	snprintf(out, sizeof(out), "%s/%s-%s", outdir, parent, base);
	snprintf(tmp, sizeof(tmp), "%s", out);
	wks__settings_get(&cfg, NULL);
	if (wks__decode(&v, &n, NULL, &fi, data, len, &cfg) < 0) {
		char *b = strrchr(tmp, '/');

		snprintf(out, sizeof(out), "%s/raw-%s", outdir, b + 1);
		rc = write_all(out, data, len);
		goto done;
	}
	for (i = 0; i < n && k < SEED_MAX_ENTRIES; i++)
		if ((nv[k] = reseal(v[i], &cfg)) != NULL)
			k++;
	if (wks__encode(&file, nv, k, fi.salt, SEED_ITER) < 0 ||
	    wks__pbkdf2(key, sizeof(key), (const uint8_t *)SEED_PW,
	                strlen(SEED_PW), fi.salt, WKS_SALT_LEN, SEED_ITER,
	                WKS_KDF_NATIVE, 0) < 0)
		goto done;
	wks__hmac_sha512(mac, key, sizeof(key), file.ptr, file.len);
	wks_buf_put_i32be(&file, WKS_MAC_LEN);
	wks_buf_put(&file, mac, sizeof(mac));
	rc = file.err ? -1 : write_all(out, file.ptr, file.len);
	printf("%s: %zu of %zu records\n", out, k, n);
done:
	for (i = 0; i < k; i++)
		wks__entry_unref(nv[i]);
	wks__entries_free(v, n);
	wks_buf_dispose(&file);
	free(data);
	return rc;
}

int main(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s OUTDIR FILE...\n", argv[0]);
		return 2;
	}
	for (i = 2; i < argc; i++)
		if (seed_one(argv[1], argv[i]) != 0) {
			fprintf(stderr, "%s: failed\n", argv[i]);
			rc = 1;
		}
	return rc;
}
