/*
 * The general-purpose entry points: C_Initialize, C_Finalize, C_GetInfo,
 * the function lists and interfaces, the functions the module does not
 * offer, and the module's locking and fork() handling.
 *
 * fork(): a pthread_atfork() prepare handler takes w11_g.alive
 * exclusively, so it waits until no thread is inside the module; every
 * lock of the module is then free and its state consistent.  In the
 * child the handler frees the whole state (stores, decrypted keys, PINs:
 * all wiped) and leaves the module uninitialised: every call then
 * returns CKR_CRYPTOKI_NOT_INITIALIZED until the child calls
 * C_Initialize, as p11-kit and the PKCS#11 specification expect.  The
 * PIN pages are also marked MADV_WIPEONFORK, so the kernel gives the
 * child zeros there whatever happens.
 */
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openssl/provider.h>

#include "p11.h"

#ifndef WKS_PKCS11_DEFAULT_CONF
#define WKS_PKCS11_DEFAULT_CONF "/etc/wks-pkcs11.conf"
#endif

w11_module w11_g;
OSSL_LIB_CTX *w11_libctx;
static OSSL_PROVIDER *default_prov;

/* The module's library context with OpenSSL's default provider: nothing
 * of the application's configuration (its openssl.cnf, its providers,
 * its default properties) reaches it. */
static CK_RV libctx_new(void)
{
	if (!(w11_libctx = OSSL_LIB_CTX_new()))
		return CKR_HOST_MEMORY;
	if (!(default_prov = OSSL_PROVIDER_load(w11_libctx, "default"))) {
		W11_LOG("OpenSSL's default provider could not be loaded");
		return CKR_GENERAL_ERROR;
	}
	return CKR_OK;
}

/* After everything made in the context is freed (the module is built
 * -z nodelete: it stays mapped, and the next C_Initialize makes a new
 * context). */
static void libctx_free(void)
{
	if (default_prov)
		OSSL_PROVIDER_unload(default_prov);
	default_prov = NULL;
	OSSL_LIB_CTX_free(w11_libctx);
	w11_libctx = NULL;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void alive_init(void)
{
	pthread_rwlockattr_t a;

	/* Writer preference: a fork() or C_Finalize waiting for the
	 * calls in progress is not starved by new calls. */
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&w11_g.alive, &a);
	pthread_rwlockattr_destroy(&a);
}

static void teardown(void)
{
	w11_sessions_free_all();
	for (size_t i = 0; i < w11_g.ntokens; i++)
		w11_token_fini(&w11_g.tokens[i]);
	free(w11_g.tokens);
	w11_g.tokens = NULL;
	w11_g.ntokens = 0;
	w11_conf_free(w11_g.conf);
	w11_g.conf = NULL;
	pthread_rwlock_destroy(&w11_g.sess_lock);
	w11_mech_fini();
	libctx_free();
	w11_g.initialized = 0;
}

static void fork_prepare(void)
{
	pthread_rwlock_wrlock(&w11_g.alive);
}

static void fork_parent(void)
{
	pthread_rwlock_unlock(&w11_g.alive);
}

static void fork_child(void)
{
	/* The lock was taken by the parent's thread: a new one. */
	alive_init();
	if (w11_g.initialized) {
		W11_LOG("fork(): the child starts uninitialised");
		teardown();
	}
}

