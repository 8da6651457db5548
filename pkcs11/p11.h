/*
 * libwks-pkcs11.so: a PKCS#11 module whose tokens are WKS keystores
 * (docs/PKCS11.md).  Internal header shared by the module's files.
 *
 * Layers, as in kryoptic and SoftHSM2:
 *   module.c    the C_* entry points of the general group, the function
 *               lists, initialisation, locking and fork()
 *   slot.c      slots, token information, mechanisms (mech.c's table)
 *   session.c   sessions, login, logout, PINs
 *   token.c     a token's store: loading, reloading, the object list
 *   object.c    the object model: the attributes of each kind of object
 *   attr.c      attribute lists, templates, DER and key helpers
 *   find.c      C_FindObjects*, C_GetAttributeValue, C_GetObjectSize
 *   sign.c      C_Sign* and C_Verify*
 *   crypt.c     C_Encrypt* and C_Decrypt* (AES, DES3, RSA, key wrap)
 *   digest.c    C_Digest*, C_GenerateRandom
 *   derive.c    C_DeriveKey (ECDH, HKDF)
 *   wrap.c      C_WrapKey, C_UnwrapKey (AES key wrap)
 *   keygen.c    C_GenerateKey, C_GenerateKeyPair, self-signed certificates
 *   write.c     the locked saves, new entries (C_CreateObject), session
 *               objects and their templates
 *   change.c    C_CopyObject, C_DestroyObject, C_SetAttributeValue
 *   pin.c       C_SetPIN, C_InitPIN, C_InitToken
 *   share.c     the shared login (the user's kernel keyring)
 *   sharefmt.c  its record (no OpenSSL, fuzzed alone)
 *   import.c    keys from templates
 *   log.c       the debug log
 *   config.c    the configuration file (no OpenSSL, fuzzed alone)
 *
 * Locking (see docs/PKCS11.md, "Threads and fork()"):
 *   w11_g.alive    every entry point holds it shared for its duration;
 *                  C_Initialize, C_Finalize and fork() take it exclusive,
 *                  so they never see a call half done;
 *   w11_g.sess_lock  the session table (shared for a lookup, which takes
 *                  a reference on the session and lets go);
 *   session->mu    one call at a time per session;
 *   token->edit    loads, logins and saves of one token, one at a time
 *                  (held across PBKDF2 and file I/O);
 *   token->lock    the token's object list, login state and decrypted
 *                  keys; never held across PBKDF2 or I/O.
 * Order: alive, then session->mu, then token->edit, then token->lock,
 * then sess_lock.  Nothing takes a session's mu while holding a token's
 * lock.
 */
#ifndef WKS_PKCS11_P11_H
#define WKS_PKCS11_P11_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <wks/wks.h>

#include "pkcs11v3.h"
#include "config.h"
#include "attrrec.h"

#define W11_EXPORT __attribute__((visibility("default")))

/* ---- the module's own OpenSSL library context (module.c) ----------------
 * Every OpenSSL call of the module (and every store it makes) works in
 * this context, never in the application's default one: that one may
 * route back into the application's providers (pkcs11-provider, which
 * may be the caller, holding its own locks).  Made by C_Initialize with
 * OpenSSL's default provider loaded into it, freed by C_Finalize (and in
 * a fork()ed child) after everything made in it. */
extern OSSL_LIB_CTX *w11_libctx;

/* ---- debug log (log.c): off unless WKS_PKCS11_DEBUG is set ------------ */

