/*
 * libwks-pkcs11.so (pkcs11/, docs/PKCS11.md) as a program sees it: the
 * built module dlopen()ed and driven through its function list, with the
 * stores written by libwks (linked here; the module carries its own
 * static copy) and every signature, decryption and digest checked with
 * OpenSSL directly.
 *
 * The stores are made once, at 10000 PBKDF2 iterations: "main.wks"
 * (read by the read-only tests), copied to "w.wks" before each test that
 * writes.  Every store the module changed is also read by
 * shared/tools/wksdump.py (in the default mode two of them; all with
 * WKS_TEST_FULL=1, which also signs more rounds in the thread test).
 * Default mode: about 5 s on an idle 2-core machine.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/keyctl.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "pkcs11v3.h"
#include "config.h"
#include "sharefmt.h"
#include "testutil.h"

#define PIN "store pin 1"
#define PIN_LEN (sizeof(PIN) - 1)
#define KEYPW "key pin 2"
#define KEYPW_LEN (sizeof(KEYPW) - 1)

static void *lib;
static CK_FUNCTION_LIST *F;
static char *dir;
static char conf[700], main_store[600], w_store[600], new_store[600];
static char debug_log[700];
static EVP_PKEY *ed_key, *ed448_key;
static uint8_t aes_key[32], hmac_key[32];

/* slots, in the configuration's order */
enum { SLOT_MAIN, SLOT_W, SLOT_RO, SLOT_NEW };

#define CK(call) do { \
	CK_RV rv_ = (call); \
	if (rv_ != CKR_OK) \
		fail_msg("%s: 0x%lx", #call, (unsigned long)rv_); \
} while (0)
#define CKE(want, call) do { \
	CK_RV rv_ = (call); \
	if (rv_ != (CK_RV)(want)) \
		fail_msg("%s: 0x%lx, want 0x%lx (%s)", #call, \
			 (unsigned long)rv_, (unsigned long)(want), #want); \
} while (0)

/* ---- fixtures ------------------------------------------------------------- */

static X509 *self_signed(EVP_PKEY *key, const char *cn)
{
	X509 *x = X509_new();
	X509_NAME *n = X509_get_subject_name(x);

	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 30);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, n);
	assert_true(X509_sign(x, key, NULL) > 0);
	return x;
}

static void write_conf(void)
{
	FILE *f = fopen(conf, "w");

	assert_non_null(f);
	fprintf(f, "# test configuration\n"
		"[token]\nlabel = main\nstore = main.wks\n"
		"wolfjce.wks.iterationCount = 10000\n\n"
		"[token]\nlabel = w\nstore = %s\n"
		"wolfjce.wks.iterationCount = 10000\nkek-cache-ttl = 60\n\n"
		"[token]\nlabel = ro\nstore = ro.wks\nread-only = yes\n\n"
		"[token]\nlabel = new\nstore = %s\n"
		"wolfjce.wks.iterationCount = 10000\n",
		w_store, new_store);
	fclose(f);
}

static void copy_file(const char *from, const char *to);

static int group_setup(void **state)
{
	wks_store *st = tu_store_fast();
	X509 *x;
	char link[700];

	(void)state;
	dir = tu_tmpdir();
	snprintf(conf, sizeof(conf), "%s/wks-pkcs11.conf", dir);
	snprintf(main_store, sizeof(main_store), "%s/main.wks", dir);
	snprintf(w_store, sizeof(w_store), "%s/w.wks", dir);
	snprintf(new_store, sizeof(new_store), "%s/new.wks", dir);
	/* the read-only token's store: a copy of main.wks (one store
	 * named twice is a configuration error, test_pkcs11__same_store) */
	snprintf(link, sizeof(link), "%s/ro.wks", dir);
	TU_OK(tu_set_key_files(st, "rsa", "server-key.pem",
			       "server-cert-chain2.pem", PIN));
	TU_OK(tu_set_key_files(st, "ec", "ecc-key.pem", "server-ecc-cert.pem",
			       PIN));
	/* a key with a password of its own */
	TU_OK(tu_set_key_files(st, "other", "ecc-client-key.pem",
			       "client-ecc-cert.pem", KEYPW));
	assert_non_null(ed_key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519"));
	x = self_signed(ed_key, "ed");
	TU_OK(wks_store_set_pkey(st, "ed", ed_key, &x, 1, PIN, PIN_LEN));
	X509_free(x);
	assert_non_null(ed448_key = EVP_PKEY_Q_keygen(NULL, NULL, "ED448"));
	x = self_signed(ed448_key, "ed448");
	TU_OK(wks_store_set_pkey(st, "ed448", ed448_key, &x, 1, PIN, PIN_LEN));
	X509_free(x);
	{
		tu_der *ca = NULL;
		size_t n = tu_pem_ders(&ca, tu_input("ca-cert.pem"),
				       "CERTIFICATE");

		assert_true(n >= 1);
		TU_OK(wks_store_set_cert_der(st, "ca", ca[0].der, ca[0].len));
		tu_ders_free(ca, n);
	}
	assert_int_equal(RAND_bytes(aes_key, 32), 1);
	assert_int_equal(RAND_bytes(hmac_key, 32), 1);
	TU_OK(wks_store_set_secret_key(st, "aes", "AES", aes_key, 32, PIN,
				       PIN_LEN));
	TU_OK(wks_store_set_secret_key(st, "hmac", "HmacSHA256", hmac_key, 32,
				       PIN, PIN_LEN));
	TU_OK(wks_store_save_file(st, main_store, PIN, PIN_LEN));
	wks_store_free(st);
	copy_file(main_store, link);
	write_conf();
	setenv("WKS_PKCS11_CONF", conf, 1);
	/* The module's debug log (read by test_pkcs11__shared_login); the
	 * module opens it once per process. */
	snprintf(debug_log, sizeof(debug_log), "%s/module.log", dir);
	setenv("WKS_PKCS11_DEBUG", debug_log, 1);
	lib = dlopen(WKS_PKCS11_MODULE, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		fail_msg("dlopen: %s", dlerror());
	{
		CK_C_GetFunctionList gfl = (CK_C_GetFunctionList)(uintptr_t)
			dlsym(lib, "C_GetFunctionList");

		assert_non_null(gfl);
		assert_int_equal(gfl(&F), CKR_OK);
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	EVP_PKEY_free(ed_key);
	EVP_PKEY_free(ed448_key);
	tu_rmtree(dir);
	free(dir);
	/* the module is built -z nodelete: dlclose() leaves it mapped */
	if (lib)
		dlclose(lib);
	return 0;
}

static void copy_file(const char *from, const char *to)
{
	size_t n;
	uint8_t *p = tu_read_file(from, &n);

	tu_write_file(to, p, n);
	free(p);
}

/* Each test: a fresh w.wks, no new.wks, the module initialised. */
static int setup(void **state)
{
	(void)state;
	copy_file(main_store, w_store);
	unlink(new_store);
	write_conf();
	setenv("WKS_PKCS11_CONF", conf, 1);
	CK(F->C_Initialize(NULL));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	F->C_Finalize(NULL);
	return 0;
}

/* ---- helpers --------------------------------------------------------------- */

static CK_SESSION_HANDLE open_session(CK_SLOT_ID slot, int rw)
{
	CK_SESSION_HANDLE s = 0;

	CK(F->C_OpenSession(slot, CKF_SERIAL_SESSION | (rw ? CKF_RW_SESSION : 0),
			    NULL, NULL, &s));
	return s;
}

static CK_SESSION_HANDLE user_session(CK_SLOT_ID slot, int rw)
{
	CK_SESSION_HANDLE s = open_session(slot, rw);

	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	return s;
}

/* Every object matching the template: the count, handles in out[]. */
static size_t find(CK_SESSION_HANDLE s, CK_ATTRIBUTE *t, CK_ULONG n,
		   CK_OBJECT_HANDLE *out, size_t max)
{
	CK_ULONG got = 0;

	CK(F->C_FindObjectsInit(s, t, n));
	CK(F->C_FindObjects(s, out, max, &got));
	CK(F->C_FindObjectsFinal(s));
	return got;
}

static size_t find_cls(CK_SESSION_HANDLE s, CK_OBJECT_CLASS cls,
		       const char *label, CK_OBJECT_HANDLE *out, size_t max)
{
	CK_ATTRIBUTE t[2] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_LABEL, (void *)label, label ? strlen(label) : 0 },
	};

	return find(s, t, label ? 2 : 1, out, max);
}

static CK_OBJECT_HANDLE one(CK_SESSION_HANDLE s, CK_OBJECT_CLASS cls,
			    const char *label)
{
	CK_OBJECT_HANDLE h[4];
	size_t n = find_cls(s, cls, label, h, 4);

	if (n != 1)
		fail_msg("%zu objects of class %lu labelled \"%s\"", n,
			 (unsigned long)cls, label);
	return h[0];
}

/* An attribute's value (malloc'ed, *len set). */
static uint8_t *attr(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o,
		     CK_ATTRIBUTE_TYPE type, CK_ULONG *len)
{
	CK_ATTRIBUTE a = { type, NULL, 0 };
	uint8_t *p;

	CK(F->C_GetAttributeValue(s, o, &a, 1));
	p = malloc(a.ulValueLen + 1);
	assert_non_null(p);
	a.pValue = p;
	CK(F->C_GetAttributeValue(s, o, &a, 1));
	*len = a.ulValueLen;
	return p;
}

static CK_ULONG attr_ulong(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o,
			   CK_ATTRIBUTE_TYPE type)
{
	CK_ULONG v = 0;
	CK_ATTRIBUTE a = { type, &v, sizeof(v) };

	CK(F->C_GetAttributeValue(s, o, &a, 1));
	assert_int_equal(a.ulValueLen, sizeof(v));
	return v;
}

static int attr_bool(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o,
		     CK_ATTRIBUTE_TYPE type)
{
	CK_BBOOL v = 0;
	CK_ATTRIBUTE a = { type, &v, sizeof(v) };

	CK(F->C_GetAttributeValue(s, o, &a, 1));
	return v == CK_TRUE;
}

/* The certificate object `label` as an X509. */
static X509 *cert_of(CK_SESSION_HANDLE s, const char *label)
{
	CK_ULONG n;
	uint8_t *der = attr(s, one(s, CKO_CERTIFICATE, label), CKA_VALUE, &n);
	const unsigned char *p = der;
	X509 *x = d2i_X509(NULL, &p, (long)n);

	assert_non_null(x);
	free(der);
	return x;
}

/* Sign `data` in one call, with the size query first. */
static uint8_t *sign1(CK_SESSION_HANDLE s, CK_MECHANISM *m,
		      CK_OBJECT_HANDLE k, const uint8_t *data, size_t dn,
		      CK_ULONG *sn)
{
	uint8_t *sig;

	CK(F->C_SignInit(s, m, k));
	*sn = 0;
	CK(F->C_Sign(s, (CK_BYTE_PTR)data, dn, NULL, sn));
	sig = malloc(*sn);
	assert_non_null(sig);
	CK(F->C_Sign(s, (CK_BYTE_PTR)data, dn, sig, sn));
	return sig;
}

static uint8_t msg[] = "The quick brown fox jumps over the lazy dog";
#define MSG_LEN (sizeof(msg) - 1)

/* ---- general: function lists, interfaces, initialisation -------------------- */

static void test_pkcs11__interfaces(void **state)
{
	CK_RV (*gil)(CK_INTERFACE_PTR, CK_ULONG_PTR) =
		(CK_RV(*)(CK_INTERFACE_PTR, CK_ULONG_PTR))(uintptr_t)dlsym(
			lib, "C_GetInterfaceList");
	CK_RV (*gi)(CK_UTF8CHAR_PTR, CK_VERSION_PTR, CK_INTERFACE_PTR_PTR,
		    CK_FLAGS) =
		(CK_RV(*)(CK_UTF8CHAR_PTR, CK_VERSION_PTR,
			  CK_INTERFACE_PTR_PTR, CK_FLAGS))(uintptr_t)dlsym(
			lib, "C_GetInterface");
	CK_INTERFACE list[2], *ip = NULL;
	CK_VERSION v240 = { 2, 40 }, v99 = { 9, 9 };
	CK_ULONG n = 0;
	CK_INFO info;
	const wks_p11_function_list_3_0 *f3;

	(void)state;
	assert_non_null(gil);
	assert_non_null(gi);
	assert_int_equal(F->version.major, 2);
	assert_int_equal(F->version.minor, 40);
	CK(gil(NULL, &n));
	assert_int_equal(n, 2);
	n = 1;
	CKE(CKR_BUFFER_TOO_SMALL, gil(list, &n));
	assert_int_equal(n, 2);
	CK(gil(list, &n));
	assert_string_equal((char *)list[0].pInterfaceName, "PKCS 11");
	/* the default interface is 3.0; the module is not fork-safe */
	CK(gi(NULL, NULL, &ip, 0));
	f3 = ip->pFunctionList;
	assert_int_equal(f3->v2.version.major, 3);
	assert_int_equal(f3->v2.version.minor, 0);
	assert_int_equal(ip->flags, 0);
	assert_ptr_equal(f3->v2.C_Sign, F->C_Sign);
	CK(gi((CK_UTF8CHAR_PTR) "PKCS 11", &v240, &ip, 0));
	assert_ptr_equal(ip->pFunctionList, F);
	CKE(CKR_ARGUMENTS_BAD, gi(NULL, &v99, &ip, 0));
	CKE(CKR_ARGUMENTS_BAD, gi((CK_UTF8CHAR_PTR) "PKCS 12", NULL, &ip, 0));
	CKE(CKR_ARGUMENTS_BAD, gi(NULL, NULL, &ip, CKF_INTERFACE_FORK_SAFE));
	/* initialised by setup() */
	CKE(CKR_CRYPTOKI_ALREADY_INITIALIZED, F->C_Initialize(NULL));
	CK(F->C_GetInfo(&info));
	assert_int_equal(info.cryptokiVersion.major, 2);
	assert_memory_equal(info.manufacturerID, "libwks  ", 8);
	CK(f3->v2.C_GetInfo(&info));
	assert_int_equal(info.cryptokiVersion.major, 3);
	/* the message functions are there and say no */
	CKE(CKR_FUNCTION_NOT_SUPPORTED, f3->C_MessageSignInit(1, NULL, 0));
	CKE(CKR_ARGUMENTS_BAD, F->C_Finalize((void *)1));
	CK(F->C_Finalize(NULL));
	CKE(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_Finalize(NULL));
	CKE(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetInfo(&info));
	CKE(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetSlotList(0, NULL, &n));
	CK(F->C_Initialize(NULL));
}

static CK_RV fake_create(CK_VOID_PTR_PTR m)
{
	*m = NULL;
	return CKR_OK;
}

static CK_RV fake_mutex(CK_VOID_PTR m)
{
	(void)m;
	return CKR_OK;
}

static void test_pkcs11__init_args(void **state)
{
	CK_C_INITIALIZE_ARGS a;

	(void)state;
	CK(F->C_Finalize(NULL));
	memset(&a, 0, sizeof(a));
	a.CreateMutex = fake_create;
	/* some callbacks but not all */
	CKE(CKR_ARGUMENTS_BAD, F->C_Initialize(&a));
	a.DestroyMutex = fake_mutex;
	a.LockMutex = fake_mutex;
	a.UnlockMutex = fake_mutex;
	/* the application's mutexes only: the module cannot */
	CKE(CKR_CANT_LOCK, F->C_Initialize(&a));
	/* ... or either: the system's */
	a.flags = CKF_OS_LOCKING_OK;
	CK(F->C_Initialize(&a));
	CK(F->C_Finalize(NULL));
	/* no thread of the module's own: stores derive in the caller */
	memset(&a, 0, sizeof(a));
	a.flags = CKF_LIBRARY_CANT_CREATE_OS_THREADS | CKF_OS_LOCKING_OK;
	CK(F->C_Initialize(&a));
	{
		CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
		CK_ULONG sn;
		CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
		uint8_t *sig = sign1(s, &m, one(s, CKO_PRIVATE_KEY, "ec"), msg,
				     MSG_LEN, &sn);

		free(sig);
	}
}

/* C_Initialize fails with CKR_GENERAL_ERROR and says `expect` on
 * standard error (caught here). */
static void expect_init_error(const char *expect)
{
	char path[700], out[4096];
	int fd, saved;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr.txt", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	CKE(CKR_GENERAL_ERROR, F->C_Initialize(NULL));
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	assert_true(n > 0);
	out[n] = '\0';
	if (!strstr(out, expect))
		fail_msg("message \"%s\" lacks \"%s\"", out, expect);
	assert_non_null(strstr(out, "libwks-pkcs11: "));
}

/* A configuration that C_Initialize refuses, with its message. */
static void bad_conf(const char *text, const char *expect)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bad.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	setenv("WKS_PKCS11_CONF", path, 1);
	expect_init_error(expect);
	setenv("WKS_PKCS11_CONF", conf, 1);
}

static void test_pkcs11__bad_configuration(void **state)
{
	CK_ULONG n;

	(void)state;
	CK(F->C_Finalize(NULL));
	bad_conf("[token]\nlable = x\nstore = /a\n", "line 2: unknown key");
	bad_conf("[token]\nlabel = x\n", "without a store");
	bad_conf("[token]\nlabel = 123456789012345678901234567890123\n"
		 "store = /a\n", "line 2: label: 33 bytes");
	bad_conf("[token]\nlabel = a\nstore = /a\n[token]\nlabel = a\n"
		 "store = /b\n", "line 4: label \"a\" is already");
	bad_conf("[token]\nlabel = a\nstore = /a\nkek-cache-ttl = -5\n",
		 "kek-cache-ttl: expected seconds");
	bad_conf("[token]\nlabel = a\nstore = /a\nread-only = sometimes\n",
		 "read-only: expected yes or no");
	bad_conf("store = /a\n", "outside a [token] section");
	bad_conf("[slot]\n", "unknown section [slot]");
	bad_conf("[token]\nlabel = a\x1b[31m\nstore = /a\n",
		 "label: invalid UTF-8 or a control character");
	bad_conf("[token]\nla\x1b[2Jbel = a\n", "unknown key \"la?[2Jbel\"");
	/* a named file that does not exist */
	setenv("WKS_PKCS11_CONF", "/nonexistent/wks-pkcs11.conf", 1);
	expect_init_error("/nonexistent/wks-pkcs11.conf: No such file");
	CKE(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetSlotList(0, NULL, &n));
	/* an empty file: no token */
	{
		char path[700];

		snprintf(path, sizeof(path), "%s/empty.conf", dir);
		tu_write_file(path, (const uint8_t *)"# nothing\n", 10);
		setenv("WKS_PKCS11_CONF", path, 1);
		CK(F->C_Initialize(NULL));
		CK(F->C_GetSlotList(CK_TRUE, NULL, &n));
		assert_int_equal(n, 0);
		CK(F->C_Finalize(NULL));
	}
	setenv("WKS_PKCS11_CONF", conf, 1);
	CK(F->C_Initialize(NULL));
}

/* The parser alone (pkcs11/config.c): what it makes of good input. */
static void test_pkcs11__config_parser(void **state)
{
	const char *text =
		"; comment\r\n[ token ]\r\n  label =  spaced label \r\n"
		"store=rel/x.wks\r\nread-only = YES\r\nkek-cache-ttl = 42\r\n"
		"wolfjce.wks.iterationCount = 20000\r\n"
		"libwks.keystore.kekCacheIdleSec =\r\n"
		"[token]\nlabel = b\nstore = /abs/b.wks\n";
	w11_conf *c = NULL;
	char err[256];

	(void)state;
	assert_int_equal(w11_conf_parse(&c, text, strlen(text), "/base", err,
					sizeof(err)),
			 0);
	assert_int_equal(c->ntokens, 2);
	assert_string_equal(c->tokens[0].label, "spaced label");
	assert_string_equal(c->tokens[0].store, "/base/rel/x.wks");
	assert_int_equal(c->tokens[0].read_only, 1);
	assert_int_equal(c->tokens[0].kek_ttl, 42);
	assert_int_equal(c->tokens[0].nprops, 2);
	assert_string_equal(c->tokens[0].prop_name[0],
			    "wolfjce.wks.iterationCount");
	assert_string_equal(c->tokens[0].prop_value[0], "20000");
	assert_string_equal(c->tokens[0].prop_value[1], "");
	assert_int_equal(c->tokens[1].read_only, 0);
	assert_int_equal(c->tokens[1].kek_ttl, -1);
	w11_conf_free(c);
	/* NUL bytes and over-long lines */
	assert_int_equal(w11_conf_parse(&c, "[token]\0x", 9, NULL, err,
					sizeof(err)),
			 -1);
	assert_null(c);
	assert_non_null(strstr(err, "line 1: a NUL byte"));
	{
		size_t n = W11_CONF_MAX_LINE + 10;
		char *big = malloc(n);

		memset(big, 'a', n);
		assert_int_equal(w11_conf_parse(&c, big, n, NULL, err,
						sizeof(err)),
				 -1);
		assert_non_null(strstr(err, "longer than"));
		free(big);
	}
	/* a relative store needs a folder */
	assert_int_equal(w11_conf_parse(&c, "[token]\nlabel=a\nstore=x\n", 23,
					NULL, err, sizeof(err)),
			 -1);
}

/* ---- slots and tokens ----------------------------------------------------------- */

static void test_pkcs11__slots_and_tokens(void **state)
{
	CK_SLOT_ID slots[8];
	CK_ULONG n = 0;
	CK_TOKEN_INFO ti, ti2;
	CK_SLOT_INFO si;
	CK_SESSION_INFO sinfo;
	CK_SESSION_HANDLE s;

	(void)state;
	CK(F->C_GetSlotList(CK_TRUE, NULL, &n));
	assert_int_equal(n, 4);
	n = 2;
	CKE(CKR_BUFFER_TOO_SMALL, F->C_GetSlotList(CK_TRUE, slots, &n));
	assert_int_equal(n, 4);
	CK(F->C_GetSlotList(CK_FALSE, slots, &n));
	assert_int_equal(slots[3], 3);
	CK(F->C_GetSlotInfo(SLOT_MAIN, &si));
	assert_true(si.flags & CKF_TOKEN_PRESENT);
	CKE(CKR_SLOT_ID_INVALID, F->C_GetSlotInfo(4, &si));
	CK(F->C_GetTokenInfo(SLOT_MAIN, &ti));
	assert_memory_equal(ti.label, "main                            ", 32);
	assert_true(ti.flags & CKF_TOKEN_INITIALIZED);
	assert_true(ti.flags & CKF_LOGIN_REQUIRED);
	assert_false(ti.flags & CKF_WRITE_PROTECTED);
	/* the serial is the store's (one store, one token:
	 * test_pkcs11__same_store) */
	CK(F->C_GetTokenInfo(SLOT_RO, &ti2));
	assert_memory_not_equal(ti.serialNumber, ti2.serialNumber, 16);
	assert_true(ti2.flags & CKF_WRITE_PROTECTED);
	CK(F->C_GetTokenInfo(SLOT_W, &ti2));
	assert_memory_not_equal(ti.serialNumber, ti2.serialNumber, 16);
	/* a store that does not exist yet: not initialised */
	CK(F->C_GetTokenInfo(SLOT_NEW, &ti));
	assert_false(ti.flags & CKF_TOKEN_INITIALIZED);
	/* stable across initialisations */
	CK(F->C_GetTokenInfo(SLOT_W, &ti));
	CK(F->C_Finalize(NULL));
	CK(F->C_Initialize(NULL));
	CK(F->C_GetTokenInfo(SLOT_W, &ti2));
	assert_memory_equal(ti.serialNumber, ti2.serialNumber, 16);
	/* sessions */
	CKE(CKR_SESSION_PARALLEL_NOT_SUPPORTED,
	    F->C_OpenSession(SLOT_MAIN, 0, NULL, NULL, &s));
	CKE(CKR_TOKEN_WRITE_PROTECTED,
	    F->C_OpenSession(SLOT_RO, CKF_SERIAL_SESSION | CKF_RW_SESSION,
			     NULL, NULL, &s));
	s = open_session(SLOT_MAIN, 1);
	CK(F->C_GetSessionInfo(s, &sinfo));
	assert_int_equal(sinfo.state, CKS_RW_PUBLIC_SESSION);
	CK(F->C_GetTokenInfo(SLOT_MAIN, &ti));
	assert_int_equal(ti.ulSessionCount, 1);
	assert_int_equal(ti.ulRwSessionCount, 1);
	CK(F->C_CloseSession(s));
	CKE(CKR_SESSION_HANDLE_INVALID, F->C_CloseSession(s));
	CKE(CKR_SESSION_HANDLE_INVALID, F->C_GetSessionInfo(s, &sinfo));
}

/* ---- objects --------------------------------------------------------------------- */

static void test_pkcs11__public_objects(void **state)
{
	CK_SESSION_HANDLE s = open_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE h[32], pub, crt, ca;
	CK_ULONG n, n2;
	uint8_t *v, *v2, buf[4];
	wks_store *st = tu_store_fast();
	X509 *leaf;
	BIGNUM *bn = NULL;
	CK_ATTRIBUTE a;
	CK_OBJECT_CLASS cls;
	CK_ATTRIBUTE t[1] = { { CKA_CLASS, &cls, sizeof(cls) } };

	(void)state;
	TU_OK(wks_store_load_file(st, main_store, PIN, PIN_LEN));
	/* without login: certificates and public keys only */
	cls = CKO_PRIVATE_KEY;
	assert_int_equal(find(s, t, 1, h, 32), 0);
	cls = CKO_SECRET_KEY;
	assert_int_equal(find(s, t, 1, h, 32), 0);
	/* rsa (leaf + CA), ec, other, ed, ed448, and the trusted ca */
	cls = CKO_CERTIFICATE;
	assert_int_equal(find(s, t, 1, h, 32), 7);
	cls = CKO_PUBLIC_KEY;
	assert_int_equal(find(s, t, 1, h, 32), 5);
	assert_int_equal(find(s, NULL, 0, h, 32), 12);

	/* an RSA public key: modulus and exponent are the certificate's */
	pub = one(s, CKO_PUBLIC_KEY, "rsa");
	crt = one(s, CKO_CERTIFICATE, "rsa");
	assert_int_equal(attr_ulong(s, pub, CKA_KEY_TYPE), CKK_RSA);
	TU_OK(wks_store_get_cert(&leaf, st, "rsa", 0));
	v = attr(s, pub, CKA_MODULUS, &n);
	assert_true(EVP_PKEY_get_bn_param(X509_get0_pubkey(leaf),
					  OSSL_PKEY_PARAM_RSA_N, &bn));
	assert_int_equal(n, (CK_ULONG)BN_num_bytes(bn));
	{
		uint8_t *m = malloc(n);

		BN_bn2bin(bn, m);
		assert_memory_equal(v, m, n);
		free(m);
	}
	BN_free(bn);
	free(v);
	v = attr(s, pub, CKA_PUBLIC_EXPONENT, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(v, "\x01\x00\x01", 3);
	free(v);
	assert_int_equal(attr_ulong(s, pub, CKA_MODULUS_BITS), 2048);
	assert_true(attr_bool(s, pub, CKA_VERIFY));
	assert_true(attr_bool(s, pub, CKA_ENCRYPT));
	assert_true(attr_bool(s, pub, CKA_TOKEN));
	assert_false(attr_bool(s, pub, CKA_PRIVATE));
	/* CKA_ID: the certificate's subject key identifier, shared */
	v = attr(s, pub, CKA_ID, &n);
	v2 = attr(s, crt, CKA_ID, &n2);
	assert_int_equal(n, n2);
	assert_memory_equal(v, v2, n);
	{
		const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(leaf);

		assert_non_null(ski);
		assert_int_equal(n, (CK_ULONG)ski->length);
		assert_memory_equal(v, ski->data, n);
	}
	free(v2);
	/* the certificate: DER, subject, issuer, serial */
	{
		unsigned char *der = NULL;
		int dl = i2d_X509(leaf, &der);

		v2 = attr(s, crt, CKA_VALUE, &n2);
		assert_int_equal(n2, dl);
		assert_memory_equal(v2, der, n2);
		OPENSSL_free(der);
		free(v2);
		der = NULL;
		dl = i2d_X509_NAME(X509_get_subject_name(leaf), &der);
		v2 = attr(s, crt, CKA_SUBJECT, &n2);
		assert_int_equal(n2, dl);
		assert_memory_equal(v2, der, n2);
		OPENSSL_free(der);
		free(v2);
		der = NULL;
		dl = i2d_X509_NAME(X509_get_issuer_name(leaf), &der);
		v2 = attr(s, crt, CKA_ISSUER, &n2);
		assert_memory_equal(v2, der, n2);
		OPENSSL_free(der);
		free(v2);
		der = NULL;
		dl = i2d_ASN1_INTEGER(X509_get_serialNumber(leaf), &der);
		v2 = attr(s, crt, CKA_SERIAL_NUMBER, &n2);
		assert_int_equal(n2, dl);
		assert_memory_equal(v2, der, n2);
		OPENSSL_free(der);
		free(v2);
	}
	assert_int_equal(attr_ulong(s, crt, CKA_CERTIFICATE_TYPE), CKC_X_509);
	assert_int_equal(attr_ulong(s, crt, CKA_CERTIFICATE_CATEGORY), 1);
	assert_false(attr_bool(s, crt, CKA_TRUSTED));
	X509_free(leaf);
	free(v);
	/* the chain's CA certificate and the trusted entry */
	crt = one(s, CKO_CERTIFICATE, "rsa/1");
	assert_false(attr_bool(s, crt, CKA_TRUSTED));
	assert_int_equal(attr_ulong(s, crt, CKA_CERTIFICATE_CATEGORY), 2);
	ca = one(s, CKO_CERTIFICATE, "ca");
	assert_true(attr_bool(s, ca, CKA_TRUSTED));
	/* an EC public key: named curve, DER OCTET STRING point */
	pub = one(s, CKO_PUBLIC_KEY, "ec");
	v = attr(s, pub, CKA_EC_PARAMS, &n);
	assert_int_equal(n, 10);
	assert_memory_equal(v, "\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07", 10);
	free(v);
	v = attr(s, pub, CKA_EC_POINT, &n);
	assert_int_equal(n, 67);
	assert_int_equal(v[0], 0x04);
	assert_int_equal(v[1], 65);
	assert_int_equal(v[2], 0x04); /* uncompressed */
	free(v);
	/* Ed25519: the curve's OID, the 32-byte key in an OCTET STRING */
	pub = one(s, CKO_PUBLIC_KEY, "ed");
	assert_int_equal(attr_ulong(s, pub, CKA_KEY_TYPE), CKK_EC_EDWARDS);
	v = attr(s, pub, CKA_EC_PARAMS, &n);
	assert_int_equal(n, 5);
	assert_memory_equal(v, "\x06\x03\x2b\x65\x70", 5);
	free(v);
	v = attr(s, pub, CKA_EC_POINT, &n);
	assert_int_equal(n, 34);
	{
		uint8_t raw[32];
		size_t rl = 32;

		assert_true(EVP_PKEY_get_raw_public_key(ed_key, raw, &rl));
		assert_memory_equal(v + 2, raw, 32);
	}
	free(v);
	/* the size rules of C_GetAttributeValue */
	a.type = CKA_LABEL;
	a.pValue = buf;
	a.ulValueLen = 1;
	CKE(CKR_BUFFER_TOO_SMALL, F->C_GetAttributeValue(s, pub, &a, 1));
	assert_int_equal(a.ulValueLen, CK_UNAVAILABLE_INFORMATION);
	a.type = CKA_MODULUS;
	a.ulValueLen = sizeof(buf);
	CKE(CKR_ATTRIBUTE_TYPE_INVALID, F->C_GetAttributeValue(s, pub, &a, 1));
	assert_int_equal(a.ulValueLen, CK_UNAVAILABLE_INFORMATION);
	CKE(CKR_OBJECT_HANDLE_INVALID,
	    F->C_GetAttributeValue(s, 999999, &a, 1));
	/* find: a second Init while one is active */
	CK(F->C_FindObjectsInit(s, NULL, 0));
	CKE(CKR_OPERATION_ACTIVE, F->C_FindObjectsInit(s, NULL, 0));
	CK(F->C_FindObjectsFinal(s));
	CKE(CKR_OPERATION_NOT_INITIALIZED, F->C_FindObjects(s, h, 1, &n));
	wks_store_free(st);
}

static void test_pkcs11__login(void **state)
{
	CK_SESSION_HANDLE s = open_session(SLOT_MAIN, 0), s2;
	CK_OBJECT_HANDLE h[32], k;
	CK_SESSION_INFO si;
	CK_ATTRIBUTE a;
	uint8_t buf[64];
	CK_ULONG n;
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };

	(void)state;
	CKE(CKR_PIN_INCORRECT,
	    F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR) "wrong", 5));
	CKE(CKR_PIN_LEN_RANGE, F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR) "", 0));
	CKE(CKR_USER_TYPE_INVALID,
	    F->C_Login(s, 7, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	CKE(CKR_USER_NOT_LOGGED_IN, F->C_Logout(s));
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	CKE(CKR_USER_ALREADY_LOGGED_IN,
	    F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	/* one login for every session of the token */
	s2 = open_session(SLOT_MAIN, 0);
	CK(F->C_GetSessionInfo(s2, &si));
	assert_int_equal(si.state, CKS_RO_USER_FUNCTIONS);
	assert_int_equal(find_cls(s2, CKO_PRIVATE_KEY, NULL, h, 32), 5);
	assert_int_equal(find_cls(s2, CKO_SECRET_KEY, NULL, h, 32), 2);
	/* private keys: sensitive, not extractable */
	k = one(s, CKO_PRIVATE_KEY, "rsa");
	assert_true(attr_bool(s, k, CKA_SENSITIVE));
	assert_false(attr_bool(s, k, CKA_EXTRACTABLE));
	assert_false(attr_bool(s, k, CKA_ALWAYS_SENSITIVE));
	assert_false(attr_bool(s, k, CKA_NEVER_EXTRACTABLE));
	assert_true(attr_bool(s, k, CKA_SIGN));
	assert_true(attr_bool(s, k, CKA_DECRYPT));
	assert_true(attr_bool(s, k, CKA_PRIVATE));
	assert_false(attr_bool(s, k, CKA_ALWAYS_AUTHENTICATE));
	free(attr(s, k, CKA_MODULUS, &n));
	assert_int_equal(n, 256);
	a.type = CKA_PRIVATE_EXPONENT;
	a.pValue = buf;
	a.ulValueLen = sizeof(buf);
	CKE(CKR_ATTRIBUTE_SENSITIVE, F->C_GetAttributeValue(s, k, &a, 1));
	assert_int_equal(a.ulValueLen, CK_UNAVAILABLE_INFORMATION);
	/* the key with a password of its own */
	k = one(s, CKO_PRIVATE_KEY, "other");
	assert_true(attr_bool(s, k, CKA_ALWAYS_AUTHENTICATE));
	{
		CK_BBOOL yes = CK_TRUE;
		CK_ATTRIBUTE t[1] = { { CKA_ALWAYS_AUTHENTICATE, &yes, 1 } };

		assert_int_equal(find(s, t, 1, h, 32), 1);
		assert_int_equal(h[0], k);
	}
	/* secret keys */
	k = one(s, CKO_SECRET_KEY, "aes");
	assert_int_equal(attr_ulong(s, k, CKA_KEY_TYPE), CKK_AES);
	assert_int_equal(attr_ulong(s, k, CKA_VALUE_LEN), 32);
	assert_true(attr_bool(s, k, CKA_ENCRYPT));
	a.type = CKA_VALUE;
	a.ulValueLen = sizeof(buf);
	CKE(CKR_ATTRIBUTE_SENSITIVE, F->C_GetAttributeValue(s, k, &a, 1));
	assert_false(attr_bool(s, k, CKA_ALWAYS_AUTHENTICATE));
	k = one(s, CKO_SECRET_KEY, "hmac");
	assert_int_equal(attr_ulong(s, k, CKA_KEY_TYPE), CKK_GENERIC_SECRET);
	assert_true(attr_bool(s, k, CKA_SIGN));
	/* logout: private objects gone, operations refused */
	k = one(s, CKO_PRIVATE_KEY, "ec");
	CK(F->C_Logout(s2));
	assert_int_equal(find_cls(s, CKO_PRIVATE_KEY, NULL, h, 32), 0);
	CKE(CKR_USER_NOT_LOGGED_IN, F->C_SignInit(s, &m, k));
	CKE(CKR_OBJECT_HANDLE_INVALID, F->C_GetAttributeValue(s, k, &a, 1));
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	CK(F->C_SignInit(s, &m, k));
	/* closing the last session logs out */
	CK(F->C_CloseSession(s2));
	CK(F->C_CloseSession(s));
	s = open_session(SLOT_MAIN, 0);
	CK(F->C_GetSessionInfo(s, &si));
	assert_int_equal(si.state, CKS_RO_PUBLIC_SESSION);
	/* and C_CloseAllSessions too */
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	CK(F->C_CloseAllSessions(SLOT_MAIN));
	CKE(CKR_SESSION_HANDLE_INVALID, F->C_GetSessionInfo(s, &si));
	s = open_session(SLOT_MAIN, 0);
	CK(F->C_GetSessionInfo(s, &si));
	assert_int_equal(si.state, CKS_RO_PUBLIC_SESSION);
}

/* ---- signatures ------------------------------------------------------------- */

static const struct {
	CK_MECHANISM_TYPE mech, hash;
	const char *md;
	int pss;
} rsa_mechs[] = {
	{ CKM_SHA1_RSA_PKCS, CKM_SHA_1, "SHA1", 0 },
	{ CKM_SHA224_RSA_PKCS, CKM_SHA224, "SHA224", 0 },
	{ CKM_SHA256_RSA_PKCS, CKM_SHA256, "SHA256", 0 },
	{ CKM_SHA384_RSA_PKCS, CKM_SHA384, "SHA384", 0 },
	{ CKM_SHA512_RSA_PKCS, CKM_SHA512, "SHA512", 0 },
	{ CKM_SHA1_RSA_PKCS_PSS, CKM_SHA_1, "SHA1", 1 },
	{ CKM_SHA224_RSA_PKCS_PSS, CKM_SHA224, "SHA224", 1 },
	{ CKM_SHA256_RSA_PKCS_PSS, CKM_SHA256, "SHA256", 1 },
	{ CKM_SHA384_RSA_PKCS_PSS, CKM_SHA384, "SHA384", 1 },
	{ CKM_SHA512_RSA_PKCS_PSS, CKM_SHA512, "SHA512", 1 },
};

static CK_ULONG mgf_of(CK_MECHANISM_TYPE h)
{
	switch (h) {
	case CKM_SHA_1:
		return CKG_MGF1_SHA1;
	case CKM_SHA224:
		return CKG_MGF1_SHA224;
	case CKM_SHA256:
		return CKG_MGF1_SHA256;
	case CKM_SHA384:
		return CKG_MGF1_SHA384;
	default:
		return CKG_MGF1_SHA512;
	}
}

/* OpenSSL's verdict on an RSA signature of msg (PKCS#1 or PSS). */
static int ossl_rsa_verify(EVP_PKEY *pk, const char *md, int pss,
			   const uint8_t *sig, size_t sn)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pc = NULL;
	int ok;

	ok = EVP_DigestVerifyInit_ex(c, &pc, md, NULL, NULL, pk, NULL) > 0;
	if (ok && pss)
		ok = EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING) > 0 &&
		     EVP_PKEY_CTX_set_rsa_pss_saltlen(pc,
						      RSA_PSS_SALTLEN_DIGEST) > 0;
	ok = ok && EVP_DigestVerify(c, sig, sn, msg, MSG_LEN) == 1;
	EVP_MD_CTX_free(c);
	return ok;
}

