/*
 * wks-p11-bench: the PKCS#11 module (libwks-pkcs11.so) against OpenSSL
 * and SoftHSM2 with the same keys, its login, and a fresh process's first
 * signature directly and through p11-kit's client and server, on its
 * socket and forwarded (a token used from another host).
 *
 *   wks-p11-bench [-secs S] [-rounds R] [-procs P] [-iter N]
 *                 [-module PATH] [-softhsm PATH|none]
 *                 [-client PATH|none] [-p11kit PATH] [-parts 1234]
 *                 [-forward CMD] [-quick]
 *
 * Makes an RSA-2048 and an EC P-256 key and, in a temporary folder, a WKS
 * store "sign" holding both (aliases rsa and ec, self-signed
 * certificates), a copy "shared" of it, stores "k1" and "k20" of 1 and
 * 20 P-256 keys, all at N
 * PBKDF2 iterations (default 210000, a user's default), a module
 * configuration naming the three as tokens, and a SoftHSM2 token (its own
 * SOFTHSM2_CONF in the folder) holding the same two keys, imported with
 * C_CreateObject as token objects.  Then prints:
 *
 * 1. C_Sign throughput (signatures per second) with 1 and 2 threads, each
 *    thread its own session, for CKM_SHA256_RSA_PKCS (32-byte message),
 *    CKM_RSA_PKCS (a SHA-256 DigestInfo) and CKM_ECDSA (a 32-byte
 *    digest): the module and SoftHSM2 run C_SignInit + C_Sign per
 *    signature; OpenSSL runs EVP_PKEY_sign() (after EVP_Digest() for the
 *    combined mechanism) on a context made once per thread, its fastest
 *    use.  Each figure is the best of R windows of S seconds (default 3 x
 *    1 s), the three interleaved within each round, so a ratio compares
 *    figures taken under the same load.  Goals: module / OpenSSL >= 0.9,
 *    module / SoftHSM2 >= 1.
 * 2. C_Login on k1 and k20, and the first C_Sign after it (C_FindObjects
 *    of the key, C_SignInit, C_Sign with CKM_ECDSA): R logins each, after
 *    a C_Logout; the first login of the process and the median.
 * 3. The first signature of a fresh process (P of each, default 5):
 *    the bench fork()s and exec()s itself with a mode flag; the child
 *    dlopen()s a module, C_Initialize, finds the token, opens a session,
 *    C_Login (CKR_USER_ALREADY_LOGGED_IN accepted), finds the key "ec"
 *    and signs with CKM_ECDSA, and reports its clock readings through a
 *    pipe.  "spawn" is from before fork() to the signature (exec and the
 *    bench's own dynamic linking included); "dlopen" is from the child's
 *    dlopen() to the signature.  Two ways:
 *      direct  libwks-pkcs11.so itself (the store opened by the child:
 *              one PBKDF2 for the store's MAC, one for the key);
 *      p11-kit p11-kit-client.so to a `p11-kit server -f --provider
 *              MODULE pkcs11:token=sign` the bench starts (and stops),
 *              and the same with SoftHSM2 as the provider (a control:
 *              its login costs next to nothing, so what remains is
 *              p11-kit's transport),
 *              while another client of that server holds a logged-in
 *              session all along; the child says whether its new session
 *              was logged in already;
 *    and both again ("wks shared", "wks shared kit") for a token
 *    "shared" (a copy of "sign" with `shared-login = yes`, docs/PKCS11.md
 *    "Shared login"), while a process holds a login of it: directly, and
 *    through the p11-kit server, whose per-connection p11-kit-remote
 *    takes the login over from the user's keyring.
 *
 * 4. With -forward CMD: the token "sign" through `p11-kit server` (the
 *    bench starts it), by p11-kit-client.so on the server's own socket
 *    ("local socket") and on a socket forwarded to it ("forwarded"):
 *    CMD, run by sh -c in a process group of its own (killed at the
 *    end), must make a Unix socket at $LOCAL_SOCKET that leads to
 *    $REMOTE_SOCKET, e.g. `ssh -N -L "$LOCAL_SOCKET:$REMOTE_SOCKET" host`
 *    (bench/wks-p11-remote.sh starts an sshd on loopback for it).  For
 *    each: the first signature of P fresh processes, as in 3 (no other
 *    client holds a login), and the signatures per second of one fresh
 *    client process (CKM_SHA256_RSA_PKCS, then CKM_ECDSA, one session,
 *    after a first signature), best of R windows of S seconds, local and
 *    forwarded interleaved; then the first signatures of token "shared"
 *    (shared-login = yes) the same two ways, while a client of the local
 *    socket holds the login.
 *
 * -parts: which of the four to run (default all; 4 only with -forward).  -quick: 0.05 s
 * windows, 1 round, 1 process, 10000 iterations (a smoke run).  A
 * part whose program is missing (SoftHSM2, p11-kit) is skipped with a
 * note.  The load average is printed with the figures.
 */
#define _GNU_SOURCE 1 /* getloadavg(), setenv(), mkdtemp() */
#define BENCH_NAME "wks-p11-bench"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <openssl/core_names.h>
#include <openssl/rsa.h>

#include "benchutil.h"

#include <p11-kit/pkcs11.h>

#ifndef WKS_P11_BENCH_MODULE
#define WKS_P11_BENCH_MODULE "libwks-pkcs11.so"
#endif

#define MAX_ROUNDS 25
#define FIND_TRUSTED 124 /* + 20 keys' certificates: 144 */
#define MAX_PROCS 50

static const char PIN[] = "p11-bench-pin";
static const char SO_PIN[] = "p11-bench-so-pin";

static double secs = 1.0;
static int rounds = 3, procs = 5;
static char iterations[16] = "210000";
static const char *module = WKS_P11_BENCH_MODULE;
static const char *softhsm = "/usr/lib/softhsm/libsofthsm2.so";
static const char *client =
	"/usr/lib/x86_64-linux-gnu/pkcs11/p11-kit-client.so";
static const char *p11kit = "p11-kit";
static char dir[PATH_MAX];
static const char *parts = "12345";

/* ---- PKCS#11 helpers ------------------------------------------------------ */

static void ck(CK_RV rv, const char *what)
{
	if (rv != CKR_OK) {
		fprintf(stderr, "%s: %s: CKR 0x%lx\n", BENCH_NAME, what,
			(unsigned long)rv);
		exit(1);
	}
}

static CK_FUNCTION_LIST_PTR p11_load(const char *path)
{
	CK_C_INITIALIZE_ARGS args = { .flags = CKF_OS_LOCKING_OK };
	CK_C_GetFunctionList gfl;
	CK_FUNCTION_LIST_PTR f = NULL;
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		fprintf(stderr, "%s: dlopen: %s\n", BENCH_NAME, dlerror());
		exit(1);
	}
	gfl = (CK_C_GetFunctionList)(uintptr_t)dlsym(lib, "C_GetFunctionList");
	if (!gfl)
		die("no C_GetFunctionList");
	ck(gfl(&f), "C_GetFunctionList");
	ck(f->C_Initialize(&args), "C_Initialize");
	return f; /* never unloaded */
}

