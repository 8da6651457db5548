/*
 * Round trips with the independent implementation shared/tools/wksdump.py:
 *
 *   - stores written by libwks are read by `wksdump.py dump` (store MAC and
 *     every key entry verified, keys decrypted and compared with what was
 *     put in, private keys matched to their leaf);
 *   - stores written by `wksdump.py write` are loaded by libwks and every
 *     key, certificate, alias and creation time compared; then saved again
 *     by libwks and dumped, showing the entries were copied unchanged.
 *
 * Covered: non-ASCII store and key passwords, aliases with NUL, CR/LF,
 * characters outside the BMP and a lone surrogate (JSON \u escapes in
 * wksdump's --spec form), the empty alias, an empty store, 10000-iteration
 * stores, mixed iteration counts, key passwords different from the store
 * password (one for all keys, and one per key).
 *
 * wksdump prints lone surrogates, so it runs with
 * PYTHONIOENCODING=utf-8:surrogatepass (they come out as ED A0 80 etc.).
 */
#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "format/format.h"
#include "store/decode.h"

#define PW "wolfsslpassword"
#define PWL (sizeof(PW) - 1)

static char *g_dir; /* temporary folder of the whole program */

static int setup(void **state)
{
	(void)state;
	g_dir = tu_tmpdir();
	if (tu_system("python3 -c 'import cryptography' >/dev/null 2>&1") != 0)
		fail_msg("python3 with the cryptography package is required");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rmtree(g_dir);
	free(g_dir);
	return 0;
}

static const char *tmp_path(const char *name)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", g_dir, name);
	return buf;
}

/*
 * Run wksdump.py with `args` (a printf format), the store password in the
 * environment variable WKS_T_PW; returns its JSON output.  want_rc: the
 * exit status it must have.
 */
static cJSON *wksdump(int want_rc, const char *store_pw, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static cJSON *wksdump(int want_rc, const char *store_pw, const char *fmt, ...)
{
	char args[6000], out[4096];
	va_list ap;
	int rc;
	cJSON *j;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	if (store_pw)
		setenv("WKS_T_PW", store_pw, 1);
	snprintf(out, sizeof(out), "%s/wksdump-out.json", g_dir);
	rc = tu_system("PYTHONIOENCODING=utf-8:surrogatepass python3 %s/tools/wksdump.py "
	               "%s > %s 2> %s.err", WKS_SHARED_DIR, args, out, out);
	if (rc != want_rc) {
		size_t n;
		char *err;
		char errpath[4200];

		snprintf(errpath, sizeof(errpath), "%s.err", out);
		err = (char *)tu_read_file(errpath, &n);
		fail_msg("wksdump.py %s: exit status %d, want %d; stderr: %.2000s", args, rc,
		         want_rc, err);
	}
	j = tu_json_file(out);
	return j;
}

/* ------------------------------------------------------------------------
 * Java strings: the API form <-> UTF-16 code units <-> modified UTF-8,
 * written here independently of libwks's mutf8.c.
 */

/* API form (UTF-8, C0 80 for NUL, 3-byte surrogates) -> UTF-16 units. */
static size_t api_units(uint16_t *u, size_t max, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p) {
		uint32_t cp;

		assert_true(n + 2 <= max);
		if (p[0] < 0x80) {
			cp = p[0];
			p += 1;
		} else if ((p[0] & 0xE0) == 0xC0) {
			cp = (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
			p += 2;
		} else if ((p[0] & 0xF0) == 0xE0) {
			cp = (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 |
			     (p[2] & 0x3F);
			p += 3;
		} else {
			cp = (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
			     (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
			p += 4;
			cp -= 0x10000;
			u[n++] = (uint16_t)(0xD800 + (cp >> 10));
			u[n++] = (uint16_t)(0xDC00 + (cp & 0x3FF));
			continue;
		}
		u[n++] = (uint16_t)cp;
	}
	return n;
}

/* Java's writeUTF bytes of an API-form string, as hex. */
static char *mutf8_hex(const char *s)
{
	uint16_t u[512];
	size_t n = api_units(u, 512, s), i, o = 0;
	uint8_t b[1536];

	for (i = 0; i < n; i++) {
		if (u[i] >= 1 && u[i] <= 0x7F) {
			b[o++] = (uint8_t)u[i];
		} else if (u[i] <= 0x7FF) {
			b[o++] = (uint8_t)(0xC0 | u[i] >> 6);
			b[o++] = (uint8_t)(0x80 | (u[i] & 0x3F));
		} else {
			b[o++] = (uint8_t)(0xE0 | u[i] >> 12);
			b[o++] = (uint8_t)(0x80 | ((u[i] >> 6) & 0x3F));
			b[o++] = (uint8_t)(0x80 | (u[i] & 0x3F));
		}
	}
	return tu_hex_dup(b, o);
}

/* Standard UTF-8 as wksdump reports it (alias_utf8_hex): NUL is 00, a lone
 * surrogate is '?'. */
static char *utf8_hex(const char *s)
{
	uint16_t u[512];
	size_t n = api_units(u, 512, s), i, o = 0;
	uint8_t b[2048];

	for (i = 0; i < n; i++) {
		uint32_t cp = u[i];

		if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < n && u[i + 1] >= 0xDC00 &&
		    u[i + 1] <= 0xDFFF) {
			cp = 0x10000 + ((cp - 0xD800) << 10) + (u[i + 1] - 0xDC00);
			i++;
		} else if (cp >= 0xD800 && cp <= 0xDFFF) {
			b[o++] = '?';
			continue;
		}
		if (cp < 0x80) {
			b[o++] = (uint8_t)cp;
		} else if (cp < 0x800) {
			b[o++] = (uint8_t)(0xC0 | cp >> 6);
			b[o++] = (uint8_t)(0x80 | (cp & 0x3F));
		} else if (cp < 0x10000) {
			b[o++] = (uint8_t)(0xE0 | cp >> 12);
			b[o++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
			b[o++] = (uint8_t)(0x80 | (cp & 0x3F));
		} else {
			b[o++] = (uint8_t)(0xF0 | cp >> 18);
			b[o++] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
			b[o++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
			b[o++] = (uint8_t)(0x80 | (cp & 0x3F));
		}
	}
	return tu_hex_dup(b, o);
}

/* A JSON string literal (with quotes) for an API-form string: every
 * non-printable or non-ASCII unit as \uXXXX. */
static void json_str(char *out, size_t outlen, const char *s)
{
	uint16_t u[512];
	size_t n = api_units(u, 512, s), i, o = 0;

	out[o++] = '"';
	for (i = 0; i < n; i++) {
		assert_true(o + 8 < outlen);
		if (u[i] >= 0x20 && u[i] < 0x7F && u[i] != '"' && u[i] != '\\')
			out[o++] = (char)u[i];
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\u%04x", u[i]);
	}
	out[o++] = '"';
	out[o] = 0;
}

/* ------------------------------------------------------------------------
 * A model of the entries put in
 */

typedef struct {
	const char *alias;     /* API form */
	int type;              /* wks_entry_type */
	const char *key_file;  /* private: inputs/ file */
	const char *chain_file;
	const char *alg;       /* secret */
	const char *key_hex;
	const char *kpw;       /* key password (NULL: the store password) */
	int iterations;        /* 0: the store's / spec default */
} ent;

static const char *ent_kpw(const ent *e, const char *store_pw)
{
	return e->kpw ? e->kpw : store_pw;
}

/* SHA-256 hex of the key bytes put in */
static void ent_key_sha(char out[65], const ent *e)
{
	if (e->type == WKS_ENTRY_PRIVATE_KEY) {
		tu_input_key_sha(out, e->key_file);
	} else {
		size_t n;
		uint8_t *k = tu_unhex(e->key_hex, &n);

		tu_sha256_hex(out, k, n);
		free(k);
	}
}

static void put_entries(wks_store *st, const ent *v, size_t n, const char *store_pw)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const ent *e = &v[i];
		char it[32];

		if (e->iterations) {
			snprintf(it, sizeof(it), "%d", e->iterations);
			TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", it));
		}
		if (e->type == WKS_ENTRY_PRIVATE_KEY) {
			TU_OK(tu_set_key_files(st, e->alias, e->key_file, e->chain_file,
			                       ent_kpw(e, store_pw)));
		} else if (e->type == WKS_ENTRY_CERTIFICATE) {
			tu_der *c;
			size_t nc = tu_pem_ders(&c, tu_input(e->chain_file), "CERTIFICATE");

			TU_OK(wks_store_set_cert_der(st, e->alias, c[0].der, c[0].len));
			tu_ders_free(c, nc);
		} else {
			size_t kl;
			uint8_t *k = tu_unhex(e->key_hex, &kl);
			const char *pw = ent_kpw(e, store_pw);

			TU_OK(wks_store_set_secret_key(st, e->alias, e->alg, k, kl, pw,
			                               strlen(pw)));
			free(k);
		}
	}
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!v)
		fail_msg("wksdump output: no field \"%s\"", k);
	return v;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);

	if (!cJSON_IsString(v))
		fail_msg("wksdump output: \"%s\" is not a string", k);
	return v->valuestring;
}

static long long jint(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);

	if (!cJSON_IsNumber(v))
		fail_msg("wksdump output: \"%s\" is not a number", k);
	return (long long)v->valuedouble;
}

