/*
 * wks(1): create, inspect and maintain WKS keystores.
 *
 * This file holds the command table and the option parser.  Every
 * subcommand accepts the same option names (a table below says which ones
 * make sense where; others are usage errors), so `--keystore` means the
 * same thing everywhere.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "cli.h"

enum {
	O_KEYSTORE, O_ALIAS, O_OUT, O_STOREPASS, O_KEYPASS, O_NEW_STOREPASS,
	O_NEW_KEYPASS, O_INPASS, O_OUTPASS, O_NO_STOREPASS, O_JSON, O_DER,
	O_PEM, O_KEY, O_CHAIN, O_CERT, O_IN, O_ITERATIONS, O_FORCE, O_VERBOSE,
	O_LEAF, O_HEX, O_GENERATE, O_ALGORITHM, O_NEW_ALIAS, O_ENCRYPT,
	O_NO_MAC_OK, O_HELP,
	O_STRICT_JAVA, O_KEYS, O_KEYPASS_FOR, /* h10 */
	O_KEYALG, O_KEYSIZE, O_CURVE, O_DNAME, O_VALIDITY, O_EXT, O_SIGALG,
	O_FILE, /* h9 */
	O_ALIAS_PREFIX, /* h8 */
	O_SRCKEYSTORE, O_SRCSTORETYPE, O_SRCSTOREPASS, O_SRCKEYPASS,
	O_SRCALIAS, O_DESTALIAS, /* h7 */
	O_REFERENCE, O_REF_STOREPASS, O_REF_KEYPASS, /* key references */
	O_ALLOW_NON_UTF8, O_STORE_ONLY, /* issue 22 items 6, 9 */
	O_WAIT, /* every edit (edit_cmds) */
	O_DESTSTORETYPE, /* convert */
	O_COUNT
};

#define B(o) ((uint64_t)1 << (o))
/* Options every command takes. */
#define COMMON (B(O_HELP))

static const struct option long_options[] = {
	{ "keystore", required_argument, NULL, 1000 + O_KEYSTORE },
	{ "alias", required_argument, NULL, 1000 + O_ALIAS },
	{ "out", required_argument, NULL, 1000 + O_OUT },
	{ "storepass", required_argument, NULL, 1000 + O_STOREPASS },
	{ "keypass", required_argument, NULL, 1000 + O_KEYPASS },
	{ "new-storepass", required_argument, NULL, 1000 + O_NEW_STOREPASS },
	{ "new-keypass", required_argument, NULL, 1000 + O_NEW_KEYPASS },
	{ "inpass", required_argument, NULL, 1000 + O_INPASS },
	{ "outpass", required_argument, NULL, 1000 + O_OUTPASS },
	{ "no-storepass", no_argument, NULL, 1000 + O_NO_STOREPASS },
	{ "json", no_argument, NULL, 1000 + O_JSON },
	{ "der", no_argument, NULL, 1000 + O_DER },
	{ "pem", no_argument, NULL, 1000 + O_PEM },
	{ "key", required_argument, NULL, 1000 + O_KEY },
	{ "chain", required_argument, NULL, 1000 + O_CHAIN },
	{ "cert", required_argument, NULL, 1000 + O_CERT },
	{ "in", required_argument, NULL, 1000 + O_IN },
	{ "iterations", required_argument, NULL, 1000 + O_ITERATIONS },
	{ "force", no_argument, NULL, 1000 + O_FORCE },
	{ "verbose", no_argument, NULL, 1000 + O_VERBOSE },
	{ "leaf", no_argument, NULL, 1000 + O_LEAF },
	{ "hex", required_argument, NULL, 1000 + O_HEX },
	{ "generate", required_argument, NULL, 1000 + O_GENERATE },
	{ "algorithm", required_argument, NULL, 1000 + O_ALGORITHM },
	{ "new-alias", required_argument, NULL, 1000 + O_NEW_ALIAS },
	{ "encrypt", no_argument, NULL, 1000 + O_ENCRYPT },
	{ "no-mac-ok", no_argument, NULL, 1000 + O_NO_MAC_OK },
	{ "help", no_argument, NULL, 1000 + O_HELP },
	{ "strict-java", no_argument, NULL, 1000 + O_STRICT_JAVA },
	{ "keys", no_argument, NULL, 1000 + O_KEYS },
	{ "keypass-for", required_argument, NULL, 1000 + O_KEYPASS_FOR },
	{ "keyalg", required_argument, NULL, 1000 + O_KEYALG },
	{ "keysize", required_argument, NULL, 1000 + O_KEYSIZE },
	{ "curve", required_argument, NULL, 1000 + O_CURVE },
	{ "groupname", required_argument, NULL, 1000 + O_CURVE },
	{ "dname", required_argument, NULL, 1000 + O_DNAME },
	{ "validity", required_argument, NULL, 1000 + O_VALIDITY },
	{ "ext", required_argument, NULL, 1000 + O_EXT },
	{ "sigalg", required_argument, NULL, 1000 + O_SIGALG },
	{ "file", required_argument, NULL, 1000 + O_FILE },
	{ "alias-prefix", required_argument, NULL, 1000 + O_ALIAS_PREFIX },
	{ "srckeystore", required_argument, NULL, 1000 + O_SRCKEYSTORE },
	{ "srcstoretype", required_argument, NULL, 1000 + O_SRCSTORETYPE },
	{ "srcstorepass", required_argument, NULL, 1000 + O_SRCSTOREPASS },
	{ "srckeypass", required_argument, NULL, 1000 + O_SRCKEYPASS },
	{ "srcalias", required_argument, NULL, 1000 + O_SRCALIAS },
	{ "destalias", required_argument, NULL, 1000 + O_DESTALIAS },
	{ "destkeystore", required_argument, NULL, 1000 + O_KEYSTORE },
	{ "deststorepass", required_argument, NULL, 1000 + O_STOREPASS },
	{ "destkeypass", required_argument, NULL, 1000 + O_KEYPASS },
	{ "reference", no_argument, NULL, 1000 + O_REFERENCE },
	{ "ref-storepass", required_argument, NULL, 1000 + O_REF_STOREPASS },
	{ "ref-keypass", required_argument, NULL, 1000 + O_REF_KEYPASS },
	{ "allow-non-utf8-password", no_argument, NULL,
	  1000 + O_ALLOW_NON_UTF8 },
	{ "store-only", no_argument, NULL, 1000 + O_STORE_ONLY },
	{ "wait", required_argument, NULL, 1000 + O_WAIT },
	{ "deststoretype", required_argument, NULL, 1000 + O_DESTSTORETYPE },
	{ NULL, 0, NULL, 0 }
};

static const char *option_name(int id)
{
	for (size_t i = 0; long_options[i].name; i++)
		if (long_options[i].val == 1000 + id)
			return long_options[i].name;
	return "?";
}

#define STOREPASS_HELP \
	"  -k, --keystore FILE     the keystore\n" \
	"      --storepass SRC     store password (see PASSWORDS)\n"
#define KEYPASS_HELP \
	"      --keypass SRC       key password (default: the store password)\n"
#define KEYPASS_FOR_HELP \
	"      --keypass-for ALIAS=SRC\n" \
	"                          the password of one key (repeatable); a key\n" \
	"                          no password opens is asked for on the\n" \
	"                          terminal, naming it\n"