static void test_pkcs11__sign_rsa(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "rsa");
	CK_OBJECT_HANDLE pub = one(s, CKO_PUBLIC_KEY, "rsa");
	X509 *x = cert_of(s, "rsa");
	EVP_PKEY *pk = X509_get0_pubkey(x);
	uint8_t *sig, small[8], md[64];
	CK_ULONG sn, n;
	unsigned int mdl;

	(void)state;
	for (size_t i = 0; i < sizeof(rsa_mechs) / sizeof(rsa_mechs[0]); i++) {
		CK_RSA_PKCS_PSS_PARAMS pp = { rsa_mechs[i].hash,
					      mgf_of(rsa_mechs[i].hash), 0 };
		CK_MECHANISM m = { rsa_mechs[i].mech, NULL, 0 };

		if (rsa_mechs[i].pss) {
			pp.sLen = (CK_ULONG)EVP_MD_get_size(
				EVP_get_digestbyname(rsa_mechs[i].md));
			m.pParameter = &pp;
			m.ulParameterLen = sizeof(pp);
		}
		/* single-part */
		sig = sign1(s, &m, k, msg, MSG_LEN, &sn);
		assert_int_equal(sn, 256);
		assert_true(ossl_rsa_verify(pk, rsa_mechs[i].md,
					    rsa_mechs[i].pss, sig, sn));
		/* and through the module */
		CK(F->C_VerifyInit(s, &m, pub));
		CK(F->C_Verify(s, msg, MSG_LEN, sig, sn));
		sig[10] ^= 1;
		CK(F->C_VerifyInit(s, &m, pub));
		CKE(CKR_SIGNATURE_INVALID, F->C_Verify(s, msg, MSG_LEN, sig, sn));
		free(sig);
		/* multi-part, with a buffer too small first */
		CK(F->C_SignInit(s, &m, k));
		CK(F->C_SignUpdate(s, msg, 10));
		CK(F->C_SignUpdate(s, msg + 10, MSG_LEN - 10));
		n = sizeof(small);
		CKE(CKR_BUFFER_TOO_SMALL, F->C_SignFinal(s, small, &n));
		assert_int_equal(n, 256);
		sig = malloc(n);
		CK(F->C_SignFinal(s, sig, &n));
		assert_true(ossl_rsa_verify(pk, rsa_mechs[i].md,
					    rsa_mechs[i].pss, sig, n));
		CK(F->C_VerifyInit(s, &m, pub));
		CK(F->C_VerifyUpdate(s, msg, 5));
		CK(F->C_VerifyUpdate(s, msg + 5, MSG_LEN - 5));
		CK(F->C_VerifyFinal(s, sig, n));
		free(sig);
	}
	/* raw PKCS#1 v1.5 over a DigestInfo */
	{
		static const uint8_t prefix[] = {
			0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48,
			0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04,
			0x20
		};
		uint8_t di[19 + 32];
		CK_MECHANISM m = { CKM_RSA_PKCS, NULL, 0 };

		memcpy(di, prefix, 19);
		EVP_Digest(msg, MSG_LEN, di + 19, &mdl, EVP_sha256(), NULL);
		sig = sign1(s, &m, k, di, sizeof(di), &sn);
		assert_true(ossl_rsa_verify(pk, "SHA256", 0, sig, sn));
		free(sig);
		/* no multi-part form; too long an input */
		CK(F->C_SignInit(s, &m, k));
		CKE(CKR_FUNCTION_NOT_SUPPORTED, F->C_SignUpdate(s, di, 5));
		CKE(CKR_OPERATION_NOT_INITIALIZED, F->C_SignFinal(s, NULL, &n));
		CK(F->C_SignInit(s, &m, k));
		{
			uint8_t big[250] = { 0 };

			n = 256;
			sig = malloc(n);
			CKE(CKR_DATA_LEN_RANGE,
			    F->C_Sign(s, big, sizeof(big), sig, &n));
			free(sig);
		}
	}
	/* raw PSS over a hash */
	{
		CK_RSA_PKCS_PSS_PARAMS pp = { CKM_SHA384, CKG_MGF1_SHA384, 48 };
		CK_MECHANISM m = { CKM_RSA_PKCS_PSS, &pp, sizeof(pp) };
		EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new(pk, NULL);

		EVP_Digest(msg, MSG_LEN, md, &mdl, EVP_sha384(), NULL);
		sig = sign1(s, &m, k, md, mdl, &sn);
		assert_true(EVP_PKEY_verify_init(pc) > 0);
		assert_true(EVP_PKEY_CTX_set_rsa_padding(pc,
						RSA_PKCS1_PSS_PADDING) > 0);
		assert_true(EVP_PKEY_CTX_set_signature_md(pc, EVP_sha384()) > 0);
		assert_true(EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, 48) > 0);
		assert_int_equal(EVP_PKEY_verify(pc, sig, sn, md, mdl), 1);
		EVP_PKEY_CTX_free(pc);
		free(sig);
		/* a hash of the wrong length, bad parameters */
		CK(F->C_SignInit(s, &m, k));
		n = 256;
		sig = malloc(n);
		CKE(CKR_DATA_LEN_RANGE, F->C_Sign(s, md, 32, sig, &n));
		free(sig);
		pp.hashAlg = 12345;
		CKE(CKR_MECHANISM_PARAM_INVALID, F->C_SignInit(s, &m, k));
		m.ulParameterLen = 3;
		CKE(CKR_MECHANISM_PARAM_INVALID, F->C_SignInit(s, &m, k));
	}
	/* wrong mechanisms, wrong keys, wrong signature lengths */
	{
		CK_MECHANISM m = { CKM_ECDSA, NULL, 0 }, m2 = { 0x7777, NULL, 0 };
		CK_MECHANISM m3 = { CKM_SHA256_RSA_PKCS, NULL, 0 };
		uint8_t junk[100] = { 0 };

		CKE(CKR_KEY_TYPE_INCONSISTENT, F->C_SignInit(s, &m, k));
		CKE(CKR_MECHANISM_INVALID, F->C_SignInit(s, &m2, k));
		CKE(CKR_KEY_FUNCTION_NOT_PERMITTED, F->C_SignInit(s, &m3, pub));
		CKE(CKR_KEY_HANDLE_INVALID,
		    F->C_SignInit(s, &m3, one(s, CKO_CERTIFICATE, "rsa")));
		CKE(CKR_OPERATION_NOT_INITIALIZED,
		    F->C_Sign(s, msg, MSG_LEN, NULL, &n));
		CK(F->C_VerifyInit(s, &m3, pub));
		CKE(CKR_SIGNATURE_LEN_RANGE,
		    F->C_Verify(s, msg, MSG_LEN, junk, sizeof(junk)));
		CK(F->C_SignInit(s, &m3, k));
		CKE(CKR_OPERATION_ACTIVE, F->C_SignInit(s, &m3, k));
		CK(F->C_Sign(s, msg, MSG_LEN, NULL, &n)); /* size only */
		assert_int_equal(n, 256);
		sig = malloc(n);
		CK(F->C_Sign(s, msg, MSG_LEN, sig, &n)); /* still active */
		free(sig);
	}
	X509_free(x);
}

/* r || s as an ECDSA-Sig-Value for OpenSSL. */
static int ossl_ecdsa_verify(EVP_PKEY *pk, const uint8_t *hash, size_t hl,
			     const uint8_t *sig, size_t sn)
{
	ECDSA_SIG *es = ECDSA_SIG_new();
	unsigned char *der = NULL;
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new(pk, NULL);
	int dl, ok;

	ECDSA_SIG_set0(es, BN_bin2bn(sig, (int)sn / 2, NULL),
		       BN_bin2bn(sig + sn / 2, (int)sn / 2, NULL));
	dl = i2d_ECDSA_SIG(es, &der);
	ok = EVP_PKEY_verify_init(pc) > 0 &&
	     EVP_PKEY_verify(pc, der, (size_t)dl, hash, hl) == 1;
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
	EVP_PKEY_CTX_free(pc);
	return ok;
}

static void test_pkcs11__sign_ec_ed(void **state)
{
	static const struct {
		CK_MECHANISM_TYPE m;
		const char *md;
	} ms[] = {
		{ CKM_ECDSA_SHA1, "SHA1" },     { CKM_ECDSA_SHA224, "SHA224" },
		{ CKM_ECDSA_SHA256, "SHA256" }, { CKM_ECDSA_SHA384, "SHA384" },
		{ CKM_ECDSA_SHA512, "SHA512" },
	};
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "ec");
	CK_OBJECT_HANDLE pub = one(s, CKO_PUBLIC_KEY, "ec");
	X509 *x = cert_of(s, "ec");
	uint8_t *sig, hash[64];
	unsigned int hl;
	CK_ULONG sn;

	(void)state;
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		CK_MECHANISM m = { ms[i].m, NULL, 0 };

		EVP_Digest(msg, MSG_LEN, hash, &hl,
			   EVP_get_digestbyname(ms[i].md), NULL);
		sig = sign1(s, &m, k, msg, MSG_LEN, &sn);
		assert_int_equal(sn, 64);
		assert_true(ossl_ecdsa_verify(X509_get0_pubkey(x), hash, hl,
					      sig, sn));
		CK(F->C_VerifyInit(s, &m, pub));
		CK(F->C_VerifyUpdate(s, msg, MSG_LEN));
		CK(F->C_VerifyFinal(s, sig, sn));
		free(sig);
	}
	{
		CK_MECHANISM m = { CKM_ECDSA, NULL, 0 };

		EVP_Digest(msg, MSG_LEN, hash, &hl, EVP_sha256(), NULL);
		sig = sign1(s, &m, k, hash, hl, &sn);
		assert_true(ossl_ecdsa_verify(X509_get0_pubkey(x), hash, hl,
					      sig, sn));
		CK(F->C_VerifyInit(s, &m, pub));
		CK(F->C_Verify(s, hash, hl, sig, sn));
		CK(F->C_VerifyInit(s, &m, pub));
		CKE(CKR_SIGNATURE_LEN_RANGE, F->C_Verify(s, hash, hl, sig, 63));
		free(sig);
	}
	X509_free(x);
	/* EdDSA: Ed25519 and Ed448, single- and multi-part */
	for (int i = 0; i < 2; i++) {
		const char *label = i ? "ed448" : "ed";
		EVP_PKEY *pk = i ? ed448_key : ed_key;
		CK_MECHANISM m = { CKM_EDDSA, NULL, 0 };
		EVP_MD_CTX *c = EVP_MD_CTX_new();
		CK_ULONG n;

		k = one(s, CKO_PRIVATE_KEY, label);
		sig = sign1(s, &m, k, msg, MSG_LEN, &sn);
		assert_int_equal(sn, i ? 114 : 64);
		assert_true(EVP_DigestVerifyInit(c, NULL, NULL, NULL, pk) > 0);
		assert_int_equal(EVP_DigestVerify(c, sig, sn, msg, MSG_LEN), 1);
		EVP_MD_CTX_free(c);
		CK(F->C_SignInit(s, &m, k));
		CK(F->C_SignUpdate(s, msg, 7));
		CK(F->C_SignUpdate(s, msg + 7, MSG_LEN - 7));
		n = sn;
		{
			uint8_t *sig2 = malloc(n);

			CK(F->C_SignFinal(s, sig2, &n));
			/* EdDSA is deterministic */
			assert_memory_equal(sig, sig2, sn);
			free(sig2);
		}
		CK(F->C_VerifyInit(s, &m, one(s, CKO_PUBLIC_KEY, label)));
		CK(F->C_Verify(s, msg, MSG_LEN, sig, sn));
		free(sig);
	}
}

/* A key with a password of its own: C_Login(CKU_CONTEXT_SPECIFIC). */
static void test_pkcs11__always_authenticate(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "other");
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	X509 *x = cert_of(s, "other");
	uint8_t sig[64], hash[32];
	unsigned int hl;
	CK_ULONG sn = sizeof(sig);

	(void)state;
	EVP_Digest(msg, MSG_LEN, hash, &hl, EVP_sha256(), NULL);
	CKE(CKR_OPERATION_NOT_INITIALIZED,
	    F->C_Login(s, CKU_CONTEXT_SPECIFIC, (CK_UTF8CHAR_PTR)KEYPW,
		       KEYPW_LEN));
	/* without the key's password: refused, and the operation ends */
	CK(F->C_SignInit(s, &m, k));
	CKE(CKR_USER_NOT_LOGGED_IN, F->C_Sign(s, msg, MSG_LEN, sig, &sn));
	CKE(CKR_OPERATION_NOT_INITIALIZED, F->C_Sign(s, msg, MSG_LEN, sig, &sn));
	/* a wrong one may be tried again */
	CK(F->C_SignInit(s, &m, k));
	CKE(CKR_PIN_INCORRECT, F->C_Login(s, CKU_CONTEXT_SPECIFIC,
					  (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	CK(F->C_Login(s, CKU_CONTEXT_SPECIFIC, (CK_UTF8CHAR_PTR)KEYPW,
		      KEYPW_LEN));
	sn = sizeof(sig);
	CK(F->C_Sign(s, msg, MSG_LEN, sig, &sn));
	assert_true(ossl_ecdsa_verify(X509_get0_pubkey(x), hash, hl, sig, sn));
	/* every operation asks again */
	CK(F->C_SignInit(s, &m, k));
	CKE(CKR_USER_NOT_LOGGED_IN, F->C_Sign(s, msg, MSG_LEN, sig, &sn));
	X509_free(x);
}

/* ---- encryption ------------------------------------------------------------ */

static void test_pkcs11__crypt_rsa(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "rsa");
	CK_OBJECT_HANDLE pub = one(s, CKO_PUBLIC_KEY, "rsa");
	X509 *x = cert_of(s, "rsa");
	uint8_t ct[256], pt[256], label[] = "label";
	CK_ULONG cn, pn;

	(void)state;
	for (int oaep = 0; oaep < 2; oaep++) {
		CK_RSA_PKCS_OAEP_PARAMS op = { CKM_SHA256, CKG_MGF1_SHA256,
					       CKZ_DATA_SPECIFIED, label, 5 };
		CK_MECHANISM m = { oaep ? CKM_RSA_PKCS_OAEP : CKM_RSA_PKCS,
				   oaep ? &op : NULL, oaep ? sizeof(op) : 0 };
		EVP_PKEY_CTX *pc;
		size_t on = sizeof(ct);

		/* the module encrypts, OpenSSL decrypts... */
		CK(F->C_EncryptInit(s, &m, pub));
		cn = 0;
		CK(F->C_Encrypt(s, msg, MSG_LEN, NULL, &cn));
		assert_int_equal(cn, 256);
		CK(F->C_Encrypt(s, msg, MSG_LEN, ct, &cn));
		/* ...checked by the module's own decryption */
		CK(F->C_DecryptInit(s, &m, k));
		pn = 0;
		CK(F->C_Decrypt(s, ct, cn, NULL, &pn));
		assert_int_equal(pn, 256); /* a bound */
		pn = 4;
		CKE(CKR_BUFFER_TOO_SMALL, F->C_Decrypt(s, ct, cn, pt, &pn));
		assert_int_equal(pn, MSG_LEN); /* the exact length */
		CK(F->C_Decrypt(s, ct, cn, pt, &pn));
		assert_int_equal(pn, MSG_LEN);
		assert_memory_equal(pt, msg, MSG_LEN);
		/* OpenSSL encrypts, the module decrypts */
		pc = EVP_PKEY_CTX_new(X509_get0_pubkey(x), NULL);
		assert_true(EVP_PKEY_encrypt_init(pc) > 0);
		if (oaep) {
			assert_true(EVP_PKEY_CTX_set_rsa_padding(pc,
					RSA_PKCS1_OAEP_PADDING) > 0);
			assert_true(EVP_PKEY_CTX_set_rsa_oaep_md(pc,
					EVP_sha256()) > 0);
			assert_true(EVP_PKEY_CTX_set0_rsa_oaep_label(pc,
					OPENSSL_memdup(label, 5), 5) > 0);
		}
		assert_true(EVP_PKEY_encrypt(pc, ct, &on, msg, 20) > 0);
		EVP_PKEY_CTX_free(pc);
		CK(F->C_DecryptInit(s, &m, k));
		pn = sizeof(pt);
		CK(F->C_Decrypt(s, ct, on, pt, &pn));
		assert_int_equal(pn, 20);
		assert_memory_equal(pt, msg, 20);
		/* tampered, wrong length */
		ct[100] ^= 1;
		CK(F->C_DecryptInit(s, &m, k));
		pn = sizeof(pt);
		CKE(CKR_ENCRYPTED_DATA_INVALID, F->C_Decrypt(s, ct, on, pt, &pn));
		CK(F->C_DecryptInit(s, &m, k));
		CKE(CKR_ENCRYPTED_DATA_LEN_RANGE,
		    F->C_Decrypt(s, ct, on - 1, pt, &pn));
		/* too long a message */
		CK(F->C_EncryptInit(s, &m, pub));
		cn = sizeof(ct);
		CKE(CKR_DATA_LEN_RANGE, F->C_Encrypt(s, ct, 250, ct, &cn));
	}
	X509_free(x);
}

/* Encrypt with OpenSSL for comparison. */
static size_t ossl_aes(const char *name, const uint8_t *iv, int enc,
		       const uint8_t *in, size_t n, uint8_t *out, int pad)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l1 = 0, l2 = 0;

	assert_true(EVP_CipherInit_ex(c, EVP_get_cipherbyname(name), NULL,
				      aes_key, iv, enc));
	EVP_CIPHER_CTX_set_padding(c, pad);
	assert_true(EVP_CipherUpdate(c, out, &l1, in, (int)n));
	assert_true(EVP_CipherFinal_ex(c, out + l1, &l2));
	EVP_CIPHER_CTX_free(c);
	return (size_t)(l1 + l2);
}

static void test_pkcs11__crypt_aes(void **state)
{
	static const struct {
		CK_MECHANISM_TYPE m;
		const char *name;
		int pad;
	} modes[] = {
		{ CKM_AES_ECB, "AES-256-ECB", 0 },
		{ CKM_AES_CBC, "AES-256-CBC", 0 },
		{ CKM_AES_CBC_PAD, "AES-256-CBC", 1 },
		{ CKM_AES_CTR, "AES-256-CTR", 0 },
	};
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_SECRET_KEY, "aes");
	uint8_t iv[16], data[100], want[128], got[128], back[128];
	CK_ULONG n, total;

	(void)state;
	RAND_bytes(iv, sizeof(iv));
	RAND_bytes(data, sizeof(data));
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		CK_AES_CTR_PARAMS ctr;
		CK_MECHANISM m = { modes[i].m, iv, 16 };
		size_t len = modes[i].pad || modes[i].m == CKM_AES_CTR ? 100
									: 96;
		size_t wn;

		if (modes[i].m == CKM_AES_ECB) {
			m.pParameter = NULL;
			m.ulParameterLen = 0;
		}
		if (modes[i].m == CKM_AES_CTR) {
			ctr.ulCounterBits = 128;
			memcpy(ctr.cb, iv, 16);
			m.pParameter = &ctr;
			m.ulParameterLen = sizeof(ctr);
		}
		wn = ossl_aes(modes[i].name, iv, 1, data, len, want,
			      modes[i].pad);
		/* single-part */
		CK(F->C_EncryptInit(s, &m, k));
		n = 0;
		CK(F->C_Encrypt(s, data, len, NULL, &n));
		assert_int_equal(n, wn);
		n = 3;
		CKE(CKR_BUFFER_TOO_SMALL, F->C_Encrypt(s, data, len, got, &n));
		assert_int_equal(n, wn);
		CK(F->C_Encrypt(s, data, len, got, &n));
		assert_int_equal(n, wn);
		assert_memory_equal(got, want, wn);
		/* multi-part in odd pieces */
		CK(F->C_EncryptInit(s, &m, k));
		total = 0;
		for (size_t off = 0; off < len; off += 7) {
			size_t part = len - off < 7 ? len - off : 7;

			n = 0;
			CK(F->C_EncryptUpdate(s, data + off, part, NULL, &n));
			CK(F->C_EncryptUpdate(s, data + off, part, got + total,
					      &n));
			total += n;
		}
		n = sizeof(got) - total;
		CK(F->C_EncryptFinal(s, got + total, &n));
		total += n;
		assert_int_equal(total, wn);
		assert_memory_equal(got, want, wn);
		/* decryption, both ways */
		CK(F->C_DecryptInit(s, &m, k));
		n = sizeof(back);
		CK(F->C_Decrypt(s, want, wn, back, &n));
		assert_int_equal(n, len);
		assert_memory_equal(back, data, len);
		CK(F->C_DecryptInit(s, &m, k));
		total = 0;
		for (size_t off = 0; off < wn; off += 16) {
			size_t part = wn - off < 16 ? wn - off : 16;

			n = sizeof(back) - total;
			CK(F->C_DecryptUpdate(s, want + off, part, back + total,
					      &n));
			total += n;
		}
		n = sizeof(back) - total;
		CK(F->C_DecryptFinal(s, back + total, &n));
		total += n;
		assert_int_equal(total, len);
		assert_memory_equal(back, data, len);
	}
	/* block modes without padding take whole blocks only */
	{
		CK_MECHANISM m = { CKM_AES_CBC, iv, 16 };

		CK(F->C_EncryptInit(s, &m, k));
		n = sizeof(got);
		CKE(CKR_DATA_LEN_RANGE, F->C_Encrypt(s, data, 17, got, &n));
		CK(F->C_EncryptInit(s, &m, k));
		n = sizeof(got);
		CK(F->C_EncryptUpdate(s, data, 17, got, &n));
		assert_int_equal(n, 16);
		n = sizeof(got);
		CKE(CKR_DATA_LEN_RANGE, F->C_EncryptFinal(s, got, &n));
		m.ulParameterLen = 8;
		CKE(CKR_MECHANISM_PARAM_INVALID, F->C_EncryptInit(s, &m, k));
	}
	/* GCM: tag appended; a changed byte fails the tag, and nothing
	 * decrypted comes out before the tag was checked */
	{
		uint8_t aad[] = "header";
		CK_GCM_PARAMS g = { iv, 12, 96, aad, 6, 128 };
		CK_MECHANISM m = { CKM_AES_GCM, &g, sizeof(g) };
		EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
		int l1, l2;

		assert_true(EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL,
					       aes_key, iv));
		assert_true(EVP_EncryptUpdate(c, NULL, &l1, aad, 6));
		assert_true(EVP_EncryptUpdate(c, want, &l1, data, 100));
		assert_true(EVP_EncryptFinal_ex(c, want + l1, &l2));
		assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16,
						want + 100));
		EVP_CIPHER_CTX_free(c);
		CK(F->C_EncryptInit(s, &m, k));
		n = sizeof(got);
		CK(F->C_Encrypt(s, data, 100, got, &n));
		assert_int_equal(n, 116);
		assert_memory_equal(got, want, 116);
		CK(F->C_EncryptInit(s, &m, k));
		n = sizeof(got);
		CK(F->C_EncryptUpdate(s, data, 50, got, &n));
		total = n;
		n = sizeof(got) - total;
		CK(F->C_EncryptUpdate(s, data + 50, 50, got + total, &n));
		total += n;
		n = sizeof(got) - total;
		CK(F->C_EncryptFinal(s, got + total, &n));
		total += n;
		assert_int_equal(total, 116);
		assert_memory_equal(got, want, 116);
		CK(F->C_DecryptInit(s, &m, k));
		n = sizeof(back);
		CK(F->C_DecryptUpdate(s, want, 60, back, &n));
		assert_int_equal(n, 0);
		n = sizeof(back);
		CK(F->C_DecryptUpdate(s, want + 60, 56, back, &n));
		assert_int_equal(n, 0);
		n = 0;
		CK(F->C_DecryptFinal(s, NULL, &n));
		assert_int_equal(n, 100);
		CK(F->C_DecryptFinal(s, back, &n));
		assert_memory_equal(back, data, 100);
		want[3] ^= 1;
		CK(F->C_DecryptInit(s, &m, k));
		n = sizeof(back);
		memset(back, 0, sizeof(back));
		CKE(CKR_ENCRYPTED_DATA_INVALID, F->C_Decrypt(s, want, 116, back,
							     &n));
		for (size_t i = 0; i < 100; i++)
			assert_int_equal(back[i], 0);
		g.ulTagBits = 12;
		CKE(CKR_MECHANISM_PARAM_INVALID, F->C_DecryptInit(s, &m, k));
	}
	/* an AES key cannot sign, an HMAC key cannot encrypt */
	{
		CK_MECHANISM m = { CKM_AES_ECB, NULL, 0 };
		CK_MECHANISM h = { CKM_SHA256_HMAC, NULL, 0 };

		CKE(CKR_KEY_TYPE_INCONSISTENT, F->C_SignInit(s, &h, k));
		CKE(CKR_KEY_TYPE_INCONSISTENT,
		    F->C_EncryptInit(s, &m, one(s, CKO_SECRET_KEY, "hmac")));
	}
}

/* ---- HMAC, digests, random --------------------------------------------------- */

static void test_pkcs11__hmac_digest_random(void **state)
{
	static const struct {
		CK_MECHANISM_TYPE hmac, digest;
		const char *md;
	} ms[] = {
		{ CKM_SHA256_HMAC, CKM_SHA256, "SHA256" },
		{ CKM_SHA384_HMAC, CKM_SHA384, "SHA384" },
		{ CKM_SHA512_HMAC, CKM_SHA512, "SHA512" },
		{ 0, CKM_SHA_1, "SHA1" },
		{ 0, CKM_SHA224, "SHA224" },
	};
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_SECRET_KEY, "hmac");
	uint8_t want[64], got[64], r1[32], r2[32];
	unsigned int wn;
	CK_ULONG n;

	(void)state;
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		const EVP_MD *md = EVP_get_digestbyname(ms[i].md);
		CK_MECHANISM m = { ms[i].digest, NULL, 0 };

		EVP_Digest(msg, MSG_LEN, want, &wn, md, NULL);
		CK(F->C_DigestInit(s, &m));
		n = 0;
		CK(F->C_Digest(s, msg, MSG_LEN, NULL, &n));
		assert_int_equal(n, wn);
		n = 2;
		CKE(CKR_BUFFER_TOO_SMALL, F->C_Digest(s, msg, MSG_LEN, got, &n));
		CK(F->C_Digest(s, msg, MSG_LEN, got, &n));
		assert_memory_equal(got, want, wn);
		CK(F->C_DigestInit(s, &m));
		CK(F->C_DigestUpdate(s, msg, 3));
		CK(F->C_DigestUpdate(s, msg + 3, MSG_LEN - 3));
		n = sizeof(got);
		CK(F->C_DigestFinal(s, got, &n));
		assert_memory_equal(got, want, wn);
		if (!ms[i].hmac)
			continue;
		HMAC(md, hmac_key, 32, msg, MSG_LEN, want, &wn);
		m.mechanism = ms[i].hmac;
		CK(F->C_SignInit(s, &m, k));
		n = sizeof(got);
		CK(F->C_Sign(s, msg, MSG_LEN, got, &n));
		assert_int_equal(n, wn);
		assert_memory_equal(got, want, wn);
		CK(F->C_VerifyInit(s, &m, k));
		CK(F->C_VerifyUpdate(s, msg, MSG_LEN));
		CK(F->C_VerifyFinal(s, want, wn));
		want[0] ^= 1;
		CK(F->C_VerifyInit(s, &m, k));
		CKE(CKR_SIGNATURE_INVALID, F->C_Verify(s, msg, MSG_LEN, want,
						       wn));
	}
	/* C_DigestKey: the secret's value */
	{
		CK_MECHANISM m = { CKM_SHA256, NULL, 0 };

		EVP_Digest(hmac_key, 32, want, &wn, EVP_sha256(), NULL);
		CK(F->C_DigestInit(s, &m));
		CK(F->C_DigestKey(s, k));
		n = sizeof(got);
		CK(F->C_DigestFinal(s, got, &n));
		assert_memory_equal(got, want, 32);
	}
	CK(F->C_GenerateRandom(s, r1, sizeof(r1)));
	CK(F->C_GenerateRandom(s, r2, sizeof(r2)));
	assert_memory_not_equal(r1, r2, sizeof(r1));
	CKE(CKR_RANDOM_SEED_NOT_SUPPORTED, F->C_SeedRandom(s, r1, 4));
}

static void test_pkcs11__mechanisms(void **state)
{
	CK_MECHANISM_TYPE list[64];
	CK_MECHANISM_INFO info;
	CK_ULONG n = 0;
	int seen_pss = 0, seen_eddsa = 0, seen_gcm = 0;

	(void)state;
	CK(F->C_GetMechanismList(SLOT_MAIN, NULL, &n));
	assert_int_equal(n, 51);
	n = 3;
	CKE(CKR_BUFFER_TOO_SMALL, F->C_GetMechanismList(SLOT_MAIN, list, &n));
	CK(F->C_GetMechanismList(SLOT_MAIN, list, &n));
	for (CK_ULONG i = 0; i < n; i++) {
		CK(F->C_GetMechanismInfo(SLOT_MAIN, list[i], &info));
		seen_pss |= list[i] == CKM_SHA256_RSA_PKCS_PSS;
		seen_eddsa |= list[i] == CKM_EDDSA;
		seen_gcm |= list[i] == CKM_AES_GCM;
	}
	assert_true(seen_pss && seen_eddsa && seen_gcm);
	CK(F->C_GetMechanismInfo(SLOT_MAIN, CKM_RSA_PKCS, &info));
	assert_int_equal(info.flags, CKF_SIGN | CKF_VERIFY | CKF_ENCRYPT |
					     CKF_DECRYPT);
	CK(F->C_GetMechanismInfo(SLOT_MAIN, CKM_EC_KEY_PAIR_GEN, &info));
	assert_true(info.flags & CKF_GENERATE_KEY_PAIR);
	assert_int_equal(info.ulMinKeySize, 256);
	assert_int_equal(info.ulMaxKeySize, 521);
	CK(F->C_GetMechanismInfo(SLOT_MAIN, CKM_AES_KEY_GEN, &info));
	assert_int_equal(info.ulMaxKeySize, 32);
	CKE(CKR_MECHANISM_INVALID,
	    F->C_GetMechanismInfo(SLOT_MAIN, CKM_DES_CBC, &info));
	CKE(CKR_SLOT_ID_INVALID, F->C_GetMechanismInfo(9, CKM_SHA256, &info));
}

static void test_pkcs11__ecdh(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "ec"), out;
	EVP_PKEY *peer = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *x = cert_of(s, "ec");
	uint8_t point[65], want[32], *got;
	size_t pl = sizeof(point), wl = sizeof(want);
	CK_ULONG gl;
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = CKK_GENERIC_SECRET;
	CK_BBOOL no = CK_FALSE, yes = CK_TRUE;
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_KEY_TYPE, &kt, sizeof(kt) },
		{ CKA_SENSITIVE, &no, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
		{ CKA_TOKEN, &no, 1 },
	};
	CK_ECDH1_DERIVE_PARAMS p;
	CK_MECHANISM m = { CKM_ECDH1_DERIVE, &p, sizeof(p) };
	EVP_PKEY_CTX *pc;

	(void)state;
	assert_true(EVP_PKEY_get_octet_string_param(peer,
			OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point), &pl));
	pc = EVP_PKEY_CTX_new(peer, NULL);
	assert_true(EVP_PKEY_derive_init(pc) > 0);
	assert_true(EVP_PKEY_derive_set_peer(pc, X509_get0_pubkey(x)) > 0);
	assert_true(EVP_PKEY_derive(pc, want, &wl) > 0);
	EVP_PKEY_CTX_free(pc);
	memset(&p, 0, sizeof(p));
	p.kdf = CKD_NULL;
	p.pPublicData = point;
	p.ulPublicDataLen = pl;
	CK(F->C_DeriveKey(s, &m, k, t, 5, &out));
	got = attr(s, out, CKA_VALUE, &gl);
	assert_int_equal(gl, 32);
	assert_memory_equal(got, want, 32);
	free(got);
	/* the point as a DER OCTET STRING too */
	{
		uint8_t der[67] = { 0x04, 65 };

		memcpy(der + 2, point, 65);
		p.pPublicData = der;
		p.ulPublicDataLen = 67;
		CK(F->C_DeriveKey(s, &m, k, t, 5, &out));
		got = attr(s, out, CKA_VALUE, &gl);
		assert_memory_equal(got, want, 32);
		free(got);
	}
	point[10] ^= 0x55; /* not on the curve */
	p.pPublicData = point;
	p.ulPublicDataLen = 65;
	CKE(CKR_MECHANISM_PARAM_INVALID, F->C_DeriveKey(s, &m, k, t, 5, &out));
	p.kdf = CKD_SHA256_KDF;
	CKE(CKR_MECHANISM_PARAM_INVALID, F->C_DeriveKey(s, &m, k, t, 5, &out));
	EVP_PKEY_free(peer);
	X509_free(x);
}

/* ---- writing --------------------------------------------------------------- */

/* The store file as another program sees it (libwks, with the password). */
static wks_store *load_w(const char *pw)
{
	wks_store *st = tu_store_fast();

	TU_OK(wks_store_load_file(st, w_store, pw, strlen(pw)));
	return st;
}

/* wksdump.py, independent of libwks, reads the file, verifies its MAC
 * and decrypts every key with the store password. */
static void wksdump_ok(const char *path, const char *pw)
{
	char *q = tu_shell_quote(path), *qp = tu_shell_quote(pw);
	int rc = tu_system(
		"python3 %s/tools/wksdump.py dump --strict --password %s %s |"
		" python3 -c 'import json,sys; d=json.load(sys.stdin);"
		" f=list(d[\"files\"].values())[0];"
		" assert f[\"load\"][\"status\"]==\"ok\", f[\"load\"];"
		" assert f[\"store_integrity\"][\"verified\"];"
		" bad=[e[\"alias\"] for e in f[\"entries\"]"
		" if e.get(\"key_status\") not in (None, \"ok\")"
		" and e[\"alias\"] != \"other\"];"
		" assert not bad, bad'",
		WKS_SHARED_DIR, qp, q);

	free(q);
	free(qp);
	assert_int_equal(rc, 0);
}