static void ck_hex_eq(const char *what, const uint8_t *p, size_t n, const char *want)
{
	char *h = tu_hex_dup(p, n);

	if (strcmp(h, want) != 0)
		fail_msg("%s: %s vs wksdump %s", what, h, want);
	free(h);
}

/*
 * The structural fields of a wksdump record against libwks's decoder on
 * the same bytes: offsets, lengths, salts, IVs, iterations, MACs, aliases.
 */
static void cross_check(const cJSON *rec, const uint8_t *data, size_t len)
{
	wks_settings cfg;
	wks_entry **ev = NULL;
	wks_record_pos *pos = NULL;
	wks_file_info info;
	size_t n = 0, i = 0;
	const cJSON *si = jget(rec, "store_integrity"), *e;

	wks__settings_get(&cfg, NULL);
	TU_OK(wks__decode(&ev, &n, &pos, &info, data, len, &cfg));
	assert_int_equal(jint(rec, "size"), len);
	assert_int_equal(jint(rec, "entry_count"), n);
	assert_int_equal(jint(si, "trailer_offset"), info.trailer_offset);
	assert_int_equal(jint(si, "iterations"), info.iterations);
	assert_int_equal(jint(si, "mac_input_len"), info.mac_input_len);
	ck_hex_eq("store salt", info.salt, WKS_SALT_LEN, jstr(si, "salt_hex"));
	ck_hex_eq("store MAC", info.mac, WKS_MAC_LEN, jstr(si, "mac_hex"));
	assert_int_equal(cJSON_GetArraySize(jget(rec, "entries")), n);
	cJSON_ArrayForEach(e, jget(rec, "entries")) {
		const wks_entry *w = ev[i];
		char *mh = mutf8_hex(w->alias);

		assert_int_equal(jint(e, "index"), i);
		assert_int_equal(jint(e, "offset"), pos[i].offset);
		assert_int_equal(jint(e, "body_offset"), pos[i].body_offset);
		assert_int_equal(jint(e, "body_len"), w->body_len);
		assert_int_equal(jint(e, "type_id"), w->type);
		assert_int_equal(jint(e, "creation_time_ms"), w->created_ms);
		if (strcmp(mh, jstr(e, "alias_mutf8_hex")) != 0)
			fail_msg("alias \"%s\": modified UTF-8 %s, wksdump read %s", w->alias,
			         mh, jstr(e, "alias_mutf8_hex"));
		free(mh);
		if (w->type != WKS_ENTRY_CERTIFICATE) {
			ck_hex_eq("entry salt", w->salt, WKS_SALT_LEN, jstr(e, "kdf_salt_hex"));
			ck_hex_eq("entry IV", w->iv, WKS_IV_LEN, jstr(e, "iv_hex"));
			ck_hex_eq("entry MAC", w->body + w->mac.off, w->mac.len, jstr(e, "mac_hex"));
			assert_int_equal(jint(e, "kdf_iterations"), w->iterations);
			assert_int_equal(jint(e, "encrypted_key_len"), w->enc.len);
			assert_int_equal(jint(e, "mac_input_len"), w->mac_input_len);
		}
		i++;
	}
	free(pos);
	wks__entries_free(ev, n);
}