#define STRICT_JAVA_HELP \
	"      --strict-java       refuse keys wolfJCE cannot load (other than\n" \
	"                          RSA, RSASSA-PSS, EC, ML-DSA, SLH-DSA) and the\n" \
	"                          empty alias, instead of a warning\n"
/* Commands that take a new store or key password (and this option). */
#define NEWPW B(O_ALLOW_NON_UTF8)
#define NEWPW_HELP \
	"      --allow-non-utf8-password\n" \
	"                          take a new password that is not valid\n" \
	"                          UTF-8 (Java can never use it; refused\n" \
	"                          without this)\n"
#define NOMAC_HELP \
	"      --no-mac-ok         accept a PKCS#12 file without a MAC (its\n" \
	"                          contents are then not authenticated)\n"
#define ITER_HELP \
	"      --iterations N      PBKDF2 iterations for what is encrypted or\n" \
	"                          MACed (>= 10000; default: the property\n" \
	"                          wolfjce.wks.iterationCount, 210000)\n"

static const cli_cmd commands[] = {
	{ "create", cmd_create,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_ITERATIONS) |
		  B(O_FORCE) | NEWPW,
	  "create a new, empty keystore",
	  "usage: wks create -k FILE [--storepass SRC] [--iterations N] [--force]\n"
	  "\nCreate an empty keystore.  The password is asked twice when it\n"
	  "comes from the terminal.  An existing FILE is kept unless --force.\n\n"
	  STOREPASS_HELP ITER_HELP NEWPW_HELP
	  "      --force             replace an existing file\n" },
	{ "list", cmd_list,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_NO_STOREPASS) |
		  B(O_ALIAS) | B(O_VERBOSE) | B(O_JSON),
	  "list the entries of a keystore",
	  "usage: wks list -k FILE [-a ALIAS] [-v | --json] [--storepass SRC | --no-storepass]\n"
	  "\nList aliases, entry types and creation times (UTC).  -v adds, per\n"
	  "certificate, subject, issuer, validity and status (EXPIRED, NOT YET\n"
	  "VALID), serial, signature algorithm, SHA-1 and SHA-256\n"
	  "fingerprints, SubjectAltName, key usage, extended key usage, basic\n"
	  "constraints and key algorithm and size.  --json prints one object:\n"
	  "  {\"entries\": [{\"alias\", \"type\", \"created_ms\", \"chain_sha256\" |\n"
	  "   \"cert_sha256\" | \"algorithm\", \"certificates\": [{\"subject\",\n"
	  "   \"issuer\", \"serial\", \"not_before\", \"not_after\" (ISO 8601 UTC),\n"
	  "   \"status\", \"signature_algorithm\", \"sha1\", \"key_algorithm\",\n"
	  "   \"key_size\", \"key_curve\"}]}, ...]}, aliases sorted.\n"
	  "Without a store password (none given and no terminal, or\n"
	  "--no-storepass) the integrity check is skipped, with a note on stderr.\n\n"
	  STOREPASS_HELP
	  "      --no-storepass      skip the integrity check, do not prompt\n"
	  "  -a, --alias NAME        only this entry\n"
	  "  -v, --verbose           certificate and key details\n"
	  "      --json              JSON output\n" },
	{ "import-key", cmd_import_key,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_ALIAS) | B(O_KEY) | B(O_CHAIN) | B(O_INPASS) |
		  B(O_ITERATIONS) | B(O_FORCE) | B(O_STRICT_JAVA) | NEWPW,
	  "import a private key with its certificate chain",
	  "usage: wks import-key -k FILE -a ALIAS --key KEYFILE [--chain CERTS]...\n"
	  "\nImport a private key (PEM or DER; PKCS#8, encrypted PKCS#8, or\n"
	  "traditional RSA/EC PEM, encrypted or not) with its certificate chain.\n"
	  "Certificates come from the --chain files (PEM bundles, PKCS#7 or\n"
	  "DER, repeatable) and from a PEM key file itself; they are put in\n"
	  "order, leaf first, whatever order they are given in.  The leaf must\n"
	  "match the key and each certificate must be signed by the next.\n"
	  "A missing store is created (its password asked twice if prompted).\n\n"
	  STOREPASS_HELP KEYPASS_HELP
	  "  -a, --alias NAME        the entry to create\n"
	  "      --key FILE          the private key\n"
	  "      --chain FILE        certificates (repeatable)\n"
	  "      --inpass SRC        passphrase of an encrypted key file\n"
	  STRICT_JAVA_HELP ITER_HELP NEWPW_HELP
	  "      --force             replace an existing entry\n" },
	{ "import-cert", cmd_import_cert,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_ALIAS) | B(O_CERT) | B(O_ITERATIONS) | B(O_FORCE) |
		  NEWPW,
	  "import a trusted certificate, or a CA reply onto a key entry",
	  "usage: wks import-cert -k FILE -a ALIAS --cert CERTFILE [--keypass SRC]\n"
	  "\nImport one trusted certificate (PEM or DER).  A trusted certificate\n"
	  "never replaces a key entry (a secret key entry is refused).\n"
	  "When ALIAS is a private key entry, CERTFILE is a CA's reply (one\n"
	  "certificate, a PEM chain, or PKCS#7 in PEM or DER) as keytool takes\n"
	  "it: one of its certificates must hold the entry's public key; the\n"
	  "reply's chain, completed from the store's trusted certificate\n"
	  "entries up to a self-signed root, replaces the entry's chain.  The\n"
	  "key is kept (encrypted again under the key password).  Otherwise\n"
	  "the store is left unchanged (exit 8).  A missing store is created\n"
	  "(its password asked twice if prompted).\n\n"
	  STOREPASS_HELP KEYPASS_HELP
	  "  -a, --alias NAME        the entry to create (or the key entry)\n"
	  "      --cert FILE         the certificate, or the reply\n"
	  ITER_HELP NEWPW_HELP
	  "      --force             replace an existing certificate entry\n" },
	{ "import-secret", cmd_import_secret,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_ALIAS) | B(O_HEX) | B(O_IN) | B(O_GENERATE) |
		  B(O_ALGORITHM) | B(O_ITERATIONS) | B(O_FORCE) | NEWPW,
	  "import or generate a secret key",
	  "usage: wks import-secret -k FILE -a ALIAS (--hex SRC | --in FILE |\n"
	  "                         --generate aes-128|aes-256|hmac-sha256)\n"
	  "                         [--algorithm NAME]\n"
	  "\nStore a secret key: hex text (--hex takes HEX, or a source as for\n"
	  "passwords: pass:HEX, env:VAR, file:PATH, fd:N, stdin), the raw bytes\n"
	  "of a file, or fresh random bytes.  The JCA algorithm name defaults\n"
	  "to \"AES\" (16, 24 or 32 bytes) or \"HmacSHA256\" (hmac-sha256).\n"
	  "A missing store is created (its password asked twice if prompted).\n\n"
	  STOREPASS_HELP KEYPASS_HELP
	  "  -a, --alias NAME        the entry to create\n"
	  "      --hex SRC           the key as hex\n"
	  "      --in FILE           the key as raw bytes\n"
	  "      --generate KIND     aes-128, aes-256 or hmac-sha256\n"
	  "      --algorithm NAME    JCA algorithm name (AES, HmacSHA256, ...)\n"
	  ITER_HELP NEWPW_HELP
	  "      --force             replace an existing entry\n" },
	{ "import-p12", cmd_import_p12,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_ALIAS) | B(O_IN) | B(O_INPASS) | B(O_ITERATIONS) |
		  B(O_FORCE) | B(O_NO_MAC_OK) | B(O_STRICT_JAVA) | NEWPW,
	  "import the entries of a PKCS#12 file",
	  "usage: wks import-p12 -k FILE --in P12FILE [-a ALIAS] [--inpass SRC]\n"
	  "\nImport every private key (with its chain), every secret key (Java's\n"
	  "secret bags: keytool -genseckey, -importpass) and every certificate\n"
	  "that belongs to no chain from a PKCS#12 file, under their friendly\n"
	  "names (entries without one are named 1, 2, ...); anything else is\n"
	  "skipped with a note naming it.  With -a only the entry of that\n"
	  "name; a file with a single entry is imported under ALIAS whatever\n"
	  "its name.  A file without a MAC is refused unless --no-mac-ok.  A\n"
	  "certificate of a key's chain is no entry of its own unless it has\n"
	  "Java's trusted-certificate attribute.  A missing store is created\n"
	  "(its password asked twice if prompted).\n\n"
	  STOREPASS_HELP KEYPASS_HELP
	  "      --in FILE           the PKCS#12 file\n"
	  "      --inpass SRC        its password\n"
	  "  -a, --alias NAME        import only this entry\n"
	  NOMAC_HELP STRICT_JAVA_HELP ITER_HELP NEWPW_HELP
	  "      --force             replace existing entries\n" },
	{ "export-p12", cmd_export_p12,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_ALIAS) | B(O_OUT) | B(O_OUTPASS) | B(O_ITERATIONS) |
		  B(O_FORCE) | B(O_KEYPASS_FOR),
	  "export entries to a PKCS#12 file",
	  "usage: wks export-p12 -k FILE [-a ALIAS] -o P12FILE [--outpass SRC]\n"
	  "\nWrite the entries (or only ALIAS) to a PKCS#12 file readable by\n"
	  "`openssl pkcs12` and Java: keys and certificates encrypted with\n"
	  "AES-256-CBC (PBKDF2-HMAC-SHA-256), MAC HMAC-SHA-256.  Secret keys\n"
	  "go in secret bags as Java writes them (keytool lists them as\n"
	  "SecretKeyEntry); one whose algorithm has no OID (e.g. ChaCha20) is\n"
	  "skipped with a note naming it.\n\n"
	  STOREPASS_HELP KEYPASS_HELP
	  KEYPASS_FOR_HELP
	  "  -a, --alias NAME        only this entry\n"
	  "  -o, --out FILE          the PKCS#12 file (binary; not a terminal;\n"
	  "                          mode 0600; never the keystore itself)\n"
	  "      --force             replace an existing --out file\n"
	  "      --outpass SRC       its password (asked twice if prompted)\n"
	  "      --iterations N      PBKDF2 iterations of the PKCS#12 (MAC and\n"
	  "                          encryption; default: the property\n"
	  "                          wolfjce.wks.iterationCount, 210000)\n" },
	{ "export-key", cmd_export_key,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_NO_STOREPASS) |
		  B(O_KEYPASS) | B(O_ALIAS) | B(O_OUT) | B(O_DER) |
		  B(O_PEM) | B(O_OUTPASS) | B(O_ENCRYPT) | B(O_ITERATIONS) |
		  B(O_FORCE) | B(O_KEYPASS_FOR) | B(O_REFERENCE) |
		  B(O_REF_STOREPASS) | B(O_REF_KEYPASS),
	  "export a private key (PKCS#8) or a secret key",
	  "usage: wks export-key -k FILE -a ALIAS [-o OUT] [--der | --pem]\n"
	  "                      [--encrypt] [--outpass SRC]\n"
	  "       wks export-key -k FILE -a ALIAS --reference [-o OUT]\n"
	  "                      [--ref-storepass SRC] [--ref-keypass SRC]\n"
	  "\nWrite a private key as PKCS#8, exactly as stored (PEM by default),\n"
	  "or encrypted (--encrypt or --outpass: PKCS#8 with PBES2,\n"
	  "AES-256-CBC, PBKDF2-HMAC-SHA-256).  A secret key is written as hex\n"
	  "(--pem, the default) or as raw bytes (--der).\n\n"
	  STOREPASS_HELP
	  "      --no-storepass      skip the integrity check (needs --keypass)\n"
	  KEYPASS_HELP KEYPASS_FOR_HELP
	  "  -a, --alias NAME        the entry\n"
	  "  -o, --out FILE          output file (mode 0600; default stdout)\n"
	  "      --force             replace an existing --out file\n"
	  "      --der, --pem        encoding\n"
	  "      --encrypt           encrypt the output (password asked twice)\n"
	  "      --outpass SRC       encrypt the output with this password\n"
	  "      --iterations N      PBKDF2 iterations of the encryption\n"
	  "                          (default: the property\n"
	  "                          wolfjce.wks.iterationCount, 210000)\n"
	  "      --reference         write a key reference instead (PEM \"WKS KEY\n"
	  "                          REFERENCE\": the store's absolute path, the\n"
	  "                          alias, where the passwords come from; no\n"
	  "                          key, no password), which servers read as\n"
	  "                          their key through wks.so (references = yes;\n"
	  "                          docs/PROVIDER.md); checked to open first.\n"
	  "                          Not secret: mode 0644 is fine\n"
	  "      --ref-storepass SRC where the server gets the store password:\n"
	  "                          file:PATH, env:VAR or fd:N (never pass:);\n"
	  "                          without it, its passphrase callback\n"
	  "      --ref-keypass SRC   the same for the key password (default: the\n"
	  "                          store password, else the callback)\n" },
	{ "export-cert", cmd_export_cert,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_NO_STOREPASS) |
		  B(O_ALIAS) | B(O_OUT) | B(O_DER) | B(O_PEM) | B(O_LEAF) |
		  B(O_FORCE),
	  "export a certificate or a certificate chain",
	  "usage: wks export-cert -k FILE -a ALIAS [-o OUT] [--der | --pem] [--leaf]\n"
	  "\nWrite the certificate of a certificate entry, or the chain of a\n"
	  "private key entry (leaf first; only the leaf with --leaf), as PEM\n"
	  "(default) or DER (certificates concatenated).  Works without the\n"
	  "store password (the integrity check is then skipped, with a note).\n\n"
	  STOREPASS_HELP
	  "      --no-storepass      skip the integrity check, do not prompt\n"
	  "  -a, --alias NAME        the entry\n"
	  "  -o, --out FILE          output file (default stdout)\n"
	  "      --der, --pem        encoding\n"
	  "      --leaf              only the first certificate of a chain\n"
	  "      --force             replace an existing --out file\n" },
	{ "delete", cmd_delete,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_ALIAS) |
		  B(O_ITERATIONS),
	  "delete an entry",
	  "usage: wks delete -k FILE -a ALIAS\n\n"
	  STOREPASS_HELP
	  "  -a, --alias NAME        the entry to delete\n" ITER_HELP },
	{ "rename", cmd_rename,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_ALIAS) |
		  B(O_NEW_ALIAS) | B(O_ITERATIONS) | B(O_FORCE),
	  "rename an entry",
	  "usage: wks rename -k FILE -a ALIAS --new-alias NEW\n"
	  "\nGive an entry a new alias.  The entry is kept as it is (encrypted\n"
	  "key, creation time), so no key password is needed.\n\n"
	  STOREPASS_HELP
	  "  -a, --alias NAME        the entry\n"
	  "      --new-alias NEW     its new alias\n" ITER_HELP
	  "      --force             replace an existing entry named NEW\n" },
	{ "passwd", cmd_passwd,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_NEW_STOREPASS) |
		  B(O_ITERATIONS) | B(O_KEYS) | B(O_STORE_ONLY) | NEWPW,
	  "change the store password (and the keys that have it)",
	  "usage: wks passwd -k FILE [--storepass SRC] [--new-storepass SRC]\n"
	  "                  [--store-only]\n"
	  "\nVerify the store with its password and save it with a new one\n"
	  "(asked twice if prompted).  Every key entry whose password was the\n"
	  "old store password gets the new one too (a server that gives only\n"
	  "the store password still opens its keys); key entries with a\n"
	  "password of their own keep it and are named (keypasswd changes\n"
	  "them).  Says how many keys changed.\n\n"
	  STOREPASS_HELP
	  "      --new-storepass SRC the new store password\n"
	  "      --store-only        change the store password alone: every key\n"
	  "                          keeps its password, the old store password\n"
	  "                          included\n"
	  "      --keys              (the default; accepted for compatibility)\n"
	  ITER_HELP NEWPW_HELP },
	{ "keypasswd", cmd_keypasswd,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_NEW_KEYPASS) | B(O_ALIAS) | B(O_ITERATIONS) | NEWPW,
	  "change the password of a key entry",
	  "usage: wks keypasswd -k FILE -a ALIAS [--keypass SRC] [--new-keypass SRC]\n"
	  "\nDecrypt a key entry with its password and encrypt it again with a\n"
	  "new one (asked twice if prompted), a fresh salt and IV.  The\n"
	  "creation time is kept.\n\n"
	  STOREPASS_HELP KEYPASS_HELP
	  "      --new-keypass SRC   the new key password\n"
	  "  -a, --alias NAME        the entry\n" ITER_HELP NEWPW_HELP },
	{ "verify", cmd_verify,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_VERBOSE) | B(O_JSON) | B(O_KEYPASS_FOR),
	  "check the store MAC and every key entry",
	  "usage: wks verify -k FILE [--storepass SRC] [--keypass SRC]\n"
	  "\nCheck the store MAC, then decrypt every key entry with the key\n"
	  "password (with --keypass, an entry that the store password opens\n"
	  "passes too) and check that each private key matches its certificate.\n"
	  "Prints one line per key entry; the exit status is 0 only if all\n"
	  "pass (4 if the store MAC fails, 1 if an entry fails).\n\n"
	  STOREPASS_HELP KEYPASS_HELP KEYPASS_FOR_HELP
	  "  -v, --verbose           also list certificate entries\n"
	  "      --json              JSON output\n" },
	{ "convert", cmd_convert,
	  COMMON | B(O_IN) | B(O_OUT) | B(O_INPASS) | B(O_OUTPASS) |
		  B(O_KEYPASS) | B(O_ITERATIONS) | B(O_FORCE) |
		  B(O_NO_MAC_OK) | B(O_KEYPASS_FOR) | B(O_STRICT_JAVA) |
		  B(O_SRCKEYPASS) | B(O_DESTSTORETYPE) | NEWPW,
	  "convert a whole store: PKCS#12 or a Java keystore to WKS, WKS to PKCS#12",
	  "usage: wks convert --in FILE -o FILE [--inpass SRC] [--outpass SRC]\n"
	  "                   [--deststoretype wks|pkcs12]\n"
	  "\nConvert in one step.  A WKS input (recognised by its magic number)\n"
	  "becomes a PKCS#12 file; a JKS, JCEKS, BKS or BCFKS input (also by\n"
	  "its first bytes) becomes a WKS store as with wks import-keystore (key\n"
	  "passwords: --keypass-for ALIAS=SRC for that key, else --srckeypass,\n"
	  "else --inpass, else asked per key); anything else is read as\n"
	  "PKCS#12 and becomes a WKS store.  An output name whose extension\n"
	  "says another format (.wks; .p12, .pfx; .jks, .jceks) is refused\n"
	  "unless --deststoretype names the format to write.  --inpass is the\n"
	  "password of the input, --outpass that of the output (asked twice if\n"
	  "prompted).  The key passwords of a WKS input are --keypass-for,\n"
	  "else --keypass, else its store password; those of a new WKS store\n"
	  "are --keypass, by default its store password.  Prints one line per\n"
	  "entry and a summary.\n\n"
	  "      --in FILE           the input\n"
	  "  -o, --out FILE          the output (kept unless --force)\n"
	  "      --deststoretype T   the output's format, pkcs12 (for a WKS\n"
	  "                          input) or wks (for the others)\n"
	  "      --inpass SRC        password of the input\n"
	  "      --outpass SRC       password of the output\n"
	  "      --srckeypass SRC    key password of a Java keystore input\n"
	  KEYPASS_HELP KEYPASS_FOR_HELP NOMAC_HELP STRICT_JAVA_HELP ITER_HELP
	  NEWPW_HELP
	  "      --force             replace an existing output file\n" },
	{ "import-keystore", cmd_import_keystore,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_SRCKEYSTORE) | B(O_SRCSTORETYPE) | B(O_SRCSTOREPASS) |
		  B(O_SRCKEYPASS) | B(O_SRCALIAS) | B(O_DESTALIAS) |
		  B(O_NO_MAC_OK) | B(O_ITERATIONS) | B(O_FORCE) |
		  B(O_STRICT_JAVA) | B(O_KEYPASS_FOR) | NEWPW,
	  "import the entries of a Java, PKCS#12 or WKS keystore",
	  "usage: wks import-keystore --srckeystore FILE -k DEST.wks\n"
	  "                           [--srcstoretype jks|jceks|bks|bcfks|pkcs12|wks]\n"
	  "                           [--srcstorepass SRC] [--srckeypass SRC]\n"
	  "                           [--keypass-for A=SRC]...\n"
	  "                           [--srcalias A [--destalias B]] [--force]\n"
	  "\nAs keytool -importkeystore, without a JVM: copy the private keys\n"
	  "(with their chains), trusted certificates and secret keys of a JKS,\n"
	  "JCEKS, BKS, BCFKS, PKCS#12 or WKS keystore into the WKS store DEST,\n"
	  "which is created if missing (UBER is refused: convert it with\n"
	  "keytool first).  The source type is detected from its first\n"
	  "bytes.  Its integrity is checked with --srcstorepass first; each key\n"
	  "is opened with its --keypass-for password if given (only that), else\n"
	  "with --srckeypass if given, else with the source store password,\n"
	  "else (on a terminal) with a password asked for it.  An\n"
	  "entry that cannot be read is skipped and named, the others are\n"
	  "imported (exit status 1).  An alias that DEST holds already refuses\n"
	  "the whole import (nothing changes) unless --force replaces it.  Keys\n"
	  "are encrypted under --keypass, by default DEST's store password.\n"
	  "Prints one line per entry and a summary.\n\n"
	  "      --srckeystore FILE  the keystore to read\n"
	  "      --srcstoretype T    jks, jceks, bks, bcfks, pkcs12 or wks\n"
	  "                          (checked; uber is refused)\n"
	  "      --srcstorepass SRC  its store password\n"
	  "      --srckeypass SRC    the password of its keys\n"
	  "      --keypass-for A=SRC the password of its key A (repeatable)\n"
	  "      --srcalias A        import only this entry\n"
	  "      --destalias B       ... under this alias\n"
	  "  -k, --keystore FILE     the WKS store (also --destkeystore)\n"
	  "      --storepass SRC     its password (also --deststorepass)\n"
	  "      --keypass SRC       key password in it (also --destkeypass;\n"
	  "                          default: its store password)\n"
	  NOMAC_HELP ITER_HELP
	  "      --strict-java       refuse keys that Java cannot load\n"
	  NEWPW_HELP
	  "      --force             replace entries that DEST holds\n" },
	{ "import-certs", cmd_import_certs,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_IN) |
		  B(O_ALIAS_PREFIX) | B(O_ITERATIONS) | B(O_VERBOSE) | NEWPW,
	  "import trusted certificates from a CA bundle, a PKCS#7 or a folder",
	  "usage: wks import-certs -k FILE --in FILE|DIR [--alias-prefix P] [-v]\n"
	  "\nImport every certificate of a PEM bundle (e.g.\n"
	  "/etc/ssl/certs/ca-certificates.crt), a PKCS#7 file (.p7b, PEM or\n"
	  "DER), DER certificates, or the files of a folder (others are skipped\n"
	  "with a note) as trusted certificate entries.  Aliases are the\n"
	  "lowercased CN (else O, else the start of the SHA-256 fingerprint),\n"
	  "runs of spaces and punctuation made one '-', after --alias-prefix,\n"
	  "with -2, -3, ... where taken.  Certificates the store holds already\n"
	  "(same SHA-256) are skipped.  A malformed certificate or PEM block\n"
	  "fails the whole import; the store is then unchanged.  A missing store\n"
	  "is created (its password asked twice if prompted).  Prints \"N\n"
	  "imported, M already present\".\n\n"
	  STOREPASS_HELP
	  "      --in FILE|DIR       the certificates\n"
	  "      --alias-prefix P    put P before every new alias\n"
	  "  -v, --verbose           print each new alias and its subject\n"
	  ITER_HELP NEWPW_HELP },
	{ "genkeypair", cmd_genkeypair,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_ALIAS) | B(O_KEYALG) | B(O_KEYSIZE) | B(O_CURVE) |
		  B(O_DNAME) | B(O_VALIDITY) | B(O_EXT) | B(O_SIGALG) |
		  B(O_ITERATIONS) | B(O_STRICT_JAVA) | NEWPW,
	  "make a key pair and a self-signed certificate in the store",
	  "usage: wks genkeypair -k FILE -a ALIAS --dname NAME [--keyalg RSA|EC]\n"
	  "                      [--keysize BITS | --curve P-256|P-384|P-521]\n"
	  "                      [--validity DAYS] [--ext EXT]... [--sigalg ALG]\n"
	  "\nMake a key pair and a self-signed X.509 v3 certificate for it (random\n"
	  "64-bit serial number, SubjectKeyIdentifier, valid from now), as\n"
	  "keytool -genkeypair does, and store them as a private key entry: the\n"
	  "key is made in memory and never written anywhere else.  A missing\n"
	  "store is created (its password asked twice if prompted).  An existing\n"
	  "ALIAS is refused (exit 7).\n\n"
	  STOREPASS_HELP KEYPASS_HELP
	  "  -a, --alias NAME        the entry to create\n"
	  "      --dname NAME        the subject, keytool style, most specific\n"
	  "                          first: \"CN=www.example.com, O=Example, C=US\"\n"
	  "                          (\\, or quotes for a comma in a value)\n"
	  "      --keyalg ALG        RSA (default) or EC\n"
	  "      --keysize BITS      RSA: 2048 (default) to 8192; EC: 256, 384, 521\n"
	  "      --curve NAME        EC: P-256 (default), P-384, P-521, or\n"
	  "                          secp256r1, secp384r1, secp521r1 (also\n"
	  "                          --groupname)\n"
	  "      --validity DAYS     days of validity (default 90)\n"
	  "      --ext EXT           an extension (repeatable), keytool syntax:\n"
	  "                          san=dns:NAME,ip:ADDR,email:ADDR,uri:URI\n"
	  "                          ku=digitalSignature,keyEncipherment,...\n"
	  "                          eku=serverAuth,clientAuth,...|OID\n"
	  "                          bc=ca:true[,pathlen:N]; NAME:critical=...\n"
	  "      --sigalg ALG        SHA256withRSA, SHA384withECDSA, ... (default:\n"
	  "                          SHA-256, SHA-384 for P-384 and RSA >= 7680\n"
	  "                          bits, SHA-512 for P-521)\n"
	  ITER_HELP NEWPW_HELP
	  "      --strict-java       refuse the empty alias (wolfJCE's getKey(\"\")\n"
	  "                          never returns it; a warning without)\n" },
	{ "certreq", cmd_certreq,
	  COMMON | B(O_KEYSTORE) | B(O_STOREPASS) | B(O_KEYPASS) |
		  B(O_ALIAS) | B(O_OUT) | B(O_EXT) | B(O_SIGALG) | B(O_FORCE),
	  "write a PKCS#10 certificate request for a key entry",
	  "usage: wks certreq -k FILE -a ALIAS [-o FILE] [--ext EXT]... [--sigalg ALG]\n"
	  "\nWrite a PKCS#10 request (PEM) signed with the entry's key, for the\n"
	  "subject and public key of its certificate, as keytool -certreq does:\n"
	  "the extension request holds a SubjectKeyIdentifier and the --ext\n"
	  "extensions (syntax of genkeypair).  Send it to a CA; import the reply\n"
	  "with wks import-cert -a ALIAS --cert REPLY.\n\n"
	  STOREPASS_HELP KEYPASS_HELP
	  "  -a, --alias NAME        the private key entry\n"
	  "  -o, --out FILE          the request (default stdout)\n"
	  "      --force             replace an existing --out file\n"
	  "      --ext EXT           an extension to request (repeatable)\n"
	  "      --sigalg ALG        signature algorithm (default as genkeypair)\n" },
	{ "printcert", cmd_printcert,
	  COMMON | B(O_FILE),
	  "print certificates from a file, as keytool -printcert",
	  "usage: wks printcert [--file FILE]\n"
	  "\nPrint the certificates of FILE (default standard input): PEM, DER\n"
	  "or PKCS#7 (PEM or DER), one or several, as keytool -printcert does:\n"
	  "owner, issuer, serial number, validity (UTC), SHA-1 and SHA-256\n"
	  "fingerprints, signature algorithm, public key, version, extensions.\n\n"
	  "      --file FILE         the certificates\n" },
	{ "check-reference", cmd_check_reference,
	  COMMON | B(O_FILE) | B(O_INPASS) | B(O_CERT),
	  "read a key reference as a server will, and say what is wrong",
	  "usage: wks check-reference --file REF [--inpass SRC] [--cert FILE]\n"
	  "\nRead the key reference REF exactly as a server does: through\n"
	  "OpenSSL's configuration (OPENSSL_CONF, else OpenSSL's own file),\n"
	  "wks.so loaded there with references = yes, and the password sources\n"
	  "the reference names, as the user running this.  Run it as the user\n"
	  "the server reads its key as (root for nginx, apache2, haproxy,\n"
	  "lighttpd and stunnel4, which read keys before they drop privileges)\n"
	  "with the server's OPENSSL_CONF, before every start or reload: a\n"
	  "reload that cannot read the key stops apache2, and apache2 -t does\n"
	  "not read keys.  Prints \"REF: OK: ...\" when the key loads; else the\n"
	  "provider's messages, as the server would log them, and the step that\n"
	  "fails (password file, store password, alias, key password).\n\n"
	  "      --file REF          the key reference\n"
	  "      --inpass SRC        what the server's passphrase callback gives\n"
	  "                          (ssl_password_file, SSLPassPhraseDialog,\n"
	  "                          Python's password=) for a password the\n"
	  "                          reference does not name\n"
	  "      --cert FILE         also check that the key matches the first\n"
	  "                          certificate of FILE (the server's chain)\n"
	  "\nExit status: 0 the key loads; 1 OpenSSL's configuration does not\n"
	  "load wks.so with references = yes; 2 no password; 3 no such alias;\n"
	  "4 a wrong store or key password; 5 REF is not a key reference; 6 a\n"
	  "file (REF, the store, a password file) cannot be read; 8 the entry\n"
	  "is not a private key, or the key does not match --cert.\n" },
	{ NULL, NULL, 0, NULL, NULL }
};

