/*
 * libwks - WKS keystores (the format of wolfJCE, wolfSSL's Java provider)
 *
 * A WKS keystore maps aliases to entries of three kinds:
 *
 *   - private key entries: a PKCS#8 private key, encrypted under a key
 *     password, plus its X.509 certificate chain (leaf first);
 *   - secret key entries: raw key bytes and a JCA algorithm name ("AES",
 *     "HmacSHA256", ...), encrypted under a key password;
 *   - trusted certificate entries: one X.509 certificate, not encrypted.
 *
 * Every key is encrypted with AES-256-CBC under a key derived by
 * PBKDF2-HMAC-SHA512 from its password, and authenticated with
 * HMAC-SHA512 (encrypt-then-MAC).  The whole file carries an HMAC-SHA512
 * keyed by the store password.  Files written by libwks are read by wolfJCE
 * and the other way round, byte for byte (see docs/FORMAT.md and the spec
 * it points to).
 *
 * Other keystores: <wks/convert.h> (installed next to this header) reads
 * Java's JKS and JCEKS and PKCS#12 into a wks_store and writes PKCS#12.
 * <wks/uri.h> reads wks: URIs, password sources (pass:, env:, file:, fd:)
 * and key reference files, and writes references; <wks/fork.h> holds a
 * program's own locks across fork() in libwks's order.
 *
 * Conventions used throughout this header
 * ---------------------------------------
 *
 * Return values.  Functions returning `int` return WKS_OK (0) on success or
 * a negative wks_err code.  On failure a human-readable detail is available
 * from wks_error_detail() in the failing thread; it never contains a
 * password or key material.
 *
 * Out-parameters (`out`, `*_len`, `count`, `out_ms`) are written, never
 * read: whatever *out holds on entry is overwritten without being looked
 * at or freed, so it may be uninitialised.  On success it holds the new
 * result; on failure NULL / 0 (a struct: all zero; a text buffer: "").
 * Because an earlier result in the same variable is not freed, free it
 * before the variable is passed again:
 *
 *     wks_store_get_key(&k, st, "a", pw, pw_len);  ...use k...
 *     wks_key_free(k);                             (else k leaks)
 *     wks_store_get_key(&k, st, "b", pw, pw_len);
 *
 * (The library cannot tell an old result from an uninitialised pointer,
 * so it never frees one and never refuses one.)
 *
 * Passwords are byte strings (`const char *pw, size_t pw_len`), normally
 * UTF-8 text; they are used exactly as given (wolfJCE converts its char[]
 * passwords with standard UTF-8, so UTF-8 text interoperates).  libwks never
 * keeps a password after the call returns (except inside the optional KEK
 * cache, which keeps only a keyed hash of it, never the password itself).
 *
 * Aliases are NUL-terminated strings in UTF-8.  Aliases are case-sensitive
 * and any Java string is a valid alias, including the empty string.  Two
 * things that plain UTF-8 C strings cannot carry are written as Java's own
 * JNI does: the character U+0000 is the two bytes C0 80, and an unpaired
 * UTF-16 surrogate is its 3-byte form (ED A0 80 .. ED BF BF).  Every alias
 * that libwks returns follows the same rules, so any alias read from a file
 * can be passed back unchanged.  A surrogate pair written as two 3-byte
 * sequences is accepted as the same alias as its 4-byte form (Java sees
 * one string).  Other invalid UTF-8 is rejected with WKS_ERR_INVALID.
 * The file holds an alias as Java's writeUTF does, at most 65535 bytes of
 * modified UTF-8 (a character above U+FFFF takes 6 bytes there, U+0000
 * 2): the calls that create an entry (wks_store_set_*(),
 * wks_store_rename()'s new alias) refuse a longer alias with
 * WKS_ERR_LIMIT, so that no save fails for it later.
 *
 * Ownership.  Memory returned through an out-parameter belongs to the caller
 * and is released with the matching free function (wks_key_free(),
 * wks_free(), wks_aliases_free(), OpenSSL's X509_free()/EVP_PKEY_free()).
 * Pointers returned as a function's value are borrowed.
 *
 * Thread safety.  The functions without a wks_store argument are
 * thread-safe.  One wks_store may be shared by any number of threads: all
 * queries and key retrievals run concurrently (under a reader lock that is
 * never held during PBKDF2), mutations (set, delete, load) are serialised
 * by a writer lock.  wks_store_free() must not race with any other call on
 * the same store.  After fork() a child may go on using the stores it
 * inherited, and the process-wide properties, even if other threads were
 * inside libwks at the fork: every libwks lock (each store's, the KEK
 * caches', the property and warning locks, the PBKDF2 pool's, the
 * provider's) is held across fork() and made anew in the child
 * (docs/DESIGN.md, "fork()"); a program's own locks that it holds while
 * it calls libwks can join them (<wks/fork.h>).  Their KEK caches start empty in the child
 * (new random keys, newly locked memory, statistics at zero; the parent's
 * are untouched), and a reaper thread the parent ran is restarted at the
 * child's first cache miss (docs/CACHE.md, "fork()").  OpenSSL's own
 * locks are not covered: a child of a multi-threaded process can hang in
 * OpenSSL (libwks's store calls fetch no algorithm after the first use).
 */
#ifndef WKS_WKS_H
#define WKS_WKS_H

#include <stddef.h>
#include <stdint.h>

/* WKS_CRYPTO_OPENSSL or WKS_CRYPTO_WOLFCRYPT: the crypto library this
 * libwks was built on.  The calls that take or return OpenSSL types
 * (EVP_PKEY, X509, OSSL_LIB_CTX) exist only in the OpenSSL build. */
#include <wks/backend.h>

#ifdef WKS_CRYPTO_OPENSSL
#include <openssl/types.h> /* EVP_PKEY, X509 (opaque) */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Exported symbols; everything else in the shared library is hidden. */
#if defined(__GNUC__)
#define WKS_API __attribute__((visibility("default")))
#else
#define WKS_API
#endif

#define WKS_VERSION_MAJOR 0
#define WKS_VERSION_MINOR 1
#define WKS_VERSION_PATCH 0
#define WKS_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------
 * Errors
 */

/*
 * Error codes.  Every failing call returns one of these (negative) values.
 * libwks reports through this model only: every call leaves the calling
 * thread's OpenSSL error queue (ERR_get_error()) as it found it, with
 * nothing added and nothing the application queued removed.
 */
