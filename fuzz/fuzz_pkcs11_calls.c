/*
 * fuzz_pkcs11_calls: the PKCS#11 module (libwks-pkcs11.so, pkcs11/,
 * docs/PKCS11.md) driven through its function list by sequences of C_*
 * calls decoded from the input: a stateful target.
 *
 * Start-up (once): an RSA-1024, a P-256 and a P-256 key with a password of
 * its own, an AES-256 and an HMAC key in store "a"; a P-384 key and an
 * AES-128 key in store "b"; a copy of "a" as the read-only token "ro".
 * Made with libwks (linked here; the module carries its own copy) at
 * FUZZ_P11_ITER iterations in a temporary folder, with a configuration
 * file named by WKS_PKCS11_CONF; the module is dlopen()ed.  Every secret
 * value (RSA d, p, q, dP, dQ, qInv; the EC scalars; the AES and HMAC key
 * bytes) is kept for the leak oracle.
 *
 * Each input: a session per token (and, after C_Initialize or a store
 * restored, a prologue in it: C_Login with the right PIN, every object
 * found and its class, CKA_PRIVATE, CKA_TOKEN and label read, C_Logout;
 * the sessions stay open), then at
 * most MAX_CALLS calls decoded from the input (see the op_* functions:
 * sessions opened and closed, C_Login/C_Logout with right and wrong PINs
 * and user types, finds with random templates, C_GetAttributeValue with
 * NULL, short, exact and huge buffers, C_CopyObject, C_CreateObject,
 * C_SetAttributeValue, C_DestroyObject, sign/verify/encrypt/decrypt/
 * digest inits with random mechanisms and parameters and their one-shot,
 * update and final calls, C_DeriveKey, C_GenerateKey, C_GenerateRandom,
 * C_DigestKey; templates whose lengths lie: {type, NULL, n > 0}, bools of
 * the wrong size, NULL templates with a count; handles chosen among the
 * live, closed, destroyed, other-token and random ones), then
 * C_CloseAllSessions on every token (which ends the logins, session
 * objects and operations); a store file the calls changed is copied back
 * from its pristine copy and an attribute record the module wrote beside
 * it (STORE.p11) removed, and the token objects are then learnt anew at
 * the next input (the module reloads a changed store; it is finalised and
 * initialised again every RESET_EVERY inputs).
 *
 * Oracles (abort on violation; beyond "no crash, no sanitizer report"):
 *  - no byte string the module returns (an attribute value, a signature,
 *    a ciphertext or plaintext, a digest, random bytes) contains any
 *    token key's secret value (16-byte windows at its start, middle and
 *    end);
 *  - a closed session's handle, and CK_INVALID_HANDLE, are never
 *    accepted; an object handle that was destroyed (C_DestroyObject, a
 *    session object of a closed session), that belongs to another token,
 *    or that names a private object while the token is not logged in as
 *    the user, is never accepted (no call taking it returns CKR_OK), and
 *    never found by C_FindObjects;
 *  - a token key, or any copy of one, is not usable (C_SignInit,
 *    C_DecryptInit, C_EncryptInit, C_DeriveKey fail) while its token is
 *    not logged in as the user.
 *
 * FUZZ_P11_SEEDS=DIR writes the seed inputs (hand-written call
 * sequences, encoded by the seed_* functions below) into DIR and exits.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <wks/wks.h>

#include "pkcs11v3.h"

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif
#ifndef FUZZ_INIT
#define FUZZ_INIT LLVMFuzzerInitialize
#endif

/* PBKDF2 iterations of the stores: 2 where the build accepts it (fuzz
 * builds, WKS_FUZZING), else the minimum of every other build. */
#ifdef WKS_FUZZING
#define FUZZ_P11_ITER "2"
#else
#define FUZZ_P11_ITER "10000"
#endif
/* What the module writes (the tokens' wolfjce.wks.iterationCount): 10000
 * in every build, since the attribute record beside a store
 * (pkcs11/recfile.c) takes a count below 10000 for its default of
 * 210000, which would make every write cost a second of PBKDF2. */
#define FUZZ_P11_WRITE_ITER "10000"

#define MAX_CALLS 48
#define NSLOTS 3
#define MAX_SESS 16
#define MAX_OBJS 96
#define MAX_TMPL 8
#define VAL_MAX 1024      /* a template value from the input */
#define ATTR_BUF 4096     /* a C_GetAttributeValue buffer (real size) */
#define DATA_MAX 8192     /* data for sign/encrypt/... */
#define OUT_BUF (DATA_MAX + 4096)

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

#define DIE(...) do { \
	fprintf(stderr, "FUZZ_CHECK failed (%s:%d): ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fprintf(stderr, "\n"); \
	abort(); \
} while (0)

/* ---- the fixture: stores, keys, secrets, the module ---------------------- */

static CK_FUNCTION_LIST *F;
static char dir[256], conf_path[300];
static char store_path[NSLOTS][300], orig_path[NSLOTS][300];
static struct stat store_st[NSLOTS];

static const char *const pins[NSLOTS] = { "pin of a", "pin of b", "pin of a" };
#define OWN_PW "own key password"

typedef struct {
	unsigned char *p;
	size_t n;
	char what[32];
} secret;
static secret secrets[24];
static size_t nsecrets;

static unsigned char peer_point[65]; /* a P-256 point (ECDH peer) */

static void add_secret(const unsigned char *p, size_t n, const char *what)
{
	secret *s = &secrets[nsecrets++];

	if (nsecrets > sizeof(secrets) / sizeof(secrets[0]) || n < 8)
		DIE("secret table");
	if (!(s->p = malloc(n)))
		DIE("malloc");
	memcpy(s->p, p, n);
	s->n = n;
	snprintf(s->what, sizeof(s->what), "%s", what);
}

static void add_bn_secret(const EVP_PKEY *pk, const char *param, size_t pad,
			  const char *what)
{
	BIGNUM *bn = NULL;
	unsigned char buf[1024];
	int n;

	if (!EVP_PKEY_get_bn_param(pk, param, &bn))
		DIE("%s: no %s", what, param);
	n = pad ? BN_bn2binpad(bn, buf, (int)pad) : BN_bn2bin(bn, buf);
	BN_clear_free(bn);
	if (n <= 0)
		DIE("%s: bn2bin", what);
	add_secret(buf, (size_t)n, what);
}

/* An RSA-1024 or EC key.  (The module writes the RSA numbers minimal and
 * an EC scalar padded to the order's length, as the secrets are kept.) */
static EVP_PKEY *make_key(const char *type, const char *arg)
{
	EVP_PKEY *pk = strcmp(type, "RSA") == 0 ?
		EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024) :
		EVP_PKEY_Q_keygen(NULL, NULL, "EC", arg);

	if (!pk)
		DIE("keygen %s", type);
	return pk;
}

static X509 *self_signed(EVP_PKEY *key, const char *cn)
{
	X509 *x = X509_new();
	X509_NAME *n;

	if (!x)
		DIE("X509_new");
	n = X509_get_subject_name(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 3650);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, n);
	if (X509_sign(x, key, EVP_sha256()) <= 0)
		DIE("X509_sign");
	return x;
}

static void put_pkey(wks_store *st, const char *alias, EVP_PKEY *pk,
		     const char *pw)
{
	X509 *x = self_signed(pk, alias);
	int err = wks_store_set_pkey(st, alias, pk, &x, 1, pw, strlen(pw));

	X509_free(x);
	if (err)
		DIE("set_pkey %s: %d", alias, err);
}

static void put_secret(wks_store *st, const char *alias, const char *alg,
		       size_t n, const char *pw)
{
	unsigned char k[32];

	/* no zero byte at the ends, so that short windows stay specific */
	do {
		if (RAND_bytes(k, (int)n) != 1)
			DIE("RAND_bytes");
	} while (k[0] == 0 || k[n - 1] == 0);
	if (wks_store_set_secret_key(st, alias, alg, k, n, pw, strlen(pw)))
		DIE("set_secret_key %s", alias);
	add_secret(k, n, alias);
}

static void rsa_secrets(EVP_PKEY *pk, const char *alias)
{
	char w[32];

	snprintf(w, sizeof(w), "%s d", alias);
	add_bn_secret(pk, OSSL_PKEY_PARAM_RSA_D, 0, w);
	snprintf(w, sizeof(w), "%s p", alias);
	add_bn_secret(pk, OSSL_PKEY_PARAM_RSA_FACTOR1, 0, w);
	snprintf(w, sizeof(w), "%s q", alias);
	add_bn_secret(pk, OSSL_PKEY_PARAM_RSA_FACTOR2, 0, w);
	snprintf(w, sizeof(w), "%s dP", alias);
	add_bn_secret(pk, OSSL_PKEY_PARAM_RSA_EXPONENT1, 0, w);
	snprintf(w, sizeof(w), "%s dQ", alias);
	add_bn_secret(pk, OSSL_PKEY_PARAM_RSA_EXPONENT2, 0, w);
	snprintf(w, sizeof(w), "%s qInv", alias);
	add_bn_secret(pk, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, 0, w);
}

static void ec_secret(EVP_PKEY *pk, const char *alias)
{
	char w[32];

	snprintf(w, sizeof(w), "%s scalar", alias);
	add_bn_secret(pk, OSSL_PKEY_PARAM_PRIV_KEY,
		      (size_t)(EVP_PKEY_get_bits(pk) + 7) / 8, w);
}

