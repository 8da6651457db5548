/*
 * The module's configuration file (docs/PKCS11.md, "Configuration"):
 * one [token] section per token, `key = value` lines.
 *
 *     # comment
 *     [token]
 *     label = web
 *     store = /etc/ssl/web.wks
 *     read-only = no
 *     kek-cache-ttl = 300
 *     shared-login = no
 *     certificates = all
 *     wolfjce.wks.iterationCount = 10000
 *
 * Pure C, no OpenSSL and no libwks: the fuzz target (fuzz/fuzz_pkcs11_conf.c)
 * runs it alone.  Bounded: the text at most W11_CONF_MAX_BYTES, a line at
 * most W11_CONF_MAX_LINE, at most W11_CONF_MAX_TOKENS sections and
 * W11_CONF_MAX_PROPS properties per section.
 */
#ifndef WKS_PKCS11_CONFIG_H
#define WKS_PKCS11_CONFIG_H

#include <stddef.h>

#define W11_CONF_MAX_BYTES (1024 * 1024)
#define W11_CONF_MAX_LINE 4096
#define W11_CONF_MAX_TOKENS 64
#define W11_CONF_MAX_PROPS 32
#define W11_LABEL_MAX 32 /* CK_TOKEN_INFO.label: 32 bytes of UTF-8 */
/* The longest KEK-cache TTL a token takes, in seconds: kek-cache-ttl and
 * the property wolfjce.keystore.kekCacheTtlSec alike.  The shared login's
 * keyring timeout is an unsigned 32-bit number where 0 means "never"
 * (keyctl(2)): a larger value would be cut to 32 bits, and 2^32 s would
 * make the record permanent. */
#define W11_CONF_TTL_MAX 2147483647L

typedef struct {
	char *label;       /* 1..32 bytes of UTF-8, no control character */
	char *store;       /* absolute path */
	int read_only;     /* 0 or 1 */
	long kek_ttl;      /* seconds, > 0; -1 when not given */
	long ttl;          /* the token's KEK-cache TTL, 1..W11_CONF_TTL_MAX:
	                    * kek-cache-ttl, else a positive
	                    * wolfjce.keystore.kekCacheTtlSec, else 300 */
	int shared_login;  /* 0 or 1: the login kept in the user's kernel
	                    * keyring for the user's other processes */
	int leaf_certs;    /* 0 or 1 (`certificates = leaf`): a key entry's
	                    * leaf is its only certificate object, and
	                    * trusted certificate entries are not shown */
	size_t nprops;
	char **prop_name;  /* wolfjce.* / libwks.* */
	char **prop_value;
	unsigned line;     /* line of the [token] header */
} w11_conf_token;

typedef struct {
	w11_conf_token *tokens;
	size_t ntokens;
} w11_conf;

/*
 * Parse `len` bytes of configuration text.  A relative `store` is taken
 * relative to `base_dir` (the configuration file's folder; NULL: the
 * path must be absolute).  Returns 0 with *out set (free with
 * w11_conf_free()), or -1 with *out NULL and a message naming the line
 * in err (always NUL-terminated, never empty).
 */
int w11_conf_parse(w11_conf **out, const char *text, size_t len,
		   const char *base_dir, char *err, size_t err_len);

/* Read and parse a file (at most W11_CONF_MAX_BYTES).  Errors as above,
 * the message starting with the path. */
int w11_conf_load(w11_conf **out, const char *path, char *err,
		  size_t err_len);

void w11_conf_free(w11_conf *c);

#endif