typedef enum {
	WKS_OK = 0,
	/* Memory allocation failed. */
	WKS_ERR_NOMEM = -1,
	/* A file could not be read, written, synced or renamed (errno text in
	 * the detail). */
	WKS_ERR_IO = -2,
	/* Malformed input: bad magic or version, a truncated file, a negative
	 * length, an invalid string, an unparsable certificate or key. */
	WKS_ERR_FORMAT = -3,
	/* Integrity failure: an HMAC did not verify.  This means either a
	 * wrong password or modified data; the format cannot tell the two
	 * apart and libwks never guesses which. */
	WKS_ERR_INTEGRITY = -4,
	/* No entry with that alias (or no entry of the kind asked for). */
	WKS_ERR_NOTFOUND = -5,
	/* The entry exists but is of the wrong type for the operation (e.g.
	 * get_key on a certificate entry, a certificate overwriting a key). */
	WKS_ERR_WRONG_TYPE = -6,
	/* Well-formed but not handled (e.g. a key algorithm OpenSSL lacks). */
	WKS_ERR_UNSUPPORTED = -7,
	/* A length, count or iteration count exceeds a configured limit. */
	WKS_ERR_LIMIT = -8,
	/* Invalid argument: NULL where not allowed, empty password, invalid
	 * UTF-8, a key that does not match its certificate, a broken chain. */
	WKS_ERR_INVALID = -9,
	/* An OpenSSL primitive failed unexpectedly. */
	WKS_ERR_CRYPTO = -10,
	/* The target alias already exists (rename). */
	WKS_ERR_EXISTS = -11,
	/* A lock asked for with WKS_LOCK_NOWAIT is held by another process or
	 * thread (wks_lock_acquire); try again later. */
	WKS_ERR_BUSY = -12
} wks_err;

/* Static English text for an error code; never NULL. Thread-safe. */
WKS_API const char *wks_strerror(int err);

/*
 * The detail message of the last failure in the calling thread, e.g.
 * `entry "server": chain length 1000000 exceeds limit 100`.  "" if none.
 * The string is thread-local and valid until the next libwks call in the
 * same thread.  It never contains passwords or key bytes.
 */
WKS_API const char *wks_error_detail(void);

/* The library version, "MAJOR.MINOR.PATCH". */
WKS_API const char *wks_version(void);

/* Release memory returned by libwks (buffers, strings).  The memory is
 * wiped before it is freed.  NULL is ignored. */
WKS_API void wks_free(void *p);

/* ------------------------------------------------------------------------
 * Store lifecycle, load and save
 */

typedef struct wks_store wks_store;
typedef struct wks_lock wks_lock; /* a file lock: see "File locks" below */

/* Entry kinds (the numbers are the format's type ids). */
typedef enum {
	WKS_ENTRY_NONE = 0,        /* no such alias */
	WKS_ENTRY_PRIVATE_KEY = 1, /* PKCS#8 key + certificate chain */
	WKS_ENTRY_CERTIFICATE = 2, /* trusted certificate */
	WKS_ENTRY_SECRET_KEY = 3   /* raw secret key + algorithm name */
} wks_entry_type;

/*
 * Create an empty keystore.  Its properties start as the process-wide ones
 * (see "Properties" below).  *out is overwritten (see "Out-parameters"
 * above); free the store with wks_store_free().  Returns WKS_OK or
 * WKS_ERR_NOMEM.
 */
WKS_API int wks_store_new(wks_store **out);

/*
 * Create an empty keystore whose cryptography comes from an OpenSSL
 * library context and property query: AES-256-CBC, HMAC-SHA512 and PBKDF2
 * are fetched from `libctx` with `propq` once, here (a context that lacks
 * one still gives a store; the operations that need it then fail with
 * WKS_ERR_CRYPTO, never falling back to another context), random bytes
 * come from the context's generator (RAND_bytes_ex), and certificates and
 * keys are parsed into it (X509_new_ex, EVP_PKCS82PKEY_ex), so their
 * signature and key checks run on its providers.  When the context's
 * default properties are FIPS (EVP_default_properties_is_fips_enabled())
 * or `propq` asks for fips=yes, PBKDF2 is always the context's (libwks's
 * native PBKDF2 is not used); otherwise libwks.kdf.impl chooses as usual
 * (both give identical results; the native one still requires that the
 * context offers PBKDF2).  The KEK cache's in-memory shielding
 * (docs/CACHE.md) is not keystore cryptography and stays on libcrypto's
 * built-in SHA-512 and default generator.  `libctx` is not owned: it must
 * outlive the store and the X509 and EVP_PKEY objects the store returns
 * (they are made in it).  NULL libctx and NULL propq is exactly
 * wks_store_new(); NULL libctx with a propq is OpenSSL's default context
 * with that query.  *out is overwritten, as by wks_store_new().  Returns
 * WKS_OK or WKS_ERR_NOMEM.
 */
#ifdef WKS_CRYPTO_OPENSSL
WKS_API int wks_store_new_ex(wks_store **out, OSSL_LIB_CTX *libctx,
                             const char *propq);
#endif

/*
 * Free a keystore: wipes every key, the KEK cache and all other state.
 * NULL is ignored.  Must not race with other calls on the same store.
 */
WKS_API void wks_store_free(wks_store *st);

/*
 * Load a WKS file into `st`, replacing all its entries.
 *
 * With a password (pw_len > 0) the store HMAC is verified; with pw == NULL
 * or pw_len == 0 it is skipped (as Java's KeyStore.load(in, null) does, so
 * that trust stores can be read without a password) unless the property
 * libwks.wks.requireIntegrity is true, in which case WKS_ERR_INVALID is
 * returned.  Every other check is always done.  Key entries stay encrypted
 * and are verified by their own HMAC when retrieved.
 *
 * The KEK cache of `st` is cleared first, whatever the outcome.  On failure
 * the previous entries are untouched and none of the parsed ones are
 * visible.
 *
 * The file must be a regular file of at most libwks.wks.maxFileSize bytes
 * (its size is checked before it is read, and exactly that many bytes are
 * read; a file that changes size meanwhile is WKS_ERR_IO); a buffer has
 * the same bound.  Any store that wks_store_save_file() wrote loads back
 * under the same settings.
 *
 * Errors: WKS_ERR_IO (cannot read), WKS_ERR_FORMAT, WKS_ERR_LIMIT
 * (maxFileSize, maxEntrySize, maxCertChainLength, iteration count below
 * 10000 or above libwks.wks.maxIterationCount), WKS_ERR_INTEGRITY (wrong
 * password or modified file), WKS_ERR_INVALID, WKS_ERR_NOMEM.
 */