static void copy_file(const char *from, const char *to)
{
	char tmp[400], buf[65536];
	FILE *in = fopen(from, "rb"), *out;
	size_t n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
	if (!in || !(out = fopen(tmp, "wb")))
		DIE("copy %s: %s", from, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			DIE("write %s", tmp);
	fclose(in);
	if (fclose(out) != 0 || rename(tmp, to) != 0)
		DIE("rename %s", to);
}

static void rm_tree(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[600];

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

static void make_stores(void)
{
	const char *tmp = getenv("TMPDIR");
	wks_store *a = NULL, *b = NULL;
	EVP_PKEY *rsa, *ec, *own, *ec2, *peer;
	FILE *f;
	size_t plen = sizeof(peer_point);

	snprintf(dir, sizeof(dir), "%s/fuzz-p11-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		DIE("mkdtemp: %s", strerror(errno));
	atexit(rm_tree);
	if (wks_store_new(&a) || wks_store_new(&b) ||
	    wks_store_set_property(a, "wolfjce.wks.iterationCount",
				   FUZZ_P11_ITER) ||
	    wks_store_set_property(b, "wolfjce.wks.iterationCount",
				   FUZZ_P11_ITER))
		DIE("store");
	rsa = make_key("RSA", NULL);
	ec = make_key("EC", "P-256");
	own = make_key("EC", "P-256");
	ec2 = make_key("EC", "P-384");
	peer = make_key("EC", "P-256");
	put_pkey(a, "rsa", rsa, pins[0]);
	rsa_secrets(rsa, "rsa");
	put_pkey(a, "ec", ec, pins[0]);
	ec_secret(ec, "ec");
	put_pkey(a, "own", own, OWN_PW);
	ec_secret(own, "own");
	put_secret(a, "aes", "AES", 32, pins[0]);
	put_secret(a, "hmac", "HmacSHA256", 32, pins[0]);
	put_pkey(b, "ec2", ec2, pins[1]);
	ec_secret(ec2, "ec2");
	put_secret(b, "aes2", "AES", 16, pins[1]);
	if (!EVP_PKEY_get_octet_string_param(peer, OSSL_PKEY_PARAM_PUB_KEY,
					     peer_point, sizeof(peer_point),
					     &plen) || plen != 65)
		DIE("peer point");
	for (int i = 0; i < NSLOTS; i++) {
		snprintf(store_path[i], sizeof(store_path[i]), "%s/%c.wks",
			 dir, "abr"[i]);
		snprintf(orig_path[i], sizeof(orig_path[i]), "%s/%c.orig",
			 dir, "abr"[i]);
	}
	if (wks_store_save_file(a, orig_path[0], pins[0], strlen(pins[0])) ||
	    wks_store_save_file(b, orig_path[1], pins[1], strlen(pins[1])))
		DIE("save");
	copy_file(orig_path[0], orig_path[2]);
	for (int i = 0; i < NSLOTS; i++) {
		copy_file(orig_path[i], store_path[i]);
		if (stat(store_path[i], &store_st[i]) != 0)
			DIE("stat");
	}
	wks_store_free(a);
	wks_store_free(b);
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(ec);
	EVP_PKEY_free(own);
	EVP_PKEY_free(ec2);
	EVP_PKEY_free(peer);

	snprintf(conf_path, sizeof(conf_path), "%s/wks-pkcs11.conf", dir);
	if (!(f = fopen(conf_path, "w")))
		DIE("conf");
	fprintf(f, "[token]\nlabel = a\nstore = %s\n"
		"wolfjce.wks.iterationCount = %s\n\n"
		"[token]\nlabel = b\nstore = %s\n"
		"wolfjce.wks.iterationCount = %s\n\n"
		"[token]\nlabel = ro\nstore = %s\nread-only = yes\n",
		store_path[0], FUZZ_P11_WRITE_ITER, store_path[1],
		FUZZ_P11_WRITE_ITER, store_path[2]);
	fclose(f);
}

/* A store the calls changed gets its pristine bytes back; 1 if one
 * did. */
static int restore_stores(void)
{
	int changed = 0;

	for (int i = 0; i < NSLOTS; i++) {
		struct stat st;

		if (stat(store_path[i], &st) == 0 &&
		    st.st_ino == store_st[i].st_ino &&
		    st.st_size == store_st[i].st_size &&
		    st.st_mtim.tv_sec == store_st[i].st_mtim.tv_sec &&
		    st.st_mtim.tv_nsec == store_st[i].st_mtim.tv_nsec)
			continue;
		copy_file(orig_path[i], store_path[i]);
		if (stat(store_path[i], &store_st[i]) != 0)
			DIE("stat");
		changed = 1;
	}
	/* the attribute record beside each store (docs/PKCS11.md): none in
	 * the pristine state */
	for (int i = 0; i < NSLOTS; i++) {
		char rec[sizeof(store_path[i]) + 8];

		if ((size_t)snprintf(rec, sizeof(rec), "%s.p11", store_path[i]) >=
		    sizeof(rec))
			DIE("path");
		if (unlink(rec) == 0)
			changed = 1;
		else if (errno != ENOENT)
			DIE("unlink %s: %s", rec, strerror(errno));
	}
	return changed;
}

/* ---- the leak oracle ------------------------------------------------------ */

static void check_leak(const void *buf, size_t len, const char *where)
{
	if (!buf || !len)
		return;
	for (size_t i = 0; i < nsecrets; i++) {
		const secret *s = &secrets[i];
		size_t w = s->n < 16 ? s->n : 16;
		size_t offs[3] = { 0, (s->n - w) / 2, s->n - w };

		for (int k = 0; k < 3; k++)
			if (memmem(buf, len, s->p + offs[k], w))
				DIE("%s returned bytes of the token key "
				    "secret \"%s\" (offset %zu)", where,
				    s->what, offs[k]);
	}
}

/* FUZZ_P11_TRACE=1: every call and its result on stderr (for reading
 * a failing input). */
static int trace;

static void trace_rv(const char *call, CK_RV rv)
{
	unsigned long e;

	if (!trace)
		return;
	fprintf(stderr, "  %s -> 0x%lx\n", call, (unsigned long)rv);
	/* what the call left on the caller's OpenSSL error queue */
	while ((e = ERR_get_error()) != 0)
		fprintf(stderr, "    (left on the error queue: %s)\n",
			ERR_error_string(e, NULL));
}

static void trace_tmpl(const char *what, const CK_ATTRIBUTE *t, CK_ULONG n)
{
	if (!trace)
		return;
	fprintf(stderr, "  %s template:%s", what, t ? "" : " NULL,");
	for (CK_ULONG i = 0; t && i < n; i++) {
		fprintf(stderr, " {0x%lx, ", (unsigned long)t[i].type);
		if (!t[i].pValue)
			fprintf(stderr, "NULL, %lu}", (unsigned long)t[i].ulValueLen);
		else if (t[i].ulValueLen == 1)
			fprintf(stderr, "%s}", *(const CK_BBOOL *)t[i].pValue ?
				"true" : "false");
		else
			fprintf(stderr, "%lu bytes}",
				(unsigned long)t[i].ulValueLen);
	}
	fprintf(stderr, " (%lu)\n", (unsigned long)n);
}

/* ---- the input -------------------------------------------------------------- */

typedef struct {
	const uint8_t *p;
	size_t n;
} rd;

static uint8_t u8(rd *r)
{
	uint8_t v;

	if (!r->n)
		return 0;
	v = *r->p++;
	r->n--;
	return v;
}

static uint16_t u16(rd *r)
{
	return (uint16_t)(u8(r) << 8 | u8(r));
}

static uint32_t u32(rd *r)
{
	return (uint32_t)u16(r) << 16 | u16(r);
}

/* n bytes of the input (fewer at its end), copied to dst. */
static size_t take(rd *r, unsigned char *dst, size_t n)
{
	if (n > r->n)
		n = r->n;
	memcpy(dst, r->p, n);
	r->p += n;
	r->n -= n;
	return n;
}

/* ---- the harness's model of the module's state ---------------------------- */

enum { L_NONE, L_USER, L_SO };

typedef struct {
	CK_SESSION_HANDLE h;
	int slot;
	int open;
} sess;

typedef struct {
	CK_OBJECT_HANDLE h;
	int slot;
	int dead;          /* destroyed (by us, or with its session) */
	int known;         /* class/private/token read back */
	CK_OBJECT_CLASS cls;
	int priv;          /* CKA_PRIVATE true */
	int token;         /* CKA_TOKEN true */
	int tokkey;        /* a token private/secret key, or a copy of one */
	CK_SESSION_HANDLE owner; /* session objects */
	char label[40];    /* token objects: the label read at the prologue */
} obj;

static sess S[MAX_SESS];
static size_t nS;
static obj O[MAX_OBJS];
static size_t nO;
static int login[NSLOTS];
static int renamed[NSLOTS]; /* a label changed: labels no longer known */
static unsigned calls;

static unsigned char outbuf[OUT_BUF];
static unsigned char databuf[DATA_MAX];
static unsigned char attrbuf[MAX_TMPL][ATTR_BUF];
#if ATTR_BUF != 4096 || MAX_TMPL < 8
#error "read_secrets() needs 8 buffers of 4096 bytes"
#endif
static unsigned char valbuf[MAX_TMPL][VAL_MAX];
static unsigned char parambuf[512], parambuf2[512], parambuf3[512];

static obj *obj_of(CK_OBJECT_HANDLE h)
{
	for (size_t i = 0; i < nO; i++)
		if (O[i].h == h)
			return &O[i];
	return NULL;
}

static int nopen_slot(int slot)
{
	int n = 0;

	for (size_t i = 0; i < nS; i++)
		n += S[i].open && S[i].slot == slot;
	return n;
}

/* A session closed: its session objects are gone, and the login with the
 * token's last session. */
static void session_closed(sess *s)
{
	s->open = 0;
	for (size_t i = 0; i < nO; i++)
		if (!O[i].token && O[i].owner == s->h)
			O[i].dead = 1;
	if (!nopen_slot(s->slot))
		login[s->slot] = L_NONE;
}


/* Every attribute that can hold a key's secret, read back from each new
 * object (CKA_ALWAYS_AUTHENTICATE and CKA_VALUE_LEN first: reading them
 * decrypts a token key, docs/PKCS11.md), as any program could: none may
 * return a token key's secret. */
static void read_secrets(const obj *o, CK_SESSION_HANDLE hs)
{
	static const CK_ATTRIBUTE_TYPE types[] = {
		CKA_ALWAYS_AUTHENTICATE, CKA_VALUE_LEN, CKA_PRIVATE_EXPONENT,
		CKA_PRIME_1, CKA_PRIME_2, CKA_EXPONENT_1, CKA_EXPONENT_2,
		CKA_COEFFICIENT,
	};
	CK_ATTRIBUTE t[9];

	for (size_t i = 0; i < 9; i++) {
		memset(attrbuf[i % 8], 0, sizeof(attrbuf[0]));
		t[i].type = i < 8 ? types[i] : CKA_VALUE;
		t[i].pValue = i < 8 ? attrbuf[i] : outbuf;
		t[i].ulValueLen = i < 8 ? sizeof(attrbuf[0]) : 4096;
	}
	memset(outbuf, 0, 4096);
	(void)F->C_GetAttributeValue(hs, o->h, t, 9);
	for (size_t i = 0; i < 8; i++)
		check_leak(attrbuf[i], sizeof(attrbuf[0]),
			   "C_GetAttributeValue (of a new object)");
	check_leak(outbuf, 4096, "C_GetAttributeValue (of a new object)");
	memset(outbuf, 0, 4096);
}

/* Read back what the model needs of a new (or found) object: with its
 * session, logged in as it was made. */
static void learn(obj *o, CK_SESSION_HANDLE hs)
{
	CK_OBJECT_CLASS cls = (CK_ULONG)-1;
	CK_BBOOL pv = 0, tk = 0;
	CK_ATTRIBUTE t[4] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_PRIVATE, &pv, 1 },
		{ CKA_TOKEN, &tk, 1 },
		{ CKA_LABEL, o->label, sizeof(o->label) - 1 },
	};
	CK_RV rv;

	memset(o->label, 0, sizeof(o->label));
	rv = F->C_GetAttributeValue(hs, o->h, t, 4);
	check_leak(o->label, sizeof(o->label), "C_GetAttributeValue(label)");
	if ((rv == CKR_OK || rv == CKR_BUFFER_TOO_SMALL) &&
	    t[0].ulValueLen == sizeof(cls) && t[1].ulValueLen == 1 &&
	    t[2].ulValueLen == 1) {
		o->known = 1;
		o->cls = cls;
		o->priv = pv != 0;
		o->token = tk != 0;
		if (t[3].ulValueLen == CK_UNAVAILABLE_INFORMATION ||
		    t[3].ulValueLen >= sizeof(o->label))
			o->label[0] = 0;
		else
			o->label[t[3].ulValueLen] = 0;
	} else {
		/* unknown: treated as private, never as destroyed */
		o->known = 0;
		o->priv = 1;
		o->label[0] = 0;
	}
	read_secrets(o, hs);
}

static obj *add_obj(CK_OBJECT_HANDLE h, int slot, CK_SESSION_HANDLE hs,
		    int tokkey)
{
	obj *o;

	if ((o = obj_of(h)) != NULL) {
		/* a handle the module gave out again */
		if (o->dead)
			DIE("a destroyed object's handle %lu came back from "
			    "a new object", (unsigned long)h);
		return o;
	}
	if (nO == MAX_OBJS)
		return NULL;
	o = &O[nO++];
	memset(o, 0, sizeof(*o));
	o->h = h;
	o->slot = slot;
	o->owner = hs;
	learn(o, hs);
	o->tokkey = tokkey ||
		    (o->known && o->token &&
		     (o->cls == CKO_PRIVATE_KEY || o->cls == CKO_SECRET_KEY));
	return o;
}

/* ---- choosers ------------------------------------------------------------- */

/* A session: an open one (by index), a closed one, a random handle or
 * CK_INVALID_HANDLE.  *bad: the module must refuse it. */
static CK_SESSION_HANDLE pick_sess(rd *r, sess **ps, int *bad)
{
	uint8_t sel = u8(r) % 6, idx = u8(r);
	size_t open = 0, closed = 0;

	*ps = NULL;
	*bad = 0;
	for (size_t i = 0; i < nS; i++)
		S[i].open ? open++ : closed++;
	if (sel == 3 && closed) {
		size_t k = idx % closed;

		for (size_t i = 0; i < nS; i++)
			if (!S[i].open && k-- == 0) {
				*bad = 1;
				return S[i].h;
			}
	}
	if (sel == 4)
		return (CK_SESSION_HANDLE)u32(r);
	if (sel == 5 || !open) {
		*bad = 1;
		return CK_INVALID_HANDLE;
	}
	idx %= open;
	for (size_t i = 0; i < nS; i++)
		if (S[i].open && idx-- == 0) {
			*ps = &S[i];
			if (trace)
				fprintf(stderr, "   session %lu (token %d, "
					"login %d)\n", (unsigned long)S[i].h,
					S[i].slot, login[S[i].slot]);
			return S[i].h;
		}
	DIE("pick_sess");
}

static const CK_OBJECT_CLASS classes[] = {
	CKO_PRIVATE_KEY, CKO_SECRET_KEY, CKO_PUBLIC_KEY, CKO_CERTIFICATE,
	CKO_DATA,
};
static const char *const labels[] = {
	"rsa", "ec", "own", "aes", "hmac", "ec2", "aes2", "x",
};

static obj *by_kind(int slot, CK_OBJECT_CLASS cls, const char *label)
{
	obj *any = NULL;

	for (size_t i = 0; i < nO; i++) {
		if (O[i].slot != slot || !O[i].known || O[i].cls != cls)
			continue;
		if (strcmp(O[i].label, label) == 0)
			return &O[i];
		if (!any)
			any = &O[i];
	}
	return any;
}

/* An object: from the model (by index, by class and label on the
 * session's token or another, the newest, a destroyed one), a random
 * handle, or CK_INVALID_HANDLE. */
static CK_OBJECT_HANDLE pick_obj(rd *r, const sess *s, obj **po)
{
	uint8_t sel = u8(r) % 8, a = u8(r), b = u8(r);
	int slot = s ? s->slot : 0;
	obj *o = NULL;

	*po = NULL;
	switch (sel) {
	case 0:
		o = nO ? &O[a % nO] : NULL;
		break;
	case 1:
	case 2:
		if (sel == 2)
			slot = (slot + 1 + b % 2) % NSLOTS;
		o = by_kind(slot, classes[a % 5],
			    labels[(a / 5 + b) % (sizeof(labels) /
						   sizeof(labels[0]))]);
		break;
	case 3:
		o = nO ? &O[nO - 1 - a % nO] : NULL;
		break;
	case 4:
		for (size_t i = 0, k = a; i < nO; i++)
			if (O[i].dead && k-- == 0)
				o = &O[i];
		break;
	case 5:
		return (CK_OBJECT_HANDLE)u32(r);
	case 6:
		return CK_INVALID_HANDLE;
	default:
		o = nO ? &O[nO - 1] : NULL;
		break;
	}
	if (!o)
		return (CK_OBJECT_HANDLE)a;
	*po = o;
	if (trace)
		fprintf(stderr, "   object %lu: token %d, %s%s%s%s\"%s\" class %lu\n",
			(unsigned long)o->h, o->slot, o->dead ? "destroyed, " : "",
			o->priv ? "private, " : "", o->token ? "token, " : "",
			o->tokkey ? "token key, " : "", o->label,
			(unsigned long)o->cls);
	return o->h;
}

/* Must a call with this (valid) session and object fail?  use: the call
 * uses the object's key material. */
static int obj_bad(const sess *s, const obj *o, CK_OBJECT_HANDLE h, int use)
{
	if (h == CK_INVALID_HANDLE)
		return 1;
	if (!s || !o)
		return 0;
	if (o->dead || o->slot != s->slot)
		return 1;
	if (o->priv && login[s->slot] != L_USER)
		return 1;
	if (use && o->tokkey && login[s->slot] != L_USER)
		return 1;
	return 0;
}

static void expect_fail(int bad, CK_RV rv, const char *call)
{
	if (bad && rv == CKR_OK)
		DIE("%s accepted a handle it must refuse (closed session, "
		    "destroyed, another token's or private while logged "
		    "out)", call);
}

static int slot_of(rd *r)
{
	uint8_t v = u8(r);

	return v % 8 < NSLOTS ? v % 8 : (int)(v % 8);
}

/* ---- templates ------------------------------------------------------------ */

static const CK_ATTRIBUTE_TYPE atypes[] = {
	CKA_CLASS, CKA_TOKEN, CKA_PRIVATE, CKA_LABEL, CKA_ID, CKA_VALUE,
	CKA_KEY_TYPE, CKA_SENSITIVE, CKA_EXTRACTABLE, CKA_PRIVATE_EXPONENT,
	CKA_PRIME_1, CKA_PRIME_2, CKA_EXPONENT_1, CKA_EXPONENT_2,
	CKA_COEFFICIENT, CKA_MODULUS, CKA_PUBLIC_EXPONENT, CKA_EC_PARAMS,
	CKA_EC_POINT, CKA_VALUE_LEN, CKA_SIGN, CKA_VERIFY, CKA_ENCRYPT,
	CKA_DECRYPT, CKA_DERIVE, CKA_WRAP, CKA_UNWRAP, CKA_MODIFIABLE,
	CKA_COPYABLE, CKA_DESTROYABLE, CKA_ALWAYS_AUTHENTICATE,
	CKA_ALWAYS_SENSITIVE, CKA_NEVER_EXTRACTABLE, CKA_UNIQUE_ID,
	CKA_CERTIFICATE_TYPE, CKA_TRUSTED, CKA_SUBJECT, CKA_ISSUER,
	CKA_SERIAL_NUMBER, CKA_ALLOWED_MECHANISMS, CKA_PUBLIC_KEY_INFO,
	CKA_CHECK_VALUE, CKA_START_DATE, CKA_END_DATE, CKA_MODULUS_BITS,
	CKA_LOCAL, CKA_KEY_GEN_MECHANISM, CKA_APPLICATION, CKA_OBJECT_ID,
	CKA_CERTIFICATE_CATEGORY, CKA_WRAP_TEMPLATE, CKA_VENDOR_DEFINED,
};
#define NATYPES (sizeof(atypes) / sizeof(atypes[0]))

static const CK_ULONG ulongs[] = {
	CKO_DATA, CKO_CERTIFICATE, CKO_PUBLIC_KEY, CKO_PRIVATE_KEY,
	CKO_SECRET_KEY, CKK_RSA, CKK_EC, CKK_AES, CKK_GENERIC_SECRET,
	CKK_EC_EDWARDS, 16, 24, 32, 0, 1, (CK_ULONG)-1, 0x7fffffff, 1024,
};
#define NULONGS (sizeof(ulongs) / sizeof(ulongs[0]))

static const unsigned char oid_p256[] = {
	0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
static const unsigned char oid_p384[] = {
	0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22 };
static const unsigned char oid_ed25519[] = { 0x06, 0x03, 0x2b, 0x65, 0x70 };

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
static CK_ULONG ulvals[MAX_TMPL];

/* The compact forms (a byte per attribute): the boolean attributes a
 * template sets, and the attributes whose reading matters most. */
static const CK_ATTRIBUTE_TYPE cbools[16] = {
	CKA_TOKEN, CKA_PRIVATE, CKA_SENSITIVE, CKA_EXTRACTABLE,
	CKA_MODIFIABLE, CKA_COPYABLE, CKA_DESTROYABLE, CKA_SIGN, CKA_DECRYPT,
	CKA_ENCRYPT, CKA_DERIVE, CKA_ALWAYS_AUTHENTICATE, CKA_WRAP,
	CKA_UNWRAP, CKA_TRUSTED, CKA_VERIFY,
};
static const CK_ATTRIBUTE_TYPE cgets[16] = {
	CKA_PRIVATE_EXPONENT, CKA_PRIME_1, CKA_PRIME_2, CKA_EXPONENT_1,
	CKA_EXPONENT_2, CKA_COEFFICIENT, CKA_VALUE, CKA_VALUE_LEN,
	CKA_ALWAYS_AUTHENTICATE, CKA_SENSITIVE, CKA_EXTRACTABLE, CKA_CLASS,
	CKA_LABEL, CKA_ID, CKA_MODULUS, CKA_EC_POINT,
};

/* A template for the module to read (find, create, copy, set, derive,
 * generate).  Values: a true or false bool, a CK_ULONG from the table
 * (with its size or a wrong one), bytes from the input, a known label or
 * curve, or NULL with a length that lies.  A header byte of 0x80 to 0xbf:
 * the compact form, one byte per attribute, a bool of cbools[] (high
 * nibble) true or false (bit 0). */
static CK_ATTRIBUTE *make_tmpl(rd *r, CK_ATTRIBUTE *t, CK_ULONG *n)
{
	uint8_t hdr = u8(r);

	*n = hdr % (MAX_TMPL + 1);
	if (hdr >= 0x80 && hdr < 0xc0) {
		*n = (hdr & 0x3f) % (MAX_TMPL + 1);
		for (CK_ULONG i = 0; i < *n; i++) {
			uint8_t b = u8(r);

			t[i].type = cbools[b >> 4];
			t[i].pValue = b & 1 ? &yes : &no;
			t[i].ulValueLen = 1;
		}
		trace_tmpl("compact", t, *n);
		return t;
	}
	for (CK_ULONG i = 0; i < *n; i++) {
		uint8_t ts = u8(r), vs = u8(r), a = u8(r);
		CK_ATTRIBUTE *x = &t[i];

		x->type = ts < NATYPES * 4 ? atypes[ts % NATYPES] :
			  (CK_ATTRIBUTE_TYPE)u32(r);
		switch (vs % 10) {
		case 0:
			x->pValue = &yes, x->ulValueLen = 1;
			break;
		case 1:
			x->pValue = &no, x->ulValueLen = 1;
			break;
		case 2:
			ulvals[i] = ulongs[a % NULONGS];
			x->pValue = &ulvals[i], x->ulValueLen = sizeof(CK_ULONG);
			break;
		case 3:
			ulvals[i] = ulongs[a % NULONGS];
			x->pValue = &ulvals[i], x->ulValueLen = a / NULONGS % 9;
			break;
		case 4: {
			size_t len = a;

			if (len == 255)
				len = u16(r) % (VAL_MAX + 1);
			x->pValue = valbuf[i];
			x->ulValueLen = take(r, valbuf[i], len);
			break;
		}
		case 5: {
			static const CK_ULONG lies[] = {
				1, sizeof(CK_ULONG), 2, 16, 32, 65, 256,
				(CK_ULONG)-1, 0x7fffffff, 0x80000000,
			};

			x->pValue = NULL;
			x->ulValueLen = lies[a % 10];
			break;
		}
		case 6:
			x->pValue = NULL, x->ulValueLen = 0;
			break;
		case 7: {
			const char *l = labels[a % (sizeof(labels) /
						    sizeof(labels[0]))];

			x->pValue = (void *)l, x->ulValueLen = strlen(l);
			break;
		}
		case 8:
			switch (a % 4) {
			case 0:
				x->pValue = (void *)oid_p256;
				x->ulValueLen = sizeof(oid_p256);
				break;
			case 1:
				x->pValue = (void *)oid_p384;
				x->ulValueLen = sizeof(oid_p384);
				break;
			case 2:
				x->pValue = (void *)oid_ed25519;
				x->ulValueLen = sizeof(oid_ed25519);
				break;
			default:
				x->pValue = peer_point;
				x->ulValueLen = sizeof(peer_point);
				break;
			}
			break;
		default:
			/* a bool of another size */
			ulvals[i] = a & 1;
			x->pValue = &ulvals[i];
			x->ulValueLen = 1 + a % 8;
			break;
		}
	}
	/* a NULL template with a count */
	if (hdr >= 0xf0 && *n) {
		trace_tmpl("", NULL, *n);
		return NULL;
	}
	trace_tmpl("", t, *n);
	return t;
}

/* A template for C_GetAttributeValue: NULL buffers (a length query,
 * with any length), buffers claimed empty, short, exact or huge (the
 * real buffer is ATTR_BUF bytes, more than any value).  A header byte of
 * 0x80 to 0xbf: the compact form, one byte per attribute, one of
 * cgets[] (high nibble) with the whole buffer (bit 0) or NULL. */
static CK_ATTRIBUTE *make_get(rd *r, CK_ATTRIBUTE *t, CK_ULONG *n)
{
	uint8_t hdr = u8(r);

	*n = 1 + hdr % MAX_TMPL;
	if (hdr >= 0x80 && hdr < 0xc0) {
		*n = 1 + (hdr & 0x3f) % MAX_TMPL;
		for (CK_ULONG i = 0; i < *n; i++) {
			uint8_t b = u8(r);

			memset(attrbuf[i], 0, ATTR_BUF);
			t[i].type = cgets[b >> 4];
			t[i].pValue = b & 1 ? attrbuf[i] : NULL;
			t[i].ulValueLen = b & 1 ? ATTR_BUF : 0;
		}
		return t;
	}
	for (CK_ULONG i = 0; i < *n; i++) {
		uint8_t ts = u8(r), bs = u8(r), a = u8(r);

		t[i].type = ts < NATYPES * 4 ? atypes[ts % NATYPES] :
			    (CK_ATTRIBUTE_TYPE)u32(r);
		memset(attrbuf[i], 0, ATTR_BUF);
		t[i].pValue = attrbuf[i];
		switch (bs % 6) {
		case 0:
			t[i].pValue = NULL;
			t[i].ulValueLen = a;
			break;
		case 1:
			t[i].ulValueLen = 0;
			break;
		case 2:
			t[i].ulValueLen = a % 16;
			break;
		case 3:
			t[i].ulValueLen = (CK_ULONG)-1;
			break;
		case 4:
			t[i].pValue = NULL;
			t[i].ulValueLen = (CK_ULONG)-1;
			break;
		default:
			t[i].ulValueLen = ATTR_BUF;
			break;
		}
	}
	if (hdr >= 0xf8)
		return NULL;
	return t;
}

/* ---- mechanisms ----------------------------------------------------------- */

static const CK_MECHANISM_TYPE mechs[] = {
	CKM_RSA_PKCS, CKM_RSA_PKCS_PSS, CKM_RSA_PKCS_OAEP,
	CKM_SHA256_RSA_PKCS, CKM_SHA1_RSA_PKCS, CKM_SHA512_RSA_PKCS,
	CKM_SHA256_RSA_PKCS_PSS, CKM_SHA384_RSA_PKCS_PSS, CKM_ECDSA,
	CKM_ECDSA_SHA256, CKM_ECDSA_SHA1, CKM_ECDSA_SHA512, CKM_ECDH1_DERIVE,
	CKM_EDDSA, CKM_AES_ECB, CKM_AES_CBC, CKM_AES_CBC_PAD, CKM_AES_CTR,
	CKM_AES_GCM, CKM_SHA256_HMAC, CKM_SHA512_HMAC, CKM_SHA384_HMAC,
	CKM_SHA_1, CKM_SHA256, CKM_SHA512, CKM_AES_KEY_GEN,
	CKM_GENERIC_SECRET_KEY_GEN, CKM_RSA_X_509, CKM_SHA224,
	CKM_EC_KEY_PAIR_GEN,
};
#define NMECHS (sizeof(mechs) / sizeof(mechs[0]))

static const CK_ULONG hashes[] = {
	CKM_SHA_1, CKM_SHA224, CKM_SHA256, CKM_SHA384, CKM_SHA512, 0,
	(CK_ULONG)-1, CKM_MD5,
};
static const CK_ULONG mgfs[] = {
	CKG_MGF1_SHA1, CKG_MGF1_SHA224, CKG_MGF1_SHA256, CKG_MGF1_SHA384,
	CKG_MGF1_SHA512, 0, 77, (CK_ULONG)-1,
};

/* A buffer and its length for a pointer inside a parameter: bytes of the
 * input, NULL with a length that lies, or NULL. */
static void param_bytes(rd *r, unsigned char *buf, size_t cap,
			unsigned char **p, CK_ULONG *len)
{
	uint8_t s = u8(r);

	if (s % 4 == 0) {
		*p = NULL;
		*len = s / 4 % 2 ? 0 : 1 + s / 8;
	} else {
		*p = buf;
		*len = take(r, buf, (size_t)(s / 4) % cap);
	}
}

static void make_mech(rd *r, CK_MECHANISM *m)
{
	uint8_t ms = u8(r), ps = u8(r);

	m->mechanism = ms < NMECHS * 8 ? mechs[ms % NMECHS] :
		       (CK_MECHANISM_TYPE)u32(r);
	m->pParameter = NULL;
	m->ulParameterLen = 0;
	switch (ps % 6) {
	case 0:
		break;
	case 1:
		m->ulParameterLen = 1 + u8(r);
		break;
	case 2:
		m->pParameter = parambuf;
		m->ulParameterLen = take(r, parambuf, u8(r) % 96);
		break;
	default: {
		/* the mechanism's own structure, fields from the input;
		 * its length right (3, 4) or not (5) */
		CK_ULONG len = 0;

		memset(parambuf, 0, sizeof(parambuf));
		switch (m->mechanism) {
		case CKM_RSA_PKCS_PSS:
		case CKM_SHA256_RSA_PKCS_PSS:
		case CKM_SHA384_RSA_PKCS_PSS: {
			CK_RSA_PKCS_PSS_PARAMS *p = (void *)parambuf;
			uint8_t a = u8(r);

			p->hashAlg = hashes[a % 8];
			p->mgf = mgfs[a / 8 % 8];
			p->sLen = u8(r);
			len = sizeof(*p);
			break;
		}
		case CKM_RSA_PKCS_OAEP: {
			CK_RSA_PKCS_OAEP_PARAMS *p = (void *)parambuf;
			uint8_t a = u8(r);

			p->hashAlg = hashes[a % 8];
			p->mgf = mgfs[a / 8 % 8];
			p->source = a & 0x40 ? 0 : CKZ_DATA_SPECIFIED;
			param_bytes(r, parambuf2, sizeof(parambuf2),
				    (unsigned char **)&p->pSourceData,
				    &p->ulSourceDataLen);
			len = sizeof(*p);
			break;
		}
		case CKM_AES_GCM: {
			CK_GCM_PARAMS *p = (void *)parambuf;
			static const CK_ULONG tags[] = {
				128, 96, 32, 0, 8, 129, 127, 256 };
			uint8_t a = u8(r);

			param_bytes(r, parambuf2, 80, &p->pIv, &p->ulIvLen);
			p->ulIvBits = a & 1 ? p->ulIvLen * 8 : u8(r);
			param_bytes(r, parambuf3, sizeof(parambuf3), &p->pAAD,
				    &p->ulAADLen);
			p->ulTagBits = tags[a / 2 % 8];
			len = sizeof(*p);
			break;
		}
		case CKM_AES_CTR: {
			CK_AES_CTR_PARAMS *p = (void *)parambuf;

			p->ulCounterBits = u8(r);
			take(r, p->cb, 16);
			len = sizeof(*p);
			break;
		}
		case CKM_ECDH1_DERIVE: {
			CK_ECDH1_DERIVE_PARAMS *p = (void *)parambuf;
			uint8_t a = u8(r);

			p->kdf = a % 4 == 3 ? u8(r) : CKD_NULL;
			if (a & 4)
				param_bytes(r, parambuf3, 64, &p->pSharedData,
					    &p->ulSharedDataLen);
			if (a & 8) {
				param_bytes(r, parambuf2, sizeof(parambuf2),
					    &p->pPublicData,
					    &p->ulPublicDataLen);
			} else {
				/* a real point, bare or as an OCTET STRING,
				 * maybe cut short */
				size_t k = 0;

				if (a & 16) {
					parambuf2[k++] = 0x04;
					parambuf2[k++] = 65;
				}
				memcpy(parambuf2 + k, peer_point, 65);
				k += 65;
				if (a & 32)
					k -= 1 + u8(r) % k;
				p->pPublicData = parambuf2;
				p->ulPublicDataLen = k;
			}
			len = sizeof(*p);
			break;
		}
		default:
			/* an IV (CBC) or anything else: 16 bytes */
			take(r, parambuf, 16);
			len = 16;
			break;
		}
		m->pParameter = parambuf;
		m->ulParameterLen = ps % 6 == 5 ? (len + u8(r) % 16) - 8 : len;
		break;
	}
	}
}

/* Data for an operation: bytes of the input, a large real buffer, or
 * NULL with a length that lies. */
static unsigned char *make_data(rd *r, CK_ULONG *len)
{
	uint8_t s = u8(r);

	switch (s % 8) {
	case 0:
		*len = s / 8 ? (CK_ULONG)-1 : 32;
		return NULL;
	case 1:
		memset(databuf, s, DATA_MAX);
		*len = (CK_ULONG)u16(r) % (DATA_MAX + 1);
		return databuf;
	case 2:
		*len = 0;
		return databuf;
	default:
		*len = take(r, databuf, (size_t)(s / 8) * 4);
		return databuf;
	}
}

/* An output buffer: NULL (a length query, with any length), or the real
 * OUT_BUF bytes claimed empty, short, enough or huge; or no length. */
static unsigned char *make_out(rd *r, CK_ULONG *len, CK_ULONG **plen)
{
	uint8_t s = u8(r);

	*plen = len;
	switch (s % 6) {
	case 0:
		*len = s;
		return NULL;
	case 1:
		*len = 0;
		return outbuf;
	case 2:
		*len = 1 + s / 6;
		return outbuf;
	case 3:
		*len = (CK_ULONG)-1;
		return outbuf;
	case 4:
		*len = s & 0x80 ? (CK_ULONG)-1 : 0;
		*plen = NULL;
		return s & 0x40 ? NULL : outbuf;
	default:
		*len = OUT_BUF;
		return outbuf;
	}
}

/* The output of a call, checked for secrets, then cleared. */
static void check_out(const char *where)
{
	size_t hi = OUT_BUF;

	while (hi && outbuf[hi - 1] == 0)
		hi--;
	check_leak(outbuf, hi, where);
	memset(outbuf, 0, hi);
}

/* ---- the calls ------------------------------------------------------------ */

static void op_open(rd *r)
{
	int slot = slot_of(r);
	uint8_t fs = u8(r);
	static const CK_FLAGS flags[] = {
		CKF_SERIAL_SESSION | CKF_RW_SESSION, CKF_SERIAL_SESSION, 0,
		CKF_RW_SESSION, 0xffffffff,
	};
	CK_SESSION_HANDLE h = CK_INVALID_HANDLE;
	CK_RV rv;

	rv = F->C_OpenSession((CK_SLOT_ID)slot, flags[fs % 5], NULL, NULL,
			      fs & 0x80 ? NULL : &h);
	calls++;
	trace_rv("C_OpenSession", rv);
	if (rv != CKR_OK || slot >= NSLOTS)
		return;
	if (h == CK_INVALID_HANDLE)
		DIE("C_OpenSession gave CK_INVALID_HANDLE");
	for (size_t i = 0; i < nS; i++)
		if (S[i].h == h)
			DIE("C_OpenSession gave a handle %s again",
			    S[i].open ? "still open" : "closed before");
	if (nS == MAX_SESS)
		return;
	S[nS++] = (sess){ h, slot, 1 };
}

static void op_close(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_RV rv = F->C_CloseSession(h);

	calls++;
	trace_rv("C_CloseSession", rv);
	expect_fail(bad, rv, "C_CloseSession");
	if (rv == CKR_OK && s)
		session_closed(s);
}

static void op_close_all(rd *r)
{
	int slot = slot_of(r);
	CK_RV rv = F->C_CloseAllSessions((CK_SLOT_ID)slot);

	calls++;
	trace_rv("C_CloseAllSessions", rv);
	if (rv != CKR_OK || slot >= NSLOTS)
		return;
	for (size_t i = 0; i < nS; i++)
		if (S[i].open && S[i].slot == slot)
			session_closed(&S[i]);
	login[slot] = L_NONE;
}

static void op_login(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	uint8_t us = u8(r), ps = u8(r);
	static const CK_USER_TYPE users[] = {
		CKU_USER, CKU_USER, CKU_SO, CKU_CONTEXT_SPECIFIC,
	};
	CK_USER_TYPE u = us % 5 < 4 ? users[us % 5] : (CK_USER_TYPE)u8(r);
	unsigned char pin[64];
	const unsigned char *pp = pin;
	CK_ULONG pl;
	CK_RV rv;
	int slot = s ? s->slot : 0;

	switch (ps % 6) {
	case 0:
		pp = (const unsigned char *)pins[slot];
		pl = strlen(pins[slot]);
		break;
	case 1:
		pp = (const unsigned char *)pins[(slot + 1) % 2];
		pl = strlen((const char *)pp);
		break;
	case 2:
		pl = take(r, pin, ps / 6 % sizeof(pin));
		break;
	case 3:
		pp = NULL;
		pl = 1 + ps / 6;
		break;
	case 4:
		pp = NULL;
		pl = 0;
		break;
	default:
		pp = (const unsigned char *)OWN_PW;
		pl = strlen(OWN_PW);
		break;
	}
	rv = F->C_Login(h, u, (CK_UTF8CHAR_PTR)pp, pl);
	calls++;
	trace_rv("C_Login", rv);
	expect_fail(bad, rv, "C_Login");
	if (rv != CKR_OK || !s)
		return;
	if (u == CKU_USER)
		login[slot] = L_USER;
	else if (u == CKU_SO)
		login[slot] = L_SO;
}

static void op_logout(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_RV rv = F->C_Logout(h);

	calls++;
	trace_rv("C_Logout", rv);
	expect_fail(bad, rv, "C_Logout");
	if (rv == CKR_OK && s)
		login[s->slot] = L_NONE;
}

static void op_find_init(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_ATTRIBUTE tmpl[MAX_TMPL];
	CK_ULONG n;
	CK_ATTRIBUTE *t = make_tmpl(r, tmpl, &n);
	CK_RV rv = F->C_FindObjectsInit(h, t, n);

	calls++;
	trace_rv("C_FindObjectsInit", rv);
	expect_fail(bad, rv, "C_FindObjectsInit");
}

/* What C_FindObjects returned, against the model. */
static void check_found(const sess *s, const CK_OBJECT_HANDLE *v, CK_ULONG k)
{
	for (CK_ULONG i = 0; i < k; i++) {
		obj *o;

		if (v[i] == CK_INVALID_HANDLE)
			DIE("C_FindObjects returned CK_INVALID_HANDLE");
		if (!s || !(o = obj_of(v[i])))
			continue;
		if (o->dead)
			DIE("C_FindObjects found destroyed object %lu",
			    (unsigned long)v[i]);
		if (o->slot != s->slot)
			DIE("C_FindObjects in a session of token %d found "
			    "object %lu of token %d", s->slot,
			    (unsigned long)v[i], o->slot);
		if (o->priv && login[s->slot] != L_USER)
			DIE("C_FindObjects found private object %lu (%s) "
			    "while token %d is not logged in as the user",
			    (unsigned long)v[i], o->label, s->slot);
	}
}

static void op_find(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	uint8_t ms = u8(r);
	CK_OBJECT_HANDLE v[MAX_OBJS];
	CK_ULONG max = ms % 4 == 0 ? 0 : (ms % 4 == 1 ? 1 : MAX_OBJS);
	CK_ULONG k = 0;
	CK_RV rv;

	rv = F->C_FindObjects(h, ms & 0x80 ? NULL : v, max,
			      ms & 0x40 ? NULL : &k);
	calls++;
	trace_rv("C_FindObjects", rv);
	expect_fail(bad, rv, "C_FindObjects");
	if (rv == CKR_OK && !(ms & 0xc0)) {
		if (k > max)
			DIE("C_FindObjects: %lu objects for a room of %lu",
			    (unsigned long)k, (unsigned long)max);
		check_found(s, v, k);
	}
}

static void op_find_final(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_RV rv = F->C_FindObjectsFinal(h);

	calls++;
	trace_rv("C_FindObjectsFinal", rv);
	expect_fail(bad, rv, "C_FindObjectsFinal");
}

/* Init, every result, final: the visibility oracle on a whole search. */
static void op_find_all(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_ATTRIBUTE tmpl[MAX_TMPL];
	CK_ULONG n;
	CK_ATTRIBUTE *t = make_tmpl(r, tmpl, &n);
	CK_OBJECT_HANDLE v[16];
	CK_RV rv = F->C_FindObjectsInit(h, t, n);

	calls++;
	trace_rv("C_FindObjectsInit", rv);
	expect_fail(bad, rv, "C_FindObjectsInit");
	if (rv != CKR_OK)
		return;
	for (int round = 0; round < 16; round++) {
		CK_ULONG k = 0;

		rv = F->C_FindObjects(h, v, 16, &k);
		if (rv != CKR_OK)
			DIE("C_FindObjects after a good init: 0x%lx",
			    (unsigned long)rv);
		if (k > 16)
			DIE("C_FindObjects: too many");
		check_found(s, v, k);
		if (!k)
			break;
	}
	(void)F->C_FindObjectsFinal(h);
}

static void op_get(rd *r)
{
	sess *s;
	obj *o;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_OBJECT_HANDLE ho = pick_obj(r, s, &o);
	CK_ATTRIBUTE tmpl[MAX_TMPL];
	CK_ULONG n;
	CK_ATTRIBUTE *t = make_get(r, tmpl, &n);
	CK_RV rv;

	bad |= obj_bad(s, o, ho, 0);
	rv = F->C_GetAttributeValue(h, ho, t, n);
	calls++;
	trace_rv("C_GetAttributeValue", rv);
	expect_fail(bad, rv, "C_GetAttributeValue");
	for (CK_ULONG i = 0; i < n; i++) {
		size_t w = ATTR_BUF;

		if (rv == CKR_OK && t && tmpl[i].ulValueLen != 0 &&
		    tmpl[i].ulValueLen != CK_UNAVAILABLE_INFORMATION &&
		    tmpl[i].ulValueLen > ATTR_BUF)
			DIE("C_GetAttributeValue: a length of %lu",
			    (unsigned long)tmpl[i].ulValueLen);
		while (w && attrbuf[i][w - 1] == 0)
			w--;
		check_leak(attrbuf[i], w, "C_GetAttributeValue");
	}
}

static obj *new_obj(CK_RV rv, const sess *s, CK_OBJECT_HANDLE h, int tokkey,
		    const char *call)
{
	if (rv != CKR_OK || !s)
		return NULL;
	if (h == CK_INVALID_HANDLE)
		DIE("%s gave CK_INVALID_HANDLE", call);
	return add_obj(h, s->slot, s->h, tokkey);
}

static void op_copy(rd *r)
{
	sess *s;
	obj *o;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_OBJECT_HANDLE ho = pick_obj(r, s, &o), nh = CK_INVALID_HANDLE;
	CK_ATTRIBUTE tmpl[MAX_TMPL];
	CK_ULONG n;
	CK_ATTRIBUTE *t = make_tmpl(r, tmpl, &n);
	CK_RV rv;

	bad |= obj_bad(s, o, ho, 0);
	rv = F->C_CopyObject(h, ho, t, n, &nh);
	calls++;
	trace_rv("C_CopyObject", rv);
	expect_fail(bad, rv, "C_CopyObject");
	new_obj(rv, s, nh, o && o->tokkey, "C_CopyObject");
}

static void op_create(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad), nh = CK_INVALID_HANDLE;
	CK_ATTRIBUTE tmpl[MAX_TMPL];
	CK_ULONG n;
	CK_ATTRIBUTE *t = make_tmpl(r, tmpl, &n);
	CK_RV rv = F->C_CreateObject(h, t, n, &nh);

	calls++;
	trace_rv("C_CreateObject", rv);
	expect_fail(bad, rv, "C_CreateObject");
	new_obj(rv, s, nh, 0, "C_CreateObject");
}

static void op_set(rd *r)
{
	sess *s;
	obj *o;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_OBJECT_HANDLE ho = pick_obj(r, s, &o);
	CK_ATTRIBUTE tmpl[MAX_TMPL];
	CK_ULONG n;
	CK_ATTRIBUTE *t = make_tmpl(r, tmpl, &n);
	CK_RV rv;

	bad |= obj_bad(s, o, ho, 0);
	rv = F->C_SetAttributeValue(h, ho, t, n);
	calls++;
	trace_rv("C_SetAttributeValue", rv);
	expect_fail(bad, rv, "C_SetAttributeValue");
	if (rv == CKR_OK && s && o) {
		/* a rename changes the labels the model knows; a CKA_ID
		 * may re-issue a certificate (a new object) */
		renamed[s->slot] = 1;
		if (t)
			for (CK_ULONG i = 0; i < n; i++)
				if (tmpl[i].type == CKA_PRIVATE &&
				    tmpl[i].ulValueLen == 1 && tmpl[i].pValue)
					o->priv = *(CK_BBOOL *)tmpl[i].pValue
						  != 0;
	}
}

static void op_destroy(rd *r)
{
	sess *s;
	obj *o;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_OBJECT_HANDLE ho = pick_obj(r, s, &o);
	CK_RV rv;

	bad |= obj_bad(s, o, ho, 0);
	rv = F->C_DestroyObject(h, ho);
	calls++;
	trace_rv("C_DestroyObject", rv);
	expect_fail(bad, rv, "C_DestroyObject");
	if (rv != CKR_OK || !s || !o)
		return;
	o->dead = 1;
	/* a token private key goes with its entry: its public key and
	 * certificates (labels "A" and "A/n"); a key entry's public key
	 * goes alone (docs/PKCS11.md, "Writing to a token") */
	if (o->token && o->cls == CKO_PRIVATE_KEY && o->label[0] &&
	    !renamed[o->slot]) {
		size_t ln = strlen(o->label);

		for (size_t i = 0; i < nO; i++)
			if (O[i].token && O[i].slot == o->slot &&
			    strncmp(O[i].label, o->label, ln) == 0 &&
			    (O[i].label[ln] == 0 || O[i].label[ln] == '/'))
				O[i].dead = 1;
	}
}

enum { K_SIGN, K_VERIFY, K_ENCRYPT, K_DECRYPT, K_DIGEST, K_KINDS };

static CK_RV do_init(int kind, CK_SESSION_HANDLE h, CK_MECHANISM *m,
		     CK_OBJECT_HANDLE k)
{
	switch (kind) {
	case K_SIGN:
		return F->C_SignInit(h, m, k);
	case K_VERIFY:
		return F->C_VerifyInit(h, m, k);
	case K_ENCRYPT:
		return F->C_EncryptInit(h, m, k);
	case K_DECRYPT:
		return F->C_DecryptInit(h, m, k);
	default:
		return F->C_DigestInit(h, m);
	}
}

static const char *const kind_name[] = {
	"C_Sign", "C_Verify", "C_Encrypt", "C_Decrypt", "C_Digest",
};

/* One call of an operation under way: one-shot, update or final. */
static void op_step(rd *r, int kind, CK_SESSION_HANDLE h)
{
	uint8_t fs = u8(r);
	CK_ULONG dl, ol;
	CK_ULONG *pol;
	unsigned char *d = make_data(r, &dl);
	unsigned char *out = make_out(r, &ol, &pol);
	char where[64];
	CK_RV rv;

	snprintf(where, sizeof(where), "%s (step %d)", kind_name[kind],
		 fs % 3);
	switch (kind * 3 + fs % 3) {
	case K_SIGN * 3:
		rv = F->C_Sign(h, d, dl, out, pol);
		break;
	case K_SIGN * 3 + 1:
		rv = F->C_SignUpdate(h, d, dl);
		break;
	case K_SIGN * 3 + 2:
		rv = F->C_SignFinal(h, out, pol);
		break;
	case K_VERIFY * 3:
		rv = F->C_Verify(h, d, dl, d, dl / 2);
		break;
	case K_VERIFY * 3 + 1:
		rv = F->C_VerifyUpdate(h, d, dl);
		break;
	case K_VERIFY * 3 + 2:
		rv = F->C_VerifyFinal(h, d, dl);
		break;
	case K_ENCRYPT * 3:
		rv = F->C_Encrypt(h, d, dl, out, pol);
		break;
	case K_ENCRYPT * 3 + 1:
		rv = F->C_EncryptUpdate(h, d, dl, out, pol);
		break;
	case K_ENCRYPT * 3 + 2:
		rv = F->C_EncryptFinal(h, out, pol);
		break;
	case K_DECRYPT * 3:
		rv = F->C_Decrypt(h, d, dl, out, pol);
		break;
	case K_DECRYPT * 3 + 1:
		rv = F->C_DecryptUpdate(h, d, dl, out, pol);
		break;
	case K_DECRYPT * 3 + 2:
		rv = F->C_DecryptFinal(h, out, pol);
		break;
	case K_DIGEST * 3:
		rv = F->C_Digest(h, d, dl, out, pol);
		break;
	case K_DIGEST * 3 + 1:
		rv = F->C_DigestUpdate(h, d, dl);
		break;
	default:
		rv = F->C_DigestFinal(h, out, pol);
		break;
	}
	calls++;
	trace_rv(where, rv);
	check_out(where);
}

static void op_init(rd *r, int kind)
{
	static const char *const names[] = {
		"C_SignInit", "C_VerifyInit", "C_EncryptInit",
		"C_DecryptInit", "C_DigestInit",
	};
	sess *s;
	obj *o = NULL;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_OBJECT_HANDLE ho = kind == K_DIGEST ? 0 : pick_obj(r, s, &o);
	CK_MECHANISM m;
	uint8_t more;
	CK_RV rv;

	make_mech(r, &m);
	more = u8(r);
	if (kind != K_DIGEST)
		bad |= obj_bad(s, o, ho, kind != K_VERIFY);
	rv = do_init(kind, h, more & 0x80 ? NULL : &m, ho);
	calls++;
	trace_rv(names[kind], rv);
	expect_fail(bad, rv, names[kind]);
	if (rv == CKR_OK)
		for (int i = 0; i < more % 4 && calls < MAX_CALLS; i++)
			op_step(r, kind, h);
}

static void op_cont(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);

	op_step(r, u8(r) % K_KINDS, h);
}