/* The commands that change a store (or replace one with --force): they
 * take its lock, and --wait SECONDS (general_help_wait). */
static const char *const edit_cmds[] = {
	"create", "import-key", "import-cert", "import-secret", "import-p12",
	"delete", "rename", "passwd", "keypasswd", "convert",
	"import-keystore", "import-certs", "genkeypair", NULL
};

static int is_edit(const cli_cmd *cmd)
{
	for (size_t i = 0; edit_cmds[i]; i++)
		if (!strcmp(cmd->name, edit_cmds[i]))
			return 1;
	return 0;
}

/* The general part of the help, in three pieces: the middle one names
 * --keypass-for, and a command's --help shows it only if the command
 * takes that option. */
static const char general_help_pw[] =
	"\n"
	"PASSWORDS\n"
	"  A password option takes a source: pass:TEXT (visible to other\n"
	"  users; for tests), env:VAR, file:PATH (first line), fd:N (first\n"
	"  line), or stdin.  Without one the password is asked on the terminal\n"
	"  without echo (twice for a new password); without a terminal the\n"
	"  command fails instead of waiting.  A key password defaults to the\n"
	"  store password.\n";
static const char general_help_kpf[] =
	"  --keypass-for ALIAS=SRC gives one key its own (export-key,\n"
	"  export-p12, verify, convert, import-keystore).\n";