/* The slot whose token has this label. */
static CK_SLOT_ID slot_of(CK_FUNCTION_LIST_PTR f, const char *label)
{
	CK_SLOT_ID slots[64];
	CK_ULONG n = 64, i;
	CK_TOKEN_INFO ti;
	char want[32];

	memset(want, ' ', sizeof(want));
	memcpy(want, label, strlen(label));
	ck(f->C_GetSlotList(CK_TRUE, slots, &n), "C_GetSlotList");
	for (i = 0; i < n; i++)
		if (f->C_GetTokenInfo(slots[i], &ti) == CKR_OK &&
		    !memcmp(ti.label, want, sizeof(want)))
			return slots[i];
	fprintf(stderr, "%s: no token %s\n", BENCH_NAME, label);
	exit(1);
}

static CK_OBJECT_HANDLE find_key(CK_FUNCTION_LIST_PTR f,
				 CK_SESSION_HANDLE s, const char *label)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t[] = { { CKA_CLASS, &cls, sizeof(cls) },
			     { CKA_LABEL, (void *)label, strlen(label) } };
	CK_OBJECT_HANDLE h = CK_INVALID_HANDLE;
	CK_ULONG n = 0;

	ck(f->C_FindObjectsInit(s, t, 2), "C_FindObjectsInit");
	ck(f->C_FindObjects(s, &h, 1, &n), "C_FindObjects");
	ck(f->C_FindObjectsFinal(s), "C_FindObjectsFinal");
	if (n != 1) {
		fprintf(stderr, "%s: no private key %s\n", BENCH_NAME, label);
		exit(1);
	}
	return h;
}

static void login(CK_FUNCTION_LIST_PTR f, CK_SESSION_HANDLE s,
		  CK_USER_TYPE who, const char *pin)
{
	CK_RV rv = f->C_Login(s, who, (CK_UTF8CHAR_PTR)pin, strlen(pin));

	if (rv != CKR_USER_ALREADY_LOGGED_IN)
		ck(rv, "C_Login");
}

/* ---- the keys, the stores and the tokens ---------------------------------- */

static EVP_PKEY *rsa_key, *ec_key;

/* Trusted certificates "ca%03d" in save_store()'s next store (part 5). */
static int n_trusted;
static const char *store_iterations; /* NULL: -iter's */

static void save_store(const char *name, EVP_PKEY **keys, const char **aliases,
		       size_t n)
{
	char path[PATH_MAX + 32];
	wks_store *st = NULL;
	size_t i;

	if (wks_store_new(&st) < 0 ||
	    wks_store_set_property(st, "wolfjce.wks.iterationCount",
				   store_iterations ? store_iterations
						    : iterations) < 0)
		die("a store");
	for (i = 0; i < (size_t)n_trusted; i++) {
		char cn[32];
		X509 *x;

		snprintf(cn, sizeof(cn), "ca%03u", (unsigned)i);
		x = bench_cert(keys[i % n], cn, (long)i + 1000);
		if (wks_store_set_cert(st, cn, x) < 0)
			die("wks_store_set_cert");
		X509_free(x);
	}
	if (n > 1 && wks_store_prepare_keys(st, PIN, strlen(PIN), n) < 0)
		die("wks_store_prepare_keys");
	for (i = 0; i < n; i++) {
		X509 *x = bench_cert(keys[i], aliases[i], (long)i + 1);

		if (wks_store_set_pkey(st, aliases[i], keys[i], &x, 1, PIN,
				       strlen(PIN)) < 0)
			die("wks_store_set_pkey");
		X509_free(x);
	}
	snprintf(path, sizeof(path), "%s/%s.wks", dir, name);
	if (wks_store_save_file(st, path, PIN, strlen(PIN)) < 0)
		die("wks_store_save_file");
	wks_store_free(st);
}

static void make_stores(void)
{
	EVP_PKEY *k20[20];
	const char *a20[20];
	char names[20][16], path[PATH_MAX + 32];
	const char *sign_aliases[] = { "rsa", "ec" };
	EVP_PKEY *sign_keys[2];
	FILE *f;
	int i;

	if (!(rsa_key = EVP_RSA_gen(2048)) || !(ec_key = EVP_EC_gen("P-256")))
		die("key generation");
	sign_keys[0] = rsa_key;
	sign_keys[1] = ec_key;
	save_store("sign", sign_keys, sign_aliases, 2);
	for (i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "key%03d", i);
		a20[i] = names[i];
		if (!(k20[i] = EVP_EC_gen("P-256")))
			die("EVP_EC_gen");
	}
	/* the token with shared-login = yes: a store of its own (the
	 * keyring record is named by the store) */
	save_store("shared", sign_keys, sign_aliases, 2);
	save_store("k1", k20, a20, 1);
	save_store("k20", k20, a20, 20);
	/* part 5: 20 keys (each with its certificate) and 124 trusted
	 * certificates, 144 certificates in all; twice, for a token with an
	 * attribute record and one without */
	n_trusted = FIND_TRUSTED;
	store_iterations = "10000";
	save_store("find0", k20, a20, 20);
	save_store("find1", k20, a20, 20);
	n_trusted = 0;
	store_iterations = NULL;
	for (i = 0; i < 20; i++)
		EVP_PKEY_free(k20[i]);
	snprintf(path, sizeof(path), "%s/wks-pkcs11.conf", dir);
	if (!(f = fopen(path, "w")))
		die("writing the module's configuration");
	fprintf(f, "[token]\nlabel = sign\nstore = sign.wks\n\n"
		   "[token]\nlabel = k1\nstore = k1.wks\n\n"
		   "[token]\nlabel = k20\nstore = k20.wks\n\n"
		   "[token]\nlabel = shared\nstore = shared.wks\n"
		   "shared-login = yes\n\n"
		   "[token]\nlabel = find0\nstore = find0.wks\n\n"
		   "[token]\nlabel = find1\nstore = find1.wks\n");
	fclose(f);
	setenv("WKS_PKCS11_CONF", path, 1);
}

/* An attribute holding a BIGNUM parameter of key (big-endian, owned). */
static CK_ATTRIBUTE bn_attr(CK_ATTRIBUTE_TYPE type, EVP_PKEY *key,
			    const char *param, int pad)
{
	BIGNUM *bn = NULL;
	CK_ATTRIBUTE a = { type, NULL, 0 };
	int len;

	if (!EVP_PKEY_get_bn_param(key, param, &bn))
		die("EVP_PKEY_get_bn_param");
	len = pad ? pad : BN_num_bytes(bn);
	if (!(a.pValue = malloc((size_t)len)) ||
	    BN_bn2binpad(bn, a.pValue, len) != len)
		die("BN_bn2binpad");
	a.ulValueLen = (CK_ULONG)len;
	BN_free(bn);
	return a;
}

/* SoftHSM2: a token in DIR/softhsm with both keys as token objects,
 * logged in through *sess (kept open: the login lasts while it does). */
