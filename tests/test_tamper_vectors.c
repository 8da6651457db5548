/*
 * Tamper resistance, exhaustively: for every store of shared/vectors/
 * {wolfjce,edge,wolfjce-live} that loads with its password, every single
 * byte changed (XOR 0x01 and XOR 0x80) must be
 *
 *  - rejected when loaded with the password (FORMAT / LIMIT from the
 *    parser, else INTEGRITY from the store MAC): never accepted, never a
 *    crash;
 *  - without the password: either the load fails, or get_key of the
 *    changed key entry fails its entry MAC (INTEGRITY), or returns exactly
 *    the original key bytes of that entry; never a different key.
 *
 * Speed (about 2 x 430,000 mutations; a 210000-iteration PBKDF2 per real
 * load would take weeks) without weakening the check:
 *
 *  - the parse outcome of each mutation is computed exactly but on less
 *    input: the parser is sequential and every record is length-prefixed,
 *    so a change inside record k (other than its alias-length or
 *    body-length field) changes only the parse of record k: it is decoded
 *    alone (wks__decode of a one-record file with a valid dummy trailer).
 *    A change of a length field is decoded from record k to the end of the
 *    file (the header rewritten in place just before it), a change in the
 *    trailer (read after every record) as the trailer of a store with no
 *    entries, and a change in the header by decoding the whole file;
 *  - when the parse succeeds, the store MAC is computed with the store key
 *    derived once per file (with the entry keys, in one batch of the
 *    library's PBKDF2, each checked by the MACs wolfJCE wrote) and HMAC-SHA512 states
 *    precomputed at every 128-byte block, so only the blocks from the
 *    change onwards are hashed; a change in the store salt or iteration
 *    count changes the key: those are checked by real loads (all of them
 *    for stores at <= 20000 iterations or with WKS_TAMPER_FULL=1, else a
 *    sample);
 *  - get_key without password is replayed with the entry's derived key
 *    computed once (the same steps as store/keys.c with the library's own
 *    HMAC, constant-time compare and AES-CBC); a change in the entry's
 *    salt or iteration count changes the key: checked by real get_key
 *    calls on a sample;
 *  - on top of that, a random sample of positions of every file goes
 *    through the real wks_store_load_buffer() (with the password) and the
 *    real wks_store_get_key() (without), and their result classes must be
 *    exactly what the fast path computed.
 *
 * Modes (tests/run.sh --help): by default every 128th position (plus the
 * whole header and trailer but for every 8th byte only of the stored MAC,
 * from a fixed-seed offset) and one real load
 * and get_key sample per file and entry, with every check above applied
 * to each mutation made (the header and trailer mutations, which decode
 * the whole file, are most of the time then); WKS_TEST_FULL=1 (CI's
 * plain stage) makes every position and 4 samples the defaults.
 *
 * Environment: WKS_TAMPER_XORS=1 (one XOR per position, alternating 0x01
 * and 0x80: for sanitizer builds), WKS_TAMPER_STRIDE=n (every n-th
 * position only, plus the header and trailer, the stored MAC's every 8th
 * byte when n > 1; default 128, 1 in
 * full mode), WKS_TAMPER_FULL=1 (real KDF for every salt/iteration
 * change; slow), WKS_TAMPER_SAMPLES=n (real loads and get_keys per file;
 * default 1, 4 in full mode),
 * WKS_TAMPER_SEED=n (sample seed, default fixed), WKS_TAMPER_MAX_ITER=n
 * (only stores whose every iteration count is at most n: for valgrind,
 * where one 210000-iteration PBKDF2 takes seconds).
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tu_ossl.h"

#include "config/config.h"
#include "crypto/crypto.h"
#include "crypto/kdf.h"
#include "format/format.h"
#include "store/decode.h"
#include "util/buf.h"

/* ---- parameters ------------------------------------------------------------- */

static int g_one_xor, g_full;
static size_t g_stride = 1, g_samples = 4, g_max_iter = SIZE_MAX;
static uint64_t g_rng = 0x9E3779B97F4A7C15u;