/* The wksdump record entry whose alias (modified UTF-8) is that of `alias`. */
static const cJSON *find_entry(const cJSON *rec, const char *alias)
{
	char *mh = mutf8_hex(alias);
	const cJSON *e, *found = NULL;

	cJSON_ArrayForEach(e, jget(rec, "entries"))
		if (strcmp(jstr(e, "alias_mutf8_hex"), mh) == 0) {
			assert_null(found);
			found = e;
		}
	if (!found)
		fail_msg("wksdump shows no entry \"%s\" (%s)", alias, mh);
	free(mh);
	return found;
}

static const char *const type_names[4] = { "none", "private_key", "certificate",
                                           "secret_key" };

/*
 * A wksdump record of a file libwks wrote from `v` against the model.  Key
 * entries whose password is not `dump_kpw` (the key password given to
 * wksdump) must fail as integrity_failure.
 */
static void check_dump_vs_model(const cJSON *rec, wks_store *st, const ent *v, size_t n,
                                const char *store_pw, const char *dump_kpw,
                                int store_iterations)
{
	size_t i;

	assert_string_equal(jstr(jget(rec, "load"), "status"), "ok");
	assert_true(cJSON_IsTrue(jget(jget(rec, "store_integrity"), "verified")));
	assert_int_equal(jint(jget(rec, "store_integrity"), "iterations"), store_iterations);
	assert_int_equal(jint(rec, "loaded_size"), n);
	assert_int_equal(jint(rec, "entry_count"), n);
	for (i = 0; i < n; i++) {
		const ent *m = &v[i];
		const cJSON *e = find_entry(rec, m->alias);
		char *uh = utf8_hex(m->alias);
		int64_t ct = 0;
		char sha[65];
		const char *kpw = ent_kpw(m, store_pw);

		assert_string_equal(jstr(e, "alias_utf8_hex"), uh);
		free(uh);
		assert_string_equal(jstr(e, "type"), type_names[m->type]);
		TU_OK(wks_store_creation_time(&ct, st, m->alias));
		assert_int_equal(jint(e, "creation_time_ms"), ct);
		if (m->type != WKS_ENTRY_SECRET_KEY) {
			tu_der *c;
			size_t nc = tu_pem_ders(&c, tu_input(m->chain_file), "CERTIFICATE"), k;
			const cJSON *cj;

			if (m->type == WKS_ENTRY_CERTIFICATE) {
				cj = jget(e, "certificate");
				tu_sha256_hex(sha, c[0].der, c[0].len);
				assert_string_equal(jstr(cj, "sha256"), sha);
				assert_string_equal(jstr(cj, "type"), "X.509");
			} else {
				const cJSON *chain = jget(e, "chain");

				assert_int_equal(cJSON_GetArraySize(chain), nc);
				for (k = 0; k < nc; k++) {
					cj = cJSON_GetArrayItem(chain, (int)k);
					tu_sha256_hex(sha, c[k].der, c[k].len);
					assert_string_equal(jstr(cj, "sha256"), sha);
					assert_string_equal(jstr(cj, "type"), "X.509");
				}
			}
			tu_ders_free(c, nc);
		}
		if (m->type == WKS_ENTRY_CERTIFICATE)
			continue;
		assert_int_equal(jint(e, "kdf_iterations"),
		                 m->iterations ? m->iterations : 10000);
		if (m->type == WKS_ENTRY_SECRET_KEY)
			assert_string_equal(jstr(e, "algorithm"), m->alg);
		if (strcmp(kpw, dump_kpw) != 0) {
			assert_string_equal(jstr(e, "key_status"), "integrity_failure");
			continue;
		}
		if (strcmp(jstr(e, "key_status"), "ok") != 0)
			fail_msg("wksdump: key of \"%s\": %s", m->alias, jstr(e, "key_status"));
		ent_key_sha(sha, m);
		assert_string_equal(jstr(jget(e, "key"), "plaintext_sha256"), sha);
		if (m->type == WKS_ENTRY_PRIVATE_KEY)
			assert_string_equal(jstr(jget(e, "key_matches_leaf"), "result"), "match");
	}
}

/*
 * libwks writes `v` (store password store_pw, trailer at store_iterations)
 * to a file; wksdump dumps it once per distinct key password.
 */
