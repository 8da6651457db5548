/* Decoding with the store's rules: the format's parser (format/format.h)
 * run with limits taken from the resolved settings, plus the check the
 * format layer does not make itself (each certificate's DER parses as
 * X.509, through crypto/).  Everything that parses WKS bytes into entries
 * -- loads, setters, rename, and the tests and fuzzers that reach the
 * decoder -- goes through these. */
#ifndef WKS_STORE_DECODE_H
#define WKS_STORE_DECODE_H

#include "config/config.h"
#include "crypto/crypto.h"
#include "format/format.h"

/* The format's limits for cfg, with the X.509 check. */
void wks__limits_of(wks_limits *out, const wks_settings *cfg);

/* wks__format_decode() under cfg's limits, with the X.509 check. */
int wks__decode(wks_entry ***out, size_t *out_n, wks_record_pos **pos,
                wks_file_info *info, const uint8_t *data, size_t len,
                const wks_settings *cfg);

/* wks__format_entry() under cfg's limits, with the X.509 check. */
int wks__entry_from_body(wks_entry **out, int type_id, const char *alias,
                         size_t alias_len, const uint8_t *body, size_t body_len,
                         const wks_settings *cfg, const char *what);

/*
 * WKS_OK if a store with these entries (in this order) and the store
 * iteration count of cfg can be saved so that a load under the same
 * settings accepts it (docs/PROPERTIES.md, "Settings a save checks"): the
 * store iteration count within libwks.wks.maxIterationCount, and every
 * entry within maxEntrySize, maxCertChainLength and maxIterationCount, by
 * the load's own rules.  Else WKS_ERR_LIMIT, detail "cannot save: ...".
 * The file size (libwks.wks.maxFileSize) is checked once it is encoded.
 */
int wks__check_saveable(wks_entry *const *v, size_t n, const wks_settings *cfg);

#endif