static size_t env_size(const char *name, size_t def)
{
	const char *v = getenv(name);

	return v && *v ? (size_t)strtoull(v, NULL, 10) : def;
}

static uint64_t rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- one file ------------------------------------------------------------------ */

typedef struct {
	size_t start, end, body; /* record [start, end), body offset */
	wks_entry *e;            /* the original entry */
	int key;                 /* a key entry */
	size_t kdf_off;          /* its salt (16) and iterations (4) */
	const char *kpw;         /* its key password */
	uint8_t dk[WKS_DK_LEN];
	uint8_t *plain;          /* original key bytes; NULL: never opens */
	size_t plain_len;
	size_t real_budget;      /* real get_key calls left */
} rec_info;

typedef struct {
	const char *name;
	const char *spw;
	uint8_t *orig, *m;       /* the file, the mutated copy */
	size_t len, n;
	wks_file_info fi;
	rec_info *r;
	wks_settings cfg;
	/* HMAC-SHA512 with the store key: the inner state after each
	 * 128-byte block of the MAC input, the outer pad. */
	SHA512_CTX *inner;
	size_t nblocks;
	uint8_t opad[128];
	uint8_t orig_mac_calc[64];
	size_t trailer_real_left, store_kdf_left, load_samples_left;
	/* A corrupted vector (edge/corrupt-*): the change that undoes its
	 * documented mutation, and the SHA-256 of the key that then opens
	 * (from the manifest of its base file). */
	size_t undo_off;
	uint8_t undo_xor;
	const char *undo_sha;
	/* statistics */
	size_t mutations, dec_format, dec_limit, mac_rejected, store_kdf_real,
	       store_kdf_skipped, key_checks,
	       key_integrity, key_same, kdf_skipped, real_loads, real_keys,
	       real_nokey;
} tfile;

static void tamper_fail(const tfile *f, size_t p, uint8_t x, const char *what,
                        int rc)
{
	fail_msg("%s: byte %zu ^ 0x%02x (0x%02x -> 0x%02x): %s (rc %d %s: %s)",
	         f->name, p, x, f->orig[p], (uint8_t)(f->orig[p] ^ x), what, rc,
	         wks_strerror(rc), wks_error_detail());
}

/* HMAC-SHA512(store key, m[0 .. mac_input_len)) from the block of p on. */
static void store_mac(const tfile *f, size_t p, uint8_t out[64])
{
	size_t mil = f->fi.mac_input_len, b = p / 128;
	uint8_t ih[64];
	SHA512_CTX c;

	if (p >= mil) {
		memcpy(out, f->orig_mac_calc, 64);
		return;
	}
	c = f->inner[b];
	SHA512_Update(&c, f->m + b * 128, mil - b * 128);
	SHA512_Final(ih, &c);
	SHA512_Init(&c);
	SHA512_Update(&c, f->opad, 128);
	SHA512_Update(&c, ih, 64);
	SHA512_Final(out, &c);
}

static void prepare_mac(tfile *f, const uint8_t key[64])
{
	uint8_t ipad[128];
	size_t i, mil = f->fi.mac_input_len;
	SHA512_CTX c;

	for (i = 0; i < 128; i++) {
		ipad[i] = (uint8_t)((i < 64 ? key[i] : 0) ^ 0x36);
		f->opad[i] = (uint8_t)((i < 64 ? key[i] : 0) ^ 0x5c);
	}
	f->nblocks = mil / 128 + 1;
	f->inner = malloc(f->nblocks * sizeof(*f->inner));
	assert_non_null(f->inner);
	SHA512_Init(&c);
	SHA512_Update(&c, ipad, 128);
	for (i = 0; i < f->nblocks; i++) {
		f->inner[i] = c;
		if ((i + 1) * 128 <= mil)
			SHA512_Update(&c, f->orig + i * 128, 128);
	}
	f->m = f->orig; /* for the original MAC */
	store_mac(f, 0, f->orig_mac_calc);
	f->m = NULL;
}

/* get_key's steps (store/keys.c) with a known derived key: MAC check
 * (encrypt-then-MAC), then decryption.  Returns WKS_OK with the plaintext
 * in *out, or WKS_ERR_INTEGRITY. */