static void lib_to_dump(const char *name, const ent *v, size_t n, const char *store_pw,
                        int store_iterations)
{
	wks_store *st = tu_store_fast();
	char path[4096], it[32];
	const char *pws[16];
	size_t npw = 0, i, j, len;
	uint8_t *data;

	put_entries(st, v, n, store_pw);
	snprintf(it, sizeof(it), "%d", store_iterations);
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", it));
	snprintf(path, sizeof(path), "%s", tmp_path(name));
	TU_OK(wks_store_save_file(st, path, store_pw, strlen(store_pw)));
	data = tu_read_file(path, &len);

	for (i = 0; i < n; i++) {
		const char *k = ent_kpw(&v[i], store_pw);
		int seen = 0;

		for (j = 0; j < npw; j++)
			if (strcmp(pws[j], k) == 0)
				seen = 1;
		if (!seen && v[i].type != WKS_ENTRY_CERTIFICATE)
			pws[npw++] = k;
	}
	if (npw == 0)
		pws[npw++] = store_pw;
	for (j = 0; j < npw; j++) {
		char *q = tu_shell_quote(pws[j]);
		cJSON *out = wksdump(npw > 1 ? 1 : 0, store_pw,
		                     "dump --password-env WKS_T_PW --key-password %s %s", q, path);
		const cJSON *rec = jget(jget(out, "files"), name);

		check_dump_vs_model(rec, st, v, n, store_pw, pws[j], store_iterations);
		cross_check(rec, data, len);
		free(q);
		cJSON_Delete(out);
	}
	/* the file loads back in libwks too */
	{
		wks_store *ld = tu_store_fast();

		TU_OK(wks_store_load_buffer(ld, data, len, store_pw, strlen(store_pw)));
		assert_int_equal(wks_store_size(ld), n);
		wks_store_free(ld);
	}
	free(data);
	wks_store_free(st);
}

/* ------------------------------------------------------------------------
 * libwks -> wksdump
 */

