/*
 * wks import-keystore: the entries of another keystore (JKS, JCEKS,
 * Bouncy Castle's BKS and BCFKS, PKCS#12 or WKS) into a WKS store, as
 * `keytool -importkeystore` does, but without a JVM.  `wks convert` uses
 * the same code for Java keystore input.
 *
 * Order of work: the source is read, checked (its integrity digest or MAC
 * with the source store password) and every selected entry decrypted into
 * memory first; only then is the destination opened under its lock
 * (cli_store_edit_begin) or made new, so the lock is held briefly.  An
 * alias that exists in the destination refuses the whole import (nothing
 * changes) unless --force, which replaces it: keytool asks "Existing entry
 * alias X exists, overwrite?", and a tool without a question must not
 * overwrite silently.  An entry that cannot be read (wrong key password
 * and no terminal to ask, an unsupported kind) is skipped and named; the
 * others are imported and the exit status is then 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/x509.h>

#include "cli.h"
#include "wks/convert.h"

typedef struct {
	char *alias;           /* source alias, API form */
	wks_entry_type type;
	uint8_t *pkcs8;        /* private key (wiped) */
	size_t pkcs8_len;
	uint8_t *secret;       /* secret key (wiped) */
	size_t secret_len;
	char *algorithm;       /* secret key */
	uint8_t **der;         /* certificates, leaf first */
	size_t *der_len;
	size_t nder;
	char *skip;            /* why it is not imported (NULL: imported) */
	int64_t created;       /* Java keystores: the source's creation time */
	int dated;
} ks_item;

typedef struct {
	cli_ctx *c;
	const char *file;          /* the source */
	wks_keystore_type type;
	const cli_pwsrc *storepass;
	const char *storepass_opt;
	cli_pw pw;                 /* source store password */
	cli_pw keypw;              /* --srckeypass, if given */
	int have_keypw;
	int convert;               /* wks convert (else import-keystore) */
	ks_item *it;
	size_t n, cap;
} ks_src;

static void item_free(ks_item *t)
{
	free(t->alias);
	cli_free_secret(t->pkcs8, t->pkcs8_len);
	cli_free_secret(t->secret, t->secret_len);
	free(t->algorithm);
	for (size_t i = 0; i < t->nder; i++)
		free(t->der[i]);
	free(t->der);
	free(t->der_len);
	free(t->skip);
}

static void src_free(ks_src *s)
{
	for (size_t i = 0; i < s->n; i++)
		item_free(&s->it[i]);
	free(s->it);
	cli_pw_clear(&s->pw);
	cli_pw_clear(&s->keypw);
}

static ks_item *src_add(ks_src *s, const char *alias, wks_entry_type type)
{
	ks_item *t;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		ks_item *n = realloc(s->it, ncap * sizeof(*n));

		if (!n)
			return NULL;
		s->it = n;
		s->cap = ncap;
	}
	t = &s->it[s->n];
	memset(t, 0, sizeof(*t));
	if (!(t->alias = strdup(alias)))
		return NULL;
	t->type = type;
	s->n++;
	return t;
}

static int item_add_cert(ks_item *t, const uint8_t *der, size_t len)
{
	uint8_t **d = realloc(t->der, (t->nder + 1) * sizeof(*d));
	size_t *l;

	if (!d)
		return -1;
	t->der = d;
	if (!(l = realloc(t->der_len, (t->nder + 1) * sizeof(*l))))
		return -1;
	t->der_len = l;
	if (!(d[t->nder] = malloc(len ? len : 1)))
		return -1;
	memcpy(d[t->nder], der, len);
	l[t->nder++] = len;
	return 0;
}

static int item_skip(ks_item *t, const char *why)
{
	free(t->skip);
	t->skip = strdup(why && *why ? why : "unreadable");
	return t->skip ? 0 : -1;
}

static int selected(const ks_src *s, const char *alias)
{
	return !s->c->srcalias || !strcmp(s->c->srcalias, alias);
}

