/*
 * Password sources for wks(1): pass:TEXT, env:VAR, file:PATH, fd:N, stdin
 * (the OpenSSL convention), or a prompt on /dev/tty with echo off.
 *
 * Every copy of a password lives in heap memory that is wiped before it
 * is freed; pass:TEXT is also wiped from argv once copied, so that it
 * lingers in /proc/PID/cmdline as briefly as possible.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"

/* Passwords longer than this are refused (they are surely a mistake). */
#define PW_MAX 65536

void cli_pw_clear(cli_pw *pw)
{
	if (pw->p) {
		cli_cleanse(pw->p, pw->len);
		free(pw->p);
	}
	pw->p = NULL;
	pw->len = 0;
}

static int pw_set(cli_pw *out, const char *p, size_t len)
{
	char *n = malloc(len + 1);

	if (!n) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	memcpy(n, p, len);
	n[len] = 0;
	cli_pw_clear(out);
	out->p = n;
	out->len = len;
	return 0;
}

int cli_pw_dup(cli_pw *out, const cli_pw *in)
{
	return pw_set(out, in->p ? in->p : "", in->p ? in->len : 0);
}

int cli_pwsrc_parse(cli_pwsrc *src, const char *option, char *arg)
{
	char *end;
	long fd;

	cli_pwsrc_clear(src);
	src->option = option;
	if (!strncmp(arg, "pass:", 5)) {
		size_t n = strlen(arg + 5);

		src->kind = CLI_PWSRC_PASS;
		src->value = malloc(n + 1);
		if (!src->value) {
			cli_err(NULL, "out of memory");
			return CLI_EXIT_FAIL;
		}
		memcpy(src->value, arg + 5, n + 1);
		cli_cleanse(arg + 5, n);
		return 0;
	}
	if (!strncmp(arg, "env:", 4) && arg[4]) {
		src->kind = CLI_PWSRC_ENV;
		src->value = arg + 4;
		return 0;
	}
	if (!strncmp(arg, "file:", 5) && arg[5]) {
		src->kind = CLI_PWSRC_FILE;
		src->value = arg + 5;
		return 0;
	}
	if (!strncmp(arg, "fd:", 3) && arg[3]) {
		errno = 0;
		fd = strtol(arg + 3, &end, 10);
		if (errno || *end || fd < 0 || fd > 1000000) {
			/* Not shown: what follows fd: may be a password
			 * given there by mistake. */
			cli_err(NULL, "%s: fd:N needs a descriptor number from "
				"0 to 1000000", option);
			return CLI_EXIT_USAGE;
		}
		src->kind = CLI_PWSRC_FD;
		src->fd = (int)fd;
		return 0;
	}
	if (!strcmp(arg, "stdin")) {
		src->kind = CLI_PWSRC_STDIN;
		src->fd = STDIN_FILENO;
		return 0;
	}
	if (option && !strcmp(option, "--hex")) {
		/* --hex also takes the hex text itself (wiped like pass:). */
		size_t n = strlen(arg);

		src->kind = CLI_PWSRC_PASS;
		src->value = malloc(n + 1);
		if (!src->value) {
			cli_err(NULL, "out of memory");
			return CLI_EXIT_FAIL;
		}
		memcpy(src->value, arg, n + 1);
		cli_cleanse(arg, n);
		return 0;
	}
	cli_err(NULL, "%s: expected pass:TEXT, env:VAR, file:PATH, fd:N or "
		"stdin", option);
	return CLI_EXIT_USAGE;
}

void cli_pwsrc_clear(cli_pwsrc *src)
{
	if (src->kind == CLI_PWSRC_PASS && src->value) {
		cli_cleanse(src->value, strlen(src->value));
		free(src->value);
	}
	memset(src, 0, sizeof(*src));
}

/* Read one line (without its end) from fd, a byte at a time so that
 * nothing after the line is consumed. */
static int read_line(cli_pw *out, int fd, const char *what)
{
	char *buf = malloc(PW_MAX + 1);
	size_t n = 0;
	int rc = CLI_EXIT_IO;

	if (!buf) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	for (;;) {
		char ch;
		ssize_t r = read(fd, &ch, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			cli_err(NULL, "%s: cannot read: %s", what,
				strerror(errno));
			goto done;
		}
		if (r == 0 || ch == '\n')
			break;
		if (n == PW_MAX) {
			cli_err(NULL, "%s: password longer than %d bytes", what,
				PW_MAX);
			rc = CLI_EXIT_USAGE;
			goto done;
		}
		buf[n++] = ch;
	}
	if (n && buf[n - 1] == '\r')
		n--;
	rc = pw_set(out, buf, n);
done:
	cli_cleanse(buf, PW_MAX + 1);
	free(buf);
	return rc;
}