static void test_lib_to_dump_basic(void **state)
{
	static const ent v[] = {
		{ "server-rsa", WKS_ENTRY_PRIVATE_KEY, "server-key.pem", "server-cert-chain2.pem",
		  NULL, NULL, NULL, 0 },
		{ "server-ecc", WKS_ENTRY_PRIVATE_KEY, "ecc-key.pem", "server-ecc-cert.pem",
		  NULL, NULL, NULL, 0 },
		{ "rsa-chain3", WKS_ENTRY_PRIVATE_KEY, "server-key.pem", "server-int-rsa-chain3.pem",
		  NULL, NULL, NULL, 0 },
		{ "p521", WKS_ENTRY_PRIVATE_KEY, "server-p521-key.pem", "server-p521-chain3.pem",
		  NULL, NULL, NULL, 0 },
		{ "ca", WKS_ENTRY_CERTIFICATE, NULL, "ca-cert.pem", NULL, NULL, NULL, 0 },
		{ "ca-ecc384", WKS_ENTRY_CERTIFICATE, NULL, "ca-ecc384-cert.pem", NULL, NULL, NULL, 0 },
		{ "aes", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4", NULL, 0 },
		{ "hmac", WKS_ENTRY_SECRET_KEY, NULL, NULL, "HmacSHA512",
		  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
		  "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f", NULL, 0 },
	};

	(void)state;
	/* a 10000-iteration store (entries and trailer) */
	lib_to_dump("basic.wks", v, sizeof(v) / sizeof(v[0]), PW, 10000);
}

static void test_lib_to_dump_nonascii(void **state)
{
	static const ent v[] = {
		{ "schl\xC3\xBC" "ssel-\xE6\x97\xA5\xE6\x9C\xAC-\xF0\x9F\x94\x91",
		  WKS_ENTRY_PRIVATE_KEY, "ecc-key.pem", "server-ecc-cert.pem", NULL, NULL, NULL, 0 },
		{ "nul\xC0\x80inside", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "00112233445566778899aabbccddeeff", NULL, 0 },
		{ "\xC0\x80", WKS_ENTRY_CERTIFICATE, NULL, "ca-ecc-cert.pem", NULL, NULL, NULL, 0 },
		{ "\xF0\x9F\x98\x80\xF0\x9F\x98\x80", WKS_ENTRY_CERTIFICATE, NULL, "ca-cert.pem",
		  NULL, NULL, NULL, 0 },
		{ "", WKS_ENTRY_CERTIFICATE, NULL, "ca-cert.pem", NULL, NULL, NULL, 0 },
		{ "line\r\nbreak", WKS_ENTRY_CERTIFICATE, NULL, "ca-ecc-cert.pem", NULL, NULL, NULL, 0 },
		{ "lone-\xED\xA0\x80-surrogate", WKS_ENTRY_SECRET_KEY, NULL, NULL,
		  "Alg-\xC3\xA4", "0123456789", NULL, 0 },
		{ "\xE2\x82\xAC\xCE\xA9", WKS_ENTRY_PRIVATE_KEY, "server-key.pem",
		  "server-cert-chain2.pem", NULL, NULL, NULL, 0 },
	};

	(void)state;
	lib_to_dump("nonascii.wks", v, sizeof(v) / sizeof(v[0]),
	            "P\xC3\xA4sswörd-\xCE\xA9\xCE\xBC\xCE\xAD\xCE\xB3\xCE\xB1-\xE6\x97\xA5-\xF0\x9F\x94\x91",
	            10000);
}

static void test_lib_to_dump_empty(void **state)
{
	wks_store *st = tu_store_fast();
	const char *path = "";
	char p[4096];
	cJSON *out;
	const cJSON *rec;
	uint8_t *data;
	size_t len;

	(void)state;
	snprintf(p, sizeof(p), "%s", tmp_path("empty.wks"));
	path = p;
	TU_OK(wks_store_save_file(st, path, PW, PWL));
	data = tu_read_file(path, &len);
	assert_int_equal(len, 104);
	out = wksdump(0, PW, "dump --password-env WKS_T_PW %s", path);
	rec = jget(jget(out, "files"), "empty.wks");
	assert_string_equal(jstr(jget(rec, "load"), "status"), "ok");
	assert_true(cJSON_IsTrue(jget(jget(rec, "store_integrity"), "verified")));
	assert_int_equal(jint(rec, "entry_count"), 0);
	assert_int_equal(jint(rec, "loaded_size"), 0);
	assert_int_equal(jint(rec, "size"), 104);
	cross_check(rec, data, len);
	cJSON_Delete(out);
	/* with a wrong password wksdump sees an integrity failure */
	out = wksdump(1, "wrong-password-x", "dump --password-env WKS_T_PW %s", path);
	rec = jget(jget(out, "files"), "empty.wks");
	assert_string_equal(jstr(jget(rec, "load"), "status"), "integrity_failure");
	cJSON_Delete(out);
	free(data);
	wks_store_free(st);
}

static void test_lib_to_dump_mixed_iterations(void **state)
{
	static const ent v[] = {
		{ "k10000", WKS_ENTRY_PRIVATE_KEY, "ecc-key.pem", "server-ecc-cert.pem", NULL,
		  NULL, NULL, 10000 },
		{ "s12345", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "c2bc047dc8204f1ad23f255acf7af78c", NULL, 12345 },
		{ "k20000", WKS_ENTRY_PRIVATE_KEY, "server-key.pem", "server-cert-chain2.pem",
		  NULL, NULL, NULL, 20000 },
		{ "c", WKS_ENTRY_CERTIFICATE, NULL, "ca-cert.pem", NULL, NULL, NULL, 0 },
	};

	(void)state;
	lib_to_dump("mixed-iterations.wks", v, sizeof(v) / sizeof(v[0]), PW, 11000);
}

static void test_lib_to_dump_key_passwords(void **state)
{
	/* one key password for every key, different from the store password */
	static const ent one[] = {
		{ "rsa", WKS_ENTRY_PRIVATE_KEY, "client-key.pem", "client-cert.pem", NULL, NULL,
		  "another-key-password", 0 },
		{ "ecc", WKS_ENTRY_PRIVATE_KEY, "ecc-client-key.pem", "client-ecc-cert.pem",
		  NULL, NULL, "another-key-password", 0 },
		{ "aes", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
		  "another-key-password", 0 },
	};
	/* a password per key (one non-ASCII, one equal to the store's) */
	static const ent per[] = {
		{ "rsa", WKS_ENTRY_PRIVATE_KEY, "client-key.pem", "client-cert.pem", NULL, NULL,
		  "first-key-password", 0 },
		{ "ecc", WKS_ENTRY_PRIVATE_KEY, "ecc-client-key.pem", "client-ecc-cert.pem",
		  NULL, NULL, "\xCE\xBA\xCE\xBB\xCE\xB5\xCE\xB9\xCE\xB4\xCE\xAF-\xF0\x9F\x94\x91", 0 },
		{ "aes", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4", NULL, 0 },
	};

	(void)state;
	lib_to_dump("keypass-one.wks", one, 3, PW, 10000);
	lib_to_dump("keypass-per-key.wks", per, 3, PW, 10000);
}

/* ------------------------------------------------------------------------
 * wksdump -> libwks
 */

typedef struct {
	const char *name;
	const char *store_pw;
	const char *key_pw;       /* spec "key_password", or NULL */
	int iterations;           /* spec "iterations" (trailer and default) */
	int entry_iterations;     /* spec "entry_iterations", or 0 */
	const ent *v;
	size_t n;
} wspec;

#define T0 1700000000000LL

static const char *spec_kpw(const wspec *w, const ent *e)
{
	if (e->kpw)
		return e->kpw;
	return w->key_pw ? w->key_pw : w->store_pw;
}

static int spec_iter(const wspec *w, const ent *e)
{
	if (e->iterations)
		return e->iterations;
	return w->entry_iterations ? w->entry_iterations : w->iterations;
}

/* Write the spec JSON and run `wksdump.py write`; returns its output (the
 * decoded record of the new file). */
static cJSON *dump_write(const wspec *w, char *path, size_t path_len)
{
	char spec_path[4200], s[1024];
	FILE *f;
	size_t i;
	cJSON *out;

	snprintf(path, path_len, "%s", tmp_path(w->name));
	snprintf(spec_path, sizeof(spec_path), "%s.spec.json", path);
	f = fopen(spec_path, "w");
	assert_non_null(f);
	json_str(s, sizeof(s), w->store_pw);
	fprintf(f, "{\"password\": %s, \"iterations\": %d, \"seed\": \"%s\", "
	           "\"creation_ms\": %lld", s, w->iterations, w->name, T0);
	if (w->entry_iterations)
		fprintf(f, ", \"entry_iterations\": %d", w->entry_iterations);
	if (w->key_pw) {
		json_str(s, sizeof(s), w->key_pw);
		fprintf(f, ", \"key_password\": %s", s);
	}
	fprintf(f, ", \"entries\": [");
	for (i = 0; i < w->n; i++) {
		const ent *e = &w->v[i];

		json_str(s, sizeof(s), e->alias);
		fprintf(f, "%s\n {\"alias\": %s, \"creation_ms\": %lld", i ? "," : "", s,
		        T0 + 1000 * (long long)i);
		if (e->type == WKS_ENTRY_PRIVATE_KEY) {
			/* (tu_input() returns one static buffer) */
			fprintf(f, ", \"type\": \"private_key\", \"key_file\": \"%s\"",
			        tu_input(e->key_file));
			fprintf(f, ", \"chain_files\": [\"%s\"]", tu_input(e->chain_file));
		}
		else if (e->type == WKS_ENTRY_CERTIFICATE)
			fprintf(f, ", \"type\": \"certificate\", \"cert_file\": \"%s\"",
			        tu_input(e->chain_file));
		else {
			json_str(s, sizeof(s), e->alg);
			fprintf(f, ", \"type\": \"secret_key\", \"algorithm\": %s, \"key_hex\": \"%s\"",
			        s, e->key_hex);
		}
		if (e->kpw) {
			json_str(s, sizeof(s), e->kpw);
			fprintf(f, ", \"password\": %s", s);
		}
		if (e->iterations)
			fprintf(f, ", \"iterations\": %d", e->iterations);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
	assert_int_equal(fclose(f), 0);
	out = wksdump(0, NULL, "write %s --spec %s", path, spec_path);
	assert_string_equal(jstr(jget(out, "load"), "status"), "ok");
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A store written by wksdump, loaded by libwks, against the spec. */
static void check_loaded(wks_store *st, const wspec *w, const uint8_t *data, size_t len)
{
	char **aliases = NULL, **want;
	size_t na = 0, i;
	wks_settings cfg;
	wks_entry **ev = NULL;
	size_t n = 0;
	wks_file_info info;

	/* aliases, in byte order */
	want = calloc(w->n + 1, sizeof(*want));
	assert_non_null(want);
	for (i = 0; i < w->n; i++)
		want[i] = (char *)w->v[i].alias;
	qsort(want, w->n, sizeof(*want), cmp_str);
	TU_OK(wks_store_aliases(&aliases, &na, st));
	assert_int_equal(na, w->n);
	for (i = 0; i < na; i++)
		if (strcmp(aliases[i], want[i]) != 0)
			fail_msg("alias %zu: \"%s\", want \"%s\"", i, aliases[i], want[i]);
	wks_aliases_free(aliases);
	free(want);

	wks__settings_get(&cfg, NULL);
	TU_OK(wks__decode(&ev, &n, NULL, &info, data, len, &cfg));
	assert_int_equal(info.iterations, w->iterations);
	for (i = 0; i < w->n; i++) {
		const ent *e = &w->v[i];
		int64_t ct = 0;
		const char *kpw = spec_kpw(w, e);

		assert_int_equal(wks_store_entry_type(st, e->alias), e->type);
		TU_OK(wks_store_creation_time(&ct, st, e->alias));
		assert_int_equal(ct, T0 + 1000 * (int64_t)i);
		/* file order is the spec's order */
		assert_string_equal(ev[i]->alias, e->alias);
		if (e->type != WKS_ENTRY_CERTIFICATE)
			assert_int_equal(ev[i]->iterations, spec_iter(w, e));
		if (e->type != WKS_ENTRY_SECRET_KEY) {
			tu_der *c;
			size_t nall = tu_pem_ders(&c, tu_input(e->chain_file), "CERTIFICATE");
			size_t nc = e->type == WKS_ENTRY_CERTIFICATE ? 1 : nall, k, cc = 0;

			TU_OK(wks_store_cert_count(&cc, st, e->alias));
			assert_int_equal(cc, nc);
			for (k = 0; k < nc; k++) {
				uint8_t *der = NULL;
				size_t dl = 0;

				TU_OK(wks_store_get_cert_der(&der, &dl, st, e->alias, k));
				assert_int_equal(dl, c[k].len);
				assert_memory_equal(der, c[k].der, dl);
				wks_free(der);
			}
			tu_ders_free(c, nall);
		}
		if (e->type != WKS_ENTRY_CERTIFICATE) {
			wks_key *k = NULL;
			size_t kl = 0;
			const uint8_t *d;
			char sha[65], want_sha[65];

			TU_OK(wks_store_get_key(&k, st, e->alias, kpw, strlen(kpw)));
			d = wks_key_data(k, &kl);
			tu_sha256_hex(sha, d, kl);
			ent_key_sha(want_sha, e);
			if (strcmp(sha, want_sha) != 0)
				fail_msg("key of \"%s\" differs", e->alias);
			assert_int_equal(wks_key_type(k), e->type);
			if (e->type == WKS_ENTRY_SECRET_KEY)
				assert_string_equal(wks_key_algorithm(k), e->alg);
			wks_key_free(k);
			/* a wrong key password fails */
			k = (wks_key *)1;
			TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&k, st, e->alias, "x-wrong-x", 9));
			assert_null(k);
		}
	}
	wks__entries_free(ev, n);
}

/*
 * wksdump writes the spec; libwks loads it (with, then without the
 * password); libwks saves it again; wksdump dumps that and must see the
 * same entries byte for byte (entries are copied, never re-encrypted).
 */
static void dump_to_lib(const wspec *w)
{
	char path[4096], path2[4200];
	cJSON *wr, *out;
	uint8_t *data;
	size_t len, i;
	wks_store *st = tu_store_fast();
	const cJSON *rec2;

	wr = dump_write(w, path, sizeof(path));
	data = tu_read_file(path, &len);
	cross_check(wr, data, len);
	TU_OK(wks_store_load_file(st, path, w->store_pw, strlen(w->store_pw)));
	check_loaded(st, w, data, len);
	{
		wks_store *np = tu_store_fast();

		TU_OK(wks_store_load_buffer(np, data, len, NULL, 0));
		assert_int_equal(wks_store_size(np), w->n);
		TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_load_buffer(np, data, len, "x-wrong-x", 9));
		assert_int_equal(wks_store_size(np), w->n);
		wks_store_free(np);
	}

	/* libwks saves it again (trailer at 10000), wksdump reads it */
	snprintf(path2, sizeof(path2), "%s.resaved", path);
	TU_OK(wks_store_save_file(st, path2, w->store_pw, strlen(w->store_pw)));
	{
		const char *kp = w->key_pw ? w->key_pw : w->store_pw;
		char *q = tu_shell_quote(kp);
		int all_same = 1;

		for (i = 0; i < w->n; i++)
			if (w->v[i].kpw && w->v[i].type != WKS_ENTRY_CERTIFICATE &&
			    strcmp(w->v[i].kpw, kp) != 0)
				all_same = 0;
		out = wksdump(all_same ? 0 : 1, w->store_pw,
		              "dump --password-env WKS_T_PW --key-password %s %s", q, path2);
		free(q);
	}
	{
		const char *base = strrchr(path2, '/') + 1;
		uint8_t *d2;
		size_t l2;

		rec2 = jget(jget(out, "files"), base);
		assert_string_equal(jstr(jget(rec2, "load"), "status"), "ok");
		assert_true(cJSON_IsTrue(jget(jget(rec2, "store_integrity"), "verified")));
		assert_int_equal(jint(rec2, "loaded_size"), w->n);
		d2 = tu_read_file(path2, &l2);
		cross_check(rec2, d2, l2);
		free(d2);
	}
	for (i = 0; i < w->n; i++) {
		const ent *e = &w->v[i];
		const cJSON *a = find_entry(wr, e->alias), *b = find_entry(rec2, e->alias);
		static const char *const same[] = { "alias_mutf8_hex", "type", "body_len",
		                                    "kdf_salt_hex", "iv_hex", "mac_hex", NULL };
		size_t k;

		assert_int_equal(jint(a, "creation_time_ms"), jint(b, "creation_time_ms"));
		for (k = 0; same[k]; k++) {
			const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, same[k]);
			const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, same[k]);

			if (!x && !y)
				continue;
			assert_true(x && y);
			if (cJSON_IsNumber(x))
				assert_int_equal(x->valuedouble, y->valuedouble);
			else
				assert_string_equal(x->valuestring, y->valuestring);
		}
		if (e->type != WKS_ENTRY_CERTIFICATE &&
		    strcmp(spec_kpw(w, e), w->key_pw ? w->key_pw : w->store_pw) == 0) {
			assert_string_equal(jstr(b, "key_status"), "ok");
			assert_string_equal(jstr(jget(a, "key"), "plaintext_sha256"),
			                    jstr(jget(b, "key"), "plaintext_sha256"));
		}
	}
	cJSON_Delete(out);
	cJSON_Delete(wr);
	free(data);
	wks_store_free(st);
}