static void test_pkcs11__create_objects(void **state)
{
	CK_SESSION_HANDLE s = open_session(SLOT_W, 1), ro;
	CK_OBJECT_CLASS priv = CKO_PRIVATE_KEY, sec = CKO_SECRET_KEY,
			crt = CKO_CERTIFICATE;
	CK_KEY_TYPE ec = CKK_EC, aes = CKK_AES;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384");
	uint8_t d[48], params[7] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22 };
	uint8_t id[] = { 0xab, 0xcd }, value[16] = { 1, 2, 3 };
	BIGNUM *bn = NULL;
	CK_OBJECT_HANDLE h, h2;
	wks_store *st;
	size_t cc;
	X509 *x;

	(void)state;
	assert_true(EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_PRIV_KEY, &bn));
	assert_int_equal(BN_bn2binpad(bn, d, 48), 48);
	BN_clear_free(bn);
	{
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &priv, sizeof(priv) },
			{ CKA_KEY_TYPE, &ec, sizeof(ec) },
			{ CKA_TOKEN, &yes, 1 },
			{ CKA_LABEL, "imported", 8 },
			{ CKA_ID, id, sizeof(id) },
			{ CKA_EC_PARAMS, params, sizeof(params) },
			{ CKA_VALUE, d, sizeof(d) },
			{ CKA_SIGN, &yes, 1 },
		};

		/* a token object needs a login and a read-write session */
		CKE(CKR_USER_NOT_LOGGED_IN, F->C_CreateObject(s, t, 8, &h));
		CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
		ro = open_session(SLOT_W, 0);
		CKE(CKR_SESSION_READ_ONLY, F->C_CreateObject(ro, t, 8, &h));
		CK(F->C_CreateObject(s, t, 8, &h));
		assert_int_equal(attr_ulong(s, h, CKA_CLASS), CKO_PRIVATE_KEY);
		/* a second entry of that name is refused */
		CKE(CKR_ATTRIBUTE_VALUE_INVALID, F->C_CreateObject(s, t, 8, &h2));
	}
	/* the store holds it, with a self-signed certificate whose key
	 * identifier keeps CKA_ID */
	st = load_w(PIN);
	assert_int_equal(wks_store_entry_type(st, "imported"),
			 WKS_ENTRY_PRIVATE_KEY);
	TU_OK(wks_store_get_cert(&x, st, "imported", 0));
	assert_int_equal(X509_get0_subject_key_id(x)->length, 2);
	assert_memory_equal(X509_get0_subject_key_id(x)->data, id, 2);
	X509_free(x);
	{
		EVP_PKEY *got = NULL;

		TU_OK(wks_store_get_pkey(&got, st, "imported", PIN, PIN_LEN));
		assert_int_equal(EVP_PKEY_eq(got, key), 1);
		EVP_PKEY_free(got);
	}
	wks_store_free(st);
	/* the key signs */
	{
		CK_MECHANISM m = { CKM_ECDSA_SHA384, NULL, 0 };
		CK_ULONG sn;
		uint8_t *sig = sign1(s, &m, h, msg, MSG_LEN, &sn);
		uint8_t hash[48];
		unsigned int hl;

		assert_int_equal(sn, 96);
		EVP_Digest(msg, MSG_LEN, hash, &hl, EVP_sha384(), NULL);
		assert_true(ossl_ecdsa_verify(key, hash, hl, sig, sn));
		free(sig);
	}
	/* a certificate for that key (from a CA) becomes its chain */
	{
		EVP_PKEY *cakey;
		X509 *ca, *leaf = X509_new();
		unsigned char *der = NULL;
		int dl;

		/* a CA of our own issues the key's certificate */
		cakey = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		ca = self_signed(cakey, "test CA");
		{
			X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, NULL,
				NID_basic_constraints, "critical,CA:TRUE");

			assert_non_null(e);
			X509_add_ext(ca, e, -1);
			X509_EXTENSION_free(e);
			assert_true(X509_sign(ca, cakey, EVP_sha256()) > 0);
		}
		X509_set_version(leaf, 2);
		ASN1_INTEGER_set(X509_get_serialNumber(leaf), 99);
		X509_gmtime_adj(X509_getm_notBefore(leaf), 0);
		X509_gmtime_adj(X509_getm_notAfter(leaf), 3600);
		X509_set_pubkey(leaf, key);
		X509_NAME_add_entry_by_txt(X509_get_subject_name(leaf), "CN",
					   MBSTRING_ASC,
					   (const unsigned char *)"leaf", -1, -1,
					   0);
		X509_set_issuer_name(leaf, X509_get_subject_name(ca));
		assert_true(X509_sign(leaf, cakey, EVP_sha256()) > 0);
		dl = i2d_X509(leaf, &der);
		{
			CK_ATTRIBUTE t[] = {
				{ CKA_CLASS, &crt, sizeof(crt) },
				{ CKA_TOKEN, &yes, 1 },
				{ CKA_VALUE, der, (CK_ULONG)dl },
			};

			CK(F->C_CreateObject(s, t, 3, &h2));
			assert_int_equal(attr_ulong(s, h2, CKA_CLASS),
					 CKO_CERTIFICATE);
		}
		OPENSSL_free(der);
		st = load_w(PIN);
		TU_OK(wks_store_cert_count(&cc, st, "imported"));
		assert_int_equal(cc, 1);
		TU_OK(wks_store_get_cert(&x, st, "imported", 0));
		assert_int_equal(X509_cmp(x, leaf), 0);
		X509_free(x);
		wks_store_free(st);
		/* the CA's certificate, with the key's CKA_ID (the leaf has
		 * no key identifier: its CKA_ID is its key's SHA-1) */
		{
			unsigned char kid[20];
			unsigned int kl;
			const unsigned char *bits;
			int bl;

			X509_PUBKEY_get0_param(NULL, &bits, &bl, NULL,
					       X509_get_X509_PUBKEY(leaf));
			EVP_Digest(bits, (size_t)bl, kid, &kl, EVP_sha1(), NULL);
			der = NULL;
			dl = i2d_X509(ca, &der);
			{
				CK_ATTRIBUTE t[] = {
					{ CKA_CLASS, &crt, sizeof(crt) },
					{ CKA_TOKEN, &yes, 1 },
					{ CKA_ID, kid, 20 },
					{ CKA_VALUE, der, (CK_ULONG)dl },
				};

				CK(F->C_CreateObject(s, t, 4, &h2));
			}
			OPENSSL_free(der);
		}
		st = load_w(PIN);
		TU_OK(wks_store_cert_count(&cc, st, "imported"));
		assert_int_equal(cc, 2);
		wks_store_free(st);
		assert_int_equal(attr_ulong(s, one(s, CKO_CERTIFICATE,
						   "imported/1"),
					    CKA_CERTIFICATE_CATEGORY),
				 2);
		/* any other certificate: a trusted certificate entry */
		{
			EVP_PKEY *k2 = EVP_PKEY_Q_keygen(NULL, NULL, "EC",
							 "P-256");
			X509 *x2 = self_signed(k2, "other");

			der = NULL;
			dl = i2d_X509(x2, &der);
			{
				CK_ATTRIBUTE t[] = {
					{ CKA_CLASS, &crt, sizeof(crt) },
					{ CKA_TOKEN, &yes, 1 },
					{ CKA_LABEL, "trusted2", 8 },
					{ CKA_VALUE, der, (CK_ULONG)dl },
				};

				CK(F->C_CreateObject(s, t, 4, &h2));
				assert_true(attr_bool(s, h2, CKA_TRUSTED));
			}
			OPENSSL_free(der);
			X509_free(x2);
			EVP_PKEY_free(k2);
		}
		X509_free(leaf);
		X509_free(ca);
		EVP_PKEY_free(cakey);
	}
	/* a secret key; a session secret key stays out of the store */
	{
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &sec, sizeof(sec) },
			{ CKA_KEY_TYPE, &aes, sizeof(aes) },
			{ CKA_TOKEN, &yes, 1 },
			{ CKA_LABEL, "aes2", 4 },
			{ CKA_VALUE, value, sizeof(value) },
		};
		wks_key *wk = NULL;

		CK(F->C_CreateObject(s, t, 5, &h));
		t[2].pValue = &no;
		t[3].pValue = "session-aes";
		t[3].ulValueLen = 11;
		CK(F->C_CreateObject(s, t, 5, &h2));
		st = load_w(PIN);
		TU_OK(wks_store_get_key(&wk, st, "aes2", PIN, PIN_LEN));
		assert_memory_equal(wks_key_data(wk, NULL), value, 16);
		assert_string_equal(wks_key_algorithm(wk), "AES");
		wks_key_free(wk);
		assert_int_equal(wks_store_contains(st, "session-aes"), 0);
		wks_store_free(st);
		/* a wrong AES length */
		t[4].ulValueLen = 15;
		CKE(CKR_ATTRIBUTE_VALUE_INVALID, F->C_CreateObject(s, t, 5, &h2));
	}
	/* a public key: the one of a key entry, or nothing a store can
	 * hold alone */
	{
		CK_OBJECT_CLASS pubc = CKO_PUBLIC_KEY;
		uint8_t pt[2 + 97] = { 0x04, 97 };
		size_t pl = 97;
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &pubc, sizeof(pubc) },
			{ CKA_KEY_TYPE, &ec, sizeof(ec) },
			{ CKA_TOKEN, &yes, 1 },
			{ CKA_EC_PARAMS, params, sizeof(params) },
			{ CKA_EC_POINT, pt, sizeof(pt) },
		};
		EVP_PKEY *k2 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384");

		assert_true(EVP_PKEY_get_octet_string_param(key,
				OSSL_PKEY_PARAM_PUB_KEY, pt + 2, 97, &pl));
		CK(F->C_CreateObject(s, t, 5, &h2));
		assert_int_equal(h2, one(s, CKO_PUBLIC_KEY, "imported"));
		assert_true(EVP_PKEY_get_octet_string_param(k2,
				OSSL_PKEY_PARAM_PUB_KEY, pt + 2, 97, &pl));
		CKE(CKR_TEMPLATE_INCONSISTENT, F->C_CreateObject(s, t, 5, &h2));
		/* as a session object it is kept */
		t[2].pValue = &no;
		CK(F->C_CreateObject(s, t, 5, &h2));
		assert_false(attr_bool(s, h2, CKA_TOKEN));
		EVP_PKEY_free(k2);
	}
	{
		CK_OBJECT_CLASS data = CKO_DATA, odd = CKO_HW_FEATURE;
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &data, sizeof(data) } };
		CK_ATTRIBUTE t2[] = { { CKA_CLASS, &odd, sizeof(odd) } };

		/* a session data object (test_pkcs11__data_objects) */
		CK(F->C_CreateObject(s, t, 1, &h2));
		CKE(CKR_ATTRIBUTE_VALUE_INVALID, F->C_CreateObject(s, t2, 1, &h2));
		CKE(CKR_TEMPLATE_INCOMPLETE, F->C_CreateObject(s, t, 0, &h2));
	}
	EVP_PKEY_free(key);
	wksdump_ok(w_store, PIN);
}

static void test_pkcs11__generate(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1);
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	/* RSA-2048 key generation costs seconds under valgrind: 1024 bits
	 * but in the full mode */
	CK_ULONG rsa_bits = tu_full_mode() ? 2048 : 1024;
	CK_ULONG bits = rsa_bits, len = 32;
	uint8_t p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03,
			   0x01, 0x07 };
	uint8_t ed[] = { 0x13, 0x0c, 'e', 'd', 'w', 'a', 'r', 'd', 's', '2',
			 '5', '5', '1', '9' };
	uint8_t id[] = { 0x42 };
	CK_MECHANISM rsa = { CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0 };
	CK_MECHANISM ecm = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_MECHANISM edm = { CKM_EC_EDWARDS_KEY_PAIR_GEN, NULL, 0 };
	CK_MECHANISM aesm = { CKM_AES_KEY_GEN, NULL, 0 };
	CK_MECHANISM genm = { CKM_GENERIC_SECRET_KEY_GEN, NULL, 0 };
	CK_OBJECT_HANDLE pub, priv, h;
	wks_store *st;
	X509 *x;

	(void)state;
	{
		CK_ATTRIBUTE pt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_MODULUS_BITS, &bits, sizeof(bits) },
				      { CKA_ID, id, 1 } };
		CK_ATTRIBUTE vt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_LABEL, "gen-rsa", 7 },
				      { CKA_ID, id, 1 } };

		CK(F->C_GenerateKeyPair(s, &rsa, pt, 3, vt, 3, &pub, &priv));
		free(attr(s, pub, CKA_MODULUS, &len));
		assert_int_equal(len, rsa_bits / 8);
		assert_int_equal(attr_ulong(s, priv, CKA_KEY_TYPE), CKK_RSA);
		{
			CK_ULONG n;
			uint8_t *v = attr(s, priv, CKA_ID, &n);

			assert_int_equal(n, 1);
			assert_int_equal(v[0], 0x42);
			free(v);
		}
		bits = 100;
		CKE(CKR_KEY_SIZE_RANGE,
		    F->C_GenerateKeyPair(s, &rsa, pt, 3, vt, 3, &pub, &priv));
		/* a public key on the token without its private key */
		vt[0].pValue = &no;
		bits = rsa_bits;
		CKE(CKR_TEMPLATE_INCONSISTENT,
		    F->C_GenerateKeyPair(s, &rsa, pt, 3, vt, 3, &pub, &priv));
	}
	{
		CK_ATTRIBUTE pt[] = { { CKA_EC_PARAMS, p256, sizeof(p256) } };
		CK_ATTRIBUTE vt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_LABEL, "gen-ec", 6 } };

		CK(F->C_GenerateKeyPair(s, &ecm, pt, 1, vt, 2, &pub, &priv));
		/* the public key object of a token key pair asked as a
		 * session object is one */
		assert_false(attr_bool(s, pub, CKA_TOKEN));
		assert_true(attr_bool(s, priv, CKA_TOKEN));
		p256[9] = 0x08;
		CKE(CKR_CURVE_NOT_SUPPORTED,
		    F->C_GenerateKeyPair(s, &ecm, pt, 1, vt, 2, &pub, &priv));
	}
	{
		CK_ATTRIBUTE pt[] = { { CKA_EC_PARAMS, ed, sizeof(ed) } };
		CK_ATTRIBUTE vt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_LABEL, "gen-ed", 6 } };
		CK_MECHANISM m = { CKM_EDDSA, NULL, 0 };
		CK_ULONG sn;

		CK(F->C_GenerateKeyPair(s, &edm, pt, 1, vt, 2, &pub, &priv));
		free(sign1(s, &m, priv, msg, MSG_LEN, &sn));
		assert_int_equal(sn, 64);
		/* CKM_EDDSA is no key generation mechanism */
		CKE(CKR_MECHANISM_INVALID,
		    F->C_GenerateKeyPair(s, &m, pt, 1, vt, 2, &pub, &priv));
	}
	{
		CK_ATTRIBUTE t[] = { { CKA_TOKEN, &yes, 1 },
				     { CKA_LABEL, "gen-aes", 7 },
				     { CKA_VALUE_LEN, &len, sizeof(len) } };

		len = 32;
		CK(F->C_GenerateKey(s, &aesm, t, 3, &h));
		assert_int_equal(attr_ulong(s, h, CKA_VALUE_LEN), 32);
		t[1].pValue = "gen-secret";
		t[1].ulValueLen = 10;
		len = 20;
		CK(F->C_GenerateKey(s, &genm, t, 3, &h));
		assert_int_equal(attr_ulong(s, h, CKA_KEY_TYPE),
				 CKK_GENERIC_SECRET);
		len = 17;
		CKE(CKR_ATTRIBUTE_VALUE_INVALID,
		    F->C_GenerateKey(s, &aesm, t, 3, &h));
		/* a session key: extractable if asked */
		t[0].pValue = &no;
		t[1].type = CKA_EXTRACTABLE;
		t[1].pValue = &yes;
		t[1].ulValueLen = 1;
		len = 16;
		{
			CK_ATTRIBUTE t2[4];
			CK_ULONG vl;

			memcpy(t2, t, sizeof(t));
			t2[3].type = CKA_SENSITIVE;
			t2[3].pValue = &no;
			t2[3].ulValueLen = 1;
			CK(F->C_GenerateKey(s, &aesm, t2, 4, &h));
			free(attr(s, h, CKA_VALUE, &vl));
			assert_int_equal(vl, 16);
			assert_true(attr_bool(s, h, CKA_LOCAL));
			assert_false(attr_bool(s, h, CKA_NEVER_EXTRACTABLE));
		}
	}
	st = load_w(PIN);
	assert_int_equal(wks_store_entry_type(st, "gen-rsa"),
			 WKS_ENTRY_PRIVATE_KEY);
	TU_OK(wks_store_get_cert(&x, st, "gen-rsa", 0));
	/* keytool's self-signed certificate: CN=label, the key id */
	assert_int_equal(X509_check_issued(x, x), X509_V_OK);
	assert_int_equal(X509_get0_subject_key_id(x)->data[0], 0x42);
	X509_free(x);
	assert_int_equal(wks_store_entry_type(st, "gen-aes"),
			 WKS_ENTRY_SECRET_KEY);
	{
		char *alg = NULL;

		TU_OK(wks_store_secret_algorithm(&alg, st, "gen-secret"));
		assert_string_equal(alg, "HmacSHA256");
		wks_free(alg);
	}
	wks_store_free(st);
	if (tu_full_mode())
		wksdump_ok(w_store, PIN);
}

static void test_pkcs11__destroy_rename_copy(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1), s2;
	CK_OBJECT_HANDLE k, c, h[16];
	CK_BBOOL no = CK_FALSE;
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	CK_ULONG sn, n;
	wks_store *st;

	(void)state;
	/* a key pair's public key object can go (the attribute record
	 * says so, the entry stays: test_pkcs11__attribute_record); its
	 * certificates go with the entry */
	CK(F->C_DestroyObject(s, one(s, CKO_PUBLIC_KEY, "ec")));
	assert_int_equal(find_cls(s, CKO_PUBLIC_KEY, "ec", h, 16), 0);
	assert_int_equal(find_cls(s, CKO_PRIVATE_KEY, "ec", h, 16), 1);
	CKE(CKR_ACTION_PROHIBITED,
	    F->C_DestroyObject(s, one(s, CKO_CERTIFICATE, "ec")));
	assert_false(attr_bool(s, one(s, CKO_CERTIFICATE, "ec"),
			       CKA_DESTROYABLE));
	CK(F->C_DestroyObject(s, one(s, CKO_PRIVATE_KEY, "ec")));
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "ec", h, 16), 0);
	CK(F->C_DestroyObject(s, one(s, CKO_CERTIFICATE, "ca")));
	CK(F->C_DestroyObject(s, one(s, CKO_SECRET_KEY, "hmac")));
	st = load_w(PIN);
	assert_int_equal(wks_store_contains(st, "ec"), 0);
	assert_int_equal(wks_store_contains(st, "ca"), 0);
	assert_int_equal(wks_store_contains(st, "hmac"), 0);
	assert_int_equal(wks_store_size(st), 5);
	wks_store_free(st);
	/* rename through CKA_LABEL: the entry's alias */
	k = one(s, CKO_PRIVATE_KEY, "rsa");
	{
		CK_ATTRIBUTE t[] = { { CKA_LABEL, "renamed", 7 } };
		CK_ATTRIBUTE taken[] = { { CKA_LABEL, "aes", 3 } };
		CK_BBOOL yes = CK_TRUE;
		CK_ATTRIBUTE ro[] = { { CKA_EXTRACTABLE, &yes, 1 } };
		CK_ATTRIBUTE ro2[] = { { CKA_KEY_TYPE, &n, sizeof(n) } };

		(void)no;
		CK(F->C_SetAttributeValue(s, k, t, 1));
		CKE(CKR_ATTRIBUTE_VALUE_INVALID,
		    F->C_SetAttributeValue(s, k, taken, 1));
		CKE(CKR_ATTRIBUTE_READ_ONLY, F->C_SetAttributeValue(s, k, ro, 1));
		n = CKK_EC;
		CKE(CKR_ATTRIBUTE_READ_ONLY,
		    F->C_SetAttributeValue(s, k, ro2, 1));
	}
	/* the handle is the same object still (same key, same chain) */
	assert_int_equal(find_cls(s, CKO_PRIVATE_KEY, "renamed", h, 16), 1);
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "renamed/1", h, 16), 1);
	st = load_w(PIN);
	assert_int_equal(wks_store_entry_type(st, "renamed"),
			 WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(wks_store_contains(st, "rsa"), 0);
	wks_store_free(st);
	/* CKA_ID of a key with a self-signed certificate: re-issued */
	{
		uint8_t id[] = { 9, 9, 9 };
		CK_ATTRIBUTE t[] = { { CKA_ID, id, 3 } };
		uint8_t *v;

		k = one(s, CKO_PRIVATE_KEY, "ed");
		CK(F->C_SetAttributeValue(s, k, t, 1));
		v = attr(s, one(s, CKO_CERTIFICATE, "ed"), CKA_ID, &n);
		assert_int_equal(n, 3);
		assert_memory_equal(v, id, 3);
		free(v);
		/* a CA-issued one stays; the key object's CKA_ID is kept in
		 * the attribute record (test_pkcs11__attribute_record) */
		k = one(s, CKO_PRIVATE_KEY, "renamed");
		CK(F->C_SetAttributeValue(s, k, t, 1));
		v = attr(s, k, CKA_ID, &n);
		assert_int_equal(n, 3);
		assert_memory_equal(v, id, 3);
		free(v);
		v = attr(s, one(s, CKO_CERTIFICATE, "renamed"), CKA_ID, &n);
		assert_int_not_equal(n, 3);
		free(v);
	}
	/* session copies: found by id or label only when asked for a
	 * session object (a program looking a key up finds one) */
	k = one(s, CKO_PRIVATE_KEY, "other");
	{
		CK_ATTRIBUTE t[] = { { CKA_TOKEN, &no, 1 } };
		CK_ATTRIBUTE lt[] = { { CKA_LABEL, "other", 5 },
				      { CKA_TOKEN, &no, 1 } };
		CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
		CK_ATTRIBUTE all[] = { { CKA_CLASS, &cls, sizeof(cls) } };

		CK(F->C_CopyObject(s, k, t, 1, &c));
		assert_false(attr_bool(s, c, CKA_TOKEN));
		assert_int_equal(find_cls(s, CKO_PRIVATE_KEY, "other", h, 16), 1);
		assert_int_equal(h[0], k);
		assert_int_equal(find(s, lt, 2, h, 16), 1);
		assert_int_equal(h[0], c);
		assert_int_equal(find(s, all, 1, h, 16), 5);
		/* the copy signs with the same key (and its password) */
		CK(F->C_SignInit(s, &m, c));
		CK(F->C_Login(s, CKU_CONTEXT_SPECIFIC, (CK_UTF8CHAR_PTR)KEYPW,
			      KEYPW_LEN));
		sn = 64;
		{
			uint8_t sig[64];

			CK(F->C_Sign(s, msg, MSG_LEN, sig, &sn));
		}
		/* a copy with a label of its own is found by it */
		lt[0].pValue = "mine";
		lt[0].ulValueLen = 4;
		CK(F->C_CopyObject(s, one(s, CKO_CERTIFICATE, "ed"), lt, 2, &c));
		assert_int_equal(find_cls(s, CKO_CERTIFICATE, "mine", h, 16), 1);
		/* copies are session objects only */
		CKE(CKR_TEMPLATE_INCONSISTENT, F->C_CopyObject(s, k, NULL, 0, &c));
		/* another session sees them; closing the first drops them */
		s2 = open_session(SLOT_W, 0);
		assert_int_equal(find_cls(s2, CKO_CERTIFICATE, "mine", h, 16), 1);
		CK(F->C_DestroyObject(s2, h[0]));
		assert_int_equal(find_cls(s2, CKO_CERTIFICATE, "mine", h, 16), 0);
		CK(F->C_CloseSession(s));
		assert_int_equal(find(s2, t, 1, h, 16), 0);
	}
	if (tu_full_mode())
		wksdump_ok(w_store, PIN);
}

static void test_pkcs11__set_pin_and_init_token(void **state)
{
	CK_SESSION_HANDLE s = open_session(SLOT_W, 1), ro;
	CK_TOKEN_INFO ti;
	wks_store *st;
	wks_key *k = NULL;
	CK_OBJECT_HANDLE h[8];

	(void)state;
	ro = open_session(SLOT_W, 0);
	CKE(CKR_SESSION_READ_ONLY,
	    F->C_SetPIN(ro, (CK_UTF8CHAR_PTR)PIN, PIN_LEN,
			(CK_UTF8CHAR_PTR) "new pin", 7));
	CKE(CKR_PIN_INCORRECT,
	    F->C_SetPIN(s, (CK_UTF8CHAR_PTR) "nope", 4,
			(CK_UTF8CHAR_PTR) "new pin", 7));
	CK(F->C_SetPIN(s, (CK_UTF8CHAR_PTR)PIN, PIN_LEN,
		       (CK_UTF8CHAR_PTR) "new pin", 7));
	/* the store and the keys that had its password take the new one;
	 * a key with a password of its own keeps it */
	st = load_w("new pin");
	TU_OK(wks_store_get_key(&k, st, "rsa", "new pin", 7));
	wks_key_free(k);
	TU_OK(wks_store_get_key(&k, st, "aes", "new pin", 7));
	wks_key_free(k);
	TU_OK(wks_store_get_key(&k, st, "other", KEYPW, KEYPW_LEN));
	wks_key_free(k);
	wks_store_free(st);
	CKE(CKR_PIN_INCORRECT,
	    F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR) "new pin", 7));
	if (tu_full_mode())
		wksdump_ok(w_store, "new pin");
	/* C_InitToken: with sessions open, refused */
	CKE(CKR_SESSION_EXISTS,
	    F->C_InitToken(SLOT_W, (CK_UTF8CHAR_PTR) "new pin", 7,
			   (CK_UTF8CHAR_PTR) "w"));
	CK(F->C_CloseAllSessions(SLOT_W));
	CKE(CKR_PIN_INCORRECT,
	    F->C_InitToken(SLOT_W, (CK_UTF8CHAR_PTR)PIN, PIN_LEN,
			   (CK_UTF8CHAR_PTR) "w"));
	/* an existing store is emptied */
	CK(F->C_InitToken(SLOT_W, (CK_UTF8CHAR_PTR) "new pin", 7,
			  (CK_UTF8CHAR_PTR) "w"));
	st = load_w("new pin");
	assert_int_equal(wks_store_size(st), 0);
	wks_store_free(st);
	/* a new store at the configured path */
	CK(F->C_GetTokenInfo(SLOT_NEW, &ti));
	assert_false(ti.flags & CKF_TOKEN_INITIALIZED);
	s = open_session(SLOT_NEW, 1);
	CKE(CKR_USER_PIN_NOT_INITIALIZED,
	    F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	CK(F->C_CloseSession(s));
	CK(F->C_InitToken(SLOT_NEW, (CK_UTF8CHAR_PTR) "so pin", 6,
			  (CK_UTF8CHAR_PTR) "new"));
	CK(F->C_GetTokenInfo(SLOT_NEW, &ti));
	assert_true(ti.flags & CKF_TOKEN_INITIALIZED);
	/* the SO's PIN is the store password; C_InitPIN sets a new one */
	s = open_session(SLOT_NEW, 1);
	CK(F->C_Login(s, CKU_SO, (CK_UTF8CHAR_PTR) "so pin", 6));
	CK(F->C_InitPIN(s, (CK_UTF8CHAR_PTR) "user pin", 8));
	CK(F->C_Logout(s));
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR) "user pin", 8));
	assert_int_equal(find(s, NULL, 0, h, 8), 0);
	st = tu_store_fast();
	TU_OK(wks_store_load_file(st, new_store, "user pin", 8));
	wks_store_free(st);
	wksdump_ok(new_store, "user pin");
	/* read-only tokens refuse every change */
	CKE(CKR_TOKEN_WRITE_PROTECTED,
	    F->C_InitToken(SLOT_RO, (CK_UTF8CHAR_PTR)PIN, PIN_LEN,
			   (CK_UTF8CHAR_PTR) "ro"));
}

/* Changes made by another program are seen at the next search; changes
 * made meanwhile under the store's lock are never lost. */
typedef struct {
	wks_lock *lk;
	atomic_int released;
} lock_holder;

static void *hold_lock(void *arg)
{
	lock_holder *l = arg;
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	wks_store *st = tu_store_fast();
	tu_der *c = NULL;
	size_t n;

	/* add an entry as wks(1) would, slowly, holding the lock */
	TU_OK(wks_store_load_locked(st, l->lk, PIN, PIN_LEN));
	n = tu_pem_ders(&c, tu_input("ca-ecc-cert.pem"), "CERTIFICATE");
	TU_OK(wks_store_set_cert_der(st, "by-wks", c[0].der, c[0].len));
	tu_ders_free(c, n);
	nanosleep(&ts, NULL);
	TU_OK(wks_store_save_locked(st, l->lk, PIN, PIN_LEN));
	wks_store_free(st);
	atomic_store(&l->released, 1);
	wks_lock_release(l->lk);
	return NULL;
}

static void test_pkcs11__other_programs(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1);
	CK_OBJECT_HANDLE h[4], keep = one(s, CKO_PRIVATE_KEY, "rsa");
	CK_BBOOL yes = CK_TRUE;
	CK_OBJECT_CLASS sec = CKO_SECRET_KEY;
	CK_KEY_TYPE aes = CKK_AES;
	uint8_t v[16] = { 7 };
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &sec, sizeof(sec) },
		{ CKA_KEY_TYPE, &aes, sizeof(aes) },
		{ CKA_TOKEN, &yes, 1 },
		{ CKA_LABEL, "by-module", 9 },
		{ CKA_VALUE, v, 16 },
	};
	lock_holder l = { 0 };
	pthread_t th;
	wks_store *st;

	(void)state;
	/* another program adds an entry */
	st = load_w(PIN);
	{
		tu_der *c = NULL;
		size_t n = tu_pem_ders(&c, tu_input("ca-ecc384-cert.pem"),
				       "CERTIFICATE");

		TU_OK(wks_store_set_cert_der(st, "outside", c[0].der,
					     c[0].len));
		tu_ders_free(c, n);
	}
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "outside", h, 4), 1);
	/* unchanged objects keep their handles */
	assert_int_equal(one(s, CKO_PRIVATE_KEY, "rsa"), keep);
	/* the module writes while another editor holds the lock */
	TU_OK(wks_lock_acquire(&l.lk, w_store, WKS_LOCK_EXCLUSIVE));
	assert_int_equal(pthread_create(&th, NULL, hold_lock, &l), 0);
	{
		CK_OBJECT_HANDLE nh;

		CK(F->C_CreateObject(s, t, 5, &nh));
		/* it waited for the lock */
		assert_int_equal(atomic_load(&l.released), 1);
	}
	pthread_join(th, NULL);
	st = load_w(PIN);
	assert_int_equal(wks_store_contains(st, "by-wks"), 1);
	assert_int_equal(wks_store_contains(st, "by-module"), 1);
	assert_int_equal(wks_store_contains(st, "outside"), 1);
	wks_store_free(st);
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "by-wks", h, 4), 1);
	/* the store's password changed elsewhere: the login no longer
	 * holds */
	st = load_w(PIN);
	TU_OK(wks_store_save_file(st, w_store, "changed", 7));
	wks_store_free(st);
	assert_int_equal(find_cls(s, CKO_PRIVATE_KEY, NULL, h, 4), 0);
	{
		CK_SESSION_INFO si;

		CK(F->C_GetSessionInfo(s, &si));
		assert_int_equal(si.state, CKS_RW_PUBLIC_SESSION);
	}
}

/* Stores wolfJCE wrote (shared/vectors), read-only: an ML-DSA key, which
 * OpenSSL 3.0 cannot use, shows its certificate only; keys whose
 * password is not the store's are CKA_ALWAYS_AUTHENTICATE. */
static void test_pkcs11__wolfjce_stores(void **state)
{
	char path[700];
	FILE *f;
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE h[32];
	CK_BBOOL yes = CK_TRUE;
	CK_ATTRIBUTE aa[] = { { CKA_ALWAYS_AUTHENTICATE, &yes, 1 } };

	(void)state;
	CK(F->C_Finalize(NULL));
	snprintf(path, sizeof(path), "%s/vectors.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	/* (tu_shared() returns one static buffer) */
	fprintf(f, "[token]\nlabel = mldsa\nread-only = yes\nstore = %s\n",
		tu_shared("vectors/wolfjce/server-mldsa65.wks"));
	fprintf(f, "[token]\nlabel = differs\nread-only = yes\nstore = %s\n",
		tu_shared("vectors/wolfjce-live/keypass-differs.wks"));
	fclose(f);
	setenv("WKS_PKCS11_CONF", path, 1);
	CK(F->C_Initialize(NULL));
	s = open_session(0, 0);
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, NULL, h, 32), 1);
	assert_int_equal(find_cls(s, CKO_PUBLIC_KEY, NULL, h, 32), 0);
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR) "wolfsslpassword", 15));
	assert_int_equal(find_cls(s, CKO_PRIVATE_KEY, NULL, h, 32), 0);
	s = open_session(1, 0);
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR) "wolfsslpassword", 15));
	assert_true(find_cls(s, CKO_PRIVATE_KEY, NULL, h, 32) >= 1);
	assert_true(find(s, aa, 1, h, 32) >= 1);
	/* the secret key there has a password of its own too */
	assert_true(attr_bool(s, one(s, CKO_SECRET_KEY, "aes256"),
			      CKA_ALWAYS_AUTHENTICATE));
	setenv("WKS_PKCS11_CONF", conf, 1);
}

/* ---- threads and fork() ------------------------------------------------------------ */

typedef struct {
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE k;
	CK_MECHANISM_TYPE mech;
	EVP_PKEY *pub;
	size_t rounds;
	int failures;
} signer;

static void *sign_loop(void *arg)
{
	signer *g = arg;
	uint8_t sig[256], hash[32];
	unsigned int hl;

	/* (no public key: the signatures are not checked here, so that the
	 * thread calls nothing but the module: test_pkcs11__fork forks
	 * while it runs, and a child of a program one of whose threads was
	 * inside OpenSSL itself may find OpenSSL's locks held) */
	if (g->pub)
		EVP_Digest(msg, MSG_LEN, hash, &hl, EVP_sha256(), NULL);
	for (size_t i = 0; i < g->rounds; i++) {
		CK_MECHANISM m = { g->mech, NULL, 0 };
		CK_ULONG sn = sizeof(sig);

		if (F->C_SignInit(g->s, &m, g->k) != CKR_OK ||
		    F->C_Sign(g->s, msg, MSG_LEN, sig, &sn) != CKR_OK) {
			g->failures++;
			continue;
		}
		if (!g->pub)
			continue;
		if (g->mech == CKM_ECDSA_SHA256
			    ? !ossl_ecdsa_verify(g->pub, hash, hl, sig, sn)
			    : !ossl_rsa_verify(g->pub, "SHA256", 0, sig, sn))
			g->failures++;
	}
	return NULL;
}

/* Sessions signing on all cores at once (and under ThreadSanitizer in
 * CI), with logins, searches and sessions coming and going meanwhile. */
static void test_pkcs11__threads(void **state)
{
	enum { N = 4 };
	CK_SESSION_HANDLE s0 = user_session(SLOT_MAIN, 0);
	X509 *xe = cert_of(s0, "ec"), *xr = cert_of(s0, "rsa");
	size_t rounds = tu_env_count("WKS_PKCS11_ROUNDS", 40, 400);
	signer g[N];
	pthread_t th[N];
	CK_OBJECT_HANDLE h[32];

	(void)state;
	if (getenv("WKS_UNDER_VALGRIND"))
		rounds = 5;
	for (int i = 0; i < N; i++) {
		int rsa = i % 2;

		g[i].s = open_session(SLOT_MAIN, 0);
		g[i].k = one(g[i].s, CKO_PRIVATE_KEY, rsa ? "rsa" : "ec");
		g[i].mech = rsa ? CKM_SHA256_RSA_PKCS : CKM_ECDSA_SHA256;
		g[i].pub = X509_get0_pubkey(rsa ? xr : xe);
		g[i].rounds = rsa ? rounds / 4 + 1 : rounds;
		g[i].failures = 0;
		assert_int_equal(pthread_create(&th[i], NULL, sign_loop, &g[i]),
				 0);
	}
	for (size_t i = 0; i < 10; i++) {
		CK_SESSION_HANDLE t = open_session(SLOT_MAIN, 0);

		assert_true(find(t, NULL, 0, h, 32) >= 12);
		CK(F->C_CloseSession(t));
	}
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(g[i].failures, 0);
	}
	X509_free(xe);
	X509_free(xr);
}

/* ThreadSanitizer does not support a child of a multi-threaded process
 * that starts threads. */
static int tsan_build(void)
{
#if defined(__SANITIZE_THREAD__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	return 1;
#else
	return 0;
#endif
#else
	return 0;
#endif
}

/* In the child: uninitialised until C_Initialize, no login inherited. */
static int child_checks(void)
{
	CK_INFO info;
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO si;
	CK_OBJECT_HANDLE h[32];
	CK_ULONG n = 0;
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t[] = { { CKA_CLASS, &cls, sizeof(cls) } };
	uint8_t sig[64];
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };

	if (F->C_GetInfo(&info) != CKR_CRYPTOKI_NOT_INITIALIZED ||
	    F->C_OpenSession(SLOT_MAIN, CKF_SERIAL_SESSION, NULL, NULL, &s) !=
		    CKR_CRYPTOKI_NOT_INITIALIZED ||
	    F->C_Sign(1, msg, MSG_LEN, sig, &n) !=
		    CKR_CRYPTOKI_NOT_INITIALIZED)
		return 2;
	if (F->C_Initialize(NULL) != CKR_OK ||
	    F->C_OpenSession(SLOT_MAIN, CKF_SERIAL_SESSION, NULL, NULL, &s) !=
		    CKR_OK ||
	    F->C_GetSessionInfo(s, &si) != CKR_OK ||
	    si.state != CKS_RO_PUBLIC_SESSION)
		return 3;
	if (F->C_FindObjectsInit(s, t, 1) != CKR_OK ||
	    F->C_FindObjects(s, h, 32, &n) != CKR_OK || n != 0 ||
	    F->C_FindObjectsFinal(s) != CKR_OK)
		return 4;
	if (F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN) != CKR_OK ||
	    F->C_FindObjectsInit(s, t, 1) != CKR_OK ||
	    F->C_FindObjects(s, h, 32, &n) != CKR_OK || n != 5 ||
	    F->C_FindObjectsFinal(s) != CKR_OK)
		return 5;
	for (CK_ULONG i = 0; i < n; i++) {
		CK_ULONG sn = sizeof(sig);
		CK_KEY_TYPE kt;
		CK_ATTRIBUTE a = { CKA_KEY_TYPE, &kt, sizeof(kt) };

		if (F->C_GetAttributeValue(s, h[i], &a, 1) != CKR_OK)
			return 6;
		if (kt == CKK_EC) {
			if (F->C_SignInit(s, &m, h[i]) != CKR_OK)
				return 7;
			if (F->C_Sign(s, msg, MSG_LEN, sig, &sn) != CKR_OK &&
			    sn != 64)
				return 8;
			break;
		}
	}
	return F->C_Finalize(NULL) == CKR_OK ? 0 : 9;
}

static void test_pkcs11__fork(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "ec");
	X509 *x = cert_of(s, "ec");
	signer g = { s, k, CKM_ECDSA_SHA256, X509_get0_pubkey(x), 3, 0 };
	pid_t pid;
	int st;

	(void)state;
	/* the parent, logged in, with a key decrypted */
	sign_loop(&g);
	assert_int_equal(g.failures, 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = child_checks();

		/* (valgrind checks the child's leaks too) */
		X509_free(x);
		_exit(rc);
	}
	st = tu_reap_bounded(pid, 60000);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* the parent goes on */
	sign_loop(&g);
	assert_int_equal(g.failures, 0);
	/* fork() while other threads sign: never a hang */
	if (!tsan_build() && !getenv("WKS_UNDER_VALGRIND")) {
		enum { N = 2 };
		signer gs[N];
		pthread_t th[N];

		for (int i = 0; i < N; i++) {
			gs[i] = g;
			gs[i].s = open_session(SLOT_MAIN, 0);
			gs[i].rounds = 200;
			gs[i].pub = NULL; /* the module's calls only */
			pthread_create(&th[i], NULL, sign_loop, &gs[i]);
		}
		for (int i = 0; i < 5; i++) {
			pid = fork();
			assert_true(pid >= 0);
			if (pid == 0)
				_exit(child_checks());
			st = tu_reap_bounded(pid, 60000);
			assert_true(WIFEXITED(st));
			assert_int_equal(WEXITSTATUS(st), 0);
		}
		for (int i = 0; i < N; i++) {
			pthread_join(th[i], NULL);
			assert_int_equal(gs[i].failures, 0);
		}
	}
	X509_free(x);
}
/* C_CopyObject of a session key with CKA_TOKEN true: a new store entry.
 * SunPKCS11's KeyStore stores a key it generated so (keytool -genkeypair
 * and -genseckey -storetype PKCS11), with CKA_ID = the Java alias and no
 * label: the printable ID names the entry. */