WKS_API int wks_store_load_file(wks_store *st, const char *path,
                        const char *pw, size_t pw_len);

/* As wks_store_load_file(), from `len` bytes at `data`. */
WKS_API int wks_store_load_buffer(wks_store *st, const uint8_t *data, size_t len,
                          const char *pw, size_t pw_len);

/*
 * Serialise the store and MAC it with `pw` (must not be empty), with a
 * fresh random salt and the configured wolfjce.wks.iterationCount.  Key
 * entries are copied as they are (never re-encrypted).
 *
 * A save never writes what a load under the same settings would refuse:
 * if wolfjce.wks.iterationCount exceeds libwks.wks.maxIterationCount, if
 * an entry is outside the current maxEntrySize, maxCertChainLength or
 * maxIterationCount (it was made or loaded under wider settings), or if
 * the file would exceed libwks.wks.maxFileSize, it fails with
 * WKS_ERR_LIMIT ("cannot save: ...") before anything is written.
 *
 * wks_store_save_file() is atomic: it writes a temporary file in the same
 * folder, fsyncs it, renames it over `path` and fsyncs the folder.  A new
 * file gets mode 0600 and the caller's owner and group.  An existing file
 * keeps its mode, owner and group (not its ACLs or extended attributes);
 * when the owner or group cannot be kept (only root may give a file to
 * another user, and a user may only choose a group they belong to) the
 * save fails with WKS_ERR_IO ("cannot keep its owner") rather than change
 * who owns the store.  An existing file that the caller could not write
 * itself (faccessat(W_OK, AT_EACCESS), e.g. mode 0444) is refused with
 * WKS_ERR_IO, detail "...: Permission denied", although rename() alone
 * would replace it; root may write it, as with any file.  If `path` is a
 * symbolic link, the file it points to is replaced.  On any failure the
 * previous file is intact and no temporary file remains.
 *
 * Saving does not lock: to read, modify and save a file that other
 * processes may edit too, hold wks_lock_acquire(WKS_LOCK_EXCLUSIVE) on it
 * from before the load until after the save, and load and save through
 * the lock (wks_store_load_locked(), wks_store_save_locked() below).
 * wks_store_save_file() saves by path: if someone who may write the
 * store's folder replaced the file meanwhile (with a symbolic link, say),
 * it follows what is there now.
 *
 * wks_store_save_buffer() returns the bytes in *out and their number in
 * *out_len (free with wks_free()); both are overwritten, NULL / 0 on
 * failure.
 *
 * Errors: WKS_ERR_INVALID (empty password, alias too long to encode),
 * WKS_ERR_IO, WKS_ERR_NOMEM, WKS_ERR_CRYPTO.
 */
WKS_API int wks_store_save_file(wks_store *st, const char *path,
                        const char *pw, size_t pw_len);
WKS_API int wks_store_save_buffer(wks_store *st, uint8_t **out, size_t *out_len,
                          const char *pw, size_t pw_len);

/*
 * Load and save through a lock (wks_lock_acquire() below): the file that
 * was locked, and only that file.
 *
 * wks_store_load_locked() reads the locked file through the lock's own
 * descriptor (whatever `path` names by then), otherwise as
 * wks_store_load_file().
 *
 * wks_store_save_locked() saves to the lock's path as wks_store_save_file()
 * does, but commits only to the file that was locked: the name replaced
 * (the path, or for a path that is a symbolic link what it points to now)
 * must still be that regular file (same device and inode; a link there is
 * not followed into another file), checked before anything is written
 * and again just before the rename.  If the file was replaced or removed
 * meanwhile, nothing is written and the error is WKS_ERR_IO, detail
 * "saving "PATH": not saved: it was replaced (by a symbolic link) since
 * it was locked and loaded" (or "... is gone").  The temporary file is
 * created with O_EXCL|O_NOFOLLOW beside the file, and every step acts in
 * the folder opened once; rename() replaces a name, never what a link
 * points to, so a link swapped in after the last check is replaced itself
 * and its target is never written.  The lock must be WKS_LOCK_EXCLUSIVE
 * (else WKS_ERR_INVALID).  On success the lock moves to the new file (it
 * is locked before it gets the name, so no other editor slips in between)
 * and the lock may be used for further loads and saves.
 *
 * Errors: as wks_store_load_file() and wks_store_save_file(); NULL lock is
 * WKS_ERR_INVALID.
 */
WKS_API int wks_store_load_locked(wks_store *st, const wks_lock *lock,
                                  const char *pw, size_t pw_len);
WKS_API int wks_store_save_locked(wks_store *st, wks_lock *lock,
                                  const char *pw, size_t pw_len);

/* True (1) if `data` starts with the WKS magic number 00 00 00 07. */
WKS_API int wks_probe(const uint8_t *data, size_t len);

/* ------------------------------------------------------------------------
 * File locks
 *
 * Advisory locks that make a load-modify-save of a keystore file safe
 * against other programs doing the same (two editors that each load, add
 * an entry and save would otherwise lose one of the entries):
 *
 *     wks_lock *lk = NULL;
 *     if ((err = wks_lock_acquire(&lk, path, WKS_LOCK_EXCLUSIVE)) == WKS_OK &&
 *         (err = wks_store_load_locked(st, lk, pw, pw_len)) == WKS_OK &&
 *         (err = wks_store_set_cert_der(st, alias, der, der_len)) == WKS_OK)
 *             err = wks_store_save_locked(st, lk, pw, pw_len);
 *     wks_lock_release(lk);
 *
 * The lock is flock(2) on the store file itself (no lock file is made), so
 * it binds only programs that take it too (the wks tool does, for every
 * command that changes a store).  Because a save replaces the file by
 * rename, wks_lock_acquire() checks after locking that the file it locked
 * is still the one at `path` (device and inode) and otherwise locks the
 * new file: a waiter always ends up holding the current file.
 *
 * Loading and saving through the lock (wks_store_load_locked(),
 * wks_store_save_locked()) make sure the file edited is the one locked:
 * another user who may write the folder cannot redirect the save by
 * replacing the file with a link between the load and the save.
 *
 * wks_store_load_file() and wks_store_save_file() never take the lock
 * themselves (a second exclusive lock on the same file from the same
 * process would wait for ever), so callers decide what to hold.  Locks
 * conflict between processes and between threads (each wks_lock is its
 * own open file description); a wks_lock is not inherited across exec,
 * and a fork()ed child shares its parent's until either releases it.
 * Locks on network file systems are as reliable as their flock() (NFS
 * emulates it with byte-range locks, which for WKS_LOCK_EXCLUSIVE need the
 * file to be writable).
 *
 * Readers need no lock to see a consistent file (a save never changes the
 * file in place: a reader sees the old or the new one, whole); a shared
 * lock only keeps editors waiting while it is held.
 */

