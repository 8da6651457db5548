/*
 * CA bundles for wks import-certs (and fuzz/fuzz_certs.c): reading
 * certificates from files and folders, aliases, the store.
 *
 * The input is a PEM bundle (CERTIFICATE, TRUSTED CERTIFICATE and PKCS7
 * blocks), a PKCS#7 file (PEM or DER), DER certificates, or a folder of
 * such files.  Every certificate becomes a trusted certificate entry
 * under a readable alias made from its subject (lowercased CN, else O,
 * else the start of its SHA-256 fingerprint), unless the store already
 * holds it (same SHA-256 of the DER) as a certificate entry.  Everything
 * is read and checked before the store is touched: a malformed
 * certificate or PEM block anywhere fails the whole import, and the
 * store is unchanged.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

#include "cli.h"

/* Bounds: a file larger than this is no certificate file; an alias made
 * from a name is cut to this many bytes (at a character boundary). */
#define MAX_INPUT_FILE (64u << 20)
/* At most this many certificates in one import. */
#define MAX_CERTS 20000
#define MAX_BASE_ALIAS 64

typedef cli_cert_item cert_item;
typedef cli_cert_list cert_list;

void cli_cert_list_free(cli_cert_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		X509_free(l->v[i].x);
		free(l->v[i].alias);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Take `x` (consumed); a certificate already in the list is counted as a
 * duplicate and dropped.  Returns 0 or an exit status. */
static int list_add(cert_list *l, X509 *x, const char *path)
{
	unsigned char fp[32];
	unsigned int fl = 0;

	if (!X509_digest(x, EVP_sha256(), fp, &fl) || fl != sizeof(fp)) {
		X509_free(x);
		return cli_ssl_err(CLI_EXIT_MALFORMED, path,
				   "cannot encode a certificate");
	}
	for (size_t i = 0; i < l->n; i++)
		if (!memcmp(l->v[i].fp, fp, sizeof(fp))) {
			l->dups++;
			X509_free(x);
			return 0;
		}
	if (l->n >= MAX_CERTS) {
		X509_free(x);
		cli_err(path, "more than %d certificates: not imported",
			MAX_CERTS);
		return CLI_EXIT_LIMIT;
	}
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		cert_item *nv = realloc(l->v, ncap * sizeof(*nv));

		if (!nv) {
			X509_free(x);
			cli_err(path, "out of memory");
			return CLI_EXIT_FAIL;
		}
		l->v = nv;
		l->cap = ncap;
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	l->v[l->n].x = x;
	memcpy(l->v[l->n].fp, fp, sizeof(fp));
	l->n++;
	return 0;
}

static int is_pem(const uint8_t *data, size_t len)
{
	static const char tag[] = "-----BEGIN ";

	for (size_t i = 0; i + sizeof(tag) - 1 <= len; i++)
		if (!memcmp(data + i, tag, sizeof(tag) - 1))
			return 1;
	return 0;
}

/* The certificates of a DER PKCS#7 (SignedData); -1 if `der` is not one
 * (exactly, with nothing after it). */
static int add_p7(cert_list *l, const unsigned char *der, long len,
		  const char *path, int *found)
{
	const unsigned char *p = der;
	PKCS7 *p7 = d2i_PKCS7(NULL, &p, len);
	STACK_OF(X509) *certs;
	int rc = 0;

	if (!p7 || p != der + len || !PKCS7_type_is_signed(p7) ||
	    !p7->d.sign) {
		PKCS7_free(p7);
		ERR_clear_error();
		return -1;
	}
	certs = p7->d.sign->cert;
	for (int i = 0; i < sk_X509_num(certs) && rc == 0; i++) {
		X509 *x = sk_X509_value(certs, i);

		if (!X509_up_ref(x)) {
			rc = CLI_EXIT_FAIL;
			break;
		}
		rc = list_add(l, x, path);
		(*found)++;
	}
	PKCS7_free(p7);
	return rc;
}

/*
 * Read the certificates of one file into `l`.  *found counts them
 * (duplicates included).  A file that holds nothing recognisable is
 * left with *found == 0 and `what` describing it; a recognisable but
 * malformed one is an error.
 */
static int read_certs(cert_list *l, const uint8_t *data, size_t len,
		      const char *path, int *found, const char **what)
{
	int rc = 0;

	*found = 0;
	*what = NULL;
	if (len > MAX_INPUT_FILE) {
		cli_err(path, "larger than %u MiB: no certificate file",
			MAX_INPUT_FILE >> 20);
		return CLI_EXIT_LIMIT;
	}
	if (is_pem(data, len)) {
		BIO *in = BIO_new_mem_buf(data, (int)len);
		int blocks = 0, others = 0;

		if (!in) {
			cli_err(path, "out of memory");
			return CLI_EXIT_FAIL;
		}
		while (rc == 0) {
			char *name = NULL, *header = NULL;
			unsigned char *der = NULL;
			long dlen = 0;

			if (!PEM_read_bio(in, &name, &header, &der, &dlen)) {
				if (ERR_GET_REASON(ERR_peek_last_error()) ==
				    PEM_R_NO_START_LINE)
					ERR_clear_error();
				else
					rc = cli_ssl_err(CLI_EXIT_MALFORMED,
							 path, "bad PEM in "
							 "block %d", blocks + 1);
				break;
			}
			blocks++;
			if (!strcmp(name, PEM_STRING_X509) ||
			    !strcmp(name, PEM_STRING_X509_OLD) ||
			    !strcmp(name, PEM_STRING_X509_TRUSTED)) {
				const unsigned char *p = der;
				X509 *x = strcmp(name, PEM_STRING_X509_TRUSTED)
					? d2i_X509(NULL, &p, dlen)
					: d2i_X509_AUX(NULL, &p, dlen);

				if (!x || p != der + dlen) {
					X509_free(x);
					rc = cli_ssl_err(CLI_EXIT_MALFORMED,
							 path, "block %d: "
							 "malformed "
							 "certificate",
							 blocks);
				} else {
					rc = list_add(l, x, path);
					(*found)++;
				}
			} else if (!strcmp(name, PEM_STRING_PKCS7) ||
				   !strcmp(name, PEM_STRING_PKCS7_SIGNED)) {
				int r = add_p7(l, der, dlen, path, found);

				if (r < 0)
					rc = cli_ssl_err(CLI_EXIT_MALFORMED,
							 path, "block %d: "
							 "malformed PKCS#7 "
							 "(expected signed "
							 "data)", blocks);
				else
					rc = r;
			} else {
				others++;
			}
			OPENSSL_free(name);
			OPENSSL_free(header);
			OPENSSL_clear_free(der, (size_t)dlen);
		}
		BIO_free(in);
		if (rc == 0 && others && *found)
			cli_note(path, "%d PEM block(s) other than "
				 "certificates skipped", others);
		if (rc == 0 && !*found)
			*what = others ? "PEM without certificates"
				       : "no PEM block";
		return rc;
	}
	/* DER: a PKCS#7, or certificates back to back. */
	if (len > 0 && (rc = add_p7(l, data, (long)len, path, found)) >= 0)
		return rc;
	rc = 0;
	for (const unsigned char *p = data, *end = data + len;
	     p < end && rc == 0;) {
		const unsigned char *q = p;
		X509 *x = d2i_X509(NULL, &q, end - p);

		if (!x) {
			if (!*found) {
				ERR_clear_error();
				*what = "not a certificate (PEM, DER or "
					"PKCS#7)";
				return 0;
			}
			return cli_ssl_err(CLI_EXIT_MALFORMED, path,
					   "malformed certificate after "
					   "certificate %d", *found);
		}
		rc = list_add(l, x, path);
		(*found)++;
		p = q;
	}
	if (rc == 0 && !*found)
		*what = "empty";
	return rc;
}

int cli_cert_list_read_buffer(cli_cert_list *l, const uint8_t *data,
			      size_t len, const char *path, int in_folder)
{
	const char *what = NULL;
	int found = 0, rc;

	rc = read_certs(l, data, len, path, &found, &what);
	if (rc == 0 && !found) {
		if (in_folder) {
			cli_note(path, "skipped: %s", what);
		} else {
			cli_err(path, "no certificate found (%s)", what);
			rc = CLI_EXIT_MALFORMED;
		}
	}
	return rc;
}

static int read_path(cert_list *l, const char *path, int in_folder)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	if ((rc = cli_read_file(&data, &len, path)) != 0)
		return rc;
	rc = cli_cert_list_read_buffer(l, data, len, path, in_folder);
	/* Wiped: a bundle may hold a private key block too (skipped, but
	 * its bytes were read). */
	cli_free_secret(data, len);
	return rc;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of a folder (symbolic links followed), in name
 * order; subfolders and dot files are left out. */
static int read_folder(cert_list *l, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		cli_err(dir, "cannot open: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **nv = realloc(names, ncap * sizeof(*nv));

			if (!nv)
				goto nomem;
			names = nv;
			cap = ncap;
		}
		if (!(names[n] = strdup(de->d_name)))
			goto nomem;
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t plen = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(plen);
		struct stat sb;

		if (!path)
			goto nomem;
		snprintf(path, plen, "%s/%s", dir, names[i]);
		if (stat(path, &sb) != 0)
			cli_note(path, "skipped: %s", strerror(errno));
		else if (!S_ISREG(sb.st_mode))
			cli_note(path, "skipped: not a regular file");
		else if ((unsigned long long)sb.st_size > MAX_INPUT_FILE)
			cli_note(path, "skipped: larger than %u MiB",
				 MAX_INPUT_FILE >> 20);
		else
			rc = read_path(l, path, 1);
		free(path);
	}
	goto done;
nomem:
	cli_err(dir, "out of memory");
	rc = CLI_EXIT_FAIL;
done:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

/* ---- aliases -------------------------------------------------------------- */

/* The text of the last `nid` attribute of the subject as UTF-8, or NULL. */
static char *subject_attr(X509 *x, int nid)
{
	const X509_NAME *nm = X509_get_subject_name(x);
	int i = -1, last = -1;
	unsigned char *u = NULL;
	char *s;
	int n;

	while ((i = X509_NAME_get_index_by_NID(nm, nid, i)) >= 0)
		last = i;
	if (last < 0)
		return NULL;
	n = ASN1_STRING_to_UTF8(&u, X509_NAME_ENTRY_get_data(
				    X509_NAME_get_entry(nm, last)));
	if (n < 0) {
		ERR_clear_error();
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (s) {
		memcpy(s, u, (size_t)n);
		s[n] = 0;
	}
	OPENSSL_free(u);
	return s;
}

/* Length of the valid UTF-8 sequence at s (of a code point >= U+00A1,
 * printable, not a surrogate), else 0. */
static size_t utf8_letter(const unsigned char *s)
{
	unsigned cp;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1fu;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0fu;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07u;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 ||
						  cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa1 ||
	    (cp >= 0x2000 && cp <= 0x206f) || cp == 0xfeff)
		return 0;
	return n;
}

/* Lowercase a two-byte UTF-8 letter in place where it has a two-byte
 * lowercase form: Latin-1, Latin Extended-A, Greek and Cyrillic capitals. */
static void lower2(unsigned char *s)
{
	unsigned cp = (unsigned)(s[0] & 0x1f) << 6 | (s[1] & 0x3fu);

	if ((cp >= 0xc0 && cp <= 0xde && cp != 0xd7) ||
	    (cp >= 0x391 && cp <= 0x3ab && cp != 0x3a2) ||
	    (cp >= 0x410 && cp <= 0x42f))
		cp += 0x20;
	else if (cp >= 0x400 && cp <= 0x40f)
		cp += 0x50;
	else if (((cp >= 0x100 && cp <= 0x137) ||
		  (cp >= 0x14a && cp <= 0x177)) && !(cp & 1))
		cp++;
	else if (((cp >= 0x139 && cp <= 0x148) ||
		  (cp >= 0x179 && cp <= 0x17e)) && (cp & 1))
		cp++;
	s[0] = (unsigned char)(0xc0 | cp >> 6);
	s[1] = (unsigned char)(0x80 | (cp & 0x3f));
}

/*
 * The readable part of an alias: letters lowercased (ASCII, and the
 * capitals lower2() knows), digits, '.' and '_' kept, other letters
 * (UTF-8) kept, any run of anything else
 * (spaces, punctuation, control characters, bad UTF-8) one '-', none at
 * either end; at most MAX_BASE_ALIAS bytes.  "" if nothing is left.
 */
static void normalise(char *out, const char *in)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0;
	int dash = 0;

	while (*s) {
		size_t n = 0;

		if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		    *s == '.' || *s == '_')
			n = 1;
		else if (*s >= 'A' && *s <= 'Z')
			n = 1;
		else
			n = utf8_letter(s);
		if (!n) {
			dash = o > 0;
			s++;
			continue;
		}
		if (o + dash + n > MAX_BASE_ALIAS)
			break;
		if (dash)
			out[o++] = '-';
		dash = 0;
		for (size_t i = 0; i < n; i++)
			out[o + i] = (char)(n == 1 && s[i] >= 'A' &&
					    s[i] <= 'Z' ? s[i] - 'A' + 'a' :
					    s[i]);
		if (n == 2)
			lower2((unsigned char *)out + o);
		o += n;
		s += n;
	}
	out[o] = 0;
}

