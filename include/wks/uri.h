/*
 * libwks: wks: URIs, password sources and key references.
 *
 *   #include <wks/uri.h>      (includes <wks/wks.h>)
 *
 * How the programs built on libwks name a key without holding its
 * password: the OpenSSL provider (wks.so) opens `wks:` URIs and reads key
 * reference files, the `wks` tool writes references (`export-key
 * --reference`) and checks them (`check-reference`), and any other client
 * (a PKCS#11 module, an application of your own) reads the same text the
 * same way by calling these functions.  docs/PROVIDER.md has the grammar
 * and the rules with examples ("URI syntax", "Passwords", "Key
 * references").
 *
 * Three layers, each built on the one before:
 *
 *   - a password source names where a password comes from: pass:TEXT,
 *     env:VAR, file:PATH or fd:N (the OpenSSL convention);
 *   - a wks: URI names a store file, an entry and password sources:
 *     wks:PATH?alias=NAME&storepass=SRC&keypass=SRC&only=certs|issuers;
 *   - a key reference is a PEM block "WKS KEY REFERENCE" whose body is
 *     the base64 of a wks: URI that names one private key and holds no
 *     password (only file:, env:, fd: sources): a file a server reads as
 *     its private key.
 *
 * The same conventions as wks.h hold: every call returning int returns
 * WKS_OK (0) or a negative wks_err with the detail in wks_error_detail()
 * (which never repeats a password, nor any text of a URI that may be part
 * of one); out-parameters come first and are overwritten, never freed;
 * memory returned is released with the matching free function (which
 * wipes it).  The parsers are strict and bounded (every length is checked
 * against the limits below before it is used) and fuzzed (fuzz/fuzz_uri.c,
 * fuzz/fuzz_ref.c).  Only wks_pwsrc_read() does I/O; nothing here calls
 * OpenSSL.  All functions are thread-safe; a wks_uri or wks_pwsrc may be
 * read by any number of threads at once and is freed by one.
 */
#ifndef WKS_URI_H
#define WKS_URI_H

#include <stddef.h>

#include <wks/wks.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Password sources
 */

/* Where a password comes from. */
typedef enum {
	WKS_PW_NONE = 0, /* no source (a URI without storepass= / keypass=) */
	WKS_PW_PASS,     /* pass:TEXT: the password itself */
	WKS_PW_ENV,      /* env:VAR: the environment variable's value */
	WKS_PW_FILE,     /* file:PATH: the file's first line */
	WKS_PW_FD        /* fd:N: the first line read from descriptor N */
} wks_pw_kind;

/* A parsed password source (opaque). */
typedef struct wks_pwsrc wks_pwsrc;

/* Longest password wks_pwsrc_read() reads from a file or a descriptor,
 * and the largest N of fd:N. */
#define WKS_PW_MAX 65536
#define WKS_PW_FD_MAX 1000000

/*
 * Parse `text[0..len)`: "pass:TEXT", "env:VAR", "file:PATH" or "fd:N"
 * (N decimal, at most WKS_PW_FD_MAX), with a non-empty part after the
 * colon; the text is taken as it is (no percent-decoding: that is the
 * URI's).  *out is a new source to free with wks_pwsrc_free().
 * WKS_ERR_FORMAT for anything else (the detail never repeats the text,
 * which may be a password given in the wrong place), WKS_ERR_INVALID for
 * a NULL argument or a NUL byte in the text, WKS_ERR_NOMEM.
 */
WKS_API int wks_pwsrc_parse(wks_pwsrc **out, const char *text, size_t len);

/* The kind of a source; WKS_PW_NONE for NULL. */
WKS_API wks_pw_kind wks_pwsrc_kind(const wks_pwsrc *src);

/*
 * The text after the colon, NUL-terminated (borrowed, valid until the
 * source is freed), with its length in *len (may be NULL): the variable's
 * name for env:, the path for file:, the password itself for pass:
 * (treat it as a secret).  NULL (and 0) for fd: and for NULL.
 */
WKS_API const char *wks_pwsrc_value(const wks_pwsrc *src, size_t *len);

/* N of fd:N; -1 for other kinds and for NULL. */
WKS_API int wks_pwsrc_fd(const wks_pwsrc *src);