#define WKS_LOCK_EXCLUSIVE 0x1u /* one holder; for load-modify-save */
#define WKS_LOCK_SHARED 0x2u    /* many holders, no exclusive one */
#define WKS_LOCK_NOWAIT 0x4u    /* fail at once instead of waiting */

/*
 * Lock the existing file `path` (a symbolic link is followed) with exactly
 * one of WKS_LOCK_EXCLUSIVE and WKS_LOCK_SHARED, optionally
 * | WKS_LOCK_NOWAIT.  Waits (uninterruptibly by signals, which are
 * retried) until the lock is granted.  The file must be readable.  *out
 * is overwritten (NULL on failure) and released with wks_lock_release().
 *
 * A store that does not exist yet cannot be locked (WKS_ERR_NOTFOUND):
 * create it exclusively instead (for example write it to a temporary
 * file, then link(2) it to `path`, which fails if another creator came
 * first), then lock it for later edits.
 *
 * Errors: WKS_ERR_BUSY (with WKS_LOCK_NOWAIT: held by someone else,
 * detail "... is locked by another process or thread"), WKS_ERR_NOTFOUND
 * (no such file), WKS_ERR_IO (cannot open it, not a regular file),
 * WKS_ERR_INVALID (bad flags, NULL arguments), WKS_ERR_NOMEM.
 * Thread-safe.
 */
WKS_API int wks_lock_acquire(wks_lock **out, const char *path, unsigned flags);

/* Release a lock and free it.  NULL is ignored. */
WKS_API void wks_lock_release(wks_lock *lock);

/* ------------------------------------------------------------------------
 * Queries
 */

/* Number of entries. */
WKS_API size_t wks_store_size(wks_store *st);

/* 1 if `alias` exists, 0 if not (or on invalid arguments). */
WKS_API int wks_store_contains(wks_store *st, const char *alias);

/* The entry type of `alias`, WKS_ENTRY_NONE if absent. */
WKS_API wks_entry_type wks_store_entry_type(wks_store *st, const char *alias);

/*
 * All aliases, sorted by byte order, as a NULL-terminated array in *out
 * with the count in *count (may be NULL).  Free with wks_aliases_free().
 * Both are overwritten; NULL / 0 on failure.
 */
WKS_API int wks_store_aliases(char ***out, size_t *count, wks_store *st);
WKS_API void wks_aliases_free(char **aliases);

/* Creation time of an entry in milliseconds since 1970-01-01 UTC, in
 * *out_ms (0 on failure).  WKS_ERR_NOTFOUND if absent. */
WKS_API int wks_store_creation_time(int64_t *out_ms, wks_store *st, const char *alias);

/*
 * Number of certificates of an entry: the chain length of a private key
 * entry, 1 for a certificate entry, in *out (0 on failure).
 * WKS_ERR_WRONG_TYPE for a secret key, WKS_ERR_NOTFOUND if absent.
 */
WKS_API int wks_store_cert_count(size_t *out, wks_store *st, const char *alias);

/*
 * Certificate `index` of an entry (0 = the leaf of a private key entry, or
 * the certificate of a certificate entry) as DER in *out (free with
 * wks_free()) or as an X509 (free with X509_free()).  *out (and *out_len)
 * are overwritten; NULL / 0 on failure.
 * Errors: WKS_ERR_NOTFOUND (absent alias or index out of range),
 * WKS_ERR_WRONG_TYPE (secret key entry).
 */
WKS_API int wks_store_get_cert_der(uint8_t **out, size_t *out_len, wks_store *st,
                           const char *alias, size_t index);
#ifdef WKS_CRYPTO_OPENSSL
WKS_API int wks_store_get_cert(X509 **out, wks_store *st, const char *alias,
                       size_t index);
#endif

/*
 * The algorithm name of a secret key entry ("AES", "HmacSHA256", ...),
 * which the format stores in clear: no password is needed.  *out is
 * overwritten (NULL on failure) and freed with wks_free().  WKS_ERR_NOTFOUND if absent, WKS_ERR_WRONG_TYPE if the
 * entry is not a secret key.
 */
WKS_API int wks_store_secret_algorithm(char **out, wks_store *st,
                                       const char *alias);

/*
 * The identity of an entry's content: 32 bytes that depend on its type
 * and its body exactly as stored (creation time; for a key entry its
 * salt, iteration count, IV, encrypted key and MAC; a private key's
 * certificate chain; a secret key's algorithm), computed in the store's
 * own crypto context.  Every new key and every re-encryption (a new
 * password, a chain written again) gives new bytes, so two entries never
 * share it unless they are copies of one another, and an entry keeps it
 * as long as it is not written again (a rename keeps it).  No password
 * is needed.  WKS_OK, or WKS_ERR_NOTFOUND / WKS_ERR_INVALID.
 */
WKS_API int wks_store_entry_digest(uint8_t out[32], wks_store *st,
                                   const char *alias);

/*
 * The alias of the first entry, in alias byte order, whose certificate (a
 * certificate entry) or leaf certificate (a private key entry) has exactly
 * the DER bytes given.  *out is overwritten (NULL on failure) and freed
 * with wks_free().
 * WKS_ERR_NOTFOUND if none.
 */
WKS_API int wks_store_find_cert_alias(char **out, wks_store *st,
                              const uint8_t *der, size_t der_len);

/* ------------------------------------------------------------------------
 * Key retrieval
 */

/* A decrypted key: a PKCS#8 private key or a raw secret key. */
typedef struct wks_key wks_key;

/*
 * Decrypt the key of a private or secret key entry with its key password.
 *
 * The entry's HMAC is verified before anything is decrypted.  For a
 * private key the result holds the exact PKCS#8 DER that was stored and
 * the key algorithm ("RSA", "EC", "ED25519", "ML-DSA-44", "SLH-DSA", or
 * the dotted OID if unknown; both PKCS#8 versions); for a secret key its bytes and stored algorithm name.
 * With the KEK cache enabled, the derived key may come from the cache.
 *
 * Errors: WKS_ERR_NOTFOUND (absent alias), WKS_ERR_WRONG_TYPE (certificate
 * entry), WKS_ERR_INVALID (empty password), WKS_ERR_INTEGRITY (wrong key
 * password or modified entry), WKS_ERR_LIMIT (iterations above
 * libwks.wks.maxIterationCount).
 *
 * *out is overwritten, never freed (see "Out-parameters" at the top): on
 * success it holds the new key, on failure NULL.  Free the result with
 * wks_key_free(), which wipes it, before passing the same variable again;
 * a key still held in it would be lost.
 */
