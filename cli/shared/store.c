/*
 * Opening and saving the keystore for wks(1): every command that changes a
 * store goes through cli_store_edit_begin() / _commit() / _end(), which
 * hold the store's exclusive advisory lock (wks_lock_acquire) from before
 * the load until after the save, so that concurrent edits serialise and
 * none is lost; new stores are made by cli_store_create().
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "cli.h"
#include "wks/convert.h"

int cli_store_iterations(wks_store *st, cli_ctx *c)
{
	char v[32], max[32];
	int err;

	if (!c->has_iterations)
		return 0;
	if (wks_get_property(max, sizeof(max), st,
			     "libwks.wks.maxIterationCount") == WKS_OK &&
	    c->iterations > atol(max)) {
		cli_err(NULL, "--iterations %ld is above the limit %s "
			"(libwks.wks.maxIterationCount): the store could not be "
			"read back", c->iterations, max);
		return CLI_EXIT_USAGE;
	}
	snprintf(v, sizeof(v), "%ld", c->iterations);
	err = wks_store_set_property(st, "wolfjce.wks.iterationCount", v);
	if (err < 0)
		return cli_lib_err(NULL, NULL, err, "--iterations");
	return 0;
}

/* Open the store; with `lock` (an edit) the bytes loaded are read
 * through the lock, from the very file that is locked. */
static int store_open(wks_store **out, cli_pw *pw, cli_ctx *c, int mode,
		      const wks_lock *lock)
{
	wks_store *st = NULL;
	uint8_t *data = NULL;
	size_t len = 0;
	char prompt[512];
	int rc, err;

	*out = NULL;
	cli_pw_clear(pw);
	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	/* Read first: a missing file is reported before any prompt. */
	if ((rc = cli_read_file(&data, &len, c->keystore)) != 0)
		return rc;
	if (!wks_probe(data, len)) {
		cli_not_wks(c->keystore, data, len);
		rc = CLI_EXIT_MALFORMED;
		goto done;
	}
	snprintf(prompt, sizeof(prompt), mode == CLI_STORE_OPTIONAL ?
		 "Keystore password for %s (Enter: skip the integrity check): " :
		 "Keystore password for %s: ", c->keystore);
	if (mode == CLI_STORE_OPTIONAL) {
		if (!c->no_storepass)
			rc = cli_pw_get(pw, &c->storepass, prompt, "--storepass",
					CLI_PW_OPTIONAL);
		else
			rc = cli_pw_dup(pw, &(cli_pw)CLI_PW_INIT);
	} else {
		rc = cli_pw_get(pw, &c->storepass, prompt, "--storepass", 0);
		if (rc == 0 && pw->len == 0) {
			cli_err(c->keystore, "the store password must not be "
				"empty");
			rc = CLI_EXIT_USAGE;
		}
	}
	if (rc)
		goto done;
	if ((err = wks_store_new(&st)) < 0) {
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
		goto done;
	}
	if ((rc = cli_store_iterations(st, c)) != 0)
		goto done;
	err = lock ? wks_store_load_locked(st, lock, pw->p, pw->len)
		   : wks_store_load_buffer(st, data, len, pw->p, pw->len);
	if (err < 0) {
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
		goto done;
	}
	if (pw->len == 0)
		cli_note(c->keystore, "integrity not checked (no store "
			 "password)");
	*out = st;
	st = NULL;
done:
	if (rc)
		cli_pw_clear(pw);
	wks_store_free(st);
	cli_free_secret(data, len);
	return rc;
}

int cli_store_open(wks_store **out, cli_pw *pw, cli_ctx *c, int mode)
{
	return store_open(out, pw, c, mode, NULL);
}

int cli_store_edit_begin(cli_edit *e, cli_ctx *c)
{
	int rc, err;

	*e = (cli_edit)CLI_EDIT_INIT;
	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	/* The lock first: what is loaded is what the save replaces.  Read-
	 * only commands take no lock: a save never changes the file in
	 * place, so a reader sees the old or the new file, whole. */
	err = wks_lock_acquire(&e->lock, c->keystore, WKS_LOCK_EXCLUSIVE);
	if (err == WKS_ERR_NOTFOUND) {
		cli_err(c->keystore, "cannot open: %s", strerror(ENOENT));
		return CLI_EXIT_IO;
	}
	if (err < 0)
		return cli_lib_err(c->keystore, NULL, err, NULL);
	/* The library refuses to save over a file the caller could not write
	 * (wks_store_save_file); say so before any password is asked. */
	if (faccessat(AT_FDCWD, c->keystore, W_OK, AT_EACCESS) != 0) {
		cli_err(c->keystore, "cannot write: %s", strerror(errno));
		rc = CLI_EXIT_IO;
	} else {
		rc = store_open(&e->st, &e->pw, c, CLI_STORE_VERIFY, e->lock);
	}
	if (rc)
		cli_store_edit_end(e);
	return rc;
}