static void module_once(void)
{
	alive_init();
	w11_log_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

CK_RV w11_enter(void)
{
	pthread_once(&once, module_once);
	if (pthread_rwlock_rdlock(&w11_g.alive) != 0)
		return CKR_GENERAL_ERROR;
	if (!w11_g.initialized) {
		pthread_rwlock_unlock(&w11_g.alive);
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	}
	return CKR_OK;
}

void w11_leave(void)
{
	pthread_rwlock_unlock(&w11_g.alive);
}

w11_token *w11_slot_token(CK_SLOT_ID slot)
{
	return slot < w11_g.ntokens ? &w11_g.tokens[slot] : NULL;
}

CK_RV w11_rv_of_wks(int err)
{
	switch (err) {
	case WKS_OK:
		return CKR_OK;
	case WKS_ERR_NOMEM:
		return CKR_HOST_MEMORY;
	case WKS_ERR_INTEGRITY:
		return CKR_PIN_INCORRECT;
	case WKS_ERR_NOTFOUND:
	case WKS_ERR_WRONG_TYPE:
		return CKR_OBJECT_HANDLE_INVALID;
	case WKS_ERR_EXISTS:
		return CKR_ATTRIBUTE_VALUE_INVALID;
	case WKS_ERR_IO:
	case WKS_ERR_BUSY:
		return CKR_DEVICE_ERROR;
	default:
		return CKR_FUNCTION_FAILED;
	}
}

/* What the module has to tell about its configuration: one line on
 * standard error (the one place a user sees it whatever the program
 * does with the CK_RV) and in the debug log.  An error that fails
 * C_Initialize is printed each time; a note (a store missing or
 * unreadable: the module works on) once per process, as programs may
 * initialise the module many times (the debug log has it each time). */
static void conf_say(int just_once, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
static void conf_say(int just_once, const char *fmt, ...)
{
	static uint64_t said[64];
	static size_t nsaid;
	uint64_t h = 14695981039346656037u;
	char msg[1024];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* (a path from the environment may hold anything: no control
	 * character reaches the terminal) */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	W11_LOG("configuration: %s", msg);
	if (just_once) {
		/* (C_Initialize holds the module exclusively) */
		for (const char *p = msg; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211u;
		for (i = 0; i < nsaid && said[i] != h; i++)
			;
		if (i < nsaid)
			return;
		if (nsaid < sizeof(said) / sizeof(said[0]))
			said[nsaid++] = h;
	}
	fprintf(stderr, "libwks-pkcs11: %s\n", msg);
}
#define conf_note(...) conf_say(0, __VA_ARGS__)
#define store_note(...) conf_say(1, __VA_ARGS__)

static char conf_path[4096];

int w11_privileged(void)
{
	return getauxval(AT_SECURE) != 0 || getuid() != geteuid() ||
	       getgid() != getegid();
}

/* The configuration: $WKS_PKCS11_CONF (ignored in set-user-ID programs
 * and wherever real and effective ids differ: w11_privileged()), else
 * the default file; a missing default file means no token.  A relative
 * $WKS_PKCS11_CONF is refused: it would name another file, or none, in a
 * program that changed its working folder (ssh-agent runs in /, and
 * ssh-add then says only "agent refused operation"). */
static CK_RV load_conf(void)
{
	const char *env = w11_privileged() ? NULL : getenv("WKS_PKCS11_CONF");
	const char *path = env && *env ? env : WKS_PKCS11_DEFAULT_CONF;
	char err[768];

	snprintf(conf_path, sizeof(conf_path), "%s", path);
	if (env && *env && *env != '/') {
		conf_note("WKS_PKCS11_CONF=%s: not an absolute path (programs "
			  "that load the module may run in another folder, "
			  "as ssh-agent runs in /): give the file's full path",
			  env);
		return CKR_GENERAL_ERROR;
	}
	if ((!env || !*env) && access(path, F_OK) != 0 && errno == ENOENT) {
		W11_LOG("no configuration file %s: no token", path);
		w11_g.conf = calloc(1, sizeof(*w11_g.conf));
		return w11_g.conf ? CKR_OK : CKR_HOST_MEMORY;
	}
	if (w11_conf_load(&w11_g.conf, path, err, sizeof(err)) != 0) {
		/* Without the message a user would see only the CK_RV of
		 * C_Initialize. */
		conf_note("%s", err);
		return CKR_GENERAL_ERROR;
	}
	W11_LOG("configuration %s: %zu token(s)", path, w11_g.conf->ntokens);
	return CKR_OK;
}

/* Copy up to `n` bytes at `p` into `out` without touching memory that is
 * not there: the count copied, or -1 if `p` is not readable.  (A page at
 * a time, so a string that ends before an unmapped page is read whole.) */
static ssize_t read_user(void *out, const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), k;
	struct iovec l, r;
	ssize_t got;
	int fd[2];

	k = pg - (a % pg);
	if (k > n)
		k = n;
	l = (struct iovec){ out, k };
	r = (struct iovec){ (void *)p, k };
	got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	if (got >= 0 || (errno != ENOSYS && errno != EPERM))
		return got > 0 ? got : -1;
	/* no process_vm_readv (a seccomp filter): the kernel checks the
	 * address for write(2) to a pipe just the same */
	if (pipe(fd) != 0)
		return -1;
	got = write(fd[1], p, k);
	if (got > 0 && read(fd[0], out, (size_t)got) != got)
		got = -1;
	close(fd[0]);
	close(fd[1]);
	return got > 0 ? got : -1;
}

/* pReserved of CK_C_INITIALIZE_ARGS: NULL by the specification, and what
 * programs put there in practice, a NUL-terminated text: NSS its
 * LibraryParameters (modutil -string, a parameters= line), pkcs11-provider
 * its pkcs11-module-init-args.  The module takes no such parameters and
 * ignores the text; anything else (a pointer to no text, or nowhere) is
 * CKR_ARGUMENTS_BAD, without reading through a bad pointer. */
static CK_RV check_reserved(const void *p)
{
	unsigned char buf[4096];
	size_t total = 0;

	if (!p)
		return CKR_OK;
	while (total < 64 * 1024) {
		ssize_t got = read_user(buf, (const unsigned char *)p + total,
					sizeof(buf));

		if (got <= 0)
			return CKR_ARGUMENTS_BAD;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == 0)
				return CKR_OK;
			/* text: printable ASCII, tabs and line ends, UTF-8 */
			if (buf[i] < 0x20 && buf[i] != '\t' &&
			    buf[i] != '\n' && buf[i] != '\r')
				return CKR_ARGUMENTS_BAD;
			if (buf[i] == 0x7f)
				return CKR_ARGUMENTS_BAD;
		}
		total += (size_t)got;
	}
	return CKR_ARGUMENTS_BAD;
}