WKS_API int wks_store_get_key(wks_key **out, wks_store *st, const char *alias,
                      const char *pw, size_t pw_len);

/* As wks_store_get_key() for a private key entry, returned as an OpenSSL
 * key (free with EVP_PKEY_free(); *out is overwritten as by
 * wks_store_get_key()).  WKS_ERR_UNSUPPORTED if OpenSSL cannot parse the
 * algorithm. */
#ifdef WKS_CRYPTO_OPENSSL
WKS_API int wks_store_get_pkey(EVP_PKEY **out, wks_store *st, const char *alias,
                       const char *pw, size_t pw_len);
#endif

/* WKS_ENTRY_PRIVATE_KEY or WKS_ENTRY_SECRET_KEY. */
WKS_API wks_entry_type wks_key_type(const wks_key *key);
/* The key bytes (PKCS#8 DER or raw secret); borrowed from `key`.  Their
 * number goes to *len (may be NULL; 0 for a NULL key). */
WKS_API const uint8_t *wks_key_data(const wks_key *key, size_t *len);
/* The algorithm name; borrowed from `key`. */
WKS_API const char *wks_key_algorithm(const wks_key *key);
/* Wipe and free.  NULL is ignored. */
WKS_API void wks_key_free(wks_key *key);

/* ------------------------------------------------------------------------
 * Changing entries
 */

/*
 * Store a private key with its certificate chain (leaf first) under
 * `alias`, encrypted with `pw` (must not be empty) at the configured
 * wolfjce.wks.iterationCount, with a fresh random salt and IV and the
 * current time as creation time.  Replaces any previous entry.
 *
 * Checks (libwks checks more than wolfJCE, see docs/FORMAT.md): the key is
 * valid PKCS#8 that OpenSSL can parse; the chain has 1 to
 * wolfjce.wks.maxCertChainLength certificates, each valid X.509 DER; every
 * certificate is signed by the next one (including the leaf, and 2-chains);
 * the private key matches the leaf's public key.  Validity dates are not
 * checked.  On failure the previous entry is unchanged.
 *
 * The key is stored exactly as given, PKCS#8 version 0 (PrivateKeyInfo)
 * or version 1 (OneAsymmetricKey, with the public key attached, as newer
 * wolfSSL writes ML-DSA keys), and get_key returns the same bytes.
 * ML-DSA and SLH-DSA keys, which OpenSSL 3.0 cannot parse, are matched
 * as wolfJCE matches them, at the DER level: the leaf's
 * SubjectPublicKeyInfo, with an explicit NULL AlgorithmIdentifier
 * parameter removed, must be SEQUENCE { SEQUENCE { the key's OID },
 * BIT STRING { public key } } with the key's public key (SLH-DSA: the
 * second half of the private key; ML-DSA: the attached one, and the one
 * the expanded private key was made from, by its rho and tr).  Another
 * OID, other parameters or another public key is WKS_ERR_INVALID; an
 * ML-DSA key holding only its seed, without the public key, cannot be
 * checked without ML-DSA in OpenSSL: WKS_ERR_UNSUPPORTED.
 *
 * Errors: WKS_ERR_INVALID (empty password, mismatched key, broken chain),
 * WKS_ERR_FORMAT (unparsable key or certificate), WKS_ERR_UNSUPPORTED
 * (a key whose match cannot be checked), WKS_ERR_LIMIT (chain
 * longer than wolfjce.wks.maxCertChainLength, an entry larger than
 * wolfjce.wks.maxEntrySize, which no reader would load, or an alias
 * longer than 65535 bytes in modified UTF-8, see above), WKS_ERR_NOMEM,
 * WKS_ERR_CRYPTO.
 */
WKS_API int wks_store_set_private_key(wks_store *st, const char *alias,
                              const uint8_t *pkcs8, size_t pkcs8_len,
                              const uint8_t *const *chain_der,
                              const size_t *chain_len, size_t chain_count,
                              const char *pw, size_t pw_len);

/* As wks_store_set_private_key() from OpenSSL objects.  The key is encoded
 * as PKCS#8 by OpenSSL.  Nothing passed in is consumed. */
#ifdef WKS_CRYPTO_OPENSSL
WKS_API int wks_store_set_pkey(wks_store *st, const char *alias, EVP_PKEY *key,
                       X509 *const *chain, size_t chain_count,
                       const char *pw, size_t pw_len);
#endif

/*
 * Store a secret key (`key_len` >= 1 raw bytes) with its JCA algorithm
 * name (non-empty, e.g. "AES", "HmacSHA256"), encrypted with `pw`.
 * Replaces any previous entry.  Errors: WKS_ERR_INVALID (empty password,
 * algorithm name or key), WKS_ERR_LIMIT (an alias too long to save, see
 * above, or an entry larger than wolfjce.wks.maxEntrySize),
 * WKS_ERR_NOMEM, WKS_ERR_CRYPTO.
 */
WKS_API int wks_store_set_secret_key(wks_store *st, const char *alias,
                             const char *algorithm,
                             const uint8_t *key, size_t key_len,
                             const char *pw, size_t pw_len);

/*
 * Store a trusted certificate (DER, or an X509) under `alias`.  A
 * certificate never replaces a key entry: WKS_ERR_WRONG_TYPE if `alias`
 * holds a private or secret key (wolfJCE only guards private keys);
 * WKS_ERR_LIMIT for an alias too long to save (above).
 */
WKS_API int wks_store_set_cert_der(wks_store *st, const char *alias,
                           const uint8_t *der, size_t der_len);
#ifdef WKS_CRYPTO_OPENSSL
WKS_API int wks_store_set_cert(wks_store *st, const char *alias, X509 *cert);
#endif

/*
 * Rename an entry.  Its contents, including the creation time and, for a
 * key entry, the encrypted key and its MAC, are kept unchanged (the entry
 * MAC does not cover the alias).  WKS_ERR_NOTFOUND if `from` is absent,
 * WKS_ERR_EXISTS if `to` exists (renaming an alias to itself is WKS_OK),
 * WKS_ERR_LIMIT if `to` is too long to save (above).
 */
WKS_API int wks_store_rename(wks_store *st, const char *from, const char *to);