int cli_store_edit_begin_or_create(cli_edit *e, cli_ctx *c)
{
	cli_ctx oc = *c;
	char prompt[512];
	struct stat sb;
	int rc, err;

	*e = (cli_edit)CLI_EDIT_INIT;
	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if (lstat(c->keystore, &sb) == 0 || errno != ENOENT)
		return cli_store_edit_begin(e, c);
	/* --force replaces entries, never a store that appears meanwhile. */
	oc.force = 0;
	if ((rc = cli_output_check(&oc, c->keystore)) != 0)
		return rc;
	snprintf(prompt, sizeof(prompt), "New keystore password for %s: ",
		 c->keystore);
	if ((rc = cli_pw_get(&e->pw, &c->storepass, prompt, "--storepass",
			     CLI_PW_NEW)) != 0)
		goto fail;
	if ((err = wks_store_new(&e->st)) < 0) {
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
		goto fail;
	}
	if ((rc = cli_store_iterations(e->st, c)) != 0)
		goto fail;
	e->created = 1;
	return 0;
fail:
	cli_store_edit_end(e);
	return rc;
}

/* keytool refuses a new store password shorter than 6 characters (Java
 * chars; code points here): such a store works, but a Java user cannot
 * give it that password again with keytool -storepasswd. */
void cli_warn_short_pw(const char *file, const cli_pw *pw, const char *what)
{
	size_t n = 0;

	for (size_t i = 0; i < pw->len; i++)
		n += ((unsigned char)pw->p[i] & 0xC0) != 0x80;
	if (n < 6)
		cli_err(file, "warning: the %s password has only %zu "
			"character%s; keytool requires at least 6", what, n,
			n == 1 ? "" : "s");
}

static void warn_short_pw(const char *file, const cli_pw *pw)
{
	cli_warn_short_pw(file, pw, "store");
}

int cli_store_edit_commit(cli_edit *e, cli_ctx *c, const cli_pw *new_pw)
{
	const cli_pw *pw = new_pw ? new_pw : &e->pw;
	int err, rc;

	if (e->created) {
		/* A store made by cli_store_edit_begin_or_create(): created
		 * exclusively, never over a file that appeared meanwhile. */
		cli_ctx oc = *c;

		oc.force = 0;
		if ((rc = cli_store_create(e->st, &oc, c->keystore, pw)) == 0)
			cli_note(c->keystore, "a new keystore was created");
		return rc;
	}
	/* Through the lock: only into the file that was locked and loaded
	 * (a symbolic link swapped in meanwhile is refused), and signals
	 * held while the file is replaced (cli_save_begin). */
	cli_save_begin(c->keystore);
	err = wks_store_save_locked(e->st, e->lock, pw->p, pw->len);
	/* The message first: a held signal may end wks in cli_save_end(). */
	rc = err < 0 ? cli_lib_err(c->keystore, NULL, err, "cannot save") : 0;
	if (rc == 0 && new_pw)
		warn_short_pw(c->keystore, new_pw);
	cli_save_end(c->keystore, err == WKS_OK);
	return rc;
}

void cli_store_edit_end(cli_edit *e)
{
	wks_store_free(e->st);
	cli_pw_clear(&e->pw);
	wks_lock_release(e->lock);
	*e = (cli_edit)CLI_EDIT_INIT;
}

int cli_store_create(wks_store *st, cli_ctx *c, const char *path,
		     const cli_pw *pw)
{
	wks_lock *lock = NULL;
	uint8_t *data = NULL;
	size_t len = 0;
	struct stat sb;
	int rc, err;

	if ((rc = cli_output_check(c, path)) != 0)
		return rc;
	warn_short_pw(path, pw);
	if (c->force && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		/* Replacing a store: as an edit would (under its lock; owner,
		 * group and mode kept). */
		err = wks_lock_acquire(&lock, path, WKS_LOCK_EXCLUSIVE);
		if (err == WKS_OK) {
			cli_save_begin(path);
			err = wks_store_save_locked(st, lock, pw->p, pw->len);
			rc = err < 0 ? cli_lib_err(path, NULL, err,
						   "cannot save") : 0;
			cli_save_end(path, err == WKS_OK);
			wks_lock_release(lock);
			return rc;
		}
		if (err != WKS_ERR_NOTFOUND) /* else: gone meanwhile */
			return cli_lib_err(path, NULL, err, NULL);
	}
	/* A new file: created exclusively (two creators cannot both win). */
	if ((err = wks_store_save_buffer(st, &data, &len, pw->p, pw->len)) < 0)
		return cli_lib_err(path, NULL, err, "cannot save");
	rc = cli_write_output(c, path, data, len, 1, 1);
	wks_free(data);
	return rc;
}

