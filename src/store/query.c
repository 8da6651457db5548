/* Queries, certificates and delete (spec 7.4). */
#include <stdlib.h>
#include <string.h>

#include "crypto/pki.h"
#include "store/store_int.h"
#include "util/error.h"

size_t wks_store_size(wks_store *st)
{
	size_t n;
	unsigned rs;

	if (!st)
		return 0;
	rs = wks__rdlock(st);
	n = st->n;
	wks__rdunlock(st, rs);
	return n;
}

wks_entry_type wks_store_entry_type(wks_store *st, const char *alias)
{
	wks_entry *e = NULL;
	wks_entry_type t;

	if (wks__store_get_entry(&e, st, alias) < 0)
		return WKS_ENTRY_NONE;
	t = e->type;
	wks__entry_unref(e);
	return t;
}

int wks_store_contains(wks_store *st, const char *alias)
{
	return wks_store_entry_type(st, alias) != WKS_ENTRY_NONE;
}

void wks_aliases_free(char **aliases)
{
	size_t i;

	if (!aliases)
		return;
	for (i = 0; aliases[i]; i++)
		free(aliases[i]);
	free(aliases);
}

int wks_store_aliases(char ***out, size_t *count, wks_store *st)
{
	char **v;
	size_t i;
	unsigned rs;
	int err = WKS_OK;

	wks__err_clear();
	if (count)
		*count = 0;
	if (out)
		*out = NULL;
	if (!out || !st)
		return wks__err(WKS_ERR_INVALID, "store or out is NULL");
	rs = wks__rdlock(st);
	if (!(v = calloc(st->n + 1, sizeof(*v)))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
	} else {
		for (i = 0; i < st->n; i++)
			if (!(v[i] = strdup(st->v[i]->alias))) {
				err = wks__err(WKS_ERR_NOMEM, "out of memory");
				break;
			}
	}
	if (err == WKS_OK && count)
		*count = st->n;
	wks__rdunlock(st, rs);
	if (err < 0)
		wks_aliases_free(v);
	else
		*out = v;
	return err;
}

int wks_store_creation_time(int64_t *out_ms, wks_store *st, const char *alias)
{
	wks_entry *e = NULL;
	int err;

	wks__err_clear();
	if (!out_ms)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out_ms = 0;
	if ((err = wks__store_get_entry(&e, st, alias)) < 0)
		return err;
	*out_ms = e->created_ms;
	wks__entry_unref(e);
	return WKS_OK;
}

/* The entry and a check that it can hold certificates. */
static int cert_entry(wks_entry **out, wks_store *st, const char *alias)
{
	int err = wks__store_get_entry(out, st, alias);

	if (err == WKS_OK && (*out)->type == WKS_ENTRY_SECRET_KEY) {
		wks__entry_unref(*out);
		*out = NULL;
		err = wks__err(WKS_ERR_WRONG_TYPE,
		               "a secret key entry has no certificates");
	}
	return err;
}

int wks_store_cert_count(size_t *out, wks_store *st, const char *alias)
{
	wks_entry *e = NULL;
	int err;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out = 0;
	if ((err = cert_entry(&e, st, alias)) < 0)
		return err;
	*out = e->cert_count;
	wks__entry_unref(e);
	return WKS_OK;
}