static void test_pkcs11__copy_to_token(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1), ro;
	CK_BBOOL yes = CK_TRUE;
	uint8_t p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03,
			   0x01, 0x07 };
	uint8_t bin_id[] = { 0x01, 0xfe };
	CK_ULONG len = 32, n;
	CK_MECHANISM ecm = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_MECHANISM aesm = { CKM_AES_KEY_GEN, NULL, 0 };
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	CK_ATTRIBUTE pt[] = { { CKA_EC_PARAMS, p256, sizeof(p256) } };
	CK_ATTRIBUTE java[] = { { CKA_TOKEN, &yes, 1 }, { CKA_ID, "jgen", 4 } };
	CK_ATTRIBUTE binary[] = { { CKA_TOKEN, &yes, 1 },
				  { CKA_ID, bin_id, sizeof(bin_id) } };
	CK_ATTRIBUTE labelled[] = { { CKA_TOKEN, &yes, 1 },
				    { CKA_LABEL, "named", 5 },
				    { CKA_ID, "jgen2", 5 } };
	CK_ATTRIBUTE token[] = { { CKA_TOKEN, &yes, 1 } };
	CK_ATTRIBUTE sk[] = { { CKA_LABEL, "sk", 2 },
			      { CKA_VALUE_LEN, &len, sizeof(len) } };
	CK_OBJECT_HANDLE pub, priv, c, k, h[4];
	uint8_t *v, *sig;
	wks_store *st;
	X509 *x;

	(void)state;
	/* a session key pair (CKA_TOKEN defaults to false), as SunPKCS11
	 * generates one */
	CK(F->C_GenerateKeyPair(s, &ecm, pt, 1, NULL, 0, &pub, &priv));
	assert_false(attr_bool(s, priv, CKA_TOKEN));
	CK(F->C_CopyObject(s, priv, java, 2, &c));
	assert_true(attr_bool(s, c, CKA_TOKEN));
	assert_true(attr_bool(s, c, CKA_PRIVATE));
	v = attr(s, c, CKA_LABEL, &n);
	assert_int_equal(n, 4);
	assert_memory_equal(v, "jgen", 4);
	free(v);
	assert_int_equal(c, one(s, CKO_PRIVATE_KEY, "jgen"));
	/* the same key: its certificate's public key is the session key's */
	x = cert_of(s, "jgen");
	v = attr(s, pub, CKA_EC_POINT, &n);
	{
		ASN1_OCTET_STRING *os = NULL;
		const unsigned char *q = v;
		unsigned char point[133];
		size_t pl = 0;

		assert_non_null(d2i_ASN1_OCTET_STRING(&os, &q, (long)n));
		assert_int_equal(EVP_PKEY_get_octet_string_param(
					 X509_get0_pubkey(x),
					 OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY,
					 point, sizeof(point), &pl),
				 1);
		assert_int_equal(pl, ASN1_STRING_length(os));
		assert_memory_equal(point, ASN1_STRING_get0_data(os), pl);
		ASN1_OCTET_STRING_free(os);
	}
	free(v);
	X509_free(x);
	sig = sign1(s, &m, c, msg, MSG_LEN, &n);
	assert_int_equal(n, 64);
	free(sig);
	/* the source stays a session object */
	assert_false(attr_bool(s, priv, CKA_TOKEN));
	/* a binary CKA_ID: the alias is its hex, as for a new key */
	CK(F->C_CopyObject(s, priv, binary, 2, &c));
	assert_int_equal(c, one(s, CKO_PRIVATE_KEY, "01fe"));
	/* a label names the entry; an alias in use is refused */
	CK(F->C_CopyObject(s, priv, labelled, 3, &c));
	assert_int_equal(c, one(s, CKO_PRIVATE_KEY, "named"));
	CKE(CKR_ATTRIBUTE_VALUE_INVALID,
	    F->C_CopyObject(s, priv, labelled, 3, &c));
	/* a session secret key: the source's label names the entry */
	CK(F->C_GenerateKey(s, &aesm, sk, 2, &k));
	CK(F->C_CopyObject(s, k, token, 1, &c));
	assert_true(attr_bool(s, c, CKA_TOKEN));
	v = attr(s, c, CKA_LABEL, &n);
	assert_int_equal(n, 2);
	assert_memory_equal(v, "sk", 2);
	free(v);
	assert_int_not_equal(c, k);
	st = load_w(PIN);
	assert_int_equal(wks_store_entry_type(st, "jgen"),
			 WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(wks_store_entry_type(st, "01fe"),
			 WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(wks_store_entry_type(st, "named"),
			 WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(wks_store_entry_type(st, "sk"), WKS_ENTRY_SECRET_KEY);
	wks_store_free(st);
	/* public keys and certificates live in a store with their entries
	 * (C_CreateObject makes those) */
	CKE(CKR_TEMPLATE_INCONSISTENT, F->C_CopyObject(s, pub, token, 1, &c));
	/* a token change needs a read-write session */
	ro = open_session(SLOT_W, 0);
	CKE(CKR_SESSION_READ_ONLY, F->C_CopyObject(ro, k, token, 1, &c));
	CK(F->C_CloseSession(ro));
	/* after a logout, the new entries' certificates are public
	 * objects of the token */
	CK(F->C_Logout(s));
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "jgen", h, 4), 1);
	if (tu_full_mode())
		wksdump_ok(w_store, PIN);
}

/* ---- the shared login (docs/PKCS11.md "Shared login") --------------------- */

/* The keyring key of a token with serial `serial`: its id, or -1. */
static long share_key(const char *serial)
{
	char d[64];

	snprintf(d, sizeof(d), "libwks-pkcs11:%s", serial);
	return syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user",
		       d, 0);
}

/* Re-initialise the module with one token "sh" on `store`, shared-login
 * as given; its slot in *slot and serial in serial. */
static void share_init(const char *store, int shared, CK_SLOT_ID *slot,
		       char serial[17])
{
	FILE *f = fopen(conf, "w");
	CK_SLOT_ID sl[4];
	CK_ULONG n = 4;
	CK_TOKEN_INFO ti;

	assert_non_null(f);
	fprintf(f, "[token]\nlabel = sh\nstore = %s\nkek-cache-ttl = 60\n"
		"shared-login = %s\nwolfjce.wks.iterationCount = 10000\n",
		store, shared ? "yes" : "no");
	fclose(f);
	F->C_Finalize(NULL);
	CK(F->C_Initialize(NULL));
	CK(F->C_GetSlotList(CK_TRUE, sl, &n));
	assert_int_equal(n, 1);
	*slot = sl[0];
	CK(F->C_GetTokenInfo(sl[0], &ti));
	memcpy(serial, ti.serialNumber, 16);
	serial[16] = '\0';
}

static CK_STATE state_of(CK_SESSION_HANDLE s)
{
	CK_SESSION_INFO si;

	CK(F->C_GetSessionInfo(s, &si));
	return si.state;
}

/* An ECDSA signature by "ec" through session s, verified by OpenSSL. */
static void ec_signs(CK_SESSION_HANDLE s)
{
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	CK_ULONG sn;
	uint8_t *sig = sign1(s, &m, one(s, CKO_PRIVATE_KEY, "ec"), msg,
			     MSG_LEN, &sn);
	X509 *x = cert_of(s, "ec");
	EVP_PKEY *pub = X509_get0_pubkey(x);
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(sig, (int)sn / 2, NULL);
	BIGNUM *ss = BN_bin2bn(sig + sn / 2, (int)sn / 2, NULL);
	unsigned char *der = NULL;
	int dl;
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	assert_int_equal(sn, 64);
	assert_int_equal(ECDSA_SIG_set0(es, r, ss), 1);
	assert_true((dl = i2d_ECDSA_SIG(es, &der)) > 0);
	assert_int_equal(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL,
					      pub), 1);
	assert_int_equal(EVP_DigestVerify(md, der, (size_t)dl, msg, MSG_LEN),
			 1);
	EVP_MD_CTX_free(md);
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
	X509_free(x);
	free(sig);
}

/* The module's debug log since the last log_clear() has `text`. */
static void log_clear(void)
{
	assert_int_equal(truncate(debug_log, 0), 0);
}

static int log_has(const char *text)
{
	size_t n;
	char *p = (char *)tu_read_file(debug_log, &n);
	int has;

	p = realloc(p, n + 1);
	assert_non_null(p);
	p[n] = '\0';
	has = strstr(p, text) != NULL;
	if (!has)
		print_message("module log, without \"%s\":\n%s", text, p);
	free(p);
	return has;
}

static void test_pkcs11__shared_login(void **state)
{
	char store[700], serial[17];
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	CK_ULONG len;
	uint8_t *v;
	long id;
	wks_store *st;

	(void)state;
	/* A kernel without keyrings, or a sandbox that filters keyctl(2)
	 * (Docker's default seccomp profile does): the module then shares
	 * nothing, which the rest of this test would report as failures. */
	id = syscall(SYS_add_key, "user", "libwks-test-probe", "x", (size_t)1,
		     KEY_SPEC_USER_KEYRING);
	if (id < 0) {
		print_message("SKIP: no kernel keyring here (%s)\n",
			      strerror(errno));
		skip();
	}
	syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
	snprintf(store, sizeof(store), "%s/shared.wks", dir);
	copy_file(main_store, store);
	log_clear();

	/* Off (the default): a login stays in its process. */
	share_init(store, 0, &slot, serial);
	s = user_session(slot, 0);
	assert_true(share_key(serial) < 0);
	share_init(store, 0, &slot, serial);
	s = open_session(slot, 0);
	assert_int_equal(state_of(s), CKS_RO_PUBLIC_SESSION);

	/* On: a login leaves a keyring key, which a fresh module instance
	 * (what a new process, a p11-kit-remote, has) takes over: logged in
	 * at C_OpenSession, C_Login says so, the keys were imported (none
	 * derived) and sign. */
	share_init(store, 1, &slot, serial);
	s = user_session(slot, 0);
	assert_true(share_key(serial) >= 0);
	assert_true(log_has("shared login: 6 key(s) in the user's keyring"));
	share_init(store, 1, &slot, serial);
	s = open_session(slot, 0);
	assert_int_equal(state_of(s), CKS_RO_USER_FUNCTIONS);
	assert_true(log_has("shared login taken over (6 key(s))"));
	/* its first C_Login is checked against the shared password (a
	 * wrong PIN refused), then it is this process's login */
	CKE(CKR_PIN_INCORRECT, F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)KEYPW,
					  KEYPW_LEN));
	assert_int_equal(state_of(s), CKS_RO_USER_FUNCTIONS);
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	CKE(CKR_USER_ALREADY_LOGGED_IN,
	    F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	ec_signs(s);
	/* the secret keys too */
	v = attr(s, one(s, CKO_SECRET_KEY, "aes"), CKA_VALUE_LEN, &len);
	free(v);

	/* An edit through the module keeps it (the record names the new
	 * file): a rename, then a fresh instance is still logged in. */
	CK(F->C_CloseSession(s));
	s = open_session(slot, 1);
	{
		char nl[] = "hmac2";
		CK_ATTRIBUTE a = { CKA_LABEL, nl, 5 };

		CK(F->C_SetAttributeValue(s, one(s, CKO_SECRET_KEY, "hmac"), &a,
					  1));
	}
	log_clear();
	share_init(store, 1, &slot, serial);
	s = open_session(slot, 0);
	assert_int_equal(state_of(s), CKS_RO_USER_FUNCTIONS);
	assert_true(log_has("shared login taken over (6 key(s))"));
	ec_signs(s);

	/* C_Logout ends it for every instance. */
	CK(F->C_Logout(s));
	assert_true(share_key(serial) < 0);
	share_init(store, 1, &slot, serial);
	s = open_session(slot, 0);
	assert_int_equal(state_of(s), CKS_RO_PUBLIC_SESSION);
	{
		CK_OBJECT_HANDLE h[8];

		assert_int_equal(find_cls(s, CKO_PRIVATE_KEY, NULL, h, 8), 0);
	}

	/* A change of the file by another program makes it stale: the
	 * next instance is not logged in (and C_Login works as ever). */
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	assert_true((id = share_key(serial)) >= 0);
	st = tu_store_fast();
	TU_OK(wks_store_load_file(st, store, PIN, PIN_LEN));
	TU_OK(wks_store_delete(st, "ca"));
	TU_OK(wks_store_save_file(st, store, PIN, PIN_LEN));
	wks_store_free(st);
	log_clear();
	share_init(store, 1, &slot, serial);
	s = open_session(slot, 0);
	assert_int_equal(state_of(s), CKS_RO_PUBLIC_SESSION);
	assert_true(log_has("shared login: the store changed since"));
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	ec_signs(s);
	CK(F->C_Logout(s));
	assert_true(share_key(serial) < 0);
	unsetenv("WKS_PKCS11_DEBUG");
}

/* ---- issue 29, items 1, 6, 10, 22, 23, 24 ----------------------------------- */

/* Item 1: a copy of a token key may only tighten what its source allows,
 * and a token key's value never leaves, from any object. */
static void test_pkcs11__copy_cannot_loosen(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	static const char *keys[] = { "rsa", "ec", "aes" };
	CK_ATTRIBUTE_TYPE secret_attrs[] = {
		CKA_VALUE, CKA_PRIVATE_EXPONENT, CKA_PRIME_1, CKA_PRIME_2,
		CKA_EXPONENT_1, CKA_EXPONENT_2, CKA_COEFFICIENT,
	};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		CK_OBJECT_CLASS cls = i == 2 ? CKO_SECRET_KEY : CKO_PRIVATE_KEY;
		CK_OBJECT_HANDLE k = one(s, cls, keys[i]), c = 0;
		CK_ATTRIBUTE loose[] = {
			{ CKA_TOKEN, &no, 1 },
			{ CKA_SENSITIVE, &no, 1 },
			{ CKA_EXTRACTABLE, &yes, 1 },
		};
		CK_ATTRIBUTE only_extr[] = { { CKA_TOKEN, &no, 1 },
					     { CKA_EXTRACTABLE, &yes, 1 } };
		CK_ATTRIBUTE only_sens[] = { { CKA_TOKEN, &no, 1 },
					     { CKA_SENSITIVE, &no, 1 } };
		CK_ATTRIBUTE pub[] = { { CKA_TOKEN, &no, 1 },
				       { CKA_PRIVATE, &no, 1 } };
		CK_ATTRIBUTE tight[] = { { CKA_TOKEN, &no, 1 },
					 { CKA_MODIFIABLE, &no, 1 } };
		CK_ATTRIBUTE set_sens[] = { { CKA_SENSITIVE, &no, 1 } };
		CK_ATTRIBUTE set_extr[] = { { CKA_EXTRACTABLE, &yes, 1 } };
		CK_ATTRIBUTE plain[] = { { CKA_TOKEN, &no, 1 } };
		CK_ATTRIBUTE use[] = { { CKA_TOKEN, &no, 1 },
				       { i == 2 ? CKA_WRAP : CKA_SIGN_RECOVER,
					 &yes, 1 } };

		CKE(CKR_ATTRIBUTE_READ_ONLY, F->C_CopyObject(s, k, loose, 3, &c));
		CKE(CKR_ATTRIBUTE_READ_ONLY,
		    F->C_CopyObject(s, k, only_extr, 2, &c));
		CKE(CKR_ATTRIBUTE_READ_ONLY,
		    F->C_CopyObject(s, k, only_sens, 2, &c));
		CKE(CKR_ATTRIBUTE_READ_ONLY, F->C_CopyObject(s, k, pub, 2, &c));
		/* a use the source does not have */
		CKE(CKR_ATTRIBUTE_READ_ONLY, F->C_CopyObject(s, k, use, 2, &c));
		/* tightening is allowed */
		CK(F->C_CopyObject(s, k, tight, 2, &c));
		assert_false(attr_bool(s, c, CKA_MODIFIABLE));
		CK(F->C_DestroyObject(s, c));
		/* a plain copy is as sensitive as its source, and stays so */
		CK(F->C_CopyObject(s, k, plain, 1, &c));
		assert_true(attr_bool(s, c, CKA_SENSITIVE));
		assert_false(attr_bool(s, c, CKA_EXTRACTABLE));
		CKE(CKR_ATTRIBUTE_READ_ONLY,
		    F->C_SetAttributeValue(s, c, set_sens, 1));
		CKE(CKR_ATTRIBUTE_READ_ONLY,
		    F->C_SetAttributeValue(s, c, set_extr, 1));
		for (size_t j = 0; j < sizeof(secret_attrs) /
					   sizeof(secret_attrs[0]); j++) {
			uint8_t buf[1024];
			CK_ATTRIBUTE a = { secret_attrs[j], buf, sizeof(buf) };
			CK_RV rv = F->C_GetAttributeValue(s, c, &a, 1);

			assert_true(rv == CKR_ATTRIBUTE_SENSITIVE ||
				    rv == CKR_ATTRIBUTE_TYPE_INVALID);
			assert_int_equal(a.ulValueLen,
					 CK_UNAVAILABLE_INFORMATION);
			rv = F->C_GetAttributeValue(s, k, &a, 1);
			assert_true(rv == CKR_ATTRIBUTE_SENSITIVE ||
				    rv == CKR_ATTRIBUTE_TYPE_INVALID);
		}
		/* ... and it works */
		if (i == 1) {
			CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
			CK_ULONG sn;

			free(sign1(s, &m, c, msg, MSG_LEN, &sn));
		}
		CK(F->C_DestroyObject(s, c));
	}
	/* a session key made extractable by its creator stays its own */
	{
		CK_OBJECT_CLASS sc = CKO_SECRET_KEY;
		CK_KEY_TYPE kt = CKK_AES;
		uint8_t v[16] = { 1, 2, 3, 4 }, got[16];
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &sc, sizeof(sc) },
			{ CKA_KEY_TYPE, &kt, sizeof(kt) },
			{ CKA_VALUE, v, sizeof(v) },
			{ CKA_SENSITIVE, &no, 1 },
			{ CKA_EXTRACTABLE, &yes, 1 },
		};
		CK_ATTRIBUTE plain[] = { { CKA_LABEL, "c", 1 } };
		CK_ATTRIBUTE a = { CKA_VALUE, got, sizeof(got) };
		CK_OBJECT_HANDLE k, c;

		CK(F->C_CreateObject(s, t, 5, &k));
		CK(F->C_CopyObject(s, k, plain, 1, &c));
		CK(F->C_GetAttributeValue(s, c, &a, 1));
		assert_memory_equal(got, v, sizeof(v));
	}
	CK(F->C_CloseSession(s));
}

/* Item 6: every template is checked before it is read: a value pointer
 * of NULL with a length is refused, never followed (no login needed). */
static void test_pkcs11__template_shapes(void **state)
{
	CK_SESSION_HANDLE s = open_session(SLOT_MAIN, 1);
	CK_OBJECT_CLASS cls = CKO_CERTIFICATE;
	CK_ATTRIBUTE bad[] = { { CKA_CLASS, &cls, sizeof(cls) },
			       { CKA_LABEL, NULL, 5 } };
	CK_ATTRIBUTE bad1[] = { { CKA_ID, NULL, 20 } };
	CK_ATTRIBUTE dup[] = { { CKA_CLASS, &cls, sizeof(cls) },
			       { CKA_CLASS, &cls, sizeof(cls) } };
	CK_OBJECT_HANDLE h[4], k = 0;
	CK_ULONG got = 9;
	CK_MECHANISM gen = { CKM_AES_KEY_GEN, NULL, 0 };

	(void)state;
	CKE(CKR_ARGUMENTS_BAD, F->C_FindObjectsInit(s, bad, 2));
	CKE(CKR_ARGUMENTS_BAD, F->C_FindObjectsInit(s, bad1, 1));
	CKE(CKR_ARGUMENTS_BAD, F->C_FindObjectsInit(s, NULL, 1));
	/* nothing was started */
	CKE(CKR_OPERATION_NOT_INITIALIZED, F->C_FindObjects(s, h, 4, &got));
	/* a search may name an attribute twice (it matches or not) */
	CK(F->C_FindObjectsInit(s, dup, 2));
	CK(F->C_FindObjects(s, h, 4, &got));
	assert_true(got > 0);
	CK(F->C_FindObjectsFinal(s));
	/* the other template-taking calls, the same check */
	CKE(CKR_ATTRIBUTE_VALUE_INVALID, F->C_CreateObject(s, bad, 2, &k));
	CKE(CKR_ATTRIBUTE_VALUE_INVALID, F->C_GenerateKey(s, &gen, bad1, 1, &k));
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	k = one(s, CKO_CERTIFICATE, "ca");
	CKE(CKR_ATTRIBUTE_VALUE_INVALID, F->C_CopyObject(s, k, bad1, 1, h));
	CKE(CKR_ATTRIBUTE_VALUE_INVALID,
	    F->C_SetAttributeValue(s, k, bad1, 1));
	CKE(CKR_ARGUMENTS_BAD, F->C_FindObjectsInit(s, bad, 2));
	CK(F->C_CloseSession(s));
}

/* Item 10: CKA_UNIQUE_ID is unique per object, also for one certificate
 * in two entries' chains. */
static void test_pkcs11__unique_ids(void **state)
{
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE h[64];
	char *ids[64];
	size_t n;
	wks_store *st = load_w(PIN);

	(void)state;
	/* "rsa2": the key and chain of "rsa" (leaf and CA) */
	TU_OK(tu_set_key_files(st, "rsa2", "server-key.pem",
			       "server-cert-chain2.pem", PIN));
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);
	s = user_session(SLOT_W, 0);
	n = find(s, NULL, 0, h, 64);
	assert_true(n > 10 && n < 64);
	for (size_t i = 0; i < n; i++) {
		CK_ULONG len;

		ids[i] = (char *)attr(s, h[i], CKA_UNIQUE_ID, &len);
		ids[i][len] = 0;
		assert_true(len > 0);
		for (size_t j = 0; j < i; j++)
			if (strcmp(ids[i], ids[j]) == 0)
				fail_msg("objects %lu and %lu share CKA_UNIQUE_ID "
					 "%s", (unsigned long)h[i],
					 (unsigned long)h[j], ids[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	/* both chains' CA certificate objects are there */
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "rsa/1", h, 4), 1);
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "rsa2/1", h, 4), 1);
	CK(F->C_CloseSession(s));
}

/* Item 22: session data objects (CKO_DATA), in memory as every session
 * object; a token data object is refused (a WKS store holds none). */
static void test_pkcs11__data_objects(void **state)
{
	CK_SESSION_HANDLE s = open_session(SLOT_W, 1), s2;
	CK_OBJECT_CLASS dc = CKO_DATA;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	uint8_t val[] = "some data", oid[] = { 0x06, 0x03, 0x2a, 0x03, 0x04 };
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &dc, sizeof(dc) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_LABEL, "d1", 2 },
		{ CKA_APPLICATION, "app", 3 },
		{ CKA_OBJECT_ID, oid, sizeof(oid) },
		{ CKA_VALUE, val, sizeof(val) - 1 },
	};
	CK_ATTRIBUTE tok[] = { { CKA_CLASS, &dc, sizeof(dc) },
			       { CKA_TOKEN, &yes, 1 } };
	CK_ATTRIBUTE priv[] = { { CKA_CLASS, &dc, sizeof(dc) },
				{ CKA_PRIVATE, &yes, 1 } };
	CK_ATTRIBUTE nv[] = { { CKA_VALUE, "new", 3 } };
	CK_ATTRIBUTE cl[] = { { CKA_LABEL, "d2", 2 } };
	CK_OBJECT_HANDLE d, c, h[8];
	CK_ULONG len;
	uint8_t *v;

	(void)state;
	/* a private one needs the user */
	CKE(CKR_USER_NOT_LOGGED_IN, F->C_CreateObject(s, priv, 2, &d));
	CK(F->C_CreateObject(s, t, 6, &d));
	assert_int_equal(attr_ulong(s, d, CKA_CLASS), CKO_DATA);
	assert_false(attr_bool(s, d, CKA_TOKEN));
	assert_false(attr_bool(s, d, CKA_PRIVATE));
	v = attr(s, d, CKA_VALUE, &len);
	assert_int_equal(len, sizeof(val) - 1);
	assert_memory_equal(v, val, len);
	free(v);
	v = attr(s, d, CKA_APPLICATION, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(v, "app", 3);
	free(v);
	v = attr(s, d, CKA_OBJECT_ID, &len);
	assert_int_equal(len, sizeof(oid));
	free(v);
	assert_int_equal(find_cls(s, CKO_DATA, "d1", h, 8), 1);
	assert_int_equal(h[0], d);
	/* another session sees it; it ends with its session */
	s2 = open_session(SLOT_W, 0);
	assert_int_equal(find_cls(s2, CKO_DATA, NULL, h, 8), 1);
	CK(F->C_SetAttributeValue(s, d, nv, 1));
	v = attr(s, d, CKA_VALUE, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(v, "new", 3);
	free(v);
	CK(F->C_CopyObject(s, d, cl, 1, &c));
	assert_int_equal(find_cls(s, CKO_DATA, NULL, h, 8), 2);
	CK(F->C_DestroyObject(s, c));
	assert_int_equal(find_cls(s, CKO_DATA, NULL, h, 8), 1);
	/* on the token: test_pkcs11__token_data_objects */
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	(void)tok;
	CK(F->C_CreateObject(s, priv, 2, &c));
	CK(F->C_Logout(s));
	/* the private one is gone from view at the logout */
	assert_int_equal(find_cls(s2, CKO_DATA, NULL, h, 8), 1);
	CK(F->C_CloseSession(s));
	assert_int_equal(find_cls(s2, CKO_DATA, NULL, h, 8), 0);
	CK(F->C_CloseSession(s2));
}

/* Item 23: pReserved is NULL or a parameter string (NSS,
 * pkcs11-provider); anything else is CKR_ARGUMENTS_BAD, even a pointer
 * to nowhere. */
static void test_pkcs11__init_reserved(void **state)
{
	CK_C_INITIALIZE_ARGS a;
	static char nss[] = "configdir='sql:/tmp/x' certPrefix='' "
			    "flags=readOnly";
	static unsigned char bin[] = { 0x01, 0x02, 0x80, 0x00 };
	char *edge;
	long pg = sysconf(_SC_PAGESIZE);

	(void)state;
	CK(F->C_Finalize(NULL));
	memset(&a, 0, sizeof(a));
	a.flags = CKF_OS_LOCKING_OK;
	a.pReserved = bin;
	CKE(CKR_ARGUMENTS_BAD, F->C_Initialize(&a));
	a.pReserved = nss;
	CK(F->C_Initialize(&a));
	CK(F->C_Finalize(NULL));
	if (getenv("WKS_UNDER_VALGRIND")) {
		/* memcheck reports the system call's read of a bad address
		 * as an error of the program; the plain and ASan stages run
		 * these */
		print_message("init_reserved: the bad-pointer cases are not "
			      "run under valgrind\n");
		a.pReserved = "";
		CK(F->C_Initialize(&a));
		return;
	}
	a.pReserved = (void *)1;
	CKE(CKR_ARGUMENTS_BAD, F->C_Initialize(&a));
	/* a string that ends at the last byte before an unmapped page is
	 * read whole; one that runs into it is not followed */
	edge = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(edge != MAP_FAILED);
	assert_int_equal(munmap(edge + pg, pg), 0);
	memset(edge, 'a', pg);
	a.pReserved = edge + pg - 10;
	CKE(CKR_ARGUMENTS_BAD, F->C_Initialize(&a));
	edge[pg - 1] = 0;
	CK(F->C_Initialize(&a));
	CK(F->C_Finalize(NULL));
	munmap(edge, pg);
	a.pReserved = "";
	CK(F->C_Initialize(&a));
	/* (the teardown's C_Finalize) */
}

/* Item 24: C_SeedRandom checks its session and arguments first. */
static void test_pkcs11__seed_random(void **state)
{
	CK_SESSION_HANDLE s = open_session(SLOT_MAIN, 0);
	uint8_t seed[8] = { 0 };

	(void)state;
	CKE(CKR_SESSION_HANDLE_INVALID, F->C_SeedRandom(s + 1000, seed, 8));
	CKE(CKR_ARGUMENTS_BAD, F->C_SeedRandom(s, NULL, 8));
	CKE(CKR_RANDOM_SEED_NOT_SUPPORTED, F->C_SeedRandom(s, seed, 8));
	CK(F->C_CloseSession(s));
	CKE(CKR_SESSION_HANDLE_INVALID, F->C_SeedRandom(s, seed, 8));
	CK(F->C_Finalize(NULL));
	CKE(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_SeedRandom(s, seed, 8));
	CK(F->C_Initialize(NULL));
}

/* ---- issue 29 items 12, 13, 14, 18, 19, 21 (diagnostics, own library
 * context) ------------------------------------------------------------------ */

/* Item 21: the module never works in the application's default OpenSSL
 * library context.  A child (this program again, WKS_TEST_NULL_DEFAULT
 * set) loads only OpenSSL's "null" provider into its default context, so
 * that every fetch there fails, and then drives the module through
 * parsing, signing, verifying, encryption, HMAC, digests, random, ECDH,
 * key generation (with its self-signed certificate and a save), imports
 * and a second initialisation.  The child prints the failing step. */
#include <openssl/provider.h>

#define NC(step, call) do { \
	CK_RV rv_ = (call); \
	if (rv_ != CKR_OK) { \
		fprintf(stderr, "null-default child: %s: %s: 0x%lx\n", step, \
			#call, (unsigned long)rv_); \
		_exit(1); \
	} \
} while (0)

static CK_OBJECT_HANDLE nc_one(CK_SESSION_HANDLE s, CK_OBJECT_CLASS cls,
			       const char *label)
{
	CK_ATTRIBUTE t[2] = { { CKA_CLASS, &cls, sizeof(cls) },
			      { CKA_LABEL, (void *)label, strlen(label) } };
	CK_OBJECT_HANDLE h = 0;
	CK_ULONG n = 0;

	NC(label, F->C_FindObjectsInit(s, t, 2));
	NC(label, F->C_FindObjects(s, &h, 1, &n));
	NC(label, F->C_FindObjectsFinal(s));
	if (n != 1) {
		fprintf(stderr, "null-default child: no object %s\n", label);
		_exit(1);
	}
	return h;
}

static void nc_sign_verify(CK_SESSION_HANDLE s, CK_MECHANISM *m,
			   CK_OBJECT_HANDLE priv, CK_OBJECT_HANDLE pub,
			   const char *what)
{
	uint8_t sig[1024];
	CK_ULONG n = sizeof(sig);

	NC(what, F->C_SignInit(s, m, priv));
	NC(what, F->C_Sign(s, msg, MSG_LEN, sig, &n));
	NC(what, F->C_VerifyInit(s, m, pub));
	NC(what, F->C_Verify(s, msg, MSG_LEN, sig, n));
}

static void nc_new_mechanisms(CK_SESSION_HANDLE s); /* issue 30 item 2 */

static int null_default_child(void)
{
	CK_C_GetFunctionList gfl;
	CK_SESSION_HANDLE s, w;
	CK_OBJECT_HANDLE h[64], k, pub, priv;
	CK_ULONG n = 0, len;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	uint8_t buf[4096], buf2[4096], point[200];
	EVP_MD *md;

	if (!OSSL_PROVIDER_load(NULL, "null")) {
		fprintf(stderr, "null-default child: no null provider\n");
		return 1;
	}
	/* the default context is unusable: the test can fail */
	if ((md = EVP_MD_fetch(NULL, "SHA256", NULL)) != NULL) {
		fprintf(stderr, "null-default child: SHA256 still fetched\n");
		return 1;
	}
	if (!(lib = dlopen(WKS_PKCS11_MODULE, RTLD_NOW | RTLD_LOCAL)) ||
	    !(gfl = (CK_C_GetFunctionList)(uintptr_t)dlsym(lib,
		"C_GetFunctionList")) || gfl(&F) != CKR_OK) {
		fprintf(stderr, "null-default child: no module\n");
		return 1;
	}
	NC("init", F->C_Initialize(NULL));
	/* parsing, without a login */
	NC("open", F->C_OpenSession(SLOT_MAIN, CKF_SERIAL_SESSION, NULL, NULL,
				    &s));
	NC("find", F->C_FindObjectsInit(s, NULL, 0));
	NC("find", F->C_FindObjects(s, h, 64, &n));
	NC("find", F->C_FindObjectsFinal(s));
	if (n < 8) {
		fprintf(stderr, "null-default child: %lu objects\n",
			(unsigned long)n);
		return 1;
	}
	/* signatures, verified by the module */
	NC("login", F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	{
		CK_MECHANISM rsa = { CKM_SHA256_RSA_PKCS, NULL, 0 };
		CK_RSA_PKCS_PSS_PARAMS pp = { CKM_SHA256, CKG_MGF1_SHA256, 32 };
		CK_MECHANISM pss = { CKM_SHA256_RSA_PKCS_PSS, &pp, sizeof(pp) };
		CK_MECHANISM ec = { CKM_ECDSA_SHA256, NULL, 0 };
		CK_MECHANISM ed = { CKM_EDDSA, NULL, 0 };

		nc_sign_verify(s, &rsa, nc_one(s, CKO_PRIVATE_KEY, "rsa"),
			       nc_one(s, CKO_PUBLIC_KEY, "rsa"), "RSA");
		nc_sign_verify(s, &pss, nc_one(s, CKO_PRIVATE_KEY, "rsa"),
			       nc_one(s, CKO_PUBLIC_KEY, "rsa"), "RSA-PSS");
		nc_sign_verify(s, &ec, nc_one(s, CKO_PRIVATE_KEY, "ec"),
			       nc_one(s, CKO_PUBLIC_KEY, "ec"), "ECDSA");
		nc_sign_verify(s, &ed, nc_one(s, CKO_PRIVATE_KEY, "ed"),
			       nc_one(s, CKO_PUBLIC_KEY, "ed"), "EdDSA");
	}
	/* RSA-OAEP, AES-GCM, HMAC, digest, random */
	{
		CK_RSA_PKCS_OAEP_PARAMS op = { CKM_SHA256, CKG_MGF1_SHA256,
					       CKZ_DATA_SPECIFIED, NULL, 0 };
		CK_MECHANISM oaep = { CKM_RSA_PKCS_OAEP, &op, sizeof(op) };
		uint8_t iv[12] = { 1 };
		CK_GCM_PARAMS g = { iv, 12, 96, NULL, 0, 128 };
		CK_MECHANISM gcm = { CKM_AES_GCM, &g, sizeof(g) };
		CK_MECHANISM hm = { CKM_SHA256_HMAC, NULL, 0 };
		CK_MECHANISM dg = { CKM_SHA256, NULL, 0 };
		CK_ULONG n2 = sizeof(buf2);

		len = sizeof(buf);
		NC("OAEP", F->C_EncryptInit(s, &oaep,
					   nc_one(s, CKO_PUBLIC_KEY, "rsa")));
		NC("OAEP", F->C_Encrypt(s, msg, MSG_LEN, buf, &len));
		NC("OAEP", F->C_DecryptInit(s, &oaep,
					   nc_one(s, CKO_PRIVATE_KEY, "rsa")));
		NC("OAEP", F->C_Decrypt(s, buf, len, buf2, &n2));
		k = nc_one(s, CKO_SECRET_KEY, "aes");
		len = sizeof(buf);
		NC("GCM", F->C_EncryptInit(s, &gcm, k));
		NC("GCM", F->C_Encrypt(s, msg, MSG_LEN, buf, &len));
		n2 = sizeof(buf2);
		NC("GCM", F->C_DecryptInit(s, &gcm, k));
		NC("GCM", F->C_Decrypt(s, buf, len, buf2, &n2));
		nc_sign_verify(s, &hm, nc_one(s, CKO_SECRET_KEY, "hmac"),
			       nc_one(s, CKO_SECRET_KEY, "hmac"), "HMAC");
		len = sizeof(buf);
		NC("digest", F->C_DigestInit(s, &dg));
		NC("digest", F->C_Digest(s, msg, MSG_LEN, buf, &len));
		NC("random", F->C_GenerateRandom(s, buf, 64));
	}
	/* ECDH with the key's own public point; an imported public key */
	{
		CK_OBJECT_HANDLE ecpub = nc_one(s, CKO_PUBLIC_KEY, "ec"), out;
		CK_ATTRIBUTE pa = { CKA_EC_POINT, point, sizeof(point) };
		CK_ATTRIBUTE pe = { CKA_EC_PARAMS, buf2, sizeof(buf2) };
		CK_OBJECT_CLASS cls = CKO_SECRET_KEY, pcls = CKO_PUBLIC_KEY;
		CK_KEY_TYPE kt = CKK_GENERIC_SECRET, ekt = CKK_EC;
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &cls, sizeof(cls) },
				     { CKA_KEY_TYPE, &kt, sizeof(kt) },
				     { CKA_TOKEN, &no, 1 } };
		CK_ECDH1_DERIVE_PARAMS p = { CKD_NULL, 0, NULL, 0, NULL };
		CK_MECHANISM m = { CKM_ECDH1_DERIVE, &p, sizeof(p) };
		CK_MECHANISM ec = { CKM_ECDSA_SHA256, NULL, 0 };

		NC("EC point", F->C_GetAttributeValue(s, ecpub, &pa, 1));
		NC("EC params", F->C_GetAttributeValue(s, ecpub, &pe, 1));
		p.pPublicData = point;
		p.ulPublicDataLen = pa.ulValueLen;
		NC("ECDH", F->C_DeriveKey(s, &m, nc_one(s, CKO_PRIVATE_KEY,
						       "ec"), t, 3, &out));
		{
			CK_ATTRIBUTE it[] = {
				{ CKA_CLASS, &pcls, sizeof(pcls) },
				{ CKA_KEY_TYPE, &ekt, sizeof(ekt) },
				{ CKA_EC_PARAMS, buf2, pe.ulValueLen },
				{ CKA_EC_POINT, point, pa.ulValueLen },
				{ CKA_VERIFY, &yes, 1 },
			};

			NC("import", F->C_CreateObject(s, it, 5, &k));
			nc_sign_verify(s, &ec, nc_one(s, CKO_PRIVATE_KEY, "ec"),
				       k, "ECDSA, imported key");
		}
	}
	nc_new_mechanisms(s);
	/* a certificate object from its DER */
	{
		CK_OBJECT_CLASS cc = CKO_CERTIFICATE;
		CK_CERTIFICATE_TYPE ct = CKC_X_509;
		CK_ATTRIBUTE v = { CKA_VALUE, buf, sizeof(buf) };
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &cc, sizeof(cc) },
				     { CKA_CERTIFICATE_TYPE, &ct, sizeof(ct) },
				     { CKA_VALUE, buf, 0 } };

		NC("cert", F->C_GetAttributeValue(s,
			nc_one(s, CKO_CERTIFICATE, "ca"), &v, 1));
		t[2].ulValueLen = v.ulValueLen;
		NC("cert", F->C_CreateObject(s, t, 3, &k));
	}
	/* key generation on a token: a self-signed certificate, a save */
	NC("open w", F->C_OpenSession(SLOT_W, CKF_SERIAL_SESSION |
				      CKF_RW_SESSION, NULL, NULL, &w));
	NC("login w", F->C_Login(w, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	{
		uint8_t p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
				   0x03, 0x01, 0x07 };
		CK_ULONG bits = 1024, klen = 32;
		CK_MECHANISM ecm = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
		CK_MECHANISM rsam = { CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0 };
		CK_MECHANISM aesm = { CKM_AES_KEY_GEN, NULL, 0 };
		CK_MECHANISM ec = { CKM_ECDSA_SHA256, NULL, 0 };
		CK_ATTRIBUTE pt[] = { { CKA_EC_PARAMS, p256, sizeof(p256) } };
		CK_ATTRIBUTE vt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_LABEL, "nulldef", 7 } };
		CK_ATTRIBUTE rt[] = { { CKA_MODULUS_BITS, &bits,
					sizeof(bits) } };
		CK_ATTRIBUTE at[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_VALUE_LEN, &klen, sizeof(klen) },
				      { CKA_LABEL, "nulldef-aes", 11 } };

		NC("EC keygen", F->C_GenerateKeyPair(w, &ecm, pt, 1, vt, 2,
						     &pub, &priv));
		nc_sign_verify(w, &ec, priv, pub, "generated EC key");
		NC("RSA keygen", F->C_GenerateKeyPair(w, &rsam, rt, 1, NULL, 0,
						      &pub, &priv));
		NC("AES keygen", F->C_GenerateKey(w, &aesm, at, 3, &k));
	}
	NC("finalize", F->C_Finalize(NULL));
	/* a new initialisation, a new context: the saved store reads back */
	NC("init 2", F->C_Initialize(NULL));
	NC("open 2", F->C_OpenSession(SLOT_W, CKF_SERIAL_SESSION, NULL, NULL,
				      &w));
	NC("login 2", F->C_Login(w, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	{
		CK_MECHANISM ec = { CKM_ECDSA_SHA256, NULL, 0 };

		nc_sign_verify(w, &ec, nc_one(w, CKO_PRIVATE_KEY, "nulldef"),
			       nc_one(w, CKO_PUBLIC_KEY, "nulldef"),
			       "saved EC key");
	}
	NC("finalize 2", F->C_Finalize(NULL));
	return 0;
}

/* The child runs before main(): cmocka plays no part in it. */
__attribute__((constructor)) static void null_default_main(void)
{
	if (getenv("WKS_TEST_NULL_DEFAULT"))
		_exit(null_default_child());
}

static void test_pkcs11__own_libctx(void **state)
{
	char path[4096];
	ssize_t n;
	pid_t pid;
	int st;

	(void)state;
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	assert_true(n > 0);
	path[n] = '\0';
	CK(F->C_Finalize(NULL));
	unsetenv("WKS_PKCS11_DEBUG");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("WKS_TEST_NULL_DEFAULT", "1", 1);
		setenv("OPENSSL_CONF", "/dev/null", 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	setenv("WKS_PKCS11_DEBUG", debug_log, 1);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("the module used the default library context "
			 "(child status 0x%x; its message above)", st);
	CK(F->C_Initialize(NULL));
}


/* ---- issue 29, items 4, 8 and 9: a reload never uses another entry's key
 * (its identity is its stored bytes), a deleted or replaced entry's key
 * is refused at the next operation init, and a chain certificate goes to
 * the key whose CKA_ID it was written with. -------------------------------- */

/* An operation init looks at the store file at most once a millisecond
 * (docs/PKCS11.md "Tokens"): what another program saved is seen by the
 * operation inits that start a millisecond or more later. */
static void past_check_window(void)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static uint64_t fixed_clock(void *ctx)
{
	(void)ctx;
	return 1700000000123ULL;
}

/* AES-256-ECB of one block with `key`, by OpenSSL. */
static void ecb_block(const uint8_t key[32], const uint8_t in[16],
		      uint8_t out[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l = 0;

	assert_non_null(c);
	assert_true(EVP_EncryptInit_ex(c, EVP_aes_256_ecb(), NULL, key, NULL));
	EVP_CIPHER_CTX_set_padding(c, 0);
	assert_true(EVP_EncryptUpdate(c, out, &l, in, 16));
	assert_int_equal(l, 16);
	EVP_CIPHER_CTX_free(c);
}

/* C_EncryptInit + C_Encrypt of one block: its CK_RV, `out` set on OK. */
static CK_RV module_ecb(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE k,
			const uint8_t in[16], uint8_t out[16])
{
	CK_MECHANISM m = { CKM_AES_ECB, NULL, 0 };
	CK_ULONG n = 16;
	CK_RV rv = F->C_EncryptInit(s, &m, k);

	if (rv != CKR_OK)
		return rv;
	rv = F->C_Encrypt(s, (CK_BYTE_PTR)in, 16, out, &n);
	assert_true(rv != CKR_OK || n == 16);
	return rv;
}

static void test_pkcs11__reload_secret_identity(void **state)
{
	uint8_t ka[32], kb[32], in[16] = "sixteen byte msg", out[16],
		want_a[16], want_b[16], da[32], db[32];
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE ha, h[4];
	wks_store *st;
	CK_RV rv;

	(void)state;
	assert_int_equal(RAND_bytes(ka, 32), 1);
	assert_int_equal(RAND_bytes(kb, 32), 1);
	ecb_block(ka, in, want_a);
	ecb_block(kb, in, want_b);
	/* two keys made in the same millisecond (a Java loop, a conversion
	 * that keeps the source's dates) */
	st = load_w(PIN);
	TU_OK(wks_store_set_wallclock(st, fixed_clock, NULL));
	TU_OK(wks_store_set_secret_key(st, "sa", "AES", ka, 32, PIN, PIN_LEN));
	TU_OK(wks_store_set_secret_key(st, "sb", "AES", kb, 32, PIN, PIN_LEN));
	TU_OK(wks_store_set_wallclock(st, NULL, NULL));
	{
		int64_t ta, tb;

		TU_OK(wks_store_creation_time(&ta, st, "sa"));
		TU_OK(wks_store_creation_time(&tb, st, "sb"));
		assert_true(ta == tb);
	}
	/* their identities differ (the internal call the module uses) */
	TU_OK(wks_store_entry_digest(da, st, "sa"));
	TU_OK(wks_store_entry_digest(db, st, "sb"));
	assert_memory_not_equal(da, db, 32);
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);

	s = user_session(SLOT_W, 0);
	ha = one(s, CKO_SECRET_KEY, "sa");
	CK(module_ecb(s, ha, in, out));
	assert_memory_equal(out, want_a, 16);
	/* another program deletes sa and renames sb to sa */
	st = load_w(PIN);
	TU_OK(wks_store_delete(st, "sa"));
	TU_OK(wks_store_rename(st, "sb", "sa"));
	/* a rename keeps the identity (the alias is not in the bytes) */
	TU_OK(wks_store_entry_digest(da, st, "sa"));
	assert_memory_equal(da, db, 32);
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);
	past_check_window();
	/* the old handle: refused, or b's key (never a's) */
	rv = module_ecb(s, ha, in, out);
	if (rv == CKR_OK)
		assert_memory_equal(out, want_b, 16);
	else
		assert_int_equal(rv, CKR_KEY_HANDLE_INVALID);
	/* looked up again: b's key under its new name */
	assert_int_equal(find_cls(s, CKO_SECRET_KEY, "sb", h, 4), 0);
	CK(module_ecb(s, one(s, CKO_SECRET_KEY, "sa"), in, out));
	assert_memory_equal(out, want_b, 16);
	CK(F->C_CloseSession(s));
}

/* A signature of `msg` by key object `k` (CKM_ECDSA_SHA256 or CKM_EDDSA)
 * verifies with `pub`. */
static void signs_with(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE k,
		       CK_MECHANISM_TYPE mt, EVP_PKEY *pub)
{
	CK_MECHANISM m = { mt, NULL, 0 };
	CK_ULONG sn;
	uint8_t *sig = sign1(s, &m, k, msg, MSG_LEN, &sn);

	if (mt == CKM_ECDSA_SHA256) {
		uint8_t hash[32];

		assert_non_null(SHA256(msg, MSG_LEN, hash));
		assert_true(ossl_ecdsa_verify(pub, hash, 32, sig, sn));
	} else {
		EVP_MD_CTX *md = EVP_MD_CTX_new();

		assert_int_equal(EVP_DigestVerifyInit(md, NULL, NULL, NULL,
						      pub), 1);
		assert_int_equal(EVP_DigestVerify(md, sig, sn, msg, MSG_LEN),
				 1);
		EVP_MD_CTX_free(md);
	}
	free(sig);
}

static void test_pkcs11__deleted_key_refused(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 0);
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	CK_BBOOL no = CK_FALSE;
	CK_ATTRIBUTE session_copy[] = { { CKA_TOKEN, &no, 1 } };
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "ec"), c, h[4];
	X509 *x = cert_of(s, "ec");
	EVP_PKEY *pub = X509_get0_pubkey(x);
	wks_store *st;

	(void)state;
	/* twice: the second C_SignInit takes the kept context */
	signs_with(s, k, CKM_ECDSA_SHA256, pub);
	signs_with(s, k, CKM_ECDSA_SHA256, pub);
	CK(F->C_CopyObject(s, k, session_copy, 1, &c));
	signs_with(s, c, CKM_ECDSA_SHA256, pub);
	/* another program (wks delete) deletes the entry */
	st = load_w(PIN);
	TU_OK(wks_store_delete(st, "ec"));
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);
	past_check_window();
	/* no search in between: the next operation init sees it */
	CKE(CKR_KEY_HANDLE_INVALID, F->C_SignInit(s, &m, k));
	CKE(CKR_KEY_HANDLE_INVALID, F->C_SignInit(s, &m, c));
	CKE(CKR_OBJECT_HANDLE_INVALID,
	    F->C_CopyObject(s, k, session_copy, 1, &c));
	assert_int_equal(find_cls(s, CKO_PRIVATE_KEY, "ec", h, 4), 0);
	/* the others still sign */
	signs_with(s, one(s, CKO_PRIVATE_KEY, "ed"), CKM_EDDSA, ed_key);
	X509_free(x);
	CK(F->C_CloseSession(s));
}

