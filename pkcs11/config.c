/*
 * The configuration parser (config.h).  Line by line over a bounded
 * buffer; every error names its line and never repeats a value (a value
 * may be anything the file holds).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

#define PATH_MAX_LEN 4096
#define PROP_NAME_MAX 256

typedef struct {
	char *err;
	size_t err_len;
	unsigned line;
} parse_ctx;

static int fail(parse_ctx *pc, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

static int fail(parse_ctx *pc, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (pc->line)
		n = snprintf(pc->err, pc->err_len, "line %u: ", pc->line);
	if (n < 0 || (size_t)n >= pc->err_len)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(pc->err + n, pc->err_len - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Text of the file quoted in a message: at most `max` bytes, control
 * characters shown as '?' (a message may reach a terminal). */
static const char *shown(char *dst, size_t size, const char *src, size_t max)
{
	size_t i = 0;

	for (; src[i] && i < max && i + 1 < size; i++)
		dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?'
									: src[i];
	dst[i] = '\0';
	return dst;
}

static void token_clear(w11_conf_token *t)
{
	free(t->label);
	free(t->store);
	for (size_t i = 0; i < t->nprops; i++) {
		free(t->prop_name[i]);
		free(t->prop_value[i]);
	}
	free(t->prop_name);
	free(t->prop_value);
	memset(t, 0, sizeof(*t));
}

void w11_conf_free(w11_conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ntokens; i++)
		token_clear(&c->tokens[i]);
	free(c->tokens);
	free(c);
}

static char *dup_n(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing above
 * U+10FFFF, and no control character (C0, DEL). */
static int utf8_text_ok(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i], need, min;
		uint32_t cp;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return 0;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			cp = c & 0x1f;
			min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			cp = c & 0x0f;
			min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			cp = c & 0x07;
			min = 0x10000;
		} else {
			return 0;
		}
		if (n - i - 1 < need)
			return 0;
		for (unsigned k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

static int parse_bool(const char *v, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

/* Seconds: decimal digits only, 1 .. W11_CONF_TTL_MAX (the one bound of
 * a token's TTL, config.h). */
static int parse_ttl(const char *v, long *out)
{
	long n = 0;

	if (!*v)
		return -1;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -1;
		n = n * 10 + (*v - '0');
		if (n > W11_CONF_TTL_MAX)
			return -1;
	}
	if (n < 1)
		return -1;
	*out = n;
	return 0;
}

#define TTL_PROP "wolfjce.keystore.kekCacheTtlSec"

/* The property as libwks reads it (docs/PROPERTIES.md: Long.parseLong,
 * an optional sign then digits): 1 if it is a positive number, with *big
 * set when it exceeds W11_CONF_TTL_MAX (libwks would take it; the
 * keyring cannot), else 0 (libwks falls back to its default, 300 s). */
static int ttl_prop(const char *v, long *out, int *big)
{
	long n = 0;

	*big = 0;
	if (*v == '+')
		v++;
	if (!*v)
		return 0;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return 0;
		if (!*big && (n = n * 10 + (*v - '0')) > W11_CONF_TTL_MAX)
			*big = 1;
	}
	if (!*big && n < 1)
		return 0;
	*out = n;
	return 1;
}

static int is_prop_name(const char *k)
{
	size_t n = strlen(k);

	if (strncmp(k, "wolfjce.", 8) != 0 && strncmp(k, "libwks.", 7) != 0)
		return 0;
	for (const char *p = k; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
		      *p == '-'))
			return 0;
	return n < PROP_NAME_MAX;
}

static int set_once(parse_ctx *pc, char **slot, const char *key,
		    const char *v, size_t n)
{
	if (*slot)
		return fail(pc, "\"%s\" given twice in this [token] section",
			    key);
	if (!(*slot = dup_n(v, n)))
		return fail(pc, "out of memory");
	return 0;
}