int cli_keypass(cli_pw *out, cli_ctx *c, const cli_pw *storepw,
		const char *alias)
{
	char prompt[512];
	char *da;

	if (c->keypass.kind != CLI_PWSRC_NONE || !storepw || !storepw->len) {
		int rc;

		da = alias ? cli_display(alias) : NULL;
		if (da)
			snprintf(prompt, sizeof(prompt),
				 "Key password for \"%s\": ", da);
		else
			snprintf(prompt, sizeof(prompt), "Key password: ");
		free(da);
		rc = cli_pw_get(out, &c->keypass, prompt, "--keypass", 0);
		if (rc == 0 && out->len == 0) {
			cli_err(NULL, "--keypass: the key password must not be "
				"empty");
			cli_pw_clear(out);
			rc = CLI_EXIT_USAGE;
		}
		return rc;
	}
	return cli_pw_dup(out, storepw);
}

int cli_check_alias_free(wks_store *st, cli_ctx *c, const char *alias)
{
	char *da;

	if (c->force || !wks_store_contains(st, alias))
		return 0;
	da = cli_display(alias);
	cli_err(c->keystore, "entry \"%s\" exists (use --force to replace it)",
		da ? da : "");
	free(da);
	return CLI_EXIT_EXISTS;
}

int cli_store_certs(STACK_OF(X509) **out, wks_store *st, const char *file,
		    const char *alias)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	size_t n = 0;
	int err;

	*out = NULL;
	if (!sk) {
		cli_err(file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((err = wks_store_cert_count(&n, st, alias)) < 0)
		goto lib_fail;
	for (size_t i = 0; i < n; i++) {
		X509 *x = NULL;

		if ((err = wks_store_get_cert(&x, st, alias, i)) < 0)
			goto lib_fail;
		if (!sk_X509_push(sk, x)) {
			X509_free(x);
			sk_X509_pop_free(sk, X509_free);
			cli_err(file, "out of memory");
			return CLI_EXIT_FAIL;
		}
	}
	*out = sk;
	return 0;
lib_fail:
	sk_X509_pop_free(sk, X509_free);
	return cli_lib_err(file, alias, err, NULL);
}

int cli_java_type(wks_keystore_type t)
{
	return t == WKS_KEYSTORE_JKS || t == WKS_KEYSTORE_JCEKS ||
	       t == WKS_KEYSTORE_BKS || t == WKS_KEYSTORE_BCFKS ||
	       t == WKS_KEYSTORE_UBER;
}

/* Why a keystore file is not WKS, and what to run instead (a Java
 * keystore or a PKCS#12 file given where a WKS store was expected). */
void cli_not_wks(const char *file, const uint8_t *data, size_t len)
{
	wks_keystore_type t = wks_keystore_detect(data, len);

	if (cli_java_type(t))
		cli_err(file, "this is a %s keystore; convert it with: wks "
			"import-keystore --srckeystore %s -k NEW.wks",
			wks_keystore_type_name(t), file);
	else if (t == WKS_KEYSTORE_PKCS12)
		cli_err(file, "not a WKS keystore (a PKCS#12 file?); import it "
			"with: wks import-keystore --srckeystore %s -k NEW.wks",
			file);
	else
		cli_err(file, "not a WKS keystore (bad magic number)");
}

void cli_keystore_note(const cli_ctx *c, const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;
	wks_keystore_type t;
	PKCS12 *p12 = NULL;
	const unsigned char *p;

	struct stat sb;

	/* Only a regular file is read again (standard input, a pipe or a
	 * FIFO could not be, or would wait). */
	if (!path || !strcmp(path, "-") || stat(path, &sb) != 0 ||
	    !S_ISREG(sb.st_mode) || cli_read_file(&data, &len, path) != 0)
		return;
	t = wks_keystore_detect(data, len);
	if (cli_java_type(t) || t == WKS_KEYSTORE_WKS) {
		cli_note(path, "this is a %s keystore; import its entries with: "
			 "wks import-keystore --srckeystore %s -k %s "
			 "[--srcalias ALIAS]", wks_keystore_type_name(t), path,
			 c->keystore ? c->keystore : "STORE");
	} else if (t == WKS_KEYSTORE_PKCS12 && len <= LONG_MAX) {
		p = data;
		p12 = d2i_PKCS12(NULL, &p, (long)len);
		if (p12 && p == data + len)
			cli_note(path, "this is a PKCS#12 file; import it with: "
				 "wks import-p12 --in %s -k %s [-a ALIAS]", path,
				 c->keystore ? c->keystore : "STORE");
		PKCS12_free(p12);
	}
	ERR_clear_error();
	cli_free_secret(data, len);
}
