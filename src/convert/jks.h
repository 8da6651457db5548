/*
 * Java keystores in (internal to src/convert/; the public face is
 * include/wks/convert.h): a strict, bounded reader of JKS (magic FEEDFEED) and
 * JCEKS (CECECECE) files, and the decryption of their keys.
 *
 * The format (sun.security.provider.JavaKeyStore, com.sun.crypto.provider.
 * JceKeyStore): magic, version 1 or 2, entry count, entries, and 20 bytes
 * of SHA-1 over (store password as UTF-16BE || "Mighty Aphrodite" ||
 * everything before the digest).  Entries:
 *   tag 1, private key: alias (writeUTF), date (ms), EncryptedPrivateKeyInfo
 *          (length + DER), chain count, per certificate (v2: type string)
 *          length + DER;
 *   tag 2, trusted certificate: alias, date, (v2: type) length + DER;
 *   tag 3, secret key (JCEKS only): alias, date, a Java-serialized
 *          javax.crypto.SealedObject.
 *
 * Key protection: JKS 1.3.6.1.4.1.42.2.17.1.1 (SHA-1 key stream, SHA-1
 * check); JCEKS 1.3.6.1.4.1.42.2.19.1 (PBEWithMD5AndTripleDES: MD5 over salt
 * halves and the ASCII password, 3DES-CBC).  Sealed secret keys use the
 * same PBE over a serialized SecretKeySpec or KeyRep.  The serialization
 * reader accepts only what those objects need (strings, byte arrays, enums,
 * plain serializable classes without custom data) and is bounded in depth,
 * handles, classes and fields.
 *
 * Nothing here prints: failures return a negative wks_err with the detail
 * in wks_error_detail().  The parser allocates only as entries parse (never
 * from a count in the file), checks every length against the bytes left
 * and against the limits below, and rejects trailing bytes.
 */
#ifndef WKS_CONVERT_JKS_H
#define WKS_CONVERT_JKS_H

#include <stddef.h>
#include <stdint.h>

#include "convert/kdfmeter.h"
#include "util/buf.h"
#include "wks/convert.h"

enum { JKS_TAG_KEY = 1, JKS_TAG_CERT = 2, JKS_TAG_SECRET = 3 };

/* Limits (the libwks settings: wolfjce.wks.maxCertChainLength,
 * wolfjce.wks.maxEntrySize for every blob, libwks.wks.maxIterationCount
 * for the JCEKS PBE, libwks.convert.maxKdfIterations for all the PBEs of
 * one conversion), and the meter that keeps the last (kdfmeter.h; NULL:
 * no budget, no memo). */
typedef struct {
	size_t max_chain;
	size_t max_blob;
	uint32_t max_iterations;
	uint64_t max_kdf_iterations;
	wks__kdf_meter *kdf;
} jks_limits;

/* At most this many entries in one file. */
#define JKS_MAX_ENTRIES 100000

typedef struct {
	int tag;
	char *alias;          /* API form (wks.h): heap, NUL-terminated */
	int64_t date_ms;
	/* tag 1: the EncryptedPrivateKeyInfo DER; tag 3: the serialized
	 * SealedObject (both point into the parsed buffer) */
	const uint8_t *blob;
	size_t blob_len;
	/* tag 1: the chain (leaf first); tag 2: one certificate */
	size_t ncerts;
	const uint8_t **cert;
	size_t *cert_len;
	int non_x509;         /* a certificate type other than "X.509" */
	/* tag 3: the SealedObject's fields (into the buffer) */
	const uint8_t *seal_params, *seal_data;
	size_t seal_params_len, seal_data_len;
	int seal_pbe;         /* sealAlg is PBEWithMD5AndTripleDES */
} jks_entry;

typedef struct {
	int jceks;            /* 1: JCEKS, 0: JKS */
	int version;          /* 1 or 2 */
	size_t count;
	jks_entry *e;
} jks_file;

#define JKS_FILE_INIT { 0, 0, 0, NULL }

/*
 * Parse `data` (kept by the caller while *out is used).  With a password
 * (pw != NULL; UTF-8, converted to UTF-16BE as Java's char[]) the
 * integrity digest is checked first, before any entry is read
 * (WKS_ERR_INTEGRITY: wrong password or modified file); with pw == NULL it
 * is skipped.  WKS_ERR_FORMAT (malformed, truncated, trailing bytes),
 * WKS_ERR_LIMIT, WKS_ERR_UNSUPPORTED (version), WKS_ERR_INVALID (a
 * password that is not UTF-8), WKS_ERR_NOMEM.
 */
int jks_parse(jks_file *out, const uint8_t *data, size_t len, const char *pw,
	      size_t pw_len, const jks_limits *lim);
void jks_file_free(jks_file *f);

/* The chain arrays of an entry for n certificates (ncerts = n; none for
 * 0): WKS_ERR_NOMEM, the entry then freed by jks_file_free() as usual.
 * Shared by the JKS, BKS and BCFKS readers. */
int jks_entry_alloc_certs(jks_entry *e, size_t n);

/*
 * Decrypt a tag-1 entry's key with `pw` (UTF-8): *pkcs8 (heap; the caller
 * wipes and frees it) is the PKCS#8 DER.  WKS_ERR_INTEGRITY for a wrong
 * password, WKS_ERR_UNSUPPORTED for another protection algorithm (or a
 * JCEKS password that is not printable ASCII: WKS_ERR_INVALID),
 * WKS_ERR_FORMAT, WKS_ERR_LIMIT (iteration count, or lim->kdf's budget:
 * JCEKS's PBE derives through that meter, kdfmeter.h).
 */
int jks_recover_key(uint8_t **pkcs8, size_t *pkcs8_len, const jks_entry *e,
		    const char *pw, size_t pw_len, const jks_limits *lim);

/*
 * Unseal a tag-3 entry with `pw`: *key (heap, wipe) is the raw key,
 * *algorithm (heap, UTF-8) its JCA name.  The sealed object must be a
 * javax.crypto.spec.SecretKeySpec or a java.security.KeyRep of type SECRET
 * and format RAW; anything else is WKS_ERR_UNSUPPORTED.
 */
int jks_recover_secret(uint8_t **key, size_t *key_len, char **algorithm,
		       const jks_entry *e, const char *pw, size_t pw_len,
		       const jks_limits *lim);

/* Append a UTF-8 password as Java's char[] in UTF-16BE (a code point
 * outside the BMP as a surrogate pair): WKS_ERR_INVALID if it is not
 * UTF-8. */
int wks__pw_utf16be(wks_buf *out, const char *pw, size_t n);

#endif