static const char general_help_wait[] =
	"\n"
	"LOCKS\n"
	"  A command that changes a store (create --force, import-*, delete,\n"
	"  rename, passwd, keypasswd, convert --force, genkeypair) reads its\n"
	"  passwords first, then takes the store's lock: while another edit\n"
	"  holds it, it waits, and after a second says so (naming the process\n"
	"  that holds it).  --wait SECONDS gives up after that long: exit 10,\n"
	"  nothing changed.\n";
static const char general_help[] =
	"  An empty password (pass:, an empty variable or file) is an error;\n"
	"  so is a new store or key password that is not UTF-8 (Java could\n"
	"  never use it) unless --allow-non-utf8-password.\n"
	"  Passwords are never printed or logged.\n"
	"\n"
	"ENVIRONMENT\n"
	"  WKS_PROPERTIES  a java.security-style properties file, e.g.\n"
	"                  wolfjce.wks.iterationCount=300000\n"
	"\n"
	"EXIT STATUS\n"
	"  0 success              5 malformed input (store, key, certificate)\n"
	"  1 failure (verify)     6 I/O error (cannot read or write a file)\n"
	"  2 usage error          7 alias or output file exists (use --force)\n"
	"  3 alias not found      8 rejected input: key and certificate do\n"
	"  4 integrity check        not match, broken chain, wrong entry\n"
	"    failed: wrong          type, unsupported algorithm\n"
	"    password or modified 9 a configured limit was exceeded\n"
	"                         10 busy: the store stayed locked (--wait)\n"
	"  130, 143 SIGINT, SIGTERM before anything changed (a signal while\n"
	"    a save commits is held: the change is in, exit 0 with a note)\n"
	"  Once a change is saved, a report that cannot be written to standard\n"
	"  output (a full disk, a closed pipe) is a warning: the status stays\n"
	"  the change's.  A command that changed nothing exits 6 then.\n";