static int from_source(cli_pw *out, const cli_pwsrc *src)
{
	const char *v;
	char *name;
	size_t n;
	int fd, rc;

	switch (src->kind) {
	case CLI_PWSRC_PASS:
		return pw_set(out, src->value, strlen(src->value));
	case CLI_PWSRC_ENV:
		v = getenv(src->value);
		if (!v) {
			cli_err(NULL, "%s: environment variable %s is not set",
				src->option, src->value);
			return CLI_EXIT_USAGE;
		}
		return pw_set(out, v, strlen(v));
	case CLI_PWSRC_FILE:
		/* A regular file, a device, or a FIFO of the caller's own
		 * (waited for); another user's FIFO is refused without
		 * waiting: it would let that user choose the password.
		 * Messages name the option and the file ("--storepass
		 * file:PATH: cannot open: ..."). */
		n = strlen(src->value) + 64;
		if (!(name = malloc(n))) {
			cli_err(NULL, "out of memory");
			return CLI_EXIT_FAIL;
		}
		snprintf(name, n, "%s file:%s", src->option ? src->option :
			 "password", src->value);
		if ((fd = cli_open_input_as(src->value, name, &rc)) >= 0) {
			rc = read_line(out, fd, name);
			close(fd);
		}
		free(name);
		return rc;
	case CLI_PWSRC_FD:
	case CLI_PWSRC_STDIN:
		return read_line(out, src->fd, src->option);
	default:
		return CLI_EXIT_USAGE;
	}
}

/* ---- the prompt ---------------------------------------------------------- */

static volatile sig_atomic_t tty_saved;
static struct termios tty_old;
static int tty_fd = -1;

static void on_signal(int sig)
{
	if (tty_saved) {
		tcsetattr(tty_fd, TCSAFLUSH, &tty_old);
		(void)!write(tty_fd, "\n", 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int cli_have_tty(void)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int prompt_once(cli_pw *out, const char *prompt)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa, old[4];
	struct termios t;
	int rc;

	tty_fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (tty_fd < 0)
		return CLI_EXIT_USAGE;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, &old[i]);
	/* Echo goes off before the prompt is shown, so that nothing typed
	 * in answer to it is ever echoed. */
	if (tcgetattr(tty_fd, &tty_old) == 0) {
		t = tty_old;
		t.c_lflag &= ~(tcflag_t)ECHO;
		t.c_lflag |= ECHONL;
		tty_saved = 1;
		tcsetattr(tty_fd, TCSAFLUSH, &t);
	}
	(void)!write(tty_fd, prompt, strlen(prompt));
	rc = read_line(out, tty_fd, "terminal");
	if (tty_saved) {
		tcsetattr(tty_fd, TCSAFLUSH, &tty_old);
		tty_saved = 0;
	}
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	close(tty_fd);
	tty_fd = -1;
	return rc;
}

int cli_pw_get(cli_pw *out, const cli_pwsrc *src, const char *prompt,
	       const char *option, int flags)
{
	cli_pw again = CLI_PW_INIT;
	char *p2 = NULL;
	size_t n;
	int rc;

	cli_pw_clear(out);
	if (src && src->kind != CLI_PWSRC_NONE) {
		rc = from_source(out, src);
		if (rc == 0 && out->len == 0 && (flags & CLI_PW_NEW)) {
			cli_err(NULL, "%s: the password must not be empty",
				src->option);
			rc = CLI_EXIT_USAGE;
		} else if (rc == 0 && out->len == 0 &&
			   !(flags & CLI_PW_EMPTY_OK)) {
			/* An explicitly empty password (pass:, an empty
			 * variable or file) is a mistake, never a request to
			 * skip the integrity check: that is --no-storepass. */
			cli_err(NULL, "%s: the password is empty (it must not "
				"be empty%s)", src->option,
				(flags & CLI_PW_OPTIONAL) ? "; to skip the "
				"integrity check use --no-storepass" : "");
			rc = CLI_EXIT_USAGE;
		}
		if (rc)
			cli_pw_clear(out);
		return rc;
	}
	if (!cli_have_tty()) {
		if (flags & CLI_PW_OPTIONAL)
			return pw_set(out, "", 0);
		cli_err(NULL, "no password given and no terminal to ask for it "
			"(use %s pass:|env:|file:|fd:)", option);
		return CLI_EXIT_USAGE;
	}
	for (int tries = 0; tries < 3; tries++) {
		rc = prompt_once(out, prompt);
		if (rc)
			return rc;
		if (!(flags & CLI_PW_NEW))
			return 0;
		if (out->len == 0) {
			cli_err(NULL, "the password must not be empty");
			continue;
		}
		n = strlen(prompt) + 16;
		p2 = malloc(n);
		if (!p2)
			return CLI_EXIT_FAIL;
		snprintf(p2, n, "Retype %c%s", prompt[0] >= 'A' &&
			 prompt[0] <= 'Z' ? prompt[0] - 'A' + 'a' : prompt[0],
			 prompt + 1);
		rc = prompt_once(&again, p2);
		free(p2);
		if (rc) {
			cli_pw_clear(out);
			return rc;
		}
		if (again.len == out->len &&
		    cli_memeq_ct(again.p, out->p, out->len) == 0) {
			cli_pw_clear(&again);
			return 0;
		}
		cli_pw_clear(&again);
		cli_err(NULL, "the passwords do not match; try again");
	}
	cli_pw_clear(out);
	cli_err(NULL, "no password set");
	return CLI_EXIT_USAGE;
}
