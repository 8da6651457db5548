/* Java's modified UTF-8 (spec 1.1) <-> the API's alias form.
 *
 * API form: standard UTF-8, except U+0000 is C0 80 and an unpaired UTF-16
 * surrogate is its own 3-byte sequence (as Java's JNI writes strings).
 * Every UTF-16 string has exactly one API form, so two aliases are the same
 * entry iff their API forms are byte-equal. */
#ifndef WKS_FORMAT_MUTF8_H
#define WKS_FORMAT_MUTF8_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Decode n bytes of modified UTF-8 (Java's lenient readUTF rules) and
 * append the API form to out.  WKS_ERR_FORMAT on an invalid sequence. */
int wks__mutf8_to_api(wks_buf *out, const uint8_t *in, size_t n);

/* Encode an API-form string (validated: WKS_ERR_INVALID if it is not
 * well-formed) as Java's writeUTF bytes, appended to out (no length
 * prefix).  WKS_ERR_INVALID if the result would exceed 65535 bytes. */
int wks__api_to_mutf8(wks_buf *out, const char *s, size_t n);

/* Append the canonical API form of a caller's string (joins a surrogate
 * pair written as two 3-byte sequences into one 4-byte sequence), so that
 * equal UTF-16 strings have byte-equal keys.  WKS_ERR_INVALID if bad. */
int wks__api_canon(wks_buf *out, const char *s, size_t n);

/* Validate an API-form string from a caller (WKS_ERR_INVALID if bad). */
int wks__api_validate(const char *s, size_t n);

#endif
