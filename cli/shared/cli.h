/*
 * wks(1) - the command-line tool of libwks: shared declarations.
 *
 * Layout (cli/README.md): main.c holds the command table and the option
 * parser; every subcommand lives in cmd/cmd_<verb>.c; shared/ (with this
 * header) holds the pieces they share: util.c (messages, files,
 * escaping), password.c (password sources and the prompt), store.c
 * (opening and saving the keystore), pki.c (keys and certificates through
 * OpenSSL), pkcs12.c (PKCS#12, read and written by the library) and the
 * rest.  The tool uses only the public API of wks.h and wks/convert.h
 * (Java keystores and PKCS#12: src/convert/) and OpenSSL.
 */
#ifndef WKS_CLI_H
#define WKS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wks/wks.h"

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/*
 * Exit statuses.  Documented in `wks --help`, wks(1) and docs/CLI.md; keep
 * the three in step.
 */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAIL = 1,      /* verify found bad entries; other failures */
	CLI_EXIT_USAGE = 2,     /* bad command line, or no password source */
	CLI_EXIT_NOTFOUND = 3,  /* no such alias */
	CLI_EXIT_INTEGRITY = 4, /* a MAC failed: wrong password or modified */
	CLI_EXIT_MALFORMED = 5, /* unparsable store, key, certificate, P12 */
	CLI_EXIT_IO = 6,        /* a file could not be read or written */
	CLI_EXIT_EXISTS = 7,    /* alias or output file exists (no --force) */
	CLI_EXIT_INVALID = 8,   /* rejected: key/certificate mismatch, broken
	                         * chain, wrong entry type, unsupported */
	CLI_EXIT_LIMIT = 9,     /* a configured limit was exceeded */
	CLI_EXIT_BUSY = 10      /* the store stayed locked by another edit
	                         * for --wait SECONDS: nothing changed */
};

/* ---- passwords (password.c) ------------------------------------------- */

/* A password: `len` bytes at `p` (NUL-terminated too), heap memory that
 * cli_pw_clear() wipes and frees. */
typedef struct {
	char *p;
	size_t len;
} cli_pw;

#define CLI_PW_INIT { NULL, 0 }

/* Where a password comes from: pass:TEXT, env:VAR, file:PATH, fd:N, stdin,
 * or (not given) the terminal. */
typedef enum {
	CLI_PWSRC_NONE = 0,
	CLI_PWSRC_PASS,
	CLI_PWSRC_ENV,
	CLI_PWSRC_FILE,
	CLI_PWSRC_FD,
	CLI_PWSRC_STDIN
} cli_pwsrc_kind;

typedef struct {
	cli_pwsrc_kind kind;
	const char *option; /* "--storepass", for messages */
	char *value;        /* pass: a heap copy of the text (wiped);
	                     * env/file: the name; fd: the number */
	int fd;
} cli_pwsrc;

/* Parse a source spec from the command line.  For pass:TEXT the text is
 * copied and the argv string is overwritten.  Returns 0 or CLI_EXIT_USAGE. */
int cli_pwsrc_parse(cli_pwsrc *src, const char *option, char *arg);
void cli_pwsrc_clear(cli_pwsrc *src);

/* Flags for cli_pw_get(). */
#define CLI_PW_NEW 1      /* a new password: confirm at the prompt,
                           * refuse empty */
#define CLI_PW_OPTIONAL 2 /* no source and no terminal: return an empty
                           * password instead of failing */
#define CLI_PW_EMPTY_OK 4 /* a source may give an empty password (a
                           * PKCS#12 file's); without it an empty one is
                           * a usage error */

/*
 * Get a password from `src`, or from the terminal (/dev/tty, echo off)
 * with `prompt` when no source was given.  Without a terminal it fails
 * with a message naming `option` (CLI_EXIT_USAGE), unless
 * CLI_PW_OPTIONAL.  Returns 0 or an exit status (message printed).
 */
int cli_pw_get(cli_pw *out, const cli_pwsrc *src, const char *prompt,
	       const char *option, int flags);
int cli_pw_dup(cli_pw *out, const cli_pw *in);
void cli_pw_clear(cli_pw *pw);

/* 1 if a terminal can be opened for a prompt. */
int cli_have_tty(void);

/* ---- the parsed command line (main.c) -------------------------------- */

struct cli_cmd;