static int add_prop(parse_ctx *pc, w11_conf_token *t, const char *k,
		    const char *v)
{
	char **nn, **nv;

	for (size_t i = 0; i < t->nprops; i++)
		if (strcmp(t->prop_name[i], k) == 0)
			return fail(pc, "property \"%s\" given twice in this "
				    "[token] section", k);
	if (t->nprops >= W11_CONF_MAX_PROPS)
		return fail(pc, "more than %d properties in one [token] "
			    "section", W11_CONF_MAX_PROPS);
	nn = realloc(t->prop_name, (t->nprops + 1) * sizeof(*nn));
	if (!nn)
		return fail(pc, "out of memory");
	t->prop_name = nn;
	nv = realloc(t->prop_value, (t->nprops + 1) * sizeof(*nv));
	if (!nv)
		return fail(pc, "out of memory");
	t->prop_value = nv;
	nn[t->nprops] = dup_n(k, strlen(k));
	nv[t->nprops] = dup_n(v, strlen(v));
	if (!nn[t->nprops] || !nv[t->nprops]) {
		free(nn[t->nprops]);
		free(nv[t->nprops]);
		return fail(pc, "out of memory");
	}
	t->nprops++;
	return 0;
}

static int set_store(parse_ctx *pc, w11_conf_token *t, const char *v,
		     const char *base_dir)
{
	size_t n = strlen(v), bn;
	char *p;

	if (t->store)
		return fail(pc, "\"store\" given twice in this [token] "
			    "section");
	if (!utf8_text_ok((const unsigned char *)v, n))
		return fail(pc, "store: not a path (control characters or "
			    "invalid UTF-8)");
	if (v[0] == '/') {
		if (n > PATH_MAX_LEN)
			return fail(pc, "store: path longer than %d bytes",
				    PATH_MAX_LEN);
		p = dup_n(v, n);
	} else {
		if (!base_dir)
			return fail(pc, "store: a relative path needs the "
				    "configuration file's folder");
		bn = strlen(base_dir);
		if (bn + 1 + n > PATH_MAX_LEN)
			return fail(pc, "store: path longer than %d bytes",
				    PATH_MAX_LEN);
		p = malloc(bn + n + 2);
		if (p) {
			memcpy(p, base_dir, bn);
			p[bn] = '/';
			memcpy(p + bn + 1, v, n + 1);
		}
	}
	if (!p)
		return fail(pc, "out of memory");
	t->store = p;
	return 0;
}

static int set_key(parse_ctx *pc, w11_conf_token *t, const char *k,
		   const char *v, const char *base_dir)
{
	size_t n = strlen(v);
	char q[72];

	if (strcmp(k, "label") == 0) {
		if (n == 0 || n > W11_LABEL_MAX)
			return fail(pc, "label: %zu bytes (1 to %d bytes of "
				    "UTF-8)", n, W11_LABEL_MAX);
		if (!utf8_text_ok((const unsigned char *)v, n))
			return fail(pc, "label: invalid UTF-8 or a control "
				    "character");
		return set_once(pc, &t->label, k, v, n);
	}
	if (strcmp(k, "store") == 0) {
		if (n == 0)
			return fail(pc, "store: empty path");
		return set_store(pc, t, v, base_dir);
	}
	if (strcmp(k, "read-only") == 0) {
		if (t->read_only >= 0 && t->read_only != 2)
			return fail(pc, "\"read-only\" given twice in this "
				    "[token] section");
		if (parse_bool(v, &t->read_only) != 0)
			return fail(pc, "read-only: expected yes or no");
		return 0;
	}
	if (strcmp(k, "shared-login") == 0) {
		if (t->shared_login != 2)
			return fail(pc, "\"shared-login\" given twice in this "
				    "[token] section");
		if (parse_bool(v, &t->shared_login) != 0)
			return fail(pc, "shared-login: expected yes or no");
		return 0;
	}
	if (strcmp(k, "certificates") == 0) {
		if (t->leaf_certs != 2)
			return fail(pc, "\"certificates\" given twice in this "
				    "[token] section");
		if (strcmp(v, "all") == 0)
			t->leaf_certs = 0;
		else if (strcmp(v, "leaf") == 0)
			t->leaf_certs = 1;
		else
			return fail(pc, "certificates: expected all or leaf");
		return 0;
	}
	if (strcmp(k, "kek-cache-ttl") == 0) {
		if (t->kek_ttl != -1)
			return fail(pc, "\"kek-cache-ttl\" given twice in this "
				    "[token] section");
		if (parse_ttl(v, &t->kek_ttl) != 0)
			return fail(pc, "kek-cache-ttl: expected seconds, 1 to "
				    "%ld", W11_CONF_TTL_MAX);
		return 0;
	}
	if (is_prop_name(k)) {
		long ttl;
		int big;

		if (!utf8_text_ok((const unsigned char *)v, n))
			return fail(pc, "%s: invalid UTF-8 or a control "
				    "character in the value", k);
		if (strcmp(k, TTL_PROP) == 0 && ttl_prop(v, &ttl, &big) &&
		    big)
			return fail(pc, "%s: more than %ld seconds (the "
				    "token's KEK-cache TTL is 1 to %ld "
				    "seconds)", k, W11_CONF_TTL_MAX,
				    W11_CONF_TTL_MAX);
		return add_prop(pc, t, k, v);
	}
	return fail(pc, "unknown key \"%s\" (label, store, read-only, "
		    "kek-cache-ttl, shared-login, certificates, or a wolfjce.* / "
		    "libwks.* property)",
		    shown(q, sizeof(q), k, 64));
}

