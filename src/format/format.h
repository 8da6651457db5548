/* WKS bytes <-> entry model (spec sections 2-3).  Pure parsing and
 * building: no I/O, no crypto, no configuration.  It depends on util/
 * only; the limits come in a wks_limits from the caller (the store fills
 * it from its settings, store/decode.h), and the one check the format
 * cannot make itself -- that a certificate's DER parses as X.509 -- is the
 * caller's function, called where each certificate is parsed so that the
 * first error in file order is the one reported (spec 5, step 4). */
#ifndef WKS_FORMAT_FORMAT_H
#define WKS_FORMAT_FORMAT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "wks/wks.h"
#include "util/buf.h"

#define WKS_MAGIC 7
#define WKS_FORMAT_VERSION 1
#define WKS_TRAILER_LEN 92
/* Fixed field lengths of the format (spec section 8: "The 10000 minimum,
 * salt length 16, IV length 16 and MAC length 64 are fixed").
 * crypto/crypto.h defines the same three for its primitives; the
 * definitions are identical, so a file may include both. */
#define WKS_SALT_LEN 16
#define WKS_IV_LEN 16
#define WKS_MAC_LEN 64

/* The store's check of one certificate's DER: WKS_OK or a negative
 * wks_err (the format then adds which entry).  arg is check_arg. */
typedef int (*wks_cert_check_fn)(const void *arg, const uint8_t *der,
                                 size_t len);

/* What a parse accepts (spec section 8).  Filled by the caller. */
typedef struct {
	int32_t max_entry_size; /* bodyLen, encKeyLen, certLen (maxEntrySize) */
	int32_t max_chain;      /* chainCount (maxCertChainLength) */
	int32_t min_iterations; /* entry and store iteration counts, */
	int32_t max_iterations; /*   inclusive (libwks.wks.maxIterationCount) */
	wks_cert_check_fn check_cert; /* each certificate; NULL: none */
	const void *check_arg;        /* its first argument */
} wks_limits;

typedef struct {
	size_t off; /* into the entry's body */
	size_t len;
} wks_span;

/*
 * One entry.  Immutable once built and shared by reference count: a
 * get_key in flight keeps its entry alive even if another thread deletes
 * or replaces it meanwhile.
 */
typedef struct wks_entry {
	atomic_uint refs;
	uint64_t id;            /* unique per entry object (KEK cache key) */
	wks_entry_type type;
	char *alias;            /* API form, NUL-terminated */
	size_t alias_len;
	uint8_t *body;          /* the body exactly as serialised */
	size_t body_len;
	int64_t created_ms;
	/* key entries */
	uint8_t salt[WKS_SALT_LEN];
	int32_t iterations;
	uint8_t iv[WKS_IV_LEN];
	wks_span enc;           /* ciphertext */
	size_t mac_input_len;   /* body[0 .. mac_input_len) is MACed */
	wks_span mac;           /* the 64-byte entry MAC */
	char *algorithm;        /* secret key: algorithm name, API form */
	/* certificates: a private key's chain (leaf first) or the one
	 * certificate of a certificate entry */
	size_t cert_count;
	wks_span *certs;
} wks_entry;

/* Where each record was found in a file (for tests and `wks` inspection). */
typedef struct {
	size_t offset;      /* of its typeId */
	size_t body_offset; /* of its body */
} wks_record_pos;

/* The header and trailer fields of a decoded file. */
typedef struct {
	int32_t entry_count;
	size_t trailer_offset;
	uint8_t salt[WKS_SALT_LEN];
	int32_t iterations;
	uint8_t mac[WKS_MAC_LEN];
	size_t mac_input_len; /* = file size - 68 */
} wks_file_info;

/*
 * Parse a whole file (spec sections 2, 3 and 5 step 4.1-4.3; the store MAC
 * is not checked here).  Limits come from lim (maxEntrySize,
 * maxCertChainLength, the iteration bounds, the certificate check).
 * Every length is checked against the bytes left before use; nothing is
 * allocated from a count.  Bytes after the trailer, or after the last
 * field of a body, are MALFORMED (Java never writes them).
 *
 * On success *out is an array of *out_n entries in file order (duplicates
 * included), each with refs = 1; free with wks__entries_free().  If pos is
 * not NULL it receives a malloc'ed array of *out_n record positions.
 */
int wks__format_decode(wks_entry ***out, size_t *out_n, wks_record_pos **pos,
                       wks_file_info *info, const uint8_t *data, size_t len,
                       const wks_limits *lim);

/*
 * Build an entry from its type, API-form alias and body bytes (copied),
 * parsing the body with the same rules as wks__format_decode().  Used by
 * decode and by the setters after they serialise a new body.
 */
int wks__format_entry(wks_entry **out, int type_id, const char *alias,
                      size_t alias_len, const uint8_t *body, size_t body_len,
                      const wks_limits *lim, const char *what);

/*
 * Check that an existing entry would be accepted by a load under lim: the
 * record's bodyLen, then its body with exactly the load's rules (the
 * certificate check is skipped: entries are immutable and their DER was
 * checked when they were built).  WKS_OK, or the load's error and detail,
 * prefixed by `what`.  A save uses it so that it never writes a file that
 * the same settings cannot load.
 */
int wks__format_check_entry(const wks_entry *e, const wks_limits *lim,
                            const char *what);

/* `entry N ("alias")` for messages (printable ASCII kept, the rest '?',
 * the alias cut after 40 bytes). */
void wks__format_describe(char *out, size_t out_len, size_t index,
                          const char *alias);

/* Serialise header + entries + trailer up to and including
 * storeIterations (the store MAC input) into out. */
int wks__encode(wks_buf *out, wks_entry *const *entries, size_t n,
                const uint8_t salt[WKS_SALT_LEN], int32_t iterations);

/* Body builders (no MAC): the bytes an entry MAC covers. */
int wks__body_private(wks_buf *out, int64_t created_ms,
                      const uint8_t salt[WKS_SALT_LEN], int32_t iterations,
                      const uint8_t iv[WKS_IV_LEN], const uint8_t *enc,
                      size_t enc_len, const uint8_t *const *certs,
                      const size_t *cert_lens, size_t cert_count);
int wks__body_secret(wks_buf *out, int64_t created_ms, const char *algorithm,
                     const uint8_t salt[WKS_SALT_LEN], int32_t iterations,
                     const uint8_t iv[WKS_IV_LEN], const uint8_t *enc,
                     size_t enc_len);
int wks__body_cert(wks_buf *out, int64_t created_ms, const uint8_t *der,
                   size_t der_len);

wks_entry *wks__entry_ref(wks_entry *e);
/* Drop a reference; the last one wipes and frees. NULL is ignored. */
void wks__entry_unref(wks_entry *e);
void wks__entries_free(wks_entry **v, size_t n);

/* The certificate DER of span i. */
static inline const uint8_t *wks__entry_cert(const wks_entry *e, size_t i,
                                             size_t *len)
{
	*len = e->certs[i].len;
	return e->body + e->certs[i].off;
}

#endif
