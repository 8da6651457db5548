/*
 * fuzz_pkcs11_conf: the PKCS#11 module's configuration parser
 * (pkcs11/config.c, docs/PKCS11.md "Configuration") on any bytes.
 *
 * Oracles:
 *  - w11_conf_parse() returns 0 or -1; on -1 the result is NULL and the
 *    message is a non-empty, NUL-terminated string of printable text;
 *  - on 0: at most W11_CONF_MAX_TOKENS tokens, each with a label of 1 to
 *    32 bytes and an absolute store path (relative ones are made absolute
 *    under the base folder), read-only and shared-login 0 or 1, a TTL
 *    of -1 or 1 .. 2^31-1 and an effective TTL (with the property
 *    wolfjce.keystore.kekCacheTtlSec) of 1 .. 2^31-1, at most
 *    W11_CONF_MAX_PROPS properties named wolfjce.* or
 *    libwks.*; no two tokens share a label or a store; nothing longer
 *    than the input (plus the base folder);
 *  - round trip: the parsed configuration written back as text parses
 *    to exactly the same configuration.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_plain.h"

#define BASE "/fuzz/base"

FUZZ_PLAIN_INIT()

static void check_conf(const w11_conf *c, size_t size)
{
	CHECK(c->ntokens <= W11_CONF_MAX_TOKENS, "token count");
	for (size_t i = 0; i < c->ntokens; i++) {
		const w11_conf_token *t = &c->tokens[i];
		size_t ln = strlen(t->label);

		CHECK(ln >= 1 && ln <= W11_LABEL_MAX, "label length");
		CHECK(t->store[0] == '/', "store path absolute");
		CHECK(strlen(t->store) <= size + sizeof(BASE), "store length");
		CHECK(t->read_only == 0 || t->read_only == 1, "read-only");
		CHECK(t->shared_login == 0 || t->shared_login == 1,
		      "shared-login");
		CHECK(t->leaf_certs == 0 || t->leaf_certs == 1,
		      "certificates");
		CHECK(t->kek_ttl == -1 ||
		      (t->kek_ttl >= 1 && t->kek_ttl <= W11_CONF_TTL_MAX), "ttl");
		/* the effective TTL is always bounded (the keyring's timeout
		 * is 32 bits, 0 = never) */
		CHECK(t->ttl >= 1 && t->ttl <= W11_CONF_TTL_MAX,
		      "effective ttl bounded");
		CHECK(t->nprops <= W11_CONF_MAX_PROPS, "property count");
		for (size_t j = 0; j < t->nprops; j++) {
			CHECK(strncmp(t->prop_name[j], "wolfjce.", 8) == 0 ||
			      strncmp(t->prop_name[j], "libwks.", 7) == 0,
			      "property name");
			CHECK(strlen(t->prop_value[j]) <= size,
			      "property value length");
		}
		for (size_t j = 0; j < i; j++) {
			CHECK(strcmp(t->label, c->tokens[j].label) != 0,
			      "labels unique");
			CHECK(strcmp(t->store, c->tokens[j].store) != 0,
			      "stores unique");
		}
	}
}

/* The configuration as text again. */
static char *write_back(const w11_conf *c, size_t *len)
{
	size_t cap = 64, n = 0;
	char *out;

	for (size_t i = 0; i < c->ntokens; i++) {
		const w11_conf_token *t = &c->tokens[i];

		cap += 128 + strlen(t->label) + strlen(t->store);
		for (size_t j = 0; j < t->nprops; j++)
			cap += 8 + strlen(t->prop_name[j]) +
			       strlen(t->prop_value[j]);
	}
	CHECK((out = malloc(cap)) != NULL, "malloc");
	for (size_t i = 0; i < c->ntokens; i++) {
		const w11_conf_token *t = &c->tokens[i];

		n += (size_t)snprintf(out + n, cap - n,
				      "[token]\nlabel = %s\nstore = %s\n"
				      "read-only = %s\nshared-login = %s\n"
				      "certificates = %s\n",
				      t->label, t->store,
				      t->read_only ? "yes" : "no",
				      t->shared_login ? "yes" : "no",
				      t->leaf_certs ? "leaf" : "all");
		if (t->kek_ttl != -1)
			n += (size_t)snprintf(out + n, cap - n,
					      "kek-cache-ttl = %ld\n",
					      t->kek_ttl);
		for (size_t j = 0; j < t->nprops; j++)
			n += (size_t)snprintf(out + n, cap - n, "%s = %s\n",
					      t->prop_name[j],
					      t->prop_value[j]);
	}
	*len = n;
	return out;
}

static void check_same(const w11_conf *a, const w11_conf *b)
{
	CHECK(a->ntokens == b->ntokens, "round trip: token count");
	for (size_t i = 0; i < a->ntokens; i++) {
		const w11_conf_token *x = &a->tokens[i], *y = &b->tokens[i];

		CHECK(strcmp(x->label, y->label) == 0, "round trip: label");
		CHECK(strcmp(x->store, y->store) == 0, "round trip: store");
		CHECK(x->read_only == y->read_only, "round trip: read-only");
		CHECK(x->shared_login == y->shared_login,
		      "round trip: shared-login");
		CHECK(x->leaf_certs == y->leaf_certs,
		      "round trip: certificates");
		CHECK(x->kek_ttl == y->kek_ttl, "round trip: ttl");
		CHECK(x->ttl == y->ttl, "round trip: effective ttl");
		CHECK(x->nprops == y->nprops, "round trip: properties");
		for (size_t j = 0; j < x->nprops; j++) {
			CHECK(strcmp(x->prop_name[j], y->prop_name[j]) == 0,
			      "round trip: property name");
			CHECK(strcmp(x->prop_value[j], y->prop_value[j]) == 0,
			      "round trip: property value");
		}
	}
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	w11_conf *c = NULL, *c2 = NULL;
	char err[512], *text;
	size_t len = 0;
	int rc;

	memset(err, 'x', sizeof(err));
	rc = w11_conf_parse(&c, (const char *)data, size, BASE, err,
			    sizeof(err));
	CHECK(rc == 0 || rc == -1, "return value");
	CHECK(memchr(err, '\0', sizeof(err)) != NULL, "message terminated");
	if (rc != 0) {
		CHECK(c == NULL, "no result on failure");
		CHECK(err[0] != '\0', "a message on failure");
		for (const char *p = err; *p; p++)
			CHECK((unsigned char)*p >= 0x20 && *p != 0x7f,
			      "printable message");
		return 0;
	}
	CHECK(c != NULL, "a result on success");
	check_conf(c, size);
	text = write_back(c, &len);
	rc = w11_conf_parse(&c2, text, len, BASE, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "re-parse: %s\n", err);
	CHECK(rc == 0, "round trip parses");
	check_same(c, c2);
	w11_conf_free(c2);
	w11_conf_free(c);
	free(text);
	return 0;
}
