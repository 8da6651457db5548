/*
 * Opening and saving the keystore for wks(1): every command that changes a
 * store goes through cli_store_edit_begin() (or _prepare() and _lock())
 * / _commit() / _end(), which read its passwords first and then hold the
 * store's exclusive advisory lock (cli_lock_wait, wks_lock_acquire) from
 * before the load until after the save, so that concurrent edits
 * serialise, none is lost, and none waits for another's prompt; new
 * stores are made by cli_store_create().
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

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

/* Read the store's file (a missing one, or one that is no WKS store, is
 * reported before any prompt) and get its password. */
static int read_pw(uint8_t **data, size_t *len, cli_pw *pw, cli_ctx *c,
		   int mode)
{
	char prompt[512];
	int rc;

	*data = NULL;
	*len = 0;
	cli_pw_clear(pw);
	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if ((rc = cli_read_file(data, len, c->keystore)) != 0)
		return rc;
	if (!wks_probe(*data, *len)) {
		cli_not_wks(c->keystore, *data, *len);
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
done:
	if (rc) {
		cli_pw_clear(pw);
		cli_free_secret(*data, *len);
		*data = NULL;
		*len = 0;
	}
	return rc;
}

/* Load the store with `pw`: from data[0..len), or with `lock` (an edit)
 * through the lock, from the very file that is locked. */
static int load(wks_store **out, const cli_pw *pw, cli_ctx *c,
		const uint8_t *data, size_t len, const wks_lock *lock)
{
	wks_store *st = NULL;
	int rc, err;

	/* Into *out if it is a store already (cli_store_edit_prekeys: keys
	 * made ahead, which a load keeps), else into a new one. */
	st = *out;
	*out = NULL;
	if (!st && (err = wks_store_new(&st)) < 0)
		return cli_lib_err(c->keystore, NULL, err, NULL);
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
	wks_store_free(st);
	return rc;
}

int cli_store_open(wks_store **out, cli_pw *pw, cli_ctx *c, int mode)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = read_pw(&data, &len, pw, c, mode)) != 0)
		return rc;
	if ((rc = load(out, pw, c, data, len, NULL)) != 0)
		cli_pw_clear(pw);
	cli_free_secret(data, len);
	return rc;
}

static int prepare_new(cli_edit *e, cli_ctx *c);

/* The key password of an edit, read now (before the lock): --keypass,
 * else the store password.  The edits that write key entries take it as a
 * new key password (UTF-8, as wolfJCE needs: cli_keypass_new); the
 * others' opens an existing key. */
static int edit_keypass(cli_edit *e, cli_ctx *c)
{
	/* By name, not by function: this file is also linked without the
	 * commands (fuzz_import). */
	static const char *const writers[] = {
		"import-key", "import-secret", "import-p12", "genkeypair",
		"import-keystore",
	};
	const char *name = c->cmd ? c->cmd->name : NULL;

	for (size_t i = 0; name && i < sizeof writers / sizeof *writers; i++)
		if (strcmp(name, writers[i]) == 0)
			return cli_keypass_new(&e->kp, c, &e->pw, c->alias);
	return cli_keypass(&e->kp, c, &e->pw, c->alias);
}

int cli_store_edit_prepare(cli_edit *e, cli_ctx *c)
{
	uint8_t *data = NULL;
	size_t len = 0;
	struct stat sb;
	int rc;

	*e = (cli_edit)CLI_EDIT_INIT;
	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if (stat(c->keystore, &sb) != 0) {
		cli_err(c->keystore, "cannot open: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	if (!S_ISREG(sb.st_mode)) {
		cli_err(c->keystore, "not a regular file: cannot edit it");
		return CLI_EXIT_IO;
	}
	/* The library refuses to save over a file the caller could not write
	 * (wks_store_save_file); say so before any password is asked. */
	if (faccessat(AT_FDCWD, c->keystore, W_OK, AT_EACCESS) != 0) {
		cli_err(c->keystore, "cannot write: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	/* Passwords first, the lock after them: an edit waiting at a prompt
	 * (or for a file: or fd: source) must not keep others waiting. */
	if ((rc = read_pw(&data, &len, &e->pw, c, CLI_STORE_VERIFY)) == 0)
		rc = edit_keypass(e, c);
	cli_free_secret(data, len);
	if (rc)
		cli_store_edit_end(e);
	return rc;
}

int cli_store_edit_lock(cli_edit *e, cli_ctx *c)
{
	int rc;

	if (e->created)
		return 0; /* a new store: created exclusively at commit */
	/* The lock, then the load: what is loaded is what the save
	 * replaces.  Read-only commands take no lock: a save never changes
	 * the file in place, so a reader sees the old or the new file,
	 * whole. */
	rc = cli_lock_wait(&e->lock, c->keystore, c);
	if (rc == WKS_ERR_NOTFOUND) {
		cli_err(c->keystore, "cannot open: %s", strerror(ENOENT));
		rc = CLI_EXIT_IO;
	} else if (rc < 0) {
		rc = cli_lib_err(c->keystore, NULL, rc, NULL);
	}
	if (rc == 0)
		rc = load(&e->st, &e->pw, c, NULL, 0, e->lock);
	if (rc)
		cli_store_edit_end(e);
	return rc;
}

int cli_store_edit_peek(wks_store **out, cli_edit *e, cli_ctx *c)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = cli_read_file(&data, &len, c->keystore)) != 0)
		return rc;
	rc = load(out, &e->pw, c, data, len, NULL);
	cli_free_secret(data, len);
	return rc;
}

