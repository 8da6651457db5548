/*
 * The attribute record: what PKCS#11 programs set on a token's objects
 * that a WKS entry has no place for (CKA_ID as given, usage flags,
 * CKA_ALLOWED_MECHANISMS, CKA_ALWAYS_AUTHENTICATE, dates, a key pair's
 * deleted public-key object), kept beside the store in `<store>.p11`
 * (docs/FORMAT.md, "The PKCS#11 attribute record"; docs/DESIGN.md says
 * why beside the store and not inside).
 *
 * This file is the format alone: a bounded reader and a writer of the
 * record's bytes, pure C (no OpenSSL), fuzzed by fuzz/fuzz_pkcs11_rec.c.
 * The MAC that closes the file and the file itself are recfile.c's.
 *
 *   record := magic "WKSP11R" 0x01        8 bytes
 *             u32 iterations              PBKDF2 of the MAC key
 *             bytes[16] salt
 *             u32 count                   items, at most W11_REC_MAX_ITEMS
 *             item * count
 *             bytes[64] mac               HMAC-SHA512(K, everything before)
 *   item   := u8 kind                     1: an object of an entry,
 *                                         2: a token data object
 *             bytes[32] entry             kind 1: the entry's digest (its
 *                                         bytes as stored: type, salt, IV,
 *                                         encrypted key, MAC, chain);
 *                                         kind 2: the object's own random id
 *             u8 role                     kind 1: W11_R_PRIV .. W11_R_SECRET;
 *                                         kind 2: 0 (and index, flags 0)
 *             u32 index                   the certificate's place in the
 *                                         chain (0 otherwise)
 *             u8 flags                    bit 0: the object was deleted
 *             u32 nattrs                  at most W11_REC_MAX_ATTRS
 *             attr * nattrs
 *   attr   := u64 type, u32 len (at most W11_REC_MAX_VALUE), bytes[len]
 * Integers are big-endian, as in a WKS file.  Nothing after the MAC.
 */
#ifndef WKS_PKCS11_ATTRREC_H
#define WKS_PKCS11_ATTRREC_H

#include <stddef.h>
#include <stdint.h>

#define W11_REC_MAGIC "WKSP11R\x01"
#define W11_REC_MAC_LEN 64
#define W11_REC_MAX_ITEMS 65536u
#define W11_REC_MAX_ATTRS 64u
#define W11_REC_MAX_VALUE 65536u
#define W11_REC_MAX_FILE (16u * 1024 * 1024)
#define W11_REC_KIND_OBJ 1
#define W11_REC_KIND_DATA 2
#define W11_REC_F_DELETED 0x01u

typedef struct {
	uint64_t type;
	uint32_t len;
	unsigned char *val;
} w11_rattr;

typedef struct {
	uint8_t kind;
	uint8_t entry[32];
	uint8_t role;
	uint32_t index;
	uint8_t flags;
	w11_rattr *a;
	uint32_t n;
} w11_ritem;

typedef struct {
	uint32_t iterations;
	uint8_t salt[16];
	w11_ritem *items;
	uint32_t n, cap;
} w11_rec;

/* Parse p[0..len): 0 with *r filled and *body_len the length the MAC
 * covers (the MAC is p[*body_len .. len)), or -1 for anything malformed
 * (bad magic, a count or length over its limit or past the end, an
 * unknown kind or flag, an attribute twice in an item, an item twice,
 * trailing bytes).  *r is empty on failure. */
int w11_rec_parse(w11_rec *r, const uint8_t *p, size_t len,
		  size_t *body_len);
/* The bytes the MAC covers (magic .. last item), malloc'ed: 0, or -1
 * (no memory, or over a limit). */
int w11_rec_encode(const w11_rec *r, uint8_t **out, size_t *len);
void w11_rec_free(w11_rec *r);

/* The item of (entry, role, index), NULL if none. */
w11_ritem *w11_rec_find(const w11_rec *r, const uint8_t entry[32],
			uint8_t role, uint32_t index);
/* The item of (entry, role, index), made if missing: NULL if no memory
 * or the record is full.  (Here and below, `entry` may point into the
 * record itself.) */
w11_ritem *w11_rec_item(w11_rec *r, const uint8_t entry[32], uint8_t role,
			uint32_t index);
/* A new data object's item (kind 2) under `id`: NULL if no memory, the
 * record is full, or the id is taken. */
w11_ritem *w11_rec_data(w11_rec *r, const uint8_t id[32]);
/* Set (replace) an attribute of an item: 0, or -1. */
int w11_ritem_set(w11_ritem *it, uint64_t type, const void *val,
		  uint32_t len);
const w11_rattr *w11_ritem_get(const w11_ritem *it, uint64_t type);
/* Drop the items of an entry. */
void w11_rec_drop_entry(w11_rec *r, const uint8_t entry[32]);
/* Give an entry's items a new digest (the entry was rewritten by the
 * module: same key, new bytes). */
void w11_rec_rebind(w11_rec *r, const uint8_t from[32], const uint8_t to[32]);

#endif