/* One store named two ways (web.wks and ./web.wks, a symbolic or a hard
 * link) would be two tokens with one serial number, each with its own
 * login and object handles: the file's identity (device and inode) or,
 * for a store not made yet, its canonical path (the serial's) must be
 * unique.  Then what the user should know of each store: a missing one
 * (a typo in `store =` shows as a token to initialise), one that cannot
 * be read. */
static CK_RV check_stores(void)
{
	struct stat *sb = calloc(w11_g.ntokens + 1, sizeof(*sb));
	int *there = calloc(w11_g.ntokens + 1, sizeof(*there));
	int *why = calloc(w11_g.ntokens + 1, sizeof(*why));
	CK_RV rv = CKR_OK;

	if (!sb || !there || !why) {
		rv = CKR_HOST_MEMORY;
		goto done;
	}
	for (size_t i = 0; i < w11_g.ntokens; i++) {
		const w11_token *t = &w11_g.tokens[i];

		there[i] = stat(t->conf->store, &sb[i]) == 0;
		why[i] = there[i] ? 0 : errno;
		for (size_t j = 0; j < i; j++) {
			const w11_token *u = &w11_g.tokens[j];

			if (there[i] && there[j] ?
			    sb[i].st_dev == sb[j].st_dev &&
			    sb[i].st_ino == sb[j].st_ino :
			    strcmp(t->canon, u->canon) == 0) {
				conf_note("%s: the token at line %u: store %s "
					  "is the same file as the store of the "
					  "token at line %u (%s): one store, one "
					  "token",
					  conf_path, t->conf->line,
					  t->conf->store, u->conf->line,
					  u->conf->store);
				rv = CKR_GENERAL_ERROR;
				goto done;
			}
		}
	}
	for (size_t i = 0; i < w11_g.ntokens; i++) {
		const w11_token *t = &w11_g.tokens[i];
		int fd;

		if (!there[i] && (why[i] == ENOENT || why[i] == ENOTDIR)) {
			store_note("token \"%s\": no store %s (%s): the token "
				  "is not initialised, and C_InitToken would "
				  "create the store there", t->conf->label,
				  t->conf->store, strerror(why[i]));
			continue;
		}
		if (!there[i]) {
			errno = why[i];
		} else if ((fd = open(t->conf->store, O_RDONLY | O_CLOEXEC |
				      O_NOCTTY | O_NONBLOCK)) >= 0) {
			close(fd);
			continue;
		}
		store_note("token \"%s\": store %s cannot be read: %s",
			  t->conf->label, t->conf->store, strerror(errno));
	}
done:
	free(sb);
	free(there);
	free(why);
	return rv;
}