static int oom(const char *file)
{
	cli_err(file, "out of memory");
	return CLI_EXIT_FAIL;
}

/*
 * Open one key of the source: with its --keypass-for password if one was
 * given (only that, as for the keys of a WKS store), else with
 * --srckeypass if given, then with the source store password (keytool's
 * default); when none opens it, ask on the terminal for this alias's
 * password (no terminal: the entry is skipped).  `open` returns a
 * wks_err; WKS_ERR_INTEGRITY means "wrong password".
 */
typedef int (*key_open_fn)(void *arg, const char *pw, size_t pw_len);

static int open_key(ks_src *s, const char *alias, key_open_fn open, void *arg)
{
	const cli_pw *first = s->have_keypw ? &s->keypw : &s->pw;
	const cli_pw *given = NULL;
	cli_pwsrc none = { CLI_PWSRC_NONE, "--srckeypass", NULL, -1 };
	cli_pw asked = CLI_PW_INIT;
	char prompt[600];
	char *da;
	int err;

	/* Read (and checked) by read_source() already: cannot fail. */
	if (cli_keypass_for_get(&given, alias) == 1)
		return open(arg, given->p, given->len);
	err = open(arg, first->p, first->len);
	if (err == WKS_ERR_INTEGRITY && s->have_keypw)
		err = open(arg, s->pw.p, s->pw.len);
	if (err != WKS_ERR_INTEGRITY || !cli_have_tty())
		return err;
	da = cli_display(alias);
	snprintf(prompt, sizeof(prompt), "Key password for \"%s\" in %s: ",
		 da ? da : "", s->file);
	free(da);
	if (cli_pw_get(&asked, &none, prompt, "--srckeypass", 0) != 0)
		return WKS_ERR_INTEGRITY;
	err = open(arg, asked.p, asked.len);
	cli_pw_clear(&asked);
	return err;
}

/* ---- JKS / JCEKS -------------------------------------------------------- */

struct jks_key_arg {
	const wks_java_store *js;
	size_t i;
	ks_item *t;
};

/* A copy in our own memory (item_free() wipes and frees it). */
static int own_copy(uint8_t **out, size_t *out_len, uint8_t *lib, size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	if (p && n)
		memcpy(p, lib, n);
	wks_free(lib);
	if (!p)
		return WKS_ERR_NOMEM;
	*out = p;
	*out_len = n;
	return 0;
}

static int jks_key_open(void *arg, const char *pw, size_t pw_len)
{
	struct jks_key_arg *a = arg;
	uint8_t *k = NULL;
	char *alg = NULL;
	size_t n = 0;
	int err;

	if (wks_java_entry_type(a->js, a->i) == WKS_ENTRY_PRIVATE_KEY) {
		if ((err = wks_java_get_key(&k, &n, a->js, a->i, pw,
					    pw_len)) < 0)
			return err;
		return own_copy(&a->t->pkcs8, &a->t->pkcs8_len, k, n);
	}
	if ((err = wks_java_get_secret(&k, &n, &alg, a->js, a->i, pw,
				       pw_len)) < 0)
		return err;
	a->t->algorithm = strdup(alg);
	wks_free(alg);
	if (!a->t->algorithm) {
		wks_free(k);
		return WKS_ERR_NOMEM;
	}
	return own_copy(&a->t->secret, &a->t->secret_len, k, n);
}

/* Why an entry is skipped; the hint names options the command takes. */
static const char *skip_reason(const ks_src *s, const char *alias, int err,
			       char *buf, size_t n)
{
	const char *d = wks_error_detail();

	if (err == WKS_ERR_INTEGRITY && alias &&
	    cli_keypass_for_has(s->c, alias))
		snprintf(buf, n, "key password incorrect (the one given with "
			 "--keypass-for)");
	else if (err == WKS_ERR_INTEGRITY && alias) {
		char *da = cli_display(alias);

		snprintf(buf, n, "key password incorrect (give it with "
			 "--keypass-for '%s=SRC'%s)", da ? da : "",
			 s->convert ? ", or --srckeypass SRC for all keys" :
				      ", or --srcalias and --srckeypass");
		free(da);
	} else
		snprintf(buf, n, "%s", d && *d ? d : wks_strerror(err));
	return buf;
}

