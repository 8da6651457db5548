/*
 * libwks conversions: foreign keystores in and out.
 *
 *   #include <wks/convert.h>      (includes <wks/wks.h>)
 *
 * Reading Java's JKS and JCEKS keystores, Bouncy Castle's BKS and BCFKS
 * (all without a JVM) and PKCS#12 files into a wks_store, and writing a
 * store, or one entry of it, as PKCS#12.  Bouncy Castle's UBER (the whole
 * store encrypted with Twofish, which OpenSSL does not have) is recognised
 * and refused with the keytool command that converts it.
 * The same conventions as wks.h hold: every call returns WKS_OK (0) or a
 * negative wks_err with the detail in wks_error_detail(); out-parameters
 * are overwritten, never freed; memory returned is released with
 * wks_free() (which wipes it); passwords are UTF-8 with an explicit length,
 * used exactly as given (all pw_len bytes, a NUL byte included), and are
 * never kept or echoed in messages.  All functions are thread-safe
 * as far as their arguments are not shared (a wks_store follows wks.h's
 * rules).
 *
 * Bounds.  Every reader is strict and bounded: the integrity digest or MAC
 * is checked before any entry is trusted, every count is bounded by the
 * bytes left, every length by the process-wide properties
 * wolfjce.wks.maxCertChainLength, wolfjce.wks.maxEntrySize and
 * libwks.wks.maxIterationCount (read at each call; see wks.h
 * "Properties"), and trailing bytes are rejected (WKS_ERR_FORMAT).
 *
 * Key-derivation work.  Each PBE a file names is capped by
 * libwks.wks.maxIterationCount; the whole of one conversion is capped by
 * libwks.convert.maxKdfIterations (default 100000000, 20 derivations at
 * the default cap): the iteration counts of every key derivation it runs
 * from a password (a JCEKS key's PBE; a BKS's MAC key and every sealed
 * key's key and IV; a BCFKS's MAC key, store key and every key's key,
 * an scrypt counting N x r x p; a PKCS#12 file's MAC key and the key
 * of every encrypted part, and the IV too under PKCS#12's own PBEs) are
 * added up before each runs, and the derivation that would pass the
 * budget is refused with WKS_ERR_LIMIT, its detail naming the property.
 * A derivation the conversion made already (same algorithm, salt,
 * iteration count and password) is taken from a memo of derived keys and
 * costs nothing, so that a file holding one key many times, or junk
 * entries sharing a salt, derives once; the memo is wiped when the
 * conversion ends.  "One conversion" is one wks_convert_read() or
 * wks_p12_parse() call, and for a parsed Java keystore every
 * wks_java_get_key() and wks_java_get_secret() on it, from wks_java_parse()
 * to wks_java_free().  JKS's own key protection has no iteration count (a
 * hash per 20 bytes of key) and is not counted.
 *
 * Two levels:
 *   - wks_convert_read() / wks_convert_write_p12(): whole keystores, with
 *     per-alias key passwords from a callback and a report of what was
 *     skipped and why;
 *   - wks_java_*() and wks_p12_*(): a Java keystore (JKS, JCEKS, BKS,
 *     BCFKS) or a PKCS#12 file entry by entry, and
 *     wks_convert_write_p12_keys(), for callers that decide per entry
 *     themselves (the `wks` tool).
 */
#ifndef WKS_CONVERT_H
#define WKS_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include <wks/wks.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Keystore types
 */

typedef enum {
	WKS_KEYSTORE_UNKNOWN = 0,
	WKS_KEYSTORE_WKS,
	WKS_KEYSTORE_JKS,    /* magic FEEDFEED */
	WKS_KEYSTORE_JCEKS,  /* magic CECECECE */
	WKS_KEYSTORE_PKCS12, /* another DER SEQUENCE: not checked further */
	WKS_KEYSTORE_BKS,    /* Bouncy Castle's: version 0, 1 or 2, a salt */
	WKS_KEYSTORE_BCFKS,  /* Bouncy Castle's FIPS store: SEQUENCE {
				SEQUENCE ... (PKCS#12 has an INTEGER first) */
	WKS_KEYSTORE_UBER    /* Bouncy Castle's, Twofish-encrypted: refused */
} wks_keystore_type;