static void op_derive(rd *r)
{
	sess *s;
	obj *o;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad), nh = CK_INVALID_HANDLE;
	CK_OBJECT_HANDLE ho = pick_obj(r, s, &o);
	CK_MECHANISM m;
	CK_ATTRIBUTE tmpl[MAX_TMPL];
	CK_ULONG n;
	CK_ATTRIBUTE *t;
	CK_RV rv;

	make_mech(r, &m);
	t = make_tmpl(r, tmpl, &n);
	bad |= obj_bad(s, o, ho, 1);
	rv = F->C_DeriveKey(h, &m, ho, t, n, &nh);
	calls++;
	trace_rv("C_DeriveKey", rv);
	expect_fail(bad, rv, "C_DeriveKey");
	new_obj(rv, s, nh, 0, "C_DeriveKey");
}

static void op_genkey(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad), nh = CK_INVALID_HANDLE;
	CK_MECHANISM m;
	CK_ATTRIBUTE tmpl[MAX_TMPL];
	CK_ULONG n;
	CK_ATTRIBUTE *t;
	CK_RV rv;

	make_mech(r, &m);
	t = make_tmpl(r, tmpl, &n);
	/* no key pairs: an RSA key generation is too slow per input */
	if (m.mechanism == CKM_RSA_PKCS_KEY_PAIR_GEN)
		return;
	rv = F->C_GenerateKey(h, &m, t, n, &nh);
	calls++;
	trace_rv("C_GenerateKey", rv);
	expect_fail(bad, rv, "C_GenerateKey");
	new_obj(rv, s, nh, 0, "C_GenerateKey");
}