static int open_with_dk(wks_buf *out, const wks_entry *e,
                        const uint8_t dk[WKS_DK_LEN])
{
	uint8_t mac[WKS_MAC_LEN];

	wks__hmac_sha512(mac, dk + WKS_AES_KEY_LEN, WKS_DK_LEN - WKS_AES_KEY_LEN,
	                 e->body, e->mac_input_len);
	if (!wks__mac_equal(mac, e->body + e->mac.off, WKS_MAC_LEN))
		return WKS_ERR_INTEGRITY;
	return wks__aes256cbc_decrypt(out, dk, e->iv, e->body + e->enc.off,
	                              e->enc.len);
}

/* Decode the mutated file as the library would, on the least input. */
static int decode_mutated(tfile *f, size_t p, size_t *rec, wks_entry ***v,
                          size_t *n)
{
	static const uint8_t trailer[92] = {
		0, 0, 0, 16, [20] = 0, 0, 0x27, 0x10, 0, 0, 0, 64
	};
	wks_buf one = WKS_BUF_INIT;
	wks_file_info fi;
	uint8_t saved[12];
	size_t k;
	int rc;

	*v = NULL;
	*n = 0;
	*rec = SIZE_MAX;
	if (p < 12)
		return wks__decode(v, n, NULL, &fi, f->m, f->len, &f->cfg);
	if (p >= f->fi.trailer_offset) {
		/* The trailer is read after the records, which parse as in
		 * the original: the header of a store with no entries and the
		 * changed trailer give the outcome (the trailer's real loads
		 * below check that against the whole file). */
		wks_buf_put_i32be(&one, WKS_MAGIC);
		wks_buf_put_i32be(&one, WKS_FORMAT_VERSION);
		wks_buf_put_i32be(&one, 0);
		wks_buf_put(&one, f->m + f->fi.trailer_offset,
		            f->len - f->fi.trailer_offset);
		assert_int_equal(one.err, 0);
		rc = wks__decode(v, n, NULL, &fi, one.ptr, one.len, &f->cfg);
		wks_buf_dispose(&one);
		return rc;
	}
	for (k = 0; k + 1 < f->n && p >= f->r[k + 1].start; k++)
		;
	*rec = k;
	if ((p >= f->r[k].start + 4 && p < f->r[k].start + 6) ||
	    (p >= f->r[k].body - 4 && p < f->r[k].body)) {
		/* A length field: decode from record k to the end. */
		uint8_t *h = f->m + f->r[k].start - 12;

		memcpy(saved, h, 12);
		tu_put_be32(h, WKS_MAGIC);
		tu_put_be32(h + 4, WKS_FORMAT_VERSION);
		tu_put_be32(h + 8, (uint32_t)(f->n - k));
		rc = wks__decode(v, n, NULL, &fi, h, f->len - f->r[k].start + 12,
		                 &f->cfg);
		memcpy(h, saved, 12);
		*rec = SIZE_MAX - 1; /* entries are not record k alone */
		return rc;
	}
	wks_buf_put_i32be(&one, WKS_MAGIC);
	wks_buf_put_i32be(&one, WKS_FORMAT_VERSION);
	wks_buf_put_i32be(&one, 1);
	wks_buf_put(&one, f->m + f->r[k].start, f->r[k].end - f->r[k].start);
	wks_buf_put(&one, trailer, sizeof(trailer));
	assert_int_equal(one.err, 0);
	rc = wks__decode(v, n, NULL, &fi, one.ptr, one.len, &f->cfg);
	wks_buf_dispose(&one);
	return rc;
}

/* Is record k the last one with its (possibly changed) alias? */
static int is_winner(const tfile *f, size_t k, const wks_entry *e)
{
	size_t j;

	for (j = k + 1; j < f->n; j++)
		if (f->r[j].e->alias_len == e->alias_len &&
		    memcmp(f->r[j].e->alias, e->alias, e->alias_len) == 0)
			return 0;
	return 1;
}

/* The real thing, without a password: load, then get_key of `alias`
 * with `pw`.  Returns the get_key result; a success must give one of the
 * file's original key plaintexts (`want` if not NULL). */