static int end_section(parse_ctx *pc, w11_conf *c)
{
	w11_conf_token *t;

	if (c->ntokens == 0)
		return 0;
	t = &c->tokens[c->ntokens - 1];
	if (t->read_only == 2)
		t->read_only = 0;
	if (t->shared_login == 2)
		t->shared_login = 0;
	t->ttl = t->kek_ttl > 0 ? t->kek_ttl : 300;
	for (size_t i = 0; t->kek_ttl <= 0 && i < t->nprops; i++) {
		long v;
		int big;

		if (strcmp(t->prop_name[i], TTL_PROP) == 0 &&
		    ttl_prop(t->prop_value[i], &v, &big) && !big)
			t->ttl = v;
	}
	if (t->leaf_certs == 2)
		t->leaf_certs = 0;
	if (!t->label || !t->store) {
		/* the message names the section's line */
		pc->line = t->line;
		if (!t->label)
			return fail(pc, "[token] without a label");
		return fail(pc, "[token] \"%s\" without a store", t->label);
	}
	return 0;
}

static char *trim(char *s, char **end)
{
	char *e = *end;

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*e = '\0';
	*end = e;
	return s;
}

static int parse_line(parse_ctx *pc, w11_conf *c, char *s, char *e,
		      const char *base_dir)
{
	char *eq, *k, *v, *kend, q[72];
	w11_conf_token *nt;

	s = trim(s, &e);
	if (s == e || *s == '#' || *s == ';')
		return 0;
	if (*s == '[') {
		char *name, *ne;

		if (e[-1] != ']')
			return fail(pc, "a section header must end with ']'");
		ne = e - 1;
		name = trim(s + 1, &ne);
		if (strcmp(name, "token") != 0)
			return fail(pc, "unknown section [%s] (only [token])",
				    shown(q, sizeof(q), name, 32));
		if (end_section(pc, c) != 0)
			return -1;
		if (c->ntokens >= W11_CONF_MAX_TOKENS)
			return fail(pc, "more than %d tokens",
				    W11_CONF_MAX_TOKENS);
		nt = realloc(c->tokens, (c->ntokens + 1) * sizeof(*nt));
		if (!nt)
			return fail(pc, "out of memory");
		c->tokens = nt;
		memset(&nt[c->ntokens], 0, sizeof(*nt));
		nt[c->ntokens].kek_ttl = -1;
		nt[c->ntokens].read_only = 2; /* not given yet */
		nt[c->ntokens].shared_login = 2;
		nt[c->ntokens].leaf_certs = 2;
		nt[c->ntokens].line = pc->line;
		c->ntokens++;
		return 0;
	}
	if (!(eq = memchr(s, '=', (size_t)(e - s))))
		return fail(pc, "expected \"key = value\"");
	kend = eq;
	k = trim(s, &kend);
	v = trim(eq + 1, &e);
	if (!*k)
		return fail(pc, "a key is missing before '='");
	if (c->ntokens == 0)
		return fail(pc, "\"%s\" outside a [token] section",
			    shown(q, sizeof(q), k, 64));
	return set_key(pc, &c->tokens[c->ntokens - 1], k, v, base_dir);
}