CK_RV C_Initialize(CK_VOID_PTR pInitArgs)
{
	CK_C_INITIALIZE_ARGS *a = pInitArgs;
	CK_RV rv = CKR_OK;
	int no_threads = 0;

	pthread_once(&once, module_once);
	if (a) {
		int n = !!a->CreateMutex + !!a->DestroyMutex + !!a->LockMutex +
			!!a->UnlockMutex;

		if (n != 0 && n != 4)
			return CKR_ARGUMENTS_BAD;
		/* Mutex callbacks without CKF_OS_LOCKING_OK ask the module
		 * to lock with the application's primitives only; libwks
		 * and OpenSSL lock with the system's, so the module cannot
		 * (the specification's answer is CKR_CANT_LOCK). */
		if (n == 4 && !(a->flags & CKF_OS_LOCKING_OK))
			return CKR_CANT_LOCK;
		no_threads = !!(a->flags & CKF_LIBRARY_CANT_CREATE_OS_THREADS);
		if ((rv = check_reserved(a->pReserved)) != CKR_OK) {
			W11_LOG("C_Initialize: pReserved is neither NULL nor "
				"a parameter string");
			return rv;
		}
	}
	pthread_rwlock_wrlock(&w11_g.alive);
	if (w11_g.initialized) {
		rv = CKR_CRYPTOKI_ALREADY_INITIALIZED;
		goto done;
	}
	w11_g.no_threads = no_threads;
	pthread_rwlock_init(&w11_g.sess_lock, NULL);
	w11_g.next_sess = 1;
	if ((rv = libctx_new()) != CKR_OK || (rv = load_conf()) != CKR_OK)
		goto fail;
	if (w11_g.conf->ntokens &&
	    !(w11_g.tokens = calloc(w11_g.conf->ntokens,
				    sizeof(*w11_g.tokens)))) {
		rv = CKR_HOST_MEMORY;
		goto fail;
	}
	for (size_t i = 0; i < w11_g.conf->ntokens; i++) {
		if ((rv = w11_token_init(&w11_g.tokens[i], i,
					 &w11_g.conf->tokens[i])) != CKR_OK)
			goto fail;
		w11_g.ntokens = i + 1;
	}
	if ((rv = check_stores()) != CKR_OK)
		goto fail;
	w11_g.initialized = 1;
	W11_LOG("C_Initialize: %zu slot(s)%s", w11_g.ntokens,
		no_threads ? ", no threads" : "");
	goto done;
fail:
	teardown();
done:
	pthread_rwlock_unlock(&w11_g.alive);
	return rv;
}

CK_RV C_Finalize(CK_VOID_PTR pReserved)
{
	CK_RV rv = CKR_OK;

	pthread_once(&once, module_once);
	if (pReserved)
		return CKR_ARGUMENTS_BAD;
	pthread_rwlock_wrlock(&w11_g.alive);
	if (!w11_g.initialized)
		rv = CKR_CRYPTOKI_NOT_INITIALIZED;
	else
		teardown();
	pthread_rwlock_unlock(&w11_g.alive);
	return rv;
}