static int real_get_key(tfile *f, size_t p, uint8_t x, const char *alias,
                        const char *pw, const rec_info *want)
{
	wks_store *st = NULL;
	wks_key *key = NULL;
	const uint8_t *kd;
	size_t kl, i;
	int rc, ok = 0;

	TU_OK(wks_store_new(&st));
	rc = wks_store_load_buffer(st, f->m, f->len, NULL, 0);
	if (rc != WKS_OK)
		tamper_fail(f, p, x, "parses, but the load without password "
		            "fails", rc);
	rc = wks_store_get_key(&key, st, alias, pw, strlen(pw));
	f->real_keys++;
	if (rc == WKS_OK) {
		kd = wks_key_data(key, &kl);
		if (want)
			ok = want->plain && kl == want->plain_len &&
			     memcmp(kd, want->plain, kl) == 0;
		else
			for (i = 0; i < f->n && !ok; i++)
				ok = f->r[i].plain && kl == f->r[i].plain_len &&
				     memcmp(kd, f->r[i].plain, kl) == 0;
		if (!ok)
			tamper_fail(f, p, x, "get_key returned a DIFFERENT key", rc);
		wks_key_free(key);
	} else if (rc != WKS_ERR_INTEGRITY && rc != WKS_ERR_WRONG_TYPE &&
	           rc != WKS_ERR_FORMAT && rc != WKS_ERR_UNSUPPORTED) {
		tamper_fail(f, p, x, "get_key: unexpected error class", rc);
	}
	wks_store_free(st);
	return rc;
}

/* Without a password, the changed record k decoded as `e`. */
static void check_key(tfile *f, size_t p, uint8_t x, size_t k,
                      const wks_entry *e)
{
	rec_info *r = &f->r[k];
	wks_buf out = WKS_BUF_INIT;
	int rc, kdf_changed;

	if (e->type == WKS_ENTRY_CERTIFICATE)
		return; /* no key to hand out */
	kdf_changed = !r->key || memcmp(e->salt, r->e->salt, WKS_SALT_LEN) != 0 ||
	              e->iterations != r->e->iterations;
	if (kdf_changed) {
		/* A different derived key: only a real get_key can tell. */
		if ((g_full || r->real_budget > 0) && is_winner(f, k, e)) {
			if (r->real_budget)
				r->real_budget--;
			rc = real_get_key(f, p, x, e->alias,
			                  r->kpw ? r->kpw : f->spw, NULL);
			if (rc == WKS_OK)
				tamper_fail(f, p, x, "changed salt/iterations "
				            "still opened", rc);
		} else {
			f->kdf_skipped++;
		}
		return;
	}
	f->key_checks++;
	rc = open_with_dk(&out, e, r->dk);
	if (rc == WKS_OK && !r->plain) {
		/* The original entry never opened: only undoing its corruption
		 * may open it, to the key of the uncorrupted base file. */
		char sha[65];

		tu_sha256_hex(sha, out.ptr, out.len);
		if (p != f->undo_off || x != f->undo_xor || !f->undo_sha ||
		    strcmp(sha, f->undo_sha) != 0)
			tamper_fail(f, p, x, "a corrupted entry opens to a "
			            "DIFFERENT key", rc);
		print_message("tamper: %s: byte %zu ^ 0x%02x undoes the "
		              "corruption: the entry opens to the base file's key "
		              "(SHA-256 %.16s...)\n", f->name, p, x, sha);
		f->key_same++;
	} else if (rc == WKS_OK) {
		if (out.len != r->plain_len ||
		    memcmp(out.ptr, r->plain, out.len) != 0)
			tamper_fail(f, p, x, "the entry opens to a DIFFERENT key", rc);
		f->key_same++;
	} else if (rc == WKS_ERR_INTEGRITY) {
		f->key_integrity++;
	} else {
		tamper_fail(f, p, x, "unexpected error opening the entry", rc);
	}
	wks_buf_dispose(&out);
	/* Cross-check the fast path with the real get_key (its key cost is
	 * one PBKDF2 of the entry's iteration count). */
	if (r->real_budget > 0 && (rnd() % 64) == 0 && is_winner(f, k, e)) {
		int real;

		r->real_budget--;
		real = real_get_key(f, p, x, e->alias, r->kpw, r);
		if (real != rc)
			tamper_fail(f, p, x, "real get_key disagrees with the "
			            "fast path", real);
	}
}