static int read_jks(ks_src *s, const uint8_t *data, size_t len)
{
	wks_java_store *js = NULL;
	char why[400];
	int err;

	if ((err = wks_java_parse(&js, data, len, s->pw.p, s->pw.len)) < 0)
		return cli_lib_err(s->file, NULL, err, NULL);
	for (size_t i = 0; i < wks_java_count(js); i++) {
		const char *alias = wks_java_alias(js, i);
		wks_entry_type type = wks_java_entry_type(js, i);
		size_t ncerts = wks_java_cert_count(js, i);
		struct jks_key_arg a = { js, i, NULL };
		ks_item *t;

		if (!selected(s, alias))
			continue;
		t = src_add(s, alias, type);
		if (!t)
			goto nomem;
		t->created = wks_java_creation_time(js, i);
		t->dated = 1;
		for (size_t k = 0; k < ncerts; k++) {
			size_t n = 0;
			const uint8_t *der = wks_java_cert_der(js, i, k, &n);

			if (item_add_cert(t, der, n) < 0)
				goto nomem;
		}
		if (!wks_java_certs_x509(js, i)) {
			if (item_skip(t, "a certificate is not X.509") < 0)
				goto nomem;
			continue;
		}
		if (type == WKS_ENTRY_CERTIFICATE)
			continue;
		if (type == WKS_ENTRY_PRIVATE_KEY && ncerts == 0) {
			if (item_skip(t, "a private key without a certificate "
				      "chain") < 0)
				goto nomem;
			continue;
		}
		a.t = t;
		err = open_key(s, alias, jks_key_open, &a);
		if (err < 0 && item_skip(t, skip_reason(s, alias, err,
							why, sizeof(why))) < 0)
			goto nomem;
	}
	wks_java_free(js);
	return 0;
nomem:
	wks_java_free(js);
	return oom(s->file);
}

/* ---- PKCS#12 ------------------------------------------------------------ */

static int read_p12(ks_src *s, const uint8_t *data, size_t len)
{
	cli_p12_entry *e = NULL;
	size_t count = 0;
	int rc;

	if ((rc = cli_p12_read(&e, &count, s->file, data, len, &s->pw,
			       s->c->no_mac_ok)) != 0)
		return rc;
	for (size_t i = 0; i < count; i++) {
		char name[32];
		const char *alias = e[i].alias;
		ks_item *t;

		if (!alias) {
			snprintf(name, sizeof(name), "%zu", i + 1);
			alias = name;
		}
		if (!selected(s, alias))
			continue;
		if (!(t = src_add(s, alias, e[i].type)))
			goto nomem;
		for (int k = 0; e[i].chain && k < sk_X509_num(e[i].chain); k++) {
			uint8_t *der = NULL;
			size_t dl = 0;

			if (cli_cert_der(&der, &dl, sk_X509_value(e[i].chain, k)))
				goto nomem;
			rc = item_add_cert(t, der, dl);
			free(der);
			if (rc < 0)
				goto nomem;
		}
		if (e[i].type == WKS_ENTRY_PRIVATE_KEY) {
			t->pkcs8 = e[i].pkcs8;
			t->pkcs8_len = e[i].pkcs8_len;
			e[i].pkcs8 = NULL;
			e[i].pkcs8_len = 0;
		} else if (e[i].type == WKS_ENTRY_SECRET_KEY) {
			/* Java's secret bags (keytool -genseckey,
			 * -importpass): the raw key and its JCA name. */
			t->secret = e[i].pkcs8;
			t->secret_len = e[i].pkcs8_len;
			t->algorithm = e[i].algorithm;
			e[i].pkcs8 = NULL;
			e[i].pkcs8_len = 0;
			e[i].algorithm = NULL;
			if (!t->algorithm && item_skip(t, "a secret key without "
						       "an algorithm name") < 0)
				goto nomem;
		}
	}
	cli_p12_free(e, count);
	return 0;
nomem:
	cli_p12_free(e, count);
	return oom(s->file);
}