typedef struct {
	const struct cli_cmd *cmd;
	const char *keystore, *alias, *new_alias, *out, *key, *cert, *in;
	const char *algorithm, *generate;
	const char **chain;
	size_t chain_count;
	cli_pwsrc storepass, keypass, new_storepass, new_keypass;
	cli_pwsrc inpass, outpass, hex;
	int json, der, pem, verbose, force, leaf, no_storepass, encrypt;
	int no_mac_ok;
	int has_iterations;
	long iterations;
	/* h10 (issue 11 items 5-8): */
	int strict_java;       /* --strict-java */
	int allow_non_utf8;    /* --allow-non-utf8-password */
	int store_only;        /* passwd --store-only */
	int change_keys;       /* passwd --keys */
	struct cli_keypass_for *keypass_for; /* --keypass-for ALIAS=SRC */
	size_t keypass_for_count;
	/* h9 (issue 11 item 4): genkeypair, certreq, printcert */
	const char *keyalg, *keysize, *curve, *dname, *validity, *sigalg;
	const char *file;
	const char **ext;      /* --ext (repeatable) */
	size_t ext_count;
	/* h8 (issue 11 items 2-3): import-certs */
	const char *alias_prefix; /* --alias-prefix */
	/* h7 (issue 11 item 1): import-keystore */
	const char *srckeystore, *srcstoretype, *srcalias, *destalias;
	cli_pwsrc srcstorepass, srckeypass;
	/* export-key --reference (cli/shared/reference.c) */
	int reference;
	const char *ref_storepass, *ref_keypass; /* sources, as given */
	const char *deststoretype; /* convert --deststoretype */
	/* edits: --wait SECONDS for another edit's lock (lockwait.c) */
	int has_wait;
	long wait_s;
} cli_ctx;

typedef int (*cli_cmd_fn)(cli_ctx *c);

typedef struct cli_cmd {
	const char *name;
	cli_cmd_fn run;
	uint64_t options;    /* bit (1 << opt id) per accepted option */
	const char *summary; /* one line for `wks --help` */
	const char *usage;   /* the text of `wks CMD --help` */
} cli_cmd;

int cmd_create(cli_ctx *c);
int cmd_list(cli_ctx *c);
int cmd_import_key(cli_ctx *c);
int cmd_import_cert(cli_ctx *c);
int cmd_import_secret(cli_ctx *c);
int cmd_import_p12(cli_ctx *c);
int cmd_export_p12(cli_ctx *c);
int cmd_export_key(cli_ctx *c);
/* export-key --reference: a key reference file (cli/shared/reference.c). */
int cli_export_reference(cli_ctx *c);
/* check-reference: read one as a server would (cmd_check_reference.c). */
int cmd_check_reference(cli_ctx *c);
int cmd_export_cert(cli_ctx *c);
int cmd_delete(cli_ctx *c);
int cmd_rename(cli_ctx *c);
int cmd_passwd(cli_ctx *c);
int cmd_keypasswd(cli_ctx *c);
int cmd_verify(cli_ctx *c);
int cmd_convert(cli_ctx *c);
int cmd_import_certs(cli_ctx *c); /* h8 */
int cmd_import_keystore(cli_ctx *c); /* h7 */
/* wks convert of a JKS, JCEKS, BKS or BCFKS file (cmd_import_keystore.c):
 * --in with --inpass (and --srckeypass) into a new WKS store --out
 * (--outpass). */
int cli_convert_java(cli_ctx *c, const uint8_t *data, size_t len);
/* "not a WKS keystore" for --keystore FILE, naming what it is and the
 * command that converts it (Java keystores, PKCS#12). */
void cli_not_wks(const char *file, const uint8_t *data, size_t len);

/* ---- messages, files, text (util.c) ----------------------------------- */