static void print_main_help(FILE *f)
{
	fprintf(f, "usage: wks COMMAND [OPTIONS]     (wks COMMAND --help)\n"
		   "       wks --version\n\n"
		   "Create, inspect and maintain WKS keystores (wolfJCE).\n\n"
		   "COMMANDS\n");
	for (const cli_cmd *cmd = commands; cmd->name; cmd++)
		fprintf(f, "  %-14s %s\n", cmd->name, cmd->summary);
	fputs(general_help_pw, f);
	fputs(general_help_kpf, f);
	fputs(general_help, f);
	fputs(general_help_wait, f);
}

/* `wks CMD --help`. */
static void print_cmd_help(const cli_cmd *cmd)
{
	fputs(cmd->usage, stdout);
	fputs(general_help_pw, stdout);
	if (cmd->options & B(O_KEYPASS_FOR))
		fputs(general_help_kpf, stdout);
	fputs(general_help, stdout);
	if (is_edit(cmd))
		fputs(general_help_wait, stdout);
}

static int add_chain(cli_ctx *c, const char *path)
{
	const char **n = realloc(c->chain, (c->chain_count + 1) * sizeof(*n));

	if (!n) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	n[c->chain_count++] = path;
	c->chain = n;
	return 0;
}

static int parse_iterations(cli_ctx *c, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 10000 || v > INT32_MAX) {
		cli_err(NULL, "--iterations: \"%s\" is not a number from 10000 "
			"to 2147483647", arg);
		return CLI_EXIT_USAGE;
	}
	c->iterations = v;
	c->has_iterations = 1;
	return 0;
}

