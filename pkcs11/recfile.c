/*
 * The attribute record's file, `<store>.p11` beside the store
 * (attrrec.h has the format; docs/FORMAT.md, docs/DESIGN.md).
 *
 * It is read with every load of the store and written under the store's
 * file lock with every change the module saves (write.c), atomically: a
 * temporary file in the same folder, synced, renamed over the old one.
 * Its MAC key is PBKDF2-HMAC-SHA512 of the store password with the
 * record's own salt, so it is checked whenever the store's MAC is (a
 * load with the password); the key is kept for the login (derived once).
 * A record that is missing, malformed or whose MAC does not verify is as
 * good as absent: the objects have their derived attributes, as before
 * the record existed, and the debug log says why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "p11.h"

char *w11_rec_path(const w11_token *t)
{
	size_t n = strlen(t->conf->store);
	char *p = malloc(n + 5);

	if (p) {
		memcpy(p, t->conf->store, n);
		memcpy(p + n, ".p11", 5);
	}
	return p;
}

/* The token's PBKDF2 iteration count for a new record: its
 * wolfjce.wks.iterationCount, else the format's default. */
static uint32_t new_iterations(const w11_token *t)
{
	const w11_conf_token *c = t->conf;

	for (size_t i = 0; i < c->nprops; i++)
		if (strcmp(c->prop_name[i], "wolfjce.wks.iterationCount") ==
		    0) {
			long v = strtol(c->prop_value[i], NULL, 10);

			if (v >= 10000 && v <= 5000000)
				return (uint32_t)v;
		}
	return 210000;
}

/* The largest iteration count a record may ask for: the token's
 * libwks.wks.maxIterationCount, as for its store, else libwks's default. */
static uint32_t max_iterations(const w11_token *t)
{
	const w11_conf_token *c = t->conf;

	for (size_t i = 0; i < c->nprops; i++)
		if (strcmp(c->prop_name[i], "libwks.wks.maxIterationCount") ==
		    0) {
			long v = strtol(c->prop_value[i], NULL, 10);

			if (v >= 10000 && v <= 0x7fffffffL)
				return (uint32_t)v;
		}
	return 5000000;
}

static int derive(unsigned char key[64], const char *pw, size_t pw_len,
		  const uint8_t salt[16], uint32_t iterations)
{
	EVP_KDF *kdf = EVP_KDF_fetch(w11_libctx, "PBKDF2", NULL);
	EVP_KDF_CTX *kc = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	unsigned int iter = iterations;
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD,
						  (void *)pw, pw_len),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
						  (void *)salt, 16),
		OSSL_PARAM_construct_uint(OSSL_KDF_PARAM_ITER, &iter),
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
						 "SHA512", 0),
		OSSL_PARAM_END,
	};
	int ok = kc && EVP_KDF_derive(kc, key, 64, p) == 1;

	EVP_KDF_CTX_free(kc);
	EVP_KDF_free(kdf);
	return ok;
}

/* The MAC key for (pw, salt, iterations): the one kept for the login if
 * it matches, else derived (and kept, if pw is the login's).  Not with
 * the token's lock held (PBKDF2). */
static int mac_key(w11_token *t, unsigned char key[64], const char *pw,
		   size_t pw_len, const uint8_t salt[16], uint32_t iterations)
{
	int login_pw;

	pthread_mutex_lock(&t->lock);
	login_pw = t->login == CKU_USER && t->pin.len == pw_len &&
		   CRYPTO_memcmp(t->pin.p, pw, pw_len) == 0;
	if (login_pw && t->rec_key.len == 64 + 20 &&
	    memcmp(t->rec_key.p + 64, salt, 16) == 0 &&
	    memcmp(t->rec_key.p + 80, &iterations, 4) == 0) {
		memcpy(key, t->rec_key.p, 64);
		pthread_mutex_unlock(&t->lock);
		return 1;
	}
	pthread_mutex_unlock(&t->lock);
	if (!derive(key, pw, pw_len, salt, iterations))
		return 0;
	W11_LOG("token \"%s\": the attribute record's MAC key derived "
		"(PBKDF2, %u iterations)", t->conf->label, iterations);
	if (login_pw) {
		unsigned char k[84];

		memcpy(k, key, 64);
		memcpy(k + 64, salt, 16);
		memcpy(k + 80, &iterations, 4);
		pthread_mutex_lock(&t->lock);
		(void)w11_secret_set(&t->rec_key, k, sizeof(k));
		pthread_mutex_unlock(&t->lock);
		OPENSSL_cleanse(k, sizeof(k));
	}
	return 1;
}

static int hmac(unsigned char out[64], const unsigned char key[64],
		const uint8_t *p, size_t n)
{
	size_t ol = 0;

	return EVP_Q_mac(w11_libctx, "HMAC", NULL, "SHA512", NULL, key, 64, p,
			 n, out, 64, &ol) != NULL &&
	       ol == 64;
}