static void test_dump_to_lib_mixed(void **state)
{
	static const ent v[] = {
		{ "rsa-chain3", WKS_ENTRY_PRIVATE_KEY, "server-key.pem", "server-int-rsa-chain3.pem",
		  NULL, NULL, NULL, 0 },
		{ "ecc", WKS_ENTRY_PRIVATE_KEY, "ecc-key.pem", "server-ecc-cert.pem", NULL, NULL,
		  NULL, 0 },
		{ "p384", WKS_ENTRY_PRIVATE_KEY, "client-ecc384-key.pem", "client-ecc384-chain2.pem",
		  NULL, NULL, NULL, 0 },
		{ "rsa4096", WKS_ENTRY_PRIVATE_KEY, "rsa4096-client-key.pem",
		  "rsa4096-client-cert.pem", NULL, NULL, NULL, 0 },
		{ "ca-rsa", WKS_ENTRY_CERTIFICATE, NULL, "ca-cert.pem", NULL, NULL, NULL, 0 },
		{ "ca-ecc", WKS_ENTRY_CERTIFICATE, NULL, "ca-ecc-cert.pem", NULL, NULL, NULL, 0 },
		{ "hmac", WKS_ENTRY_SECRET_KEY, NULL, NULL, "HmacSHA256",
		  "b0c610d1006081dc5d1ea03d9f1dc726be8afb564ad2a04bb7341615dc2e1437", NULL, 0 },
		{ "aes128", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "2b7e151628aed2a6abf7158809cf4f3c", NULL, 0 },
	};
	static const wspec w = { "w-mixed.wks", PW, NULL, 10000, 0, v, 8 };

	(void)state;
	dump_to_lib(&w);
}