static int parse_wait(cli_ctx *c, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v > 31536000) {
		cli_err(NULL, "--wait: \"%s\" is not a number of seconds from "
			"0 to 31536000", arg);
		return CLI_EXIT_USAGE;
	}
	c->wait_s = v;
	c->has_wait = 1;
	return 0;
}

/* For cli_keytool_hint(): does the current command take --name? */
static const cli_cmd *hint_cmd;

static int takes(const cli_cmd *cmd, int id)
{
	return (cmd->options & B(id)) != 0 || (id == O_WAIT && is_edit(cmd));
}

static int hint_applies(const char *name)
{
	for (size_t i = 0; long_options[i].name; i++)
		if (!strcmp(long_options[i].name, name))
			return takes(hint_cmd, long_options[i].val - 1000);
	return 0;
}

/* keytool-style single-dash words ("-keystore", which getopt would take
 * as "-k eystore"): a usage error with the option meant.  Values of
 * options are skipped. */
static int keytool_habits(const cli_cmd *cmd, int argc, char **argv)
{
	hint_cmd = cmd;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc;

		if (!strcmp(a, "--"))
			break;
		if (!strncmp(a, "--", 2)) {
			for (size_t j = 0; long_options[j].name; j++)
				if (!strcmp(a + 2, long_options[j].name) &&
				    long_options[j].has_arg == required_argument)
					i++;
			continue;
		}
		if (!strcmp(a, "-k") || !strcmp(a, "-a") || !strcmp(a, "-o")) {
			i++;
			continue;
		}
		if ((rc = cli_keytool_hint(cmd->name, a, hint_applies)) != 0)
			return rc;
	}
	return 0;
}