/* ---- WKS ---------------------------------------------------------------- */

struct wks_key_arg {
	wks_store *st;
	const char *alias;
	wks_key *key;
};

static int wks_key_open(void *arg, const char *pw, size_t pw_len)
{
	struct wks_key_arg *a = arg;

	return wks_store_get_key(&a->key, a->st, a->alias, pw, pw_len);
}

static int read_wks(ks_src *s, const uint8_t *data, size_t len)
{
	wks_store *st = NULL;
	char **aliases = NULL;
	size_t count = 0;
	char why[400];
	int err, rc = 0;

	if ((err = wks_store_new(&st)) < 0 ||
	    (err = wks_store_load_buffer(st, data, len, s->pw.p,
					 s->pw.len)) < 0 ||
	    (err = wks_store_aliases(&aliases, &count, st)) < 0) {
		rc = cli_lib_err(s->file, NULL, err, NULL);
		goto done;
	}
	for (size_t i = 0; i < count; i++) {
		wks_entry_type ty = wks_store_entry_type(st, aliases[i]);
		struct wks_key_arg a = { st, aliases[i], NULL };
		size_t nc = 0;
		ks_item *t;

		if (!selected(s, aliases[i]))
			continue;
		if (!(t = src_add(s, aliases[i], ty)))
			goto nomem;
		if (ty != WKS_ENTRY_SECRET_KEY &&
		    wks_store_cert_count(&nc, st, aliases[i]) == WKS_OK) {
			for (size_t k = 0; k < nc; k++) {
				uint8_t *der = NULL;
				size_t dl = 0;

				if ((err = wks_store_get_cert_der(&der, &dl, st,
								  aliases[i],
								  k)) < 0) {
					rc = cli_lib_err(s->file, aliases[i], err,
							 NULL);
					goto done;
				}
				err = item_add_cert(t, der, dl);
				wks_free(der);
				if (err < 0)
					goto nomem;
			}
		}
		if (ty == WKS_ENTRY_CERTIFICATE)
			continue;
		err = open_key(s, aliases[i], wks_key_open, &a);
		if (err < 0) {
			if (item_skip(t, skip_reason(s, aliases[i], err, why,
						      sizeof(why))) < 0)
				goto nomem;
			continue;
		}
		{
			size_t kl = 0;
			const uint8_t *kd = wks_key_data(a.key, &kl);
			uint8_t *copy = malloc(kl ? kl : 1);

			if (copy)
				memcpy(copy, kd, kl);
			if (copy && ty == WKS_ENTRY_SECRET_KEY) {
				t->secret = copy;
				t->secret_len = kl;
				t->algorithm = strdup(wks_key_algorithm(a.key));
			} else if (copy) {
				t->pkcs8 = copy;
				t->pkcs8_len = kl;
			}
			wks_key_free(a.key);
			if (!copy || (ty == WKS_ENTRY_SECRET_KEY &&
				      !t->algorithm))
				goto nomem;
		}
	}
	goto done;
nomem:
	rc = oom(s->file);
done:
	wks_aliases_free(aliases);
	wks_store_free(st);
	return rc;
}

/* ---- the import --------------------------------------------------------- */