static CK_FUNCTION_LIST_PTR softhsm_token(CK_SLOT_ID *slot,
					  CK_SESSION_HANDLE *sess)
{
	static const CK_BYTE p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
					0x3d, 0x03, 0x01, 0x07 };
	char path[PATH_MAX + 32], tokdir[PATH_MAX + 32];
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_KEY_TYPE rsa = CKK_RSA, ec = CKK_EC;
	CK_BBOOL yes = CK_TRUE;
	CK_UTF8CHAR label[32];
	CK_SLOT_ID slots[16];
	CK_ULONG n = 16;
	CK_OBJECT_HANDLE h;
	CK_FUNCTION_LIST_PTR f;
	FILE *cf = NULL;
	int i;

	snprintf(tokdir, sizeof(tokdir), "%s/softhsm", dir);
	snprintf(path, sizeof(path), "%s/softhsm2.conf", dir);
	if (mkdir(tokdir, 0700) < 0 || !(cf = fopen(path, "w")))
		die("SoftHSM2's folder");
	fprintf(cf, "directories.tokendir = %s\nobjectstore.backend = file\n"
		    "log.level = ERROR\n", tokdir);
	fclose(cf);
	setenv("SOFTHSM2_CONF", path, 1);
	f = p11_load(softhsm);
	ck(f->C_GetSlotList(CK_FALSE, slots, &n), "C_GetSlotList");
	if (!n)
		die("SoftHSM2 has no slot");
	memset(label, ' ', sizeof(label));
	memcpy(label, "bench", 5);
	ck(f->C_InitToken(slots[0], (CK_UTF8CHAR_PTR)SO_PIN, strlen(SO_PIN),
			  label),
	   "C_InitToken");
	*slot = slot_of(f, "bench"); /* SoftHSM2 renumbers it */
	ck(f->C_OpenSession(*slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL,
			    NULL, sess),
	   "C_OpenSession");
	login(f, *sess, CKU_SO, SO_PIN);
	ck(f->C_InitPIN(*sess, (CK_UTF8CHAR_PTR)PIN, strlen(PIN)), "C_InitPIN");
	ck(f->C_Logout(*sess), "C_Logout");
	login(f, *sess, CKU_USER, PIN);
	{
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &cls, sizeof(cls) },
			{ CKA_KEY_TYPE, &rsa, sizeof(rsa) },
			{ CKA_TOKEN, &yes, 1 },
			{ CKA_PRIVATE, &yes, 1 },
			{ CKA_SENSITIVE, &yes, 1 },
			{ CKA_SIGN, &yes, 1 },
			{ CKA_LABEL, "rsa", 3 },
			{ CKA_ID, "\x01", 1 },
			bn_attr(CKA_MODULUS, rsa_key, OSSL_PKEY_PARAM_RSA_N, 0),
			bn_attr(CKA_PUBLIC_EXPONENT, rsa_key,
				OSSL_PKEY_PARAM_RSA_E, 0),
			bn_attr(CKA_PRIVATE_EXPONENT, rsa_key,
				OSSL_PKEY_PARAM_RSA_D, 0),
			bn_attr(CKA_PRIME_1, rsa_key,
				OSSL_PKEY_PARAM_RSA_FACTOR1, 0),
			bn_attr(CKA_PRIME_2, rsa_key,
				OSSL_PKEY_PARAM_RSA_FACTOR2, 0),
			bn_attr(CKA_EXPONENT_1, rsa_key,
				OSSL_PKEY_PARAM_RSA_EXPONENT1, 0),
			bn_attr(CKA_EXPONENT_2, rsa_key,
				OSSL_PKEY_PARAM_RSA_EXPONENT2, 0),
			bn_attr(CKA_COEFFICIENT, rsa_key,
				OSSL_PKEY_PARAM_RSA_COEFFICIENT1, 0),
		};

		ck(f->C_CreateObject(*sess, t, sizeof(t) / sizeof(t[0]), &h),
		   "C_CreateObject (RSA)");
		for (i = 8; i < (int)(sizeof(t) / sizeof(t[0])); i++)
			OPENSSL_clear_free(t[i].pValue, t[i].ulValueLen);
	}
	{
		CK_ATTRIBUTE t[] = {
			{ CKA_CLASS, &cls, sizeof(cls) },
			{ CKA_KEY_TYPE, &ec, sizeof(ec) },
			{ CKA_TOKEN, &yes, 1 },
			{ CKA_PRIVATE, &yes, 1 },
			{ CKA_SENSITIVE, &yes, 1 },
			{ CKA_SIGN, &yes, 1 },
			{ CKA_LABEL, "ec", 2 },
			{ CKA_ID, "\x02", 1 },
			{ CKA_EC_PARAMS, (void *)p256, sizeof(p256) },
			bn_attr(CKA_VALUE, ec_key, OSSL_PKEY_PARAM_PRIV_KEY, 32),
		};

		ck(f->C_CreateObject(*sess, t, sizeof(t) / sizeof(t[0]), &h),
		   "C_CreateObject (EC)");
		OPENSSL_clear_free(t[9].pValue, t[9].ulValueLen);
	}
	return f;
}

/* ---- 1. throughput -------------------------------------------------------- */

enum { M_SHA256_RSA, M_RSA_PKCS, M_ECDSA, M_N };
static const char *const mech_names[M_N] = {
	"RSA-2048 CKM_SHA256_RSA_PKCS", "RSA-2048 CKM_RSA_PKCS (DigestInfo)",
	"P-256 CKM_ECDSA (32-byte digest)"
};
static const CK_MECHANISM_TYPE mech_types[M_N] = { CKM_SHA256_RSA_PKCS,
						   CKM_RSA_PKCS, CKM_ECDSA };

enum { B_OPENSSL, B_WKS, B_SOFTHSM, B_N };
static const char *const backend_names[B_N] = { "OpenSSL", "libwks-pkcs11",
						"SoftHSM2" };

typedef struct {
	CK_FUNCTION_LIST_PTR f; /* NULL: OpenSSL itself */
	CK_SLOT_ID slot;
	CK_OBJECT_HANDLE rsa, ec;
} backend;

static backend backends[B_N];

static unsigned char msg[32], digestinfo[51];

typedef struct {
	const backend *b;
	int mech;
	pthread_barrier_t *go;
	double end; /* ms */
	long ops;
} worker;

static void input_of(int mech, const unsigned char **in, size_t *len)
{
	*in = mech == M_RSA_PKCS ? digestinfo : msg;
	*len = mech == M_RSA_PKCS ? sizeof(digestinfo) : sizeof(msg);
}

static void *run_openssl(worker *w)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(
		NULL, w->mech == M_ECDSA ? ec_key : rsa_key, NULL);
	unsigned char sig[512], md[32];
	const unsigned char *in;
	size_t len, n;
	double deadline;

	input_of(w->mech, &in, &len);
	if (!ctx || EVP_PKEY_sign_init(ctx) <= 0 ||
	    (w->mech != M_ECDSA &&
	     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0) ||
	    (w->mech == M_SHA256_RSA &&
	     EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) <= 0))
		die("an OpenSSL signing context");
	pthread_barrier_wait(w->go);
	deadline = now_ms() + secs * 1e3;
	do {
		const unsigned char *tbs = in;
		size_t tbs_len = len;

		if (w->mech == M_SHA256_RSA) {
			if (!EVP_Digest(in, len, md, NULL, EVP_sha256(), NULL))
				die("EVP_Digest");
			tbs = md;
			tbs_len = sizeof(md);
		}
		n = sizeof(sig);
		if (EVP_PKEY_sign(ctx, sig, &n, tbs, tbs_len) <= 0)
			die("EVP_PKEY_sign");
		w->ops++;
	} while ((w->end = now_ms()) < deadline);
	EVP_PKEY_CTX_free(ctx);
	return NULL;
}