/*
 * Read the password a source names into *out (*out_len bytes plus a NUL
 * terminator; free it with wks_free(), which wipes it).  pass: gives its
 * text; env: the variable's value, through secure_getenv() (none in a
 * setuid or setgid process, whose environment its caller chose); file:
 * and fd: their first line without its end ("\n" or "\r\n"), read a byte
 * at a time so that nothing after the line is consumed (a descriptor may
 * be a pipe its owner reads on), at most WKS_PW_MAX bytes.  `what` (may
 * be NULL) names the source in the detail, e.g. "storepass"; the detail
 * names the variable or the file, never the password.
 *
 * Errors: WKS_ERR_NOTFOUND (env: not set), WKS_ERR_IO (the file cannot be
 * opened or read; errno's text in the detail), WKS_ERR_LIMIT (a line
 * longer than WKS_PW_MAX), WKS_ERR_INVALID (an empty password, a NULL
 * or WKS_PW_NONE source), WKS_ERR_NOMEM.  A file: source is opened as it
 * is, whoever owns it: a caller that must not read a FIFO another user
 * planted checks the path first.
 */
WKS_API int wks_pwsrc_read(char **out, size_t *out_len, const wks_pwsrc *src,
			   const char *what);

/* Free a source (its value wiped).  NULL is ignored. */
WKS_API void wks_pwsrc_free(wks_pwsrc *src);

/* ------------------------------------------------------------------------
 * wks: URIs
 *
 *   wks:PATH[?ATTR=VALUE[&ATTR=VALUE]...]
 *   wks:///ABSOLUTE/PATH[?...]       wks://localhost/ABSOLUTE/PATH[?...]
 *
 * PATH is absolute or relative to the working directory; PATH and every
 * VALUE are percent-decoded.  The attributes are alias=NAME,
 * storepass=SRC and keypass=SRC (a password source, as above) and
 * only=certs|issuers.  Unknown, repeated or empty attributes, bad percent
 * escapes, an encoded NUL (%00), an unencoded '#' and an empty PATH are
 * errors: a URI names a file holding private keys, so a typo
 * ("storepas=") must not silently become another request.
 */

/* Longest URI accepted, in bytes. */
#define WKS_URI_MAX 65536

/* only=: which objects a URI gives. */
typedef enum {
	WKS_URI_ALL = 0,   /* no only=: keys and certificates */
	WKS_URI_CERTS,     /* only=certs: certificates, no key */
	WKS_URI_ISSUERS    /* only=issuers: key entries' chains without the
			    * leaf */
} wks_uri_select;

/* A parsed wks: URI (opaque). */
typedef struct wks_uri wks_uri;

/*
 * Parse the NUL-terminated `uri` (case-insensitive "wks:") into *out, a
 * new URI to free with wks_uri_free().  WKS_ERR_FORMAT for a malformed
 * URI (the detail names the attribute and the problem, never a value
 * that may be a password), WKS_ERR_LIMIT for one longer than
 * WKS_URI_MAX, WKS_ERR_INVALID for NULL, WKS_ERR_NOMEM.
 */
WKS_API int wks_uri_parse(wks_uri **out, const char *uri);

/* The decoded store path: never empty (borrowed, as the others). */
WKS_API const char *wks_uri_path(const wks_uri *u);

/* The decoded alias= (may be ""), or NULL if the URI has none. */
WKS_API const char *wks_uri_alias(const wks_uri *u);

/*
 * 1 if alias= came after a storepass= or keypass= attribute, else 0.
 * Then a message must not repeat the alias: an unencoded '&' inside a
 * pass: password ("storepass=pass:a&alias=b...") makes the password's
 * tail look like further attributes.
 */
WKS_API int wks_uri_alias_after_password(const wks_uri *u);

/* The storepass= / keypass= source, or NULL if the URI has none. */
WKS_API const wks_pwsrc *wks_uri_storepass(const wks_uri *u);
WKS_API const wks_pwsrc *wks_uri_keypass(const wks_uri *u);

/* only=, WKS_URI_ALL if absent. */
WKS_API wks_uri_select wks_uri_only(const wks_uri *u);