static int parse_type(wks_keystore_type *out, const char *s)
{
	static const struct {
		const char *name;
		wks_keystore_type t;
	} types[] = {
		{ "jks", WKS_KEYSTORE_JKS }, { "jceks", WKS_KEYSTORE_JCEKS },
		{ "pkcs12", WKS_KEYSTORE_PKCS12 }, { "p12", WKS_KEYSTORE_PKCS12 },
		{ "wks", WKS_KEYSTORE_WKS }, { "bks", WKS_KEYSTORE_BKS },
		{ "bks-v1", WKS_KEYSTORE_BKS }, { "bcfks", WKS_KEYSTORE_BCFKS },
		{ "uber", WKS_KEYSTORE_UBER }
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcasecmp(s, types[i].name)) {
			*out = types[i].t;
			return 0;
		}
	cli_err(NULL, "--srcstoretype: \"%s\" is not jks, jceks, bks, bcfks, "
		"uber, pkcs12 or wks", s);
	return CLI_EXIT_USAGE;
}

/* The destination alias of an item. */
static const char *dest_alias(const cli_ctx *c, const ks_item *t)
{
	return c->destalias ? c->destalias : t->alias;
}

static int set_item(wks_store *st, const char *alias, const ks_item *t,
		    const cli_pw *kp)
{
	switch (t->type) {
	case WKS_ENTRY_PRIVATE_KEY:
		return wks_store_set_private_key(
			st, alias, t->pkcs8, t->pkcs8_len,
			(const uint8_t *const *)t->der, t->der_len, t->nder,
			kp->p, kp->len);
	case WKS_ENTRY_CERTIFICATE:
		return t->nder == 1 ?
			wks_store_set_cert_der(st, alias, t->der[0],
					       t->der_len[0]) :
			WKS_ERR_INVALID;
	default:
		return wks_store_set_secret_key(st, alias, t->algorithm,
						t->secret, t->secret_len, kp->p,
						kp->len);
	}
}

/*
 * Put one item into st.  Returns 0 (imported, or t->skip set) or an exit
 * status for a failure that must stop the import.  A set replaces an entry
 * of the same kind and leaves it as it was when it fails; a certificate
 * never replaces a key entry (WKS_ERR_WRONG_TYPE), so with --force the key
 * entry is renamed aside first and renamed back if the certificate fails:
 * a replacement that fails never loses what DEST held.
 */
static int put_item(wks_store *st, cli_ctx *c, const char *destfile,
		    ks_item *t, const cli_pw *kp)
{
	const char *alias = dest_alias(c, t);
	char why[400];
	int err = set_item(st, alias, t, kp);

	if (err == WKS_ERR_WRONG_TYPE && c->force) {
		size_t n = strlen(alias) + 32;
		char *aside = malloc(n);
		int i = 0;

		if (!aside)
			return oom(destfile);
		do
			snprintf(aside, n, "%s\x01wks-aside-%d", alias, i);
		while (wks_store_contains(st, aside) && ++i < 1000);
		if ((err = wks_store_rename(st, alias, aside)) == WKS_OK) {
			err = set_item(st, alias, t, kp);
			if (err == WKS_OK)
				err = wks_store_delete(st, aside);
			else if (wks_store_rename(st, aside, alias) != WKS_OK)
				err = WKS_ERR_NOMEM; /* cannot happen */
		}
		free(aside);
	}
	if (err == WKS_ERR_NOMEM)
		return oom(destfile);
	if (err < 0 && item_skip(t, skip_reason(NULL, NULL, err, why,
						      sizeof(why))) < 0)
		return oom(destfile);
	return 0;
}

static void print_items(const ks_src *s, const cli_ctx *c, size_t *imported,
			size_t *skipped)
{
	*imported = *skipped = 0;
	for (size_t i = 0; i < s->n; i++) {
		const ks_item *t = &s->it[i];

		cli_say_entry("imported", t->alias, c->destalias, t->type,
			      t->nder, t->algorithm, t->secret_len, t->skip);
		if (t->skip)
			(*skipped)++;
		else
			(*imported)++;
	}
	cli_say_summary("imported", *imported, *skipped);
}