/*
 * Re-encrypt the key of a private or secret key entry under a new
 * password, with a fresh salt and IV and the configured
 * wolfjce.wks.iterationCount; the creation time, algorithm and chain are
 * kept.  Errors: as wks_store_get_key() for the old password
 * (WKS_ERR_INTEGRITY if it is wrong), WKS_ERR_INVALID for an empty new
 * password or if the entry was replaced meanwhile.  Cached keys of the
 * entry are wiped.
 */
WKS_API int wks_store_change_key_password(wks_store *st, const char *alias,
                                          const char *old_pw, size_t old_len,
                                          const char *new_pw, size_t new_len);

/* Remove an entry.  WKS_ERR_NOTFOUND if absent.  Cached keys of that entry
 * are wiped. */
WKS_API int wks_store_delete(wks_store *st, const char *alias);

/* ------------------------------------------------------------------------
 * Many key entries at once
 *
 * Every key entry has its own PBKDF2 derivation (210,000 iterations by
 * default), and one derivation cannot run faster than its chain of
 * SHA-512 compressions.  Many of them can run side by side, though: the
 * calls below derive the keys of all the entries they are given as one
 * batch, spread over the SIMD lanes of every core (docs/KDF.md), so that
 * N entries cost far less than N single calls (on a 2-core AVX-512
 * machine, 64 entries about as much as 14 to 16 single ones).  The
 * results are exactly those of the single calls.  No store lock is held while they
 * derive; each entry is checked as the single call checks it, every
 * derivation is bounded by libwks.wks.maxIterationCount, and no entry
 * costs more derivations than its single call would (but for a password
 * change, which may derive an entry's new key in lanes that would
 * otherwise idle before it knows the entry opens with the old password).
 *
 * Per-entry outcomes go to a `results` array of n ints (results[i] for
 * aliases[i]): WKS_OK, or the error the single call would return for that
 * entry.  The return value is WKS_OK when every entry was tried, whatever
 * their outcomes, or an error of the call as a whole (NULL arguments, an
 * empty password, WKS_ERR_NOMEM, WKS_ERR_CRYPTO): then results[] is all
 * zero and nothing was returned or changed.  Per-entry failures leave no
 * detail in wks_error_detail().
 */

/*
 * wks_store_get_key() for n aliases with one password.  results[i]:
 * WKS_OK, WKS_ERR_NOTFOUND, WKS_ERR_WRONG_TYPE (a certificate entry: so
 * all of wks_store_aliases() can be passed), WKS_ERR_INTEGRITY (another
 * key password, or a modified entry), WKS_ERR_LIMIT (iterations above
 * libwks.wks.maxIterationCount), WKS_ERR_INVALID (a NULL alias).
 *
 * `out` (may be NULL) is an array of n key pointers, overwritten: out[i]
 * is the key of aliases[i] where results[i] is WKS_OK, else NULL; free
 * each with wks_key_free().  With out NULL the entries are only checked
 * (each entry MAC verified with the password; nothing is decrypted): a
 * whole-store verify.  With the KEK cache enabled, keys already cached
 * are taken from it and the keys derived are cached, as by get_key.
 * Thread-safe like wks_store_get_key().
 */
WKS_API int wks_store_get_keys(wks_key **out, int *results, wks_store *st,
                               const char *const *aliases, size_t n,
                               const char *pw, size_t pw_len);

/*
 * Derive now, in one batch, the keys of the next n key entries that will
 * be set in `st` with password `pw` (wks_store_set_private_key(),
 * wks_store_set_pkey(), wks_store_set_secret_key()): a new entry's key
 * depends only on its password, a fresh random salt and the iteration
 * count, not on the entry.  The setters that follow with the same
 * password and wolfjce.wks.iterationCount take one each (every key is
 * used once, with its own salt) instead of deriving; a setter with
 * another password, or finding none left, derives as usual.  For an
 * import of many keys: prepare before taking the store's file lock, then
 * load under the lock (a load keeps them), set and save.
 *
 * The keys wait in the store's locked, never-dumped memory (as the KEK
 * cache's), are wiped when taken, and at wks_store_free(); n == 0 wipes
 * every key still waiting (pw is then ignored).  A fork()ed child does
 * not inherit them.  At most 1024 keys wait at a time.
 *
 * Errors: WKS_ERR_INVALID (NULL store, empty password), WKS_ERR_LIMIT
 * (more than 1024 waiting, or wolfjce.wks.iterationCount above
 * libwks.wks.maxIterationCount), WKS_ERR_NOMEM, WKS_ERR_CRYPTO.
 */
WKS_API int wks_store_prepare_keys(wks_store *st, const char *pw,
                                   size_t pw_len, size_t n);

/*
 * Change the password of several key entries from old_pw to new_pw, as
 * wks_store_change_key_password() does for one (fresh salt and IV, the
 * configured wolfjce.wks.iterationCount; creation time, algorithm and
 * chain kept), with one derivation per entry for each password: the old
 * keys derived as one batch, the new ones as another.  Entries that do
 * not open with old_pw are left as they are, with results[i] =
 * WKS_ERR_INTEGRITY: pass every alias to move the keys that had the store
 * password along with it (keytool's storepasswd on PKCS#12) and learn
 * which have a password of their own.  results[i] is WKS_OK for each
 * entry changed, else as for wks_store_get_keys(), and WKS_ERR_INVALID
 * for an alias listed again.  The changed entries are replaced together
 * under one write lock, and only if none was changed meanwhile by another
 * thread (else WKS_ERR_INVALID and nothing changes).  Cached keys of the
 * changed entries are wiped.  Errors of the call: as above, plus
 * WKS_ERR_INVALID for an empty password and WKS_ERR_LIMIT when
 * wolfjce.wks.iterationCount is above libwks.wks.maxIterationCount.
 */
WKS_API int wks_store_change_key_passwords(int *results, wks_store *st,
                                           const char *const *aliases,
                                           size_t n, const char *old_pw,
                                           size_t old_len,
                                           const char *new_pw,
                                           size_t new_len);