static void test_dump_to_lib_nonascii(void **state)
{
	static const ent v[] = {
		{ "nul\xC0\x80inside", WKS_ENTRY_CERTIFICATE, NULL, "ca-cert.pem", NULL, NULL, NULL, 0 },
		{ "\xC0\x80", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "00112233445566778899aabbccddeeff", NULL, 0 },
		{ "\xF0\x9F\x94\x91", WKS_ENTRY_PRIVATE_KEY, "ecc-key.pem", "server-ecc-cert.pem",
		  NULL, NULL, "cl\xC3\xA9-\xF0\x9F\x94\x91-key", 0 },
		{ "cl\xC3\xA9-\xE6\x97\xA5\xE6\x9C\xAC-\xF0\x9F\x94\x91", WKS_ENTRY_PRIVATE_KEY,
		  "server-key.pem", "server-cert-chain2.pem", NULL, NULL, NULL, 0 },
		{ "lone-\xED\xA0\x80", WKS_ENTRY_CERTIFICATE, NULL, "ca-ecc-cert.pem", NULL, NULL,
		  NULL, 0 },
		{ "\xED\xB0\x80-low-first", WKS_ENTRY_SECRET_KEY, NULL, NULL, "HmacSHA256",
		  "0102030405060708", "another \xE2\x82\xAC password", 0 },
		{ "", WKS_ENTRY_CERTIFICATE, NULL, "ca-cert.pem", NULL, NULL, NULL, 0 },
		{ "Case", WKS_ENTRY_CERTIFICATE, NULL, "ca-cert.pem", NULL, NULL, NULL, 0 },
		{ "case", WKS_ENTRY_CERTIFICATE, NULL, "ca-ecc-cert.pem", NULL, NULL, NULL, 0 },
		{ "line\nbreak\r\n", WKS_ENTRY_CERTIFICATE, NULL, "ca-cert.pem", NULL, NULL, NULL, 0 },
	};
	static const wspec w = { "w-nonascii.wks",
	                         "p\xC3\xA4sswörd-\xE6\x97\xA5\xE6\x9C\xAC-\xF0\x9F\x94\x91",
	                         NULL, 10000, 0, v, 10 };

	(void)state;
	dump_to_lib(&w);
}