/* Read the source named s->file (its password from s->storepass) into
 * s->it. */
static int read_source(ks_src *s, const uint8_t *data, size_t len,
		       const char *srctype)
{
	wks_keystore_type want = WKS_KEYSTORE_UNKNOWN;
	char prompt[600];
	int rc;

	s->type = wks_keystore_detect(data, len);
	if (srctype) {
		if ((rc = parse_type(&want, srctype)) != 0)
			return rc;
		if (want != s->type) {
			cli_err(s->file, "this is %s %s file, not %s (leave out "
				"--srcstoretype to detect the type)",
				s->type == WKS_KEYSTORE_UNKNOWN ? "an" : "a",
				wks_keystore_type_name(s->type), srctype);
			return CLI_EXIT_MALFORMED;
		}
	}
	if (s->type == WKS_KEYSTORE_UNKNOWN) {
		cli_err(s->file, "not a keystore wks can read (JKS, JCEKS, BKS, "
			"BCFKS, PKCS#12 or WKS)");
		return CLI_EXIT_MALFORMED;
	}
	snprintf(prompt, sizeof(prompt), "Password of the source keystore "
		 "%s: ", s->file);
	if ((rc = cli_pw_get(&s->pw, s->storepass, prompt, s->storepass_opt,
			     0)) != 0)
		return rc;
	/* An explicitly empty password would skip the integrity check. */
	if (s->pw.len == 0) {
		cli_err(s->file, "%s: the source store password must not be "
			"empty", s->storepass_opt);
		return CLI_EXIT_USAGE;
	}
	if (s->c->srckeypass.kind != CLI_PWSRC_NONE) {
		snprintf(prompt, sizeof(prompt), "Key password in %s: ",
			 s->file);
		if ((rc = cli_pw_get(&s->keypw, &s->c->srckeypass, prompt,
				     "--srckeypass", 0)) != 0)
			return rc;
		if (s->keypw.len == 0) {
			cli_err(NULL, "--srckeypass: the key password must not "
				"be empty");
			return CLI_EXIT_USAGE;
		}
		s->have_keypw = 1;
	}
	/* Every --keypass-for password now: a source that cannot be read
	 * fails the command before anything is decrypted. */
	for (size_t i = 0; cli_keypass_for_alias(s->c, i); i++) {
		const cli_pw *kp;

		if ((rc = cli_keypass_for_get(&kp,
					      cli_keypass_for_alias(s->c, i))) < 0)
			return -rc;
	}
	switch (s->type) {
	case WKS_KEYSTORE_JKS:
	case WKS_KEYSTORE_JCEKS:
	case WKS_KEYSTORE_BKS:
	case WKS_KEYSTORE_BCFKS:
	case WKS_KEYSTORE_UBER: /* refused by the library, saying why */
		rc = read_jks(s, data, len);
		break;
	case WKS_KEYSTORE_PKCS12:
		rc = read_p12(s, data, len);
		break;
	default:
		rc = read_wks(s, data, len);
		break;
	}
	if (rc)
		return rc;
	/* A --keypass-for that names no key entry: a typo, say so. */
	for (size_t i = 0; cli_keypass_for_alias(s->c, i); i++) {
		const char *a = cli_keypass_for_alias(s->c, i);
		int found = 0;

		for (size_t j = 0; j < s->n && !found; j++)
			found = !strcmp(s->it[j].alias, a) &&
				s->it[j].type != WKS_ENTRY_CERTIFICATE;
		if (!found && (!s->c->srcalias || !strcmp(s->c->srcalias, a))) {
			char *da = cli_display(a);

			cli_note(s->file, "--keypass-for \"%s\": no key entry of "
				 "that name", da ? da : "");
			free(da);
		}
	}
	if (s->c->srcalias && s->n == 0) {
		char *da = cli_display(s->c->srcalias);

		cli_err(s->file, "no entry \"%s\"", da ? da : "");
		free(da);
		return CLI_EXIT_NOTFOUND;
	}
	/* What Java cannot load: a warning, or (--strict-java) an error
	 * before anything changes. */
	for (size_t i = 0; i < s->n; i++) {
		ks_item *t = &s->it[i];

		if (t->skip || (t->type != WKS_ENTRY_PRIVATE_KEY &&
				t->type != WKS_ENTRY_SECRET_KEY))
			continue;
		if ((rc = cli_java_check(s->c, s->file, dest_alias(s->c, t),
					 t->pkcs8, t->pkcs8_len)) != 0)
			return rc;
	}
	return 0;
}

