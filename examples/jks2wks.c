/*
 * jks2wks.c - migrate a Java keystore (JKS or JCEKS; Bouncy Castle's BKS
 * and BCFKS read the same way) to WKS with <wks/convert.h>, no JVM needed.
 *
 * Reads the keystore, checking its integrity digest with the store
 * password; every key is tried with the store password and then with the
 * passwords a callback gives per alias (here: from a table; a real program
 * would prompt); keys keep the password that opened them.  What could not
 * be taken is listed with the reason.  The WKS store is saved to OUT, and
 * the same entries are written as PKCS#12 to OUT.p12 (keys under the
 * store password, as PKCS#12 readers expect).
 *
 *   usage: wks-example-jks2wks [IN.jks OUT.wks]
 *
 * Without arguments it converts a small JKS built into the program (made
 * by `keytool -genkeypair` and `-importcert`: a key "server" under its own
 * password "serverpw", and a trusted certificate "ca"; store password
 * "changeit") into ./example-from-jks.wks (and .wks.p12).  The passwords of the program
 * are for the demonstration only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include <wks/convert.h>

static const char demo_jks_b64[] =
	"/u3+7QAAAAIAAAACAAAAAgACY2EAAAGiM4mCPgAFWC41MDkAAAE/MIIBOzCB4qAD"
	"AgECAgkA8unVhTrO6QQwCgYIKoZIzj0EAwIwETEPMA0GA1UEAxMGc2VydmVyMCAX"
	"DTI2MTIwMTIxMzYxN1oYDzIxMjYxMTA3MjEzNjE3WjARMQ8wDQYDVQQDEwZzZXJ2"
	"ZXIwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATkgktvXJbb8pf/H4HsG9lN+IZg"
	"07vdfnLIROPakR5jluTYFDSJz0ccCQ/wIfWxehngQcz4AEkd4A3fiE86yT67oyEw"
	"HzAdBgNVHQ4EFgQUAzz+ohUL5xkIv7Y3HYQ0SJFF8okwCgYIKoZIzj0EAwIDSAAw"
	"RQIgBmaHSGl3kRtv7CRtmfGjtvZxzd9bywu6PGIycuir3zICIQDH4l4/UUPRv9H5"
	"hKoux7m0mxRah/eT9KXs7VIXW+Y8ZAAAAAEABnNlcnZlcgAAAaIziXtdAAAAfzB9"
	"MA4GCisGAQQBKgIRAQEFAARrYxDJDhRfoW4y7Q3gQ4jArYZJKUxNRz2289m/U1Le"
	"QG0JJoxDv6xJQNt7zd2XgKd/XbikVY4I5UMt0VbkVg9ZQcnqSglOq0AAfpU1dAoL"
	"E4EKBlhg1iZPFXv8R3wjAPaTY2FlRRL8yoJWb+MAAAABAAVYLjUwOQAAAT8wggE7"
	"MIHioAMCAQICCQDy6dWFOs7pBDAKBggqhkjOPQQDAjARMQ8wDQYDVQQDEwZzZXJ2"
	"ZXIwIBcNMjYxMjAxMjEzNjE3WhgPMjEyNjExMDcyMTM2MTdaMBExDzANBgNVBAMT"
	"BnNlcnZlcjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABOSCS29cltvyl/8fgewb"
	"2U34hmDTu91+cshE49qRHmOW5NgUNInPRxwJD/Ah9bF6GeBBzPgASR3gDd+ITzrJ"
	"PrujITAfMB0GA1UdDgQWBBQDPP6iFQvnGQi/tjcdhDRIkUXyiTAKBggqhkjOPQQD"
	"AgNIADBFAiAGZodIaXeRG2/sJG2Z8aO29nHN31vLC7o8YjJy6KvfMgIhAMfiXj9R"
	"Q9G/0fmEqi7HubSbFFqH95P0peztUhdb5jxkR/EhFYKUw7/tO7wtvbZk/kf3yJs="
	;

/* Key passwords by alias, as a program might keep them in a vault. */
static const struct {
	const char *alias, *password;
} key_passwords[] = { { "server", "serverpw" } };