/* The type of a keystore by its first bytes (a guess for PKCS#12: a DER
 * SEQUENCE that is no BCFKS).  BKS and UBER share their header: a file
 * whose entries parse up to a MAC at its end is BKS, else one of UBER's
 * shape (version 0 or 1, a 20-byte salt, whole 16-byte blocks after the
 * header) is UBER, else BKS (which its reader then refuses, saying why).
 * Reads nothing beyond `len`, allocates nothing, never fails. */
WKS_API wks_keystore_type wks_keystore_detect(const uint8_t *data, size_t len);
/* "WKS", "JKS", "JCEKS", "PKCS12", "BKS", "BCFKS", "UBER" or "unknown"
 * (static). */
WKS_API const char *wks_keystore_type_name(wks_keystore_type t);

/* ------------------------------------------------------------------------
 * Whole keystores
 */

/*
 * Key passwords per alias.  Called when the passwords given did not open
 * the key of `alias` (UTF-8, API form), with attempt = 1, 2, ...: write a
 * password of at most `size` bytes into `buf` and its length into *len and
 * return 0 to have it tried, or return non-zero to give up on this entry
 * (it is then skipped with WKS_ERR_INTEGRITY).  libwks wipes `buf` after
 * use.  The callback is never called again for an alias after it gave up
 * and is called at most 16 times per alias.
 */
typedef int (*wks_password_cb)(void *arg, const char *alias,
			       unsigned attempt, char *buf, size_t size,
			       size_t *len);

/*
 * What a conversion did: how many entries it imported or exported, and
 * every entry it skipped, with the alias, a wks_err code saying why and a
 * detail message (no secret in it):
 *   WKS_ERR_INTEGRITY    no password given opened the key;
 *   WKS_ERR_UNSUPPORTED  not representable (a certificate type other than
 *                        X.509, a sealed object other than a raw secret
 *                        key, a key protection libwks does not know, a
 *                        secret key whose algorithm has no OID, a PKCS#12
 *                        bag of another kind);
 *   WKS_ERR_EXISTS       the destination store holds the alias already;
 *   WKS_ERR_FORMAT, WKS_ERR_LIMIT, WKS_ERR_INVALID  the entry itself is
 *                        malformed, too large, or refused by the store.
 * Indexes run from 0 to wks_convert_report_skipped() - 1; out of range
 * gives NULL / 0.
 */
typedef struct wks_convert_report wks_convert_report;

WKS_API size_t wks_convert_report_done(const wks_convert_report *r);
WKS_API size_t wks_convert_report_skipped(const wks_convert_report *r);
WKS_API const char *wks_convert_report_alias(const wks_convert_report *r,
					     size_t i);
WKS_API int wks_convert_report_reason(const wks_convert_report *r, size_t i);
WKS_API const char *wks_convert_report_detail(const wks_convert_report *r,
					      size_t i);
WKS_API void wks_convert_report_free(wks_convert_report *r);