/* Free a URI (every decoded string wiped: they may hold a password).
 * NULL is ignored. */
WKS_API void wks_uri_free(wks_uri *u);

/* ------------------------------------------------------------------------
 * Key references
 *
 * A key reference file is a note for people, then one block:
 *
 *   # wks key reference: the private key "server" of the store
 *   # /etc/wks/server.wks.  It holds no password (...)
 *   -----BEGIN WKS KEY REFERENCE-----
 *   base64 of wks:/etc/wks/server.wks?alias=server&storepass=file:/e...
 *   -----END WKS KEY REFERENCE-----
 *
 * The URI must have alias=; storepass= and keypass= may only be file:,
 * env: or fd: (never pass:: a reference is not secret); only= is
 * refused.  The base64 is canonical (whole quanta, zero unused bits),
 * lines end in "\n" or "\r\n" and may carry trailing blanks.  Text before
 * the BEGIN line is ignored, as PEM readers do; text after the END line is
 * allowed (other PEM blocks) but not a second reference block: a reader
 * takes the first block, so a second one means that something forged one
 * of the two.
 */

#define WKS_REF_LABEL "WKS KEY REFERENCE"
#define WKS_REF_BEGIN "-----BEGIN " WKS_REF_LABEL "-----"
#define WKS_REF_END "-----END " WKS_REF_LABEL "-----"
/* Longest URI a reference holds; longest block (BEGIN line to END line,
 * line ends included); most text before the BEGIN line and most text
 * after the END line, each. */
#define WKS_REF_URI_MAX 4096
#define WKS_REF_BLOCK_MAX 8192
#define WKS_REF_TEXT_MAX 65536

/*
 * Whether line[0..n) (without or with its "\n" or "\r\n", trailing blanks
 * allowed) is a reference's BEGIN line: 1 or 0.  A fixed-length compare,
 * cheap enough for a PEM decoder to ask of every BEGIN line it meets.
 */
WKS_API int wks_ref_is_begin(const char *line, size_t n);

/*
 * Parse a key reference file, text[0..len) (the whole file, or from its
 * BEGIN line to its end): the first line that is a BEGIN line starts the
 * block, which must lie within the limits above, and a second BEGIN line
 * after it is refused.  *out is the reference's URI (wks_uri_path(),
 * wks_uri_alias() never NULL; free with wks_uri_free()).
 *
 * Errors (the detail starts "key reference: " and never holds a
 * password: a refused pass: source is not repeated): WKS_ERR_FORMAT for
 * no block, an unterminated block, bad base64, a URI that is not
 * printable ASCII or does not parse, pass:, only=, no alias=, or two
 * blocks; WKS_ERR_LIMIT for text beyond the limits; WKS_ERR_INVALID for
 * NULL; WKS_ERR_NOMEM.
 */
WKS_API int wks_ref_parse(wks_uri **out, const char *text, size_t len);

/*
 * Write the key reference file for the private key `alias` of the store
 * at `path` (the server reads the store there: give it absolute), with
 * the password sources the server is to use (NULL or WKS_PW_NONE: none;
 * the server's passphrase callback then gives the password; pass: is
 * refused).  *out is the whole file, *out_len bytes plus a NUL (free with
 * wks_free()): the note naming the alias and the store, then the block.
 * The note is written with every byte that could end or disguise a line
 * escaped (control characters, DEL, the C1 controls, U+2028 and U+2029,
 * invalid UTF-8, as \xHH; '\\' and '"' as \\ and \"), so that no path
 * or alias, whatever its bytes, adds a line to the file.  The URI
 * percent-encodes path, alias and sources (only A-Z a-z 0-9 - . _ ~ /
 * stay as they are); what is written reads back through wks_ref_parse()
 * to the same path, alias and sources.
 *
 * Errors: WKS_ERR_INVALID (an empty path, a NULL alias, pass:),
 * WKS_ERR_LIMIT (a URI longer than WKS_REF_URI_MAX), WKS_ERR_NOMEM.
 */
WKS_API int wks_ref_encode(char **out, size_t *out_len, const char *path,
			   const char *alias, const wks_pwsrc *storepass,
			   const wks_pwsrc *keypass);

#ifdef __cplusplus
}
#endif

#endif
