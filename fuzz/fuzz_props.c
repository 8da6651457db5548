/*
 * fuzz_props: java.security-style properties text (wks__props_parse, the
 * parser behind $WKS_PROPERTIES and wks_load_properties_file()), then
 * every pair set on a store's properties and the settings resolved.
 *
 * Oracles:
 *  - the parser returns WKS_OK or WKS_ERR_FORMAT;
 *  - every name and value it hands out is a NUL-terminated string no
 *    longer than twice the input (its documented bound);
 *  - setting any parsed pair succeeds or fails cleanly, and the resolved
 *    settings always stay in their documented ranges.
 */
#include "fuzz_common.h"

#include "config/config.h"

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

int FUZZ_INIT(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

typedef struct {
	size_t in_len;
	size_t pairs;
	wks_props *props;
} props_ctx;

static int props_cb(const char *name, const char *value, void *ctx)
{
	props_ctx *c = ctx;
	size_t nl = strlen(name), vl = strlen(value);
	char why[256];
	int id, rc;

	FUZZ_CHECK(nl <= 2 * c->in_len && vl <= 2 * c->in_len,
	           "pair longer than twice the input");
	c->pairs++;
	FUZZ_CHECK(c->pairs <= c->in_len + 1, "more pairs than bytes");
	id = wks__prop_find(name);
	if (id >= 0) {
		char text[64];

		(void)wks__prop_eval(id, value, why, sizeof(why));
		wks__prop_format(text, sizeof(text), id,
		                 wks__prop_eval(id, value, why, sizeof(why)));
	}
	rc = wks__props_set(c->props, name, value);
	FUZZ_CHECK(rc == WKS_OK || rc == WKS_ERR_INVALID || rc == WKS_ERR_NOMEM,
	           "props_set: %d", rc);
	return WKS_OK;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	props_ctx c;
	wks_settings s;
	int rc;

	memset(&c, 0, sizeof(c));
	c.in_len = size;
	FUZZ_CHECK(wks__props_new(&c.props) == WKS_OK, "props_new");
	rc = wks__props_parse((const char *)data, size, props_cb, &c);
	FUZZ_CHECK(rc == WKS_OK || rc == WKS_ERR_FORMAT, "parse: %d", rc);
	wks__settings_get(&s, c.props);
	FUZZ_CHECK(s.iteration_count >= WKS_MIN_ITERATIONS, "iterations");
	FUZZ_CHECK(s.max_chain >= 1 && s.max_entry_size >= 1, "limits");
	FUZZ_CHECK(s.max_iterations >= WKS_MIN_ITERATIONS, "max iterations");
	FUZZ_CHECK(s.max_file_size >= 1, "max file size");
	FUZZ_CHECK(s.cache_ttl_ms > 0 && s.cache_max_entries >= 1, "cache");
	FUZZ_CHECK(s.kdf_threads >= 0 && s.kdf_threads <= WKS_MAX_KDF_THREADS,
	           "threads");
	FUZZ_CHECK(s.kdf_impl == WKS_KDF_NATIVE || s.kdf_impl == WKS_KDF_OPENSSL,
	           "kdf impl");
	wks__props_free(c.props);
	return 0;
}