/* A word that is neither an option nor an option's value.  It is not
 * shown: it may be the rest of a password with a space in it (--storepass
 * pass:correct horse); its place and the option before it are. */
static void stray_argument(const cli_cmd *cmd, int argc, char **argv,
			   char **orig)
{
	const char *prev = NULL;
	int pos = 0, after_value = 0;

	for (int i = 1; i < argc; i++)
		if (orig[i] == argv[optind])
			pos = i;
	if (pos >= 1 && orig[pos - 1][0] == '-') {
		prev = orig[pos - 1];
	} else if (pos >= 2 && orig[pos - 2][0] == '-' &&
		   !strchr(orig[pos - 2], '=')) {
		prev = orig[pos - 2];
		after_value = 1;
	}
	if (prev && strcmp(prev, "--"))
		cli_err(NULL, "%s: unexpected argument %d (after %s%.*s; not "
			"shown: it may be part of a password; a value with "
			"spaces needs quotes; see wks %s --help)", cmd->name,
			pos, after_value ? "the value of " : "",
			(int)strcspn(prev, "="), prev, cmd->name);
	else
		cli_err(NULL, "%s: unexpected argument %d (not shown: it may "
			"be part of a password; options take the form --name "
			"VALUE; see wks %s --help)", cmd->name, pos, cmd->name);
}

/* An alias longer than a keystore can hold (65535 bytes of Java's
 * modified UTF-8, where a 4-byte character takes 6) names no entry and
 * could never be saved: refused as it is given (the library's setters
 * refuse it too).  0 or CLI_EXIT_LIMIT. */
static int alias_fits(const char *alias, const char *option)
{
	size_t n;

	if (!alias)
		return 0;
	n = strlen(alias);
	for (const char *p = alias; *p; p++)
		if ((unsigned char)*p >= 0xF0)
			n += 2;
	if (n <= 65535)
		return 0;
	cli_err(NULL, "%s: an alias of %zu bytes (in Java's modified UTF-8); "
		"a keystore holds at most 65535", option, n);
	return CLI_EXIT_LIMIT;
}

static int parse_options2(cli_ctx *c, int argc, char **argv, char **orig)
{
	const cli_cmd *cmd = c->cmd;
	int ch, rc = 0;

	if ((rc = keytool_habits(cmd, argc, argv)) != 0)
		return rc;

	opterr = 0;
	optind = 1; /* argv[0] is the command name */
	while ((ch = getopt_long(argc, argv, ":k:a:o:vh", long_options,
				 NULL)) != -1) {
		int id;

		switch (ch) {
		case 'k': id = O_KEYSTORE; break;
		case 'a': id = O_ALIAS; break;
		case 'o': id = O_OUT; break;
		case 'v': id = O_VERBOSE; break;
		case 'h': id = O_HELP; break;
		case ':':
			cli_err(NULL, "%s: option %s needs a value", cmd->name,
				argv[optind - 1]);
			return CLI_EXIT_USAGE;
		case '?':
			if (optopt)
				cli_err(NULL, "%s: unknown option -%c", cmd->name,
					optopt);
			else /* the name only: "--opt=VALUE" may hold a
			      * password (--storpass=pass:x, a typo) */
				cli_err(NULL, "%s: unknown option %.*s", cmd->name,
					(int)strcspn(argv[optind - 1], "="),
					argv[optind - 1]);
			cli_err(NULL, "try: wks %s --help", cmd->name);
			return CLI_EXIT_USAGE;
		default:
			id = ch - 1000;
			break;
		}
		if (id < 0 || id >= O_COUNT)
			return CLI_EXIT_USAGE;
		if (!takes(cmd, id)) {
			cli_err(NULL, "%s: option --%s does not apply (see wks %s "
				"--help)", cmd->name, option_name(id), cmd->name);
			return CLI_EXIT_USAGE;
		}
		switch (id) {
		case O_KEYSTORE: c->keystore = optarg; break;
		case O_ALIAS: c->alias = optarg; break;
		case O_OUT: c->out = optarg; break;
		case O_STOREPASS:
			rc = cli_pwsrc_parse(&c->storepass, "--storepass", optarg);
			break;
		case O_KEYPASS:
			rc = cli_pwsrc_parse(&c->keypass, "--keypass", optarg);
			break;
		case O_NEW_STOREPASS:
			rc = cli_pwsrc_parse(&c->new_storepass, "--new-storepass",
					     optarg);
			break;
		case O_NEW_KEYPASS:
			rc = cli_pwsrc_parse(&c->new_keypass, "--new-keypass",
					     optarg);
			break;
		case O_INPASS:
			rc = cli_pwsrc_parse(&c->inpass, "--inpass", optarg);
			break;
		case O_OUTPASS:
			rc = cli_pwsrc_parse(&c->outpass, "--outpass", optarg);
			break;
		case O_HEX:
			rc = cli_pwsrc_parse(&c->hex, "--hex", optarg);
			break;
		case O_NO_STOREPASS: c->no_storepass = 1; break;
		case O_JSON: c->json = 1; break;
		case O_DER: c->der = 1; break;
		case O_PEM: c->pem = 1; break;
		case O_KEY: c->key = optarg; break;
		case O_CHAIN: rc = add_chain(c, optarg); break;
		case O_CERT: c->cert = optarg; break;
		case O_IN: c->in = optarg; break;
		case O_ITERATIONS: rc = parse_iterations(c, optarg); break;
		case O_FORCE: c->force = 1; break;
		case O_VERBOSE: c->verbose = 1; break;
		case O_LEAF: c->leaf = 1; break;
		case O_GENERATE: c->generate = optarg; break;
		case O_ALGORITHM: c->algorithm = optarg; break;
		case O_NEW_ALIAS: c->new_alias = optarg; break;
		case O_ENCRYPT: c->encrypt = 1; break;
		case O_NO_MAC_OK: c->no_mac_ok = 1; break;
		case O_STRICT_JAVA: c->strict_java = 1; break;
		case O_KEYS: c->change_keys = 1; break;
		case O_KEYPASS_FOR: rc = cli_keypass_for_add(c, optarg); break;
		case O_KEYALG: c->keyalg = optarg; break;
		case O_KEYSIZE: c->keysize = optarg; break;
		case O_CURVE: c->curve = optarg; break;
		case O_DNAME: c->dname = optarg; break;
		case O_VALIDITY: c->validity = optarg; break;
		case O_EXT: rc = cli_ext_add(c, optarg); break;
		case O_SIGALG: c->sigalg = optarg; break;
		case O_FILE: c->file = optarg; break;
		case O_ALIAS_PREFIX: c->alias_prefix = optarg; break;
		case O_SRCKEYSTORE: c->srckeystore = optarg; break;
		case O_SRCSTORETYPE: c->srcstoretype = optarg; break;
		case O_SRCSTOREPASS:
			rc = cli_pwsrc_parse(&c->srcstorepass, "--srcstorepass",
					     optarg);
			break;
		case O_SRCKEYPASS:
			rc = cli_pwsrc_parse(&c->srckeypass, "--srckeypass",
					     optarg);
			break;
		case O_SRCALIAS: c->srcalias = optarg; break;
		case O_DESTALIAS: c->destalias = optarg; break;
		case O_REFERENCE: c->reference = 1; break;
		case O_REF_STOREPASS: c->ref_storepass = optarg; break;
		case O_REF_KEYPASS: c->ref_keypass = optarg; break;
		case O_ALLOW_NON_UTF8: c->allow_non_utf8 = 1; break;
		case O_STORE_ONLY: c->store_only = 1; break;
		case O_WAIT: rc = parse_wait(c, optarg); break;
		case O_DESTSTORETYPE: c->deststoretype = optarg; break;
		case O_HELP:
			print_cmd_help(cmd);
			return -1;
		default: break;
		}
		if (rc)
			return rc;
	}
	if (optind < argc) {
		stray_argument(cmd, argc, argv, orig);
		return CLI_EXIT_USAGE;
	}
	if (c->der && c->pem) {
		cli_err(NULL, "%s: --der and --pem exclude each other",
			cmd->name);
		return CLI_EXIT_USAGE;
	}
	if (c->json && c->verbose && cmd->run == cmd_list) {
		cli_err(NULL, "list: --json and -v exclude each other");
		return CLI_EXIT_USAGE;
	}
	if (c->no_storepass && c->storepass.kind != CLI_PWSRC_NONE) {
		cli_err(NULL, "%s: --storepass and --no-storepass exclude each "
			"other", cmd->name);
		return CLI_EXIT_USAGE;
	}
	if ((rc = alias_fits(c->alias, "--alias")) != 0 ||
	    (rc = alias_fits(c->new_alias, "--new-alias")) != 0 ||
	    (rc = alias_fits(c->destalias, "--destalias")) != 0)
		return rc;
	return 0;
}