/*
 * wks_store_change_key_passwords() in two steps, so that the derivations
 * can run before a caller takes the store's file lock, and only the
 * replacement under it:
 *
 *     wks_store_load_file(st, path, pw, len);          (no lock)
 *     wks_rekey_prepare(&rk, results, st, aliases, n, old, ol, new, nl);
 *     wks_lock_acquire(&lock, path, WKS_LOCK_EXCLUSIVE);
 *     wks_store_load_locked(st, lock, pw, len);
 *     wks_rekey_apply(st, rk, NULL);     (WKS_ERR_INVALID: changed since)
 *     wks_store_save_locked(st, lock, new_store_pw, ...);
 *
 * wks_rekey_prepare() derives and re-encrypts (results[] as above) and
 * returns in *out (overwritten; free with wks_rekey_free()) the new
 * entries, with what each was made from.  The result holds no password
 * and no plaintext key, only encrypted entries.
 *
 * wks_rekey_apply() puts them into `st` (the store prepared from, or
 * another one, such as the same file loaded again): each alias must hold
 * exactly the entry the new one was made from (the same object, or the
 * same bytes), else WKS_ERR_INVALID naming the alias, and nothing
 * changes; otherwise every entry is replaced under one write lock, no
 * derivation runs, and *applied (may be NULL) gets their number.
 * wks_rekey_count() is that number before applying (0 for NULL).
 */
typedef struct wks_rekey wks_rekey;
WKS_API int wks_rekey_prepare(wks_rekey **out, int *results, wks_store *st,
                              const char *const *aliases, size_t n,
                              const char *old_pw, size_t old_len,
                              const char *new_pw, size_t new_len);
WKS_API int wks_rekey_apply(wks_store *st, const wks_rekey *rk,
                            size_t *applied);
WKS_API size_t wks_rekey_count(const wks_rekey *rk);
/* NULL is ignored. */
WKS_API void wks_rekey_free(wks_rekey *rk);

/* ------------------------------------------------------------------------
 * Properties
 *
 * Properties use the names of wolfJCE's Java Security properties, so that
 * one java.security-style file can configure both.  Value lookup order:
 * the store's own value (wks_store_set_property), else the process-wide
 * value (wks_set_property), else the properties file named by the
 * environment variable WKS_PROPERTIES (read once, at first use), else the
 * default.  Values are read at use, so changes take effect immediately.
 *
 *   wolfjce.wks.iterationCount          210000   >= 10000; bad -> 210000
 *   wolfjce.wks.maxCertChainLength      100      >= 1; bad -> 100
 *   wolfjce.wks.maxEntrySize            10485760 >= 1; bad -> 10485760
 *   wolfjce.keystore.kekCacheEnabled    false    "true" (any case) enables
 *   wolfjce.keystore.kekCacheTtlSec     300      > 0; bad -> 300
 *   libwks.wks.maxIterationCount        5000000  >= 10000; bad -> 5000000
 *   libwks.wks.requireIntegrity         false    "true" refuses loads
 *                                                without a password
 *   libwks.keystore.kekCacheMaxEntries  1024     >= 1; bad -> 1024
 *   libwks.keystore.kekCacheIdleSec     0 (off)  >= 0; bad -> 0
 *   libwks.kdf.impl                     native   "native" | "openssl"
 *                                                (wolfCrypt build: also
 *                                                "wolfcrypt", the same as
 *                                                "openssl" there: the
 *                                                backend's PBKDF2)
 *   libwks.kdf.threads                  0 (auto) 0..16; bad -> 0
 *   libwks.wks.maxFileSize              268435456 >= 1 (bytes); bad ->
 *                                                268435456
 *   libwks.convert.maxKdfIterations     100000000 >= 1; bad -> 100000000
 *                                                (the key-derivation work
 *                                                of one conversion:
 *                                                wks/convert.h)
 *
 * Every value is trimmed first, from every source, as wolfJCE sees it
 * (Java's Security.getProperty() returns String.trim(): every leading and
 * trailing character <= U+0020 goes), so " 20000\t" means 20000 and
 * " TRUE " enables the cache.  A blank value means the default.  A bad
 * value falls back to its default, as wolfJCE does, and a warning is
 * passed to the warning handler (see wks_set_warning_handler()).
 * $WKS_PROPERTIES is ignored in secure-execution mode (set-user-ID and
 * set-group-ID programs, and programs with file capabilities: the
 * kernel's AT_SECURE, as secure_getenv() does).
 */

/*
 * Set (value != NULL) or unset (value == NULL) a property on one store.
 * Unknown names are accepted and kept (they may belong to wolfJCE); bad
 * values are accepted and fall back at use, with a warning.  Thread-safe.
 */
WKS_API int wks_store_set_property(wks_store *st, const char *name, const char *value);

/* Set or unset a property for the whole process.  Thread-safe. */
WKS_API int wks_set_property(const char *name, const char *value);

/*
 * Read a java.security-style properties file (key=value or key: value,
 * '#'/'!' comments, backslash continuations and escapes) into the
 * process-wide properties.  The file named by $WKS_PROPERTIES is read this
 * way automatically at first use; this call reads another one.
 * Errors: WKS_ERR_IO, WKS_ERR_FORMAT (bad escape; line in the detail).
 */
WKS_API int wks_load_properties_file(const char *path);

/*
 * The value a store would use for a property (after fallbacks), as text,
 * written to buf (NUL-terminated, truncated to buf_len; "" on failure).  `st` may be NULL
 * for the process-wide value.  A name libwks does not know is returned as
 * the (trimmed) text some level holds for it; WKS_ERR_NOTFOUND if none
 * does.
 */
WKS_API int wks_get_property(char *buf, size_t buf_len, wks_store *st,
                     const char *name);

/*
 * Receive warnings (bad property values, an mlock that failed).  The
 * handler may be called from any thread; it must not call back into
 * libwks.  NULL restores the default (warnings are dropped).
 */
typedef void (*wks_warning_fn)(const char *message, void *ctx);
WKS_API void wks_set_warning_handler(wks_warning_fn fn, void *ctx);

/* ------------------------------------------------------------------------
 * KEK cache
 *
 * Off by default (wolfjce.keystore.kekCacheEnabled).  When enabled, the
 * keys derived by PBKDF2 for a key entry are kept after their first
 * successful use, so that later wks_store_get_key() calls with the same
 * password skip PBKDF2.  Entries expire after kekCacheTtlSec (and after
 * libwks.keystore.kekCacheIdleSec without use, if set); at most
 * kekCacheMaxEntries are kept (least recently used evicted first).
 * Cached keys are looked up by an HMAC of the password under a random
 * per-store secret (no password hash is kept), stored encrypted in locked
 * memory that is excluded from core dumps and zeroed in fork()ed children,
 * and wiped on every removal.  A key is never cached for an entry that a
 * concurrent load, delete, overwrite or rename has removed.  See
 * docs/CACHE.md.
 */

/* Drop and wipe every cached key of `st`. */
WKS_API int wks_store_cache_clear(wks_store *st);