static CK_RV get_info(CK_INFO_PTR p, CK_BYTE major, CK_BYTE minor)
{
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if (!p) {
		rv = CKR_ARGUMENTS_BAD;
	} else {
		memset(p, 0, sizeof(*p));
		p->cryptokiVersion.major = major;
		p->cryptokiVersion.minor = minor;
		w11_pad(p->manufacturerID, sizeof(p->manufacturerID), "libwks");
		w11_pad(p->libraryDescription, sizeof(p->libraryDescription),
			"WKS keystore PKCS#11 module");
		p->libraryVersion.major = WKS_VERSION_MAJOR;
		p->libraryVersion.minor = WKS_VERSION_MINOR;
	}
	w11_leave();
	return rv;
}

static CK_RV get_info_240(CK_INFO_PTR p)
{
	return get_info(p, 2, 40);
}

CK_RV C_GetInfo(CK_INFO_PTR p)
{
	return get_info(p, 3, 0);
}

/* ---- what the module does not offer ---------------------------------- */

static CK_RV not_supported(void)
{
	CK_RV rv = w11_enter();

	if (rv != CKR_OK)
		return rv;
	w11_leave();
	return CKR_FUNCTION_NOT_SUPPORTED;
}

CK_RV C_GetOperationState(CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG_PTR n)
{
	(void)h, (void)p, (void)n;
	return not_supported();
}

CK_RV C_SetOperationState(CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG n,
			  CK_OBJECT_HANDLE k1, CK_OBJECT_HANDLE k2)
{
	(void)h, (void)p, (void)n, (void)k1, (void)k2;
	return not_supported();
}

CK_RV C_SignRecoverInit(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m,
			CK_OBJECT_HANDLE k)
{
	(void)h, (void)m, (void)k;
	return not_supported();
}

CK_RV C_SignRecover(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG n,
		    CK_BYTE_PTR s, CK_ULONG_PTR sn)
{
	(void)h, (void)d, (void)n, (void)s, (void)sn;
	return not_supported();
}

CK_RV C_VerifyRecoverInit(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m,
			  CK_OBJECT_HANDLE k)
{
	(void)h, (void)m, (void)k;
	return not_supported();
}

CK_RV C_VerifyRecover(CK_SESSION_HANDLE h, CK_BYTE_PTR s, CK_ULONG sn,
		      CK_BYTE_PTR d, CK_ULONG_PTR n)
{
	(void)h, (void)s, (void)sn, (void)d, (void)n;
	return not_supported();
}

#define DUAL(name) \
	CK_RV name(CK_SESSION_HANDLE h, CK_BYTE_PTR a, CK_ULONG an, \
		   CK_BYTE_PTR b, CK_ULONG_PTR bn) \
	{ \
		(void)h, (void)a, (void)an, (void)b, (void)bn; \
		return not_supported(); \
	}
DUAL(C_DigestEncryptUpdate)
DUAL(C_DecryptDigestUpdate)
DUAL(C_SignEncryptUpdate)
DUAL(C_DecryptVerifyUpdate)

/* The session and the arguments are checked first, as for every call;
 * the module's generator (OpenSSL's DRBG, seeded by the system) takes no
 * seed. */
CK_RV C_SeedRandom(CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG n)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, (!p && n) ? CKR_ARGUMENTS_BAD
					 : CKR_RANDOM_SEED_NOT_SUPPORTED);
}

CK_RV C_GetFunctionStatus(CK_SESSION_HANDLE h)
{
	CK_RV rv = w11_enter();

	(void)h;
	if (rv != CKR_OK)
		return rv;
	w11_leave();
	return CKR_FUNCTION_NOT_PARALLEL;
}

CK_RV C_CancelFunction(CK_SESSION_HANDLE h)
{
	return C_GetFunctionStatus(h);
}