static void *run_p11(worker *w)
{
	const backend *b = w->b;
	CK_FUNCTION_LIST_PTR f = b->f;
	CK_MECHANISM m = { mech_types[w->mech], NULL, 0 };
	CK_OBJECT_HANDLE key = w->mech == M_ECDSA ? b->ec : b->rsa;
	CK_SESSION_HANDLE s;
	unsigned char sig[512];
	const unsigned char *in;
	size_t len;
	double deadline;

	input_of(w->mech, &in, &len);
	ck(f->C_OpenSession(b->slot, CKF_SERIAL_SESSION, NULL, NULL, &s),
	   "C_OpenSession");
	pthread_barrier_wait(w->go);
	deadline = now_ms() + secs * 1e3;
	do {
		CK_ULONG n = sizeof(sig);

		ck(f->C_SignInit(s, &m, key), "C_SignInit");
		ck(f->C_Sign(s, (CK_BYTE_PTR)in, len, sig, &n), "C_Sign");
		w->ops++;
	} while ((w->end = now_ms()) < deadline);
	ck(f->C_CloseSession(s), "C_CloseSession");
	return NULL;
}

static void *run_worker(void *arg)
{
	worker *w = arg;

	return w->b->f ? run_p11(w) : run_openssl(w);
}

/* Signatures per second of backend b, mechanism mech, on nt threads. */
static double throughput(const backend *b, int mech, int nt)
{
	pthread_barrier_t go;
	pthread_t th[2];
	worker w[2];
	double t0, end = 0;
	long ops = 0;
	int i;

	pthread_barrier_init(&go, NULL, (unsigned)nt + 1);
	for (i = 0; i < nt; i++) {
		w[i] = (worker){ .b = b, .mech = mech, .go = &go };
		if (pthread_create(&th[i], NULL, run_worker, &w[i]))
			die("pthread_create");
	}
	pthread_barrier_wait(&go);
	t0 = now_ms();
	for (i = 0; i < nt; i++) {
		pthread_join(th[i], NULL);
		ops += w[i].ops;
		if (w[i].end > end)
			end = w[i].end;
	}
	pthread_barrier_destroy(&go);
	return (double)ops / ((end - t0) / 1e3);
}

/* One signature per backend and mechanism before the clock runs: the
 * module decrypts a key at its first use in a login (a PBKDF2), which
 * belongs to part 2, not to a throughput window. */
static void warm_up(void)
{
	int b, m;

	secs = 0;
	for (b = B_WKS; b < B_N; b++)
		for (m = 0; m < M_N; m++)
			if (backends[b].f)
				throughput(&backends[b], m, 1);
}

static void part_throughput(void)
{
	double window = secs;
	double best[M_N][2][B_N] = { { { 0 } } };
	int m, t, b, r;

	printf("\n1. C_Sign throughput, signatures/s (best of %d x %.2f s; "
	       "OpenSSL: EVP_PKEY_sign on a kept context)\n",
	       rounds, secs);
	warm_up();
	secs = window;
	for (m = 0; m < M_N; m++)
		for (t = 0; t < 2; t++)
			for (r = 0; r < rounds; r++)
				for (b = 0; b < B_N; b++) {
					double v;

					if (b != B_OPENSSL && !backends[b].f)
						continue;
					v = throughput(&backends[b], m, t + 1);
					if (v > best[m][t][b])
						best[m][t][b] = v;
				}
	printf("%-36s %3s %10s %14s %10s %9s %9s\n", "mechanism", "thr",
	       backend_names[0], backend_names[1], backend_names[2],
	       "/OpenSSL", "/SoftHSM2");
	for (m = 0; m < M_N; m++)
		for (t = 0; t < 2; t++) {
			const double *v = best[m][t];

			printf("%-36s %3d %10.0f %14.0f ", mech_names[m], t + 1,
			       v[B_OPENSSL], v[B_WKS]);
			if (v[B_SOFTHSM] > 0)
				printf("%10.0f %9.2f %9.2f\n", v[B_SOFTHSM],
				       v[B_WKS] / v[B_OPENSSL],
				       v[B_WKS] / v[B_SOFTHSM]);
			else
				printf("%10s %9.2f %9s\n", "-",
				       v[B_WKS] / v[B_OPENSSL], "-");
		}
}

/* ---- 2. login ------------------------------------------------------------- */

/* libwks alone, the same run's unit: a load of DIR/TOKEN.wks with its
 * password (the MAC's PBKDF2) in *load, an uncached get_key of key000
 * (the key's) in *key, both ms. */
static void libwks_unit(const char *token, double *load, double *key)
{
	char path[PATH_MAX + 32];
	wks_store *st = NULL;
	wks_key *k = NULL;
	double t0, t1;

	snprintf(path, sizeof(path), "%s/%s.wks", dir, token);
	if (wks_store_new(&st) < 0 ||
	    wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
				   "false") < 0)
		die("a store");
	t0 = now_ms();
	if (wks_store_load_file(st, path, PIN, strlen(PIN)) < 0)
		die("wks_store_load_file");
	t1 = now_ms();
	if (wks_store_get_key(&k, st, "key000", PIN, strlen(PIN)) < 0)
		die("wks_store_get_key");
	*key = now_ms() - t1;
	*load = t1 - t0;
	wks_key_free(k);
	wks_store_free(st);
}

static void part_login(CK_FUNCTION_LIST_PTR f)
{
	static const char *const tokens[] = { "k1", "k20" };
	double lg[MAX_ROUNDS], sg[MAX_ROUNDS], ll[MAX_ROUNDS], lk[MAX_ROUNDS];
	CK_MECHANISM m = { CKM_ECDSA, NULL, 0 };
	int i, r;

	printf("\n2. C_Login and the first C_Sign after it (%s PBKDF2 "
	       "iterations; %d logins, each after C_Logout;\n   in the same "
	       "rounds, libwks alone: wks_store_load_file with the password, "
	       "then an uncached get_key)\n",
	       iterations, rounds);
	printf("%-5s %10s %10s %10s %10s | %10s %10s | %6s %6s\n", "token",
	       "login 1st", "login med", "sign 1st", "sign med", "lib load",
	       "get_key", "login/", "sign/");
	printf("%-5s %10s %10s %10s %10s | %10s %10s | %6s %6s\n", "", "ms",
	       "ms", "ms", "ms", "med, ms", "med, ms", "load", "getkey");
	for (i = 0; i < 2; i++) {
		CK_SLOT_ID slot = slot_of(f, tokens[i]);
		double first_lg = 0, first_sg = 0, a, b, c, d;

		for (r = 0; r < rounds; r++) {
			CK_SESSION_HANDLE s;
			CK_OBJECT_HANDLE k;
			unsigned char sig[64];
			CK_ULONG n = sizeof(sig);
			double t0, t1;

			ck(f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL,
					    NULL, &s),
			   "C_OpenSession");
			t0 = now_ms();
			ck(f->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)PIN,
				      strlen(PIN)),
			   "C_Login");
			t1 = now_ms();
			k = find_key(f, s, "key000");
			ck(f->C_SignInit(s, &m, k), "C_SignInit");
			ck(f->C_Sign(s, msg, sizeof(msg), sig, &n), "C_Sign");
			sg[r] = now_ms() - t1;
			lg[r] = t1 - t0;
			if (!r) {
				first_lg = lg[r];
				first_sg = sg[r];
			}
			ck(f->C_Logout(s), "C_Logout");
			ck(f->C_CloseSession(s), "C_CloseSession");
			libwks_unit(tokens[i], &ll[r], &lk[r]);
		}
		a = median(lg, rounds);
		b = median(sg, rounds);
		c = median(ll, rounds);
		d = median(lk, rounds);
		printf("%-5s %10.1f %10.1f %10.1f %10.1f | %10.1f %10.1f | "
		       "%6.2f %6.2f\n",
		       tokens[i], first_lg, a, first_sg, b, c, d, a / c, b / d);
	}
}

/* ---- 3. a fresh process's first signature ---------------------------------- */

