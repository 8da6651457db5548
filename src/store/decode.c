/* Decoding with the store's rules (see decode.h). */
#include "store/decode.h"

#include <stdio.h>

#include "crypto/pki.h"
#include "util/error.h"

/* Certificates parse in the store's library context (cfg->crypto). */
static int check_cert(const void *arg, const uint8_t *der, size_t len)
{
	return wks__x509_check_cc(arg, der, len);
}

void wks__limits_of(wks_limits *out, const wks_settings *cfg)
{
	out->max_entry_size = cfg->max_entry_size;
	out->max_chain = cfg->max_chain;
	out->min_iterations = WKS_MIN_ITERATIONS;
	out->max_iterations = cfg->max_iterations;
	out->check_cert = check_cert;
	out->check_arg = cfg->crypto;
}

int wks__decode(wks_entry ***out, size_t *out_n, wks_record_pos **pos,
                wks_file_info *info, const uint8_t *data, size_t len,
                const wks_settings *cfg)
{
	wks_limits lim;

	wks__limits_of(&lim, cfg);
	return wks__format_decode(out, out_n, pos, info, data, len, &lim);
}

int wks__entry_from_body(wks_entry **out, int type_id, const char *alias,
                         size_t alias_len, const uint8_t *body, size_t body_len,
                         const wks_settings *cfg, const char *what)
{
	wks_limits lim;

	wks__limits_of(&lim, cfg);
	return wks__format_entry(out, type_id, alias, alias_len, body, body_len,
	                         &lim, what);
}

int wks__check_saveable(wks_entry *const *v, size_t n, const wks_settings *cfg)
{
	wks_limits lim;
	char what[96], why[512];
	size_t i;
	int err;

	if (cfg->iteration_count > cfg->max_iterations)
		return wks__err(WKS_ERR_LIMIT, "cannot save: wolfjce.wks."
		                "iterationCount %d exceeds libwks.wks."
		                "maxIterationCount %d, so the store could not be "
		                "loaded with these settings", cfg->iteration_count,
		                cfg->max_iterations);
	wks__limits_of(&lim, cfg);
	for (i = 0; i < n; i++) {
		wks__format_describe(what, sizeof(what), i, v[i]->alias);
		if ((err = wks__format_check_entry(v[i], &lim, what)) < 0) {
			snprintf(why, sizeof(why), "%s", wks_error_detail());
			return wks__err(err, "cannot save: %s, so the store could not "
			                "be loaded with these settings", why);
		}
	}
	return WKS_OK;
}