CK_RV C_WaitForSlotEvent(CK_FLAGS flags, CK_SLOT_ID_PTR slot, CK_VOID_PTR r)
{
	CK_RV rv = w11_enter();

	(void)slot, (void)r;
	if (rv != CKR_OK)
		return rv;
	w11_leave();
	/* Tokens never come or go: nothing to wait for. */
	return (flags & CKF_DONT_BLOCK) ? CKR_NO_EVENT
					: CKR_FUNCTION_NOT_SUPPORTED;
}

/* The 3.0 additions.  A store has one password and no user names: the
 * name is not used. */
static CK_RV login_user(CK_SESSION_HANDLE h, CK_USER_TYPE u, CK_UTF8CHAR_PTR p,
			CK_ULONG n, CK_UTF8CHAR_PTR user, CK_ULONG un)
{
	(void)user, (void)un;
	return C_Login(h, u, p, n);
}

CK_RV w11_session_cancel(CK_SESSION_HANDLE h, CK_FLAGS flags);

#define MSG_INIT(name) \
	static CK_RV name(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, \
			  CK_OBJECT_HANDLE k) \
	{ \
		(void)h, (void)m, (void)k; \
		return not_supported(); \
	}
#define MSG_FINAL(name) \
	static CK_RV name(CK_SESSION_HANDLE h) \
	{ \
		(void)h; \
		return not_supported(); \
	}
MSG_INIT(msg_encrypt_init)
MSG_INIT(msg_decrypt_init)
MSG_INIT(msg_sign_init)
MSG_INIT(msg_verify_init)
MSG_FINAL(msg_encrypt_final)
MSG_FINAL(msg_decrypt_final)
MSG_FINAL(msg_sign_final)
MSG_FINAL(msg_verify_final)

static CK_RV msg_crypt(CK_SESSION_HANDLE h, CK_VOID_PTR p, CK_ULONG pn,
		       CK_BYTE_PTR a, CK_ULONG an, CK_BYTE_PTR i, CK_ULONG in,
		       CK_BYTE_PTR o, CK_ULONG_PTR on)
{
	(void)h, (void)p, (void)pn, (void)a, (void)an, (void)i, (void)in,
		(void)o, (void)on;
	return not_supported();
}

static CK_RV msg_crypt_begin(CK_SESSION_HANDLE h, CK_VOID_PTR p, CK_ULONG pn,
			     CK_BYTE_PTR a, CK_ULONG an)
{
	(void)h, (void)p, (void)pn, (void)a, (void)an;
	return not_supported();
}

static CK_RV msg_crypt_next(CK_SESSION_HANDLE h, CK_VOID_PTR p, CK_ULONG pn,
			    CK_BYTE_PTR i, CK_ULONG in, CK_BYTE_PTR o,
			    CK_ULONG_PTR on, CK_FLAGS f)
{
	(void)h, (void)p, (void)pn, (void)i, (void)in, (void)o, (void)on,
		(void)f;
	return not_supported();
}

static CK_RV msg_sign(CK_SESSION_HANDLE h, CK_VOID_PTR p, CK_ULONG pn,
		      CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR s, CK_ULONG_PTR sn)
{
	(void)h, (void)p, (void)pn, (void)d, (void)dn, (void)s, (void)sn;
	return not_supported();
}

static CK_RV msg_begin(CK_SESSION_HANDLE h, CK_VOID_PTR p, CK_ULONG pn)
{
	(void)h, (void)p, (void)pn;
	return not_supported();
}

static CK_RV msg_verify(CK_SESSION_HANDLE h, CK_VOID_PTR p, CK_ULONG pn,
			CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR s, CK_ULONG sn)
{
	(void)h, (void)p, (void)pn, (void)d, (void)dn, (void)s, (void)sn;
	return not_supported();
}

/* ---- function lists and interfaces ------------------------------------ */

