/*
 * Messages, files and text for wks(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static size_t next_char(const unsigned char *s, long *cp);
static int same_file(const struct stat *a, const struct stat *b);

/*
 * `s` with every control character (C0, DEL, C1) and every byte that is
 * not UTF-8 written as \xNN, and nothing else changed.  The last line of
 * defence for messages: the strings from files that go into them are
 * escaped with cli_display() where they are formatted (which also
 * escapes the backslash, so that the text is unambiguous); this catches
 * any that is not (a file name from the command line, an OpenSSL
 * string), and leaves cli_display()'s output as it is.
 */
static void put_safe(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	long cp;

	while ((n = next_char(p, &cp)) != 0) {
		if (cp < 0 || cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
			for (size_t i = 0; i < (cp < 0 ? 1 : n); i++)
				fprintf(f, "\\x%02x", p[i]);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
}

static void vmsg(const char *file, const char *kind, const char *fmt,
		 va_list ap) CLI_PRINTF(3, 0);

static void vmsg(const char *file, const char *kind, const char *fmt,
		 va_list ap)
{
	char small[1024], *msg = small;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n >= (int)sizeof(small)) {
		msg = malloc((size_t)n + 1);
		if (msg)
			vsnprintf(msg, (size_t)n + 1, fmt, ap);
		else
			msg = small; /* truncated */
	} else if (n < 0) {
		small[0] = 0;
	}
	fflush(stdout); /* keep the order of output and messages */
	fputs("wks: ", stderr);
	if (file) {
		put_safe(stderr, file);
		fputs(": ", stderr);
	}
	if (kind)
		fprintf(stderr, "%s: ", kind);
	put_safe(stderr, msg);
	fputc('\n', stderr);
	if (msg != small)
		free(msg);
}

void cli_err(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(file, NULL, fmt, ap);
	va_end(ap);
}

void cli_note(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(file, "note", fmt, ap);
	va_end(ap);
}

int cli_exit_for(int err)
{
	switch (err) {
	case WKS_OK: return CLI_EXIT_OK;
	case WKS_ERR_IO: return CLI_EXIT_IO;
	case WKS_ERR_BUSY: return CLI_EXIT_BUSY;
	case WKS_ERR_FORMAT: return CLI_EXIT_MALFORMED;
	case WKS_ERR_INTEGRITY: return CLI_EXIT_INTEGRITY;
	case WKS_ERR_NOTFOUND: return CLI_EXIT_NOTFOUND;
	case WKS_ERR_WRONG_TYPE:
	case WKS_ERR_UNSUPPORTED:
	case WKS_ERR_INVALID: return CLI_EXIT_INVALID;
	case WKS_ERR_LIMIT: return CLI_EXIT_LIMIT;
	case WKS_ERR_EXISTS: return CLI_EXIT_EXISTS;
	default: return CLI_EXIT_FAIL;
	}
}

int cli_lib_err(const char *file, const char *alias, int err, const char *what)
{
	/* The detail may quote bytes of the file (a certificate type, a
	 * property value): escaped like an alias. */
	char *dd = cli_display(wks_error_detail());
	const char *detail = dd ? dd : "";
	char *da = alias ? cli_display(alias) : NULL;
	char prefix[512] = "";
	const char *problem;

	if (da)
		snprintf(prefix, sizeof(prefix), "entry \"%s\": ", da);
	switch (err) {
	case WKS_ERR_INTEGRITY:
		problem = alias ? "integrity check failed: wrong key password, "
				  "or the entry was modified"
				: "integrity check failed: wrong password, or "
				  "the file was modified";
		detail = "";
		break;
	case WKS_ERR_FORMAT: problem = "malformed"; break;
	case WKS_ERR_LIMIT: problem = "limit exceeded"; break;
	case WKS_ERR_NOTFOUND:
		problem = "not found";
		if (alias)
			detail = ""; /* "no entry with that alias" says it again */
		break;
	case WKS_ERR_WRONG_TYPE: problem = "wrong entry type"; break;
	case WKS_ERR_UNSUPPORTED: problem = "unsupported"; break;
	case WKS_ERR_INVALID: problem = "rejected"; break;
	case WKS_ERR_IO: problem = "I/O error"; break;
	case WKS_ERR_EXISTS: problem = "exists"; break;
	case WKS_ERR_BUSY: problem = "busy"; break;
	default: problem = wks_strerror(err); break;
	}
	if (what && *what) {
		if (detail && *detail)
			cli_err(file, "%s%s: %s: %s", prefix, what, problem, detail);
		else
			cli_err(file, "%s%s: %s", prefix, what, problem);
	} else if (detail && *detail) {
		cli_err(file, "%s%s: %s", prefix, problem, detail);
	} else {
		cli_err(file, "%s%s", prefix, problem);
	}
	free(da);
	free(dd);
	return cli_exit_for(err);
}

int cli_needs_openssl(const char *what)
{
	cli_err(NULL, "%s needs the OpenSSL build of wks (this one is built "
		"on %s)", what, WKS_CRYPTO_BACKEND);
	return cli_exit_for(WKS_ERR_UNSUPPORTED);
}

int cli_need(const char *v, const char *name)
{
	if (v)
		return 0; /* "" is a valid alias; an empty path fails to open */
	cli_err(NULL, "option %s is required", name);
	return CLI_EXIT_USAGE;
}

void cli_free_secret(void *p, size_t len)
{
	if (p) {
		cli_cleanse(p, len);
		free(p);
	}
}

/* libwks.wks.maxFileSize as the process sees it (WKS_PROPERTIES, the
 * properties file): the bound of every file wks reads whole. */
static unsigned long long max_input(void)
{
	char v[32];
	unsigned long long n = 0;

	if (wks_get_property(v, sizeof(v), NULL, "libwks.wks.maxFileSize") ==
	    WKS_OK)
		n = strtoull(v, NULL, 10);
	return n ? n : 268435456ull;
}

int cli_open_input_as(const char *path, const char *name, int *rc)
{
	struct stat a;
	int fd, fl;

	/* O_NONBLOCK: no open() waits on a FIFO before it is known whose
	 * it is. */
	do
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		cli_err(name, "cannot open: %s", strerror(errno));
		*rc = CLI_EXIT_IO;
		return -1;
	}
	if (fstat(fd, &a) != 0) {
		cli_err(name, "cannot open: %s", strerror(errno));
		goto fail;
	}
	if (S_ISDIR(a.st_mode)) {
		cli_err(name, "cannot read: it is a directory");
		goto fail;
	}
	if (S_ISFIFO(a.st_mode)) {
		if (a.st_uid != geteuid()) {
			cli_err(name, "is a FIFO owned by another user (uid %ju): "
				"not read (its writer would choose what wks "
				"reads)", (uintmax_t)a.st_uid);
			goto fail;
		}
		/* Our own FIFO: wait for its writer, as a plain open would
		 * (poll: until data comes or a writer came and went; keeping
		 * this descriptor, so that what a writer already wrote stays),
		 * then read it blocking. */
		for (;;) {
			struct pollfd p = { fd, POLLIN, 0 };

			if (poll(&p, 1, -1) > 0)
				break;
			if (errno != EINTR) {
				cli_err(name, "cannot read: %s",
					strerror(errno));
				goto fail;
			}
		}
	}
	/* Plain blocking reads from here on. */
	if ((fl = fcntl(fd, F_GETFL)) >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	*rc = CLI_EXIT_IO;
	return -1;
}

int cli_open_input(const char *path, int *rc)
{
	return cli_open_input_as(path, path, rc);
}

int cli_read_file(uint8_t **out, size_t *out_len, const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	unsigned long long max = max_input();
	struct stat sb;
	int fd, rc = CLI_EXIT_IO;
	const int is_stdin = !strcmp(path, "-");

	*out = NULL;
	*out_len = 0;
	fd = is_stdin ? STDIN_FILENO : cli_open_input(path, &rc);
	if (fd < 0)
		return rc;
	rc = CLI_EXIT_IO;
	/* The size first where there is one; stdin, FIFOs and devices are
	 * counted as they are read.  Either way at most `max` bytes. */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (unsigned long long)sb.st_size > max) {
		cli_err(path, "more than %llu bytes (libwks.wks.maxFileSize): "
			"not read", max);
		rc = CLI_EXIT_LIMIT;
		goto done;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			uint8_t *nb;

			if (cap && (unsigned long long)cap > max)
				ncap = cap + 1; /* one byte tells: too long */
			else if ((unsigned long long)ncap > max + 1)
				ncap = (size_t)max + 1;
			if (!(nb = malloc(ncap))) {
				cli_err(path, "out of memory");
				rc = CLI_EXIT_FAIL;
				goto done;
			}
			if (buf)
				memcpy(nb, buf, len);
			cli_free_secret(buf, cap);
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			cli_err(path, "cannot read: %s", strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if ((unsigned long long)len > max) {
			cli_err(is_stdin ? NULL : path, "%s: more than %llu bytes "
				"(libwks.wks.maxFileSize): not read",
				is_stdin ? "standard input" : "input", max);
			rc = CLI_EXIT_LIMIT;
			goto done;
		}
	}
	/* Keep one spare byte so text parsers may NUL-terminate. */
	if (len == cap) {
		uint8_t *nb = malloc(cap + 1);

		if (!nb) {
			cli_err(path, "out of memory");
			rc = CLI_EXIT_FAIL;
			goto done;
		}
		memcpy(nb, buf, len);
		cli_free_secret(buf, cap);
		buf = nb;
	}
	buf[len] = 0;
	*out = buf;
	*out_len = len;
	buf = NULL;
	rc = 0;
done:
	cli_free_secret(buf, cap);
	if (!is_stdin)
		close(fd);
	return rc;
}

/* ---- signals while a file is replaced ------------------------------------ */

static const int held_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static sigset_t held_old;
static int held_depth;
static int saved_any; /* a store or an output file was committed */

int cli_saved(void)
{
	return saved_any;
}

void cli_test_pause(const char *step)
{
	const char *v = getenv("WKS_TEST_PAUSE_AT");
	size_t n = strlen(step);
	char buf[64];
	int fd;

	/* WKS_TEST_PAUSE_AT=STEP:FIFO: at STEP, write "STEP\n" into FIFO
	 * (waiting for the test to open it), then open it again and read
	 * until the test has written to it and closed it.  Harmless: it only
	 * waits, as a stopped process would (and wks refuses to run set-id,
	 * see main.c, so the variable never comes from a less privileged
	 * user). */
	if (!v || strncmp(v, step, n) || v[n] != ':' || !v[n + 1])
		return;
	if ((fd = open(v + n + 1, O_WRONLY | O_CLOEXEC)) < 0)
		return;
	(void)!write(fd, step, n);
	(void)!write(fd, "\n", 1);
	close(fd);
	if ((fd = open(v + n + 1, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

void cli_save_begin(const char *file)
{
	sigset_t set;

	(void)file;
	cli_test_pause("save");
	if (held_depth++ == 0) {
		sigemptyset(&set);
		for (size_t i = 0; i < sizeof(held_sigs) / sizeof(held_sigs[0]);
		     i++)
			sigaddset(&set, held_sigs[i]);
		sigprocmask(SIG_BLOCK, &set, &held_old);
	}
	cli_test_pause("saving");
}

void cli_save_end(const char *file, int committed)
{
	struct sigaction ign, old;
	sigset_t pend, one;
	int got = 0;

	cli_test_pause(committed ? "saved" : "unsaved");
	if (committed)
		saved_any = 1;
	if (--held_depth > 0)
		return;
	if (committed && sigpending(&pend) == 0) {
		/* The change is in the file: the signal that came meanwhile
		 * is taken as handled (discarded: ignored while unblocked),
		 * and wks goes on to exit 0. */
		for (size_t i = 0; i < sizeof(held_sigs) / sizeof(held_sigs[0]);
		     i++) {
			int sig = held_sigs[i];

			if (!sigismember(&pend, sig) ||
			    sigismember(&held_old, sig))
				continue;
			memset(&ign, 0, sizeof(ign));
			ign.sa_handler = SIG_IGN;
			sigemptyset(&ign.sa_mask);
			sigaction(sig, &ign, &old);
			sigemptyset(&one);
			sigaddset(&one, sig);
			sigprocmask(SIG_UNBLOCK, &one, NULL);
			sigprocmask(SIG_BLOCK, &one, NULL);
			sigaction(sig, &old, NULL);
			if (old.sa_handler != SIG_IGN)
				got = sig;
		}
		if (got)
			cli_note(file, "interrupted (signal %d) after the change "
				 "was saved: it is in the file", got);
	}
	/* Not committed: a held signal now ends wks (128 + its number), with
	 * nothing changed and no temporary file left. */
	sigprocmask(SIG_SETMASK, &held_old, NULL);
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The same file (device and inode). */
static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Written into rather than replaced: a FIFO or a device (/dev/null,
 * /dev/stdout), which rename() would replace with a regular file. */
static int write_through(const struct stat *sb)
{
	return S_ISFIFO(sb->st_mode) || S_ISCHR(sb->st_mode);
}

/* A FIFO that another user made (in a sticky /tmp, say) would hand what
 * is written to whoever reads it: refused, even with --force.
 * CLI_EXIT_IO with a message, or 0. */
static int foreign_fifo(const char *path, const struct stat *sb)
{
	if (!S_ISFIFO(sb->st_mode) || sb->st_uid == geteuid())
		return 0;
	cli_err(path, "is a FIFO owned by another user (uid %ju): not written "
		"into, even with --force", (uintmax_t)sb->st_uid);
	return CLI_EXIT_IO;
}

/* A regular file of another user is never replaced, even with --force
 * and even by root: its owner could read and change what is written
 * there (a name in a sticky /tmp is anyone's to create first), and a new
 * file would no longer be theirs.  CLI_EXIT_IO with a message, or 0. */
static int foreign_file(const char *path, const struct stat *sb)
{
	if (!S_ISREG(sb->st_mode) || sb->st_uid == geteuid())
		return 0;
	cli_err(path, "is owned by another user (uid %ju): not replaced, even "
		"with --force (remove it first, or write to another name)",
		(uintmax_t)sb->st_uid);
	return CLI_EXIT_IO;
}

/* The input of the command that `out` is (NULL if none). */
static const char *input_at(const cli_ctx *c, const char *path,
			    const struct stat *out)
{
	const char *inputs[2] = { c->keystore, c->in };
	struct stat in;

	for (size_t i = 0; i < 2; i++) {
		/* create names its new store --keystore: not an input. */
		if (!inputs[i] || inputs[i] == path || !strcmp(inputs[i], "-"))
			continue;
		if (stat(inputs[i], &in) == 0 && same_file(&in, out))
			return inputs[i];
	}
	return NULL;
}

/* 0, or CLI_EXIT_USAGE if `path` is one of the command's inputs. */
static int not_an_input(const cli_ctx *c, const char *path,
			const struct stat *out)
{
	const char *in = input_at(c, path, out);

	if (!in)
		return 0;
	cli_err(path, "is the input file %s itself: refusing to replace it "
		"(even with --force)", in);
	return CLI_EXIT_USAGE;
}

int cli_output_check(const cli_ctx *c, const char *path)
{
	struct stat sb;
	int rc;

	if (!path || !strcmp(path, "-"))
		return 0;
	if (stat(path, &sb) != 0) {
		if (lstat(path, &sb) == 0 && !c->force) {
			cli_err(path, "exists (a dangling symbolic link; use "
				"--force to replace it)");
			return CLI_EXIT_EXISTS;
		}
		return 0; /* a new file */
	}
	if (S_ISDIR(sb.st_mode)) {
		cli_err(path, "is a directory: give the name of a file");
		return CLI_EXIT_IO;
	}
	if (!c->force) {
		if (input_at(c, path, &sb))
			cli_err(path, "exists: it is the input file %s itself "
				"(never replaced)", input_at(c, path, &sb));
		else if (write_through(&sb))
			cli_err(path, "exists (a %s; use --force to write into "
				"it)", S_ISFIFO(sb.st_mode) ? "FIFO" : "device");
		else
			cli_err(path, "exists (use --force to replace it)");
		return CLI_EXIT_EXISTS;
	}
	if ((rc = not_an_input(c, path, &sb)) != 0)
		return rc;
	if (S_ISSOCK(sb.st_mode)) {
		cli_err(path, "is a socket: not written");
		return CLI_EXIT_IO;
	}
	if (write_through(&sb))
		return foreign_fifo(path, &sb);
	if (!S_ISREG(sb.st_mode)) {
		cli_err(path, "exists and is not a regular file: not replaced");
		return CLI_EXIT_IO;
	}
	if ((rc = foreign_file(path, &sb)) != 0)
		return rc;
	if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0) {
		cli_err(path, "cannot write: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	return 0;
}

/* Write everything to fd and fsync it (fsync is skipped where it does not
 * apply: pipes, terminals, devices).  0 or -1 with errno. */
static int write_sync(int fd, const uint8_t *data, size_t len)
{
	if (write_all(fd, data, len) < 0)
		return -1;
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS &&
	    errno != ENOTSUP)
		return -1;
	return 0;
}

/* Into an existing FIFO or device (with --force): opened for writing,
 * never created; what was opened must be what was checked (`want`), and
 * is checked again (owner) before a byte is written. */
static int write_into(const char *path, const struct stat *want,
		      const uint8_t *data, size_t len, int binary)
{
	struct stat sb;
	int fd, rc = 0;

	do
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		cli_err(path, "cannot open: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	if (fstat(fd, &sb) != 0 || !same_file(&sb, want) ||
	    !write_through(&sb)) {
		cli_err(path, "was replaced while being opened: not written");
		rc = CLI_EXIT_IO;
	} else if ((rc = foreign_fifo(path, &sb)) != 0) {
		/* refused */
	} else if (binary && isatty(fd)) {
		cli_err(path, "refusing to write binary data to a terminal");
		rc = CLI_EXIT_USAGE;
	} else if (write_all(fd, data, len) < 0) {
		cli_err(path, "cannot write: %s", strerror(errno));
		rc = CLI_EXIT_IO;
	}
	if (close(fd) < 0 && rc == 0 && errno != EINTR) {
		cli_err(path, "cannot write: %s", strerror(errno));
		rc = CLI_EXIT_IO;
	}
	return rc;
}

/* Without hard links (link() not supported): create `path` with O_EXCL
 * and write it in place; a failure removes it again. */
static int write_excl(const char *path, const uint8_t *data, size_t len,
		      mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		      O_NOCTTY | O_CLOEXEC, mode);

	if (fd < 0) {
		if (errno == EEXIST) {
			cli_err(path, "exists (use --force to replace it)");
			return CLI_EXIT_EXISTS;
		}
		cli_err(path, "cannot create: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	if (fchmod(fd, mode) < 0 || write_sync(fd, data, len) < 0) {
		cli_err(path, "cannot write: %s", strerror(errno));
		close(fd);
		unlink(path);
		return CLI_EXIT_IO;
	}
	if (close(fd) < 0 && errno != EINTR) {
		cli_err(path, "cannot write: %s", strerror(errno));
		unlink(path);
		return CLI_EXIT_IO;
	}
	return 0;
}

static int write_file(const cli_ctx *c, const char *path,
		      const uint8_t *data, size_t len, int secret,
		      struct stat *old, int replacing);

int cli_write_output(const cli_ctx *c, const char *path, const uint8_t *data,
		     size_t len, int binary, int secret)
{
	struct stat sb;
	int rc, replacing = 0;

	if (!path || !strcmp(path, "-")) {
		if (binary && isatty(STDOUT_FILENO)) {
			cli_err(NULL, "refusing to write binary data to a "
				"terminal; use --out FILE");
			return CLI_EXIT_USAGE;
		}
		fflush(stdout);
		if (write_all(STDOUT_FILENO, data, len) < 0) {
			cli_err(NULL, "cannot write to standard output: %s",
				strerror(errno));
			return CLI_EXIT_IO;
		}
		return 0;
	}
	if ((rc = cli_output_check(c, path)) != 0)
		return rc;
	if (stat(path, &sb) == 0) {
		if (write_through(&sb))
			return write_into(path, &sb, data, len, binary);
		replacing = S_ISREG(sb.st_mode); /* with --force */
	}
	/* Signals held while the temporary file exists (cli_save_begin). */
	cli_save_begin(path);
	rc = write_file(c, path, data, len, secret, &sb, replacing);
	cli_save_end(path, rc == 0);
	return rc;
}

static int write_file(const cli_ctx *c, const char *path,
		      const uint8_t *data, size_t len, int secret,
		      struct stat *old, int replacing)
{
	char *tmp = NULL, *dircopy = NULL;
	struct stat sb = *old;
	mode_t mode;
	int fd = -1, rc;
	size_t plen;

	if (secret) {
		mode = 0600; /* keys stay private, whatever was there */
	} else if (replacing) {
		mode = sb.st_mode & 0777; /* the caller's own file's */
	} else {
		mode_t um = umask(0);

		umask(um);
		mode = 0644 & ~um;
	}

	/* The whole output in a temporary file beside the target. */
	plen = strlen(path);
	tmp = malloc(plen + 16);
	if (!tmp) {
		cli_err(path, "out of memory");
		return CLI_EXIT_FAIL;
	}
	snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		cli_err(path, "cannot create a temporary file: %s",
			strerror(errno));
		free(tmp);
		return CLI_EXIT_IO;
	}
	rc = CLI_EXIT_IO;
	/* The new file is the caller's (cli_output_check() refused another
	 * user's, and no owner is ever given away here); the caller's own
	 * file replaced keeps its group, or is not replaced. */
	if (replacing && sb.st_gid != getegid() &&
	    fchown(fd, (uid_t)-1, sb.st_gid) < 0) {
		cli_err(path, "cannot keep its group %ju: %s",
			(uintmax_t)sb.st_gid, strerror(errno));
		goto fail;
	}
	if (fchmod(fd, mode) < 0 || write_sync(fd, data, len) < 0)
		goto io_fail;
	if (close(fd) < 0 && errno != EINTR) {
		fd = -1;
		goto io_fail;
	}
	fd = -1;
	/* Publish: link() never replaces an existing name, so an output that
	 * appeared since the check is kept (no check-then-write race). */
	if (link(tmp, path) == 0) {
		unlink(tmp);
	} else if (errno == EEXIST && c->force) {
		/* Replace it, but never an input that took its place. */
		if (stat(path, &sb) == 0) {
			if ((rc = not_an_input(c, path, &sb)) != 0 ||
			    (rc = foreign_file(path, &sb)) != 0)
				goto fail;
			if (!S_ISREG(sb.st_mode)) {
				cli_err(path, "exists and is not a regular "
					"file: not replaced");
				rc = CLI_EXIT_IO;
				goto fail;
			}
		}
		if (rename(tmp, path) < 0)
			goto io_fail;
	} else if (errno == EEXIST) {
		cli_err(path, "exists (use --force to replace it)");
		rc = CLI_EXIT_EXISTS;
		goto fail;
	} else if (errno == EPERM || errno == ENOTSUP || errno == EMLINK ||
		   errno == ENOSYS) {
		/* No hard links on this file system: with --force a rename
		 * (replacing is allowed), else an O_EXCL creation. */
		if (c->force) {
			if (rename(tmp, path) < 0)
				goto io_fail;
		} else {
			unlink(tmp);
			if ((rc = write_excl(path, data, len, mode)) != 0)
				goto done;
		}
	} else {
		goto io_fail;
	}
	dircopy = strdup(path);
	if (dircopy) {
		int dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY);

		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
	}
	rc = 0;
	goto done;
io_fail:
	cli_err(path, "cannot write: %s", strerror(errno));
	rc = CLI_EXIT_IO;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
done:
	free(dircopy);
	free(tmp);
	return rc;
}

/*
 * Decode one character of libwks's UTF-8 (standard UTF-8, plus C0 80 for
 * U+0000 and 3-byte surrogates).  Returns the number of bytes used (0 at
 * the end) and the code point in *cp, or -1 in *cp for an invalid byte.
 */
static size_t next_char(const unsigned char *s, long *cp)
{
	unsigned c = s[0];

	if (!c)
		return 0;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC0 && c < 0xE0 && (s[1] & 0xC0) == 0x80) {
		*cp = (long)((c & 0x1F) << 6 | (s[1] & 0x3F));
		return 2;
	}
	if (c >= 0xE0 && c < 0xF0 && (s[1] & 0xC0) == 0x80 &&
	    (s[2] & 0xC0) == 0x80) {
		*cp = (long)((c & 0x0F) << 12 | (s[1] & 0x3Fu) << 6 |
			     (s[2] & 0x3F));
		return 3;
	}
	if (c >= 0xF0 && c < 0xF8 && (s[1] & 0xC0) == 0x80 &&
	    (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80) {
		*cp = (long)((c & 0x07) << 18 | (s[1] & 0x3Fu) << 12 |
			     (s[2] & 0x3Fu) << 6 | (s[3] & 0x3F));
		return 4;
	}
	*cp = -1;
	return 1;
}

static char *display(const char *s, int backslash)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t cap = strlen(s) * 6 + 1, o = 0;
	char *out = malloc(cap);
	size_t n;
	long cp;

	if (!out)
		return NULL;
	while ((n = next_char(p, &cp)) != 0) {
		if (cp < 0)
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", p[0]);
		else if (cp == 0)
			o += (size_t)snprintf(out + o, cap - o, "\\0");
		else if (cp == '\n')
			o += (size_t)snprintf(out + o, cap - o, "\\n");
		else if (cp == '\r')
			o += (size_t)snprintf(out + o, cap - o, "\\r");
		else if (cp == '\t')
			o += (size_t)snprintf(out + o, cap - o, "\\t");
		else if (cp == '\\' && backslash)
			o += (size_t)snprintf(out + o, cap - o, "\\\\");
		else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
			o += (size_t)snprintf(out + o, cap - o, "\\x%02lx", cp);
		else if (cp >= 0xD800 && cp <= 0xDFFF)
			o += (size_t)snprintf(out + o, cap - o, "\\u%04lx", cp);
		else {
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = 0;
	return out;
}

char *cli_display(const char *s)
{
	return display(s, 1);
}

char *cli_display_escaped(const char *s)
{
	return display(s, 0);
}

void cli_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	long cp;

	fputc('"', f);
	while ((n = next_char(p, &cp)) != 0) {
		if (cp < 0)
			fputs("\\ufffd", f);
		else if (cp == '"')
			fputs("\\\"", f);
		else if (cp == '\\')
			fputs("\\\\", f);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\r')
			fputs("\\r", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) ||
			 (cp >= 0xD800 && cp <= 0xDFFF))
			fprintf(f, "\\u%04lx", cp); /* C1 too: a terminal
						       * may obey U+009B */
		else
			fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

void cli_hex(char *out, const uint8_t *data, size_t len, char sep)
{
	static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
	const char *d = sep ? up : lo;
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (sep && i)
			out[o++] = sep;
		out[o++] = d[data[i] >> 4];
		out[o++] = d[data[i] & 15];
	}
	out[o] = 0;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int cli_unhex(uint8_t **out, size_t *out_len, const char *s, size_t slen)
{
	uint8_t *buf = malloc(slen / 2 + 1);
	size_t n = 0;
	int hi = -1;

	*out = NULL;
	*out_len = 0;
	if (!buf)
		return -1;
	for (size_t i = 0; i < slen; i++) {
		int v;

		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
		    s[i] == '\r' || s[i] == ':')
			continue;
		v = hexval((unsigned char)s[i]);
		if (v < 0)
			goto fail;
		if (hi < 0) {
			hi = v;
		} else {
			buf[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0 || n == 0)
		goto fail;
	*out = buf;
	*out_len = n;
	return 0;
fail:
	cli_free_secret(buf, slen / 2 + 1);
	return -1;
}

void cli_sha256_hex(char out[65], const uint8_t *data, size_t len)
{
	uint8_t md[32];

	if (cli_sha256(md, data, len) != 0) {
		out[0] = 0;
		return;
	}
	cli_hex(out, md, 32, 0);
}

void cli_format_time(char *out, size_t out_len, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms < 0 || !gmtime_r(&t, &tm) ||
	    !strftime(out, out_len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(out, out_len, "%lld ms", (long long)ms);
}