static int parse_options(cli_ctx *c, int argc, char **argv)
{
	/* getopt_long() reorders argv: keep the order as given, to say
	 * where a stray argument was. */
	char **orig = malloc((size_t)argc * sizeof(*orig));
	int rc;

	if (!orig) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	memcpy(orig, argv, (size_t)argc * sizeof(*orig));
	rc = parse_options2(c, argc, argv, orig);
	free(orig);
	return rc;
}

static void ctx_clear(cli_ctx *c)
{
	cli_pwsrc_clear(&c->storepass);
	cli_pwsrc_clear(&c->keypass);
	cli_pwsrc_clear(&c->new_storepass);
	cli_pwsrc_clear(&c->new_keypass);
	cli_pwsrc_clear(&c->inpass);
	cli_pwsrc_clear(&c->outpass);
	cli_pwsrc_clear(&c->hex);
	cli_pwsrc_clear(&c->srcstorepass);
	cli_pwsrc_clear(&c->srckeypass);
	free(c->chain);
	free(c->ext);
	cli_keypass_for_clear(c);
}

/* Library warnings (e.g. a bad value in the properties file, quoted in
 * the message: libwks escapes the value itself, backslashes included;
 * the rest is escaped here, as everything from a file is). */
static void on_warning(const char *message, void *ctx)
{
	char *d = cli_display_escaped(message);

	(void)ctx;
	cli_err(NULL, "warning: %s", d ? d : "");
	free(d);
}

/* Set-user-ID, set-group-ID or with file capabilities (the kernel's
 * secure-execution mode, as secure_getenv() sees it). */
static int secure_mode(void)
{
#if defined(__linux__) && defined(AT_SECURE)
	if (getauxval(AT_SECURE) != 0)
		return 1;
#endif
	return getuid() != geteuid() || getgid() != getegid();
}

/*
 * Standard output at the end (what was not written yet is flushed): a
 * write that failed (a full disk, a pipe whose reader has gone) fails a
 * command that changed nothing (CLI_EXIT_IO, as for every other output);
 * once a change is saved (cli_saved(): a store, an output file) it is a
 * warning and the status stays the change's, so that a script trusts the
 * store's new state (after passwd, the new password).
 */
static int finish_output(int rc)
{
	int e = fflush(stdout) != 0 ? errno : 0;

	if (!e && !ferror(stdout))
		return rc;
	if (cli_saved()) {
		cli_err(NULL, "warning: the change is saved, but its report could "
			"not be written to standard output%s%s", e ? ": " : "",
			e ? strerror(e) : "");
		return rc;
	}
	cli_err(NULL, "cannot write to standard output%s%s", e ? ": " : "",
		e ? strerror(e) : "");
	return rc == CLI_EXIT_OK ? CLI_EXIT_IO : rc;
}

int main(int argc, char **argv)
{
	cli_ctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	/* One rule for every path and source wks is given: it acts with its
	 * caller's privileges only.  Set-id (or with capabilities) it would
	 * read --keystore, --in and file: passwords and write -o files with
	 * privileges its caller lacks, and trust its caller's environment
	 * (env: passwords, WKS_PROPERTIES, WKS_TEST_PAUSE_AT): refused. */
	if (secure_mode()) {
		cli_err(NULL, "refusing to run set-user-ID, set-group-ID or with "
			"file capabilities: it would read and write the files "
			"it is given with privileges its caller lacks");
		return CLI_EXIT_USAGE;
	}
	/* A reader that has gone (wks ... | head) must not kill an edit
	 * after its change is saved: a write to the pipe fails with EPIPE
	 * instead, and finish_output() says what that means. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		print_main_help(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			for (const cli_cmd *cmd = commands; cmd->name; cmd++)
				if (!strcmp(cmd->name, argv[2])) {
					print_cmd_help(cmd);
					return finish_output(CLI_EXIT_OK);
				}
		}
		print_main_help(stdout);
		return finish_output(CLI_EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("wks %s (libwks %s, %s)\n", WKS_VERSION_STRING,
		       wks_version(), cli_crypto_version());
		return finish_output(CLI_EXIT_OK);
	}
	for (const cli_cmd *cmd = commands; cmd->name; cmd++)
		if (!strcmp(cmd->name, argv[1]))
			c.cmd = cmd;
	if (!c.cmd) {
		if ((rc = cli_keytool_command(argv[1])) != 0)
			return rc;
		cli_err(NULL, "unknown command \"%s\" (see wks --help)", argv[1]);
		return CLI_EXIT_USAGE;
	}
	wks_set_warning_handler(on_warning, NULL);
	rc = parse_options(&c, argc - 1, argv + 1);
	if (rc == 0)
		rc = c.cmd->run(&c);
	else if (rc < 0)
		rc = CLI_EXIT_OK; /* --help */
	ctx_clear(&c);
	return finish_output(rc);
}