/* A real load with the password; must give exactly `want`. */
static void real_load(tfile *f, size_t p, uint8_t x, int want)
{
	wks_store *st = NULL;
	int rc;

	TU_OK(wks_store_new(&st));
	rc = wks_store_load_buffer(st, f->m, f->len, f->spw, strlen(f->spw));
	f->real_loads++;
	if (rc == WKS_OK)
		tamper_fail(f, p, x, "ACCEPTED by a real load with the password",
		            rc);
	if (rc != want)
		tamper_fail(f, p, x, "real load disagrees with the fast path", rc);
	assert_int_equal(wks_store_size(st), 0);
	wks_store_free(st);
}

static void mutate_one(tfile *f, size_t p, uint8_t x)
{
	size_t rec, n = 0, tr = f->fi.trailer_offset;
	wks_entry **v = NULL;
	uint8_t mac[64];
	int rc, want, store_kdf, sample;

	f->mutations++;
	f->m[p] ^= x;
	rc = decode_mutated(f, p, &rec, &v, &n);
	/* The store salt and iteration count feed the store key. */
	store_kdf = p >= tr + 4 && p < tr + 24;
	sample = (f->load_samples_left && rnd() % 997 == 0);
	if (rc != WKS_OK) {
		if (rc == WKS_ERR_FORMAT)
			f->dec_format++;
		else if (rc == WKS_ERR_LIMIT)
			f->dec_limit++;
		else
			tamper_fail(f, p, x, "parser: unexpected error class", rc);
		want = rc;
	} else {
		want = WKS_ERR_INTEGRITY;
		if (store_kdf) {
			if (g_full || f->store_kdf_left) {
				if (f->store_kdf_left)
					f->store_kdf_left--;
				real_load(f, p, x, want);
				f->store_kdf_real++;
			} else {
				f->kdf_skipped++;
				f->store_kdf_skipped++;
			}
		} else {
			store_mac(f, p, mac);
			if (memcmp(mac, f->m + f->len - 64, 64) == 0)
				tamper_fail(f, p, x, "ACCEPTED: the store MAC still "
				            "matches", 0);
			f->mac_rejected++;
		}
		/* Without a password: the record that changed. */
		if (rec < f->n)
			check_key(f, p, x, rec, v[0]);
		else if (rec == SIZE_MAX - 1) {
			/* A length change that still parses (shifted records):
			 * every key alias through the real get_key. */
			size_t i;

			for (i = 0; i < n; i++)
				if (v[i]->type != WKS_ENTRY_CERTIFICATE) {
					f->real_nokey++;
					real_get_key(f, p, x, v[i]->alias, f->spw, NULL);
				}
		}
	}
	if (p >= tr && !store_kdf && (g_full || f->trailer_real_left)) {
		/* The trailer: real loads (all of them when cheap). */
		if (f->trailer_real_left)
			f->trailer_real_left--;
		real_load(f, p, x, want);
	} else if (sample) {
		f->load_samples_left--;
		real_load(f, p, x, want);
	}
	wks__entries_free(v, n);
	f->m[p] ^= x;
}

/* The key bytes of record r, with its derived key r->dk (also checks that
 * the derived key is right: the entry MAC, written by wolfJCE, verifies). */
static void open_original(tfile *f, rec_info *r)
{
	wks_buf out = WKS_BUF_INIT;
	const wks_entry *e = r->e;

	if (open_with_dk(&out, e, r->dk) == WKS_OK) {
		r->plain = malloc(out.len + 1);
		assert_non_null(r->plain);
		memcpy(r->plain, out.ptr, out.len);
		r->plain_len = out.len;
	} else {
		/* e.g. edge/corrupt-enckey-flip-restamped: never opens. */
		print_message("tamper: %s: entry \"%s\" does not open (as "
		              "expected for a corrupted entry)\n", f->name,
		              e->alias);
	}
	wks_buf_dispose(&out);
}

