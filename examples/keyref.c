/*
 * keyref.c - key reference files with <wks/uri.h>.
 *
 * With a FILE, says what the key reference FILE names: the store, the
 * alias and where the passwords come from (it reads no password and
 * opens no store: `wks check-reference` does that, as a server would).
 * Without one, writes the reference `wks export-key --reference` would
 * write for the key "server" of /etc/wks/server.wks with its store
 * password in /etc/wks/storepass, prints it, and reads it back.
 *
 *   usage: wks-example-keyref [FILE]
 */
#include <stdio.h>
#include <stdlib.h>

#include <wks/uri.h>

/* "file:/etc/wks/storepass", "env:VAR", "fd:3", or what is used
 * without a source (`none`). */
static void print_source(const char *what, const wks_pwsrc *src,
			 const char *none)
{
	static const char *const kinds[] = { "", "pass:", "env:", "file:",
					     "fd:" };

	if (!src)
		printf("%s: %s\n", what, none);
	else if (wks_pwsrc_kind(src) == WKS_PW_FD)
		printf("%s: fd:%d\n", what, wks_pwsrc_fd(src));
	else
		printf("%s: %s%s\n", what, kinds[wks_pwsrc_kind(src)],
		       wks_pwsrc_value(src, NULL));
}

static int show(const char *text, size_t len, const char *name)
{
	wks_uri *ref = NULL;

	if (wks_ref_parse(&ref, text, len) != WKS_OK) {
		fprintf(stderr, "%s: %s\n", name, wks_error_detail());
		return 1;
	}
	printf("store: %s\nalias: %s\n", wks_uri_path(ref), wks_uri_alias(ref));
	print_source("store password", wks_uri_storepass(ref),
		     "from the server's passphrase callback");
	print_source("key password", wks_uri_keypass(ref),
		     "the store password (else the server's passphrase "
		     "callback)");
	wks_uri_free(ref);
	return 0;
}

int main(int argc, char **argv)
{
	static const char src[] = "file:/etc/wks/storepass";
	wks_pwsrc *storepass = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc = 1;

	if (argc > 1) {
		/* A reference is small: at most 64 KiB of notes around one
		 * block of at most 8 KiB, and the same after it. */
		static char buf[2 * WKS_REF_TEXT_MAX + WKS_REF_BLOCK_MAX + 1];
		FILE *f = fopen(argv[1], "rb");

		if (!f) {
			perror(argv[1]);
			return 1;
		}
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		if (len == sizeof(buf)) {
			fprintf(stderr, "%s: too long for a key reference\n",
				argv[1]);
			return 1;
		}
		return show(buf, len, argv[1]);
	}
	if (wks_pwsrc_parse(&storepass, src, sizeof(src) - 1) != WKS_OK ||
	    wks_ref_encode(&text, &len, "/etc/wks/server.wks", "server",
			   storepass, NULL) != WKS_OK) {
		fprintf(stderr, "keyref: %s\n", wks_error_detail());
		goto done;
	}
	fwrite(text, 1, len, stdout);
	printf("\nread back:\n");
	rc = show(text, len, "the reference");
done:
	wks_free(text);
	wks_pwsrc_free(storepass);
	return rc;
}