static void op_random(rd *r)
{
	sess *s;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	uint8_t ls = u8(r);
	CK_ULONG len = ls % 4 == 0 ? 0 : ls % 4 == 1 ? 32 : u16(r) % OUT_BUF;
	CK_RV rv;

	/* (a length that lies only with NULL: the module writes it all) */
	if (ls & 0x80)
		rv = F->C_GenerateRandom(h, NULL, ls & 0x40 ? (CK_ULONG)-1 :
						   len);
	else
		rv = F->C_GenerateRandom(h, outbuf, len);
	calls++;
	trace_rv("C_GenerateRandom", rv);
	expect_fail(bad, rv, "C_GenerateRandom");
	check_out("C_GenerateRandom");
}

static void op_digest_key(rd *r)
{
	sess *s;
	obj *o;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_OBJECT_HANDLE ho = pick_obj(r, s, &o);
	CK_RV rv;

	bad |= obj_bad(s, o, ho, 1);
	rv = F->C_DigestKey(h, ho);
	calls++;
	trace_rv("C_DigestKey", rv);
	/* (only with a digest under way; a refusal of the operation state
	 * is no acceptance of the handle) */
	expect_fail(bad, rv, "C_DigestKey");
}

static void op_info(rd *r)
{
	sess *s;
	obj *o;
	int bad;
	CK_SESSION_HANDLE h = pick_sess(r, &s, &bad);
	CK_OBJECT_HANDLE ho = pick_obj(r, s, &o);
	CK_SESSION_INFO si;
	CK_ULONG sz = 0;
	CK_RV rv = F->C_GetSessionInfo(h, &si);

	calls++;
	trace_rv("C_GetSessionInfo", rv);
	expect_fail(bad, rv, "C_GetSessionInfo");
	if (rv == CKR_OK && s) {
		if (si.slotID != (CK_SLOT_ID)s->slot)
			DIE("C_GetSessionInfo: slot %lu, want %d",
			    (unsigned long)si.slotID, s->slot);
		if ((login[s->slot] == L_USER) !=
		    (si.state == CKS_RO_USER_FUNCTIONS ||
		     si.state == CKS_RW_USER_FUNCTIONS))
			DIE("C_GetSessionInfo: state %lu, model login %d",
			    (unsigned long)si.state, login[s->slot]);
	}
	bad |= obj_bad(s, o, ho, 0);
	rv = F->C_GetObjectSize(h, ho, &sz);
	calls++;
	trace_rv("C_GetObjectSize", rv);
	expect_fail(bad, rv, "C_GetObjectSize");
}

