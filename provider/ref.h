/*
 * Key reference files (docs/PROVIDER.md, "Key references"): a PEM block
 *
 *   -----BEGIN WKS KEY REFERENCE-----
 *   base64 of a wks: URI
 *   -----END WKS KEY REFERENCE-----
 *
 * whose URI names a store file and an alias, and optionally where the
 * store and key passwords come from (file:, env:, fd:), never a password
 * itself: pass: and only= are refused, alias= is required.  The URI is
 * parsed by wksp_uri_parse() (uri.c).  Text before the BEGIN line (a note
 * for people) is ignored, as PEM readers do.
 *
 * Pure like uri.c: no I/O, no OpenSSL (fuzz/fuzz_ref.c, the wks tool).
 */
#ifndef WKS_PROVIDER_REF_H
#define WKS_PROVIDER_REF_H

#include <stddef.h>

#include "uri.h"

#define WKSP_REF_LABEL "WKS KEY REFERENCE"
#define WKSP_REF_BEGIN "-----BEGIN " WKSP_REF_LABEL "-----"
#define WKSP_REF_END "-----END " WKSP_REF_LABEL "-----"
/* Longest URI a reference may hold, and longest block (BEGIN line to END
 * line, line ends included). */
#define WKSP_REF_URI_MAX 4096
#define WKSP_REF_BLOCK_MAX 8192

/*
 * Whether line[0..n) (without or with its "\n" / "\r\n") is the BEGIN line
 * of a reference: 1, or 0.  Cheap: a fixed-length compare.
 */
int wksp_ref_is_begin(const char *line, size_t n);

/*
 * Parse a reference block: `pem[0..len)` from its BEGIN line to its END
 * line (anything after the END line is an error; nothing may precede the
 * BEGIN line).  Returns 0 with *out filled (release with wksp_uri_clear()),
 * or -1 with a message (never holding a password: a reference with pass:
 * is refused without repeating it) and *out cleared.
 */
int wksp_ref_parse(wksp_uri *out, const char *pem, size_t len, char *err,
		   size_t errlen);

/*
 * The wks: URI of a reference: path and alias percent-encoded (only
 * A-Z a-z 0-9 - . _ ~ / stay as they are), the sources (kind NONE: left
 * out; PASS is refused) after them.  *out is a new NUL-terminated string
 * to free().  Returns 0, or -1 with a message.
 */
int wksp_ref_uri(char **out, const char *path, const char *alias,
		 const wksp_pwsrc *storepass, const wksp_pwsrc *keypass,
		 char *err, size_t errlen);

/*
 * The PEM block of a URI (BEGIN line, base64 in lines of 64, END line,
 * each ending in "\n"): a new string *out of *out_len bytes (plus a NUL)
 * to free().  Returns 0, or -1 with a message (a URI longer than
 * WKSP_REF_URI_MAX).
 */
int wksp_ref_pem(char **out, size_t *out_len, const char *uri, char *err,
		 size_t errlen);

#endif