/* Drop and wipe the expired cached keys of `st` now; returns WKS_OK. */
WKS_API int wks_store_cache_sweep(wks_store *st);

/*
 * Warm the cache: derive, in one batch (see "Many key entries at once"),
 * the keys of every key entry of `st` that opens with `pw`, and cache
 * them, so that the first wks_store_get_key() of each skips PBKDF2 (for
 * a server opening many keys at start, a store kept by the provider, a
 * token's login).  Keys cached already are not derived again.  Entries
 * whose key password is another, or that do not verify, are left
 * uncached: not an error.  *n_warmed (may be NULL) gets the number of key
 * entries that opened with `pw`; as always, at most
 * libwks.keystore.kekCacheMaxEntries keys stay cached (the least recently
 * used go first) and they expire as usual.  The cache must be enabled
 * (wolfjce.keystore.kekCacheEnabled): WKS_ERR_INVALID otherwise, since
 * nothing would be kept.  Errors: WKS_ERR_INVALID (NULL store, empty
 * password, cache disabled), WKS_ERR_NOMEM, WKS_ERR_CRYPTO.
 */
WKS_API int wks_store_cache_warm(wks_store *st, const char *pw, size_t pw_len,
                                 size_t *n_warmed);

/*
 * Hand cached keys to another process of the same user, so that it skips
 * PBKDF2 too (the PKCS#11 module's shared login: docs/PKCS11.md; the
 * blob's layout: docs/CACHE.md).
 *
 * wks_store_cache_export() writes into buf (cap bytes) a blob of the
 * derived keys that the cache of `st` holds now for the key entries that
 * open with `pw`: per key the entry's KDF salt and iteration count, the
 * 96-byte derived key and a check value binding that key to `pw`
 * (HMAC-SHA512 under the key's HMAC half); no alias, no password.  Keys
 * not cached are left out (wks_store_cache_warm() first to have them
 * all); the lookups count as cache hits.  With buf NULL (and cap 0),
 * *out_len gets the size to provide (room for every key entry); a
 * smaller cap is WKS_ERR_LIMIT with that size in *out_len and nothing
 * written.  On success *out_len is the blob's length and the rest of buf
 * is wiped.  THE BLOB IS AS SECRET AS THE KEYS IT OPENS, AND LETS ITS
 * HOLDER TEST GUESSES OF `pw` AT THE SPEED OF ONE HMAC EACH: keep it
 * where only the keys' owner reaches it, and wipe it.
 *
 * wks_store_cache_import() caches, under `pw`, each key of such a blob
 * that was exported under the same password (its check value, recomputed
 * with `pw`, matches) and verifies against a key entry of `st` (another
 * wks_store, possibly in another process, loaded from the same file)
 * with the same salt and iteration count: the entry's own MAC is checked
 * with the key, so a blob can add nothing that the store does not
 * confirm, and no PBKDF2 runs.  Keys that match no entry, were exported
 * under another password or do not verify are skipped: a blob imported
 * under a wrong password caches nothing, and get_key with that password
 * still fails.  *n_imported (may be NULL) gets the number of keys that
 * verified (already cached ones included).
 *
 * Both need the cache enabled.  Errors: WKS_ERR_INVALID (NULL store or
 * out_len, empty password, cache disabled, blob NULL with a length),
 * WKS_ERR_FORMAT (import: not a blob of this version, lengths that do
 * not add up), WKS_ERR_LIMIT (export: buffer too small; import: more
 * than WKS_CACHE_BLOB_MAX_KEYS keys), WKS_ERR_NOMEM, WKS_ERR_CRYPTO
 * (export: HMAC unavailable in the store's crypto context).
 * Thread-safe like wks_store_get_key().
 */
#define WKS_CACHE_BLOB_MAX_KEYS 65536u
WKS_API int wks_store_cache_export(wks_store *st, const char *pw,
                                   size_t pw_len, uint8_t *buf, size_t cap,
                                   size_t *out_len);
WKS_API int wks_store_cache_import(wks_store *st, const char *pw,
                                   size_t pw_len, const uint8_t *blob,
                                   size_t len, size_t *n_imported);

typedef struct {
	uint64_t hits;          /* get_key served from the cache */
	uint64_t misses;        /* get_key that ran PBKDF2 with the cache on
	                         * (wrong passwords included) */
	uint64_t inserts;       /* keys added */
	uint64_t evictions;     /* removed by the size bound (LRU) */
	uint64_t expirations;   /* removed by TTL or idle timeout */
	uint64_t invalidations; /* removed by delete, overwrite, rename,
	                         * password change, a damaged cached value,
	                         * clear or load; so inserts = size +
	                         * evictions + expirations + invalidations */
	uint64_t derivations;   /* PBKDF2 runs for get_key (cache on or off) */
	size_t size;            /* keys cached now */
} wks_cache_stats;         /* (all zero again in a fork()ed child) */

/* The counters of the KEK cache of `st` in *out (all zero on failure). */
WKS_API int wks_store_cache_stats(wks_cache_stats *out, wks_store *st);

/*
 * Replace the clock of the cache of `st` (milliseconds, monotonic) by
 * `now_ms(ctx)`, for tests.  NULL restores CLOCK_MONOTONIC.
 */
typedef uint64_t (*wks_clock_fn)(void *ctx);
WKS_API int wks_store_set_clock(wks_store *st, wks_clock_fn now_ms, void *ctx);

/*
 * Replace the clock that dates the entries set in `st` from now on (their
 * creation time, milliseconds since 1970, as a uint64_t) by
 * `now_ms(ctx)`; NULL restores the system's real-time clock.  For
 * conversions that keep the creation times of the source keystore
 * (wks_convert_read() and `wks convert` / `import-keystore` of Java
 * keystores do: they set it for the entries they store, then restore the
 * system's clock), and for tests.  Not while other threads set entries in
 * `st`.
 */
WKS_API int wks_store_set_wallclock(wks_store *st, wks_clock_fn now_ms,
                                    void *ctx);

/*
 * Start (interval_ms > 0) or stop (interval_ms == 0) the process-wide
 * background reaper: one thread that sweeps the caches of all live stores
 * every interval_ms.  Off by default.  A fork()ed child has no reaper
 * thread at first; if the parent ran one, the child starts its own (same
 * interval) at its first cache miss, unless it calls wks_cache_reaper()
 * itself before.
 */
WKS_API int wks_cache_reaper(unsigned interval_ms);

#ifdef __cplusplus
}
#endif

#endif /* WKS_WKS_H */