static int alias_taken(wks_store *st, const cert_list *l, const char *a)
{
	if (wks_store_contains(st, a))
		return 1;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].alias && !strcmp(l->v[i].alias, a))
			return 1;
	return 0;
}

static int make_alias(char **out, wks_store *st, const cert_list *l,
		      X509 *x, const unsigned char fp[32], const char *prefix)
{
	char base[MAX_BASE_ALIAS + 1] = "", hex[65];
	char *cn = subject_attr(x, NID_commonName), *a;
	size_t cap;

	if (cn)
		normalise(base, cn);
	free(cn);
	if (!base[0]) {
		char *o = subject_attr(x, NID_organizationName);

		if (o)
			normalise(base, o);
		free(o);
	}
	if (!base[0]) {
		cli_hex(hex, fp, 8, 0);
		memcpy(base, hex, 17);
	}
	cap = strlen(prefix) + strlen(base) + 16;
	if (!(a = malloc(cap)))
		return -1;
	snprintf(a, cap, "%s%s", prefix, base);
	if (alias_taken(st, l, a)) {
		/* Start after the highest suffix this import gave the name:
		 * many certificates of one name cost one pass each, not one
		 * per suffix tried. */
		size_t n = strlen(a);
		unsigned k = 2;

		for (size_t i = 0; i < l->n; i++) {
			const char *o = l->v[i].alias;
			unsigned long v;
			char *end;

			if (!o || strncmp(o, a, n) || o[n] != '-' ||
			    o[n + 1] < '1' || o[n + 1] > '9')
				continue;
			v = strtoul(o + n + 1, &end, 10);
			if (!*end && v >= k && v < MAX_CERTS + 2)
				k = (unsigned)v + 1;
		}
		do
			snprintf(a, cap, "%s%s-%u", prefix, base, k++);
		while (alias_taken(st, l, a));
	}
	*out = a;
	return 0;
}

