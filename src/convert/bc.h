/*
 * Bouncy Castle keystores in (internal to src/convert/; the public face is
 * the wks_java_*() reader of include/wks/convert.h, java.c): BKS (bks.c),
 * BCFKS (bcfks.c), and UBER, recognised and refused (bks.c).  What Bouncy
 * Castle 1.72 writes, as learnt from its sources (BcKeyStoreSpi,
 * BcFKSKeyStoreSpi, org.bouncycastle.asn1.bc) and from the files keytool
 * makes with it:
 *
 * BKS (Java DataOutputStream, big-endian): version (0, 1 or 2), salt
 * length, salt, iteration count; entries, each: type (1 certificate,
 * 2 key, 3 secret, 4 sealed), alias (writeUTF), date (ms), chain count
 * and certificates (type string, length, DER), then by type: a
 * certificate; a key in the clear (key type, format, algorithm, length,
 * encoding); raw bytes; or sealed bytes (salt length, salt, iterations,
 * and the key as for type 2 under PBEWithSHAAnd3-KeyTripleDES-CBC); a 0
 * byte ends them; then an HMAC-SHA1 of the entries (terminator included)
 * keyed by the PKCS#12 key derivation (SHA-1, ID 3) of the store password
 * over the header's salt and iterations: 20 bytes for version 2, 2 bytes
 * (Bouncy Castle's long-standing bug) for 0 and 1.
 *
 * UBER: the same header (version 1, a 20-byte salt), then everything else
 * encrypted with PBEWithSHAAndTwofish-CBC.  OpenSSL has no Twofish, so
 * libwks refuses it with a message that says how to convert it
 * (docs/DESIGN.md, "Bouncy Castle keystores").
 *
 * BCFKS (DER):
 *   ObjectStore ::= SEQUENCE { storeData, integrityCheck }
 *   storeData: EncryptedObjectStoreData ::= SEQUENCE { AlgorithmIdentifier
 *     (PBES2), OCTET STRING } or ObjectStoreData (in the clear)
 *   integrityCheck: PbkdMacIntegrityCheck ::= SEQUENCE { macAlgorithm,
 *     pbkdAlgorithm, mac OCTET STRING } (HMAC over storeData's DER), or
 *     [0] SignatureCheck ::= SEQUENCE { signatureAlgorithm, [0]
 *     certificates OPTIONAL, BIT STRING }
 *   ObjectStoreData ::= SEQUENCE { version INTEGER, integrityAlgorithm,
 *     creationDate, lastModifiedDate GeneralizedTime, SEQUENCE OF
 *     ObjectData, comment UTF8String OPTIONAL }
 *   ObjectData ::= SEQUENCE { type INTEGER (0 certificate, 1 private key,
 *     2 secret key, 3 and 4 keys protected by the caller), identifier
 *     UTF8String, creationDate, lastModifiedDate, data OCTET STRING,
 *     comment OPTIONAL }
 *   private key data: SEQUENCE { EncryptedPrivateKeyInfo, SEQUENCE OF
 *     Certificate }; secret key data: SEQUENCE { AlgorithmIdentifier,
 *     OCTET STRING } holding SEQUENCE { OID, OCTET STRING key }.
 * Keys (store, MAC, each key) come from PBKDF2 (HMAC-SHA-512 or
 * SHA3-512) or scrypt over the password and a purpose, both as
 * PKCS12PasswordToBytes (UTF-16BE + 00 00, nothing for an empty
 * password); encryption is AES-256-CCM or AES-256 key wrap with padding.
 *
 * The readers fill a jks_file (jks.h) with their entries, so that one set
 * of accessors (java.c) serves every Java keystore type: tag 1 private
 * key (chain, leaf first), 2 trusted certificate, 3 secret key; the
 * alias in API form; certificates point into the input (BKS) or into the
 * decrypted store data the bc_store keeps (BCFKS).
 *
 * Bounds: every length against the bytes left and wolfjce.wks.maxEntrySize,
 * chains against wolfjce.wks.maxCertChainLength, at most JKS_MAX_ENTRIES
 * entries, every iteration count (and scrypt's N x r x p) against
 * libwks.wks.maxIterationCount, and all the key derivation of one parsed
 * store (its parse and every key recovered from it) against the budget of
 * one conversion, libwks.convert.maxKdfIterations (kdfmeter.h: the meter
 * of the wks_java_store, which also runs a derivation it ran before only
 * once).  Every derivation goes through one function per format
 * (bks_derive, bcfks_derive) that checks it and runs it on the meter.  Nothing here prints; errors are wks_err with the
 * detail in wks_error_detail().
 */
#ifndef WKS_CONVERT_BC_H
#define WKS_CONVERT_BC_H

#include <stddef.h>
#include <stdint.h>

#include "convert/jks.h"
#include "wks/convert.h"