extern int w11_debug;
void w11_log(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;
#define W11_LOG(...) do { if (w11_debug) w11_log(__VA_ARGS__); } while (0)
/* Log a libwks failure with its detail (never a secret). */
void w11_log_wks(const char *what, int err);
void w11_log_init(void);
/* 1 in a process whose real and effective ids (uid or gid) differ, or
 * that runs in secure-execution mode (AT_SECURE: a set-user-ID or
 * set-group-ID program, file capabilities): its environment and its user
 * keyring (KEY_SPEC_USER_KEYRING follows the real uid) are its caller's.
 * The module then ignores WKS_PKCS11_CONF and WKS_PKCS11_DEBUG and shares
 * no login (share.c).  module.c. */
int w11_privileged(void);

/* ---- attribute lists and templates (attr.c) ------------------------------ */

typedef struct {
	CK_ATTRIBUTE_TYPE type;
	CK_ULONG len;
	unsigned char *val;
} w11_attr;

typedef struct {
	w11_attr *v;
	size_t n, cap;
} w11_attrs;

CK_RV w11_attrs_set(w11_attrs *a, CK_ATTRIBUTE_TYPE t, const void *val,
		    size_t len);
CK_RV w11_attrs_bool(w11_attrs *a, CK_ATTRIBUTE_TYPE t, int v);
CK_RV w11_attrs_ulong(w11_attrs *a, CK_ATTRIBUTE_TYPE t, CK_ULONG v);
const w11_attr *w11_attrs_get(const w11_attrs *a, CK_ATTRIBUTE_TYPE t);
int w11_attrs_is_true(const w11_attrs *a, CK_ATTRIBUTE_TYPE t);
CK_RV w11_attrs_copy(w11_attrs *dst, const w11_attrs *src);
void w11_attrs_free(w11_attrs *a);

/* A template attribute, NULL if absent. */
const CK_ATTRIBUTE *w11_tmpl(const CK_ATTRIBUTE *t, CK_ULONG n,
			     CK_ATTRIBUTE_TYPE type);
/* CK_BBOOL / CK_ULONG template values: CKR_OK with *out set, or *out
 * unchanged if absent; CKR_ATTRIBUTE_VALUE_INVALID for a wrong size. */
CK_RV w11_tmpl_bool(const CK_ATTRIBUTE *t, CK_ULONG n, CK_ATTRIBUTE_TYPE type,
		    int *out);
CK_RV w11_tmpl_ulong(const CK_ATTRIBUTE *t, CK_ULONG n,
		     CK_ATTRIBUTE_TYPE type, CK_ULONG *out);
/* Check a template's shape (attr.c, the one check every template-taking
 * entry point makes first): no NULL array with a count, no NULL value
 * with a non-zero length, at most 1024 attributes, and (not for a
 * search, `search` != 0) no attribute twice. */
CK_RV w11_tmpl_check(const CK_ATTRIBUTE *t, CK_ULONG n);
CK_RV w11_tmpl_check_ex(const CK_ATTRIBUTE *t, CK_ULONG n, int search);

/* Copy `len` bytes into a caller's CK_ATTRIBUTE by the spec's rules. */
CK_RV w11_attr_out(CK_ATTRIBUTE *a, const void *val, CK_ULONG len);

/* Fixed-width PKCS#11 text: copy s, pad with spaces. */
void w11_pad(CK_UTF8CHAR *dst, size_t width, const char *s);

/* ---- DER and key helpers (attr.c) ----------------------------------------- */

/* CKA_EC_PARAMS of a key (named curve OID; Ed25519/Ed448 OID). */
CK_RV w11_ec_params(unsigned char **out, size_t *len, const EVP_PKEY *pk);
/* CKA_EC_POINT: DER OCTET STRING of the public point / Ed public key. */
CK_RV w11_ec_point(unsigned char **out, size_t *len, const EVP_PKEY *pk);
/* The curve named by CKA_EC_PARAMS: a NID (NID_X9_62_prime256v1, ...,
 * NID_ED25519, NID_ED448), or NID_undef. */
int w11_curve_from_params(const unsigned char *p, size_t len);
/* The key type of an EVP_PKEY: CKK_RSA, CKK_EC, CKK_EC_EDWARDS, or
 * CKK_VENDOR_DEFINED for a type the module does not use. */
CK_KEY_TYPE w11_pkey_type(const EVP_PKEY *pk);
/* Key size in the units of CK_MECHANISM_INFO (bits). */
CK_ULONG w11_pkey_bits(const EVP_PKEY *pk);
/* SHA-1 of the public key BIT STRING's contents (RFC 5280 key id). */
CK_RV w11_key_id(unsigned char out[20], const EVP_PKEY *pk);

/* ---- memory for PINs (attr.c): one locked, undumpable page, wiped on
 * free and zero in a fork()ed child (MADV_WIPEONFORK) ---------------------- */

typedef struct {
	unsigned char *p;
	size_t len;
} w11_secret;

CK_RV w11_secret_set(w11_secret *s, const void *pin, size_t len);
void w11_secret_free(w11_secret *s);

/* ---- key material shared by a token's key objects and their session
 * copies (token.c) ------------------------------------------------------- */

typedef struct w11_token w11_token;

typedef struct {
	atomic_uint refs;
	w11_token *tok;       /* NULL for session keys */
	char *alias;          /* the entry; NULL for session keys */
	int is_secret;
	CK_KEY_TYPE ktype;
	EVP_PKEY *pub;        /* private keys: from the leaf certificate */
	/* Decrypted material: token keys only while logged in (under the
	 * token's lock; login_gen says of which login), session keys for
	 * their whole life. */
	EVP_PKEY *priv;
	unsigned char *sec;
	size_t sec_len;
	int always_auth;      /* -1: not known yet */
	int force_auth;       /* CKA_ALWAYS_AUTHENTICATE from the attribute
			       * record (a key whose password is the
			       * store's, made always-authenticate) */
	uint64_t login_gen;
	unsigned char ident[32]; /* entry identity, reused across reloads:
				  * the digest of the entry's stored bytes */
	char *sec_alg;        /* secret keys: the JCA algorithm name */
	/* Token keys: a reload found the entry deleted or its bytes
	 * replaced (lock held to set or read): the material is forgotten
	 * and every use (session copies too) fails. */
	int gone;
	int live;             /* scratch of w11_token_install() */
} w11_keymat;

w11_keymat *w11_keymat_new(void);
w11_keymat *w11_keymat_ref(w11_keymat *km);
void w11_keymat_unref(w11_keymat *km);
/* Drop the decrypted material (wiped). */
void w11_keymat_forget(w11_keymat *km);

/* ---- objects (object.c) --------------------------------------------------- */

enum {
	W11_R_PRIV = 1, /* private key */
	W11_R_PUB,      /* public key */
	W11_R_LEAF,     /* leaf certificate of a private key entry */
	W11_R_CHAIN,    /* further certificate of a private key entry */
	W11_R_TRUSTED,  /* trusted certificate entry */
	W11_R_SECRET,   /* secret key */
	W11_R_SESSION,  /* a session object (any class) */
	W11_R_DATA      /* a token data object (the attribute record) */
};

#define W11_OF_TOKEN 0x01u
#define W11_OF_PRIVATE 0x02u
#define W11_OF_HIDDEN 0x04u /* a copy that keeps its source's CKA_ID and
			     * CKA_LABEL: found by those only when the
			     * template asks for CKA_TOKEN false */

typedef struct {
	CK_OBJECT_HANDLE handle;
	CK_OBJECT_CLASS cls;
	int role;
	unsigned flags;
	CK_SESSION_HANDLE owner; /* session objects: the creating session */
	char *alias;             /* token objects: the entry's alias */
	size_t chain_index;
	unsigned char ident[32]; /* token objects: identity across reloads */
	unsigned char edig[32];  /* token objects: their entry's digest (the
				  * attribute record is bound to it) */
	int reused;              /* took an older object's handle */
	w11_attrs attrs;         /* every attribute but the sensitive ones */
	w11_keymat *km;          /* keys */
} w11_obj;

void w11_obj_free(w11_obj *o);
/* Does o's CKA_ALLOWED_MECHANISMS let it be used with `m` (absent or
 * empty: any mechanism of its type)?  attr.c. */
int w11_mech_allowed(const w11_obj *o, CK_MECHANISM_TYPE m);

/* Build the objects of a store entry (token.c calls it on load).  The
 * keymat (private and secret keys) is made by the caller and referenced. */
CK_RV w11_obj_cert(w11_obj **out, X509 *x, int role, const char *alias,
		   size_t index, const unsigned char *id, size_t id_len);
CK_RV w11_obj_pubkey(w11_obj **out, w11_keymat *km, X509 *leaf,
		     const char *alias, const unsigned char *id, size_t id_len,
		     unsigned flags);
CK_RV w11_obj_privkey(w11_obj **out, w11_keymat *km, X509 *leaf,
		      const char *alias, const unsigned char *id,
		      size_t id_len, unsigned flags);
CK_RV w11_obj_secret(w11_obj **out, w11_keymat *km, const char *alias,
		     unsigned flags);
/* CKA_ID of a certificate: its subject key identifier, else the SHA-1
 * of its public key. */
CK_RV w11_cert_id(unsigned char *out, size_t *len, size_t cap, X509 *x);

/* The value of one attribute, for C_GetAttributeValue and matching:
 * CKR_OK with val and len set (val points into the object, or into
 * `tmp`, a buffer the caller frees with OPENSSL_clear_free), or
 * CKR_ATTRIBUTE_SENSITIVE / CKR_ATTRIBUTE_TYPE_INVALID.  With the token's
 * lock held.  CKA_ALWAYS_AUTHENTICATE and a token secret's CKA_VALUE_LEN
 * are known once the key was decrypted (w11_keymat_resolve()). */
CK_RV w11_obj_attr(const w11_obj *o, CK_ATTRIBUTE_TYPE t,
		   const unsigned char **val, CK_ULONG *len,
		   unsigned char **tmp);

/* ---- tokens (token.c) ----------------------------------------------------- */

typedef struct {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	int exists;
} w11_fileid;

struct w11_token {
	CK_SLOT_ID slot;
	const w11_conf_token *conf;
	char serial[17];
	char *canon;             /* canonical store path (for the serial) */
	pthread_mutex_t edit;
	pthread_mutex_t lock;
	struct w11_storeref *sref; /* the store as last loaded (under lock) */
	w11_fileid fid;          /* of the file st was loaded from */
	int load_failed;         /* the file exists but could not be read */
	CK_USER_TYPE login;      /* CKU_USER, CKU_SO, or (CK_ULONG)-1 */
	w11_secret pin;          /* the store password while logged in */
	uint64_t login_gen;      /* bumped at every login and logout */
	w11_secret rec_key;      /* the attribute record's MAC key, its
				  * salt and iterations, for the login */
	w11_rec *rec_next;       /* the record an edit just wrote, for the
				  * install that follows (edit lock) */
	int rec_next_verified;
	w11_rec *rec_edit;       /* the record during an edit (edit lock) */
	char *rec_path;          /* STORE.p11 */
	int edit_rec_only;       /* the edit changes the record alone (edit
				  * lock) */
	w11_fileid rfid;         /* of the record file the objects show */
	int adopted;             /* the login was taken from the keyring
	                          * (share.c) and this process has not called
	                          * C_Login yet */
	long share_ring;         /* share.c: the keyring of the shared login
	                          * this login made or took over (0: none), */
	int64_t share_deadline;  /* its end (CLOCK_REALTIME s), */
	uint64_t share_gen;      /* for login_gen == share_gen only */
	w11_obj **objs;
	size_t nobjs, cap;
	size_t nsessions, nrw;   /* open sessions, read-write ones */
	atomic_llong checked_ns; /* CLOCK_MONOTONIC of the last look at the
				  * file by w11_token_check() */
	struct w11_resealed {    /* entries the running edit of this module
				  * wrote again with their key unchanged
				  * (w11_token_resealed(); edit lock held) */
		char *alias, *was;
	} *resealed;
	size_t nresealed;
};

#define W11_NOT_LOGGED_IN ((CK_USER_TYPE)-1)

/* The store as last loaded, shared: an operation takes a reference
 * under the lock and uses it without (a reload may replace it). */
typedef struct w11_storeref {
	atomic_uint refs;
	wks_store *st;
} w11_storeref;

w11_storeref *w11_storeref_get(w11_token *t); /* lock held; NULL if none */
void w11_storeref_put(w11_storeref *r);

CK_RV w11_token_init(w11_token *t, CK_SLOT_ID slot,
		     const w11_conf_token *conf);
void w11_token_fini(w11_token *t);
/* A new store with the token's properties (not loaded). */
CK_RV w11_token_new_store(w11_token *t, wks_store **out);
/* Reload the store if the file changed (or was never read): takes the
 * edit lock.  CKR_OK also when the file is unreadable (the token then
 * shows what it had; logged), unless nothing was ever read from it
 * (CKR_DEVICE_ERROR: an unreadable store is not an empty token). */
CK_RV w11_token_refresh(w11_token *t);
/* For an operation init: w11_token_refresh() unless the file was looked
 * at less than W11_CHECK_NS ago (a stat costs about a microsecond, 5 % of
 * an ECDSA signature): a change saved by another program is seen by every
 * operation init that starts W11_CHECK_NS or more after it. */
#define W11_CHECK_NS 1000000 /* 1 ms */
void w11_token_check(w11_token *t);
/* Can the token be written?  CKR_OK, or CKR_TOKEN_WRITE_PROTECTED for
 * `read-only = yes` and for a store file (or its folder, where a save
 * writes the new file) this process may not write, checked now with its
 * effective ids; the debug log says why (slot.c). */
CK_RV w11_token_writable(const w11_token *t);
/* Replace the token's store by `st` (consumed) loaded from a file with
 * identity `fid`, and rebuild the object list.  Called with the edit
 * lock held, takes the lock. */
CK_RV w11_token_install(w11_token *t, wks_store *st, const w11_fileid *fid);
void w11_fileid_of(w11_fileid *id, const char *path);
int w11_fileid_eq(const w11_fileid *a, const w11_fileid *b);
/* Logout: wipe the PIN, forget decrypted keys, clear the KEK cache.
 * With the lock held. */
void w11_token_logout_locked(w11_token *t);
/* ---- the shared login (share.c; docs/PKCS11.md "Shared login") ----------
 * All do nothing unless the token has `shared-login = yes`, nor in a
 * w11_privileged() process, and never fail a call (the debug log says
 * why a login was not shared).  A login is a keyring of its own in the
 * user's keyring, holding the record (sharefmt.h); both end at the
 * record's deadline, the C_Login's time plus the TTL.
 *   login    after a C_Login with the PIN: end any earlier shared login
 *            (revoke), make a new one, full TTL, and publish;
 *   publish  leave the token's user login again, into the keyring that
 *            login made or took over, with its deadline (after an edit,
 *            C_SetPIN): nothing once that keyring was revoked or
 *            expired, so a C_Logout anywhere wins; warms the KEK cache
 *            with the PIN (one batch), exports it; edit lock held, not
 *            the lock;
 *   adopt    a token not logged in takes over a login left there, if the
 *            store file is still the one it names (no PBKDF2); takes the
 *            edit lock; 1 if it did;
 *   revoke   remove it (C_Logout, logged in or not);
 *   carry    the logged-in store's cached keys into `to`, a new load of
 *            the same file after an edit (no PBKDF2 for the keys that
 *            did not change); edit lock held. */
void w11_share_publish(w11_token *t);
void w11_share_login(w11_token *t);
int w11_share_adopt(w11_token *t);
void w11_share_revoke(w11_token *t);
void w11_share_carry(w11_token *t, wks_store *to);

/* ---- the attribute record's file (recfile.c; attrrec.h: the format) -----
 * read: with pw, its MAC verified (*verified = 1) or the record dropped;
 * without, parsed only (its word is then taken for public objects only).
 * A missing or bad file is an empty record and CKR_OK (logged).  write:
 * atomically, under the store's lock held by the caller; an empty
 * record removes the file.  Neither with the token's lock held. */
char *w11_rec_path(const w11_token *t);
CK_RV w11_recfile_read(w11_token *t, const char *pw, size_t pw_len,
		       w11_rec *rec, int *verified);
CK_RV w11_recfile_write(w11_token *t, w11_rec *rec, const char *pw,
			size_t pw_len);
/* The attributes the record keeps (write.c): of an entry's objects, and
 * (with a value of that length) of a data object. */
int w11_rec_persistable(CK_ATTRIBUTE_TYPE t);
/* Is `len` a right length for kept attribute `type`? */
int w11_rec_value_ok(CK_ATTRIBUTE_TYPE type, CK_ULONG len);
int w11_rec_data_attr(CK_ATTRIBUTE_TYPE t, CK_ULONG len);
/* A token data object from its item (object.c). */
CK_RV w11_obj_data(w11_obj **out, const w11_ritem *it);
/* Keep a template's persistable attributes in the record being written
 * for an object of entry `alias` (write.c; during an edit). */
CK_RV w11_rec_keep(w11_token *t, wks_store *st, const char *alias, int role,
		   size_t index, const CK_ATTRIBUTE *tmpl, CK_ULONG n);

/* The object with that handle (token or session object), NULL if none.
 * Lock held. */
w11_obj *w11_token_find(w11_token *t, CK_OBJECT_HANDLE h);
/* Is `o` visible to a session of `t` in the current login state? */
int w11_obj_visible(const w11_token *t, const w11_obj *o);
CK_RV w11_token_add_obj(w11_token *t, w11_obj *o);
void w11_token_remove_obj(w11_token *t, CK_OBJECT_HANDLE h);
/* Remove and free the session objects of session `s`.  Lock held. */
void w11_token_drop_session_objs(w11_token *t, CK_SESSION_HANDLE s);
CK_OBJECT_HANDLE w11_new_handle(void);

/*
 * The decrypted private key (or secret) of `km` for an operation:
 *   - token key, not ALWAYS_AUTHENTICATE: decrypted with the login PIN
 *     (once per login; kept in km), *pkey gets a new reference;
 *   - ALWAYS_AUTHENTICATE (its key password is not the store's):
 *     CKR_USER_NOT_LOGGED_IN unless `pin` is given (a context-specific
 *     login), which is then used and nothing is kept;
 * Secrets: sec and sec_len get a copy (free with OPENSSL_clear_free).
 * Not called with the token's lock held (it may run PBKDF2).
 */
CK_RV w11_keymat_get(w11_keymat *km, const char *pin, size_t pin_len,
		     EVP_PKEY **pkey, unsigned char **sec, size_t *sec_len);
/* Resolve km->always_auth (may decrypt; not with the lock held). */
CK_RV w11_keymat_resolve(w11_keymat *km);

/* ---- sessions and operations (session.c) --------------------------------- */

enum {
	W11_OP_NONE = 0,
	W11_OP_SIGN,
	W11_OP_VERIFY,
	W11_OP_ENCRYPT,
	W11_OP_DECRYPT,
	W11_OP_DIGEST,
	W11_OP_KINDS
};

typedef struct w11_mech w11_mech;
typedef struct w11_op w11_op;
typedef struct w11_session w11_session;

struct w11_op {
	int active;
	int kind;                 /* W11_OP_* */
	/* Builds the OpenSSL state once the key is at hand (at once, or
	 * after a context-specific login). */
	CK_RV (*setup)(w11_session *s, w11_op *op);
	const w11_mech *m;
	w11_keymat *km;           /* key of the operation */
	int need_login;           /* ALWAYS_AUTHENTICATE, not yet given */
	int multi;                /* an Update was called */
	EVP_PKEY *pkey;
	EVP_PKEY_CTX *pctx;       /* raw sign/verify/encrypt/decrypt */
	EVP_MD_CTX *mdctx;        /* the digest of a combined mechanism */
	EVP_MAC_CTX *mac;
	EVP_CIPHER_CTX *cctx;
	unsigned char *buf;       /* data held back (EdDSA, GCM decrypt,
				   * CBC_PAD decrypt's last block) */
	size_t len, cap;
	unsigned char *sec;       /* secret key bytes (AES/HMAC, for
				   * deferred set-up) */
	size_t sec_len;
	CK_ULONG tag_len;         /* GCM */
	unsigned char param[64];  /* mechanism parameters kept by value */
	size_t param_len;
	unsigned char *aad;       /* GCM's additional data, OAEP's label */
	size_t aad_len;
	size_t pending;           /* bytes OpenSSL holds back (block modes) */
};

/* A signature context kept for the next C_SignInit with the same key,
 * mechanism and parameters (so a loop of SignInit + Sign does not set
 * up OpenSSL each time). */
typedef struct {
	EVP_PKEY_CTX *pctx;
	EVP_PKEY *pkey;
	w11_keymat *km;          /* whose key: dropped once it is gone */
	const w11_mech *m;
	unsigned char param[64];
	size_t param_len;
	int verify;
} w11_ctxcache;

struct w11_session {
	CK_SESSION_HANDLE h;
	atomic_uint refs;
	pthread_mutex_t mu;
	int closed;
	w11_token *tok;
	CK_FLAGS flags;
	w11_op op[W11_OP_KINDS];
	w11_ctxcache cache[2];   /* [0] sign, [1] verify */
	uint64_t cache_gen;      /* tok->login_gen the cache belongs to */
	int finding;
	CK_OBJECT_HANDLE *found;
	size_t nfound, pos;
	uint64_t find_gen;       /* tok->login_gen at C_FindObjectsInit */
};

/* Look up a session, take its mutex; release with w11_session_put(). */
CK_RV w11_session_get(CK_SESSION_HANDLE h, w11_session **out);
void w11_session_put(w11_session *s);
/* End an operation and free its state. */
void w11_op_end(w11_op *op);
/* Drop the kept signature contexts. */
void w11_session_cache_clear(w11_session *s);
/* After a logout: end key operations and drop cached contexts of every
 * session of `t`. */
void w11_sessions_after_logout(w11_token *t);
CK_STATE w11_session_state(const w11_session *s);
/* Close every session (C_Finalize, fork child). */
void w11_sessions_free_all(void);

/* ---- mechanisms (mech.c) --------------------------------------------------- */

/* W11_K_AES_ECB, _CBC and _CBC_PAD are the block-cipher modes of the
 * mechanism's key type: AES, or Triple DES (CKM_DES3_*). */
enum {
	W11_K_RSA_PKCS = 1, W11_K_RSA_PSS, W11_K_RSA_OAEP, W11_K_ECDSA,
	W11_K_EDDSA, W11_K_HMAC, W11_K_AES_ECB, W11_K_AES_CBC,
	W11_K_AES_CBC_PAD, W11_K_AES_CTR, W11_K_AES_GCM, W11_K_DIGEST,
	W11_K_ECDH, W11_K_GEN_RSA, W11_K_GEN_EC, W11_K_GEN_ED, W11_K_GEN_AES,
	W11_K_GEN_GENERIC, W11_K_GEN_DES3, W11_K_AES_KW, W11_K_AES_KWP,
	W11_K_CMAC, W11_K_HKDF
};

struct w11_mech {
	CK_MECHANISM_TYPE type;
	int kind;
	CK_KEY_TYPE ktype;   /* key type it takes (CKK_VENDOR_DEFINED: none) */
	CK_ULONG min, max;   /* CK_MECHANISM_INFO key sizes */
	CK_FLAGS flags;      /* CK_MECHANISM_INFO flags */
	const char *md;      /* digest of a combined or digest mechanism */
	int multipart;       /* C_*Update allowed */
};

const w11_mech *w11_mech_find(CK_MECHANISM_TYPE t);
size_t w11_mech_count(void);
const w11_mech *w11_mech_at(size_t i);
/* The EVP_MD of a digest name, fetched from w11_libctx once per
 * initialisation. */
const EVP_MD *w11_md(const char *name);
/* out = digest `name` (SHA1, SHA256, ...) of p[0..n): 1, or 0 on error. */
int w11_digest(unsigned char *out, const char *name, const void *p, size_t n);
/* The EVP_MD of a CKM_SHA* / CKG_MGF1_SHA* value, NULL if unknown. */
const EVP_MD *w11_md_of_ckm(CK_MECHANISM_TYPE t);
const EVP_MD *w11_md_of_mgf(CK_ULONG mgf);
EVP_MAC *w11_hmac(void);
/* The AES cipher of a W11_K_AES_* mechanism for a key of that length. */
const EVP_CIPHER *w11_aes(int kind, size_t key_len);
/* The same for a key type (CKK_AES, CKK_DES3); NULL if none. */
const EVP_CIPHER *w11_cipher(CK_KEY_TYPE kt, int kind, size_t key_len);
/* EVP_MAC "HMAC" / "CMAC", EVP_KDF "HKDF" / "X963KDF", fetched once from
 * w11_libctx; NULL for another name. */
EVP_MAC *w11_mac(const char *name);
EVP_KDF *w11_kdf(const char *name);
/* Does mechanism m take a key of type kt? */
int w11_mech_takes(const w11_mech *m, CK_KEY_TYPE kt);
/* Is len a valid value length for a secret key of type kt? */
int w11_secret_len_ok(CK_KEY_TYPE kt, size_t len);
/* A secret entry's JCA algorithm as a key type, and back (NULL: the key
 * type has no WKS entry). */
CK_KEY_TYPE w11_ktype_of_jca(const char *alg);
const char *w11_jca_of_ktype(CK_KEY_TYPE kt);
/* Set DES's odd parity bits in k[0..n). */
void w11_des_parity(unsigned char *k, size_t n);
void w11_mech_fini(void);

/* ---- the module (module.c) -------------------------------------------- */

typedef struct {
	pthread_rwlock_t alive;
	int initialized;
	int no_threads;          /* CKF_LIBRARY_CANT_CREATE_OS_THREADS */
	w11_conf *conf;
	w11_token *tokens;
	size_t ntokens;
	pthread_rwlock_t sess_lock;
	w11_session **sess;      /* sorted by handle */
	size_t nsess, sess_cap;
	CK_SESSION_HANDLE next_sess;
} w11_module;

extern w11_module w11_g;

CK_RV w11_enter(void);
void w11_leave(void);
w11_token *w11_slot_token(CK_SLOT_ID slot);
/* A libwks error as a CK_RV for key and store operations. */
CK_RV w11_rv_of_wks(int err);

/* Operation entry points shared between files. */
/* Find the key of an operation, take its material and set `op` up (or
 * leave it waiting for a context-specific login).  op->kind, op->setup
 * and the parameters are set by the caller. */
CK_RV w11_op_start(w11_session *s, w11_op *op, const w11_mech *m,
		   CK_OBJECT_HANDLE key, CK_ATTRIBUTE_TYPE usage);
CK_RV w11_sign_init(w11_session *s, const CK_MECHANISM *m,
		    CK_OBJECT_HANDLE key, int verify);
CK_RV w11_crypt_init(w11_session *s, const CK_MECHANISM *m,
		     CK_OBJECT_HANDLE key, int decrypt);
/* AES key wrap (wrap.c): the optional initial value of the mechanism
 * (CKR_MECHANISM_PARAM_INVALID for a wrong one); the output length for
 * an input of n bytes (for an unwrap with padding: at most that), or
 * CKR_KEY_SIZE_RANGE / CKR_WRAPPED_KEY_LEN_RANGE; and the computation
 * (*out_len: the room in out, then the length written; an unwrap whose
 * integrity check fails is CKR_WRAPPED_KEY_INVALID, out wiped). */
CK_RV w11_kw_params(const w11_mech *m, const CK_MECHANISM *mech,
		    unsigned char *iv, size_t *iv_len);
CK_RV w11_kw_len(const w11_mech *m, int unwrap, size_t n, size_t *need);
CK_RV w11_kw(const w11_mech *m, int wrap, const unsigned char *key,
	     size_t key_len, const unsigned char *iv, size_t iv_len,
	     const unsigned char *in, size_t n, unsigned char *out,
	     size_t *out_len);
/* Append to op->buf (bounded at 1 GiB). */
CK_RV w11_op_append(w11_op *op, const unsigned char *p, size_t n);

/* The body of an entry point that works on a session: enter the module,
 * take the session, evaluate `body`, let both go. */
#define W11_SESSION_CALL(h, s, body) \
	do { \
		CK_RV rv_ = w11_enter(); \
		if (rv_ != CKR_OK) \
			return rv_; \
		if ((rv_ = w11_session_get(h, &s)) == CKR_OK) { \
			rv_ = (body); \
			w11_session_put(s); \
		} \
		w11_leave(); \
		return rv_; \
	} while (0)

/* C_Login(CKU_CONTEXT_SPECIFIC): give the key password to the session's
 * pending operations. */
CK_RV w11_context_login(w11_session *s, const char *pin, size_t len);

/* Keys from templates (import.c). */
CK_RV w11_pkey_from_template(EVP_PKEY **out, int priv, CK_KEY_TYPE kt,
			     const CK_ATTRIBUTE *t, CK_ULONG n);
CK_RV w11_pkey_public(EVP_PKEY **out, EVP_PKEY *pk);
CK_RV w11_point_bytes(const unsigned char **pt, size_t *pt_len,
		      const unsigned char *p, size_t n, size_t raw_len);
size_t w11_curve_bytes(int nid);

/* Session objects (write.c): a key's objects from an OpenSSL key or
 * secret bytes, with a template's attributes applied; added to the
 * token as objects of session `s`.  `gen_mech` is the generating
 * mechanism (CK_UNAVAILABLE_INFORMATION for an imported key). */
CK_RV w11_session_keypair(w11_session *s, EVP_PKEY *pk,
			  const CK_ATTRIBUTE *pub_t, CK_ULONG pub_n,
			  const CK_ATTRIBUTE *priv_t, CK_ULONG priv_n,
			  CK_MECHANISM_TYPE gen_mech, CK_OBJECT_HANDLE *pub_h,
			  CK_OBJECT_HANDLE *priv_h);
CK_RV w11_session_secret(w11_session *s, CK_KEY_TYPE kt,
			 const unsigned char *v, size_t len,
			 const CK_ATTRIBUTE *t, CK_ULONG n,
			 CK_MECHANISM_TYPE gen_mech, CK_OBJECT_HANDLE *h);
/* Store a new token secret / key pair (with its self-signed
 * certificate) and return the handles of its objects.  `gen_mech`: the
 * mechanism that generated it (kept in the attribute record with
 * CKA_LOCAL), or CK_UNAVAILABLE_INFORMATION. */
CK_RV w11_token_secret(w11_session *s, CK_KEY_TYPE kt, const unsigned char *v,
		       size_t len, const CK_ATTRIBUTE *t, CK_ULONG n,
		       CK_MECHANISM_TYPE gen_mech, CK_OBJECT_HANDLE *h);
CK_RV w11_token_keypair(w11_session *s, EVP_PKEY *pk, const CK_ATTRIBUTE *pub_t,
			CK_ULONG pub_n, const CK_ATTRIBUTE *priv_t,
			CK_ULONG priv_n, CK_MECHANISM_TYPE gen_mech,
			CK_OBJECT_HANDLE *pub_h, CK_OBJECT_HANDLE *priv_h);
/* C_CreateObject's work in a session already held (write.c). */
CK_RV w11_create_object(w11_session *s, const CK_ATTRIBUTE *t, CK_ULONG n,
			CK_OBJECT_HANDLE *h);
/* Checks before a new object: CKR_OK, or why it may not be made (a
 * read-only session for a token object, no login for a token or private
 * object, a write-protected token). */
CK_RV w11_may_create(w11_session *s, int token, int private_obj);

/* Self-signed certificate for a generated or imported key pair (keygen.c). */
CK_RV w11_self_signed(X509 **out, EVP_PKEY *key, const char *cn,
		      const unsigned char *id, size_t id_len,
		      const X509 *like);

/* Writes (write.c): run `fn` on the store loaded under the exclusive file
 * lock, then save and reinstall it.  The session's user must be logged
 * in; `pin` is the store password. */
typedef CK_RV (*w11_edit_fn)(wks_store *st, const char *pin, size_t pin_len,
			     void *ctx);
CK_RV w11_token_edit(w11_token *t, w11_edit_fn fn, void *ctx);
/* The same for a change of the attribute record alone: the store is
 * loaded under its lock and not saved (its bytes stay as they are). */
CK_RV w11_token_edit_rec(w11_token *t, w11_edit_fn fn, void *ctx);
/* For an edit function: entry `alias` (`was` before the edit, if it was
 * renamed too; else NULL) was written again with the same key (a new
 * chain, a new password), so its key objects keep their handles and its
 * decrypted key at the install that ends the edit, although its stored
 * bytes, its identity, changed.  Edit lock held. */
CK_RV w11_token_resealed(w11_token *t, const char *alias, const char *was);
/* Forget the list (the end of an edit). */
void w11_token_resealed_clear(w11_token *t);
/* The same with the store loaded with `load_pw` and saved with `save_pw`
 * (C_SetPIN, C_InitToken); the edit lock held by the caller. */
CK_RV w11_token_edit_ex(w11_token *t, const char *load_pw, size_t load_len,
			const char *save_pw, size_t save_len, w11_edit_fn fn,
			void *ctx);
/* A libwks error of a store change as a CK_RV. */
CK_RV w11_rv_of_set(int err);
/* Apply a template to a session object (write.c): at creation, as
 * C_SetAttributeValue may change it, or as C_CopyObject may (a copy only
 * tightens what its source allows). */
enum { W11_APPLY_SET = 0, W11_APPLY_CREATE = 1, W11_APPLY_COPY = 2 };
CK_RV w11_apply_template(w11_obj *o, const CK_ATTRIBUTE *t, CK_ULONG n,
			 int mode);
/* Choose a free alias for a new entry: the label if given and free
 * (CKR_ATTRIBUTE_VALUE_INVALID if taken), else from the id, else a
 * fresh name.  *out: malloc'ed. */
CK_RV w11_new_alias(char **out, wks_store *st, const CK_ATTRIBUTE *label,
		    const unsigned char *id, size_t id_len, const char *what);

#endif