int wks_store_get_cert_der(uint8_t **out, size_t *out_len, wks_store *st,
                           const char *alias, size_t index)
{
	wks_entry *e = NULL;
	const uint8_t *der;
	size_t len;
	int err;

	wks__err_clear();
	if (!out || !out_len)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out = NULL;
	*out_len = 0;
	if ((err = cert_entry(&e, st, alias)) < 0)
		return err;
	if (index >= e->cert_count) {
		err = wks__err(WKS_ERR_NOTFOUND, "the entry has %zu certificates, "
		               "no index %zu", e->cert_count, index);
	} else {
		der = wks__entry_cert(e, index, &len);
		if ((*out = wks__out_dup(der, len)) != NULL)
			*out_len = len;
		else
			err = wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	wks__entry_unref(e);
	return err;
}

#ifdef WKS_CRYPTO_OPENSSL
int wks_store_get_cert(X509 **out, wks_store *st, const char *alias,
                       size_t index)
{
	uint8_t *der = NULL;
	size_t len = 0;
	int err;

	if (!out)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out = NULL;
	if ((err = wks_store_get_cert_der(&der, &len, st, alias, index)) == WKS_OK)
		err = wks__x509_parse_cc(st->crypto, out, der, len);
	wks_free(der);
	return err;
}
#endif

int wks_store_secret_algorithm(char **out, wks_store *st, const char *alias)
{
	wks_entry *e = NULL;
	int err;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out = NULL;
	if ((err = wks__store_get_entry(&e, st, alias)) < 0)
		return err;
	if (e->type != WKS_ENTRY_SECRET_KEY)
		err = wks__err(WKS_ERR_WRONG_TYPE, "entry is not a secret key");
	else if (!(*out = wks__out_dup(e->algorithm, strlen(e->algorithm))))
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
	wks__entry_unref(e);
	return err;
}

int wks_store_find_cert_alias(char **out, wks_store *st, const uint8_t *der,
                              size_t der_len)
{
	size_t i, len;
	unsigned rs;
	int err = WKS_OK;

	wks__err_clear();
	if (out)
		*out = NULL;
	if (!out || !st || !der)
		return wks__err(WKS_ERR_INVALID, "store, certificate or out is NULL");
	rs = wks__rdlock(st);
	for (i = 0; i < st->n; i++) {
		const wks_entry *e = st->v[i];
		const uint8_t *c;

		if (e->type == WKS_ENTRY_SECRET_KEY || e->cert_count == 0)
			continue;
		c = wks__entry_cert(e, 0, &len);
		if (len == der_len && memcmp(c, der, len) == 0) {
			if (!(*out = wks__out_dup(e->alias, e->alias_len)))
				err = wks__err(WKS_ERR_NOMEM, "out of memory");
			break;
		}
	}
	wks__rdunlock(st, rs);
	if (err == WKS_OK && !*out)
		err = wks__err(WKS_ERR_NOTFOUND, "no entry has that certificate");
	return err;
}

int wks_store_delete(wks_store *st, const char *alias)
{
	wks_buf key = WKS_BUF_INIT;
	wks_entry *e = NULL;
	size_t i;
	int err;

	wks__err_clear();
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	if ((err = wks__alias_key(&key, alias)) < 0)
		return err;
	wks__wrlock(st);
	if (wks__map_find(st, (const char *)key.ptr, key.len, &i))
		e = wks__map_take(st, i);
	wks__wrunlock(st);
	wks_buf_dispose(&key);
	if (!e)
		return wks__err(WKS_ERR_NOTFOUND, "no entry with that alias");
	if (e->type != WKS_ENTRY_CERTIFICATE)
		wks__cache_drop_entry(st->cache, e->id);
	wks__entry_unref(e);
	return WKS_OK;
}

int wks_store_rename(wks_store *st, const char *from, const char *to)
{
	wks_buf to_key = WKS_BUF_INIT;
	wks_entry *e = NULL, *ne = NULL, *old = NULL;
	wks_settings cfg;
	size_t i;
	int err;

	wks__err_clear();
	if ((err = wks__store_get_entry(&e, st, from)) < 0)
		return err;
	if ((err = wks__alias_key_new(&to_key, to)) < 0)
		goto done;
	if (to_key.len == e->alias_len &&
	    memcmp(to_key.ptr, e->alias, e->alias_len) == 0)
		goto done; /* same alias */
	wks__store_settings(&cfg, st);
	/* The body is reused as it is: the entry MAC does not cover the
	 * alias, so the key stays valid under its new name. */
	if ((err = wks__entry_from_body(&ne, (int)e->type, (const char *)to_key.ptr,
	                                to_key.len, e->body, e->body_len, &cfg,
	                                "renamed entry")) < 0)
		goto done;
	wks__wrlock(st);
	if (wks__map_find(st, ne->alias, ne->alias_len, &i)) {
		err = wks__err(WKS_ERR_EXISTS, "an entry with the new alias exists");
	} else if (!wks__map_find(st, e->alias, e->alias_len, &i) ||
	           st->v[i] != e) {
		err = wks__err(WKS_ERR_INVALID, "the entry was changed by another "
		               "thread meanwhile");
	} else {
		wks_entry *none = NULL;

		old = wks__map_take(st, i);
		/* Cannot fail: one slot was just freed, nothing grows. */
		err = wks__map_put(st, ne, &none);
		ne = NULL;
	}
	wks__wrunlock(st);
	if (old) {
		if (old->type != WKS_ENTRY_CERTIFICATE)
			wks__cache_drop_entry(st->cache, old->id);
		wks__entry_unref(old);
	}
done:
	wks__entry_unref(ne);
	wks__entry_unref(e);
	wks_buf_dispose(&to_key);
	return err;
}