/* ---- one input ------------------------------------------------------------ */

/*
 * Between inputs the module stays initialised: C_CloseAllSessions on
 * every token ends the sessions, their objects, operations and the
 * logins, and the token objects keep their handles while their stores
 * are unchanged (docs/PKCS11.md, "Tokens").  When a store was restored
 * (or every RESET_EVERY inputs, and at the first) the module is
 * finalised and initialised again and the token objects learnt anew.
 */
#define RESET_EVERY 512
static int module_up, need_learn;
static unsigned inputs;
static obj O0[MAX_OBJS];
static size_t nO0;

static void finalize_at_exit(void)
{
	if (module_up)
		(void)F->C_Finalize(NULL);
	module_up = 0;
}

/* A session per token (logged in, every object learnt, logged out, when
 * need_learn). */
static void prologue(void)
{
	if (need_learn)
		nO0 = 0;
	for (int slot = 0; slot < NSLOTS; slot++) {
		CK_SESSION_HANDLE h;
		CK_OBJECT_HANDLE v[MAX_OBJS];
		CK_ULONG k = 0;
		CK_FLAGS fl = CKF_SERIAL_SESSION |
			      (slot == 2 ? 0 : CKF_RW_SESSION);

		if (F->C_OpenSession((CK_SLOT_ID)slot, fl, NULL, NULL, &h) !=
		    CKR_OK)
			DIE("prologue: C_OpenSession %d", slot);
		S[nS++] = (sess){ h, slot, 1 };
		if (!need_learn)
			continue;
		if (F->C_Login(h, CKU_USER, (CK_UTF8CHAR_PTR)pins[slot],
			       strlen(pins[slot])) != CKR_OK)
			DIE("prologue: C_Login %d", slot);
		if (F->C_FindObjectsInit(h, NULL, 0) != CKR_OK ||
		    F->C_FindObjects(h, v, MAX_OBJS, &k) != CKR_OK ||
		    F->C_FindObjectsFinal(h) != CKR_OK || k < 4)
			DIE("prologue: find %d", slot);
		for (CK_ULONG i = 0; i < k && nO < MAX_OBJS; i++)
			add_obj(v[i], slot, h, 0);
		if (F->C_Logout(h) != CKR_OK)
			DIE("prologue: C_Logout %d", slot);
	}
	if (need_learn) {
		memcpy(O0, O, nO * sizeof(*O));
		nO0 = nO;
		need_learn = 0;
	} else {
		memcpy(O, O0, nO0 * sizeof(*O));
		nO = nO0;
	}
}