/*
 * Read a JKS, JCEKS, BKS, BCFKS or PKCS#12 keystore from `data` into `dst`
 * (a store made with wks_store_new(), empty or not).
 *
 * `pw` is the keystore password.  JKS/JCEKS/BKS: the integrity digest or
 * MAC is checked with it before any entry is read (WKS_ERR_INTEGRITY:
 * wrong password or modified file; pw == NULL skips the check).  BCFKS:
 * the MAC (or the signature) is checked and the store decrypted with it
 * (pw == NULL is the empty password, as for Bouncy Castle).  PKCS#12: the
 * MAC is verified with it before anything is decrypted, and it decrypts
 * the contents; a file without a MAC is WKS_ERR_INTEGRITY unless `flags`
 * has WKS_CONVERT_NO_MAC_OK (nothing in it is then authenticated).
 * Other bits of `flags` are WKS_ERR_INVALID.
 *
 * Java keystores' (JKS, JCEKS, BKS, BCFKS) private and secret keys are
 * tried with `pw` first (if not NULL), then with the passwords `cb` gives
 * (may be NULL); a key is stored in `dst` under the password that opened
 * it (Java, like WKS, has one password per key), and every entry with its
 * creation time in the source (wks_store_set_wallclock()): the source's
 * key passwords are kept, not replaced by the store password `dst` will
 * be saved with.  For a store whose keys should all open with its store
 * password (what a server that is given only the store password needs),
 * change each key that kept another password with
 * wks_store_change_key_password() after this call.  PKCS#12 keys (one
 * password for the file) are stored under `pw`; `cb` is not called.
 * Certificates become trusted certificate
 * entries: for PKCS#12 those that belong to no key's chain and those Java
 * marked trusted.  A PKCS#12 key takes its certificate by localKeyID, else
 * by public key, and its chain from the file's certificates; Java's secret
 * bags become secret keys; an entry without a friendlyName gets the alias
 * "1", "2", ... (the first free one).  Every PBE and MAC iteration count
 * is checked against libwks.wks.maxIterationCount before it runs
 * (WKS_ERR_LIMIT).  OpenSSL 3 reads the RC2 of old PKCS#12 files only
 * with its legacy provider loaded (libwks loads none).
 *
 * Entries that cannot be taken are skipped and listed in the report (see
 * above; for PKCS#12 also bags of other kinds: CRLs, certificates other
 * than X.509, parts encrypted for a public key, WKS_ERR_UNSUPPORTED; and a
 * key without a certificate, WKS_ERR_INVALID); an alias `dst` has already
 * is skipped (WKS_ERR_EXISTS), never replaced.  *report (if report !=
 * NULL) is set on success and on failure (NULL only when out of memory);
 * free it with wks_convert_report_free().
 *
 * Errors (the whole call failed): WKS_ERR_FORMAT (not a keystore of these
 * types, malformed, truncated, trailing bytes), WKS_ERR_UNSUPPORTED (a WKS
 * store: load it with wks_store_load_buffer(); an UBER keystore: the
 * detail gives the keytool command that converts it), WKS_ERR_INTEGRITY (also:
 * PKCS#12 contents that do not decrypt), WKS_ERR_LIMIT, WKS_ERR_INVALID
 * (NULL arguments, flags, a password that is not UTF-8), WKS_ERR_NOMEM.
 * WKS_ERR_LIMIT also when the call's key derivations reach
 * libwks.convert.maxKdfIterations (see "Key-derivation work" above); a
 * JCEKS key whose own count passes libwks.wks.maxIterationCount is only
 * skipped.  After a failure `dst` may hold some of the entries: convert
 * into a fresh store and drop it on failure.
 */
#define WKS_CONVERT_NO_MAC_OK 1u

WKS_API int wks_convert_read(wks_store *dst, const uint8_t *data, size_t len,
			     const char *pw, size_t pw_len, unsigned flags,
			     wks_password_cb cb, void *cb_arg,
			     wks_convert_report **report);