CK_RV w11_recfile_read(w11_token *t, const char *pw, size_t pw_len,
		       w11_rec *rec, int *verified)
{
	char *path = w11_rec_path(t);
	unsigned char *buf = NULL, key[64], mac[64];
	struct stat sb;
	size_t n = 0, body = 0;
	ssize_t got;
	int fd = -1;

	memset(rec, 0, sizeof(*rec));
	*verified = 0;
	if (!path)
		return CKR_HOST_MEMORY;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		if (errno != ENOENT)
			W11_LOG("%s: %s: the attribute record is not used",
				path, strerror(errno));
		goto done;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size > (off_t)W11_REC_MAX_FILE) {
		W11_LOG("%s: not a regular file of at most %u bytes: the "
			"attribute record is not used", path, W11_REC_MAX_FILE);
		goto done;
	}
	if (!(buf = malloc((size_t)sb.st_size + 1)))
		goto done;
	while (n < (size_t)sb.st_size &&
	       (got = read(fd, buf + n, (size_t)sb.st_size - n)) > 0)
		n += (size_t)got;
	if (w11_rec_parse(rec, buf, n, &body) != 0) {
		W11_LOG("%s: malformed: the attribute record is not used",
			path);
		goto done;
	}
	if (pw && rec->iterations > max_iterations(t)) {
		/* (a record written by anyone who may write the folder: its
		 * iteration count is bounded as a store's is) */
		W11_LOG("%s: %u PBKDF2 iterations, more than %u: the attribute "
			"record is not used", path, rec->iterations,
			max_iterations(t));
		w11_rec_free(rec);
	} else if (pw) {
		if (!mac_key(t, key, pw, pw_len, rec->salt, rec->iterations) ||
		    !hmac(mac, key, buf, body) ||
		    CRYPTO_memcmp(mac, buf + body, 64) != 0) {
			W11_LOG("%s: its MAC does not verify under the store "
				"password (changed by another program, or "
				"tampered with): the attribute record is not "
				"used", path);
			w11_rec_free(rec);
		} else {
			*verified = 1;
		}
	}
done:
	OPENSSL_cleanse(key, sizeof(key));
	if (fd >= 0)
		close(fd);
	free(buf);
	free(path);
	return CKR_OK;
}

CK_RV w11_recfile_write(w11_token *t, w11_rec *rec, const char *pw,
			size_t pw_len)
{
	char *path = w11_rec_path(t), *tmp = NULL;
	unsigned char *body = NULL, key[64], mac[64];
	size_t n = 0, off = 0;
	struct stat sb;
	CK_RV rv = CKR_DEVICE_ERROR;
	int fd = -1;

	if (!path)
		return CKR_HOST_MEMORY;
	if (rec->n == 0) {
		/* nothing to keep: no file (a store copied without its
		 * record works as before) */
		if (unlink(path) != 0 && errno != ENOENT)
			W11_LOG("%s: %s", path, strerror(errno));
		rv = CKR_OK;
		goto done;
	}
	if (!rec->iterations) {
		rec->iterations = new_iterations(t);
		if (RAND_bytes_ex(w11_libctx, rec->salt, 16, 0) != 1)
			goto done;
	}
	if (w11_rec_encode(rec, &body, &n) != 0 ||
	    !mac_key(t, key, pw, pw_len, rec->salt, rec->iterations) ||
	    !hmac(mac, key, body, n))
		goto done;
	if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0) {
		tmp = NULL;
		goto done;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		W11_LOG("%s: %s: the attribute record is not written", tmp,
			strerror(errno));
		free(tmp);
		tmp = NULL;
		goto done;
	}
	/* the store's mode (and owner, where this process may set it) */
	if (stat(t->conf->store, &sb) == 0) {
		(void)fchmod(fd, sb.st_mode & 0777);
		if (fchown(fd, sb.st_uid, sb.st_gid) != 0) {
			/* not ours to give away: the file stays ours */
		}
	}
	while (off < n + 64) {
		const unsigned char *p = off < n ? body + off : mac + (off - n);
		size_t want = off < n ? n - off : n + 64 - off;
		ssize_t w = write(fd, p, want);

		if (w <= 0)
			goto done;
		off += (size_t)w;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		goto done;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		W11_LOG("%s: %s: the attribute record is not written", path,
			strerror(errno));
		goto done;
	}
	free(tmp);
	tmp = NULL;
	{
		/* the rename itself on disk, as the store's save does */
		char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
		int dfd;

		if (slash) {
			*slash = '\0';
			if ((dfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY |
					O_CLOEXEC)) >= 0) {
				(void)fsync(dfd);
				close(dfd);
			}
		}
		free(dir);
	}
	rv = CKR_OK;
done:
	OPENSSL_cleanse(key, sizeof(key));
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	free(body);
	free(path);
	return rv;
}