static void test_dump_to_lib_empty(void **state)
{
	static const wspec w = { "w-empty.wks", PW, NULL, 10000, 0, NULL, 0 };

	(void)state;
	dump_to_lib(&w);
}

static void test_dump_to_lib_mixed_iterations(void **state)
{
	static const ent v[] = {
		{ "k10000", WKS_ENTRY_PRIVATE_KEY, "ecc-key.pem", "server-ecc-cert.pem", NULL,
		  NULL, NULL, 10000 },
		{ "s12345", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "c2bc047dc8204f1ad23f255acf7af78c", NULL, 12345 },
		{ "k20000", WKS_ENTRY_PRIVATE_KEY, "server-key.pem", "server-cert-chain2.pem",
		  NULL, NULL, NULL, 20000 },
		{ "default", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "c2bc047dc8204f1ad23f255acf7af78c", NULL, 0 },
	};
	/* trailer 11000, entries without their own count at 10500 */
	static const wspec w = { "w-mixed-iterations.wks", PW, NULL, 11000, 10500, v, 4 };

	(void)state;
	dump_to_lib(&w);
}

static void test_dump_to_lib_key_password(void **state)
{
	static const ent v[] = {
		{ "rsa", WKS_ENTRY_PRIVATE_KEY, "client-key.pem", "client-cert.pem", NULL, NULL,
		  NULL, 0 },
		{ "ecc", WKS_ENTRY_PRIVATE_KEY, "ecc-client-key.pem", "client-ecc-cert.pem", NULL,
		  NULL, NULL, 0 },
		{ "aes", WKS_ENTRY_SECRET_KEY, NULL, NULL, "AES",
		  "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4", NULL, 0 },
	};
	static const wspec w = { "w-keypass.wks", PW, "another-key-password", 10000, 0, v, 3 };
	wks_store *st = tu_store_fast();
	char path[4096];
	size_t i;

	(void)state;
	dump_to_lib(&w);
	/* the store password does not open the keys */
	snprintf(path, sizeof(path), "%s", tmp_path("w-keypass.wks"));
	TU_OK(wks_store_load_file(st, path, PW, PWL));
	for (i = 0; i < 3; i++) {
		wks_key *k = (wks_key *)1;

		TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&k, st, v[i].alias, PW, PWL));
		assert_null(k);
	}
	wks_store_free(st);
}

/* The command-line entry form of `wksdump.py write` (--key/--cert/--secret). */
static void test_dump_cli_write(void **state)
{
	char path[4096];
	cJSON *out;
	wks_store *st = tu_store_fast();
	char *q = tu_shell_quote("n\xC3\xB6n-ascii \xF0\x9F\x94\x91 store pw");
	char *kq = tu_shell_quote("k\xC3\xA9y pw");
	wks_key *k = NULL;
	size_t kl = 0;
	char sha[65], want[65];
	int64_t ct = 0;
	char *f1 = strdup(tu_input("ecc-key.pem")), *f2 = strdup(tu_input("server-ecc-cert.pem"));
	char *f3 = strdup(tu_input("ca-ecc-cert.pem"));

	(void)state;
	snprintf(path, sizeof(path), "%s", tmp_path("cli.wks"));
	out = wksdump(0, NULL,
	              "write %s --password %s --key-password %s --iterations 10000 "
	              "--time-ms 1600000000000 --seed cli "
	              "--key 'server \xC3\xA9' %s %s --cert ca %s "
	              "--secret k\xC3\xA4y AES 00112233445566778899aabbccddeeff",
	              path, q, kq, f1, f2, f3);
	free(f1);
	free(f2);
	free(f3);
	cJSON_Delete(out);
	TU_OK(wks_store_load_file(st, path, "n\xC3\xB6n-ascii \xF0\x9F\x94\x91 store pw",
	                          strlen("n\xC3\xB6n-ascii \xF0\x9F\x94\x91 store pw")));
	assert_int_equal(wks_store_size(st), 3);
	TU_OK(wks_store_creation_time(&ct, st, "ca"));
	assert_int_equal(ct, 1600000000000LL);
	TU_OK(wks_store_get_key(&k, st, "server \xC3\xA9", "k\xC3\xA9y pw", strlen("k\xC3\xA9y pw")));
	{
		const uint8_t *d = wks_key_data(k, &kl);

		tu_sha256_hex(sha, d, kl);
	}
	tu_input_key_sha(want, "ecc-key.pem");
	assert_string_equal(sha, want);
	wks_key_free(k);
	TU_OK(wks_store_get_key(&k, st, "k\xC3\xA4y", "k\xC3\xA9y pw", strlen("k\xC3\xA9y pw")));
	{
		const uint8_t *d = wks_key_data(k, &kl);

		assert_int_equal(kl, 16);
		assert_int_equal(d[15], 0xff);
	}
	assert_string_equal(wks_key_algorithm(k), "AES");
	wks_key_free(k);
	free(q);
	free(kq);
	wks_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lib_to_dump_basic),
		cmocka_unit_test(test_lib_to_dump_nonascii),
		cmocka_unit_test(test_lib_to_dump_empty),
		cmocka_unit_test(test_lib_to_dump_mixed_iterations),
		cmocka_unit_test(test_lib_to_dump_key_passwords),
		cmocka_unit_test(test_dump_to_lib_mixed),
		cmocka_unit_test(test_dump_to_lib_nonascii),
		cmocka_unit_test(test_dump_to_lib_empty),
		cmocka_unit_test(test_dump_to_lib_mixed_iterations),
		cmocka_unit_test(test_dump_to_lib_key_password),
		cmocka_unit_test(test_dump_cli_write),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
