/*
 * wks convert: a whole store from PKCS#12 or a Java keystore (JKS, JCEKS,
 * BKS, BCFKS) to WKS, or from WKS to PKCS#12.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/pkcs12.h>

#include "cli.h"
#include "wks/convert.h"

/* A store type named on the command line or by a file name's extension
 * (WKS_KEYSTORE_UNKNOWN if none). */
static wks_keystore_type type_named(const char *s)
{
	static const struct {
		const char *name;
		wks_keystore_type t;
	} names[] = {
		{ "wks", WKS_KEYSTORE_WKS }, { "pkcs12", WKS_KEYSTORE_PKCS12 },
		{ "p12", WKS_KEYSTORE_PKCS12 }, { "pfx", WKS_KEYSTORE_PKCS12 },
		{ "jks", WKS_KEYSTORE_JKS }, { "jceks", WKS_KEYSTORE_JCEKS }
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].t;
	return WKS_KEYSTORE_UNKNOWN;
}

static const char *type_word(wks_keystore_type t)
{
	return t == WKS_KEYSTORE_PKCS12 ? "PKCS#12" : wks_keystore_type_name(t);
}

/*
 * The output's format follows from the input (WKS becomes PKCS#12, the
 * others WKS); --deststoretype names it, and must name that one (no other
 * conversion is made); without it, an output name whose extension says
 * another format is refused (`convert --in a.wks -o b.wks` would write
 * PKCS#12 under a .wks name).  0 or CLI_EXIT_USAGE, before any password.
 */
static int check_out_type(const cli_ctx *c, int wks_input)
{
	const wks_keystore_type out = wks_input ? WKS_KEYSTORE_PKCS12
						: WKS_KEYSTORE_WKS;
	const char *base = strrchr(c->out, '/'), *ext;
	wks_keystore_type named;

	base = base ? base + 1 : c->out;
	if (c->deststoretype) {
		named = type_named(c->deststoretype);
		if (named == out)
			return 0;
		cli_err(c->in, "%s input converts to %s only, not %s", wks_input ?
			"a WKS" : "a JKS, JCEKS or PKCS#12",
			type_word(out), type_word(named));
		return CLI_EXIT_USAGE;
	}
	if (!(ext = strrchr(base, '.')) || ext == base ||
	    (named = type_named(ext + 1)) == WKS_KEYSTORE_UNKNOWN ||
	    named == out)
		return 0;
	cli_err(c->out, "the name says %s, but %s input converts to %s: name "
		"the output .%s (or give --deststoretype %s to write %s under "
		"this name)", type_word(named), wks_input ? "a WKS" :
		"a JKS, JCEKS or PKCS#12", type_word(out),
		wks_input ? "p12" : "wks", wks_input ? "pkcs12" : "wks",
		type_word(out));
	return CLI_EXIT_USAGE;
}

static int wks_to_p12(cli_ctx *c, const uint8_t *data, size_t len)
{
	wks_store *st = NULL;
	cli_pw inpw = CLI_PW_INIT, kp = CLI_PW_INIT, outpw = CLI_PW_INIT;
	uint8_t *der = NULL;
	size_t der_len = 0;
	char prompt[512];
	int rc, err;

	snprintf(prompt, sizeof(prompt), "Keystore password for %s: ", c->in);
	if ((rc = cli_pw_get(&inpw, &c->inpass, prompt, "--inpass", 0)) != 0)
		return rc;
	if (inpw.len == 0) {
		cli_err(c->in, "the store password must not be empty");
		rc = CLI_EXIT_USAGE;
		goto done;
	}
	if ((err = wks_store_new(&st)) < 0 ||
	    (err = wks_store_load_buffer(st, data, len, inpw.p,
					 inpw.len)) < 0) {
		rc = cli_lib_err(c->in, NULL, err, NULL);
		goto done;
	}
	/* --iterations within libwks.wks.maxIterationCount, as for a
	 * store: a PKCS#12 above it could not be imported back. */
	if ((rc = cli_store_iterations(st, c)) != 0)
		goto done;
	if ((rc = cli_keypass(&kp, c, &inpw, NULL)) != 0)
		goto done;
	snprintf(prompt, sizeof(prompt), "Password of the new PKCS#12 file %s: ",
		 c->out);
	if ((rc = cli_pw_get(&outpw, &c->outpass, prompt, "--outpass",
			     CLI_PW_NEW)) != 0)
		goto done;
	cli_key_fallback(&inpw); /* each key: --keypass, else the store's */
	rc = cli_p12_export(&der, &der_len, st, c->in, NULL, &kp, &outpw,
			    cli_export_iterations(st, c), 1);
	cli_key_fallback(NULL);
	if (rc == 0)
		rc = cli_write_output(c, c->out, der, der_len, 1, 1);
done:
	cli_free_secret(der, der_len);
	wks_store_free(st);
	cli_pw_clear(&inpw);
	cli_pw_clear(&kp);
	cli_pw_clear(&outpw);
	return rc;
}