/* The creation time of the item being put (*ctx): the source's, for Java
 * keystores, else now. */
static uint64_t item_time(void *ctx)
{
	const ks_item *t = *(const ks_item *const *)ctx;
	struct timespec ts;

	if (t && t->dated)
		return (uint64_t)t->created;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static size_t key_count(const ks_src *s)
{
	size_t keys = 0;

	for (size_t i = 0; i < s->n; i++)
		keys += !s->it[i].skip &&
			s->it[i].type != WKS_ENTRY_CERTIFICATE;
	return keys;
}

/* Put every readable item into st (destfile names it in messages), each
 * dated as in the source.  The new keys' derivations run first, in one
 * batch (if that fails, each set derives its own), unless `prepared`
 * (cli_store_edit_prekeys); any not taken are wiped. */
static int put_all(wks_store *st, cli_ctx *c, const char *destfile,
		   ks_src *s, const cli_pw *kp, int prepared)
{
	const ks_item *cur = NULL;
	size_t keys = key_count(s);
	int rc = 0;

	if (keys > 1 && !prepared)
		(void)wks_store_prepare_keys(st, kp->p, kp->len,
					     keys < 1024 ? keys : 1024);
	wks_store_set_wallclock(st, item_time, &cur);
	for (size_t i = 0; i < s->n && !rc; i++) {
		cur = &s->it[i];
		if (!s->it[i].skip)
			rc = put_item(st, c, destfile, &s->it[i], kp);
	}
	wks_store_set_wallclock(st, NULL, NULL);
	(void)wks_store_prepare_keys(st, NULL, 0, 0);
	return rc;
}

/* Into a new store at `path` (password from `pass`). */
static int import_new(cli_ctx *c, ks_src *s, const char *path,
		      const cli_pwsrc *pass, const char *pass_opt)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT, kp = CLI_PW_INIT;
	size_t imported, skipped;
	char prompt[600];
	int rc, err;

	snprintf(prompt, sizeof(prompt), "Password of the new keystore %s: ",
		 path);
	if ((rc = cli_pw_get(&pw, pass, prompt, pass_opt, CLI_PW_NEW)) != 0)
		return rc;
	if ((rc = cli_java_password_check(c, &pw, path, pass_opt,
					  "store")) != 0)
		goto done;
	if (pw.len == 0) {
		cli_err(path, "%s: the store password must not be empty",
			pass_opt);
		rc = CLI_EXIT_USAGE;
		goto done;
	}
	if ((rc = cli_keypass_new(&kp, c, &pw, NULL)) != 0)
		goto done;
	if ((err = wks_store_new(&st)) < 0) {
		rc = cli_lib_err(path, NULL, err, NULL);
		goto done;
	}
	if ((rc = cli_store_iterations(st, c)) != 0 ||
	    (rc = put_all(st, c, path, s, &kp, 0)) != 0)
		goto done;
	print_items(s, c, &imported, &skipped);
	if (imported == 0) {
		cli_err(path, "nothing imported; no store written");
		rc = CLI_EXIT_FAIL;
		goto done;
	}
	if ((rc = cli_store_create(st, c, path, &pw)) != 0)
		goto done;
	/* As every import that creates its store says (a typo in -k makes
	 * a second store); convert's output is always new. */
	if (!s->convert)
		cli_note(path, "a new keystore was created");
	if (skipped)
		rc = CLI_EXIT_FAIL;
done:
	wks_store_free(st);
	cli_pw_clear(&pw);
	cli_pw_clear(&kp);
	return rc;
}