static void test_pkcs11__replaced_key_refused(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 0);
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	CK_MECHANISM me = { CKM_EDDSA, NULL, 0 };
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "ec"), ke, nk;
	X509 *x = cert_of(s, "ec"), *nx;
	EVP_PKEY *nkey = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	wks_store *st;
	uint8_t sig[64];
	CK_ULONG sn = sizeof(sig);

	(void)state;
	assert_non_null(nkey);
	signs_with(s, k, CKM_ECDSA_SHA256, X509_get0_pubkey(x));
	ke = one(s, CKO_PRIVATE_KEY, "ed");
	signs_with(s, ke, CKM_EDDSA, ed_key);
	/* wks import-key --force: "ec" gets a new key and certificate,
	 * "ed" its own key and certificate again, now with a password of
	 * its own (same certificate, new bytes) */
	nx = self_signed(nkey, "ec renewed");
	st = load_w(PIN);
	TU_OK(wks_store_set_pkey(st, "ec", nkey, &nx, 1, PIN, PIN_LEN));
	{
		X509 *old = NULL;

		TU_OK(wks_store_get_cert(&old, st, "ed", 0));
		TU_OK(wks_store_set_pkey(st, "ed", ed_key, &old, 1, KEYPW,
					 KEYPW_LEN));
		X509_free(old);
	}
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);
	past_check_window();
	/* the old handles are refused at the next operation init */
	CKE(CKR_KEY_HANDLE_INVALID, F->C_SignInit(s, &m, k));
	CKE(CKR_KEY_HANDLE_INVALID, F->C_SignInit(s, &me, ke));
	/* looked up again: new handles, the new keys */
	nk = one(s, CKO_PRIVATE_KEY, "ec");
	assert_true(nk != k);
	signs_with(s, nk, CKM_ECDSA_SHA256, nkey);
	nk = one(s, CKO_PRIVATE_KEY, "ed");
	assert_true(nk != ke);
	/* which now asks for its password */
	CK(F->C_SignInit(s, &me, nk));
	CKE(CKR_USER_NOT_LOGGED_IN, F->C_Sign(s, msg, MSG_LEN, sig, &sn));
	CK(F->C_SignInit(s, &me, nk));
	CK(F->C_Login(s, CKU_CONTEXT_SPECIFIC, (CK_UTF8CHAR_PTR)KEYPW,
		      KEYPW_LEN));
	sn = sizeof(sig);
	CK(F->C_Sign(s, msg, MSG_LEN, sig, &sn));
	{
		EVP_MD_CTX *md = EVP_MD_CTX_new();

		assert_int_equal(EVP_DigestVerifyInit(md, NULL, NULL, NULL,
						      ed_key), 1);
		assert_int_equal(EVP_DigestVerify(md, sig, sn, msg, MSG_LEN),
				 1);
		EVP_MD_CTX_free(md);
	}
	X509_free(x);
	X509_free(nx);
	EVP_PKEY_free(nkey);
	CK(F->C_CloseSession(s));
}

/* The module's own rewrites of an entry with the same key (C_SetPIN, a
 * chain certificate: test_pkcs11__chain_shared_intermediate) keep its
 * key objects' handles and the decrypted keys, though the entry's bytes
 * changed. */
static void test_pkcs11__own_edits_keep_handles(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1);
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "ec");
	CK_OBJECT_HANDLE pk = one(s, CKO_PUBLIC_KEY, "ec");
	CK_OBJECT_HANDLE a = one(s, CKO_SECRET_KEY, "aes");
	CK_OBJECT_HANDLE o = one(s, CKO_PRIVATE_KEY, "other");
	X509 *x = cert_of(s, "ec");
	uint8_t in[16] = "sixteen byte msg", out[16], want[16];

	(void)state;
	ecb_block(aes_key, in, want);
	signs_with(s, k, CKM_ECDSA_SHA256, X509_get0_pubkey(x));
	CK(F->C_SetPIN(s, (CK_UTF8CHAR_PTR)PIN, PIN_LEN,
		       (CK_UTF8CHAR_PTR) "new pin", 7));
	/* every key with the store's password was written again */
	assert_int_equal(one(s, CKO_PRIVATE_KEY, "ec"), k);
	assert_int_equal(one(s, CKO_PUBLIC_KEY, "ec"), pk);
	assert_int_equal(one(s, CKO_SECRET_KEY, "aes"), a);
	/* a key with a password of its own was not */
	assert_int_equal(one(s, CKO_PRIVATE_KEY, "other"), o);
	signs_with(s, k, CKM_ECDSA_SHA256, X509_get0_pubkey(x));
	CK(module_ecb(s, a, in, out));
	assert_memory_equal(out, want, 16);
	/* a new CKA_ID (its self-signed certificate re-issued), then a new
	 * label and CKA_ID in one call, on the same handle (as SunPKCS11's
	 * KeyStore does) */
	{
		CK_OBJECT_HANDLE e = one(s, CKO_PRIVATE_KEY, "ed");
		uint8_t id1[] = { 1, 2, 3 }, id2[] = { 4, 5, 6 };
		CK_ATTRIBUTE t1[] = { { CKA_ID, id1, 3 } };
		CK_ATTRIBUTE t2[] = { { CKA_LABEL, "ed-renamed", 10 },
				      { CKA_ID, id2, 3 } };

		CK(F->C_SetAttributeValue(s, e, t1, 1));
		assert_int_equal(one(s, CKO_PRIVATE_KEY, "ed"), e);
		CK(F->C_SetAttributeValue(s, e, t2, 2));
		assert_int_equal(one(s, CKO_PRIVATE_KEY, "ed-renamed"), e);
		signs_with(s, e, CKM_EDDSA, ed_key);
	}
	X509_free(x);
	CK(F->C_CloseSession(s));
}

/* A certificate of `key` named `cn`, issued by `ik` (`ix`'s subject; NULL:
 * self-signed), a CA if `ca`. */
static X509 *issue(EVP_PKEY *key, const char *cn, EVP_PKEY *ik, X509 *ix,
		   int ca)
{
	X509 *x = X509_new();
	X509V3_CTX v3;
	X509_EXTENSION *e;
	static long serial = 100;

	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 30);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN",
				   MBSTRING_ASC, (const unsigned char *)cn, -1,
				   -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(ix ? ix : x));
	X509V3_set_ctx(&v3, ix ? ix : x, x, NULL, NULL, 0);
	assert_non_null(e = X509V3_EXT_conf_nid(NULL, &v3,
						NID_basic_constraints,
						ca ? "critical,CA:TRUE"
						   : "CA:FALSE"));
	X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	assert_non_null(e = X509V3_EXT_conf_nid(NULL, &v3,
						NID_subject_key_identifier,
						"hash"));
	X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	assert_true(X509_sign(x, ik ? ik : key, EVP_sha256()) > 0);
	return x;
}

static void test_pkcs11__chain_shared_intermediate(void **state)
{
	EVP_PKEY *rk = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_PKEY *ik = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_PKEY *k1 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_PKEY *k2 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *root, *inter, *l1, *l2, *chain[3];
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE h, k2h, hs[4];
	CK_OBJECT_CLASS cc = CKO_CERTIFICATE;
	CK_CERTIFICATE_TYPE ct = CKC_X_509;
	CK_BBOOL yes = CK_TRUE;
	unsigned char *der = NULL;
	uint8_t *id, *lab;
	CK_ULONG id_len, lab_len;
	size_t n;
	int dl;
	wks_store *st;

	(void)state;
	assert_true(rk && ik && k1 && k2);
	root = issue(rk, "Company Root", NULL, NULL, 1);
	inter = issue(ik, "Company Intermediate", rk, root, 1);
	l1 = issue(k1, "one.example", ik, inter, 0);
	l2 = issue(k2, "two.example", ik, inter, 0);
	/* k1 holds the company intermediate already; k2 is a new key with
	 * its CA-issued leaf alone */
	st = load_w(PIN);
	chain[0] = l1;
	chain[1] = inter;
	TU_OK(wks_store_set_pkey(st, "k1", k1, chain, 2, PIN, PIN_LEN));
	TU_OK(wks_store_set_pkey(st, "k2", k2, &l2, 1, PIN, PIN_LEN));
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);

	s = user_session(SLOT_W, 1);
	k2h = one(s, CKO_PRIVATE_KEY, "k2");
	id = attr(s, k2h, CKA_ID, &id_len);
	/* pkcs11-tool --write-object inter.der --type cert --id <k2's> */
	assert_true((dl = i2d_X509(inter, &der)) > 0);
	{
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &cc, sizeof(cc) },
			{ CKA_CERTIFICATE_TYPE, &ct, sizeof(ct) },
			{ CKA_TOKEN, &yes, 1 },
			{ CKA_ID, id, id_len },
			{ CKA_VALUE, der, (CK_ULONG)dl },
		};

		CK(F->C_CreateObject(s, t, 5, &h));
	}
	/* k2's key is the same object still (its entry was written again
	 * with the same key) */
	assert_int_equal(one(s, CKO_PRIVATE_KEY, "k2"), k2h);
	signs_with(s, k2h, CKM_ECDSA_SHA256, k2);
	/* the object answered is k2's chain certificate */
	lab = attr(s, h, CKA_LABEL, &lab_len);
	assert_int_equal(lab_len, 4);
	assert_memory_equal(lab, "k2/1", 4);
	free(lab);
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "k2/1", hs, 4), 1);
	/* in the store: k2's chain is 2 long, k1's unchanged */
	st = load_w(PIN);
	TU_OK(wks_store_cert_count(&n, st, "k2"));
	assert_int_equal(n, 2);
	{
		X509 *got = NULL;

		TU_OK(wks_store_get_cert(&got, st, "k2", 1));
		assert_int_equal(X509_cmp(got, inter), 0);
		X509_free(got);
	}
	TU_OK(wks_store_cert_count(&n, st, "k1"));
	assert_int_equal(n, 2);
	wks_store_free(st);
	/* writing it again: already there, nothing changes */
	{
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &cc, sizeof(cc) },
			{ CKA_CERTIFICATE_TYPE, &ct, sizeof(ct) },
			{ CKA_TOKEN, &yes, 1 },
			{ CKA_ID, id, id_len },
			{ CKA_VALUE, der, (CK_ULONG)dl },
		};
		CK_OBJECT_HANDLE h2;

		CK(F->C_CreateObject(s, t, 5, &h2));
		assert_int_equal(h2, hs[0]);
	}
	st = load_w(PIN);
	TU_OK(wks_store_cert_count(&n, st, "k2"));
	assert_int_equal(n, 2);
	wks_store_free(st);
	/* the root with k2's CKA_ID: the chain grows again */
	OPENSSL_free(der);
	der = NULL;
	assert_true((dl = i2d_X509(root, &der)) > 0);
	{
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &cc, sizeof(cc) },
			{ CKA_CERTIFICATE_TYPE, &ct, sizeof(ct) },
			{ CKA_TOKEN, &yes, 1 },
			{ CKA_ID, id, id_len },
			{ CKA_VALUE, der, (CK_ULONG)dl },
		};

		CK(F->C_CreateObject(s, t, 5, &h));
	}
	st = load_w(PIN);
	TU_OK(wks_store_cert_count(&n, st, "k2"));
	assert_int_equal(n, 3);
	TU_OK(wks_store_cert_count(&n, st, "k1"));
	assert_int_equal(n, 2);
	wks_store_free(st);
	OPENSSL_free(der);
	free(id);
	CK(F->C_CloseSession(s));
	X509_free(root);
	X509_free(inter);
	X509_free(l1);
	X509_free(l2);
	EVP_PKEY_free(rk);
	EVP_PKEY_free(ik);
	EVP_PKEY_free(k1);
	EVP_PKEY_free(k2);
}

/* C_Initialize with `text` as the configuration file (dir/diag.conf):
 * its CK_RV, and in err what it printed on standard error. */
static CK_RV init_with(const char *text, char *err, size_t cap)
{
	char path[700], errpath[700];
	int fd, saved;
	ssize_t n;
	CK_RV rv;

	snprintf(path, sizeof(path), "%s/diag.conf", dir);
	tu_write_file(path, (const uint8_t *)text, strlen(text));
	setenv("WKS_PKCS11_CONF", path, 1);
	snprintf(errpath, sizeof(errpath), "%s/diag-stderr.txt", dir);
	fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	rv = F->C_Initialize(NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, err, cap - 1, 0);
	close(fd);
	err[n > 0 ? n : 0] = '\0';
	setenv("WKS_PKCS11_CONF", conf, 1);
	return rv;
}

static void has_text(const char *in, const char *text)
{
	if (!strstr(in, text))
		fail_msg("\"%s\" lacks \"%s\"", in, text);
}

/* Item 12: a store that does not exist is named on standard error (once
 * per process) and in the debug log, with what C_InitToken would do;
 * C_Login's CKR_USER_PIN_NOT_INITIALIZED names it in the log. */
static void test_pkcs11__missing_store(void **state)
{
	char store[700], text[256], err[4096], want[1400];
	CK_TOKEN_INFO ti;
	CK_SESSION_HANDLE s;
	CK_UTF8CHAR label[32];

	(void)state;
	CK(F->C_Finalize(NULL));
	snprintf(store, sizeof(store), "%s/web-typo.wks", dir);
	snprintf(text, sizeof(text),
		 "[token]\nlabel = web\nstore = web-typo.wks\n"
		 "wolfjce.wks.iterationCount = 10000\n");
	log_clear();
	CK(init_with(text, err, sizeof(err)));
	snprintf(want, sizeof(want), "libwks-pkcs11: token \"web\": no store "
		 "%s (No such file or directory): the token is not "
		 "initialised, and C_InitToken would create the store there",
		 store);
	has_text(err, want);
	assert_true(log_has(want + strlen("libwks-pkcs11: ")));
	CK(F->C_GetTokenInfo(0, &ti));
	assert_false(ti.flags & CKF_TOKEN_INITIALIZED);
	s = open_session(0, 1);
	CKE(CKR_USER_PIN_NOT_INITIALIZED,
	    F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	snprintf(want, sizeof(want), "C_Login: no store %s", store);
	assert_true(log_has(want));
	CK(F->C_CloseSession(s));
	/* C_InitToken makes it, and says where */
	memset(label, ' ', sizeof(label));
	CK(F->C_InitToken(0, (CK_UTF8CHAR_PTR)PIN, PIN_LEN, label));
	snprintf(want, sizeof(want), "created the store %s", store);
	assert_true(log_has(want));
	CK(F->C_Finalize(NULL));
	/* once per process on standard error, in the log every time */
	assert_int_equal(unlink(store), 0);
	log_clear();
	CK(init_with(text, err, sizeof(err)));
	assert_null(strstr(err, "no store"));
	snprintf(want, sizeof(want), "no store %s", store);
	assert_true(log_has(want));
	CK(F->C_Finalize(NULL));
	CK(F->C_Initialize(NULL));
}

/* Item 18: one store named two ways is one token: a second name of it
 * (another spelling, a symbolic or a hard link; for a store not made
 * yet, the same canonical path) is a configuration error. */
static void test_pkcs11__same_store(void **state)
{
	static const char *const second[] = {
		"./main.wks", "sub/../main.wks", "main-sym.wks", "main-hard.wks",
	};
	char path[700], text[512], err[4096];
	CK_ULONG n;

	(void)state;
	CK(F->C_Finalize(NULL));
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/main-sym.wks", dir);
	assert_int_equal(symlink(main_store, path), 0);
	snprintf(path, sizeof(path), "%s/main-hard.wks", dir);
	assert_int_equal(link(main_store, path), 0);
	for (size_t i = 0; i < sizeof(second) / sizeof(second[0]); i++) {
		snprintf(text, sizeof(text),
			 "[token]\nlabel = a\nstore = main.wks\n\n"
			 "[token]\nlabel = b\nstore = %s\n", second[i]);
		CKE(CKR_GENERAL_ERROR, init_with(text, err, sizeof(err)));
		has_text(err, "the token at line 5: store ");
		has_text(err, second[i]);
		has_text(err, "is the same file as the store of the token at "
			 "line 1");
		CKE(CKR_CRYPTOKI_NOT_INITIALIZED, F->C_GetSlotList(0, NULL, &n));
	}
	/* two names of a store not made yet */
	CKE(CKR_GENERAL_ERROR,
	    init_with("[token]\nlabel = a\nstore = later.wks\n\n[token]\n"
		      "label = b\nstore = sub/../later.wks\n", err,
		      sizeof(err)));
	has_text(err, "is the same file as the store of the token at line 1");
	/* two stores */
	CK(init_with("[token]\nlabel = a\nstore = main.wks\n\n[token]\n"
		     "label = b\nstore = sub/main.wks\n", err, sizeof(err)));
	CK(F->C_GetSlotList(0, NULL, &n));
	assert_int_equal(n, 2);
	CK(F->C_Finalize(NULL));
	snprintf(path, sizeof(path), "%s/main-sym.wks", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/main-hard.wks", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sub", dir);
	rmdir(path);
	CK(F->C_Initialize(NULL));
}

/* Item 19: a relative WKS_PKCS11_CONF is refused, even where it names a
 * file (a program that changed its folder would read another one). */
static void test_pkcs11__relative_conf(void **state)
{
	char cwd[4096];

	(void)state;
	CK(F->C_Finalize(NULL));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	setenv("WKS_PKCS11_CONF", "wks-pkcs11.conf", 1);
	expect_init_error("WKS_PKCS11_CONF=wks-pkcs11.conf: not an absolute "
			  "path");
	setenv("WKS_PKCS11_CONF", "./wks-pkcs11.conf", 1);
	expect_init_error("not an absolute path");
	/* the value is shown without its control characters */
	setenv("WKS_PKCS11_CONF", "x\x1b[2J.conf", 1);
	expect_init_error("WKS_PKCS11_CONF=x?[2J.conf: not an absolute path");
	assert_int_equal(chdir(cwd), 0);
	setenv("WKS_PKCS11_CONF", conf, 1);
	CK(F->C_Initialize(NULL));
}

/* Item 14: a key with a password of its own is named in the debug log,
 * with the fix (wks keypasswd), when an operation needs its password
 * and when the store's PIN is given for it. */
static void test_pkcs11__own_key_password_log(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "other");
	CK_MECHANISM m = { CKM_ECDSA_SHA256, NULL, 0 };
	char want[900];

	(void)state;
	log_clear();
	CK(F->C_SignInit(s, &m, k));
	assert_true(log_has("key \"other\" of token \"main\" has a password "
			    "of its own, not the store's"));
	snprintf(want, sizeof(want), "wks keypasswd -k %s -a other --keypass "
		 "KEY-PASSWORD --new-keypass STORE-PASSWORD", main_store);
	assert_true(log_has(want));
	log_clear();
	CKE(CKR_PIN_INCORRECT, F->C_Login(s, CKU_CONTEXT_SPECIFIC,
					  (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	assert_true(log_has("key \"other\": C_Login(CKU_CONTEXT_SPECIFIC): "
			    "not the key's password"));
	assert_true(log_has("wks keypasswd"));
	/* the key's own password still works */
	CK(F->C_Login(s, CKU_CONTEXT_SPECIFIC, (CK_UTF8CHAR_PTR)KEYPW,
		      KEYPW_LEN));
}

/* Item 13: stores this process cannot read or write, as another user
 * (nobody, when run as root: the files are in a world-readable folder of
 * /tmp) or by their modes.  An unreadable store is named on standard
 * error with the errno text and is no empty token (C_FindObjectsInit
 * fails); a store whose file or folder cannot be written is
 * CKF_WRITE_PROTECTED and every write is refused with
 * CKR_TOKEN_WRITE_PROTECTED before any work. */
#include <grp.h>
#include <pwd.h>

static char nd[256]; /* the folder */
static int nd_foreign; /* slot 4's store belongs to another user */

#define UC(what, want, call) do { \
	CK_RV rv_ = (call); \
	if (rv_ != (CK_RV)(want)) { \
		printf("unusable-stores child: %s: %s: 0x%lx, want 0x%lx\n", \
		       what, #call, (unsigned long)rv_, \
		       (unsigned long)(want)); \
		_exit(1); \
	} \
} while (0)

static void unusable_child(void)
{
	uint8_t p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03,
			   0x01, 0x07 };
	CK_BBOOL yes = CK_TRUE;
	CK_ULONG klen = 16, n;
	CK_MECHANISM ecm = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_MECHANISM aesm = { CKM_AES_KEY_GEN, NULL, 0 };
	CK_MECHANISM sig = { CKM_ECDSA_SHA256, NULL, 0 };
	CK_ATTRIBUTE pt[] = { { CKA_EC_PARAMS, p256, sizeof(p256) } };
	CK_ATTRIBUTE vt[] = { { CKA_TOKEN, &yes, 1 } };
	CK_ATTRIBUTE at[] = { { CKA_TOKEN, &yes, 1 },
			      { CKA_VALUE_LEN, &klen, sizeof(klen) } };
	CK_OBJECT_HANDLE pub, priv, k, h[4];
	CK_TOKEN_INFO ti;
	CK_SESSION_HANDLE s;
	char path[512], err[4096], want[600];
	uint8_t out[128];
	int fd;
	ssize_t got;

	setvbuf(stdout, NULL, _IONBF, 0); /* the child ends with _exit() */
	snprintf(path, sizeof(path), "%s/stderr.txt", nd);
	if ((fd = open(path, O_RDWR | O_TRUNC)) < 0) {
		printf("unusable-stores child: %s: %s\n", path,
		       strerror(errno));
		_exit(1);
	}
	fflush(stderr);
	dup2(fd, 2);
	UC("init", CKR_OK, F->C_Initialize(NULL));
	fflush(stderr);
	got = pread(fd, err, sizeof(err) - 1, 0);
	err[got > 0 ? got : 0] = '\0';
	snprintf(want, sizeof(want), "libwks-pkcs11: token \"unread\": store "
		 "%s/unread.wks cannot be read: Permission denied", nd);
	if (!strstr(err, want)) {
		printf("unusable-stores child: stderr \"%s\" lacks \"%s\"\n",
		       err, want);
		_exit(1);
	}
	/* unreadable: initialised (the file is there), no empty token */
	UC("unread", CKR_OK, F->C_GetTokenInfo(0, &ti));
	if (!(ti.flags & CKF_TOKEN_INITIALIZED)) {
		printf("unusable-stores child: unreadable store not "
		       "initialised\n");
		_exit(1);
	}
	UC("unread", CKR_OK, F->C_OpenSession(0, CKF_SERIAL_SESSION, NULL,
					       NULL, &s));
	UC("unread", CKR_DEVICE_ERROR, F->C_FindObjectsInit(s, NULL, 0));
	UC("unread", CKR_DEVICE_ERROR,
	   F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	/* the folder, then the file, cannot be written */
	for (CK_SLOT_ID slot = 1; slot <= 2; slot++) {
		const char *what = slot == 1 ? "folder" : "file";

		UC(what, CKR_OK, F->C_GetTokenInfo(slot, &ti));
		if (!(ti.flags & CKF_WRITE_PROTECTED)) {
			printf("unusable-stores child: %s: not "
			       "CKF_WRITE_PROTECTED\n", what);
			_exit(1);
		}
		UC(what, CKR_OK, F->C_OpenSession(slot, CKF_SERIAL_SESSION |
						  CKF_RW_SESSION, NULL, NULL,
						  &s));
		UC(what, CKR_OK, F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN,
					    PIN_LEN));
		UC(what, CKR_TOKEN_WRITE_PROTECTED,
		   F->C_GenerateKeyPair(s, &ecm, pt, 1, vt, 1, &pub, &priv));
		UC(what, CKR_TOKEN_WRITE_PROTECTED,
		   F->C_GenerateKey(s, &aesm, at, 2, &k));
		UC(what, CKR_TOKEN_WRITE_PROTECTED,
		   F->C_SetPIN(s, (CK_UTF8CHAR_PTR)PIN, PIN_LEN,
			       (CK_UTF8CHAR_PTR)"other", 5));
		{
			CK_OBJECT_CLASS cc = CKO_CERTIFICATE;
			CK_ATTRIBUTE t[] = { { CKA_CLASS, &cc, sizeof(cc) },
					     { CKA_LABEL, "ca", 2 } };

			UC(what, CKR_OK, F->C_FindObjectsInit(s, t, 2));
			UC(what, CKR_OK, F->C_FindObjects(s, h, 4, &n));
			UC(what, CKR_OK, F->C_FindObjectsFinal(s));
			if (n != 1) {
				printf("unusable-stores child: no ca\n");
				_exit(1);
			}
			UC(what, CKR_TOKEN_WRITE_PROTECTED,
			   F->C_DestroyObject(s, h[0]));
		}
		/* what needs no write works */
		{
			CK_OBJECT_CLASS pc = CKO_PRIVATE_KEY;
			CK_ATTRIBUTE t[] = { { CKA_CLASS, &pc, sizeof(pc) },
					     { CKA_LABEL, "ec", 2 } };

			n = sizeof(out);
			UC(what, CKR_OK, F->C_FindObjectsInit(s, t, 2));
			UC(what, CKR_OK, F->C_FindObjects(s, h, 4, &n));
			UC(what, CKR_OK, F->C_FindObjectsFinal(s));
			n = sizeof(out);
			UC(what, CKR_OK, F->C_SignInit(s, &sig, h[0]));
			UC(what, CKR_OK, F->C_Sign(s, msg, MSG_LEN, out, &n));
		}
		UC(what, CKR_OK, F->C_CloseSession(s));
	}
	/* a store it may write, beside them */
	UC("writable", CKR_OK, F->C_GetTokenInfo(3, &ti));
	if (ti.flags & CKF_WRITE_PROTECTED) {
		printf("unusable-stores child: writable store protected\n");
		_exit(1);
	}
	UC("writable", CKR_OK, F->C_OpenSession(3, CKF_SERIAL_SESSION |
						CKF_RW_SESSION, NULL, NULL,
						&s));
	UC("writable", CKR_OK, F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN,
					  PIN_LEN));
	UC("writable", CKR_OK, F->C_GenerateKey(s, &aesm, at, 2, &k));
	/* a store of another user, in a folder it may write: a save could
	 * not keep the file's owner */
	if (nd_foreign) {
		UC("foreign", CKR_OK, F->C_GetTokenInfo(4, &ti));
		if (!(ti.flags & CKF_WRITE_PROTECTED)) {
			printf("unusable-stores child: another user's store "
			       "not CKF_WRITE_PROTECTED\n");
			_exit(1);
		}
		UC("foreign", CKR_OK, F->C_OpenSession(4, CKF_SERIAL_SESSION |
						       CKF_RW_SESSION, NULL,
						       NULL, &s));
		UC("foreign", CKR_OK, F->C_Login(s, CKU_USER,
						 (CK_UTF8CHAR_PTR)PIN,
						 PIN_LEN));
		UC("foreign", CKR_TOKEN_WRITE_PROTECTED,
		   F->C_GenerateKey(s, &aesm, at, 2, &k));
	}
	UC("finalize", CKR_OK, F->C_Finalize(NULL));
	_exit(0);
}

static void nd_file(const char *name, mode_t mode)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", nd, name);
	copy_file(main_store, path);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_pkcs11__unusable_stores(void **state)
{
	char path[512], text[2048];
	pid_t pid;
	int st;

	(void)state;
	CK(F->C_Finalize(NULL));
	snprintf(nd, sizeof(nd), "/tmp/wks-p11-unusable-XXXXXX");
	assert_non_null(mkdtemp(nd));
	assert_int_equal(chmod(nd, 0755), 0);
	snprintf(path, sizeof(path), "%s/rodir", nd);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/okdir", nd);
	assert_int_equal(mkdir(path, 0777), 0);
	assert_int_equal(chmod(path, 0777), 0);
	nd_file("unread.wks", 0000);
	nd_file("rodir/ro.wks", 0644);
	nd_file("rofile.wks", 0444);
	nd_file("okdir/ok.wks", 0600);
	nd_file("okdir/foreign.wks", 0666);
	/* as root the child is nobody: its own store is nobody's, and
	 * root's is another user's (without root no file can be made
	 * another user's: that check needs root) */
	nd_foreign = geteuid() == 0;
	if (nd_foreign) {
		struct passwd *pw = getpwnam("nobody");

		assert_non_null(pw);
		snprintf(path, sizeof(path), "%s/okdir/ok.wks", nd);
		assert_int_equal(chown(path, pw->pw_uid, pw->pw_gid), 0);
		snprintf(path, sizeof(path), "%s/rodir/ro.wks", nd);
		assert_int_equal(chown(path, pw->pw_uid, pw->pw_gid), 0);
	}
	snprintf(path, sizeof(path), "%s/rodir", nd);
	assert_int_equal(chmod(path, 0555), 0);
	snprintf(text, sizeof(text),
		 "[token]\nlabel = unread\nstore = %s/unread.wks\n"
		 "[token]\nlabel = rodir\nstore = %s/rodir/ro.wks\n"
		 "[token]\nlabel = rofile\nstore = %s/rofile.wks\n"
		 "[token]\nlabel = ok\nstore = %s/okdir/ok.wks\n"
		 "wolfjce.wks.iterationCount = 10000\n"
		 "[token]\nlabel = foreign\nstore = %s/okdir/foreign.wks\n",
		 nd, nd, nd, nd, nd);
	snprintf(path, sizeof(path), "%s/p11.conf", nd);
	tu_write_file(path, (const uint8_t *)text, strlen(text));
	assert_int_equal(chmod(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/stderr.txt", nd);
	tu_write_file(path, (const uint8_t *)"", 0);
	assert_int_equal(chmod(path, 0666), 0);
	snprintf(path, sizeof(path), "%s/p11.conf", nd);
	setenv("WKS_PKCS11_CONF", path, 1);
	log_clear();
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0) {
			/* root reads and writes everything: play nobody */
			struct passwd *pw = getpwnam("nobody");

			if (!pw || setgroups(0, NULL) != 0 ||
			    setgid(pw->pw_gid) != 0 ||
			    setuid(pw->pw_uid) != 0) {
				printf("unusable-stores child: cannot become "
				       "nobody: %s\n", strerror(errno));
				_exit(1);
			}
		}
		unusable_child();
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	setenv("WKS_PKCS11_CONF", conf, 1);
	snprintf(path, sizeof(path), "%s/rodir", nd);
	chmod(path, 0755);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		tu_rmtree(nd);
		fail_msg("child status 0x%x (its message above)", st);
	}
	assert_true(log_has("write-protected: the folder of"));
	snprintf(path, sizeof(path), "token \"rofile\": write-protected: "
		 "%s/rofile.wks: Permission denied", nd);
	assert_true(log_has(path));
	if (nd_foreign)
		assert_true(log_has("foreign.wks belongs to another user"));
	tu_rmtree(nd);
	CK(F->C_Initialize(NULL));
}

/* ---- issue 29, items 2, 3, 5 and 17: the shared login ends --------------
 * (share.c, docs/PKCS11.md "Shared login"): a C_Logout anywhere wins over
 * a later edit by a process that took the login over; no record outlives
 * the TTL of its C_Login; nothing is shared where the real and effective
 * ids differ; the TTL is bounded; wks-pkcs11-logout ends a login from
 * the shell. */