/* FUZZ_P11_STRIDE=N (the default test run's replay of the corpus): only
 * every N-th input runs, unless WKS_TEST_FULL=1. */
static unsigned long stride = 1, nth;

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	rd r = { data, size };
	CK_RV rv;

	if (stride > 1 && nth++ % stride != 0)
		return 0;

	nS = nO = 0;
	calls = 0;
	memset(login, 0, sizeof(login));
	memset(renamed, 0, sizeof(renamed));
	if (module_up && ++inputs % RESET_EVERY == 0) {
		if ((rv = F->C_Finalize(NULL)) != CKR_OK)
			DIE("C_Finalize: 0x%lx", (unsigned long)rv);
		module_up = 0;
	}
	if (!module_up) {
		if ((rv = F->C_Initialize(NULL)) != CKR_OK)
			DIE("C_Initialize: 0x%lx", (unsigned long)rv);
		module_up = 1;
		need_learn = 1;
	}
	prologue();
	while (r.n && calls < MAX_CALLS) {
		switch (u8(&r) % 25) {
		case 0: op_open(&r); break;
		case 1: op_close(&r); break;
		case 2: op_close_all(&r); break;
		case 3: op_login(&r); break;
		case 4: op_logout(&r); break;
		case 5: op_find_init(&r); break;
		case 6: op_find(&r); break;
		case 7: op_find_final(&r); break;
		case 8: op_get(&r); break;
		case 9: op_copy(&r); break;
		case 10: op_create(&r); break;
		case 11: op_set(&r); break;
		case 12: op_destroy(&r); break;
		case 13: op_init(&r, K_SIGN); break;
		case 14: op_init(&r, K_ENCRYPT); break;
		case 15: op_init(&r, K_DECRYPT); break;
		case 16: op_init(&r, K_VERIFY); break;
		case 17: op_init(&r, K_DIGEST); break;
		case 18: op_derive(&r); break;
		case 19: op_random(&r); break;
		case 20: op_genkey(&r); break;
		case 21: op_cont(&r); break;
		case 22: op_info(&r); break;
		case 23: op_digest_key(&r); break;
		default: op_find_all(&r); break;
		}
	}
	for (int slot = 0; slot < NSLOTS; slot++)
		if ((rv = F->C_CloseAllSessions((CK_SLOT_ID)slot)) != CKR_OK)
			DIE("C_CloseAllSessions(%d): 0x%lx", slot,
			    (unsigned long)rv);
	if (restore_stores())
		need_learn = 1;
	return 0;
}