int cli_store_edit_prekeys(cli_edit *e, cli_ctx *c, size_t n, int *prepared)
{
	int err, rc;

	*prepared = 0;
	/* A new store takes no lock: the import's own batch will do. */
	if (e->created || e->st || n < 2)
		return 0;
	if ((err = wks_store_new(&e->st)) < 0)
		return cli_lib_err(c->keystore, NULL, err, NULL);
	if ((rc = cli_store_iterations(e->st, c)) != 0)
		return rc;
	/* If this fails, each set derives its own key, as before. */
	*prepared = wks_store_prepare_keys(e->st, e->kp.p, e->kp.len,
					   n < 1024 ? n : 1024) == WKS_OK;
	return 0;
}

int cli_store_edit_begin(cli_edit *e, cli_ctx *c)
{
	int rc;

	if ((rc = cli_store_edit_prepare(e, c)) != 0)
		return rc;
	return cli_store_edit_lock(e, c);
}

int cli_store_edit_begin_or_create(cli_edit *e, cli_ctx *c)
{
	int rc;

	if ((rc = cli_store_edit_prepare_any(e, c)) != 0)
		return rc;
	return cli_store_edit_lock(e, c);
}

int cli_store_edit_prepare_any(cli_edit *e, cli_ctx *c)
{
	struct stat sb;
	int rc;

	*e = (cli_edit)CLI_EDIT_INIT;
	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	if (lstat(c->keystore, &sb) == 0 || errno != ENOENT)
		return cli_store_edit_prepare(e, c);
	return prepare_new(e, c);
}

static int prepare_new(cli_edit *e, cli_ctx *c)
{
	cli_ctx oc = *c;
	char prompt[512];
	int rc, err;

	*e = (cli_edit)CLI_EDIT_INIT;
	/* --force replaces entries, never a store that appears meanwhile. */
	oc.force = 0;
	if ((rc = cli_output_check(&oc, c->keystore)) != 0)
		return rc;
	snprintf(prompt, sizeof(prompt), "New keystore password for %s: ",
		 c->keystore);
	if ((rc = cli_pw_get(&e->pw, &c->storepass, prompt, "--storepass",
			     CLI_PW_NEW)) != 0 ||
	    (rc = cli_java_password_check(c, &e->pw, c->keystore,
					  "--storepass", "store")) != 0)
		goto fail;
	if ((err = wks_store_new(&e->st)) < 0) {
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
		goto fail;
	}
	if ((rc = cli_store_iterations(e->st, c)) != 0 ||
	    (rc = edit_keypass(e, c)) != 0)
		goto fail;
	e->created = 1;
	return 0;
fail:
	cli_store_edit_end(e);
	return rc;
}

/* keytool refuses a new store password shorter than 6 characters (Java
 * chars; code points here): such a store works, but a Java user cannot
 * give it that password again with keytool -storepasswd.  And wolfJCE on
 * a FIPS build of wolfCrypt cannot use a password of fewer than 14 bytes
 * at all (the minimum HMAC key length of its PBKDF2). */