/*
 * Write the private key and certificate entries of `st` (only `alias` if
 * not NULL), and its secret keys the way Java's PKCS12 keystore stores
 * them (a secret bag holding an encrypted {OID, key}), as a PKCS#12 file:
 * shrouded key bags and an encrypted certificate safe under PBES2
 * (AES-256-CBC, PBKDF2-HMAC-SHA-256) and an HMAC-SHA-256 MAC, all under
 * `p12_pw` with `iterations` (0: the store's wolfjce.wks.iterationCount;
 * at most INT32_MAX).  Each key goes with its certificate chain
 * (friendlyName the alias, localKeyID the SHA-1 of the leaf); trusted
 * certificates carry Java's trusted-key-usage attribute, so keytool lists
 * them as trustedCertEntry.  Each key is opened with `key_pw` (NULL:
 * `p12_pw`), then with the passwords `cb` gives (may be NULL).  All
 * p12_pw_len bytes of `p12_pw` protect every part: the buffer needs no
 * NUL after them, and a NUL inside is part of the password (OpenSSL's
 * PKCS#12 code takes it with its length: the bytes themselves for PBKDF2,
 * converted to BMPString, NUL included, for the MAC).  Such a file opens
 * only with readers that take the length too, such as wks_p12_parse(),
 * not with PKCS12_parse() or `openssl pkcs12`, which stop at the NUL.
 *
 * *out (DER; free with wks_free()) is set on success, *report (if not
 * NULL) on success and failure (free it with wks_convert_report_free()).
 * Without `alias`, an entry that cannot be written is skipped into the
 * report: WKS_ERR_INTEGRITY (no password opened its key), WKS_ERR_INVALID
 * (a private key without a certificate), WKS_ERR_UNSUPPORTED (a secret
 * key whose algorithm has no OID: Java cannot store it in PKCS#12
 * either).  With `alias`, such a skip is the call's error.  Other errors:
 * WKS_ERR_NOTFOUND (no such alias), WKS_ERR_INVALID (NULL arguments,
 * iterations out of range, nothing to write), WKS_ERR_CRYPTO,
 * WKS_ERR_NOMEM.
 */
WKS_API int wks_convert_write_p12(uint8_t **out, size_t *out_len,
				  wks_store *st, const char *alias,
				  const char *key_pw, size_t key_pw_len,
				  const char *p12_pw, size_t p12_pw_len,
				  unsigned iterations, wks_password_cb cb,
				  void *cb_arg, wks_convert_report **report);

/*
 * wks_convert_write_p12() with the keys from the caller: get_key(arg,
 * alias, &key) is called for every private and secret key entry written
 * (in store order) and returns 0 with *key set (libwks frees it with
 * wks_key_free()), or a negative wks_err that ends the call with that
 * error (nothing is skipped for it).  A caller that asks for passwords
 * itself, names aliases in its own messages, or needs another password
 * rule than "key_pw, then the callback's" uses this one.  Otherwise as
 * wks_convert_write_p12(), whose skips (a key without a certificate, a
 * secret key whose algorithm has no OID: detail "algorithm \"NAME\" has
 * no OID ...") come before get_key is called for a key without a
 * certificate, after it for a secret key.
 */
typedef int (*wks_key_cb)(void *arg, const char *alias, wks_key **key);

WKS_API int wks_convert_write_p12_keys(uint8_t **out, size_t *out_len,
				       wks_store *st, const char *alias,
				       wks_key_cb get_key, void *arg,
				       const char *p12_pw, size_t p12_pw_len,
				       unsigned iterations,
				       wks_convert_report **report);

/* ------------------------------------------------------------------------
 * PKCS#12 entry by entry
 */

typedef struct wks_p12_file wks_p12_file;

/*
 * Parse and decrypt a PKCS#12 file as wks_convert_read() does (the same
 * MAC rule, flags, bounds and errors; WKS_ERR_FORMAT for trailing bytes),
 * without storing anything: the entries are what wks_convert_read() would
 * store, in its order (keys, secret keys, then certificates), with their
 * friendlyNames (no alias made up).  One call is one budget of
 * key-derivation work (see "Key-derivation work" above).  Free *out with
 * wks_p12_free().
 */
WKS_API int wks_p12_parse(wks_p12_file **out, const uint8_t *data,
			  size_t len, const char *pw, size_t pw_len,
			  unsigned flags);
WKS_API void wks_p12_free(wks_p12_file *f);
/* 1 if `data` is a PKCS#12 file with a MAC, 0 without one (nothing is
 * decrypted), WKS_ERR_FORMAT if it is no PKCS#12 file. */
WKS_API int wks_p12_has_mac(const uint8_t *data, size_t len);
/* What the parse skipped (bags of other kinds; borrowed; alias "" for a
 * bag without a friendlyName). */
WKS_API const wks_convert_report *wks_p12_skipped(const wks_p12_file *f);