/* Into the existing store --keystore, under its lock. */
static int import_existing(cli_ctx *c, ks_src *s)
{
	cli_edit e;
	cli_pw kp = CLI_PW_INIT;
	size_t imported, skipped, clash = 0;
	int rc, prepared = 0;

	/* The new keys derived before the store's lock is taken. */
	if ((rc = cli_store_edit_prepare(&e, c)) != 0)
		return rc;
	if ((rc = cli_store_edit_prekeys(&e, c, key_count(s),
					 &prepared)) != 0 ||
	    (rc = cli_store_edit_lock(&e, c)) != 0)
		goto done;
	for (size_t i = 0; i < s->n; i++) {
		const char *a = dest_alias(c, &s->it[i]);

		if (s->it[i].skip || !wks_store_contains(e.st, a))
			continue;
		if (!c->force) {
			char *da = cli_display(a);

			cli_err(c->keystore, "entry \"%s\" exists", da ? da : "");
			free(da);
		}
		clash++;
	}
	if (clash && !c->force) {
		cli_err(c->keystore, "%zu entr%s exist%s: nothing imported (use "
			"--force to replace %s)", clash,
			clash == 1 ? "y" : "ies", clash == 1 ? "s" : "",
			clash == 1 ? "it" : "them");
		rc = CLI_EXIT_EXISTS;
		goto done;
	}
	if ((rc = cli_pw_dup(&kp, &e.kp)) != 0 ||
	    (rc = put_all(e.st, c, c->keystore, s, &kp, prepared)) != 0)
		goto done;
	print_items(s, c, &imported, &skipped);
	if (imported && (rc = cli_store_edit_commit(&e, c, NULL)) != 0)
		goto done;
	if (skipped)
		rc = CLI_EXIT_FAIL;
done:
	cli_pw_clear(&kp);
	cli_store_edit_end(&e);
	return rc;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cmd_import_keystore(cli_ctx *c)
{
	ks_src s;
	uint8_t *data = NULL;
	size_t len = 0;
	struct stat sb;
	int rc;

	memset(&s, 0, sizeof(s));
	if ((rc = cli_need(c->srckeystore, "--srckeystore")) != 0 ||
	    (rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if (c->destalias && !c->srcalias) {
		cli_err(NULL, "import-keystore: --destalias needs --srcalias");
		return CLI_EXIT_USAGE;
	}
	if (same_file(c->srckeystore, c->keystore)) {
		cli_err(c->keystore, "the source and the destination are the "
			"same file");
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_read_file(&data, &len, c->srckeystore)) != 0)
		return rc;
	s.c = c;
	s.file = c->srckeystore;
	s.storepass = &c->srcstorepass;
	s.storepass_opt = "--srcstorepass";
	if ((rc = read_source(&s, data, len, c->srcstoretype)) != 0)
		goto done;
	if (stat(c->keystore, &sb) == 0)
		rc = import_existing(c, &s);
	else
		rc = import_new(c, &s, c->keystore, &c->storepass,
				"--storepass");
done:
	src_free(&s);
	cli_free_secret(data, len);
	return rc;
}

int cli_convert_java(cli_ctx *c, const uint8_t *data, size_t len)
{
	ks_src s;
	int rc;

	memset(&s, 0, sizeof(s));
	s.c = c;
	s.file = c->in;
	s.storepass = &c->inpass;
	s.storepass_opt = "--inpass";
	s.convert = 1;
	if ((rc = read_source(&s, data, len, NULL)) == 0)
		rc = import_new(c, &s, c->out, &c->outpass, "--outpass");
	src_free(&s);
	return rc;
}