/* The key of every key entry (r->dk) and the store key (skey). */
static void derive_keys(tfile *f, uint8_t skey[64])
{
	wks_kdf_job *jobs = calloc(f->n + 1, sizeof(*jobs));
	size_t i, m = 0;

	assert_non_null(jobs);
	for (i = 0; i < f->n; i++) {
		rec_info *r = &f->r[i];

		if (!r->key)
			continue;
		jobs[m++] = (wks_kdf_job){ r->dk, WKS_DK_LEN,
			(const uint8_t *)r->kpw, strlen(r->kpw), r->e->salt,
			WKS_SALT_LEN, (uint32_t)r->e->iterations };
	}
	jobs[m++] = (wks_kdf_job){ skey, 64, (const uint8_t *)f->spw,
		strlen(f->spw), f->fi.salt, WKS_SALT_LEN,
		(uint32_t)f->fi.iterations };
	TU_OK(wks__pbkdf2_sha512_batch(jobs, m, 0, WKS_KDF_PATH_AUTO));
	free(jobs);
}

static void tamper_file(const char *dir, const char *file, const char *spw,
                        const cJSON *key_pws, const char *kpw_all,
                        const cJSON *undo)
{
	char path[4096], name[512];
	wks_entry **v = NULL;
	wks_record_pos *pos = NULL;
	uint8_t skey[64];
	size_t i, p, n = 0, off;
	int cheap;
	tfile f;
	double t0 = now_s();

	snprintf(name, sizeof(name), "%s/%s", dir, file);
	snprintf(path, sizeof(path), "vectors/%s", name);
	memset(&f, 0, sizeof(f));
	f.name = name;
	f.spw = spw;
	f.undo_off = SIZE_MAX;
	if (undo) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(undo, "offset");
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(undo, "old_hex");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(undo, "new_hex");
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(undo, "sha");

		f.undo_off = (size_t)o->valuedouble;
		f.undo_xor = (uint8_t)(strtoul(a->valuestring, NULL, 16) ^
		                       strtoul(b->valuestring, NULL, 16));
		f.undo_sha = cJSON_IsString(h) ? h->valuestring : NULL;
	}
	f.orig = tu_read_file(tu_shared(path), &f.len);
	wks__settings_get(&f.cfg, NULL);
	TU_OK(wks__decode(&v, &n, &pos, &f.fi, f.orig, f.len, &f.cfg));
	f.n = n;
	if (g_max_iter != SIZE_MAX) {
		int skip = (size_t)f.fi.iterations > g_max_iter;

		for (i = 0; i < n; i++)
			if (v[i]->type != WKS_ENTRY_CERTIFICATE &&
			    (size_t)v[i]->iterations > g_max_iter)
				skip = 1;
		if (skip) {
			print_message("tamper: %s: skipped (iterations above "
			              "WKS_TAMPER_MAX_ITER=%zu)\n", name, g_max_iter);
			wks__entries_free(v, n);
			free(pos);
			free(f.orig);
			return;
		}
	}
	f.r = calloc(n + 1, sizeof(*f.r));
	assert_non_null(f.r);
	for (i = 0; i < n; i++) {
		rec_info *r = &f.r[i];
		const cJSON *kp;

		r->e = v[i];
		r->start = pos[i].offset;
		r->end = i + 1 < n ? pos[i + 1].offset : f.fi.trailer_offset;
		r->body = pos[i].body_offset;
		r->key = v[i]->type != WKS_ENTRY_CERTIFICATE;
		if (!r->key)
			continue;
		off = r->body + 8;
		if (v[i]->type == WKS_ENTRY_SECRET_KEY)
			off += 2 + ((size_t)f.orig[off] << 8 | f.orig[off + 1]);
		r->kdf_off = off + 4;
		assert_memory_equal(f.orig + r->kdf_off, v[i]->salt, WKS_SALT_LEN);
		kp = key_pws ? cJSON_GetObjectItemCaseSensitive(key_pws,
		                                                v[i]->alias)
		             : NULL;
		r->kpw = cJSON_IsString(kp) ? kp->valuestring
		         : kpw_all ? kpw_all : spw;
		r->real_budget = g_samples;
	}
	/* Every derived key of the file, once, in one batch of the library's
	 * KDF (its lanes and cores: a third of the time or less of OpenSSL's
	 * PBKDF2 one key after the other).  Each is checked by what wolfJCE wrote:
	 * the entry keys by their entry MACs (open_original), the store key
	 * by the store MAC (below); test_kdf checks the KDF itself against
	 * OpenSSL's PKCS5_PBKDF2_HMAC. */
	derive_keys(&f, skey);
	for (i = 0; i < n; i++)
		if (f.r[i].key)
			open_original(&f, &f.r[i]);
	prepare_mac(&f, skey);
	assert_memory_equal(f.orig_mac_calc, f.orig + f.len - 64, 64);
	/* Real loads: every trailer position when a load is cheap (and the
	 * run is not sampled by stride), else a sample (one in the default
	 * mode, where these 210000-iteration loads were most of the time). */
	cheap = f.fi.iterations <= 20000 && g_stride == 1;
	f.trailer_real_left = cheap ? SIZE_MAX :
			      g_samples > 1 ? g_samples * 2 : 1;
	f.store_kdf_left = cheap ? SIZE_MAX : g_samples;
	f.load_samples_left = g_samples;

	f.m = malloc(f.len);
	assert_non_null(f.m);
	memcpy(f.m, f.orig, f.len);
	off = g_stride > 1 ? (size_t)(rnd() % g_stride) : 0;
	for (p = 0; p < f.len; p++) {
		if (g_stride > 1 && p >= 12 && p < f.fi.trailer_offset &&
		    p % g_stride != off)
			continue;
		/* Sampled runs also take every 8th byte of the stored MAC
		 * (the last 64: each one the same case, a MAC that no longer
		 * matches, and each a whole-file decode). */
		if (g_stride > 1 && p >= f.len - 64 &&
		    (p - (f.len - 64)) % 8 != off % 8)
			continue;
		if (g_one_xor) {
			mutate_one(&f, p, (p & 1) ? 0x80 : 0x01);
		} else {
			mutate_one(&f, p, 0x01);
			mutate_one(&f, p, 0x80);
		}
	}
	assert_memory_equal(f.m, f.orig, f.len);
	print_message("tamper: %-40s %6zu B %7zu mutations: parse-rejected "
	              "%zu (format %zu, limit %zu), MAC-rejected %zu; entry "
	              "keys: %zu checked (%zu integrity, %zu same key), %zu "
	              "need a KDF and were not sampled; real loads %zu, real "
	              "get_key %zu; %.1f s\n",
	              name, f.len, f.mutations, f.dec_format + f.dec_limit,
	              f.dec_format, f.dec_limit, f.mac_rejected, f.key_checks,
	              f.key_integrity, f.key_same, f.kdf_skipped, f.real_loads,
	              f.real_keys, now_s() - t0);
	/* Every mutation was rejected one way or the other. */
	assert_int_equal(f.mutations, f.dec_format + f.dec_limit +
	                 f.mac_rejected + f.store_kdf_real + f.store_kdf_skipped);
	for (i = 0; i < n; i++)
		free(f.r[i].plain);
	free(f.r);
	free(f.inner);
	free(f.m);
	free(f.orig);
	free(pos);
	wks__entries_free(v, n);
}