/* Entry i (0-based; out of range: NULL, WKS_ENTRY_NONE, 0): its
 * friendlyName (borrowed; NULL if it has none), kind, number of
 * certificates (a key's chain, leaf first, 0 if no certificate matched
 * it; 1 for a certificate; 0 for a secret key), certificate j (a new
 * reference: X509_free() it), the key (borrowed: a private key's PKCS#8
 * DER, a secret key's raw bytes) and a secret key's JCA algorithm name
 * (borrowed). */
WKS_API size_t wks_p12_count(const wks_p12_file *f);
WKS_API const char *wks_p12_alias(const wks_p12_file *f, size_t i);
WKS_API wks_entry_type wks_p12_entry_type(const wks_p12_file *f, size_t i);
WKS_API size_t wks_p12_cert_count(const wks_p12_file *f, size_t i);
WKS_API X509 *wks_p12_get_cert(const wks_p12_file *f, size_t i, size_t j);
WKS_API const uint8_t *wks_p12_key(const wks_p12_file *f, size_t i,
				   size_t *len);
WKS_API const char *wks_p12_secret_algorithm(const wks_p12_file *f,
					     size_t i);

/*
 * The iteration count an encryption algorithm (an EncryptedPrivateKeyInfo's
 * or a PKCS#12 safe's) names: PBES1, PKCS#12 PBE, PBES2 with PBKDF2;
 * LONG_MAX for PBES2 with scrypt (which libwks does not run), -1 if it
 * cannot be read (OpenSSL then refuses the algorithm).  For callers that
 * decrypt such data with OpenSSL themselves and want the bound the readers
 * here apply (libwks.wks.maxIterationCount) before the work is done.
 */
WKS_API long wks_pbe_iterations(const X509_ALGOR *alg);

/* ------------------------------------------------------------------------
 * Java keystores entry by entry: JKS, JCEKS, and Bouncy Castle's BKS and
 * BCFKS through the same calls (a BKS or BCFKS is a Java keystore, read
 * here without a JVM; keytool lists its entries the same way).
 */

typedef struct wks_java_store wks_java_store;

/*
 * Parse a JKS, JCEKS, BKS or BCFKS keystore (by its first bytes,
 * wks_keystore_detect()).  `data` is copied (the caller may free it at
 * once).  With `pw` (UTF-8; as Java's char[]) the integrity digest (JKS,
 * JCEKS) or HMAC (BKS: PKCS#12 key derivation, HMAC-SHA1) is checked
 * first, before any entry is read (WKS_ERR_INTEGRITY: wrong password or
 * modified file); pw == NULL skips it.  A BCFKS is checked and decrypted
 * with `pw` (NULL: the empty password, as Bouncy Castle takes it): its
 * HMAC (SHA-512 or SHA3-512, key from PBKDF2 or scrypt) before anything
 * is decrypted, or, for a store Bouncy Castle signed (it has no password:
 * the empty one), its signature checked with the certificate the store
 * carries: that shows the file is as the holder of that key signed it,
 * not who that is (libwks has no trust anchor for it; a store signed
 * without its certificates is WKS_ERR_UNSUPPORTED).  Then the store data
 * is decrypted (AES-256-CCM or key wrap).  Errors: WKS_ERR_FORMAT (not
 * one of these, malformed, truncated, trailing bytes, an alias twice),
 * WKS_ERR_LIMIT, WKS_ERR_UNSUPPORTED (a version, an algorithm Bouncy
 * Castle does not write either; UBER, with the keytool command that
 * converts it in the detail), WKS_ERR_INVALID (a password that is not
 * UTF-8), WKS_ERR_NOMEM.  Free *out with wks_java_free().  The keys of the
 * keystore share one budget of key-derivation work, from here to
 * wks_java_free() (see "Key-derivation work" above).
 */
WKS_API int wks_java_parse(wks_java_store **out, const uint8_t *data,
			   size_t len, const char *pw, size_t pw_len);
WKS_API void wks_java_free(wks_java_store *js);