/* In the child (-child MODE MODULE LABEL): sign once as a fresh program would,
 * (token LABEL), and write the clock readings (ms) to stdout: dlopen, initialised,
 * logged in, key found, signed, and whether the session was logged in
 * before C_Login.  MODE "hold": log in, say so, and wait for stdin to
 * close.  MODE "rate": then sign for $WKS_P11_BENCH_SECS seconds with
 * the key "rsa" (CKM_SHA256_RSA_PKCS) and again with "ec" (CKM_ECDSA),
 * and write the two rates (signatures/s). */
static int child_main(const char *mode, const char *path, const char *label)
{
	CK_MECHANISM m = { CKM_ECDSA, NULL, 0 };
	double t[5];
	CK_FUNCTION_LIST_PTR f;
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO si;
	CK_OBJECT_HANDLE k;
	unsigned char sig[64];
	CK_ULONG n = sizeof(sig);
	int was_in;

	t[0] = now_ms();
	f = p11_load(path);
	t[1] = now_ms();
	ck(f->C_OpenSession(slot_of(f, label), CKF_SERIAL_SESSION, NULL,
			    NULL, &s),
	   "C_OpenSession");
	ck(f->C_GetSessionInfo(s, &si), "C_GetSessionInfo");
	was_in = si.state == CKS_RO_USER_FUNCTIONS;
	login(f, s, CKU_USER, PIN);
	t[2] = now_ms();
	k = find_key(f, s, "ec");
	t[3] = now_ms();
	ck(f->C_SignInit(s, &m, k), "C_SignInit");
	ck(f->C_Sign(s, msg, sizeof(msg), sig, &n), "C_Sign");
	t[4] = now_ms();
	if (!strcmp(mode, "rate")) {
		const char *e = getenv("WKS_P11_BENCH_SECS");
		double w = e && atof(e) > 0 ? atof(e) : 1.0, t0, end;
		CK_MECHANISM rm = { CKM_SHA256_RSA_PKCS, NULL, 0 };
		CK_OBJECT_HANDLE rk = find_key(f, s, "rsa");
		long ops = 0;

		/* the RSA key's first use (its PBKDF2) before the clock */
		{
			unsigned char rsig[512];
			CK_ULONG rn = sizeof(rsig);

			ck(f->C_SignInit(s, &rm, rk), "C_SignInit");
			ck(f->C_Sign(s, msg, sizeof(msg), rsig, &rn), "C_Sign");
			t0 = now_ms();
			do {
				rn = sizeof(rsig);
				ck(f->C_SignInit(s, &rm, rk), "C_SignInit");
				ck(f->C_Sign(s, msg, sizeof(msg), rsig, &rn),
				   "C_Sign");
				ops++;
			} while ((end = now_ms()) < t0 + w * 1e3);
		}
		printf("%.2f ", (double)ops / ((end - t0) / 1e3));
		ops = 0;
		t0 = now_ms();
		do {
			n = sizeof(sig);
			ck(f->C_SignInit(s, &m, k), "C_SignInit");
			ck(f->C_Sign(s, msg, sizeof(msg), sig, &n), "C_Sign");
			ops++;
		} while ((end = now_ms()) < t0 + w * 1e3);
		printf("%.2f\n", (double)ops / ((end - t0) / 1e3));
		return 0;
	}
	if (!strcmp(mode, "hold")) {
		char c;

		printf("ready\n");
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
		/* ends a shared login for the others too */
		(void)f->C_Logout(s);
		return 0;
	}
	printf("%.4f %.4f %.4f %.4f %.4f %d\n", t[0], t[1], t[2], t[3], t[4],
	       was_in);
	return 0;
}

static const char *self_exe;

/* Runs `-child MODE PATH LABEL` with extra environment `env` (NULL: none);
 * returns its pid, its stdout in *out and its stdin in *in (may be
 * NULL: closed). */
static pid_t spawn_child(const char *mode, const char *path,
			 const char *label, const char *env, FILE **out,
			 int *in)
{
	int po[2], pi[2];
	pid_t pid;

	if (pipe(po) < 0 || pipe(pi) < 0)
		die("pipe");
	if ((pid = fork()) < 0)
		die("fork");
	if (!pid) {
		dup2(po[1], 1);
		dup2(pi[0], 0);
		close(po[0]);
		close(po[1]);
		close(pi[0]);
		close(pi[1]);
		if (env)
			putenv((char *)env);
		execl(self_exe, self_exe, "-child", mode, path, label,
		      (char *)NULL);
		_exit(127);
	}
	close(po[1]);
	close(pi[0]);
	if (in)
		*in = pi[1];
	else
		close(pi[1]);
	if (!(*out = fdopen(po[0], "r")))
		die("fdopen");
	return pid;
}

typedef struct {
	double spawn[MAX_PROCS], dl[MAX_PROCS], init[MAX_PROCS],
		login[MAX_PROCS], find[MAX_PROCS], sign[MAX_PROCS];
	int was_in;
} firsts;

static void first_signs(const char *path, const char *label, const char *env,
			firsts *r)
{
	int i, st;

	r->was_in = 0;
	for (i = 0; i < procs; i++) {
		double t0 = now_ms(), t[5];
		int was_in = 0;
		FILE *out;
		pid_t pid = spawn_child("sign", path, label, env, &out, NULL);

		if (fscanf(out, "%lf %lf %lf %lf %lf %d", &t[0], &t[1], &t[2],
			   &t[3], &t[4], &was_in) != 6)
			die("a child's figures (its error is above)");
		fclose(out);
		waitpid(pid, &st, 0);
		r->spawn[i] = t[4] - t0;
		r->dl[i] = t[4] - t[0];
		r->init[i] = t[1] - t[0];
		r->login[i] = t[2] - t[1];
		r->find[i] = t[3] - t[2];
		r->sign[i] = t[4] - t[3];
		r->was_in += was_in;
	}
}

static void print_firsts(const char *what, firsts *r)
{
	double mn = r->spawn[0];
	int i;

	for (i = 1; i < procs; i++)
		if (r->spawn[i] < mn)
			mn = r->spawn[i];
	printf("%-16s %8.2f ms %8.2f ms %8.2f ms | %7.2f %8.2f %6.2f %8.2f ms"
	       " %d/%d\n",
	       what, median(r->spawn, procs), mn, median(r->dl, procs),
	       median(r->init, procs), median(r->login, procs),
	       median(r->find, procs), median(r->sign, procs), r->was_in,
	       procs);
}

/* `p11-kit server -f` for `provider`'s token `label` on DIR/NAME.sock;
 * its pid (-1: it did not start), and in addr the environment setting
 * that names it for p11-kit-client.so. */