/* ---- the three folders --------------------------------------------------- */

/*
 * For a corrupted vector with a one-byte mutation (edge/corrupt-*): its
 * mutation record plus "sha", the plaintext SHA-256 of the changed key
 * entry in the base file (the entry that contains the mutation offset).
 * Added to the manifest tree; NULL if none.
 */
static const cJSON *undo_info(const cJSON *files, cJSON *rec)
{
	cJSON *mut = cJSON_GetObjectItemCaseSensitive(rec, "mutation");
	const cJSON *base = cJSON_GetObjectItemCaseSensitive(rec, "base");
	const cJSON *brec, *ents, *e, *best = NULL;
	const cJSON *off = cJSON_GetObjectItemCaseSensitive(mut, "offset");

	if (!cJSON_IsObject(mut) || !cJSON_IsString(base) ||
	    !cJSON_IsNumber(off) ||
	    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(mut, "old_hex")))
		return NULL;
	brec = cJSON_GetObjectItemCaseSensitive(files, base->valuestring);
	ents = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(brec, "decoded"), "entries");
	cJSON_ArrayForEach(e, ents) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, "offset");

		if (cJSON_IsNumber(o) && o->valuedouble <= off->valuedouble)
			best = e;
	}
	if (best) {
		const cJSON *sha = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(best, "key"),
			"plaintext_sha256");

		if (cJSON_IsString(sha) && !cJSON_GetObjectItem(mut, "sha"))
			cJSON_AddStringToObject(mut, "sha", sha->valuestring);
	}
	return mut;
}