/* WKS_KEYSTORE_JKS, _JCEKS, _BKS or _BCFKS; its version (JKS, JCEKS: 1 or
 * 2; BKS: 0, 1 or 2; BCFKS: its store data's, 1). */
WKS_API wks_keystore_type wks_java_type(const wks_java_store *js);
WKS_API int wks_java_version(const wks_java_store *js);
/* Number of entries, in file order. */
WKS_API size_t wks_java_count(const wks_java_store *js);

/* Entry i (0-based; out of range: NULL, WKS_ENTRY_NONE, 0): its alias (API
 * form, borrowed), kind (PRIVATE_KEY, CERTIFICATE or SECRET_KEY), creation
 * time in ms since 1970, number of certificates (a key's chain, leaf
 * first; 1 for a certificate; 0 for a secret key), certificate j's DER
 * (borrowed), and whether every certificate is of type "X.509" (1) or not
 * (0: the DER is then not an X.509 certificate).  BKS: a key entry with a
 * chain is a private key, one without a secret key (as keytool lists
 * them; Bouncy Castle requires a chain for a private key).  BCFKS: the
 * creation time is the entry's last modification, which keytool lists as
 * its creation date. */
WKS_API const char *wks_java_alias(const wks_java_store *js, size_t i);
WKS_API wks_entry_type wks_java_entry_type(const wks_java_store *js,
					   size_t i);
WKS_API int64_t wks_java_creation_time(const wks_java_store *js, size_t i);
WKS_API size_t wks_java_cert_count(const wks_java_store *js, size_t i);
WKS_API const uint8_t *wks_java_cert_der(const wks_java_store *js, size_t i,
					 size_t j, size_t *len);
WKS_API int wks_java_certs_x509(const wks_java_store *js, size_t i);

/*
 * Decrypt the private key of entry i with `pw`: *pkcs8 is the PKCS#8 DER,
 * the bytes the keystore holds (free with wks_free()).  JKS, JCEKS: their
 * key protection; BKS: PBEWithSHAAnd3-KeyTripleDES-CBC (or a key stored in
 * the clear, which needs no password); BCFKS: PBES2 (PBKDF2 or scrypt,
 * AES-256-CCM or key wrap).  WKS_ERR_INTEGRITY for a wrong password,
 * WKS_ERR_UNSUPPORTED for another protection (JKS, JCEKS), a key its
 * application protected itself (BKS, BCFKS setKeyEntry with encoded
 * bytes), a public key, WKS_ERR_INVALID (not a private key entry; a
 * JCEKS password that is not printable ASCII), WKS_ERR_FORMAT,
 * WKS_ERR_LIMIT (the entry's iteration count, or the keystore's budget of
 * key-derivation work spent: then at once, without any work, for every
 * later key needing a new derivation; see "Key-derivation work" above).
 * Calls on one store may run in several threads at once.
 */
WKS_API int wks_java_get_key(uint8_t **pkcs8, size_t *pkcs8_len,
			     const wks_java_store *js, size_t i,
			     const char *pw, size_t pw_len);

/*
 * The secret key of entry i, opened with `pw`: *key is the raw key,
 * *algorithm its JCA name (both freed with wks_free()).  JCEKS: the sealed
 * object must be a javax.crypto.spec.SecretKeySpec or a java.security.
 * KeyRep of type SECRET and format RAW; anything else is
 * WKS_ERR_UNSUPPORTED.  BKS: a key of format RAW and the algorithm name it
 * was stored with ("AES", "HmacSHA256", "DESede", ...).  BCFKS: the name
 * of the key's algorithm OID (AES, DESede, HmacSHA1 to HmacSHA512,
 * HmacSHA3-*, KMAC128/256, SEED, Camellia, ARIA; an OID it does not know
 * as its dotted form).  Other errors as wks_java_get_key().
 */
WKS_API int wks_java_get_secret(uint8_t **key, size_t *key_len,
				char **algorithm, const wks_java_store *js,
				size_t i, const char *pw, size_t pw_len);

#ifdef __cplusplus
}
#endif

#endif /* WKS_CONVERT_H */
