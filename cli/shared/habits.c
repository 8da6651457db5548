/*
 * keytool habits: `wks list -keystore f -storepass x` is what a keytool
 * user types first.  getopt would read "-keystore" as "-k eystore"; the
 * option parser asks here first, and the user hears "did you mean
 * --keystore" instead of a confusing "cannot open eystore".
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* keytool's option names and commands (OpenJDK 17 keytool -help). */
static const char *const keytool_words[] = {
	"alias", "keystore", "storepass", "keypass", "new", "file",
	"storetype", "rfc", "dname", "keyalg", "keysize", "groupname",
	"sigalg", "validity", "ext", "startdate", "destalias", "srcalias",
	"srckeystore", "destkeystore", "srcstorepass", "deststorepass",
	"srcstoretype", "deststoretype", "srckeypass", "destkeypass",
	"noprompt", "trustcacerts", "protected", "providername",
	"providerclass", "providerarg", "providerpath", "infile", "outfile",
	"cacerts", "sslserver", "jarfile", "list", "importcert",
	"exportcert", "genkeypair", "genkey", "genseckey", "printcert",
	"certreq", "gencert", "importkeystore", "importpass", "storepasswd",
	"keypasswd", "delete", "changealias", "help", "verbose", "in",
	"out", "json", "force", "key", "cert", "chain", "inpass", "outpass",
	NULL
};

static int is_keytool_word(const char *w)
{
	for (size_t i = 0; keytool_words[i]; i++)
		if (!strcmp(w, keytool_words[i]))
			return 1;
	return 0;
}

static int is_cmd(const char *cmd, const char *a, const char *b)
{
	return !strcmp(cmd, a) || (b && !strcmp(cmd, b));
}

int cli_keytool_hint(const char *cmd, const char *arg,
		     int (*applies)(const char *name))
{
	const char *w = arg + 1, *s = NULL, *note = NULL;
	char buf[64];

	if (arg[0] != '-' || arg[1] == '-' || strlen(w) < 2 ||
	    !is_keytool_word(w))
		return 0;
	if (!strcmp(w, "file")) {
		if (applies("file"))
			s = "--file";
		else if (is_cmd(cmd, "import-cert", NULL))
			s = "--cert";
		else if (applies("in") && !applies("out"))
			s = "--in";
		else if (applies("out") && !applies("in"))
			s = "--out";
		else
			s = "--in or --out";
	} else if (!strcmp(w, "new")) {
		s = is_cmd(cmd, "keypasswd", NULL) ? "--new-keypass"
						  : "--new-storepass";
	} else if (!strcmp(w, "rfc")) {
		s = "--pem";
	} else if (!strcmp(w, "infile")) {
		s = "--in";
	} else if (!strcmp(w, "outfile")) {
		s = "--out";
	} else if (!strcmp(w, "destalias") && !applies("destalias")) {
		s = applies("new-alias") ? "--new-alias" : "--alias";
	} else if (!strcmp(w, "srckeystore") && !applies("srckeystore")) {
		s = "--in";
	} else if (!strcmp(w, "srcstorepass") && !applies("srcstorepass")) {
		s = "--inpass";
	} else if (!strcmp(w, "destkeystore") && !applies("destkeystore")) {
		s = applies("out") ? "--out" : "--keystore";
	} else if (!strcmp(w, "deststorepass") && !applies("deststorepass")) {
		s = applies("outpass") ? "--outpass" : "--storepass";
	} else if (!strcmp(w, "srcalias") && !applies("srcalias")) {
		s = "--alias";
	} else if ((!strcmp(w, "storetype") || !strcmp(w, "srcstoretype") ||
		    !strcmp(w, "deststoretype")) && !applies(w)) {
		note = "wks recognises the store type by its magic number";
	} else if (!strcmp(w, "noprompt")) {
		note = "wks never waits for a prompt without a terminal; give "
		       "passwords with --storepass SRC";
	} else if (!strcmp(w, "v")) {
		s = "-v";
	} else if (applies(w)) {
		snprintf(buf, sizeof(buf), "--%s", w);
		s = buf;
	} else {
		note = "not an option of this command";
	}
	if (s)
		cli_err(NULL, "%s: %s is a keytool-style option; did you mean "
			"%s? (wks %s --help)", cmd, arg, s, cmd);
	else
		cli_err(NULL, "%s: %s is a keytool-style option (%s; see wks %s "
			"--help)", cmd, arg, note, cmd);
	return CLI_EXIT_USAGE;
}

/* keytool's commands (OpenJDK 17 keytool -help, and the old names it
 * still takes) and what wks does instead. */
static const struct {
	const char *keytool, *wks, *note;
} keytool_cmds[] = {
	{ "list", "list", NULL },
	{ "importcert", "import-cert", NULL },
	{ "import", "import-cert", NULL },
	{ "exportcert", "export-cert", NULL },
	{ "export", "export-cert", NULL },
	{ "genkeypair", "genkeypair", NULL },
	{ "genkey", "genkeypair", NULL },
	{ "genseckey", "import-secret", "with --generate" },
	{ "importpass", "import-secret", NULL },
	{ "printcert", "printcert", NULL },
	{ "certreq", "certreq", NULL },
	{ "importkeystore", "import-keystore", "or wks convert" },
	{ "storepasswd", "passwd", NULL },
	{ "keypasswd", "keypasswd", NULL },
	{ "delete", "delete", NULL },
	{ "changealias", "rename", NULL },
	{ "help", "--help", NULL },
	{ "gencert", NULL, "wks signs no certificates but its own "
	  "(genkeypair); a CA signs a request with openssl x509 -req" },
	{ "printcertreq", NULL, "print a request with openssl req -text "
	  "-noout -in FILE" },
	{ "printcrl", NULL, "print a CRL with openssl crl -text -noout -in "
	  "FILE" },
	{ "selfcert", NULL, "make a new key pair and certificate with wks "
	  "genkeypair" },
	{ "keyclone", NULL, "copy an entry with wks export-p12 -a ALIAS and "
	  "wks import-p12 -a NEW" },
	{ NULL, NULL, NULL }
};

int cli_keytool_command(const char *word)
{
	const char *w = word;

	/* "-list", "list", "--list" (not a wks command, or main() would
	 * have run it). */
	if (w[0] == '-')
		w += w[1] == '-' ? 2 : 1;
	for (size_t i = 0; keytool_cmds[i].keytool; i++) {
		if (strcmp(w, keytool_cmds[i].keytool))
			continue;
		if (keytool_cmds[i].wks)
			cli_err(NULL, "unknown command \"%s\": that is keytool's; "
				"did you mean wks %s%s%s? (see wks --help)", word,
				keytool_cmds[i].wks, keytool_cmds[i].note ?
				" " : "", keytool_cmds[i].note ?
				keytool_cmds[i].note : "");
		else
			cli_err(NULL, "unknown command \"%s\": that is keytool's; "
				"%s (see wks --help)", word,
				keytool_cmds[i].note);
		return CLI_EXIT_USAGE;
	}
	return 0;
}