#define COMMON_FUNCTIONS \
	.C_Initialize = C_Initialize, \
	.C_Finalize = C_Finalize, \
	.C_GetFunctionList = C_GetFunctionList, \
	.C_GetSlotList = C_GetSlotList, \
	.C_GetSlotInfo = C_GetSlotInfo, \
	.C_GetTokenInfo = C_GetTokenInfo, \
	.C_GetMechanismList = C_GetMechanismList, \
	.C_GetMechanismInfo = C_GetMechanismInfo, \
	.C_InitToken = C_InitToken, \
	.C_InitPIN = C_InitPIN, \
	.C_SetPIN = C_SetPIN, \
	.C_OpenSession = C_OpenSession, \
	.C_CloseSession = C_CloseSession, \
	.C_CloseAllSessions = C_CloseAllSessions, \
	.C_GetSessionInfo = C_GetSessionInfo, \
	.C_GetOperationState = C_GetOperationState, \
	.C_SetOperationState = C_SetOperationState, \
	.C_Login = C_Login, \
	.C_Logout = C_Logout, \
	.C_CreateObject = C_CreateObject, \
	.C_CopyObject = C_CopyObject, \
	.C_DestroyObject = C_DestroyObject, \
	.C_GetObjectSize = C_GetObjectSize, \
	.C_GetAttributeValue = C_GetAttributeValue, \
	.C_SetAttributeValue = C_SetAttributeValue, \
	.C_FindObjectsInit = C_FindObjectsInit, \
	.C_FindObjects = C_FindObjects, \
	.C_FindObjectsFinal = C_FindObjectsFinal, \
	.C_EncryptInit = C_EncryptInit, \
	.C_Encrypt = C_Encrypt, \
	.C_EncryptUpdate = C_EncryptUpdate, \
	.C_EncryptFinal = C_EncryptFinal, \
	.C_DecryptInit = C_DecryptInit, \
	.C_Decrypt = C_Decrypt, \
	.C_DecryptUpdate = C_DecryptUpdate, \
	.C_DecryptFinal = C_DecryptFinal, \
	.C_DigestInit = C_DigestInit, \
	.C_Digest = C_Digest, \
	.C_DigestUpdate = C_DigestUpdate, \
	.C_DigestKey = C_DigestKey, \
	.C_DigestFinal = C_DigestFinal, \
	.C_SignInit = C_SignInit, \
	.C_Sign = C_Sign, \
	.C_SignUpdate = C_SignUpdate, \
	.C_SignFinal = C_SignFinal, \
	.C_SignRecoverInit = C_SignRecoverInit, \
	.C_SignRecover = C_SignRecover, \
	.C_VerifyInit = C_VerifyInit, \
	.C_Verify = C_Verify, \
	.C_VerifyUpdate = C_VerifyUpdate, \
	.C_VerifyFinal = C_VerifyFinal, \
	.C_VerifyRecoverInit = C_VerifyRecoverInit, \
	.C_VerifyRecover = C_VerifyRecover, \
	.C_DigestEncryptUpdate = C_DigestEncryptUpdate, \
	.C_DecryptDigestUpdate = C_DecryptDigestUpdate, \
	.C_SignEncryptUpdate = C_SignEncryptUpdate, \
	.C_DecryptVerifyUpdate = C_DecryptVerifyUpdate, \
	.C_GenerateKey = C_GenerateKey, \
	.C_GenerateKeyPair = C_GenerateKeyPair, \
	.C_WrapKey = C_WrapKey, \
	.C_UnwrapKey = C_UnwrapKey, \
	.C_DeriveKey = C_DeriveKey, \
	.C_SeedRandom = C_SeedRandom, \
	.C_GenerateRandom = C_GenerateRandom, \
	.C_GetFunctionStatus = C_GetFunctionStatus, \
	.C_CancelFunction = C_CancelFunction, \
	.C_WaitForSlotEvent = C_WaitForSlotEvent

static CK_FUNCTION_LIST list_240 = {
	.version = { 2, 40 },
	.C_GetInfo = get_info_240,
	COMMON_FUNCTIONS
};

static CK_RV get_interface_list(CK_INTERFACE_PTR p, CK_ULONG_PTR n);
static CK_RV get_interface(CK_UTF8CHAR_PTR name, CK_VERSION_PTR v,
			   CK_INTERFACE_PTR_PTR pp, CK_FLAGS flags);

