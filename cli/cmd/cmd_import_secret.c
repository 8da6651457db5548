/*
 * wks import-secret: a secret key from hex, from a file, or generated.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name, *algorithm;
	size_t len;
} kinds[] = {
	{ "aes-128", "AES", 16 },
	{ "aes-192", "AES", 24 },
	{ "aes-256", "AES", 32 },
	{ "hmac-sha256", "HmacSHA256", 32 },
	{ "hmac-sha384", "HmacSHA384", 48 },
	{ "hmac-sha512", "HmacSHA512", 64 },
};

/* Why --hex was refused: the first character that is no hex digit (by
 * position: the text is a secret key, never echoed), an odd number of
 * digits, or none at all (cli_unhex ignores blanks and ':'). */
static void hex_error(const cli_pw *hex)
{
	size_t digits = 0;

	for (size_t i = 0; i < hex->len; i++) {
		unsigned char ch = (unsigned char)hex->p[i];

		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' ||
		    ch == ':')
			continue;
		if (!isxdigit(ch)) {
			cli_err(NULL, "--hex: not hex: character %zu is not a "
				"hex digit (0-9, a-f)", i + 1);
			return;
		}
		digits++;
	}
	if (digits == 0)
		cli_err(NULL, "--hex: no hex digits");
	else
		cli_err(NULL, "--hex: an odd number of hex digits (%zu): "
			"two make a byte", digits);
}

int cmd_import_secret(cli_ctx *c)
{
	cli_edit e = CLI_EDIT_INIT;
	cli_pw kp = CLI_PW_INIT, hex = CLI_PW_INIT;
	uint8_t *key = NULL;
	size_t key_len = 0;
	const char *alg = c->algorithm;
	int rc, err, sources;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0)
		return rc;
	sources = (c->hex.kind != CLI_PWSRC_NONE) + (c->in != NULL) +
		  (c->generate != NULL);
	if (sources != 1) {
		cli_err(NULL, "import-secret: give exactly one of --hex, --in "
			"and --generate");
		return CLI_EXIT_USAGE;
	}
	if (alg && !*alg) {
		cli_err(NULL, "--algorithm must not be empty");
		return CLI_EXIT_USAGE;
	}
	if (c->generate) {
		size_t i;

		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (!strcmp(kinds[i].name, c->generate))
				break;
		if (i == sizeof(kinds) / sizeof(kinds[0])) {
			cli_err(NULL, "--generate: expected aes-128, aes-192, "
				"aes-256, hmac-sha256, hmac-sha384 or "
				"hmac-sha512");
			return CLI_EXIT_USAGE;
		}
		key_len = kinds[i].len;
		if (!alg)
			alg = kinds[i].algorithm;
		key = malloc(key_len);
		if (!key || cli_random_key(key, key_len) != 0) {
			rc = cli_ssl_err(CLI_EXIT_FAIL, NULL,
					 "cannot generate a key");
			goto done;
		}
	} else if (c->in) {
		if ((rc = cli_read_file(&key, &key_len, c->in)) != 0)
			goto done;
		if (key_len == 0) {
			cli_err(c->in, "is empty");
			rc = CLI_EXIT_MALFORMED;
			goto done;
		}
	} else {
		if ((rc = cli_pw_get(&hex, &c->hex, "", "--hex",
				     CLI_PW_EMPTY_OK)) != 0)
			goto done;
		if (cli_unhex(&key, &key_len, hex.p, hex.len) < 0) {
			rc = CLI_EXIT_USAGE;
			hex_error(&hex);
			goto done;
		}
	}
	if (!alg) {
		if (key_len == 16 || key_len == 24 || key_len == 32) {
			alg = "AES";
		} else {
			cli_err(NULL, "a %zu-byte key is no AES key: name its "
				"algorithm with --algorithm", key_len);
			rc = CLI_EXIT_USAGE;
			goto done;
		}
	}
	if ((rc = cli_store_edit_begin_or_create(&e, c)) != 0)
		goto done;
	if ((rc = cli_check_alias_free(e.st, c, c->alias)) != 0)
		goto done;
	if ((rc = cli_pw_dup(&kp, &e.kp)) != 0)
		goto done;
	err = wks_store_set_secret_key(e.st, c->alias, alg, key, key_len, kp.p,
				       kp.len);
	if (err < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, "cannot import");
		goto done;
	}
	if ((rc = cli_store_edit_commit(&e, c, NULL)) == 0)
		cli_say_imported(e.st, c->alias);
done:
	cli_free_secret(key, key_len);
	cli_store_edit_end(&e);
	cli_pw_clear(&kp);
	cli_pw_clear(&hex);
	return rc;
}