/* A kernel keyring is usable here (else: SKIP, said). */
static int keyring_usable(void)
{
	long id = syscall(SYS_add_key, "user", "libwks-test-probe", "x",
			  (size_t)1, KEY_SPEC_USER_KEYRING);

	if (id < 0) {
		print_message("SKIP: no kernel keyring here (%s)\n",
			      strerror(errno));
		return 0;
	}
	syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
	return 1;
}

/* share_init with the configuration's TTL lines given (`ttl`: e.g.
 * "kek-cache-ttl = 50\n"); C_Initialize's result returned. */
static CK_RV share_conf(const char *store, const char *ttl, CK_SLOT_ID *slot,
			char serial[17])
{
	FILE *f = fopen(conf, "w");
	CK_SLOT_ID sl[4];
	CK_ULONG n = 4;
	CK_TOKEN_INFO ti;
	CK_RV rv;

	assert_non_null(f);
	fprintf(f, "[token]\nlabel = sh\nstore = %s\n%sshared-login = yes\n"
		"wolfjce.wks.iterationCount = 10000\n", store, ttl);
	fclose(f);
	F->C_Finalize(NULL);
	if ((rv = F->C_Initialize(NULL)) != CKR_OK)
		return rv;
	CK(F->C_GetSlotList(CK_TRUE, sl, &n));
	assert_int_equal(n, 1);
	*slot = sl[0];
	CK(F->C_GetTokenInfo(sl[0], &ti));
	memcpy(serial, ti.serialNumber, 16);
	serial[16] = '\0';
	return CKR_OK;
}

/* Rename the secret key labelled `from` to `to` through session s (an
 * edit the module saves); the CK_RV, without cmocka (children call it). */
static CK_RV rename_secret(CK_SESSION_HANDLE s, const char *from,
			   const char *to)
{
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_ATTRIBUTE t[] = { { CKA_CLASS, &cls, sizeof(cls) },
			     { CKA_LABEL, (void *)from, strlen(from) } };
	CK_ATTRIBUTE a = { CKA_LABEL, (void *)to, strlen(to) };
	CK_OBJECT_HANDLE h;
	CK_ULONG got = 0;
	CK_RV rv;

	if ((rv = F->C_FindObjectsInit(s, t, 2)) != CKR_OK)
		return rv;
	rv = F->C_FindObjects(s, &h, 1, &got);
	F->C_FindObjectsFinal(s);
	if (rv != CKR_OK || got != 1)
		return rv != CKR_OK ? rv : CKR_GENERAL_ERROR;
	return F->C_SetAttributeValue(s, h, &a, 1);
}

/* The keyring's timeout of key `id` as /proc/keys shows it, in seconds:
 * -1 if permanent, -2 if not listed or not in seconds. */
static long key_timeout(long id)
{
	FILE *f = fopen("/proc/keys", "r");
	char line[512], want[16], tmo[32];
	long v = -2;

	assert_non_null(f);
	snprintf(want, sizeof(want), "%08lx ", (unsigned long)id);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, want, 9) == 0 &&
		    sscanf(line, "%*s %*s %*s %31s", tmo) == 1) {
			size_t n = strlen(tmo);

			if (strcmp(tmo, "perm") == 0)
				v = -1;
			else if (n > 1 && tmo[n - 1] == 's')
				v = strtol(tmo, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The token's record, decoded: its deadline. */
static int64_t record_deadline(const char *serial)
{
	long id = share_key(serial), n;
	static uint8_t buf[W11_SHARE_MAX];
	w11_share_rec r;

	assert_true(id >= 0);
	n = syscall(SYS_keyctl, KEYCTL_READ, id, buf, sizeof(buf));
	assert_true(n > 0);
	if (w11_share_decode(&r, buf, (size_t)n) != 0)
		fail_msg("the keyring holds no record of this version");
	return r.deadline;
}

/* A fresh module instance in a child process that took the login over;
 * it tells the parent (ready: '1' if logged in by the keyring), waits for
 * its go, then renames "hmac" (an edit the module saves and publishes). */
static int adopter_child(int go, int ready)
{
	CK_SLOT_ID sl[2];
	CK_ULONG n = 2;
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO si;
	char c;

	F->C_Finalize(NULL);
	if (F->C_Initialize(NULL) != CKR_OK ||
	    F->C_GetSlotList(CK_TRUE, sl, &n) != CKR_OK || n != 1)
		return 2;
	if (F->C_OpenSession(sl[0], CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL,
			     NULL, &s) != CKR_OK ||
	    F->C_GetSessionInfo(s, &si) != CKR_OK)
		return 3;
	c = si.state == CKS_RW_USER_FUNCTIONS ? '1' : '0';
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		return 4;
	if (rename_secret(s, "hmac", "hmac-child") != CKR_OK)
		return 5;
	F->C_Finalize(NULL);
	return 0;
}

/* Item 2: a C_Logout wins over a later edit of a process that took the
 * login over earlier (on a40a0af its edit published the login again, with
 * a new full timeout, and the next process was logged in). */
static void test_pkcs11__share_logout_wins(void **state)
{
	char store[700], serial[17], c = 0;
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	int go[2], ready[2], st;
	pid_t pid;

	(void)state;
	if (!keyring_usable())
		skip();
	snprintf(store, sizeof(store), "%s/logout-wins.wks", dir);
	copy_file(main_store, store);
	CK(share_conf(store, "kek-cache-ttl = 60\n", &slot, serial));
	s = user_session(slot, 0);
	assert_true(share_key(serial) >= 0);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(adopter_child(go[0], ready[1]));
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(c, '1');
	/* the user logs out, then the other process saves an edit */
	CK(F->C_Logout(s));
	assert_true(share_key(serial) < 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	st = tu_reap_bounded(pid, 60000);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(go[0]), close(go[1]), close(ready[0]), close(ready[1]);
	/* nothing was published again: a new process is not logged in */
	assert_true(share_key(serial) < 0);
	CK(share_conf(store, "kek-cache-ttl = 60\n", &slot, serial));
	s = open_session(slot, 0);
	assert_int_equal(state_of(s), CKS_RO_PUBLIC_SESSION);
	/* and the edit was saved (the store has the new name) */
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	(void)one(s, CKO_SECRET_KEY, "hmac-child");
	CK(F->C_Logout(s));
	assert_true(share_key(serial) < 0);
}

/* Item 2: a record never lives past the TTL of the C_Login that made it:
 * edits (by the process that logged in, then by one that took the login
 * over) publish it again with the same deadline and the time left. */
static void test_pkcs11__share_deadline_kept(void **state)
{
	char store[700], serial[17];
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	time_t t0, t1;
	int64_t dl;
	long tmo;

	(void)state;
	if (!keyring_usable())
		skip();
	snprintf(store, sizeof(store), "%s/deadline.wks", dir);
	copy_file(main_store, store);
	CK(share_conf(store, "kek-cache-ttl = 50\n", &slot, serial));
	t0 = time(NULL);
	s = user_session(slot, 1);
	t1 = time(NULL);
	tmo = key_timeout(share_key(serial));
	assert_true(tmo >= 48 && tmo <= 50);
	sleep(2);
	/* the process that logged in saves an edit */
	CK(rename_secret(s, "hmac", "hmac-a"));
	tmo = key_timeout(share_key(serial));
	if (tmo < 0 || tmo > 48)
		fail_msg("the record's timeout after the edit: %ld s (the "
			 "login's TTL is 50 s, 2 s ago)", tmo);
	dl = record_deadline(serial);
	assert_true(dl >= t0 + 50 && dl <= t1 + 50);
	/* a fresh instance takes it over and saves an edit */
	CK(share_conf(store, "kek-cache-ttl = 50\n", &slot, serial));
	s = open_session(slot, 1);
	assert_int_equal(state_of(s), CKS_RW_USER_FUNCTIONS);
	CK(rename_secret(s, "hmac-a", "hmac-b"));
	assert_int_equal(record_deadline(serial), dl);
	tmo = key_timeout(share_key(serial));
	if (tmo < 0 || tmo > 48)
		fail_msg("the record's timeout after the adopter's edit: %ld s",
			 tmo);
	/* a new C_Login with the PIN starts a new TTL (the adopter's first
	 * C_Login is its own: no new record; another instance's is) */
	CK(share_conf(store, "kek-cache-ttl = 50\n", &slot, serial));
	s = open_session(slot, 0);
	CK(F->C_Logout(s));
	s = user_session(slot, 0);
	assert_true(record_deadline(serial) >= dl + 2);
	CK(F->C_Logout(s));
	assert_true(share_key(serial) < 0);
}

/* Item 5: the TTL is bounded, for kek-cache-ttl and the property alike:
 * 2^32 s or more was cut to 32 bits by the keyring (0: permanent). */
static void test_pkcs11__share_ttl_bound(void **state)
{
	static const struct {
		const char *line;
		long ttl; /* 0: refused */
	} cases[] = {
		{ "wolfjce.keystore.kekCacheTtlSec = 4294967296", 0 },
		{ "wolfjce.keystore.kekCacheTtlSec = 4294967297", 0 },
		{ "wolfjce.keystore.kekCacheTtlSec = 2147483648", 0 },
		{ "wolfjce.keystore.kekCacheTtlSec = 99999999999999999999999", 0 },
		{ "wolfjce.keystore.kekCacheTtlSec = +4294967296", 0 },
		{ "kek-cache-ttl = 4294967296", 0 },
		{ "kek-cache-ttl = 2147483648", 0 },
		{ "wolfjce.keystore.kekCacheTtlSec = 2147483647", 2147483647 },
		{ "wolfjce.keystore.kekCacheTtlSec = +600", 600 },
		/* what libwks does not take means its default, 300 s */
		{ "wolfjce.keystore.kekCacheTtlSec = -5", 300 },
		{ "wolfjce.keystore.kekCacheTtlSec = 0", 300 },
		{ "wolfjce.keystore.kekCacheTtlSec = 10m", 300 },
		{ "kek-cache-ttl = 2147483647", 2147483647 },
		{ "kek-cache-ttl = 7\nwolfjce.keystore.kekCacheTtlSec = 9", 7 },
		{ "# none", 300 },
	};
	char store[700], serial[17], text[256], err[512];
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	time_t t0;
	long tmo;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		w11_conf *c = NULL;
		int rc;

		snprintf(text, sizeof(text), "[token]\nlabel = t\nstore = /s\n"
			 "%s\n", cases[i].line);
		rc = w11_conf_parse(&c, text, strlen(text), "/", err,
				    sizeof(err));
		if (cases[i].ttl == 0) {
			if (rc != -1)
				fail_msg("accepted: %s", cases[i].line);
			assert_non_null(strstr(err, "line 4"));
		} else {
			if (rc != 0)
				fail_msg("%s: %s", cases[i].line, err);
			assert_int_equal(c->tokens[0].ttl, cases[i].ttl);
			w11_conf_free(c);
		}
	}
	/* the module refuses such a configuration (it made a permanent
	 * record) */
	snprintf(store, sizeof(store), "%s/ttl.wks", dir);
	copy_file(main_store, store);
	CKE(CKR_GENERAL_ERROR,
	    share_conf(store, "wolfjce.keystore.kekCacheTtlSec = 4294967296\n",
		       &slot, serial));
	if (!keyring_usable())
		skip();
	/* the largest TTL: a record with a timeout, and its deadline */
	CK(share_conf(store, "wolfjce.keystore.kekCacheTtlSec = 2147483647\n",
		      &slot, serial));
	t0 = time(NULL);
	s = user_session(slot, 0);
	tmo = key_timeout(share_key(serial));
	assert_int_not_equal(tmo, -1);
	assert_true(record_deadline(serial) >= t0 + 2147483647LL);
	CK(F->C_Logout(s));
	assert_true(share_key(serial) < 0);
}

/* Run wks-pkcs11-logout with `args` (the module and configuration of
 * this test); its exit status, its output in out. */
static int logout_tool(const char *args, char *out, size_t cap)
{
	char cmd[2048];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' --module '%s' %s 2>&1",
		 WKS_PKCS11_LOGOUT, WKS_PKCS11_MODULE, args);
	assert_non_null(p = popen(cmd, "r"));
	n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	while (fread(cmd, 1, sizeof(cmd), p) > 0)
		; /* the rest (a sanitizer's report): no SIGPIPE */
	st = pclose(p);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Item 17 (and 2): wks-pkcs11-logout ends a shared login from the shell,
 * also one that no process can take over any more (a store changed by
 * another program): after any C_Logout, logged in or not, no record. */
static void test_pkcs11__share_logout_tool(void **state)
{
	char store[700], serial[17], out[1024];
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	wks_store *st;

	(void)state;
	snprintf(store, sizeof(store), "%s/tool.wks", dir);
	copy_file(main_store, store);
	CK(share_conf(store, "kek-cache-ttl = 60\n", &slot, serial));
	/* usage and a label that is no token's */
	assert_int_equal(logout_tool("--bogus", out, sizeof(out)), 2);
	assert_int_equal(logout_tool("--token nosuch", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "no token labelled \"nosuch\""));
	assert_int_equal(logout_tool("", out, sizeof(out)), 0);
	assert_string_equal(out, "sh: not logged in\n");
	if (!keyring_usable())
		skip();
	/* a live shared login: the tool takes it over and logs out */
	s = user_session(slot, 0);
	assert_true(share_key(serial) >= 0);
	assert_int_equal(logout_tool("--token sh", out, sizeof(out)), 0);
	assert_string_equal(out, "sh: logged out\n");
	assert_true(share_key(serial) < 0);
	CK(share_conf(store, "kek-cache-ttl = 60\n", &slot, serial));
	s = open_session(slot, 0);
	assert_int_equal(state_of(s), CKS_RO_PUBLIC_SESSION);
	/* a stale one (the store changed since): nobody can take it over,
	 * yet it holds the password; the tool's C_Logout removes it */
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	assert_true(share_key(serial) >= 0);
	st = tu_store_fast();
	TU_OK(wks_store_load_file(st, store, PIN, PIN_LEN));
	TU_OK(wks_store_delete(st, "ca"));
	TU_OK(wks_store_save_file(st, store, PIN, PIN_LEN));
	wks_store_free(st);
	assert_int_equal(logout_tool("", out, sizeof(out)), 0);
	assert_string_equal(out, "sh: not logged in\n");
	assert_true(share_key(serial) < 0);
	CK(F->C_Logout(s));
}

/* Item 3, in a child: the module as a set-user-ID-root program run by
 * "nobody" sees it (real uid 65534, effective uid 0), then as a
 * set-group-ID one (real gid 65534, effective gid 0).  0, or the number
 * of the check that failed. */
static int setuid_child(const char *wconf)
{
	CK_SLOT_ID sl[2];
	CK_ULONG n = 2;
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO si;
	CK_TOKEN_INFO ti;
	char serial[17];
	long id;

	setenv("WKS_PKCS11_CONF", wconf, 1);
	/* "nobody" itself (ids equal) logs in: a genuine record in nobody's
	 * keyring, which a set-user-ID program run by nobody would find */
	if (setresuid(65534, 65534, 0) != 0)
		return 10;
	F->C_Finalize(NULL);
	if (F->C_Initialize(NULL) != CKR_OK ||
	    F->C_GetSlotList(CK_TRUE, sl, &n) != CKR_OK || n != 1 ||
	    F->C_GetTokenInfo(sl[0], &ti) != CKR_OK)
		return 11;
	memcpy(serial, ti.serialNumber, 16);
	serial[16] = '\0';
	if (F->C_OpenSession(sl[0], CKF_SERIAL_SESSION, NULL, NULL, &s) ||
	    F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN) != CKR_OK)
		return 12;
	if (share_key(serial) < 0)
		return 13; /* (the environment: nobody has no keyring) */
	F->C_Finalize(NULL);
	if (F->C_Initialize(NULL) != CKR_OK)
		return 14;
	/* the set-user-ID program: it takes nothing over */
	if (setresuid(-1, 0, -1) != 0)
		return 15;
	if (F->C_OpenSession(sl[0], CKF_SERIAL_SESSION, NULL, NULL, &s) ||
	    F->C_GetSessionInfo(s, &si) != CKR_OK)
		return 16;
	if (si.state != CKS_RO_PUBLIC_SESSION)
		return 17; /* took nobody's record over */
	/* nor does its C_Logout touch the caller's keyring */
	if (F->C_Logout(s) != CKR_USER_NOT_LOGGED_IN ||
	    share_key(serial) < 0)
		return 18;
	/* the record removed (by nobody), it logs in with the PIN and
	 * leaves nothing in the caller's keyring */
	if (setresuid(-1, 65534, -1) != 0 ||
	    (id = share_key(serial)) < 0 ||
	    syscall(SYS_keyctl, KEYCTL_INVALIDATE, id) != 0 ||
	    setresuid(-1, 0, -1) != 0)
		return 19;
	if (F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN) != CKR_OK)
		return 20;
	if ((id = share_key(serial)) >= 0) {
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
		return 21; /* published the password to the caller */
	}
	if (F->C_Logout(s) != CKR_OK)
		return 22;
	/* set-group-ID: uids all root (root's keyring), real gid nobody */
	if (setresuid(0, 0, 0) != 0 || setresgid(65534, 0, 0) != 0)
		return 23;
	if (F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN) != CKR_OK)
		return 24;
	if ((id = share_key(serial)) >= 0) {
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
		return 25;
	}
	F->C_Finalize(NULL);
	return 0;
}

/* Item 3: nothing is shared in a process whose real and effective ids
 * differ.  As root: a child plays the set-user-ID program (setresuid: a
 * process started so, by setpriv or a set-user-ID file, runs in secure
 * mode, where the module ignores WKS_PKCS11_CONF and so would have no
 * token to test).  What "nobody" reads is in a world-readable folder. */
static void test_pkcs11__share_setuid(void **state)
{
	char wdir[] = "/tmp/wks-setuid-XXXXXX", wconf[128], wstore[128];
	FILE *f;
	pid_t pid;
	int st;

	(void)state;
	if (geteuid() != 0) {
		print_message("SKIP: not root (the test plays another user)\n");
		skip();
	}
	if (!keyring_usable())
		skip();
	assert_non_null(mkdtemp(wdir));
	assert_int_equal(chmod(wdir, 0755), 0);
	snprintf(wstore, sizeof(wstore), "%s/s.wks", wdir);
	snprintf(wconf, sizeof(wconf), "%s/s.conf", wdir);
	copy_file(main_store, wstore);
	assert_int_equal(chmod(wstore, 0644), 0);
	assert_non_null(f = fopen(wconf, "w"));
	fprintf(f, "[token]\nlabel = s\nstore = %s\nkek-cache-ttl = 60\n"
		"shared-login = yes\nwolfjce.wks.iterationCount = 10000\n",
		wstore);
	fclose(f);
	assert_int_equal(chmod(wconf, 0644), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(setuid_child(wconf));
	st = tu_reap_bounded(pid, 60000);
	unlink(wstore);
	unlink(wconf);
	rmdir(wdir);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 13) {
		print_message("SKIP: nobody has no usable keyring here\n");
		skip();
	}
	if (WEXITSTATUS(st) != 0)
		fail_msg("the set-user-ID child failed check %d",
			 WEXITSTATUS(st));
}

/* ---- issue 30, item 1: the attribute record beside the store -------------- */

/* Has the object the attribute?  (CKR_ATTRIBUTE_TYPE_INVALID: no) */
static int has_attr(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o,
		    CK_ATTRIBUTE_TYPE type)
{
	CK_ATTRIBUTE a = { type, NULL, 0 };
	CK_RV rv = F->C_GetAttributeValue(s, o, &a, 1);

	assert_true(rv == CKR_OK || rv == CKR_ATTRIBUTE_TYPE_INVALID);
	return rv == CKR_OK;
}

/* A fresh view of the token, as another process has it (the module
 * finalised and initialised again), logged in. */
static CK_SESSION_HANDLE fresh_user(CK_SLOT_ID slot)
{
	F->C_Finalize(NULL);
	CK(F->C_Initialize(NULL));
	return user_session(slot, 1);
}

static CK_OBJECT_HANDLE by_id(CK_SESSION_HANDLE s, CK_OBJECT_CLASS cls,
			      const uint8_t *id, size_t n, size_t *count)
{
	CK_ATTRIBUTE t[] = { { CKA_CLASS, &cls, sizeof(cls) },
			     { CKA_ID, (void *)id, n } };
	CK_OBJECT_HANDLE h[4] = { 0 };

	*count = find(s, t, 2, h, 4);
	return h[0];
}

static void test_pkcs11__attribute_record(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1);
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	uint8_t p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03,
			   0x01, 0x07 };
	uint8_t id[] = { 0xa1, 0xb2, 0xc3 };
	CK_MECHANISM_TYPE allowed[] = { CKM_ECDSA_SHA256 };
	CK_MECHANISM ecm = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_MECHANISM aesm = { CKM_AES_KEY_GEN, NULL, 0 };
	CK_MECHANISM raw = { CKM_ECDSA, NULL, 0 };
	CK_MECHANISM sha = { CKM_ECDSA_SHA256, NULL, 0 };
	CK_MECHANISM ecb = { CKM_AES_ECB, NULL, 0 };
	CK_ULONG len = 32, n, sn;
	CK_OBJECT_HANDLE pub, priv, k;
	char recpath[700];
	uint8_t *v, blk[16] = { 0 }, out[16];
	size_t cnt;
	struct stat sb;
	wks_store *st;

	(void)state;
	snprintf(recpath, sizeof(recpath), "%s.p11", w_store);
	{
		CK_ATTRIBUTE pt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_EC_PARAMS, p256, sizeof(p256) },
				      { CKA_ID, id, 3 },
				      { CKA_VERIFY, &yes, 1 } };
		CK_ATTRIBUTE vt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_LABEL, "rec-ec", 6 },
				      { CKA_ID, id, 3 },
				      { CKA_SIGN, &yes, 1 },
				      { CKA_DERIVE, &no, 1 },
				      { CKA_ALLOWED_MECHANISMS, allowed,
					sizeof(allowed) } };

		CK(F->C_GenerateKeyPair(s, &ecm, pt, 4, vt, 6, &pub, &priv));
	}
	{
		CK_ATTRIBUTE at[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_LABEL, "rec-aes", 7 },
				      { CKA_VALUE_LEN, &len, sizeof(len) },
				      { CKA_ALWAYS_AUTHENTICATE, &yes, 1 },
				      { CKA_DECRYPT, &no, 1 } };

		CK(F->C_GenerateKey(s, &aesm, at, 5, &k));
	}
	/* the record is there, beside the store; the store is wolfJCE's */
	assert_int_equal(stat(recpath, &sb), 0);
	wksdump_ok(w_store, PIN);
	/* another process reads back what this one set */
	s = fresh_user(SLOT_W);
	priv = by_id(s, CKO_PRIVATE_KEY, id, 3, &cnt);
	assert_int_equal(cnt, 1);
	by_id(s, CKO_PUBLIC_KEY, id, 3, &cnt);
	assert_int_equal(cnt, 1);
	v = attr(s, priv, CKA_ALLOWED_MECHANISMS, &n);
	assert_int_equal(n, sizeof(allowed));
	assert_memory_equal(v, allowed, n);
	free(v);
	assert_false(attr_bool(s, priv, CKA_DERIVE));
	/* enforced: a mechanism not allowed, a use not given */
	CKE(CKR_MECHANISM_INVALID, F->C_SignInit(s, &raw, priv));
	free(sign1(s, &sha, priv, msg, MSG_LEN, &sn));
	k = one(s, CKO_SECRET_KEY, "rec-aes");
	assert_true(attr_bool(s, k, CKA_ALWAYS_AUTHENTICATE));
	CKE(CKR_KEY_FUNCTION_NOT_PERMITTED, F->C_DecryptInit(s, &ecb, k));
	/* always-authenticate: the PIN again for each operation */
	CK(F->C_EncryptInit(s, &ecb, k));
	n = sizeof(out);
	CKE(CKR_USER_NOT_LOGGED_IN, F->C_Encrypt(s, blk, 16, out, &n));
	CK(F->C_EncryptInit(s, &ecb, k));
	CK(F->C_Login(s, CKU_CONTEXT_SPECIFIC, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	n = sizeof(out);
	CK(F->C_Encrypt(s, blk, 16, out, &n));
	/* a CA-issued certificate for the key does not change its CKA_ID */
	{
		CK_ULONG pl;
		uint8_t *pt = attr(s, by_id(s, CKO_PUBLIC_KEY, id, 3, &cnt),
				   CKA_PUBLIC_KEY_INFO, &pl);
		const unsigned char *pp = pt;
		EVP_PKEY *pk = d2i_PUBKEY(NULL, &pp, (long)pl);
		X509 *x = self_signed(ed_key, "issuer"), *leaf = X509_new();
		unsigned char *der = NULL;
		int dl;
		CK_OBJECT_CLASS cc = CKO_CERTIFICATE;
		CK_CERTIFICATE_TYPE ct = CKC_X_509;
		uint8_t cid[] = { 0x77 };
		CK_OBJECT_HANDLE c;

		assert_non_null(pk);
		X509_set_version(leaf, 2);
		ASN1_INTEGER_set(X509_get_serialNumber(leaf), 7);
		X509_NAME_add_entry_by_txt(X509_get_subject_name(leaf), "CN",
					   MBSTRING_ASC,
					   (const unsigned char *)"rec-ec", -1,
					   -1, 0);
		X509_set_issuer_name(leaf, X509_get_subject_name(x));
		X509_gmtime_adj(X509_getm_notBefore(leaf), 0);
		X509_gmtime_adj(X509_getm_notAfter(leaf), 86400);
		X509_set_pubkey(leaf, pk);
		assert_true(X509_sign(leaf, ed_key, NULL) > 0);
		dl = i2d_X509(leaf, &der);
		{
			CK_ATTRIBUTE t[] = {
				{ CKA_CLASS, &cc, sizeof(cc) },
				{ CKA_CERTIFICATE_TYPE, &ct, sizeof(ct) },
				{ CKA_TOKEN, &yes, 1 },
				{ CKA_ID, cid, 1 },
				{ CKA_VALUE, der, (CK_ULONG)dl },
			};

			CK(F->C_CreateObject(s, t, 5, &c));
		}
		OPENSSL_free(der);
		X509_free(leaf);
		X509_free(x);
		EVP_PKEY_free(pk);
		free(pt);
		s = fresh_user(SLOT_W);
		/* the key keeps its id; the certificate has the one given */
		priv = by_id(s, CKO_PRIVATE_KEY, id, 3, &cnt);
		assert_int_equal(cnt, 1);
		c = by_id(s, CKO_CERTIFICATE, cid, 1, &cnt);
		assert_int_equal(cnt, 1);
		v = attr(s, priv, CKA_ALLOWED_MECHANISMS, &n);
		assert_int_equal(n, sizeof(allowed));
		free(v);
	}
	/* a key pair's public key object deleted stays deleted */
	CK(F->C_DestroyObject(s, by_id(s, CKO_PUBLIC_KEY, id, 3, &cnt)));
	s = fresh_user(SLOT_W);
	by_id(s, CKO_PUBLIC_KEY, id, 3, &cnt);
	assert_int_equal(cnt, 0);
	priv = by_id(s, CKO_PRIVATE_KEY, id, 3, &cnt);
	assert_int_equal(cnt, 1);
	/* C_SetAttributeValue of a token key: kept */
	{
		CK_ATTRIBUTE t[] = { { CKA_SIGN, &no, 1 } };

		CK(F->C_SetAttributeValue(s, priv, t, 1));
		s = fresh_user(SLOT_W);
		priv = by_id(s, CKO_PRIVATE_KEY, id, 3, &cnt);
		assert_false(attr_bool(s, priv, CKA_SIGN));
		CKE(CKR_KEY_FUNCTION_NOT_PERMITTED,
		    F->C_SignInit(s, &sha, priv));
	}
	CK(F->C_CloseSession(s));
	/* another program renames the entry: its attributes follow */
	st = load_w(PIN);
	TU_OK(wks_store_rename(st, "rec-ec", "rec-ec2"));
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);
	s = fresh_user(SLOT_W);
	priv = by_id(s, CKO_PRIVATE_KEY, id, 3, &cnt);
	assert_int_equal(cnt, 1);
	CK(F->C_CloseSession(s));
	/* ... deletes it and puts another key under the name: the new key
	 * inherits nothing */
	st = load_w(PIN);
	TU_OK(wks_store_delete(st, "rec-ec2"));
	TU_OK(tu_set_key_files(st, "rec-ec2", "ecc-key.pem",
			       "server-ecc-cert.pem", PIN));
	TU_OK(wks_store_delete(st, "rec-aes"));
	{
		uint8_t kv[32] = { 5 };

		TU_OK(wks_store_set_secret_key(st, "rec-aes", "AES", kv, 32,
					       PIN, PIN_LEN));
	}
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);
	s = fresh_user(SLOT_W);
	by_id(s, CKO_PRIVATE_KEY, id, 3, &cnt);
	assert_int_equal(cnt, 0);
	priv = one(s, CKO_PRIVATE_KEY, "rec-ec2");
	assert_true(attr_bool(s, priv, CKA_SIGN));
	assert_false(has_attr(s, priv, CKA_ALLOWED_MECHANISMS));
	assert_int_equal(find_cls(s, CKO_PUBLIC_KEY, "rec-ec2", &k, 1), 1);
	k = one(s, CKO_SECRET_KEY, "rec-aes");
	assert_false(attr_bool(s, k, CKA_ALWAYS_AUTHENTICATE));
	CK(F->C_CloseSession(s));
}

/* The record is safely absent: a store copied without it, or with one
 * whose MAC does not verify, shows derived attributes; nothing fails. */
static void test_pkcs11__attribute_record_absent(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1);
	CK_BBOOL yes = CK_TRUE;
	CK_ULONG bits = 1024, n;
	CK_MECHANISM_TYPE allowed[] = { CKM_SHA256_RSA_PKCS };
	CK_MECHANISM rsa = { CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0 };
	CK_OBJECT_HANDLE pub, priv;
	char recpath[700];
	uint8_t *rec, *v;
	size_t rn;

	(void)state;
	snprintf(recpath, sizeof(recpath), "%s.p11", w_store);
	{
		CK_ATTRIBUTE pt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_MODULUS_BITS, &bits, sizeof(bits) } };
		CK_ATTRIBUTE vt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_LABEL, "rec-rsa", 7 },
				      { CKA_ALLOWED_MECHANISMS, allowed,
					sizeof(allowed) },
				      { CKA_ALWAYS_AUTHENTICATE, &yes, 1 } };

		CK(F->C_GenerateKeyPair(s, &rsa, pt, 2, vt, 4, &pub, &priv));
	}
	s = fresh_user(SLOT_W);
	priv = one(s, CKO_PRIVATE_KEY, "rec-rsa");
	assert_true(attr_bool(s, priv, CKA_ALWAYS_AUTHENTICATE));
	v = attr(s, priv, CKA_ALLOWED_MECHANISMS, &n);
	assert_int_equal(n, sizeof(allowed));
	free(v);
	CK(F->C_CloseSession(s));
	/* one byte of the record changed: its MAC fails, it is not used;
	 * the objects have their derived attributes */
	rec = tu_read_file(recpath, &rn);
	assert_true(rn > 100);
	rec[rn - 70] ^= 1;
	tu_write_file(recpath, rec, rn);
	s = fresh_user(SLOT_W);
	priv = one(s, CKO_PRIVATE_KEY, "rec-rsa");
	assert_false(attr_bool(s, priv, CKA_ALWAYS_AUTHENTICATE));
	assert_false(has_attr(s, priv, CKA_ALLOWED_MECHANISMS));
	CK(F->C_CloseSession(s));
	/* one that asks for 4 billion PBKDF2 iterations (anyone who may
	 * write the folder may write it): refused before any derivation */
	{
		uint8_t *big = malloc(rn);

		assert_non_null(big);
		memcpy(big, rec, rn);
		big[8] = big[9] = big[10] = big[11] = 0xff;
		tu_write_file(recpath, big, rn);
		free(big);
		s = fresh_user(SLOT_W);
		assert_false(attr_bool(s, one(s, CKO_PRIVATE_KEY, "rec-rsa"),
				       CKA_ALWAYS_AUTHENTICATE));
		CK(F->C_CloseSession(s));
	}
	/* truncated, or gone: the same */
	tu_write_file(recpath, rec, 20);
	s = fresh_user(SLOT_W);
	assert_false(attr_bool(s, one(s, CKO_PRIVATE_KEY, "rec-rsa"),
			       CKA_ALWAYS_AUTHENTICATE));
	CK(F->C_CloseSession(s));
	free(rec);
	unlink(recpath);
	s = fresh_user(SLOT_W);
	assert_false(attr_bool(s, one(s, CKO_PRIVATE_KEY, "rec-rsa"),
			       CKA_ALWAYS_AUTHENTICATE));
	CK(F->C_CloseSession(s));
}

/* ---- issue 29, items 7 and 16 (certificates = leaf; no
 * CKA_ALLOWED_MECHANISMS) -------------------------------------------------- */

/* certificates = leaf: a key's CA certificates and trusted certificate
 * entries are not objects (OpenSSH takes every certificate's key as an
 * identity); the leaf is, and the keys are as before.  The option is
 * parsed strictly. */
static void test_pkcs11__certificates_leaf(void **state)
{
	char path[700];
	FILE *f;
	CK_SLOT_ID slot;
	CK_ULONG n = 1;
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE h[64];
	size_t all, leaf;

	(void)state;
	s = open_session(0, 0);
	all = find_cls(s, CKO_CERTIFICATE, NULL, h, 64);
	assert_true(all >= 3); /* rsa, rsa/1, ca, ... */
	CK(F->C_Finalize(NULL));
	bad_conf("[token]\nlabel = a\nstore = /a\ncertificates = some\n",
		 "line 4: certificates: expected all or leaf");
	bad_conf("[token]\nlabel = a\nstore = /a\ncertificates = leaf\n"
		 "certificates = all\n", "\"certificates\" given twice");
	snprintf(path, sizeof(path), "%s/leaf.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "[token]\nlabel = leaf\nstore = %s\ncertificates = leaf\n",
		main_store);
	fclose(f);
	setenv("WKS_PKCS11_CONF", path, 1);
	CK(F->C_Initialize(NULL));
	CK(F->C_GetSlotList(CK_TRUE, &slot, &n));
	s = user_session(slot, 0);
	leaf = find_cls(s, CKO_CERTIFICATE, NULL, h, 64);
	/* one certificate per key entry: rsa, ec, other, ed, ed448 */
	assert_int_equal(leaf, 5);
	assert_true(leaf < all);
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "rsa/1", h, 64), 0);
	assert_int_equal(find_cls(s, CKO_CERTIFICATE, "ca", h, 64), 0);
	one(s, CKO_CERTIFICATE, "rsa");
	one(s, CKO_PRIVATE_KEY, "rsa");
	one(s, CKO_PUBLIC_KEY, "rsa");
	CK(F->C_Finalize(NULL));
	setenv("WKS_PKCS11_CONF", conf, 1);
	CK(F->C_Initialize(NULL));
}

/* No key has CKA_ALLOWED_MECHANISMS (every mechanism of its type is
 * allowed): its length query is what p11-kit 0.24's RPC cannot carry. */
static void test_pkcs11__no_allowed_mechanisms(void **state)
{
	static const CK_OBJECT_CLASS cls[] = { CKO_PRIVATE_KEY, CKO_PUBLIC_KEY,
					       CKO_SECRET_KEY };
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE h[64];

	(void)state;
	s = user_session(0, 0);
	for (size_t c = 0; c < 3; c++) {
		size_t n = find_cls(s, cls[c], NULL, h, 64);

		assert_true(n >= 1);
		for (size_t i = 0; i < n; i++) {
			CK_ATTRIBUTE a = { CKA_ALLOWED_MECHANISMS, NULL, 0 };

			CKE(CKR_ATTRIBUTE_TYPE_INVALID,
			    F->C_GetAttributeValue(s, h[i], &a, 1));
			assert_int_equal(a.ulValueLen,
					 CK_UNAVAILABLE_INFORMATION);
		}
	}
}

/* ---- issue 30 item 2: mechanisms (DES3, AES key wrap, HKDF, ECDH KDFs,
 * AES-CMAC) ----------------------------------------------------------------- */

/* A session secret key from its value; `flags` gives CKA_WRAP, CKA_UNWRAP,
 * CKA_DERIVE, CKA_EXTRACTABLE and CKA_SENSITIVE (bit 0..4) as given. */
enum { MK_WRAP = 1, MK_UNWRAP = 2, MK_DERIVE = 4, MK_EXTR = 8, MK_PLAIN = 16 };
static CK_OBJECT_HANDLE mk_secret(CK_SESSION_HANDLE s, CK_KEY_TYPE kt,
				  const uint8_t *v, size_t n, unsigned flags)
{
	CK_OBJECT_CLASS sec = CKO_SECRET_KEY;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &sec, sizeof(sec) },
		{ CKA_KEY_TYPE, &kt, sizeof(kt) },
		{ CKA_VALUE, (void *)v, n },
		{ CKA_WRAP, flags & MK_WRAP ? &yes : &no, 1 },
		{ CKA_UNWRAP, flags & MK_UNWRAP ? &yes : &no, 1 },
		{ CKA_DERIVE, flags & MK_DERIVE ? &yes : &no, 1 },
		{ CKA_EXTRACTABLE, flags & MK_EXTR ? &yes : &no, 1 },
		{ CKA_SENSITIVE, flags & MK_PLAIN ? &no : &yes, 1 },
	};
	CK_OBJECT_HANDLE h = 0;

	CK(F->C_CreateObject(s, t, 8, &h));
	return h;
}

static size_t ossl_cipher(const char *name, const uint8_t *key,
			  const uint8_t *iv, int enc, const uint8_t *in,
			  size_t n, uint8_t *out, int pad)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l1 = 0, l2 = 0;

	assert_true(EVP_CipherInit_ex2(c, EVP_get_cipherbyname(name), key, iv,
				       enc, NULL));
	EVP_CIPHER_CTX_set_padding(c, pad);
	assert_true(EVP_CipherUpdate(c, out, &l1, in, (int)n));
	assert_true(EVP_CipherFinal_ex(c, out + l1, &l2));
	EVP_CIPHER_CTX_free(c);
	return (size_t)(l1 + l2);
}

static int odd_parity(const uint8_t *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ones = 0;

		for (int b = 0; b < 8; b++)
			ones += (k[i] >> b) & 1;
		if (!(ones & 1))
			return 0;
	}
	return 1;
}

/* Triple DES: keys made, generated, stored as Java DESede entries and
 * read from them; ECB, CBC and CBC_PAD against OpenSSL. */