static int p12_to_wks(cli_ctx *c, const uint8_t *data, size_t len)
{
	wks_store *st = NULL;
	cli_pw inpw = CLI_PW_INIT, kp = CLI_PW_INIT, outpw = CLI_PW_INIT;
	cli_p12_entry *e = NULL;
	size_t count = 0;
	char prompt[512];
	cli_ctx oc = *c;
	int rc, err;

	snprintf(prompt, sizeof(prompt), "Password of %s: ", c->in);
	if ((rc = cli_pw_get(&inpw, &c->inpass, prompt, "--inpass",
			     CLI_PW_EMPTY_OK)) != 0)
		return rc;
	if ((rc = cli_p12_read(&e, &count, c->in, data, len, &inpw,
			       c->no_mac_ok)) != 0)
		goto done;
	snprintf(prompt, sizeof(prompt), "New keystore password for %s: ",
		 c->out);
	if ((rc = cli_pw_get(&outpw, &c->outpass, prompt, "--outpass",
			     CLI_PW_NEW)) != 0 ||
	    (rc = cli_java_password_check(c, &outpw, c->out, "--outpass",
					  "store")) != 0)
		goto done;
	if ((rc = cli_keypass_new(&kp, c, &outpw, NULL)) != 0)
		goto done;
	if ((err = wks_store_new(&st)) < 0) {
		rc = cli_lib_err(c->out, NULL, err, NULL);
		goto done;
	}
	if ((rc = cli_store_iterations(st, c)) != 0)
		goto done;
	oc.keystore = c->out;
	oc.force = 1; /* the store is new: no alias clashes with it */
	if ((rc = cli_p12_import(st, &oc, c->in, e, count, NULL, &kp, 0)) != 0)
		goto done;
	rc = cli_store_create(st, c, c->out, &outpw);
done:
	cli_p12_free(e, count);
	wks_store_free(st);
	cli_pw_clear(&inpw);
	cli_pw_clear(&kp);
	cli_pw_clear(&outpw);
	return rc;
}

int cmd_convert(cli_ctx *c)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	if ((rc = cli_need(c->in, "--in")) != 0 ||
	    (rc = cli_need(c->out, "--out")) != 0)
		return rc;
	if (c->deststoretype && (type_named(c->deststoretype) ==
				 WKS_KEYSTORE_UNKNOWN ||
				 type_named(c->deststoretype) ==
				 WKS_KEYSTORE_JKS ||
				 type_named(c->deststoretype) ==
				 WKS_KEYSTORE_JCEKS)) {
		cli_err(NULL, "--deststoretype: \"%s\" is not wks or pkcs12 "
			"(wks writes no JKS or JCEKS)", c->deststoretype);
		return CLI_EXIT_USAGE;
	}
	/* Before any password: never over the input, an existing output
	 * only with --force. */
	if ((rc = cli_output_check(c, c->out)) != 0)
		return rc;
	if ((rc = cli_read_file(&data, &len, c->in)) != 0)
		return rc;
	if ((rc = check_out_type(c, wks_probe(data, len))) != 0)
		;
	else if (wks_probe(data, len))
		rc = wks_to_p12(c, data, len);
	else if (cli_java_type(wks_keystore_detect(data, len)))
		rc = cli_convert_java(c, data, len); /* JKS, JCEKS, BC's */
	else
		rc = p12_to_wks(c, data, len);
	cli_free_secret(data, len);
	return rc;
}