static int key_password(void *arg, const char *alias, unsigned attempt,
                        char *buf, size_t size, size_t *len)
{
	(void)arg;
	if (attempt > 1) /* the one we know did not open it: give up */
		return 1;
	for (size_t i = 0; i < sizeof(key_passwords) / sizeof(key_passwords[0]);
	     i++) {
		size_t n = strlen(key_passwords[i].password);

		if (strcmp(key_passwords[i].alias, alias) == 0 && n <= size) {
			memcpy(buf, key_passwords[i].password, n);
			*len = n;
			return 0;
		}
	}
	return 1;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n + 1)) &&
	    fread(p, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

/* The built-in keystore (base64 -> bytes). */
static uint8_t *demo_jks(size_t *len)
{
	size_t n = strlen(demo_jks_b64);
	uint8_t *p = malloc(n);
	int m;

	if (!p || (m = EVP_DecodeBlock(p, (const unsigned char *)demo_jks_b64,
	                               (int)n)) < 0) {
		free(p);
		return NULL;
	}
	*len = (size_t)m;
	while (n > 0 && demo_jks_b64[n - 1] == '=') { /* padding */
		(*len)--;
		n--;
	}
	return p;
}

int main(int argc, char **argv)
{
	const char *in = argc == 3 ? argv[1] : NULL;
	const char *out = argc == 3 ? argv[2] : "example-from-jks.wks";
	const char *storepw = getenv("STOREPASS") ? getenv("STOREPASS")
	                                          : "changeit";
	wks_store *st = NULL;
	wks_convert_report *rep = NULL;
	uint8_t *data;
	size_t len = 0;
	int err, rc = 1;

	if (argc != 1 && argc != 3) {
		fprintf(stderr, "usage: %s [IN.jks OUT.wks]\n", argv[0]);
		return 2;
	}
	data = in ? read_file(in, &len) : demo_jks(&len);
	if (!data) {
		fprintf(stderr, "%s: cannot read\n", in ? in : "(built-in)");
		return 1;
	}
	printf("input: %s keystore, %zu bytes\n",
	       wks_keystore_type_name(wks_keystore_detect(data, len)), len);
	if ((err = wks_store_new(&st)) != WKS_OK)
		goto fail;
	/* Few PBKDF2 iterations keep the demonstration quick; leave the
	 * default (210000) for real keystores. */
	if (!in && (err = wks_store_set_property(st, "wolfjce.wks.iterationCount",
	                                         "10000")) != WKS_OK)
		goto fail;
	err = wks_convert_read(st, data, len, storepw, strlen(storepw), 0,
	                       key_password, NULL, &rep);
	if (err != WKS_OK)
		goto fail;
	printf("imported %zu entries\n", wks_convert_report_done(rep));
	for (size_t i = 0; i < wks_convert_report_skipped(rep); i++)
		printf("skipped \"%s\": %s (%s)\n", wks_convert_report_alias(rep, i),
		       wks_strerror(wks_convert_report_reason(rep, i)),
		       wks_convert_report_detail(rep, i));
	if ((err = wks_store_save_file(st, out, storepw, strlen(storepw))) !=
	    WKS_OK)
		goto fail;
	printf("saved %s\n", out);

	/* The same store as PKCS#12 (each key opened with its password: the
	 * callback again). */
	{
		char p12[4096];
		uint8_t *der = NULL;
		size_t der_len = 0;
		FILE *f;

		wks_convert_report_free(rep);
		rep = NULL;
		err = wks_convert_write_p12(&der, &der_len, st, NULL, storepw,
		                            strlen(storepw), storepw,
		                            strlen(storepw), in ? 0 : 1000,
		                            key_password, NULL, &rep);
		if (err != WKS_OK)
			goto fail;
		snprintf(p12, sizeof(p12), "%s.p12", out);
		f = fopen(p12, "wb");
		if (!f || fwrite(der, 1, der_len, f) != der_len) {
			fprintf(stderr, "%s: cannot write\n", p12);
			if (f)
				fclose(f);
			wks_free(der);
			goto done;
		}
		fclose(f);
		wks_free(der);
		printf("wrote %s: %zu entries, %zu skipped\n", p12,
		       wks_convert_report_done(rep),
		       wks_convert_report_skipped(rep));
	}
	rc = 0;
	goto done;
fail:
	fprintf(stderr, "error: %s: %s\n", wks_strerror(err), wks_error_detail());
done:
	wks_convert_report_free(rep);
	wks_store_free(st);
	free(data);
	return rc;
}
