/*
 * An internal call for the PKCS#11 module (pkcs11/token.c), which links
 * the static library: it includes this header alone, so it declares
 * nothing but public types.
 */
#ifndef WKS_STORE_ENTRYID_H
#define WKS_STORE_ENTRYID_H

#include <stdint.h>

#include <wks/wks.h>

/*
 * The identity of an entry's content: SHA-256 over its type and its body
 * exactly as stored (creation time; for a key entry its salt, iteration
 * count, IV, encrypted key and MAC; a private key's certificate chain; a
 * secret key's algorithm).  Every new key, every re-encryption (a new
 * password, a chain written again) gives new bytes, so two entries never
 * share it unless they are copies of one another, and an entry keeps it
 * exactly as long as it is not written again (a rename keeps it).
 * WKS_OK, or WKS_ERR_NOTFOUND / WKS_ERR_INVALID.
 */
int wks__store_entry_digest(uint8_t out[32], wks_store *st, const char *alias);

#endif