static pid_t start_server(const char *provider, const char *label,
			  const char *name, char *addr, size_t addr_len)
{
	char sock[PATH_MAX + 32], uri[64];
	struct stat sb;
	pid_t pid;
	int i;

	snprintf(sock, sizeof(sock), "%s/%s.sock", dir, name);
	snprintf(uri, sizeof(uri), "pkcs11:token=%s", label);
	snprintf(addr, addr_len, "P11_KIT_SERVER_ADDRESS=unix:path=%s", sock);
	if ((pid = fork()) < 0)
		die("fork");
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		execlp(p11kit, p11kit, "server", "-f", "-n", sock,
		       "--provider", provider, uri, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 500 && stat(sock, &sb) < 0; i++)
		usleep(10000);
	if (i == 500) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* The first signatures through p11-kit of `provider`'s token `label`,
 * while another client of the same server stays logged in. */
static void first_via_p11kit(const char *what, const char *provider,
			     const char *label)
{
	static firsts r;
	char addr[PATH_MAX + 128], line[16];
	pid_t server, holder;
	FILE *hout;
	int hin, st;

	if ((server = start_server(provider, label, what, addr,
				   sizeof(addr))) < 0) {
		printf("%-16s skipped: `%s server` did not start\n", what,
		       p11kit);
		return;
	}
	holder = spawn_child("hold", client, label, addr, &hout, &hin);
	if (!fgets(line, sizeof(line), hout) || strcmp(line, "ready\n"))
		die("the holding client");
	first_signs(client, label, addr, &r);
	print_firsts(what, &r);
	close(hin);
	fclose(hout);
	waitpid(holder, &st, 0);
	usleep(200000); /* its p11-kit-remote ends, reaped by the server */
	kill(server, SIGTERM);
	waitpid(server, &st, 0);
}

/* The first signatures of `module`'s token `label`, directly, while
 * another process stays logged in (with shared-login, its login is
 * theirs). */
static void first_direct_held(const char *what, const char *label)
{
	static firsts r;
	char line[16];
	pid_t holder;
	FILE *hout;
	int hin, st;

	holder = spawn_child("hold", module, label, NULL, &hout, &hin);
	if (!fgets(line, sizeof(line), hout) || strcmp(line, "ready\n"))
		die("the holding process");
	first_signs(module, label, NULL, &r);
	print_firsts(what, &r);
	close(hin);
	fclose(hout);
	waitpid(holder, &st, 0);
}

static void part_first(void)
{
	static firsts r;
	int kit = strcmp(client, "none") && access(client, R_OK) == 0;

	printf("\n3. First signature of a fresh process (fork + exec of this "
	       "program; %d processes each; CKM_ECDSA, P-256; %s "
	       "iterations)\n",
	       procs, iterations);
	printf("%-16s %11s %11s %11s | %7s %8s %6s %8s   %s\n", "via",
	       "spawn, med", "spawn, min", "dlopen, med", "init", "login",
	       "find", "sign", "logged in");
	first_signs(module, "sign", NULL, &r);
	print_firsts("wks direct", &r);
	if (kit)
		first_via_p11kit("wks p11-kit", module, "sign");
	first_direct_held("wks shared", "shared");
	if (kit)
		first_via_p11kit("wks shared kit", module, "shared");
	if (backends[B_SOFTHSM].f) {
		first_signs(softhsm, "bench", NULL, &r);
		print_firsts("softhsm direct", &r);
		if (kit)
			first_via_p11kit("softhsm p11-kit", softhsm, "bench");
	}
	if (!kit)
		printf("p11-kit: skipped (no %s)\n", client);
	printf("(medians; spawn: from before fork() to the signature; "
	       "dlopen: from the child's\n dlopen() on; init = dlopen + "
	       "C_Initialize, login = slot + C_OpenSession + C_Login;\n "
	       "logged in: children whose new session was logged in "
	       "already)\n");
}

/* ---- 4. a token used from another host ------------------------------------- */

static const char *forward; /* -forward CMD: NULL, part 4 skipped */

/* Signatures per second of one fresh client process of `path` (RSA
 * CKM_SHA256_RSA_PKCS, then P-256 CKM_ECDSA, one session, secs each). */
static void rates(const char *path, const char *env, double *rsa, double *ec)
{
	char w[64];
	FILE *out;
	pid_t pid;
	int st;

	snprintf(w, sizeof(w), "%g", secs);
	setenv("WKS_P11_BENCH_SECS", w, 1);
	pid = spawn_child("rate", path, "sign", env, &out, NULL);
	if (fscanf(out, "%lf %lf", rsa, ec) != 2)
		die("a rate child's figures (its error is above)");
	fclose(out);
	waitpid(pid, &st, 0);
}

/* Runs the -forward command (sh -c) with REMOTE_SOCKET and LOCAL_SOCKET
 * in its environment, in a process group of its own; waits for
 * LOCAL_SOCKET.  Returns its pid, -1 if the socket did not come. */
static pid_t start_forward(const char *remote, const char *local)
{
	struct stat sb;
	pid_t pid;
	int i, st;

	unlink(local);
	if ((pid = fork()) < 0)
		die("fork");
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		setpgid(0, 0);
		dup2(null, 0);
		setenv("REMOTE_SOCKET", remote, 1);
		setenv("LOCAL_SOCKET", local, 1);
		execl("/bin/sh", "sh", "-c", forward, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 1000 && stat(local, &sb) < 0; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return -1;
		usleep(10000);
	}
	if (i == 1000) {
		kill(-pid, SIGTERM);
		waitpid(pid, &st, 0);
		return -1;
	}
	return pid;
}

/* The first signatures of token "shared" (shared-login = yes) through
 * its p11-kit server, locally and forwarded, while a client of the local
 * socket holds the login. */
static void remote_shared(void)
{
	static firsts lr, fr;
	char addr[PATH_MAX + 128], faddr[PATH_MAX + 128], line[16];
	char local[PATH_MAX + 32];
	pid_t server, fwd, holder;
	FILE *hout;
	int hin, st;

	if ((server = start_server(module, "shared", "remote-shared", addr,
				   sizeof(addr))) < 0)
		return;
	snprintf(local, sizeof(local), "%s/forwarded-shared.sock", dir);
	if ((fwd = start_forward(strchr(addr, '=') + 1 + strlen("unix:path="),
				 local)) < 0) {
		kill(server, SIGTERM);
		waitpid(server, &st, 0);
		return;
	}
	snprintf(faddr, sizeof(faddr), "P11_KIT_SERVER_ADDRESS=unix:path=%s",
		 local);
	holder = spawn_child("hold", client, "shared", addr, &hout, &hin);
	if (!fgets(line, sizeof(line), hout) || strcmp(line, "ready\n"))
		die("the holding client");
	first_signs(client, "shared", addr, &lr);
	first_signs(client, "shared", faddr, &fr);
	printf("token \"shared\" (shared-login = yes), a client of the local "
	       "socket holding the login:\n");
	print_firsts("shared, local", &lr);
	print_firsts("shared, fwd", &fr);
	close(hin);
	fclose(hout);
	waitpid(holder, &st, 0);
	usleep(200000);
	kill(-fwd, SIGTERM);
	waitpid(fwd, &st, 0);
	unlink(local);
	kill(server, SIGTERM);
	waitpid(server, &st, 0);
}

static void part_remote(void)
{
	static firsts lr, fr;
	double best[2][2] = { { 0 } }; /* [local, forwarded][rsa, ec] */
	char addr[PATH_MAX + 128], faddr[PATH_MAX + 128];
	char local[PATH_MAX + 32];
	const char *srv;
	pid_t server, fwd;
	int r, st;

	printf("\n4. The token through p11-kit server's socket, locally and "
	       "forwarded (%s)\n   (%d fresh processes each for the first "
	       "signature, CKM_ECDSA P-256, %s iterations;\n   signatures/s "
	       "of one client process, one session, best of %d x %.2f s, "
	       "the two interleaved)\n",
	       forward, procs, iterations, rounds, secs);
	if ((server = start_server(module, "sign", "remote", addr,
				   sizeof(addr))) < 0) {
		printf("skipped: `%s server` did not start\n", p11kit);
		return;
	}
	srv = strchr(addr, '=') + 1 + strlen("unix:path=");
	snprintf(local, sizeof(local), "%s/forwarded.sock", dir);
	if ((fwd = start_forward(srv, local)) < 0) {
		printf("skipped: the -forward command made no %s\n", local);
		kill(server, SIGTERM);
		waitpid(server, &st, 0);
		return;
	}
	snprintf(faddr, sizeof(faddr), "P11_KIT_SERVER_ADDRESS=unix:path=%s",
		 local);
	for (r = 0; r < rounds; r++) {
		double a, b;

		rates(client, addr, &a, &b);
		if (a > best[0][0])
			best[0][0] = a;
		if (b > best[0][1])
			best[0][1] = b;
		rates(client, faddr, &a, &b);
		if (a > best[1][0])
			best[1][0] = a;
		if (b > best[1][1])
			best[1][1] = b;
	}
	first_signs(client, "sign", addr, &lr);
	first_signs(client, "sign", faddr, &fr);
	printf("%-16s %11s %11s %11s | %7s %8s %6s %8s   %s\n", "via",
	       "spawn, med", "spawn, min", "dlopen, med", "init", "login",
	       "find", "sign", "logged in");
	print_firsts("local socket", &lr);
	print_firsts("forwarded", &fr);
	printf("%-16s %22s %22s\n", "signatures/s", "RSA-2048 SHA256_RSA_PKCS",
	       "P-256 CKM_ECDSA");
	printf("%-16s %22.0f %22.0f\n", "local socket", best[0][0],
	       best[0][1]);
	printf("%-16s %22.0f %22.0f\n", "forwarded", best[1][0], best[1][1]);
	printf("%-16s %22.2f %22.2f\n", "forwarded/local",
	       best[1][0] / best[0][0], best[1][1] / best[0][1]);
	kill(-fwd, SIGTERM);
	waitpid(fwd, &st, 0);
	unlink(local);
	kill(server, SIGTERM);
	waitpid(server, &st, 0);
	remote_shared();
}

/* ---- 5. searching a token with and without its attribute record ---------- */

#define FIND_MAX 256

/* The attribute record of token find1: for each of its 20 private keys,
 * C_SetAttributeValue of a CKA_ID of its own, CKA_START_DATE,
 * CKA_END_DATE and CKA_DERIVE false (items the record keeps). */
static void make_record(CK_FUNCTION_LIST_PTR f, CK_SLOT_ID slot)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE q = { CKA_CLASS, &cls, sizeof(cls) };
	CK_OBJECT_HANDLE h[FIND_MAX];
	CK_SESSION_HANDLE s;
	CK_ULONG n = 0, i;

	ck(f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL,
			    NULL, &s),
	   "C_OpenSession");
	login(f, s, CKU_USER, PIN);
	ck(f->C_FindObjectsInit(s, &q, 1), "C_FindObjectsInit");
	ck(f->C_FindObjects(s, h, FIND_MAX, &n), "C_FindObjects");
	ck(f->C_FindObjectsFinal(s), "C_FindObjectsFinal");
	if (n != 20)
		die("token find1 has not 20 private keys");
	for (i = 0; i < n; i++) {
		unsigned char id[20];
		CK_DATE start = { { '2', '0', '2', '6' }, { '0', '1' },
				  { '0', '1' } };
		CK_DATE end = { { '2', '0', '3', '6' }, { '1', '2' },
				{ '3', '1' } };
		CK_BBOOL no = CK_FALSE;
		CK_ATTRIBUTE t[] = { { CKA_ID, id, sizeof(id) },
				     { CKA_START_DATE, &start, sizeof(start) },
				     { CKA_END_DATE, &end, sizeof(end) },
				     { CKA_DERIVE, &no, 1 } };

		memset(id, 0x40 + (int)i, sizeof(id));
		ck(f->C_SetAttributeValue(s, h[i], t, 4),
		   "C_SetAttributeValue (the record)");
	}
	ck(f->C_CloseSession(s), "C_CloseSession");
}