/* ---- the store ---------------------------------------------------------- */

/* The subject as `wks list -v` prints it (RFC 2253, UTF-8, escaped for
 * the terminal).  Heap, or NULL. */
static char *subject_rfc2253(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *mem = NULL, *s = NULL, *d;
	long n;

	if (!b)
		return NULL;
	X509_NAME_print_ex(b, X509_get_subject_name(x), 0,
			   XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
	n = BIO_get_mem_data(b, &mem);
	if (n >= 0 && (s = malloc((size_t)n + 1)) != NULL) {
		memcpy(s, mem, (size_t)n);
		s[n] = 0;
	}
	BIO_free(b);
	if (!s)
		return NULL;
	d = cli_display_escaped(s);
	free(s);
	return d;
}

int cli_cert_list_mark_present(cli_cert_list *l, wks_store *st,
			       const char *file, size_t *present)
{
	char **aliases = NULL;
	size_t count = 0;
	int err;

	*present = 0;
	if ((err = wks_store_aliases(&aliases, &count, st)) < 0)
		return cli_lib_err(file, NULL, err, NULL);
	for (size_t i = 0; i < count; i++) {
		unsigned char fp[32];
		uint8_t *der = NULL;
		size_t der_len = 0;

		if (wks_store_entry_type(st, aliases[i]) !=
		    WKS_ENTRY_CERTIFICATE)
			continue;
		if ((err = wks_store_get_cert_der(&der, &der_len, st,
						  aliases[i], 0)) < 0) {
			int rc = cli_lib_err(file, aliases[i], err, NULL);

			wks_aliases_free(aliases);
			return rc;
		}
		EVP_Digest(der, der_len, fp, NULL, EVP_sha256(), NULL);
		wks_free(der);
		for (size_t j = 0; j < l->n; j++)
			if (!l->v[j].present &&
			    !memcmp(l->v[j].fp, fp, sizeof(fp))) {
				l->v[j].present = 1;
				(*present)++;
			}
	}
	wks_aliases_free(aliases);
	return 0;
}

int cli_cert_list_store(cli_cert_list *l, wks_store *st, const char *prefix,
			int verbose, const char *file, size_t *imported)
{
	int err;

	if (!prefix)
		prefix = "";
	*imported = 0;
	for (size_t i = 0; i < l->n; i++) {
		cert_item *it = &l->v[i];

		if (it->present)
			continue;
		if (make_alias(&it->alias, st, l, it->x, it->fp, prefix) < 0) {
			cli_err(NULL, "out of memory");
			return CLI_EXIT_FAIL;
		}
		if ((err = wks_store_set_cert(st, it->alias, it->x)) < 0)
			return cli_lib_err(file, it->alias, err,
					   "cannot import");
		(*imported)++;
		/* As every import: an expired CA certificate warns. */
		cli_warn_validity(file, it->alias, it->x);
		if (verbose) {
			char *da = cli_display(it->alias);
			char *ds = subject_rfc2253(it->x);

			printf("%s: %s\n", da ? da : "", ds ? ds : "");
			free(ds);
			free(da);
		}
	}
	return 0;
}

int cli_cert_list_read(cli_cert_list *l, const char *path)
{
	struct stat sb;
	int rc;

	if (strcmp(path, "-") && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		rc = read_folder(l, path);
		if (rc == 0 && l->n == 0) {
			cli_err(path, "no certificate found in the folder");
			rc = CLI_EXIT_MALFORMED;
		}
		return rc;
	}
	if (strcmp(path, "-") && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (unsigned long long)sb.st_size > MAX_INPUT_FILE) {
		cli_err(path, "larger than %u MiB: no certificate file",
			MAX_INPUT_FILE >> 20);
		return CLI_EXIT_LIMIT; /* refused before it is read */
	}
	return read_path(l, path, 0);
}