/* ---- seeds ---------------------------------------------------------------- */

/* The encoder of the decoder above, for hand-written sequences. */
typedef struct {
	uint8_t b[1024];
	size_t n;
} enc;

static void emit(enc *e, const int *v, size_t n)
{
	for (size_t i = 0; i < n && e->n < sizeof(e->b); i++)
		e->b[e->n++] = (uint8_t)v[i];
}

#define EM(e, ...) emit((e), (const int[]){ __VA_ARGS__ }, \
			sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int))

/* opcodes (FUZZ_ENTRY's switch) */
enum { O_OPEN, O_CLOSE, O_CLOSE_ALL, O_LOGIN, O_LOGOUT, O_FIND_INIT, O_FIND,
       O_FIND_FINAL, O_GET, O_COPY, O_CREATE, O_SET, O_DESTROY, O_SIGN,
       O_ENCRYPT, O_DECRYPT, O_VERIFY, O_DIGEST, O_DERIVE, O_RANDOM,
       O_GENKEY, O_CONT, O_INFO, O_DIGEST_KEY, O_FIND_ALL };
/* choosers: the i-th open session, a closed one; a token object by class
 * and label, the newest object */
#define SESS(i) 0, (i)
#define CLOSED(i) 3, (i)
#define OBJ(cls, lab) 1, (cls) + 5 * (lab), 0
#define OBJ_OTHER(cls, lab) 2, (cls) + 5 * (lab), 0
#define OBJ_LAST 7, 0, 0
enum { C_PRIV, C_SEC, C_PUB, C_CERT, C_DATA };
enum { L_RSA, L_EC, L_OWN, L_AES, L_HMAC, L_EC2, L_AES2, L_X };
/* template attributes: the type's index in atypes, the value's kind, an
 * argument */
#define A_TRUE(ti) (ti), 0, 0
#define A_FALSE(ti) (ti), 1, 0
#define A_ULONG(ti, ui) (ti), 2, (ui)
#define A_LABEL(ti, li) (ti), 7, (li)
#define A_BYTES(ti, n) (ti), 4, (n)
#define A_NULL(ti, lie) (ti), 5, (lie)
/* get-template attributes: the whole buffer */
#define G(ti) (ti), 5, 0
enum { T_CLASS, T_TOKEN, T_PRIVATE, T_LABEL, T_ID, T_VALUE, T_KEY_TYPE,
       T_SENSITIVE, T_EXTRACTABLE, T_PRIVATE_EXPONENT, T_VALUE_LEN = 19 };
/* ulongs[] */
enum { U_PRIV = 3, U_SEC = 4, U_AES = 7, U_GENERIC = 8, U_32 = 12 };
/* mechanisms: index in mechs, no parameter / its structure */
enum { M_RSA_OAEP = 2, M_SHA256_RSA = 3, M_ECDSA_SHA256 = 9, M_ECDH = 12,
       M_AES_ECB = 14, M_AES_CBC = 15, M_AES_GCM = 18, M_HMAC256 = 19,
       M_SHA256 = 23, M_AES_KEY_GEN = 25 };
#define MECH(mi) (mi), 0
#define MECH_P(mi) (mi), 3
/* steps after an init: data of 4k bytes from the input, the whole
 * output buffer */
#define DATA(k) (3 + 8 * (k))
#define OUT_ALL 5

static void write_seed(const char *d, const char *name, const enc *e)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", d, name);
	if (!(f = fopen(p, "wb")) || fwrite(e->b, 1, e->n, f) != e->n ||
	    fclose(f) != 0)
		DIE("seed %s", p);
}