static void tamper_folder(const char *dir)
{
	char rel[256];
	cJSON *man;
	const cJSON *files, *def;
	cJSON *rec;
	double t0 = now_s();
	size_t count = 0;

	snprintf(rel, sizeof(rel), "vectors/%s/manifest.json", dir);
	man = tu_json_file(tu_shared(rel));
	files = cJSON_GetObjectItemCaseSensitive(man, "files");
	def = cJSON_GetObjectItemCaseSensitive(man, "password");
	if (!def)
		def = cJSON_GetObjectItemCaseSensitive(man, "default_password");
	assert_true(cJSON_IsObject(files));
	cJSON_ArrayForEach(rec, files) {
		const cJSON *pw = cJSON_GetObjectItemCaseSensitive(rec, "password");
		const cJSON *kp = cJSON_GetObjectItemCaseSensitive(rec,
		                                                   "key_password");
		const cJSON *kps = cJSON_GetObjectItemCaseSensitive(rec,
		                                                    "key_passwords");
		const cJSON *exp = cJSON_GetObjectItemCaseSensitive(rec, "expected");
		const char *spw = cJSON_IsString(pw) ? pw->valuestring
		                  : def->valuestring;

		if (exp) {
			const cJSON *l = cJSON_GetObjectItemCaseSensitive(
				exp, "load_with_password");

			if (!cJSON_IsString(l) || strcmp(l->valuestring, "ok") != 0)
				continue; /* corrupt files that do not load */
		}
		tamper_file(dir, rec->string, spw, kps,
		            cJSON_IsString(kp) ? kp->valuestring : NULL,
		            undo_info(files, rec));
		count++;
	}
	print_message("tamper: %s: %zu stores, %.1f s\n", dir, count,
	              now_s() - t0);
	assert_true(count > 0);
	cJSON_Delete(man);
}

static void test_tamper__wolfjce(void **state)
{
	(void)state;
	tamper_folder("wolfjce");
}

static void test_tamper__edge(void **state)
{
	(void)state;
	tamper_folder("edge");
}

static void test_tamper__wolfjce_live(void **state)
{
	(void)state;
	tamper_folder("wolfjce-live");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tamper__wolfjce),
		cmocka_unit_test(test_tamper__edge),
		cmocka_unit_test(test_tamper__wolfjce_live),
	};

	g_one_xor = env_size("WKS_TAMPER_XORS", 2) == 1;
	g_full = env_size("WKS_TAMPER_FULL", 0) != 0;
	g_stride = tu_env_count("WKS_TAMPER_STRIDE", 128, 1);
	if (g_stride == 0)
		g_stride = 1;
	g_samples = tu_env_count("WKS_TAMPER_SAMPLES", 1, 4);
	g_max_iter = env_size("WKS_TAMPER_MAX_ITER", SIZE_MAX);
	if (getenv("WKS_TAMPER_SEED"))
		g_rng = env_size("WKS_TAMPER_SEED", 1) | 1;
	print_message("tamper: %s mode: xors %s, stride %zu, samples %zu, "
	              "full KDF %d, seed %llu\n",
	              tu_full_mode() ? "full" : "quick (sampled)",
	              g_one_xor ? "1 (alternating)" : "0x01+0x80",
	              g_stride, g_samples, g_full, (unsigned long long)g_rng);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
