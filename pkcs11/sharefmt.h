/*
 * The shared login's record (docs/PKCS11.md, "Shared login"): what one
 * process of a user leaves in the user's kernel keyring after a C_Login,
 * for the user's other processes (p11-kit server's per-connection
 * p11-kit-remote above all) to be logged in without PBKDF2.
 *
 *     "WKSP11L3"                        8 bytes
 *     dev, ino, size                    u64 each     the store file's identity
 *     mtime s, mtime ns, ctime s, ns    i64 u32 i64 u32   at the login
 *     deadline                          i64          the end of the login:
 *                                        the C_Login's time (CLOCK_REALTIME,
 *                                        s) plus the TTL; kept by every
 *                                        republish
 *     password length (1..1024)         u16
 *     password                          that many bytes
 *     blob length                       u32
 *     blob                              wks_store_cache_export()'s
 *     record key length (0..128)        u16
 *     record key                        the attribute record's MAC key,
 *                                        salt and iterations (recfile.c),
 *                                        so that a process taking the
 *                                        login over runs no PBKDF2 for
 *                                        the record either
 *
 * big-endian, nothing after, at most W11_SHARE_MAX bytes (a "user" key's
 * limit).  Pure C, no OpenSSL and no libwks: the fuzz target
 * (fuzz/fuzz_pkcs11_share.c) runs it alone.
 */
#ifndef WKS_PKCS11_SHAREFMT_H
#define WKS_PKCS11_SHAREFMT_H

#include <stddef.h>
#include <stdint.h>

#define W11_SHARE_MAX 32767u
#define W11_SHARE_PW_MAX 1024u
#define W11_SHARE_RECKEY_MAX 128u

typedef struct {
	uint64_t dev, ino, size;
	int64_t mtime_s, ctime_s;
	uint32_t mtime_ns, ctime_ns;
	int64_t deadline;    /* CLOCK_REALTIME seconds */
	const uint8_t *pw;   /* into the record (decode) */
	size_t pw_len;
	const uint8_t *blob; /* into the record (decode) */
	size_t blob_len;
	const uint8_t *reckey; /* into the record (decode); may be empty */
	size_t reckey_len;
} w11_share_rec;

/* The record's length for r (0 if it would exceed W11_SHARE_MAX or the
 * password is empty or longer than W11_SHARE_PW_MAX). */
size_t w11_share_len(const w11_share_rec *r);
/* Write the record into out (w11_share_len(r) bytes). */
void w11_share_encode(uint8_t *out, const w11_share_rec *r);
/* Read a record: 0 with r's pointers into p, or -1 (not a record of this
 * version, lengths that do not add up, bounds). */
int w11_share_decode(w11_share_rec *r, const uint8_t *p, size_t n);

#endif