/* One round of what a program's search does, on session s: (a) list
 * every object and read CKA_CLASS, CKA_ID, CKA_LABEL of each; (b) for
 * each private key, find it by class and CKA_ID and read CKA_KEY_TYPE,
 * CKA_SIGN, CKA_DERIVE, CKA_START_DATE.  Returns the objects read. */
static long find_round(CK_FUNCTION_LIST_PTR f, CK_SESSION_HANDLE s)
{
	CK_OBJECT_HANDLE h[FIND_MAX];
	unsigned char ids[FIND_MAX][64];
	CK_ULONG idl[FIND_MAX], n = 0, i, nk = 0;
	CK_OBJECT_CLASS cls, priv = CKO_PRIVATE_KEY;
	long done = 0;

	ck(f->C_FindObjectsInit(s, NULL, 0), "C_FindObjectsInit");
	ck(f->C_FindObjects(s, h, FIND_MAX, &n), "C_FindObjects");
	ck(f->C_FindObjectsFinal(s), "C_FindObjectsFinal");
	for (i = 0; i < n; i++) {
		unsigned char id[64], label[64];
		CK_ATTRIBUTE t[] = { { CKA_CLASS, &cls, sizeof(cls) },
				     { CKA_ID, id, sizeof(id) },
				     { CKA_LABEL, label, sizeof(label) } };

		ck(f->C_GetAttributeValue(s, h[i], t, 3),
		   "C_GetAttributeValue");
		if (cls == CKO_PRIVATE_KEY) {
			memcpy(ids[nk], id, t[1].ulValueLen);
			idl[nk++] = t[1].ulValueLen;
		}
		done++;
	}
	for (i = 0; i < nk; i++) {
		CK_ATTRIBUTE q[] = { { CKA_CLASS, &priv, sizeof(priv) },
				     { CKA_ID, ids[i], idl[i] } };
		CK_KEY_TYPE kt;
		CK_BBOOL sign, derive;
		CK_DATE start;
		CK_ATTRIBUTE t[] = { { CKA_KEY_TYPE, &kt, sizeof(kt) },
				     { CKA_SIGN, &sign, 1 },
				     { CKA_DERIVE, &derive, 1 },
				     { CKA_START_DATE, &start, sizeof(start) } };
		CK_OBJECT_HANDLE k;
		CK_ULONG m = 0;

		ck(f->C_FindObjectsInit(s, q, 2), "C_FindObjectsInit");
		ck(f->C_FindObjects(s, &k, 1, &m), "C_FindObjects");
		ck(f->C_FindObjectsFinal(s), "C_FindObjectsFinal");
		if (m != 1)
			die("a private key not found by its CKA_ID");
		ck(f->C_GetAttributeValue(s, k, t, 4), "C_GetAttributeValue");
		done++;
	}
	return done;
}

/* Rounds of find_round() per second on `label` for secs seconds. */
static double find_rate(CK_FUNCTION_LIST_PTR f, CK_SESSION_HANDLE s,
			long *objs)
{
	double t0 = now_ms(), end;
	long r = 0;

	do {
		*objs = find_round(f, s);
		r++;
	} while ((end = now_ms()) < t0 + secs * 1e3);
	return (double)r / ((end - t0) / 1e3);
}