void cli_warn_short_pw(const char *file, const cli_pw *pw, const char *what)
{
	size_t n = 0;

	for (size_t i = 0; i < pw->len; i++)
		n += ((unsigned char)pw->p[i] & 0xC0) != 0x80;
	if (n < 6)
		cli_err(file, "warning: the %s password has only %zu "
			"character%s; keytool requires at least 6, and "
			"wolfJCE on a FIPS build of wolfCrypt at least 14 "
			"bytes", what, n, n == 1 ? "" : "s");
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
	cli_pw_clear(&e->kp);
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
		/* Replacing the caller's own store (cli_output_check()
		 * refused another user's): as an edit would, under its lock,
		 * group and mode kept.  The file locked is checked again: one
		 * swapped in before the lock was taken is not the caller's
		 * to keep the owner of. */
		if ((err = cli_lock_wait(&lock, path, c)) == CLI_EXIT_BUSY)
			return err;
		if (err == WKS_OK && stat(path, &sb) == 0 &&
		    sb.st_uid != geteuid()) {
			wks_lock_release(lock);
			cli_err(path, "is owned by another user (uid %ju): not "
				"replaced, even with --force",
				(uintmax_t)sb.st_uid);
			return CLI_EXIT_IO;
		}
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

int cli_keypass_new(cli_pw *out, cli_ctx *c, const cli_pw *storepw,
		    const char *alias)
{
	int rc = cli_keypass(out, c, storepw, alias);

	/* A copy of the store password is the store's: checked when that
	 * was new, used as it is otherwise. */
	if (rc == 0 && (c->keypass.kind != CLI_PWSRC_NONE || !storepw ||
			!storepw->len) &&
	    (rc = cli_java_password_check(c, out, c->keystore ? c->keystore
					  : c->out, "--keypass", "key")) != 0)
		cli_pw_clear(out);
	return rc;
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

/* The first PEM block's label ("PRIVATE KEY", "CERTIFICATE") into out,
 * or "" if data holds no "-----BEGIN " line. */
static void pem_label(char *out, size_t n, const uint8_t *data, size_t len)
{
	static const char begin[] = "-----BEGIN ";
	const size_t bl = sizeof(begin) - 1;

	out[0] = 0;
	for (size_t i = 0; i + bl <= len; i++) {
		size_t j = i + bl, k = 0;

		if ((i && data[i - 1] != '\n') || memcmp(data + i, begin, bl))
			continue;
		while (j < len && k + 1 < n && data[j] >= 'A' && data[j] <= 'Z') {
			out[k++] = (char)data[j++];
			if (j < len && data[j] == ' ' && k + 1 < n)
				out[k++] = (char)data[j++];
		}
		out[k] = 0;
		return;
	}
}

/* Why a keystore file is not WKS, and what to run instead (a Java
 * keystore, a PKCS#12 file, a PEM key or certificate given where a WKS
 * store was expected; an empty file). */
void cli_not_wks(const char *file, const uint8_t *data, size_t len)
{
	char label[64];

	pem_label(label, sizeof(label), data, len);
	if (len == 0) {
		cli_err(file, "the file is empty: not a WKS keystore (wks create "
			"--force -k %s makes a new store there)", file);
	} else if (strstr(label, "PRIVATE KEY")) {
		cli_err(file, "not a WKS keystore: a PEM private key; import it "
			"into a store with: wks import-key -k STORE.wks -a ALIAS "
			"--key %s --chain CERTS", file);
	} else if (!strcmp(label, "CERTIFICATE") ||
		   !strcmp(label, "TRUSTED CERTIFICATE") ||
		   !strcmp(label, "PKCS7")) {
		cli_err(file, "not a WKS keystore: PEM certificates; import them "
			"with: wks import-cert -k STORE.wks -a ALIAS --cert %s (a "
			"CA bundle: wks import-certs --in %s; a new store: wks "
			"create -k STORE.wks)", file, file);
	} else if (label[0]) {
		cli_err(file, "not a WKS keystore: a PEM file (%s)", label);
	} else if (!cli_foreign_store_err(file, data, len))
		cli_err(file, "not a WKS keystore (bad magic number)");
}

int cli_export_iterations(wks_store *st, const cli_ctx *c)
{
	char buf[32];
	long v;

	if (c->has_iterations)
		return (int)c->iterations;
	if (wks_get_property(buf, sizeof(buf), st,
			     "wolfjce.wks.iterationCount") != WKS_OK)
		return 210000;
	v = strtol(buf, NULL, 10);
	return v >= 10000 && v <= INT32_MAX ? (int)v : 210000;
}