static void test_pkcs11__des3(void **state)
{
	static const struct {
		CK_MECHANISM_TYPE m;
		const char *name;
		int pad;
	} modes[] = {
		{ CKM_DES3_ECB, "DES-EDE3-ECB", 0 },
		{ CKM_DES3_CBC, "DES-EDE3-CBC", 0 },
		{ CKM_DES3_CBC_PAD, "DES-EDE3-CBC", 1 },
	};
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1);
	CK_MECHANISM_INFO info;
	CK_MECHANISM gen = { CKM_DES3_KEY_GEN, NULL, 0 };
	CK_OBJECT_CLASS sec = CKO_SECRET_KEY;
	CK_KEY_TYPE des3 = CKK_DES3;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	uint8_t key[24], iv[8], data[100], want[128], got[128], back[128];
	CK_OBJECT_HANDLE k, g, h[4];
	CK_ULONG n, total;
	uint8_t *v;
	wks_store *st;

	(void)state;
	CK(F->C_GetMechanismInfo(SLOT_W, CKM_DES3_CBC, &info));
	assert_int_equal(info.flags, CKF_ENCRYPT | CKF_DECRYPT);
	assert_int_equal(info.ulMinKeySize, 24);
	assert_int_equal(info.ulMaxKeySize, 24);
	CK(F->C_GetMechanismInfo(SLOT_W, CKM_DES3_KEY_GEN, &info));
	assert_int_equal(info.flags, CKF_GENERATE);
	RAND_bytes(key, sizeof(key));
	RAND_bytes(iv, sizeof(iv));
	RAND_bytes(data, sizeof(data));
	k = mk_secret(s, CKK_DES3, key, 24, 0);
	assert_int_equal(attr_ulong(s, k, CKA_KEY_TYPE), CKK_DES3);
	assert_true(attr_bool(s, k, CKA_ENCRYPT));
	assert_false(attr_bool(s, k, CKA_SIGN));
	{
		/* 16 bytes (two-key) is not a CKK_DES3 key */
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &sec, sizeof(sec) },
				     { CKA_KEY_TYPE, &des3, sizeof(des3) },
				     { CKA_VALUE, key, 16 } };

		CKE(CKR_ATTRIBUTE_VALUE_INVALID, F->C_CreateObject(s, t, 3, &g));
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		CK_MECHANISM m = { modes[i].m, iv, 8 };
		size_t len = modes[i].pad ? 100 : 96, wn;

		if (modes[i].m == CKM_DES3_ECB) {
			m.pParameter = NULL;
			m.ulParameterLen = 0;
		}
		wn = ossl_cipher(modes[i].name, key, iv, 1, data, len, want,
				 modes[i].pad);
		CK(F->C_EncryptInit(s, &m, k));
		n = 0;
		CK(F->C_Encrypt(s, data, len, NULL, &n));
		assert_int_equal(n, wn);
		n = 3;
		CKE(CKR_BUFFER_TOO_SMALL, F->C_Encrypt(s, data, len, got, &n));
		assert_int_equal(n, wn);
		CK(F->C_Encrypt(s, data, len, got, &n));
		assert_int_equal(n, wn);
		assert_memory_equal(got, want, wn);
		/* multi-part in odd pieces */
		CK(F->C_EncryptInit(s, &m, k));
		total = 0;
		for (size_t off = 0; off < len; off += 5) {
			size_t part = len - off < 5 ? len - off : 5;

			n = sizeof(got) - total;
			CK(F->C_EncryptUpdate(s, data + off, part, got + total,
					      &n));
			total += n;
		}
		n = sizeof(got) - total;
		CK(F->C_EncryptFinal(s, got + total, &n));
		total += n;
		assert_int_equal(total, wn);
		assert_memory_equal(got, want, wn);
		/* and back */
		CK(F->C_DecryptInit(s, &m, k));
		n = sizeof(back);
		CK(F->C_Decrypt(s, want, wn, back, &n));
		assert_int_equal(n, len);
		assert_memory_equal(back, data, len);
		CK(F->C_DecryptInit(s, &m, k));
		total = 0;
		for (size_t off = 0; off < wn; off += 11) {
			size_t part = wn - off < 11 ? wn - off : 11;

			n = sizeof(back) - total;
			CK(F->C_DecryptUpdate(s, want + off, part,
					      back + total, &n));
			total += n;
		}
		n = sizeof(back) - total;
		CK(F->C_DecryptFinal(s, back + total, &n));
		total += n;
		assert_int_equal(total, len);
		assert_memory_equal(back, data, len);
		if (!modes[i].pad) {
			CK(F->C_EncryptInit(s, &m, k));
			n = sizeof(got);
			CKE(CKR_DATA_LEN_RANGE,
			    F->C_Encrypt(s, data, 13, got, &n));
		}
	}
	{
		/* an AES-sized IV, an AES key */
		CK_MECHANISM bad = { CKM_DES3_CBC, data, 16 };
		CK_MECHANISM ecb = { CKM_DES3_ECB, NULL, 0 };

		CKE(CKR_MECHANISM_PARAM_INVALID, F->C_EncryptInit(s, &bad, k));
		CKE(CKR_KEY_TYPE_INCONSISTENT,
		    F->C_EncryptInit(s, &ecb, one(s, CKO_SECRET_KEY, "aes")));
	}
	/* generated: 24 bytes with DES's odd parity */
	{
		CK_ATTRIBUTE t[] = { { CKA_TOKEN, &no, 1 },
				     { CKA_SENSITIVE, &no, 1 },
				     { CKA_EXTRACTABLE, &yes, 1 } };

		CK(F->C_GenerateKey(s, &gen, t, 3, &g));
		assert_int_equal(attr_ulong(s, g, CKA_KEY_TYPE), CKK_DES3);
		assert_int_equal(attr_ulong(s, g, CKA_KEY_GEN_MECHANISM),
				 CKM_DES3_KEY_GEN);
		v = attr(s, g, CKA_VALUE, &n);
		assert_int_equal(n, 24);
		assert_true(odd_parity(v, 24));
		free(v);
	}
	/* a Java DESede entry is a CKK_DES3 key */
	st = load_w(PIN);
	TU_OK(wks_store_set_secret_key(st, "java-desede", "DESede", key, 24,
				       PIN, PIN_LEN));
	TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
	wks_store_free(st);
	k = one(s, CKO_SECRET_KEY, "java-desede");
	assert_int_equal(attr_ulong(s, k, CKA_KEY_TYPE), CKK_DES3);
	{
		CK_MECHANISM m = { CKM_DES3_CBC, iv, 8 };
		size_t wn = ossl_cipher("DES-EDE3-CBC", key, iv, 1, data, 96,
					want, 0);

		CK(F->C_EncryptInit(s, &m, k));
		n = sizeof(got);
		CK(F->C_Encrypt(s, data, 96, got, &n));
		assert_int_equal(n, wn);
		assert_memory_equal(got, want, wn);
	}
	/* and a token DES3 key made through the module is a DESede entry */
	{
		CK_ATTRIBUTE t[] = { { CKA_TOKEN, &yes, 1 },
				     { CKA_LABEL, "p11-des3", 8 } };
		wks_key *wk = NULL;
		const uint8_t *kv;
		size_t kl;
		char *alg = NULL;

		CK(F->C_GenerateKey(s, &gen, t, 2, &g));
		assert_int_equal(find_cls(s, CKO_SECRET_KEY, "p11-des3", h, 4),
				 1);
		assert_int_equal(attr_ulong(s, h[0], CKA_KEY_TYPE), CKK_DES3);
		st = load_w(PIN);
		TU_OK(wks_store_secret_algorithm(&alg, st, "p11-des3"));
		assert_string_equal(alg, "DESede");
		wks_free(alg);
		TU_OK(wks_store_get_key(&wk, st, "p11-des3", PIN, PIN_LEN));
		kv = wks_key_data(wk, &kl);
		assert_int_equal(kl, 24);
		assert_true(odd_parity(kv, kl));
		wks_key_free(wk);
		wks_store_free(st);
		wksdump_ok(w_store, PIN);
	}
	/* a CKK_HKDF key has no Java name, so no entry: session keys only */
	{
		CK_MECHANISM hg = { CKM_HKDF_KEY_GEN, NULL, 0 };
		CK_ULONG len = 32;
		CK_ATTRIBUTE t[] = { { CKA_TOKEN, &yes, 1 },
				     { CKA_VALUE_LEN, &len, sizeof(len) } };

		CKE(CKR_TEMPLATE_INCONSISTENT, F->C_GenerateKey(s, &hg, t, 2, &g));
	}
	CK(F->C_CloseSession(s));
}

static const char *rfc3394_kek = "000102030405060708090a0b0c0d0e0f"
				 "101112131415161718191a1b1c1d1e1f";

/* Wrap `k` under `w` with the size query and a short buffer first. */
static uint8_t *wrap1(CK_SESSION_HANDLE s, CK_MECHANISM *m,
		      CK_OBJECT_HANDLE w, CK_OBJECT_HANDLE k, CK_ULONG *n)
{
	uint8_t *out;
	CK_ULONG need;

	*n = 0;
	CK(F->C_WrapKey(s, m, w, k, NULL, n));
	need = *n;
	out = malloc(need + 1);
	assert_non_null(out);
	*n = need - 1;
	CKE(CKR_BUFFER_TOO_SMALL, F->C_WrapKey(s, m, w, k, out, n));
	assert_int_equal(*n, need);
	CK(F->C_WrapKey(s, m, w, k, out, n));
	assert_int_equal(*n, need);
	return out;
}

static CK_OBJECT_HANDLE unwrap1(CK_SESSION_HANDLE s, CK_MECHANISM *m,
				CK_OBJECT_HANDLE u, const uint8_t *in,
				CK_ULONG n, CK_KEY_TYPE kt)
{
	CK_OBJECT_CLASS sec = CKO_SECRET_KEY;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &sec, sizeof(sec) },
		{ CKA_KEY_TYPE, &kt, sizeof(kt) },
		{ CKA_SENSITIVE, &no, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
	};
	CK_OBJECT_HANDLE h = 0;

	CK(F->C_UnwrapKey(s, m, u, (CK_BYTE_PTR)in, n, t, 4, &h));
	return h;
}

/* AES key wrap: RFC 3394 and RFC 5649's vectors, OpenSSL, and the rules
 * of what may be wrapped. */
static void test_pkcs11__key_wrap(void **state)
{
	static const struct {
		CK_MECHANISM_TYPE m;
		size_t kek_len;
		CK_KEY_TYPE kt;
		const char *key, *wrapped;
		const char *kek; /* NULL: rfc3394_kek */
	} vec[] = {
		/* RFC 3394 4.1, 4.3, 4.6 */
		{ CKM_AES_KEY_WRAP, 16, CKK_AES,
		  "00112233445566778899aabbccddeeff",
		  "1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5", NULL },
		{ CKM_AES_KEY_WRAP, 32, CKK_AES,
		  "00112233445566778899aabbccddeeff",
		  "64e8c3f9ce0f5ba263e9777905818a2a93c8191e7d6e8ae7", NULL },
		{ CKM_AES_KEY_WRAP, 32, CKK_AES,
		  "00112233445566778899aabbccddeeff"
		  "000102030405060708090a0b0c0d0e0f",
		  "28c9f404c4b810f4cbccb35cfb87f8263f5786e2d80ed326"
		  "cbc7f0e71a99f43bfb988b9b7a02dd21", NULL },
		/* RFC 5649 6 */
		{ CKM_AES_KEY_WRAP_PAD, 24, CKK_GENERIC_SECRET,
		  "c37b7e6492584340bed12207808941155068f738",
		  "138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a"
		  "5f54f373fa543b6a",
		  "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8" },
		{ CKM_AES_KEY_WRAP_PAD, 24, CKK_GENERIC_SECRET, "466f7250617369",
		  "afbeb0f07dfbf5419200f2ccb50bb24f",
		  "5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8" },
	};
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_MECHANISM_INFO info;
	CK_OBJECT_CLASS sec = CKO_SECRET_KEY;
	CK_KEY_TYPE aes = CKK_AES;
	CK_BBOOL yes = CK_TRUE;
	uint8_t buf[128];
	CK_ULONG n;

	(void)state;
	CK(F->C_GetMechanismInfo(SLOT_MAIN, CKM_AES_KEY_WRAP, &info));
	assert_int_equal(info.flags, CKF_WRAP | CKF_UNWRAP | CKF_ENCRYPT |
					     CKF_DECRYPT);
	assert_int_equal(info.ulMinKeySize, 16);
	assert_int_equal(info.ulMaxKeySize, 32);
	CK(F->C_GetMechanismInfo(SLOT_MAIN, CKM_AES_KEY_WRAP_PAD, &info));
	assert_true(info.flags & CKF_UNWRAP);
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		CK_MECHANISM m = { vec[i].m, NULL, 0 };
		size_t kl, vl, wl;
		uint8_t *kek = tu_unhex(vec[i].kek ? vec[i].kek : rfc3394_kek,
					&kl);
		uint8_t *kv = tu_unhex(vec[i].key, &vl);
		uint8_t *wv = tu_unhex(vec[i].wrapped, &wl), *out, *v;
		CK_OBJECT_HANDLE w, k, u;

		w = mk_secret(s, CKK_AES, kek, vec[i].kek_len,
			      MK_WRAP | MK_UNWRAP);
		k = mk_secret(s, vec[i].kt, kv, vl, MK_EXTR);
		out = wrap1(s, &m, w, k, &n);
		assert_int_equal(n, wl);
		assert_memory_equal(out, wv, wl);
		/* OpenSSL agrees */
		{
			char name[32];

			snprintf(name, sizeof(name), "AES-%zu-WRAP%s",
				 vec[i].kek_len * 8,
				 vec[i].m == CKM_AES_KEY_WRAP_PAD ? "-PAD" : "");
			assert_int_equal(ossl_cipher(name, kek, NULL, 1, kv, vl,
						     buf, 1),
					 wl);
			assert_memory_equal(buf, wv, wl);
		}
		/* the key it wrapped, unwrapped */
		u = unwrap1(s, &m, w, wv, wl, vec[i].kt);
		v = attr(s, u, CKA_VALUE, &n);
		assert_int_equal(n, vl);
		assert_memory_equal(v, kv, vl);
		free(v);
		assert_false(attr_bool(s, u, CKA_LOCAL));
		assert_false(attr_bool(s, u, CKA_ALWAYS_SENSITIVE));
		assert_false(attr_bool(s, u, CKA_NEVER_EXTRACTABLE));
		/* tampered: refused */
		wv[wl - 1] ^= 1;
		{
			CK_KEY_TYPE kt = vec[i].kt;
			CK_ATTRIBUTE t[] = { { CKA_CLASS, &sec, sizeof(sec) },
					     { CKA_KEY_TYPE, &kt, sizeof(kt) } };

			CKE(CKR_WRAPPED_KEY_INVALID,
			    F->C_UnwrapKey(s, &m, w, wv, wl, t, 2, &u));
			CKE(CKR_WRAPPED_KEY_LEN_RANGE,
			    F->C_UnwrapKey(s, &m, w, wv, wl - 1, t, 2, &u));
		}
		wv[wl - 1] ^= 1;
		/* C_Encrypt / C_Decrypt with the same mechanism */
		{
			CK_OBJECT_HANDLE e = mk_secret(s, CKK_AES, kek,
						       vec[i].kek_len, 0);

			CK(F->C_EncryptInit(s, &m, e));
			n = 0;
			CK(F->C_Encrypt(s, kv, vl, NULL, &n));
			assert_int_equal(n, wl);
			CK(F->C_Encrypt(s, kv, vl, buf, &n));
			assert_int_equal(n, wl);
			assert_memory_equal(buf, wv, wl);
			CK(F->C_DecryptInit(s, &m, e));
			n = 0;
			CK(F->C_Decrypt(s, wv, wl, NULL, &n));
			assert_int_equal(n, wl - 8); /* at most */
			n = vl - 1;
			CKE(CKR_BUFFER_TOO_SMALL,
			    F->C_Decrypt(s, wv, wl, buf, &n));
			assert_int_equal(n, vec[i].m == CKM_AES_KEY_WRAP_PAD
						    ? vl
						    : wl - 8);
			n = vl;
			CK(F->C_Decrypt(s, wv, wl, buf, &n));
			assert_int_equal(n, vl);
			assert_memory_equal(buf, kv, vl);
			CK(F->C_EncryptInit(s, &m, e));
			CKE(CKR_FUNCTION_NOT_SUPPORTED,
			    F->C_EncryptUpdate(s, kv, vl, buf, &n));
		}
		free(out);
		free(kek);
		free(kv);
		free(wv);
	}
	/* what may be wrapped, with what */
	{
		uint8_t kek[16] = { 1 }, kv[32] = { 2 };
		CK_MECHANISM kw = { CKM_AES_KEY_WRAP, NULL, 0 };
		CK_MECHANISM kwp = { CKM_AES_KEY_WRAP_PAD, NULL, 0 };
		CK_MECHANISM badp = { CKM_AES_KEY_WRAP, kek, 4 };
		CK_MECHANISM iv = { CKM_AES_KEY_WRAP, kek, 8 };
		CK_OBJECT_HANDLE w = mk_secret(s, CKK_AES, kek, 16,
					       MK_WRAP | MK_UNWRAP);
		CK_OBJECT_HANDLE nowrap = mk_secret(s, CKK_AES, kek, 16, 0);
		CK_OBJECT_HANDLE gw = mk_secret(s, CKK_GENERIC_SECRET, kek, 16,
						MK_WRAP);
		CK_OBJECT_HANDLE ok = mk_secret(s, CKK_AES, kv, 32, MK_EXTR);
		CK_OBJECT_HANDLE fixed = mk_secret(s, CKK_AES, kv, 32, 0);
		CK_OBJECT_HANDLE odd = mk_secret(s, CKK_GENERIC_SECRET, kv, 20,
						 MK_EXTR);
		CK_OBJECT_HANDLE u;
		uint8_t *out;

		/* a sensitive, extractable key leaves only wrapped */
		out = wrap1(s, &kw, w, ok, &n);
		{
			CK_ATTRIBUTE a = { CKA_VALUE, buf, sizeof(buf) };

			CKE(CKR_ATTRIBUTE_SENSITIVE,
			    F->C_GetAttributeValue(s, ok, &a, 1));
		}
		free(out);
		/* an initial value of its own: RFC 3394 2.2.3 */
		out = wrap1(s, &iv, w, ok, &n);
		u = unwrap1(s, &iv, w, out, n, CKK_AES);
		{
			CK_ULONG vn;
			uint8_t *v = attr(s, u, CKA_VALUE, &vn);

			assert_memory_equal(v, kv, 32);
			free(v);
		}
		{
			/* not under the default initial value */
			CK_ATTRIBUTE t[] = { { CKA_CLASS, &sec, sizeof(sec) },
					     { CKA_KEY_TYPE, &aes,
					       sizeof(aes) } };

			CKE(CKR_WRAPPED_KEY_INVALID,
			    F->C_UnwrapKey(s, &kw, w, out, n, t, 2, &u));
		}
		free(out);
		n = sizeof(buf);
		CKE(CKR_MECHANISM_PARAM_INVALID,
		    F->C_WrapKey(s, &badp, w, ok, buf, &n));
		CKE(CKR_KEY_UNEXTRACTABLE, F->C_WrapKey(s, &kw, w, fixed, buf,
							 &n));
		/* a token key is never extractable, never wrapped */
		CKE(CKR_KEY_UNEXTRACTABLE,
		    F->C_WrapKey(s, &kwp, w, one(s, CKO_SECRET_KEY, "aes"), buf,
				 &n));
		CKE(CKR_KEY_UNEXTRACTABLE,
		    F->C_WrapKey(s, &kwp, w, one(s, CKO_SECRET_KEY, "hmac"),
				 buf, &n));
		CKE(CKR_KEY_NOT_WRAPPABLE,
		    F->C_WrapKey(s, &kwp, w, one(s, CKO_PRIVATE_KEY, "ec"), buf,
				 &n));
		CKE(CKR_KEY_FUNCTION_NOT_PERMITTED,
		    F->C_WrapKey(s, &kw, nowrap, ok, buf, &n));
		CKE(CKR_WRAPPING_KEY_TYPE_INCONSISTENT,
		    F->C_WrapKey(s, &kw, gw, ok, buf, &n));
		CKE(CKR_WRAPPING_KEY_HANDLE_INVALID,
		    F->C_WrapKey(s, &kw, 0x7777777, ok, buf, &n));
		CKE(CKR_KEY_HANDLE_INVALID,
		    F->C_WrapKey(s, &kw, w, 0x7777777, buf, &n));
		CKE(CKR_KEY_SIZE_RANGE, F->C_WrapKey(s, &kw, w, odd, buf, &n));
		CKE(CKR_MECHANISM_INVALID,
		    F->C_WrapKey(s, &(CK_MECHANISM){ CKM_AES_CBC, kek, 16 }, w,
				 ok, buf, &n));
		CKE(CKR_ARGUMENTS_BAD, F->C_WrapKey(s, &kw, w, ok, buf, NULL));
		CKE(CKR_ARGUMENTS_BAD, F->C_WrapKey(s, NULL, w, ok, buf, &n));
		/* padded: any length */
		n = sizeof(buf);
		CK(F->C_WrapKey(s, &kwp, w, odd, buf, &n));
		assert_int_equal(n, 32);
		/* CKA_WRAP_WITH_TRUSTED: only under a CKA_TRUSTED key, which
		 * no template can make */
		{
			CK_ATTRIBUTE t[] = {
				{ CKA_CLASS, &sec, sizeof(sec) },
				{ CKA_KEY_TYPE, &aes, sizeof(aes) },
				{ CKA_VALUE, kv, 16 },
				{ CKA_EXTRACTABLE, &yes, 1 },
				{ CKA_WRAP_WITH_TRUSTED, &yes, 1 },
			};
			CK_ATTRIBUTE tr[] = {
				{ CKA_CLASS, &sec, sizeof(sec) },
				{ CKA_KEY_TYPE, &aes, sizeof(aes) },
				{ CKA_VALUE, kv, 16 },
				{ CKA_WRAP, &yes, 1 },
				{ CKA_TRUSTED, &yes, 1 },
			};
			CK_OBJECT_HANDLE wt;

			CK(F->C_CreateObject(s, t, 5, &wt));
			n = sizeof(buf);
			CKE(CKR_KEY_NOT_WRAPPABLE,
			    F->C_WrapKey(s, &kw, w, wt, buf, &n));
			CKE(CKR_ATTRIBUTE_READ_ONLY,
			    F->C_CreateObject(s, tr, 5, &wt));
		}
		/* the unwrapping key's CKA_UNWRAP, the template's checks */
		n = sizeof(buf);
		CK(F->C_WrapKey(s, &kw, w, ok, buf, &n));
		{
			CK_ATTRIBUTE cls_only[] = { { CKA_CLASS, &sec,
						      sizeof(sec) } };
			CK_ATTRIBUTE with_value[] = {
				{ CKA_CLASS, &sec, sizeof(sec) },
				{ CKA_KEY_TYPE, &aes, sizeof(aes) },
				{ CKA_VALUE, kv, 32 },
			};
			CK_ATTRIBUTE bad_shape[] = {
				{ CKA_CLASS, &sec, sizeof(sec) },
				{ CKA_LABEL, NULL, 5 },
			};
			CK_ATTRIBUTE trusted[] = {
				{ CKA_CLASS, &sec, sizeof(sec) },
				{ CKA_KEY_TYPE, &aes, sizeof(aes) },
				{ CKA_TRUSTED, &yes, 1 },
			};
			CK_ATTRIBUTE len16[] = {
				{ CKA_CLASS, &sec, sizeof(sec) },
				{ CKA_KEY_TYPE, &aes, sizeof(aes) },
				{ CKA_VALUE_LEN, &(CK_ULONG){ 16 },
				  sizeof(CK_ULONG) },
			};

			CKE(CKR_TEMPLATE_INCOMPLETE,
			    F->C_UnwrapKey(s, &kw, w, buf, n, cls_only, 1, &u));
			CKE(CKR_TEMPLATE_INCONSISTENT,
			    F->C_UnwrapKey(s, &kw, w, buf, n, with_value, 3,
					   &u));
			CKE(CKR_ATTRIBUTE_VALUE_INVALID,
			    F->C_UnwrapKey(s, &kw, w, buf, n, bad_shape, 2,
					   &u));
			CKE(CKR_ATTRIBUTE_READ_ONLY,
			    F->C_UnwrapKey(s, &kw, w, buf, n, trusted, 3, &u));
			CKE(CKR_TEMPLATE_INCONSISTENT,
			    F->C_UnwrapKey(s, &kw, w, buf, n, len16, 3, &u));
			CKE(CKR_KEY_FUNCTION_NOT_PERMITTED,
			    F->C_UnwrapKey(s, &kw, nowrap, buf, n, with_value,
					   2, &u));
			CKE(CKR_UNWRAPPING_KEY_HANDLE_INVALID,
			    F->C_UnwrapKey(s, &kw, 0x7777777, buf, n,
					   with_value, 2, &u));
			CKE(CKR_ARGUMENTS_BAD,
			    F->C_UnwrapKey(s, &kw, w, NULL, n, with_value, 2,
					   &u));
			CKE(CKR_ARGUMENTS_BAD,
			    F->C_UnwrapKey(s, &kw, w, buf, n, with_value, 2,
					   NULL));
			/* a default unwrapped key is sensitive */
			CK(F->C_UnwrapKey(s, &kw, w, buf, n, with_value, 2,
					  &u));
			{
				CK_ATTRIBUTE a = { CKA_VALUE, kv, 32 };

				CKE(CKR_ATTRIBUTE_SENSITIVE,
				    F->C_GetAttributeValue(s, u, &a, 1));
			}
		}
	}
	CK(F->C_CloseSession(s));
	/* a token key unwrapped into the store: an AES entry */
	s = user_session(SLOT_W, 1);
	{
		uint8_t kek[16] = { 3 }, kv[16] = { 4 };
		CK_MECHANISM kw = { CKM_AES_KEY_WRAP, NULL, 0 };
		CK_OBJECT_HANDLE w = mk_secret(s, CKK_AES, kek, 16,
					       MK_WRAP | MK_UNWRAP);
		CK_OBJECT_HANDLE k = mk_secret(s, CKK_AES, kv, 16, MK_EXTR), u;
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &sec, sizeof(sec) },
			{ CKA_KEY_TYPE, &aes, sizeof(aes) },
			{ CKA_TOKEN, &yes, 1 },
			{ CKA_LABEL, "unwrapped", 9 },
		};
		wks_key *wk = NULL;
		const uint8_t *v;
		size_t vl;
		wks_store *st;

		n = sizeof(buf);
		CK(F->C_WrapKey(s, &kw, w, k, buf, &n));
		CK(F->C_UnwrapKey(s, &kw, w, buf, n, t, 4, &u));
		assert_true(attr_bool(s, u, CKA_TOKEN));
		st = load_w(PIN);
		TU_OK(wks_store_get_key(&wk, st, "unwrapped", PIN, PIN_LEN));
		v = wks_key_data(wk, &vl);
		assert_int_equal(vl, 16);
		assert_memory_equal(v, kv, 16);
		wks_key_free(wk);
		wks_store_free(st);
	}
	CK(F->C_CloseSession(s));
}

/* HKDF with OpenSSL's EVP_KDF, independently of the module. */
static void ossl_hkdf(const char *md, int mode, const uint8_t *ikm, size_t il,
		      const uint8_t *salt, size_t sl, const uint8_t *info,
		      size_t nl, uint8_t *out, size_t len)
{
	EVP_KDF *k = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *c = EVP_KDF_CTX_new(k);
	OSSL_PARAM p[6], *q = p;

	*q++ = OSSL_PARAM_construct_utf8_string("digest", (char *)md, 0);
	*q++ = OSSL_PARAM_construct_int("mode", &mode);
	*q++ = OSSL_PARAM_construct_octet_string("key", (void *)ikm, il);
	if (sl)
		*q++ = OSSL_PARAM_construct_octet_string("salt", (void *)salt,
							 sl);
	if (nl)
		*q++ = OSSL_PARAM_construct_octet_string("info", (void *)info,
							 nl);
	*q = OSSL_PARAM_construct_end();
	assert_true(EVP_KDF_derive(c, out, len, p) > 0);
	EVP_KDF_CTX_free(c);
	EVP_KDF_free(k);
}

static CK_OBJECT_HANDLE hkdf1(CK_SESSION_HANDLE s, CK_MECHANISM_TYPE mt,
			      CK_HKDF_PARAMS *p, CK_OBJECT_HANDLE base,
			      CK_ULONG len, CK_RV want)
{
	CK_MECHANISM m = { mt, p, sizeof(*p) };
	CK_OBJECT_CLASS cls = mt == CKM_HKDF_DATA ? CKO_DATA : CKO_SECRET_KEY;
	CK_KEY_TYPE kt = CKK_GENERIC_SECRET;
	CK_BBOOL no = CK_FALSE, yes = CK_TRUE;
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_VALUE_LEN, &len, sizeof(len) },
		{ CKA_SENSITIVE, &no, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
		{ CKA_KEY_TYPE, &kt, sizeof(kt) },
	};
	CK_OBJECT_HANDLE h = 0;

	CKE(want, F->C_DeriveKey(s, &m, base, t, mt == CKM_HKDF_DATA ? 2 : 5,
				 &h));
	return h;
}

/* HKDF: RFC 5869's test cases 1 and 3, OpenSSL for SHA-384/512, every
 * salt type, extract and expand alone, HKDF_DATA, bad parameters. */
static void test_pkcs11__hkdf(void **state)
{
	static const char *okm1 = "3cb25f25faacd57a90434f64d0362f2a2d2d0a90"
				  "cf1a5a4c5db02d56ecc4c5bf34007208d5b88718"
				  "5865";
	static const char *prk1 = "077709362c2e32df0ddc3f0dc47bba6390b6c73b"
				  "b50f9c3122ec844ad7c2b3e5";
	static const char *okm3 = "8da4e775a563c18f715f802a063c5a31b8a11f5c"
				  "5ee1879ec3454e5f3c738d2d9d201395faa4b61a"
				  "96c8";
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_MECHANISM_INFO info;
	uint8_t ikm[22], salt[13], inf[10], want[200];
	size_t l1, l2, l3;
	uint8_t *o1 = tu_unhex(okm1, &l1), *p1 = tu_unhex(prk1, &l2),
		*o3 = tu_unhex(okm3, &l3), *v;
	CK_OBJECT_HANDLE base, k, sk;
	CK_HKDF_PARAMS p;
	CK_ULONG n;

	(void)state;
	CK(F->C_GetMechanismInfo(SLOT_MAIN, CKM_HKDF_DERIVE, &info));
	assert_int_equal(info.flags, CKF_DERIVE);
	CK(F->C_GetMechanismInfo(SLOT_MAIN, CKM_HKDF_DATA, &info));
	assert_int_equal(info.flags, CKF_DERIVE);
	memset(ikm, 0x0b, sizeof(ikm));
	for (int i = 0; i < 13; i++)
		salt[i] = (uint8_t)i;
	for (int i = 0; i < 10; i++)
		inf[i] = (uint8_t)(0xf0 + i);
	base = mk_secret(s, CKK_GENERIC_SECRET, ikm, 22, MK_DERIVE);
	/* RFC 5869 A.1: extract and expand */
	memset(&p, 0, sizeof(p));
	p.bExtract = CK_TRUE;
	p.bExpand = CK_TRUE;
	p.prfHashMechanism = CKM_SHA256;
	p.ulSaltType = CKF_HKDF_SALT_DATA;
	p.pSalt = salt;
	p.ulSaltLen = 13;
	p.pInfo = inf;
	p.ulInfoLen = 10;
	k = hkdf1(s, CKM_HKDF_DERIVE, &p, base, 42, CKR_OK);
	assert_int_equal(attr_ulong(s, k, CKA_KEY_TYPE), CKK_GENERIC_SECRET);
	v = attr(s, k, CKA_VALUE, &n);
	assert_int_equal(n, 42);
	assert_memory_equal(v, o1, 42);
	free(v);
	/* the same into a data object */
	k = hkdf1(s, CKM_HKDF_DATA, &p, base, 42, CKR_OK);
	assert_int_equal(attr_ulong(s, k, CKA_CLASS), CKO_DATA);
	assert_true(attr_bool(s, k, CKA_PRIVATE)); /* derived: private */
	v = attr(s, k, CKA_VALUE, &n);
	assert_int_equal(n, 42);
	assert_memory_equal(v, o1, 42);
	free(v);
	/* the salt as a key's value */
	sk = mk_secret(s, CKK_GENERIC_SECRET, salt, 13, MK_DERIVE);
	p.ulSaltType = CKF_HKDF_SALT_KEY;
	p.pSalt = NULL;
	p.ulSaltLen = 0;
	p.hSaltKey = sk;
	k = hkdf1(s, CKM_HKDF_DERIVE, &p, base, 42, CKR_OK);
	v = attr(s, k, CKA_VALUE, &n);
	assert_memory_equal(v, o1, 42);
	free(v);
	p.hSaltKey = mk_secret(s, CKK_GENERIC_SECRET, salt, 13, 0);
	hkdf1(s, CKM_HKDF_DERIVE, &p, base, 42,
	      CKR_KEY_FUNCTION_NOT_PERMITTED);
	p.hSaltKey = 0x7777777;
	hkdf1(s, CKM_HKDF_DERIVE, &p, base, 42, CKR_MECHANISM_PARAM_INVALID);
	/* extract only: the PRK; then expand only from it */
	p.ulSaltType = CKF_HKDF_SALT_DATA;
	p.pSalt = salt;
	p.ulSaltLen = 13;
	p.bExpand = CK_FALSE;
	k = hkdf1(s, CKM_HKDF_DERIVE, &p, base, 32, CKR_OK);
	v = attr(s, k, CKA_VALUE, &n);
	assert_int_equal(n, 32);
	assert_memory_equal(v, p1, 32);
	hkdf1(s, CKM_HKDF_DERIVE, &p, base, 42, CKR_TEMPLATE_INCONSISTENT);
	{
		CK_OBJECT_HANDLE prk = mk_secret(s, CKK_HKDF, v, 32, MK_DERIVE);

		free(v);
		p.bExtract = CK_FALSE;
		p.bExpand = CK_TRUE;
		k = hkdf1(s, CKM_HKDF_DERIVE, &p, prk, 42, CKR_OK);
		v = attr(s, k, CKA_VALUE, &n);
		assert_memory_equal(v, o1, 42);
		free(v);
	}
	/* RFC 5869 A.3: no salt, no info */
	p.bExtract = CK_TRUE;
	p.ulSaltType = CKF_HKDF_SALT_NULL;
	p.pSalt = NULL;
	p.ulSaltLen = 0;
	p.pInfo = NULL;
	p.ulInfoLen = 0;
	k = hkdf1(s, CKM_HKDF_DERIVE, &p, base, 42, CKR_OK);
	v = attr(s, k, CKA_VALUE, &n);
	assert_memory_equal(v, o3, 42);
	free(v);
	/* SHA-384 and SHA-512, against OpenSSL */
	{
		static const CK_MECHANISM_TYPE h[] = { CKM_SHA384, CKM_SHA512 };
		static const char *names[] = { "SHA384", "SHA512" };

		for (int i = 0; i < 2; i++) {
			p.prfHashMechanism = h[i];
			p.ulSaltType = CKF_HKDF_SALT_DATA;
			p.pSalt = salt;
			p.ulSaltLen = 13;
			p.pInfo = inf;
			p.ulInfoLen = 10;
			ossl_hkdf(names[i], 0, ikm, 22, salt, 13, inf, 10, want,
				  100);
			k = hkdf1(s, CKM_HKDF_DERIVE, &p, base, 100, CKR_OK);
			v = attr(s, k, CKA_VALUE, &n);
			assert_int_equal(n, 100);
			assert_memory_equal(v, want, 100);
			free(v);
		}
	}
	/* an AES key from HKDF, usable at once */
	{
		CK_MECHANISM m = { CKM_HKDF_DERIVE, &p, sizeof(p) };
		CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
		CK_KEY_TYPE aes = CKK_AES;
		CK_ULONG len = 32;
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &cls, sizeof(cls) },
				     { CKA_KEY_TYPE, &aes, sizeof(aes) },
				     { CKA_VALUE_LEN, &len, sizeof(len) } };
		CK_ATTRIBUTE t2[] = { { CKA_CLASS, &cls, sizeof(cls) },
				      { CKA_KEY_TYPE, &aes, sizeof(aes) } };

		p.prfHashMechanism = CKM_SHA256;
		CK(F->C_DeriveKey(s, &m, base, t, 3, &k));
		assert_int_equal(attr_ulong(s, k, CKA_KEY_TYPE), CKK_AES);
		len = 20;
		CKE(CKR_TEMPLATE_INCONSISTENT,
		    F->C_DeriveKey(s, &m, base, t, 3, &k));
		CKE(CKR_TEMPLATE_INCOMPLETE,
		    F->C_DeriveKey(s, &m, base, t2, 2, &k));
	}
	/* HKDF keys: generated with CKM_HKDF_KEY_GEN */
	{
		CK_MECHANISM gen = { CKM_HKDF_KEY_GEN, NULL, 0 };
		CK_ULONG len = 32;
		CK_BBOOL yes = CK_TRUE;
		CK_ATTRIBUTE t[] = { { CKA_VALUE_LEN, &len, sizeof(len) },
				     { CKA_DERIVE, &yes, 1 } };
		CK_OBJECT_HANDLE g;

		CK(F->C_GenerateKey(s, &gen, t, 2, &g));
		assert_int_equal(attr_ulong(s, g, CKA_KEY_TYPE), CKK_HKDF);
		hkdf1(s, CKM_HKDF_DERIVE, &p, g, 42, CKR_OK);
	}
	/* the base key's type and CKA_DERIVE */
	hkdf1(s, CKM_HKDF_DERIVE, &p, mk_secret(s, CKK_GENERIC_SECRET, ikm, 22, 0),
	      42, CKR_KEY_FUNCTION_NOT_PERMITTED);
	hkdf1(s, CKM_HKDF_DERIVE, &p,
	      mk_secret(s, CKK_AES, ikm, 16, MK_DERIVE), 42,
	      CKR_KEY_TYPE_INCONSISTENT);
	hkdf1(s, CKM_HKDF_DERIVE, &p, one(s, CKO_SECRET_KEY, "hmac"), 42,
	      CKR_KEY_FUNCTION_NOT_PERMITTED);
	hkdf1(s, CKM_HKDF_DERIVE, &p, 0x7777777, 42, CKR_KEY_HANDLE_INVALID);
	/* too long: 255 blocks at most */
	hkdf1(s, CKM_HKDF_DERIVE, &p, base, 255 * 32 + 1, CKR_KEY_SIZE_RANGE);
	/* bad parameters */
	{
		CK_HKDF_PARAMS b = p;
		CK_MECHANISM m = { CKM_HKDF_DERIVE, &p, sizeof(p) - 1 };
		CK_OBJECT_HANDLE h;

		CKE(CKR_MECHANISM_PARAM_INVALID,
		    F->C_DeriveKey(s, &m, base, NULL, 0, &h));
		m.pParameter = NULL;
		m.ulParameterLen = 0;
		CKE(CKR_MECHANISM_PARAM_INVALID,
		    F->C_DeriveKey(s, &m, base, NULL, 0, &h));
		b.bExtract = b.bExpand = CK_FALSE;
		hkdf1(s, CKM_HKDF_DERIVE, &b, base, 42,
		      CKR_MECHANISM_PARAM_INVALID);
		b = p;
		b.prfHashMechanism = CKM_MD5;
		hkdf1(s, CKM_HKDF_DERIVE, &b, base, 42,
		      CKR_MECHANISM_PARAM_INVALID);
		b = p;
		b.ulSaltType = 8;
		hkdf1(s, CKM_HKDF_DERIVE, &b, base, 42,
		      CKR_MECHANISM_PARAM_INVALID);
		b = p;
		b.ulSaltType = CKF_HKDF_SALT_DATA;
		b.pSalt = NULL;
		b.ulSaltLen = 13;
		hkdf1(s, CKM_HKDF_DERIVE, &b, base, 42,
		      CKR_MECHANISM_PARAM_INVALID);
		b = p;
		b.ulSaltType = CKF_HKDF_SALT_NULL;
		b.pSalt = salt;
		b.ulSaltLen = 13;
		hkdf1(s, CKM_HKDF_DERIVE, &b, base, 42,
		      CKR_MECHANISM_PARAM_INVALID);
		b = p;
		b.pInfo = NULL;
		b.ulInfoLen = 10;
		hkdf1(s, CKM_HKDF_DERIVE, &b, base, 42,
		      CKR_MECHANISM_PARAM_INVALID);
		b = p;
		b.ulInfoLen = 1UL << 20;
		hkdf1(s, CKM_HKDF_DERIVE, &b, base, 42,
		      CKR_MECHANISM_PARAM_INVALID);
	}
	free(o1);
	free(p1);
	free(o3);
	CK(F->C_CloseSession(s));
}