static void part_find(CK_FUNCTION_LIST_PTR f)
{
	static const char *const tokens[] = { "find0", "find1" };
	char path[PATH_MAX + 32];
	CK_SESSION_HANDLE s[2];
	double best[2][2] = { { 0 } }; /* [token][logged in] */
	long objs[2][2] = { { 0 } };
	struct stat sb;
	int i, l, r;

	printf("\n5. C_FindObjectsInit + C_FindObjects + C_GetAttributeValue, "
	       "a token of 20 keys and\n   %d certificates (20 the keys', "
	       "%d trusted), without and with an attribute record\n   "
	       "holding items for every key (CKA_ID, dates, CKA_DERIVE); one "
	       "round: list all objects\n   and read class, id, label of "
	       "each, then find each private key by CKA_ID and read\n   4 "
	       "attributes; rounds/s, best of %d x %.2f s, the two tokens "
	       "interleaved)\n",
	       20 + FIND_TRUSTED, FIND_TRUSTED, rounds, secs);
	{
		double t0 = now_ms();

		make_record(f, slot_of(f, "find1"));
		printf("(the record: 20 C_SetAttributeValue, each a store "
		       "edit, in %.0f ms)\n", now_ms() - t0);
	}
	snprintf(path, sizeof(path), "%s/find1.wks.p11", dir);
	if (stat(path, &sb) < 0)
		die("no attribute record beside find1.wks");
	snprintf(path, sizeof(path), "%s/find0.wks.p11", dir);
	if (stat(path, &sb) == 0)
		die("an attribute record beside find0.wks");
	for (l = 0; l < 2; l++) {
		for (i = 0; i < 2; i++) {
			ck(f->C_OpenSession(slot_of(f, tokens[i]),
					    CKF_SERIAL_SESSION, NULL, NULL,
					    &s[i]),
			   "C_OpenSession");
			if (l)
				login(f, s[i], CKU_USER, PIN);
			find_round(f, s[i]); /* warm */
		}
		for (r = 0; r < rounds; r++)
			for (i = 0; i < 2; i++) {
				double v = find_rate(f, s[i], &objs[i][l]);

				if (v > best[i][l])
					best[i][l] = v;
			}
		for (i = 0; i < 2; i++) {
			if (l)
				ck(f->C_Logout(s[i]), "C_Logout");
			ck(f->C_CloseSession(s[i]), "C_CloseSession");
		}
	}
	printf("%-22s %14s %14s %10s\n", "", "no record", "record",
	       "record/no");
	for (l = 0; l < 2; l++)
		printf("%-22s %9.0f (%3ld) %9.0f (%3ld) %10.3f\n",
		       l ? "logged in, rounds/s" : "public, rounds/s",
		       best[0][l], objs[0][l], best[1][l], objs[1][l],
		       best[1][l] / best[0][l]);
	printf("(in parentheses: the objects one round read; goal: record "
	       "within 1.1 x of no record,\n i.e. record/no >= 0.91)\n");
}

/* ---- main ------------------------------------------------------------------- */

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "%s: could not remove %s\n",
				BENCH_NAME, dir);
	}
}

int main(int argc, char **argv)
{
	static char exe[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	CK_SESSION_HANDLE ws, hs = 0;
	double load[3] = { 0 };
	ssize_t n;
	int i;

	memset(msg, 0x5a, sizeof(msg));
	/* DigestInfo of SHA-256, then the digest */
	memcpy(digestinfo,
	       "\x30\x31\x30\x0d\x06\x09\x60\x86\x48\x01\x65\x03\x04\x02\x01"
	       "\x05\x00\x04\x20",
	       19);
	memset(digestinfo + 19, 0xa5, 32);
	if (argc == 5 && !strcmp(argv[1], "-child"))
		return child_main(argv[2], argv[3], argv[4]);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-quick")) {
			secs = 0.05;
			rounds = procs = 1;
			strcpy(iterations, "10000");
			continue;
		}
		if (!v)
			goto usage;
		i++;
		if (!strcmp(a, "-secs") && atof(v) > 0)
			secs = atof(v);
		else if (!strcmp(a, "-rounds") && atoi(v) > 0 &&
			 atoi(v) <= MAX_ROUNDS)
			rounds = atoi(v);
		else if (!strcmp(a, "-procs") && atoi(v) > 0 &&
			 atoi(v) <= MAX_PROCS)
			procs = atoi(v);
		else if (!strcmp(a, "-iter") && strlen(v) < sizeof(iterations))
			strcpy(iterations, v);
		else if (!strcmp(a, "-parts"))
			parts = v;
		else if (!strcmp(a, "-module"))
			module = v;
		else if (!strcmp(a, "-softhsm"))
			softhsm = v;
		else if (!strcmp(a, "-client"))
			client = v;
		else if (!strcmp(a, "-p11kit"))
			p11kit = v;
		else if (!strcmp(a, "-forward"))
			forward = v;
		else
			goto usage;
	}
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		die("/proc/self/exe");
	self_exe = exe;
	snprintf(dir, sizeof(dir), "%s/wks-p11-bench.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		die("mkdtemp");
	atexit(cleanup);
	setenv("WKS_PKCS11_DEBUG", getenv("WKS_P11_BENCH_DEBUG") ? getenv("WKS_P11_BENCH_DEBUG") : "", 1);

	make_stores();
	backends[B_WKS].f = p11_load(module);
	backends[B_WKS].slot = slot_of(backends[B_WKS].f, "sign");
	ck(backends[B_WKS].f->C_OpenSession(backends[B_WKS].slot,
					    CKF_SERIAL_SESSION, NULL, NULL,
					    &ws),
	   "C_OpenSession");
	login(backends[B_WKS].f, ws, CKU_USER, PIN);
	backends[B_WKS].rsa = find_key(backends[B_WKS].f, ws, "rsa");
	backends[B_WKS].ec = find_key(backends[B_WKS].f, ws, "ec");
	if (strcmp(softhsm, "none") && access(softhsm, R_OK) == 0) {
		backends[B_SOFTHSM].f =
			softhsm_token(&backends[B_SOFTHSM].slot, &hs);
		backends[B_SOFTHSM].rsa =
			find_key(backends[B_SOFTHSM].f, hs, "rsa");
		backends[B_SOFTHSM].ec =
			find_key(backends[B_SOFTHSM].f, hs, "ec");
	}

	getloadavg(load, 3);
	printf("wks-p11-bench: module %s, OpenSSL %s, load average %.2f "
	       "%.2f %.2f, %ld CPUs\n",
	       module, OpenSSL_version(OPENSSL_VERSION_STRING), load[0],
	       load[1], load[2], sysconf(_SC_NPROCESSORS_ONLN));
	if (!backends[B_SOFTHSM].f)
		printf("SoftHSM2: skipped (no %s)\n", softhsm);
	if (strchr(parts, '1'))
		part_throughput();
	ck(backends[B_WKS].f->C_CloseSession(ws), "C_CloseSession");
	if (strchr(parts, '2'))
		part_login(backends[B_WKS].f);
	if (strchr(parts, '3'))
		part_first();
	if (strchr(parts, '5'))
		part_find(backends[B_WKS].f);
	if (strchr(parts, '4') && forward)
		part_remote();
	else if (strchr(parts, '4'))
		printf("\n4. skipped (no -forward CMD)\n");
	getloadavg(load, 3);
	printf("\nload average at the end: %.2f %.2f %.2f\n", load[0], load[1],
	       load[2]);
	return 0;
usage:
	fprintf(stderr,
		"usage: %s [-secs S] [-rounds R] [-procs P] [-iter N] "
		"[-module PATH]\n       [-softhsm PATH|none] [-client "
		"PATH|none] [-p11kit PATH] [-parts 1234] [-forward CMD] "
		"[-quick]\n",
		BENCH_NAME);
	return 2;
}