/* What a BC entry holds, beyond its jks_entry tag. */
enum {
	BC_SUB_SEALED = 0,   /* BKS type 4: a key under the key password */
	BC_SUB_CLEAR,        /* BKS type 2: a key in the clear */
	BC_SUB_RAW,          /* BKS type 3: bytes only the writer knows */
	BC_SUB_PROTECTED,    /* BCFKS type 3, 4: protected by the caller */
	BC_SUB_PBE           /* BCFKS type 1, 2: under the key password */
};

typedef struct {
	wks_keystore_type type; /* BKS or BCFKS */
	int version;
	jks_limits lim; /* lim.kdf: the meter every derivation runs on */
	uint8_t *plain;         /* BCFKS: the decrypted store data */
	size_t plain_len;
	unsigned char *sub;     /* per entry: BC_SUB_* */
	size_t sub_cap;
} bc_store;

/* WKS_KEYSTORE_BKS, _UBER or _BCFKS by the first bytes, else
 * WKS_KEYSTORE_UNKNOWN; reads at most the file, allocates nothing.  BKS
 * and UBER share their header: a file whose entries parse to a MAC at its
 * end is BKS, else one of UBER's shape (version 0 or 1, a 20-byte salt,
 * whole 16-byte blocks after the header) is UBER, else BKS. */
wks_keystore_type wks__bc_detect(const uint8_t *d, size_t n);

/*
 * Parse a BKS or BCFKS keystore (kept by the caller while the result is
 * used).  BKS: with pw (UTF-8) the MAC is checked first, before any entry
 * is read; pw == NULL skips it.  BCFKS: the MAC (or the AES-CCM of the
 * contents, for a signed store) is checked with pw, NULL being the empty
 * password as for Bouncy Castle.  Errors: WKS_ERR_INTEGRITY (wrong
 * password or modified), WKS_ERR_FORMAT, WKS_ERR_LIMIT,
 * WKS_ERR_UNSUPPORTED (UBER; an algorithm or version not known),
 * WKS_ERR_INVALID (a password that is not UTF-8), WKS_ERR_NOMEM.  On
 * success *f holds the entries and *s what the accessors need; free both
 * with wks__bc_free() and jks_file_free().
 */
int wks__bc_parse(bc_store *s, jks_file *f, const uint8_t *data, size_t len,
		  const char *pw, size_t pw_len, const jks_limits *lim);
void wks__bc_free(bc_store *s);

/* Entry i's private key (PKCS#8, heap, wipe) or secret key (heap, wipe)
 * and JCA algorithm name (heap), opened with pw.  As jks_recover_key() and
 * jks_recover_secret(); WKS_ERR_UNSUPPORTED for what libwks cannot open
 * (keys the caller protected, public keys, raw BKS bytes). */
int wks__bc_get_key(uint8_t **pkcs8, size_t *pkcs8_len, bc_store *s,
		    const jks_file *f, size_t i, const char *pw,
		    size_t pw_len);
int wks__bc_get_secret(uint8_t **key, size_t *key_len, char **algorithm,
		       bc_store *s, const jks_file *f, size_t i,
		       const char *pw, size_t pw_len);

/* ---- per format (bks.c, bcfks.c), and what they share (bc.c) -------- */

int bks_parse(bc_store *s, jks_file *f, const uint8_t *data, size_t len,
	      const char *pw, size_t pw_len);
int bks_get_key(uint8_t **key, size_t *key_len, char **algorithm,
		bc_store *s, const jks_entry *e, int sub, int want_private,
		const char *pw, size_t pw_len);
/* The entries of a BKS body (or an UBER plaintext) at data, up to and
 * including the 0 that ends them; *used is their length.  f == NULL only
 * walks them (no allocation; the detection). */
int bks_entries(jks_file *f, bc_store *s, const uint8_t *data, size_t len,
		size_t *used, const jks_limits *lim);

int bcfks_parse(bc_store *s, jks_file *f, const uint8_t *data, size_t len,
		const char *pw, size_t pw_len);
/* The entries of a decrypted ObjectStoreData (DER) at der (kept by the
 * caller), for bcfks_parse and the fuzz target; *ialg (if not NULL) is
 * its integrityAlgorithm (DER, into der). */
int bcfks_store_data(bc_store *s, jks_file *f, const uint8_t *der,
		     size_t len, const uint8_t **ialg, size_t *ialg_len);
int bcfks_get_key(uint8_t **key, size_t *key_len, char **algorithm,
		  bc_store *s, const jks_entry *e, int sub, int want_private,
		  const char *pw, size_t pw_len);

/* Append an entry to f (the array grows as entries parse) and its sub to
 * s; returns it zeroed, or NULL when out of memory. */
jks_entry *bc_add_entry(bc_store *s, jks_file *f, int sub);
/* Check `iter` (an scrypt: N x r x p) against the per-derivation limit,
 * libwks.wks.maxIterationCount: 0 or WKS_ERR_LIMIT naming it. */
int bc_check_iter(const bc_store *s, uint64_t iter, const char *what);
/* Two entries with one alias: WKS_ERR_FORMAT. */
int bc_check_unique(const jks_file *f);

#endif