/* The ANSI X9.63 KDF written out (SEC 1 3.6.1), independent of the
 * module's X963KDF. */
static void x963_ref(const char *md, const uint8_t *z, size_t zl,
		     const uint8_t *info, size_t il, uint8_t *out, size_t len)
{
	const EVP_MD *d = EVP_get_digestbyname(md);
	size_t hl = (size_t)EVP_MD_get_size(d), done = 0;

	for (uint32_t ctr = 1; done < len; ctr++) {
		uint8_t c[4] = { (uint8_t)(ctr >> 24), (uint8_t)(ctr >> 16),
				 (uint8_t)(ctr >> 8), (uint8_t)ctr };
		uint8_t h[64];
		EVP_MD_CTX *x = EVP_MD_CTX_new();

		assert_true(EVP_DigestInit_ex(x, d, NULL) &&
			    EVP_DigestUpdate(x, z, zl) &&
			    EVP_DigestUpdate(x, c, 4) &&
			    (!il || EVP_DigestUpdate(x, info, il)) &&
			    EVP_DigestFinal_ex(x, h, NULL));
		EVP_MD_CTX_free(x);
		memcpy(out + done, h, len - done < hl ? len - done : hl);
		done += len - done < hl ? len - done : hl;
	}
}

/* ECDH with the standard KDFs: CKD_SHA1_KDF ... CKD_SHA512_KDF, with and
 * without shared data, against the KDF written out above. */
static void test_pkcs11__ecdh_kdf(void **state)
{
	static const struct {
		CK_ULONG kdf;
		const char *md;
	} kdfs[] = {
		{ CKD_SHA1_KDF, "SHA1" },     { CKD_SHA224_KDF, "SHA224" },
		{ CKD_SHA256_KDF, "SHA256" }, { CKD_SHA384_KDF, "SHA384" },
		{ CKD_SHA512_KDF, "SHA512" },
	};
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_OBJECT_HANDLE k = one(s, CKO_PRIVATE_KEY, "ec"), out;
	EVP_PKEY *peer = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *x = cert_of(s, "ec");
	uint8_t point[65], z[32], want[100], shared[] = "shared info";
	size_t pl = sizeof(point), zl = sizeof(z);
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = CKK_GENERIC_SECRET;
	CK_BBOOL no = CK_FALSE, yes = CK_TRUE;
	CK_ULONG len;
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_KEY_TYPE, &kt, sizeof(kt) },
		{ CKA_SENSITIVE, &no, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
		{ CKA_VALUE_LEN, &len, sizeof(len) },
	};
	CK_ECDH1_DERIVE_PARAMS p;
	CK_MECHANISM m = { CKM_ECDH1_DERIVE, &p, sizeof(p) };
	EVP_PKEY_CTX *pc;
	CK_ULONG gl;
	uint8_t *got;

	(void)state;
	assert_true(EVP_PKEY_get_octet_string_param(peer,
			OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point), &pl));
	pc = EVP_PKEY_CTX_new(peer, NULL);
	assert_true(EVP_PKEY_derive_init(pc) > 0);
	assert_true(EVP_PKEY_derive_set_peer(pc, X509_get0_pubkey(x)) > 0);
	assert_true(EVP_PKEY_derive(pc, z, &zl) > 0);
	EVP_PKEY_CTX_free(pc);
	memset(&p, 0, sizeof(p));
	p.pPublicData = point;
	p.ulPublicDataLen = pl;
	for (size_t i = 0; i < sizeof(kdfs) / sizeof(kdfs[0]); i++) {
		for (int sd = 0; sd < 2; sd++) {
			p.kdf = kdfs[i].kdf;
			p.pSharedData = sd ? shared : NULL;
			p.ulSharedDataLen = sd ? sizeof(shared) - 1 : 0;
			/* longer than the shared secret and than a digest */
			len = sd ? 100 : 16;
			x963_ref(kdfs[i].md, z, zl, p.pSharedData,
				 p.ulSharedDataLen, want, len);
			CK(F->C_DeriveKey(s, &m, k, t, 5, &out));
			got = attr(s, out, CKA_VALUE, &gl);
			assert_int_equal(gl, len);
			assert_memory_equal(got, want, len);
			free(got);
		}
	}
	/* an AES key through the KDF, of its default length */
	{
		CK_KEY_TYPE aes = CKK_AES;
		CK_ATTRIBUTE ta[] = { { CKA_CLASS, &cls, sizeof(cls) },
				      { CKA_KEY_TYPE, &aes, sizeof(aes) },
				      { CKA_SENSITIVE, &no, 1 },
				      { CKA_EXTRACTABLE, &yes, 1 } };

		p.kdf = CKD_SHA256_KDF;
		p.pSharedData = NULL;
		p.ulSharedDataLen = 0;
		x963_ref("SHA256", z, zl, NULL, 0, want, 32);
		CK(F->C_DeriveKey(s, &m, k, ta, 4, &out));
		got = attr(s, out, CKA_VALUE, &gl);
		assert_int_equal(gl, 32);
		assert_memory_equal(got, want, 32);
		free(got);
	}
	/* the cofactor form: the same on these curves (cofactor 1) */
	{
		CK_MECHANISM cm = { CKM_ECDH1_COFACTOR_DERIVE, &p, sizeof(p) };
		CK_MECHANISM_INFO info;

		CK(F->C_GetMechanismInfo(SLOT_MAIN, CKM_ECDH1_COFACTOR_DERIVE,
					 &info));
		assert_true(info.flags & CKF_DERIVE);
		p.kdf = CKD_SHA384_KDF;
		p.pSharedData = shared;
		p.ulSharedDataLen = 5;
		len = 40;
		x963_ref("SHA384", z, zl, shared, 5, want, len);
		CK(F->C_DeriveKey(s, &cm, k, t, 5, &out));
		got = attr(s, out, CKA_VALUE, &gl);
		assert_int_equal(gl, len);
		assert_memory_equal(got, want, len);
		free(got);
	}
	/* the null KDF stays: no shared data, at most the secret */
	p.kdf = CKD_NULL;
	p.pSharedData = shared;
	p.ulSharedDataLen = 4;
	len = 16;
	CKE(CKR_MECHANISM_PARAM_INVALID, F->C_DeriveKey(s, &m, k, t, 5, &out));
	p.pSharedData = NULL;
	p.ulSharedDataLen = 0;
	CK(F->C_DeriveKey(s, &m, k, t, 5, &out));
	got = attr(s, out, CKA_VALUE, &gl);
	assert_memory_equal(got, z, 16);
	free(got);
	len = 33;
	CKE(CKR_TEMPLATE_INCONSISTENT, F->C_DeriveKey(s, &m, k, t, 5, &out));
	/* unknown KDFs, shared data without a pointer */
	len = 16;
	p.kdf = CKD_SHA1_KDF_ASN1;
	CKE(CKR_MECHANISM_PARAM_INVALID, F->C_DeriveKey(s, &m, k, t, 5, &out));
	p.kdf = CKD_SHA256_KDF;
	p.ulSharedDataLen = 8;
	CKE(CKR_MECHANISM_PARAM_INVALID, F->C_DeriveKey(s, &m, k, t, 5, &out));
	EVP_PKEY_free(peer);
	X509_free(x);
	CK(F->C_CloseSession(s));
}

/* AES-CMAC: NIST SP 800-38B's examples (D.1, D.3), the general form's
 * shorter tag, multi-part, verify, bad parameters. */
static void test_pkcs11__cmac(void **state)
{
	static const char *msg64 =
		"6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
		"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
	static const struct {
		const char *key;
		size_t mlen;
		const char *tag;
	} vec[] = {
		{ "2b7e151628aed2a6abf7158809cf4f3c", 0,
		  "bb1d6929e95937287fa37d129b756746" },
		{ "2b7e151628aed2a6abf7158809cf4f3c", 16,
		  "070a16b46b4d4144f79bdd9dd04a287c" },
		{ "2b7e151628aed2a6abf7158809cf4f3c", 40,
		  "dfa66747de9ae63030ca32611497c827" },
		{ "2b7e151628aed2a6abf7158809cf4f3c", 64,
		  "51f0bebf7e3b9d92fc49741779363cfe" },
		{ "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914"
		  "dff4",
		  16, "28a7023f452e8f82bd4bf28d8c37c35c" },
		{ "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914"
		  "dff4",
		  64, "e1992190549f6ed5696a2c056c315410" },
	};
	CK_SESSION_HANDLE s = user_session(SLOT_MAIN, 0);
	CK_MECHANISM_INFO info;
	CK_MECHANISM cm = { CKM_AES_CMAC, NULL, 0 };
	CK_ULONG glen = 8;
	CK_MECHANISM gm = { CKM_AES_CMAC_GENERAL, &glen, sizeof(glen) };
	size_t ml;
	uint8_t *m = tu_unhex(msg64, &ml), sig[32];
	CK_ULONG n;

	(void)state;
	CK(F->C_GetMechanismInfo(SLOT_MAIN, CKM_AES_CMAC, &info));
	assert_int_equal(info.flags, CKF_SIGN | CKF_VERIFY);
	assert_int_equal(info.ulMinKeySize, 16);
	assert_int_equal(info.ulMaxKeySize, 32);
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t kl, tl;
		uint8_t *kv = tu_unhex(vec[i].key, &kl);
		uint8_t *tag = tu_unhex(vec[i].tag, &tl), *got;
		CK_OBJECT_HANDLE k = mk_secret(s, CKK_AES, kv, kl, 0);
		CK_ULONG gl;

		got = sign1(s, &cm, k, m, vec[i].mlen, &gl);
		assert_int_equal(gl, 16);
		assert_memory_equal(got, tag, 16);
		free(got);
		/* multi-part, in pieces of 7 */
		CK(F->C_SignInit(s, &cm, k));
		for (size_t off = 0; off < vec[i].mlen; off += 7)
			CK(F->C_SignUpdate(s, m + off,
					   vec[i].mlen - off < 7
						   ? vec[i].mlen - off
						   : 7));
		n = sizeof(sig);
		CK(F->C_SignFinal(s, sig, &n));
		assert_int_equal(n, 16);
		assert_memory_equal(sig, tag, 16);
		CK(F->C_VerifyInit(s, &cm, k));
		CK(F->C_Verify(s, m, vec[i].mlen, tag, 16));
		/* the general form: the tag's first bytes */
		got = sign1(s, &gm, k, m, vec[i].mlen, &gl);
		assert_int_equal(gl, 8);
		assert_memory_equal(got, tag, 8);
		free(got);
		CK(F->C_VerifyInit(s, &gm, k));
		CK(F->C_Verify(s, m, vec[i].mlen, tag, 8));
		tag[0] ^= 1;
		CK(F->C_VerifyInit(s, &cm, k));
		CKE(CKR_SIGNATURE_INVALID,
		    F->C_Verify(s, m, vec[i].mlen, tag, 16));
		CK(F->C_VerifyInit(s, &gm, k));
		CKE(CKR_SIGNATURE_LEN_RANGE,
		    F->C_Verify(s, m, vec[i].mlen, tag, 16));
		free(kv);
		free(tag);
	}
	{
		CK_OBJECT_HANDLE k = one(s, CKO_SECRET_KEY, "aes");
		CK_ULONG bad = 17;
		CK_MECHANISM gb = { CKM_AES_CMAC_GENERAL, &bad, sizeof(bad) };
		CK_MECHANISM gs = { CKM_AES_CMAC_GENERAL, &bad, 4 };
		CK_MECHANISM cp = { CKM_AES_CMAC, &bad, sizeof(bad) };
		EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
		EVP_MAC_CTX *mc = EVP_MAC_CTX_new(mac);
		OSSL_PARAM op[2] = {
			OSSL_PARAM_construct_utf8_string("cipher",
							 "AES-256-CBC", 0),
			OSSL_PARAM_construct_end(),
		};
		uint8_t want[16];
		size_t wl = 0;

		/* a token AES key MACs, as OpenSSL computes it */
		assert_true(EVP_MAC_init(mc, aes_key, 32, op) &&
			    EVP_MAC_update(mc, msg, sizeof(msg)) &&
			    EVP_MAC_final(mc, want, &wl, sizeof(want)));
		EVP_MAC_CTX_free(mc);
		EVP_MAC_free(mac);
		CK(F->C_SignInit(s, &cm, k));
		n = 0;
		CK(F->C_Sign(s, msg, sizeof(msg), NULL, &n));
		assert_int_equal(n, 16);
		n = 15;
		CKE(CKR_BUFFER_TOO_SMALL, F->C_Sign(s, msg, sizeof(msg), sig,
						    &n));
		assert_int_equal(n, 16);
		CK(F->C_Sign(s, msg, sizeof(msg), sig, &n));
		assert_memory_equal(sig, want, 16);
		CKE(CKR_MECHANISM_PARAM_INVALID, F->C_SignInit(s, &gb, k));
		bad = 0;
		CKE(CKR_MECHANISM_PARAM_INVALID, F->C_SignInit(s, &gb, k));
		CKE(CKR_MECHANISM_PARAM_INVALID, F->C_SignInit(s, &gs, k));
		CKE(CKR_MECHANISM_PARAM_INVALID, F->C_SignInit(s, &cp, k));
		/* not a MAC key: a generic secret, an AES key without
		 * CKA_SIGN */
		CKE(CKR_KEY_TYPE_INCONSISTENT,
		    F->C_SignInit(s, &cm, one(s, CKO_SECRET_KEY, "hmac")));
		{
			CK_OBJECT_CLASS sec = CKO_SECRET_KEY;
			CK_KEY_TYPE aes = CKK_AES;
			CK_BBOOL no = CK_FALSE;
			CK_ATTRIBUTE t[] = {
				{ CKA_CLASS, &sec, sizeof(sec) },
				{ CKA_KEY_TYPE, &aes, sizeof(aes) },
				{ CKA_VALUE, aes_key, 16 },
				{ CKA_SIGN, &no, 1 },
			};
			CK_OBJECT_HANDLE h;

			CK(F->C_CreateObject(s, t, 4, &h));
			CKE(CKR_KEY_FUNCTION_NOT_PERMITTED,
			    F->C_SignInit(s, &cm, h));
		}
	}
	free(m);
	CK(F->C_CloseSession(s));
}

/* The new mechanisms in test_pkcs11__own_libctx's child, whose default
 * OpenSSL context has only the null provider: DES3, AES key wrap, CMAC,
 * HKDF and the X9.63 KDF all work in the module's own context. */
static void nc_new_mechanisms(CK_SESSION_HANDLE s)
{
	CK_OBJECT_CLASS sec = CKO_SECRET_KEY;
	CK_KEY_TYPE des3 = CKK_DES3, aes = CKK_AES, gen = CKK_GENERIC_SECRET;
	CK_BBOOL yes = CK_TRUE;
	uint8_t v[32] = { 9, 8, 7 }, buf[256], iv[8] = { 1 };
	CK_ATTRIBUTE dt[] = { { CKA_CLASS, &sec, sizeof(sec) },
			      { CKA_KEY_TYPE, &des3, sizeof(des3) },
			      { CKA_VALUE, v, 24 } };
	CK_ATTRIBUTE wt[] = { { CKA_CLASS, &sec, sizeof(sec) },
			      { CKA_KEY_TYPE, &aes, sizeof(aes) },
			      { CKA_VALUE, v, 32 },
			      { CKA_WRAP, &yes, 1 },
			      { CKA_UNWRAP, &yes, 1 },
			      { CKA_EXTRACTABLE, &yes, 1 } };
	CK_ATTRIBUTE gt[] = { { CKA_CLASS, &sec, sizeof(sec) },
			      { CKA_KEY_TYPE, &gen, sizeof(gen) },
			      { CKA_VALUE, v, 32 },
			      { CKA_DERIVE, &yes, 1 } };
	CK_ULONG len = 32;
	CK_ATTRIBUTE out_t[] = { { CKA_CLASS, &sec, sizeof(sec) },
				 { CKA_KEY_TYPE, &gen, sizeof(gen) },
				 { CKA_VALUE_LEN, &len, sizeof(len) } };
	CK_ATTRIBUTE ut[] = { { CKA_CLASS, &sec, sizeof(sec) },
			      { CKA_KEY_TYPE, &aes, sizeof(aes) } };
	CK_MECHANISM cbc = { CKM_DES3_CBC_PAD, iv, 8 };
	CK_MECHANISM kw = { CKM_AES_KEY_WRAP, NULL, 0 };
	CK_MECHANISM cm = { CKM_AES_CMAC, NULL, 0 };
	CK_HKDF_PARAMS hp = { CK_TRUE, CK_TRUE, CKM_SHA256,
			      CKF_HKDF_SALT_DATA, v, 8, 0, v, 4 };
	CK_MECHANISM hk = { CKM_HKDF_DERIVE, &hp, sizeof(hp) };
	CK_OBJECT_HANDLE k, w, g, u;
	CK_ULONG n;

	NC("DES3 key", F->C_CreateObject(s, dt, 3, &k));
	NC("DES3", F->C_EncryptInit(s, &cbc, k));
	n = sizeof(buf);
	NC("DES3", F->C_Encrypt(s, msg, MSG_LEN, buf, &n));
	NC("KW key", F->C_CreateObject(s, wt, 6, &w));
	n = sizeof(buf);
	NC("KW wrap", F->C_WrapKey(s, &kw, w, w, buf, &n));
	NC("KW unwrap", F->C_UnwrapKey(s, &kw, w, buf, n, ut, 2, &u));
	nc_sign_verify(s, &cm, nc_one(s, CKO_SECRET_KEY, "aes"),
		       nc_one(s, CKO_SECRET_KEY, "aes"), "CMAC");
	NC("HKDF key", F->C_CreateObject(s, gt, 4, &g));
	NC("HKDF", F->C_DeriveKey(s, &hk, g, out_t, 3, &u));
	{
		CK_OBJECT_HANDLE ecpub = nc_one(s, CKO_PUBLIC_KEY, "ec");
		uint8_t point[200];
		CK_ATTRIBUTE pa = { CKA_EC_POINT, point, sizeof(point) };
		CK_ECDH1_DERIVE_PARAMS p = { CKD_SHA256_KDF, 4, v, 0, NULL };
		CK_MECHANISM m = { CKM_ECDH1_DERIVE, &p, sizeof(p) };

		NC("EC point", F->C_GetAttributeValue(s, ecpub, &pa, 1));
		p.pPublicData = point;
		p.ulPublicDataLen = pa.ulValueLen;
		NC("ECDH X9.63", F->C_DeriveKey(s, &m, nc_one(s,
				CKO_PRIVATE_KEY, "ec"), out_t, 3, &u));
	}
}

/* Token keys whose template gave CKA_ALLOWED_MECHANISMS (kept in the
 * attribute record) and usage flags: C_WrapKey, C_UnwrapKey and
 * C_DeriveKey enforce both, as the other operations do. */
static void test_pkcs11__new_mechs_allowed(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1);
	CK_OBJECT_CLASS sec = CKO_SECRET_KEY;
	CK_KEY_TYPE aes = CKK_AES, gen = CKK_GENERIC_SECRET;
	CK_BBOOL yes = CK_TRUE;
	CK_MECHANISM_TYPE only_kwp[] = { CKM_AES_KEY_WRAP_PAD };
	CK_MECHANISM_TYPE only_data[] = { CKM_HKDF_DATA };
	CK_MECHANISM_TYPE only_ecdsa[] = { CKM_ECDSA_SHA256 };
	uint8_t kek[16] = { 5 }, ikm[32] = { 6 }, buf[64];
	CK_ATTRIBUTE wt[] = {
		{ CKA_CLASS, &sec, sizeof(sec) },
		{ CKA_KEY_TYPE, &aes, sizeof(aes) },
		{ CKA_TOKEN, &yes, 1 },
		{ CKA_LABEL, "kek-kwp", 7 },
		{ CKA_VALUE, kek, 16 },
		{ CKA_WRAP, &yes, 1 },
		{ CKA_UNWRAP, &yes, 1 },
		{ CKA_ALLOWED_MECHANISMS, only_kwp, sizeof(only_kwp) },
	};
	CK_ATTRIBUTE gt[] = {
		{ CKA_CLASS, &sec, sizeof(sec) },
		{ CKA_KEY_TYPE, &gen, sizeof(gen) },
		{ CKA_TOKEN, &yes, 1 },
		{ CKA_LABEL, "ikm-data", 8 },
		{ CKA_VALUE, ikm, 32 },
		{ CKA_DERIVE, &yes, 1 },
		{ CKA_ALLOWED_MECHANISMS, only_data, sizeof(only_data) },
	};
	CK_MECHANISM kw = { CKM_AES_KEY_WRAP, NULL, 0 };
	CK_MECHANISM kwp = { CKM_AES_KEY_WRAP_PAD, NULL, 0 };
	CK_HKDF_PARAMS hp = { CK_TRUE, CK_TRUE, CKM_SHA256, CKF_HKDF_SALT_NULL,
			      NULL, 0, 0, NULL, 0 };
	CK_OBJECT_HANDLE w, k, g, u;
	CK_ULONG n;

	(void)state;
	CK(F->C_CreateObject(s, wt, 8, &w));
	CK(F->C_CreateObject(s, gt, 7, &g));
	/* a new session finds them with what the record holds */
	CK(F->C_CloseSession(s));
	s = user_session(SLOT_W, 1);
	w = one(s, CKO_SECRET_KEY, "kek-kwp");
	g = one(s, CKO_SECRET_KEY, "ikm-data");
	assert_true(attr_bool(s, w, CKA_WRAP));
	k = mk_secret(s, CKK_AES, ikm, 16, MK_EXTR);
	n = sizeof(buf);
	CKE(CKR_MECHANISM_INVALID, F->C_WrapKey(s, &kw, w, k, buf, &n));
	n = sizeof(buf);
	CK(F->C_WrapKey(s, &kwp, w, k, buf, &n));
	{
		CK_ATTRIBUTE ut[] = { { CKA_CLASS, &sec, sizeof(sec) },
				      { CKA_KEY_TYPE, &aes, sizeof(aes) } };
		uint8_t w24[24];
		CK_ULONG wn = sizeof(w24);
		CK_OBJECT_HANDLE plain_w = mk_secret(s, CKK_AES, kek, 16,
						     MK_WRAP);

		CK(F->C_UnwrapKey(s, &kwp, w, buf, n, ut, 2, &u));
		CK(F->C_WrapKey(s, &kw, plain_w, k, w24, &wn));
		CKE(CKR_MECHANISM_INVALID,
		    F->C_UnwrapKey(s, &kw, w, w24, wn, ut, 2, &u));
	}
	/* the token AES key is still never wrapped */
	n = sizeof(buf);
	CKE(CKR_KEY_UNEXTRACTABLE, F->C_WrapKey(s, &kwp, w, w, buf, &n));
	/* HKDF: only the data form */
	{
		CK_MECHANISM hd = { CKM_HKDF_DERIVE, &hp, sizeof(hp) };
		CK_MECHANISM hdata = { CKM_HKDF_DATA, &hp, sizeof(hp) };
		CK_ULONG len = 32;
		CK_OBJECT_CLASS dcls = CKO_DATA;
		CK_ATTRIBUTE kt[] = { { CKA_CLASS, &sec, sizeof(sec) },
				      { CKA_KEY_TYPE, &gen, sizeof(gen) },
				      { CKA_VALUE_LEN, &len, sizeof(len) } };
		CK_ATTRIBUTE dt[] = { { CKA_CLASS, &dcls, sizeof(dcls) },
				      { CKA_VALUE_LEN, &len, sizeof(len) } };

		CK_ATTRIBUTE tdt[] = { { CKA_CLASS, &dcls, sizeof(dcls) },
				       { CKA_VALUE_LEN, &len, sizeof(len) },
				       { CKA_TOKEN, &yes, 1 },
				       { CKA_LABEL, "hkdf-out", 8 } };
		uint8_t want[32], *v;
		CK_ULONG vl;

		CKE(CKR_MECHANISM_INVALID,
		    F->C_DeriveKey(s, &hd, g, kt, 3, &u));
		CK(F->C_DeriveKey(s, &hdata, g, dt, 2, &u));
		/* a token data object: the attribute record keeps it */
		ossl_hkdf("SHA256", 0, ikm, 32, NULL, 0, NULL, 0, want, 32);
		CK(F->C_DeriveKey(s, &hdata, g, tdt, 4, &u));
		CK(F->C_CloseSession(s));
		s = user_session(SLOT_W, 1);
		u = one(s, CKO_DATA, "hkdf-out");
		assert_true(attr_bool(s, u, CKA_TOKEN));
		assert_true(attr_bool(s, u, CKA_PRIVATE));
		v = attr(s, u, CKA_VALUE, &vl);
		assert_int_equal(vl, 32);
		assert_memory_equal(v, want, 32);
		free(v);
		g = one(s, CKO_SECRET_KEY, "ikm-data");
		w = one(s, CKO_SECRET_KEY, "kek-kwp");
		k = mk_secret(s, CKK_AES, ikm, 16, MK_EXTR);
	}
	/* ECDH from a key that may only sign */
	{
		uint8_t p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
				   0x03, 0x01, 0x07 };
		CK_MECHANISM ecm = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
		CK_ATTRIBUTE pt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_EC_PARAMS, p256, sizeof(p256) } };
		CK_ATTRIBUTE vt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_LABEL, "ec-sign-only", 12 },
				      { CKA_DERIVE, &yes, 1 },
				      { CKA_ALLOWED_MECHANISMS, only_ecdsa,
					sizeof(only_ecdsa) } };
		CK_OBJECT_HANDLE pub, priv;
		uint8_t point[100];
		CK_ATTRIBUTE pa = { CKA_EC_POINT, point, sizeof(point) };
		CK_ECDH1_DERIVE_PARAMS ep = { CKD_SHA256_KDF, 0, NULL, 0,
					      NULL };
		CK_MECHANISM m = { CKM_ECDH1_DERIVE, &ep, sizeof(ep) };
		CK_ULONG len = 32;
		CK_ATTRIBUTE kt[] = { { CKA_CLASS, &sec, sizeof(sec) },
				      { CKA_KEY_TYPE, &gen, sizeof(gen) },
				      { CKA_VALUE_LEN, &len, sizeof(len) } };

		CK(F->C_GenerateKeyPair(s, &ecm, pt, 2, vt, 4, &pub, &priv));
		CK(F->C_GetAttributeValue(s, pub, &pa, 1));
		ep.pPublicData = point;
		ep.ulPublicDataLen = pa.ulValueLen;
		CKE(CKR_MECHANISM_INVALID,
		    F->C_DeriveKey(s, &m, priv, kt, 3, &u));
		/* the same derivation from a key without the list works */
		CK(F->C_DeriveKey(s, &m, one(s, CKO_PRIVATE_KEY, "ec"), kt, 3,
				  &u));
	}
	/* a token key another program deletes is refused at once, as by
	 * every operation init (issue 29 item 8) */
	{
		CK_MECHANISM hdata = { CKM_HKDF_DATA, &hp, sizeof(hp) };
		CK_OBJECT_CLASS dcls = CKO_DATA;
		CK_ULONG len = 32;
		CK_ATTRIBUTE dt[] = { { CKA_CLASS, &dcls, sizeof(dcls) },
				      { CKA_VALUE_LEN, &len, sizeof(len) } };
		wks_store *st = load_w(PIN);

		TU_OK(wks_store_delete(st, "ikm-data"));
		TU_OK(wks_store_delete(st, "kek-kwp"));
		TU_OK(wks_store_save_file(st, w_store, PIN, PIN_LEN));
		wks_store_free(st);
		CKE(CKR_KEY_HANDLE_INVALID,
		    F->C_DeriveKey(s, &hdata, g, dt, 2, &u));
		n = sizeof(buf);
		CKE(CKR_WRAPPING_KEY_HANDLE_INVALID,
		    F->C_WrapKey(s, &kwp, w, k, buf, &n));
	}
	CK(F->C_CloseSession(s));
}

/* Issue 30 item 1: token data objects, kept in the attribute record
 * (the .wks file's bytes stay as they are). */
static void test_pkcs11__token_data_objects(void **state)
{
	CK_SESSION_HANDLE s = user_session(SLOT_W, 1), s2;
	CK_OBJECT_CLASS dc = CKO_DATA;
	CK_BBOOL yes = CK_TRUE;
	uint8_t val[] = "token data";
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &dc, sizeof(dc) },
		{ CKA_TOKEN, &yes, 1 },
		{ CKA_LABEL, "td", 2 },
		{ CKA_APPLICATION, "app", 3 },
		{ CKA_VALUE, val, sizeof(val) - 1 },
	};
	CK_ATTRIBUTE pt[] = {
		{ CKA_CLASS, &dc, sizeof(dc) },
		{ CKA_TOKEN, &yes, 1 },
		{ CKA_PRIVATE, &yes, 1 },
		{ CKA_LABEL, "tdp", 3 },
	};
	CK_ATTRIBUTE nv[] = { { CKA_VALUE, "changed", 7 } };
	CK_ATTRIBUTE ro[] = { { CKA_PRIVATE, &yes, 1 } };
	CK_OBJECT_HANDLE d, p, h[4];
	CK_ULONG len;
	uint8_t *v, *before, *after;
	size_t bn, an;

	(void)state;
	before = tu_read_file(w_store, &bn);
	CK(F->C_CreateObject(s, t, 5, &d));
	CK(F->C_CreateObject(s, pt, 4, &p));
	assert_true(attr_bool(s, d, CKA_TOKEN));
	/* another process sees them: the public one without a login */
	F->C_Finalize(NULL);
	CK(F->C_Initialize(NULL));
	s2 = open_session(SLOT_W, 0);
	assert_int_equal(find_cls(s2, CKO_DATA, "td", h, 4), 1);
	assert_int_equal(find_cls(s2, CKO_DATA, "tdp", h, 4), 0);
	v = attr(s2, one(s2, CKO_DATA, "td"), CKA_VALUE, &len);
	assert_int_equal(len, sizeof(val) - 1);
	assert_memory_equal(v, val, len);
	free(v);
	CK(F->C_CloseSession(s2));
	s = user_session(SLOT_W, 1);
	assert_int_equal(find_cls(s, CKO_DATA, "tdp", h, 4), 1);
	d = one(s, CKO_DATA, "td");
	CK(F->C_SetAttributeValue(s, d, nv, 1));
	CKE(CKR_ATTRIBUTE_READ_ONLY, F->C_SetAttributeValue(s, d, ro, 1));
	s = fresh_user(SLOT_W);
	d = one(s, CKO_DATA, "td");
	v = attr(s, d, CKA_VALUE, &len);
	assert_int_equal(len, 7);
	assert_memory_equal(v, "changed", 7);
	free(v);
	CK(F->C_DestroyObject(s, d));
	CK(F->C_DestroyObject(s, one(s, CKO_DATA, "tdp")));
	s = fresh_user(SLOT_W);
	assert_int_equal(find_cls(s, CKO_DATA, NULL, h, 4), 0);
	CK(F->C_CloseSession(s));
	/* the store's own bytes did not change for any of it */
	after = tu_read_file(w_store, &an);
	assert_int_equal(an, bn);
	assert_memory_equal(after, before, bn);
	free(before);
	free(after);
	wksdump_ok(w_store, PIN);
}

/* Issue 30 item 1 with the shared login: a process that takes a login
 * over gets the attribute record's key with it (no PBKDF2 for the
 * record either), and the record's attributes of the private keys. */
static void test_pkcs11__share_record_key(void **state)
{
	char store[700], serial[17];
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	CK_BBOOL yes = CK_TRUE;
	uint8_t p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03,
			   0x01, 0x07 };
	CK_MECHANISM_TYPE allowed[] = { CKM_ECDSA_SHA256 };
	CK_MECHANISM ecm = { CKM_EC_KEY_PAIR_GEN, NULL, 0 };
	CK_OBJECT_HANDLE pub, priv;
	CK_ULONG n;
	uint8_t *v;
	long id;

	(void)state;
	id = syscall(SYS_add_key, "user", "libwks-test-probe", "x", (size_t)1,
		     KEY_SPEC_USER_KEYRING);
	if (id < 0) {
		print_message("SKIP: no kernel keyring here (%s)\n",
			      strerror(errno));
		skip();
	}
	syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
	snprintf(store, sizeof(store), "%s/shared-rec.wks", dir);
	copy_file(main_store, store);
	share_init(store, 1, &slot, serial);
	s = user_session(slot, 1);
	{
		CK_ATTRIBUTE pt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_EC_PARAMS, p256, sizeof(p256) } };
		CK_ATTRIBUTE vt[] = { { CKA_TOKEN, &yes, 1 },
				      { CKA_LABEL, "sh-rec", 6 },
				      { CKA_ALLOWED_MECHANISMS, allowed,
					sizeof(allowed) } };

		CK(F->C_GenerateKeyPair(s, &ecm, pt, 2, vt, 3, &pub, &priv));
	}
	/* a fresh module instance takes the login over */
	log_clear();
	share_init(store, 1, &slot, serial);
	s = open_session(slot, 0);
	assert_int_equal(state_of(s), CKS_RO_USER_FUNCTIONS);
	assert_true(log_has("shared login taken over"));
	v = attr(s, one(s, CKO_PRIVATE_KEY, "sh-rec"), CKA_ALLOWED_MECHANISMS,
		 &n);
	assert_int_equal(n, sizeof(allowed));
	free(v);
	{
		size_t ln;
		char *p = (char *)tu_read_file(debug_log, &ln);

		p = realloc(p, ln + 1);
		assert_non_null(p);
		p[ln] = '\0';
		if (strstr(p, "attribute record's MAC key derived"))
			fail_msg("the record's key was derived again:\n%s", p);
		free(p);
	}
	CK(F->C_Logout(s));
	unlink(store);
}

/* ---- issue 29 item 26 (fuzz/fuzz_pkcs11_calls.c found it) --------------- */

/* A search begun while logged in and continued after C_Logout returns no
 * private object: after a logout none is visible in any session
 * (fuzz/regressions/pkcs11_calls/find-across-logout-private). */
static void test_pkcs11__find_across_logout(void **state)
{
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_ATTRIBUTE t = { CKA_CLASS, &cls, sizeof(cls) };
	CK_SESSION_HANDLE s, s2;
	CK_OBJECT_HANDLE h[64];
	CK_ULONG n = 0, pub = 0, all = 0;

	(void)state;
	s = user_session(SLOT_MAIN, 0);
	s2 = open_session(SLOT_MAIN, 0);
	/* the secret keys, found in s, not yet read; everything in s2 */
	CK(F->C_FindObjectsInit(s, &t, 1));
	CK(F->C_FindObjectsInit(s2, NULL, 0));
	CK(F->C_Logout(s));
	CK(F->C_FindObjects(s, h, 64, &n));
	assert_int_equal(n, 0);
	CK(F->C_FindObjectsFinal(s));
	/* the other session's search goes on with the public objects only */
	CK(F->C_FindObjects(s2, h, 64, &n));
	for (CK_ULONG i = 0; i < n; i++)
		assert_false(attr_bool(s2, h[i], CKA_PRIVATE));
	CK(F->C_FindObjectsFinal(s2));
	pub = find(s2, NULL, 0, h, 64);
	assert_int_equal(n, pub);
	/* and a search begun logged out sees what it saw, logged in again */
	CK(F->C_FindObjectsInit(s2, NULL, 0));
	CK(F->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN, PIN_LEN));
	CK(F->C_FindObjects(s2, h, 64, &all));
	assert_int_equal(all, pub);
	CK(F->C_FindObjectsFinal(s2));
	CK(F->C_CloseSession(s2));
	CK(F->C_CloseSession(s));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(test_pkcs11__##name, setup, \
						  teardown)
		T(interfaces),
		T(init_args),
		T(bad_configuration),
		cmocka_unit_test(test_pkcs11__config_parser),
		T(slots_and_tokens),
		T(public_objects),
		T(login),
		T(sign_rsa),
		T(sign_ec_ed),
		T(always_authenticate),
		T(crypt_rsa),
		T(crypt_aes),
		T(hmac_digest_random),
		T(mechanisms),
		T(ecdh),
		T(create_objects),
		T(generate),
		T(destroy_rename_copy),
		T(copy_to_token),
		T(set_pin_and_init_token),
		T(other_programs),
		T(wolfjce_stores),
		T(threads),
		T(fork),
		T(shared_login),
		T(copy_cannot_loosen),
		T(template_shapes),
		T(unique_ids),
		T(data_objects),
		T(init_reserved),
		T(seed_random),
		T(reload_secret_identity),
		T(deleted_key_refused),
		T(replaced_key_refused),
		T(chain_shared_intermediate),
		/* issue 29 items 12, 13, 14, 18, 19, 21 */
		T(own_libctx),
		T(missing_store),
		T(same_store),
		T(relative_conf),
		T(own_key_password_log),
		T(unusable_stores),
		T(share_logout_wins),
		T(share_deadline_kept),
		T(share_ttl_bound),
		T(share_logout_tool),
		T(share_setuid),
		T(attribute_record),
		T(attribute_record_absent),
		T(token_data_objects),
		T(share_record_key),
		T(certificates_leaf),
		T(no_allowed_mechanisms),
		T(own_edits_keep_handles),
		/* issue 30 item 2 (mechanisms) */
		T(des3),
		T(key_wrap),
		T(hkdf),
		T(ecdh_kdf),
		T(cmac),
		T(new_mechs_allowed),
		T(find_across_logout),
#undef T
	};

	/* WKS_TEST_FILTER=PATTERN: only the tests whose names match (e.g.
	 * "*copy*", to check one test against an older module) */
	if (getenv("WKS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("WKS_TEST_FILTER"));
	return cmocka_run_group_tests_name("pkcs11", tests, group_setup,
					   group_teardown);
}