static int check_unique(parse_ctx *pc, const w11_conf *c)
{
	for (size_t i = 0; i < c->ntokens; i++)
		for (size_t j = 0; j < i; j++) {
			pc->line = c->tokens[i].line;
			if (strcmp(c->tokens[i].label, c->tokens[j].label) == 0)
				return fail(pc, "label \"%s\" is already the "
					    "label of the token at line %u",
					    c->tokens[i].label,
					    c->tokens[j].line);
			if (strcmp(c->tokens[i].store, c->tokens[j].store) == 0)
				return fail(pc, "this store is already the "
					    "token's at line %u",
					    c->tokens[j].line);
		}
	return 0;
}

int w11_conf_parse(w11_conf **out, const char *text, size_t len,
		   const char *base_dir, char *err, size_t err_len)
{
	parse_ctx pc = { err, err_len, 0 };
	w11_conf *c = NULL;
	char *line = NULL;
	size_t pos = 0;
	int rc = -1;

	*out = NULL;
	if (err_len)
		err[0] = '\0';
	if (len > W11_CONF_MAX_BYTES) {
		fail(&pc, "larger than %d bytes", W11_CONF_MAX_BYTES);
		goto done;
	}
	if (!(c = calloc(1, sizeof(*c))) ||
	    !(line = malloc(W11_CONF_MAX_LINE + 1))) {
		fail(&pc, "out of memory");
		goto done;
	}
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		pc.line++;
		if (n && text[pos + n - 1] == '\r')
			n--;
		if (n > W11_CONF_MAX_LINE) {
			fail(&pc, "longer than %d bytes", W11_CONF_MAX_LINE);
			goto done;
		}
		if (memchr(text + pos, '\0', n)) {
			fail(&pc, "a NUL byte");
			goto done;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		if (parse_line(&pc, c, line, line + n, base_dir) != 0)
			goto done;
		pos += (nl ? (size_t)(nl - (text + pos)) + 1 : len - pos);
	}
	if (end_section(&pc, c) != 0 || check_unique(&pc, c) != 0)
		goto done;
	*out = c;
	c = NULL;
	rc = 0;
done:
	free(line);
	w11_conf_free(c);
	if (rc != 0 && err_len && !err[0])
		snprintf(err, err_len, "invalid configuration");
	return rc;
}

int w11_conf_load(w11_conf **out, const char *path, char *err,
		  size_t err_len)
{
	char *buf = NULL, *dir = NULL, *abs = NULL, *slash, msg[512];
	struct stat sb;
	size_t got = 0;
	int fd = -1, rc = -1;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &sb) != 0) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		goto done;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, err_len, "%s: not a regular file", path);
		goto done;
	}
	if (sb.st_size > W11_CONF_MAX_BYTES) {
		snprintf(err, err_len, "%s: larger than %d bytes", path,
			 W11_CONF_MAX_BYTES);
		goto done;
	}
	if (!(buf = malloc((size_t)sb.st_size + 1))) {
		snprintf(err, err_len, "%s: out of memory", path);
		goto done;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, err_len, "%s: %s", path,
				 r < 0 ? strerror(errno) : "changed while read");
			goto done;
		}
		got += (size_t)r;
	}
	if (!(dir = strdup(path))) {
		snprintf(err, err_len, "%s: out of memory", path);
		goto done;
	}
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	/* Relative stores are relative to the file's folder, made absolute
	 * now: the process may change its working folder later. */
	if (!(abs = realpath(dir, NULL))) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		goto done;
	}
	if (w11_conf_parse(out, buf, got, abs, msg, sizeof(msg)) != 0) {
		snprintf(err, err_len, "%s: %s", path, msg);
		goto done;
	}
	rc = 0;
done:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(dir);
	free(abs);
	return rc;
}