static wks_p11_function_list_3_0 list_30 = {
	.v2 = {
		.version = { 3, 0 },
		.C_GetInfo = C_GetInfo,
		COMMON_FUNCTIONS
	},
	.C_GetInterfaceList = get_interface_list,
	.C_GetInterface = get_interface,
	.C_LoginUser = login_user,
	.C_SessionCancel = w11_session_cancel,
	.C_MessageEncryptInit = msg_encrypt_init,
	.C_EncryptMessage = msg_crypt,
	.C_EncryptMessageBegin = msg_crypt_begin,
	.C_EncryptMessageNext = msg_crypt_next,
	.C_MessageEncryptFinal = msg_encrypt_final,
	.C_MessageDecryptInit = msg_decrypt_init,
	.C_DecryptMessage = msg_crypt,
	.C_DecryptMessageBegin = msg_crypt_begin,
	.C_DecryptMessageNext = msg_crypt_next,
	.C_MessageDecryptFinal = msg_decrypt_final,
	.C_MessageSignInit = msg_sign_init,
	.C_SignMessage = msg_sign,
	.C_SignMessageBegin = msg_begin,
	.C_SignMessageNext = msg_sign,
	.C_MessageSignFinal = msg_sign_final,
	.C_MessageVerifyInit = msg_verify_init,
	.C_VerifyMessage = msg_verify,
	.C_VerifyMessageBegin = msg_begin,
	.C_VerifyMessageNext = msg_verify,
	.C_MessageVerifyFinal = msg_verify_final,
};

static CK_CHAR iface_name[] = "PKCS 11";

/* Neither interface is CKF_INTERFACE_FORK_SAFE: a fork()ed child must
 * call C_Initialize again. */
static CK_INTERFACE interfaces[] = {
	{ iface_name, &list_30, 0 },
	{ iface_name, &list_240, 0 },
};
#define NIFACES (sizeof(interfaces) / sizeof(interfaces[0]))

W11_EXPORT CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR pp)
{
	if (!pp)
		return CKR_ARGUMENTS_BAD;
	*pp = &list_240;
	return CKR_OK;
}

static CK_RV get_interface_list(CK_INTERFACE_PTR p, CK_ULONG_PTR n)
{
	if (!n)
		return CKR_ARGUMENTS_BAD;
	if (!p) {
		*n = NIFACES;
		return CKR_OK;
	}
	if (*n < NIFACES) {
		*n = NIFACES;
		return CKR_BUFFER_TOO_SMALL;
	}
	memcpy(p, interfaces, sizeof(interfaces));
	*n = NIFACES;
	return CKR_OK;
}

static CK_RV get_interface(CK_UTF8CHAR_PTR name, CK_VERSION_PTR v,
			   CK_INTERFACE_PTR_PTR pp, CK_FLAGS flags)
{
	if (!pp)
		return CKR_ARGUMENTS_BAD;
	if (name && strcmp((const char *)name, (const char *)iface_name) != 0)
		return CKR_ARGUMENTS_BAD;
	if (flags & CKF_INTERFACE_FORK_SAFE)
		return CKR_ARGUMENTS_BAD;
	for (size_t i = 0; i < NIFACES; i++) {
		const CK_VERSION *iv = interfaces[i].pFunctionList;

		if (!v || (v->major == iv->major && v->minor == iv->minor)) {
			*pp = &interfaces[i];
			return CKR_OK;
		}
	}
	return CKR_ARGUMENTS_BAD;
}

W11_EXPORT CK_RV C_GetInterfaceList(CK_INTERFACE_PTR p, CK_ULONG_PTR n)
{
	return get_interface_list(p, n);
}

W11_EXPORT CK_RV C_GetInterface(CK_UTF8CHAR_PTR name, CK_VERSION_PTR v,
				CK_INTERFACE_PTR_PTR pp, CK_FLAGS flags)
{
	return get_interface(name, v, pp, flags);
}