static void write_seeds(const char *d)
{
	enc e;

	/* log in, find the private keys, log out, find again */
	e.n = 0;
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	EM(&e, O_FIND_ALL, SESS(0), 1, A_ULONG(T_CLASS, U_PRIV));
	EM(&e, O_LOGOUT, SESS(0));
	EM(&e, O_FIND_ALL, SESS(0), 1, A_ULONG(T_CLASS, U_PRIV));
	EM(&e, O_FIND_INIT, SESS(1), 0, O_FIND, SESS(1), 2, O_FIND_FINAL,
	   SESS(1));
	write_seed(d, "login-find-logout", &e);

	/* sign with each key of token a, then logged out */
	e.n = 0;
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	EM(&e, O_SIGN, SESS(0), OBJ(C_PRIV, L_RSA), MECH(M_SHA256_RSA), 1,
	   0, DATA(1), 'd', 'a', 't', 'a', OUT_ALL);
	EM(&e, O_SIGN, SESS(0), OBJ(C_PRIV, L_EC), MECH(M_ECDSA_SHA256), 2,
	   1, DATA(1), 'd', 'a', 't', 'a', OUT_ALL, 2, DATA(0), OUT_ALL);
	EM(&e, O_SIGN, SESS(0), OBJ(C_SEC, L_HMAC), MECH(M_HMAC256), 1,
	   0, DATA(1), 'd', 'a', 't', 'a', OUT_ALL);
	EM(&e, O_VERIFY, SESS(0), OBJ(C_PUB, L_EC), MECH(M_ECDSA_SHA256), 1,
	   0, DATA(2), 'd', 'a', 't', 'a', 's', 'i', 'g', 's', OUT_ALL);
	EM(&e, O_LOGOUT, SESS(0));
	EM(&e, O_SIGN, SESS(0), OBJ(C_PRIV, L_RSA), MECH(M_SHA256_RSA), 0);
	write_seed(d, "sign", &e);

	/* encrypt and decrypt: AES ECB and GCM, RSA OAEP */
	e.n = 0;
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	EM(&e, O_ENCRYPT, SESS(0), OBJ(C_SEC, L_AES), MECH(M_AES_ECB), 1, 0,
	   DATA(4), '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a',
	   'b', 'c', 'd', 'e', 'f', OUT_ALL);
	EM(&e, O_DECRYPT, SESS(0), OBJ(C_SEC, L_AES), MECH(M_AES_ECB), 1, 0,
	   DATA(4), '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a',
	   'b', 'c', 'd', 'e', 'f', OUT_ALL);
	EM(&e, O_ENCRYPT, SESS(0), OBJ(C_SEC, L_AES), MECH_P(M_AES_GCM), 1,
	   1 + 4 * 12, 'i', 'v', 'i', 'v', 'i', 'v', 'i', 'v', 'i', 'v', 'i',
	   'v', 4, 1, 0, DATA(1), 'd', 'a', 't', 'a', OUT_ALL);
	EM(&e, O_ENCRYPT, SESS(0), OBJ(C_PUB, L_RSA), MECH_P(M_RSA_OAEP),
	   0x12, 4, 1, 0, DATA(1), 'd', 'a', 't', 'a', OUT_ALL);
	EM(&e, O_DECRYPT, SESS(0), OBJ(C_PRIV, L_RSA), MECH_P(M_RSA_OAEP),
	   0x12, 4, 1, 0, DATA(1), 'd', 'a', 't', 'a', OUT_ALL);
	write_seed(d, "crypt", &e);

	/* copies of token keys as session objects, their attributes read,
	 * used, then logged out */
	e.n = 0;
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	EM(&e, O_COPY, SESS(0), OBJ(C_PRIV, L_RSA), 1, A_FALSE(T_TOKEN));
	EM(&e, O_GET, SESS(0), OBJ_LAST, 2, G(T_CLASS),
	   G(T_PRIVATE_EXPONENT), G(T_SENSITIVE));
	EM(&e, O_COPY, SESS(0), OBJ(C_SEC, L_AES), 2, A_FALSE(T_TOKEN),
	   A_LABEL(T_LABEL, L_X));
	EM(&e, O_GET, SESS(0), OBJ_LAST, 1, G(T_VALUE), G(T_SENSITIVE));
	EM(&e, O_ENCRYPT, SESS(0), OBJ_LAST, MECH(M_AES_ECB), 0);
	EM(&e, O_LOGOUT, SESS(0));
	EM(&e, O_GET, SESS(0), OBJ_LAST, 0, G(T_VALUE));
	EM(&e, O_ENCRYPT, SESS(0), OBJ_LAST, MECH(M_AES_ECB), 0);
	write_seed(d, "copy-get", &e);

	/* every token key copied as a session object with a compact
	 * template (CKA_TOKEN false and one loosening: CKA_SENSITIVE false
	 * with CKA_SIGN true, or CKA_EXTRACTABLE true with CKA_DESTROYABLE
	 * false), its secret attributes read (compact get), then logged
	 * out */
	e.n = 0;
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	EM(&e, O_COPY, SESS(0), OBJ(C_PRIV, L_RSA), 0x83, 0x00, 0x20, 0x71);
	EM(&e, O_GET, SESS(0), OBJ_LAST, 0x82, 0x81, 0x01, 0x11);
	EM(&e, O_COPY, SESS(0), OBJ(C_PRIV, L_EC), 0x83, 0x00, 0x60, 0x31);
	EM(&e, O_GET, SESS(0), OBJ_LAST, 0x81, 0x81, 0x61);
	EM(&e, O_COPY, SESS(0), OBJ(C_SEC, L_AES), 0x83, 0x00, 0x20, 0x71);
	EM(&e, O_GET, SESS(0), OBJ_LAST, 0x81, 0x71, 0x61);
	EM(&e, O_COPY, SESS(0), OBJ(C_SEC, L_HMAC), 0x83, 0x00, 0x60, 0x31);
	EM(&e, O_LOGOUT, SESS(0));
	EM(&e, O_GET, SESS(0), OBJ_LAST, 0x81, 0x91, 0x61);
	write_seed(d, "copy-compact", &e);

	/* a session object created, changed, read, destroyed, used */
	e.n = 0;
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	EM(&e, O_CREATE, SESS(0), 4, A_ULONG(T_CLASS, U_SEC),
	   A_ULONG(T_KEY_TYPE, U_AES), A_FALSE(T_TOKEN), A_BYTES(T_VALUE, 32));
	for (int i = 0; i < 32; i++)
		EM(&e, 0x41 + i);
	EM(&e, O_SET, SESS(0), OBJ_LAST, 1, A_TRUE(T_SENSITIVE));
	EM(&e, O_GET, SESS(0), OBJ_LAST, 1, G(T_VALUE), G(T_SENSITIVE));
	EM(&e, O_DESTROY, SESS(0), OBJ_LAST);
	EM(&e, O_ENCRYPT, SESS(0), OBJ_LAST, MECH(M_AES_ECB), 0);
	write_seed(d, "create-set-destroy", &e);

	/* ECDH with the EC key, a random string, a digest */
	e.n = 0;
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	EM(&e, O_DERIVE, SESS(0), OBJ(C_PRIV, L_EC), MECH_P(M_ECDH), 0, 4,
	   A_ULONG(T_CLASS, U_SEC), A_ULONG(T_KEY_TYPE, U_GENERIC),
	   A_FALSE(T_TOKEN), A_ULONG(T_VALUE_LEN, U_32));
	EM(&e, O_GET, SESS(0), OBJ_LAST, 1, G(T_VALUE), G(T_VALUE_LEN));
	EM(&e, O_RANDOM, SESS(0), 1);
	EM(&e, O_DIGEST, SESS(0), MECH(M_SHA256), 1, 0, DATA(1), 'a', 'b',
	   'c', 'd', OUT_ALL);
	EM(&e, O_GENKEY, SESS(0), MECH(M_AES_KEY_GEN), 3,
	   A_ULONG(T_VALUE_LEN, U_32), A_FALSE(T_TOKEN), A_FALSE(T_SENSITIVE));
	write_seed(d, "derive-random-digest", &e);

	/* sessions: one opened and closed, its handle used again, another
	 * token's object, all of token a's sessions closed */
	e.n = 0;
	EM(&e, O_OPEN, 0, 0);
	EM(&e, O_CLOSE, SESS(3));
	EM(&e, O_LOGIN, CLOSED(0), 0, 0);
	EM(&e, O_INFO, CLOSED(0), OBJ(C_CERT, L_RSA));
	EM(&e, O_LOGIN, SESS(1), 0, 0);
	EM(&e, O_GET, SESS(1), OBJ_OTHER(C_PRIV, L_RSA), 0, G(T_LABEL));
	EM(&e, O_GET, SESS(0), OBJ_OTHER(C_CERT, L_EC2), 0, G(T_LABEL));
	EM(&e, O_CLOSE_ALL, 0);
	EM(&e, O_INFO, SESS(0), OBJ(C_CERT, L_EC2));
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	write_seed(d, "sessions", &e);

	/* a wrong PIN, the SO, a context-specific login for "own" */
	e.n = 0;
	EM(&e, O_LOGIN, SESS(0), 0, 2 + 6 * 4, 'n', 'o', 'p', 'e');
	EM(&e, O_LOGIN, SESS(0), 2, 0);
	EM(&e, O_LOGOUT, SESS(0));
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	EM(&e, O_SIGN, SESS(0), OBJ(C_PRIV, L_OWN), MECH(M_ECDSA_SHA256), 0);
	EM(&e, O_LOGIN, SESS(0), 3, 5);
	EM(&e, O_CONT, SESS(0), 0, 0, DATA(1), 'd', 'a', 't', 'a', OUT_ALL);
	write_seed(d, "pins", &e);

	/* token writes: a new secret entry, a rename, a delete */
	e.n = 0;
	EM(&e, O_LOGIN, SESS(0), 0, 0);
	EM(&e, O_CREATE, SESS(0), 4, A_ULONG(T_CLASS, U_SEC),
	   A_ULONG(T_KEY_TYPE, U_AES), A_TRUE(T_TOKEN), A_BYTES(T_VALUE, 16));
	for (int i = 0; i < 16; i++)
		EM(&e, 0x61 + i);
	EM(&e, O_SET, SESS(0), OBJ(C_SEC, L_HMAC), 1, A_LABEL(T_LABEL, L_X));
	EM(&e, O_DESTROY, SESS(0), OBJ(C_SEC, L_AES));
	EM(&e, O_FIND_ALL, SESS(0), 1, A_ULONG(T_CLASS, U_SEC));
	write_seed(d, "token-writes", &e);

	/* templates that lie: NULL values with lengths */
	e.n = 0;
	EM(&e, O_FIND_ALL, SESS(0), 1, A_NULL(T_LABEL, 3));
	EM(&e, O_CREATE, SESS(0), 2, A_ULONG(T_CLASS, U_SEC),
	   A_NULL(T_VALUE, 4));
	EM(&e, O_GET, SESS(0), OBJ(C_CERT, L_RSA), 0xf8, G(T_VALUE));
	write_seed(d, "lies", &e);
}

int FUZZ_INIT(int *argc, char ***argv)
{
	const char *seeds = getenv("FUZZ_P11_SEEDS");
	void *lib;
	CK_C_GetFunctionList gfl;

	(void)argc;
	(void)argv;
	setenv("OPENSSL_CONF", "/dev/null", 1);
	unsetenv("WKS_PKCS11_DEBUG");
	if (!getenv("FUZZ_P11_DEBUG"))
		unsetenv("WKS_PKCS11_DEBUG");
	else
		setenv("WKS_PKCS11_DEBUG", getenv("FUZZ_P11_DEBUG"), 1);
	unsetenv("WKS_PROPERTIES");
	trace = getenv("FUZZ_P11_TRACE") != NULL;
	if (getenv("FUZZ_P11_STRIDE") &&
	    !(getenv("WKS_TEST_FULL") &&
	      strcmp(getenv("WKS_TEST_FULL"), "1") == 0))
		stride = strtoul(getenv("FUZZ_P11_STRIDE"), NULL, 10);
	if (stride < 1)
		stride = 1;
	if (seeds) {
		write_seeds(seeds);
		exit(0);
	}
	make_stores();
	setenv("WKS_PKCS11_CONF", conf_path, 1);
	if (!(lib = dlopen(WKS_PKCS11_MODULE, RTLD_NOW | RTLD_LOCAL)))
		DIE("dlopen %s: %s", WKS_PKCS11_MODULE, dlerror());
	if (!(gfl = (CK_C_GetFunctionList)(uintptr_t)dlsym(
		      lib, "C_GetFunctionList")) || gfl(&F) != CKR_OK)
		DIE("C_GetFunctionList");
	atexit(finalize_at_exit);
	return 0;
}