/* "wks: FILE: message" (or "wks: message" when file is NULL) on stderr. */
void cli_err(const char *file, const char *fmt, ...) CLI_PRINTF(2, 3);
/* "wks: FILE: note: message". */
void cli_note(const char *file, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Exit status for a libwks error code. */
int cli_exit_for(int err);

/*
 * Report a failed libwks call about `file` (and `alias` if not NULL):
 * prints one line with the library's detail and returns the exit status.
 */
int cli_lib_err(const char *file, const char *alias, int err,
		const char *what);


/* Report the crypto library's last error after `fmt` (OpenSSL's error
 * queue, which this clears; wolfCrypt: `fmt` alone).  Returns `status`. */
int cli_ssl_err(int status, const char *file, const char *fmt, ...)
	CLI_PRINTF(3, 4);

/* Require option `name` (value `v`).  Returns 0 or CLI_EXIT_USAGE. */
int cli_need(const char *v, const char *name);

/* Read a whole file ("-" is stdin) into a heap buffer, which the caller
 * frees with cli_free_secret() when it may hold secrets.  At most
 * libwks.wks.maxFileSize bytes (a regular file by its size, stdin and
 * FIFOs as they are read; more is CLI_EXIT_LIMIT).  Returns 0 or an exit
 * status (message printed). */
int cli_read_file(uint8_t **out, size_t *out_len, const char *path);
/* Open an input file (cli_read_file(), file: passwords) for reading:
 * never waits in open() on a FIFO that is not the caller's (refused: its
 * writer would choose what is read); the caller's own FIFO is opened
 * again, blocking, to wait for its writer; a directory is refused.
 * Returns the descriptor, or -1 with a message and *rc set. */
int cli_open_input(const char *path, int *rc);
/* The same, its messages naming `name` ("--storepass file:PATH") instead
 * of the path. */
int cli_open_input_as(const char *path, const char *name, int *rc);
void cli_free_secret(void *p, size_t len);

/*
 * May the command write its output to `path`?  Never over one of its
 * inputs (--keystore, --in; compared by device and inode, so a symbolic or
 * hard link to one is caught too), not even with --force (CLI_EXIT_USAGE);
 * anything that exists only with --force (else CLI_EXIT_EXISTS), and only
 * if it is a regular file of the caller's own that the caller may write,
 * or a FIFO of the caller's own or a character device, which are written
 * into, not replaced (else CLI_EXIT_IO: a directory, a socket, another
 * user's regular file or FIFO even with --force, even for root).  NULL and "-" (standard output) are allowed.  Called early, to
 * fail before any password is asked; cli_write_output() checks again.
 * Returns 0 or an exit status (message printed).
 */
int cli_output_check(const cli_ctx *c, const char *path);

/*
 * Write output to `path` (NULL or "-": stdout) after cli_output_check().
 * A file is written whole to a temporary file in its folder (mode 0600
 * when `secret`, else 0644 less the umask), fsynced, and then published
 * exclusively with link(): an output that appeared meanwhile is never
 * replaced without --force (CLI_EXIT_EXISTS).  With --force the caller's
 * own existing file is replaced by rename with a new file of the caller's
 * that keeps its group (and, unless `secret`, its permission bits), or
 * the write fails (CLI_EXIT_IO); another user's file is refused.  Binary data is never written to a
 * terminal.  Returns 0 or an exit status.
 */
int cli_write_output(const cli_ctx *c, const char *path, const uint8_t *data,
		     size_t len, int binary, int secret);

/*
 * Around replacing a file (the store's save, an output file): between
 * cli_save_begin() and cli_save_end() SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * are held, so that no temporary file is left and the exit status tells
 * whether the change was made.  cli_save_end(file, committed): with
 * `committed` a signal that came meanwhile is discarded with a note (the
 * change is in the file; wks goes on and exits 0); otherwise it is
 * delivered now (wks ends with 128 + the signal, nothing changed).
 */
void cli_save_begin(const char *file);
void cli_save_end(const char *file, int committed);
/* 1 once a cli_save_end(file, 1) committed a change (a store saved, an
 * output file written): from then on a report that cannot be written to
 * standard output is a warning, not a failure (main.c). */
int cli_saved(void);
/* Tests: WKS_TEST_PAUSE_AT=STEP:FIFO waits at STEP ("save" before the
 * signals are held, "saving" after, "saved"/"unsaved" before they are
 * released): writes "STEP\n" into FIFO, then reads it until EOF. */
void cli_test_pause(const char *step);

/* An alias (or other modified-UTF-8 text from libwks) as printable text:
 * control characters, U+0000 and lone surrogates are escaped (\n, \0,
 * \x01, \udc80).  Returns a static-per-call heap string; free() it. */
char *cli_display(const char *s);
/* The same for text that escapes its backslashes itself (OpenSSL's
 * RFC 2253 names): backslashes are left as they are. */
char *cli_display_escaped(const char *s);

/* Append `s` as a JSON string literal (quotes included) to `f`. */
void cli_json_string(FILE *f, const char *s);

/* Lowercase hex of `len` bytes into `out` (2*len+1 bytes); `sep` (0 for
 * none) between bytes, uppercase when sep != 0 (fingerprint style). */
void cli_hex(char *out, const uint8_t *data, size_t len, char sep);

/* Decode hex (whitespace and ':' ignored).  Returns 0 or -1. */
int cli_unhex(uint8_t **out, size_t *out_len, const char *s, size_t slen);

/* Compare n bytes in constant time: 0 if equal (CRYPTO_memcmp). */
int cli_memeq_ct(const void *a, const void *b, size_t n);
/* SHA-256 of data as lowercase hex (65 bytes). */
void cli_sha256_hex(char out[65], const uint8_t *data, size_t len);

/* "2024-05-01 12:00:00 UTC" for a creation time in ms. */
void cli_format_time(char *out, size_t out_len, int64_t ms);

/* ---- the keystore (store.c) ------------------------------------------- */

/* How cli_store_open() treats a missing store password. */
enum {
	CLI_STORE_VERIFY,  /* required: prompt, or fail without a terminal */
	CLI_STORE_OPTIONAL /* read-only use: skip the integrity check (and
	                    * say so) when no password is at hand */
};

/*
 * Load the store named by --keystore.  The password comes from
 * --storepass or the prompt; on success *pw holds it (empty if the
 * integrity check was skipped) and the store has --iterations applied.
 */
int cli_store_open(wks_store **out, cli_pw *pw, cli_ctx *c, int mode);

/*
 * An edit of the store named by --keystore (every command that changes a
 * store):
 *
 *     cli_edit e;
 *     if ((rc = cli_store_edit_begin(&e, c)) != 0)
 *             return rc;              (nothing to end)
 *     ... change e.st ...
 *     rc = cli_store_edit_commit(&e, c, NULL);
 *     cli_store_edit_end(&e);
 *
 * begin is prepare, then lock.  prepare refuses a store the caller could
 * not write (CLI_EXIT_IO, "Permission denied") or that is no WKS store,
 * and reads the passwords: the store's (e.pw; --storepass or the prompt)
 * and the key password (e.kp: --keypass, else the store password).  A
 * command that needs more passwords (new ones, a source's) reads them
 * after prepare and before lock, so that no edit holds the lock while it
 * waits at a prompt.  lock takes the store's exclusive advisory lock
 * (cli_lock_wait: it waits while another edit holds it, saying so after a
 * second; --wait bounds that, CLI_EXIT_BUSY) and loads the store
 * through it with e.pw (e.st), --iterations applied.  commit saves e.st
 * to --keystore with `new_pw` (NULL: e.pw), still under the lock; end
 * frees everything and releases the lock.  Each returns 0 or an exit
 * status (message printed); after a failed begin, prepare or lock, e is
 * already ended.
 */
typedef struct {
	wks_store *st;
	cli_pw pw;
	cli_pw kp;   /* the key password (cli_keypass), read by prepare */
	wks_lock *lock;
	int created; /* a new store (cli_store_edit_begin_or_create) */
} cli_edit;

#define CLI_EDIT_INIT { NULL, CLI_PW_INIT, CLI_PW_INIT, NULL, 0 }

int cli_store_edit_begin(cli_edit *e, cli_ctx *c);
int cli_store_edit_prepare(cli_edit *e, cli_ctx *c);
int cli_store_edit_lock(cli_edit *e, cli_ctx *c);
/*
 * Between prepare and lock: *out is --keystore loaded (MAC checked) with
 * e->pw without the lock, for work that must not hold the lock while it
 * runs (key derivations: passwd, keypasswd); what it yields is applied
 * under the lock to the store loaded again (wks_rekey_apply refuses an
 * entry that changed meanwhile).  0 or an exit status (message printed).
 */
int cli_store_edit_peek(wks_store **out, cli_edit *e, cli_ctx *c);
/*
 * Between prepare and lock, for an import of n key entries with e->kp:
 * their keys derived now as one batch over every lane and core
 * (wks_store_prepare_keys) into e->st, which lock then loads the store
 * into (a load keeps them), so that the lock is not held while they are
 * derived.  *prepared is 1 if they were (the import then asks for no
 * more).  Nothing is done for a new store (no lock) or n < 2.  0 or an
 * exit status (message printed).
 */
int cli_store_edit_prekeys(cli_edit *e, cli_ctx *c, size_t n, int *prepared);
/*
 * The same for the import commands, which create a store that does not
 * exist (as keytool -importcert does, and genkeypair, import-certs and
 * import-keystore): its password comes from --storepass or is asked
 * twice (never empty); e.st is then a new empty store (--iterations
 * applied; lock does nothing) and commit creates the file exclusively,
 * mode 0600, as cli_store_create() does (--force does not replace a file
 * that appeared meanwhile), with the note "a new keystore was created".
 * commit warns when a new store password (a created store, passwd) is
 * shorter than keytool allows.  prepare_any is prepare or the new store.
 */
int cli_store_edit_begin_or_create(cli_edit *e, cli_ctx *c);
int cli_store_edit_prepare_any(cli_edit *e, cli_ctx *c);
int cli_store_edit_commit(cli_edit *e, cli_ctx *c, const cli_pw *new_pw);
void cli_store_edit_end(cli_edit *e);

/*
 * Save the new store `st` to `path` (create, convert): after
 * cli_output_check(), a new file is created exclusively (mode 0600; a
 * file that appeared meanwhile is CLI_EXIT_EXISTS); with --force an
 * existing store is replaced under its lock by wks_store_save_file()
 * (owner, group and mode kept).  Returns 0 or an exit status.
 */
int cli_store_create(wks_store *st, cli_ctx *c, const char *path,
		     const cli_pw *pw);

/* After a key or certificate file failed to parse: if `path` (a regular
 * file) is a keystore, a note naming the command that imports it
 * (import-keystore for JKS, JCEKS and WKS; import-p12 for PKCS#12). */
void cli_keystore_note(const cli_ctx *c, const char *path);

/* Warn when a new `what` ("store", "key") password is shorter than the 6
 * characters keytool requires (the store still works). */
void cli_warn_short_pw(const char *file, const cli_pw *pw, const char *what);

/*
 * Take the exclusive lock of the store `path` (wks_lock_acquire) for an
 * edit, waiting while another process holds it: after about a second a
 * note on stderr says so, with the holder's pid and name where
 * /proc/locks tells them; with --wait SECONDS (c->has_wait) it gives up
 * after that long with a message and CLI_EXIT_BUSY.  Returns 0,
 * CLI_EXIT_BUSY, or a wks_err (< 0, no message printed: the caller
 * reports it; WKS_ERR_NOTFOUND when the file is gone) (lockwait.c).
 */
int cli_lock_wait(wks_lock **out, const char *path, const cli_ctx *c);

/* Apply --iterations to `st`.  Returns 0 or an exit status. */
int cli_store_iterations(wks_store *st, cli_ctx *c);

/* The key password: --keypass, else a copy of `storepw` (if not empty),
 * else the prompt. */
int cli_keypass(cli_pw *out, cli_ctx *c, const cli_pw *storepw,
		const char *alias);
/* The same for a key entry being made (imports, genkeypair): a --keypass
 * is a new key password (cli_java_password_check). */
int cli_keypass_new(cli_pw *out, cli_ctx *c, const cli_pw *storepw,
		    const char *alias);

/* Fail with CLI_EXIT_EXISTS unless --force when `alias` is in `st`. */
int cli_check_alias_free(wks_store *st, cli_ctx *c, const char *alias);


/* PEM or DER encodings into a heap buffer (free with OPENSSL_free via
 * cli_free_secret or free()). */
int cli_pem_encode(uint8_t **out, size_t *out_len, const char *name,
		   const uint8_t *der, size_t der_len);


/* The PBKDF2 iteration count of an export (PKCS#12, encrypted key):
 * --iterations, else the store's wolfjce.wks.iterationCount (what libwks
 * would save the store with: 210000 unless configured). */
int cli_export_iterations(wks_store *st, const cli_ctx *c);

/* After an import: "Imported private key entry "x" with a chain of 2"
 * (stdout). */
void cli_say_imported(wks_store *st, const char *alias);
/*
 * The report of a whole-store import or conversion (import-keystore,
 * import-p12, convert), one line per entry and a summary, on stdout:
 *   imported: "a" (private key, 2 certificates)
 *   imported: "s" as "t" (secret key, AES 256 bits)
 *   skipped: "c" (trusted certificate): why
 *   3 entries: 2 imported, 1 skipped
 * `verb` is "imported" or "exported"; `as` (may be NULL) the new alias;
 * `skip` (NULL: done) why the entry was left out.
 */
void cli_say_entry(const char *verb, const char *alias, const char *as,
		   wks_entry_type type, size_t ncerts, const char *algorithm,
		   size_t key_len, const char *skip);
void cli_say_summary(const char *verb, size_t done, size_t skipped);

/* ---- keytool habits (habits.c) ----------------------------------------- */

/* If `arg` is a keytool-style single-dash option ("-keystore"), print
 * "did you mean --keystore" for command `cmd` (applies(name): does the
 * command take --name) and return CLI_EXIT_USAGE; else 0. */
int cli_keytool_hint(const char *cmd, const char *arg,
		     int (*applies)(const char *name));
/* If `word` (an unknown command) is keytool's ("-list", "importkeystore",
 * "storepasswd", ...), print "did you mean wks list" (or what to use
 * instead) and return CLI_EXIT_USAGE; else 0. */
int cli_keytool_command(const char *word);

/* ---- what Java can read (javacompat.c) --------------------------------- */

/*
 * Call before putting a private key (PKCS#8 DER; NULL for a secret key)
 * under `alias` into a store (import-key, import-p12, convert,
 * import-keystore, genkeypair ...).  wolfJCE's getKey() rebuilds only RSA,
 * RSASSA-PSS, EC, ML-DSA and SLH-DSA keys, and never returns an entry
 * under the empty alias: either case prints a warning naming `alias`, or
 * with --strict-java (c->strict_java) an error.  Returns 0 or
 * CLI_EXIT_INVALID (message printed; the caller must then leave the store
 * unchanged).
 */
int cli_java_check(cli_ctx *c, const char *file, const char *alias,
		   const uint8_t *pkcs8, size_t pkcs8_len);
/*
 * Call with every new store or key password (create, passwd, keypasswd,
 * an import that creates a store or sets --keypass): wolfJCE encodes
 * Java's passwords as UTF-8, so one that is not valid UTF-8 is refused
 * (CLI_EXIT_USAGE, naming `option`; `what` is "store" or "key"), or with
 * --allow-non-utf8-password taken with a warning.  Passwords that open
 * existing stores are never checked: they are used as given.
 */
int cli_java_password_check(const cli_ctx *c, const cli_pw *pw,
			    const char *file, const char *option,
			    const char *what);
/* ---- per-key passwords (keypass.c) ------------------------------------- */

struct cli_keypass_for; /* one --keypass-for ALIAS=SRC */

/* Parse --keypass-for ALIAS=SRC (the first '=' that a password source
 * follows splits it).  Returns 0 or an exit status. */
int cli_keypass_for_add(cli_ctx *c, char *arg);
void cli_keypass_for_clear(cli_ctx *c);
/* 1 if --keypass-for names `alias`. */
int cli_keypass_for_has(const cli_ctx *c, const char *alias);
/* The --keypass-for password of `alias` (read from its source the first
 * time; *pw is borrowed): 1, 0 when none was given, or a negated exit
 * status when reading it failed (message printed). */
int cli_keypass_for_get(const cli_pw **pw, const char *alias);
/* The alias of the i-th --keypass-for, or NULL past the last. */
const char *cli_keypass_for_alias(const cli_ctx *c, size_t i);

#define CLI_KEY_QUIET 1    /* print nothing on failure (verify) */
#define CLI_KEY_NOPROMPT 2 /* never ask on the terminal */

/*
 * Open key entry `alias` of `st` the keytool way: with its --keypass-for
 * password if one was given (only that), else with `keypw` (--keypass, or
 * the store password) and then `storepw` (may be NULL).  When none opens
 * it and a terminal is at hand, its password is asked for, naming the
 * alias (3 tries); otherwise the command fails naming the alias and
 * --keypass-for (CLI_EXIT_INTEGRITY).  *lib_err (may be NULL) gets the
 * last libwks code.  Returns 0 or an exit status.
 */
int cli_key_get(wks_key **out, wks_store *st, const char *file,
		const char *alias, const cli_pw *keypw, const cli_pw *storepw,
		int flags, int *lib_err);
/* Whole-store exports (export-p12 without -a, convert): `storepw` (kept
 * by the caller; NULL to stop) is tried after --keypass for every key,
 * as verify does.  A single-entry export obeys --keypass alone. */
void cli_key_fallback(const cli_pw *storepw);

/* 1 if wolfJCE can load this PKCS#8 key; `name` gets its algorithm
 * ("ED25519", "RSA", or the OID). */
int cli_java_key_name(char *name, size_t name_len, const uint8_t *pkcs8,
		      size_t pkcs8_len);

/* ---- key pairs, requests, printing (h9: certgen.c, certfile.c,
 * cmd_genkeypair.c, cmd_certreq.c, cmd_printcert.c, reply.c) ---------- */

int cmd_genkeypair(cli_ctx *c);
int cmd_certreq(cli_ctx *c);
int cmd_printcert(cli_ctx *c);

/* Remember one --ext value (repeatable).  Returns 0 or an exit status. */
int cli_ext_add(cli_ctx *c, const char *value);

/* 1 if data holds a PEM "-----BEGIN " line anywhere. */
int cli_has_pem(const uint8_t *data, size_t len);


/* ---- what differs per crypto backend (backend_openssl.c,
 * backend_wolfcrypt.c; cli/CMakeLists.txt picks one by WKS_CRYPTO) ---- */

/* Wipe n bytes at p (not optimized away). */
void cli_cleanse(void *p, size_t n);
/* SHA-256 of data[0..len) into md.  Returns 0, or -1 on failure. */
int cli_sha256(uint8_t md[32], const uint8_t *data, size_t len);
/* n random bytes for a key (the backend's DRBG).  Returns 0 or -1. */
int cli_random_key(uint8_t *out, size_t n);
/* Drop what the crypto library queued about errors. */
void cli_crypto_clear(void);
/* "OpenSSL 3.0.x ..." or "wolfSSL 5.5.4": for --version. */
const char *cli_crypto_version(void);
/* verify: does the decrypted private key `key` of entry `alias` match
 * its leaf certificate?  NULL if it does (or cannot be told, with a
 * note in msg), else the failure class ("key_mismatch", "malformed")
 * with msg saying why. */
const char *cli_check_key_leaf(char *msg, size_t msg_len, wks_store *st,
			       const char *alias, wks_key *key);
/* Encrypt the PKCS#8 key der[0..der_len) under `pw` (PBES2: AES-256-CBC,
 * PBKDF2, `iter` iterations) for export-key --encrypt.  Returns 0 or an
 * exit status (message printed). */
int cli_pkcs8_encrypt(uint8_t **out, size_t *out_len, const uint8_t *der,
		      size_t der_len, const cli_pw *pw, int iter,
		      const char *file);
/* An entry's certificates, for list: loaded (0 or an exit status,
 * message printed), counted, the i-th one's key described (as
 * cli_key_desc: "RSA 2048", "EC P-256", "ED25519"; i past the end: "no certificate") and printed with
 * its details (list -v; only where cli_have_cert_details() is 1). */
typedef struct cli_chain cli_chain;
int cli_chain_load(cli_chain **out, wks_store *st, const char *file,
		   const char *alias);
int cli_chain_count(const cli_chain *ch);
void cli_chain_key_desc(char *out, size_t out_len, const cli_chain *ch,
			int i);
void cli_chain_print(FILE *f, const cli_chain *ch, int i, int indent);
void cli_chain_free(cli_chain *ch);
/* 1 if this build prints certificate details (list -v, list --json). */
int cli_have_cert_details(void);
/* list --json: the "certificates" array's n objects of entry `alias`
 * (null for one that cannot be parsed). */
void cli_json_certs(FILE *f, wks_store *st, const char *alias, size_t n);
/* After "not a WKS keystore": name the foreign keystore data[0..len) is
 * (Java keystores, PKCS#12) and what converts it.  1 if it said so
 * (cli_err), 0 if it cannot tell. */
int cli_foreign_store_err(const char *file, const uint8_t *data, size_t len);
/* The algorithm of the PKCS#8 key pkcs8[0..len): its OID in dotted
 * text into oid, and its short name ("RSA", "ED25519", else the OID)
 * into name.  1 if the key's algorithm could be read, else 0 (name and
 * oid untouched). */
int cli_pkcs8_alg(char *oid, size_t oid_len, char *name, size_t name_len,
		  const uint8_t *pkcs8, size_t pkcs8_len);
/* A verb or option this build lacks: "wks: `what` needs the OpenSSL
 * build of wks (this one is on wolfCrypt)"; the exit status of an
 * unsupported request (CLI_EXIT_INVALID). */
int cli_needs_openssl(const char *what);

#ifdef WKS_CRYPTO_OPENSSL
#include "cli_openssl.h"
#endif

#endif
