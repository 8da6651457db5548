/* The report of a conversion (include/wks/convert.h), and what the
 * conversions share: limits from the properties, the password callback. */
#include "convert/convert_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/wipe.h"

wks_convert_report *wks__report_new(void)
{
	return calloc(1, sizeof(wks_convert_report));
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s ? s : "");
	char *d = malloc(n + 1);

	if (d)
		memcpy(d, s ? s : "", n + 1);
	return d;
}

int wks__report_skip(wks_convert_report *r, const char *alias, int reason,
		     const char *detail)
{
	char *a, *d;

	if (!r)
		return 0;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;
		void *v = cap > SIZE_MAX / sizeof(*r->v) ? NULL :
			  realloc(r->v, cap * sizeof(*r->v));

		if (!v)
			return WKS_ERR_NOMEM;
		r->v = v;
		r->cap = cap;
	}
	a = dup_str(alias);
	d = dup_str(detail);
	if (!a || !d) {
		free(a);
		free(d);
		return WKS_ERR_NOMEM;
	}
	r->v[r->n].alias = a;
	r->v[r->n].reason = reason;
	r->v[r->n].detail = d;
	r->n++;
	return 0;
}

size_t wks_convert_report_done(const wks_convert_report *r)
{
	return r ? r->done : 0;
}

size_t wks_convert_report_skipped(const wks_convert_report *r)
{
	return r ? r->n : 0;
}

const char *wks_convert_report_alias(const wks_convert_report *r, size_t i)
{
	return r && i < r->n ? r->v[i].alias : NULL;
}

int wks_convert_report_reason(const wks_convert_report *r, size_t i)
{
	return r && i < r->n ? r->v[i].reason : 0;
}

const char *wks_convert_report_detail(const wks_convert_report *r, size_t i)
{
	return r && i < r->n ? r->v[i].detail : NULL;
}

void wks_convert_report_free(wks_convert_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].alias);
		free(r->v[i].detail);
	}
	free(r->v);
	free(r);
}

void wks__convert_limits(jks_limits *lim)
{
	char v[32];

	memset(lim, 0, sizeof(*lim));
	lim->max_chain = 100;
	lim->max_blob = 10485760;
	lim->max_iterations = 5000000;
	lim->max_kdf_iterations = 100000000;
	if (wks_get_property(v, sizeof(v), NULL,
			     "wolfjce.wks.maxCertChainLength") == WKS_OK)
		lim->max_chain = (size_t)strtoul(v, NULL, 10);
	if (wks_get_property(v, sizeof(v), NULL, "wolfjce.wks.maxEntrySize") ==
	    WKS_OK)
		lim->max_blob = (size_t)strtoul(v, NULL, 10);
	if (wks_get_property(v, sizeof(v), NULL,
			     "libwks.wks.maxIterationCount") == WKS_OK)
		lim->max_iterations = (uint32_t)strtoul(v, NULL, 10);
	if (wks_get_property(v, sizeof(v), NULL,
			     "libwks.convert.maxKdfIterations") == WKS_OK)
		lim->max_kdf_iterations = (uint64_t)strtoull(v, NULL, 10);
}

int wks__ask_pw(wks_password_cb cb, void *arg, const char *alias,
		unsigned attempt, char *buf, size_t *len)
{
	size_t n = 0;

	if (!cb || attempt > WKS__CB_MAX_TRIES)
		return 0;
	if (cb(arg, alias, attempt, buf, WKS__CB_PW_MAX, &n) != 0 ||
	    n > WKS__CB_PW_MAX) {
		wks_wipe(buf, WKS__CB_PW_MAX);
		return 0;
	}
	*len = n;
	return 1;
}
