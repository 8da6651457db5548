/*
 * wks printcert: certificates from a file (PEM, DER, PKCS#7; several) as
 * keytool -printcert of OpenJDK 17 shows them, byte for byte: owner and
 * issuer as Java's X500Name, serial number, validity, SHA-1 and SHA-256
 * fingerprints, signature algorithm and key with Java's "(weak)" and
 * "(disabled)", version, and the extensions sorted by their Java name,
 * each in the words of its sun.security.x509 class (a hex dump for those
 * Java has no class for); then keytool's warnings, on standard error.
 * tests/cli/printcert.sh compares both over the system CA bundle; the
 * differences meant are in docs/CLI.md.  Every text taken from the file
 * is escaped before it is printed.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "cli.h"

/* Print a memory BIO's text line by line, each escaped, after `indent`. */
static void put_bio(FILE *f, BIO *b, const char *indent)
{
	char *mem, *s, *line, *nl;
	long n = BIO_get_mem_data(b, &mem);

	if (n <= 0 || !(s = malloc((size_t)n + 1)))
		return;
	memcpy(s, mem, (size_t)n);
	s[n] = 0;
	for (line = s; line && *line; line = nl) {
		char *d;

		if ((nl = strchr(line, '\n')))
			*nl++ = 0;
		d = cli_display_escaped(line);
		fprintf(f, "%s%s\n", indent, d ? d : "");
		free(d);
	}
	free(s);
}

/* ---- text in Java's words, built in memory ------------------------------ */

/* A growable string; on running out of memory it keeps what it has. */
typedef struct {
	char *p;
	size_t n, cap;
} jbuf;

static void jb_add(jbuf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (!p)
			return;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void jb_puts(jbuf *b, const char *s)
{
	jb_add(b, s, strlen(s));
}

static void jb_putc(jbuf *b, char c)
{
	jb_add(b, &c, 1);
}

/* One code point in libwks's UTF-8: U+0000 as C0 80 and lone surrogates
 * as 3-byte sequences, so that cli_display() shows them escaped. */
static void jb_cp(jbuf *b, unsigned long cp)
{
	char u[4];

	if (cp == 0) {
		jb_add(b, "\xC0\x80", 2);
	} else if (cp < 0x80) {
		jb_putc(b, (char)cp);
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3F));
		jb_add(b, u, 2);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		jb_add(b, u, 3);
	} else {
		u[0] = (char)(0xF0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
		u[3] = (char)(0x80 | (cp & 0x3F));
		jb_add(b, u, 4);
	}
}

/* Java's UTF-8 decoder: a malformed sequence becomes U+FFFD. */
static size_t utf8_cp(const unsigned char *p, size_t n, unsigned long *cp)
{
	unsigned c = p[0];
	size_t len = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 :
		     c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
	unsigned long v;

	*cp = 0xFFFD;
	if (!len || len > n)
		return 1;
	if (len == 1) {
		*cp = c;
		return 1;
	}
	v = c & (0xFF >> (len + 1));
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 1;
		v = v << 6 | (p[i] & 0x3F);
	}
	if ((len == 3 && (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF))) ||
	    (len == 4 && (v < 0x10000 || v > 0x10FFFF)))
		return 1;
	*cp = v;
	return len;
}

/* DerValue.getAsString(): the string types Java reads, decoded as Java
 * decodes them; 0 for any other type. */
static int jb_asn1_string(jbuf *b, const ASN1_STRING *s)
{
	const unsigned char *p = ASN1_STRING_get0_data(s);
	size_t n = (size_t)ASN1_STRING_length(s), i;
	unsigned long cp;

	switch (ASN1_STRING_type(s)) {
	case V_ASN1_UTF8STRING:
		for (i = 0; i < n; jb_cp(b, cp))
			i += utf8_cp(p + i, n - i, &cp);
		return 1;
	case V_ASN1_PRINTABLESTRING:
	case V_ASN1_IA5STRING:
	case V_ASN1_GENERALSTRING:
		for (i = 0; i < n; i++)
			jb_cp(b, p[i] < 0x80 ? p[i] : 0xFFFD);
		return 1;
	case V_ASN1_T61STRING:
		for (i = 0; i < n; i++)
			jb_cp(b, p[i]);
		return 1;
	case V_ASN1_BMPSTRING:
		for (i = 0; i + 1 < n; i += 2) {
			cp = (unsigned long)p[i] << 8 | p[i + 1];
			if (cp >= 0xD800 && cp < 0xDC00 && i + 3 < n) {
				unsigned long lo = (unsigned long)p[i + 2] << 8 |
						   p[i + 3];

				if (lo >= 0xDC00 && lo <= 0xDFFF) {
					cp = 0x10000 + ((cp - 0xD800) << 10) +
					     (lo - 0xDC00);
					i += 2;
				}
			}
			jb_cp(b, cp);
		}
		if (n & 1)
			jb_cp(b, 0xFFFD);
		return 1;
	case V_ASN1_UNIVERSALSTRING:
		for (i = 0; i + 3 < n; i += 4) {
			cp = (unsigned long)p[i] << 24 |
			     (unsigned long)p[i + 1] << 16 |
			     (unsigned long)p[i + 2] << 8 | p[i + 3];
			jb_cp(b, cp > 0x10FFFF || (cp >= 0xD800 &&
				  cp <= 0xDFFF) ? 0xFFFD : cp);
		}
		if (n & 3)
			jb_cp(b, 0xFFFD);
		return 1;
	default:
		return 0;
	}
}

static void jb_oid(jbuf *b, const ASN1_OBJECT *o)
{
	char oid[128];

	if (OBJ_obj2txt(oid, sizeof(oid), o, 1) <= 0)
		snprintf(oid, sizeof(oid), "?");
	jb_puts(b, oid);
}

/* DerValue.isPrintableStringChar(). */
static int java_printable(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr(" '()+,-./:=?", c));
}

/* AVA.toString(): keyword (AVAKeyword, else OID.n.n), '=', the value
 * quoted where Java quotes it, or '#' and the hex of a value that is not
 * a string. */
static void jb_ava(jbuf *b, const X509_NAME_ENTRY *e)
{
	static const struct { int nid; const char *kw; } kws[] = {
		{ NID_commonName, "CN" }, { NID_countryName, "C" },
		{ NID_localityName, "L" }, { NID_stateOrProvinceName, "ST" },
		{ NID_organizationName, "O" },
		{ NID_organizationalUnitName, "OU" }, { NID_title, "T" },
		{ NID_streetAddress, "STREET" },
		{ NID_domainComponent, "DC" }, { NID_dnQualifier, "DNQ" },
		{ NID_surname, "SURNAME" }, { NID_givenName, "GIVENNAME" },
		{ NID_initials, "INITIALS" },
		{ NID_generationQualifier, "GENERATION" },
		{ NID_pkcs9_emailAddress, "EMAILADDRESS" },
		{ NID_userId, "UID" }, { NID_serialNumber, "SERIALNUMBER" },
	};
	const ASN1_OBJECT *o = X509_NAME_ENTRY_get_object(e);
	const ASN1_STRING *v = X509_NAME_ENTRY_get_data(e);
	int nid = OBJ_obj2nid(o);
	const char *kw = NULL;
	jbuf s = { 0 };
	char oid[128];

	for (size_t i = 0; i < sizeof(kws) / sizeof(*kws); i++)
		if (kws[i].nid == nid)
			kw = kws[i].kw;
	/* Sun's own IP attribute, 1.3.6.1.4.1.42.2.11.2.1. */
	if (!kw && OBJ_obj2txt(oid, sizeof(oid), o, 1) > 0 &&
	    !strcmp(oid, "1.3.6.1.4.1.42.2.11.2.1"))
		kw = "IP";
	if (kw) {
		jb_puts(b, kw);
	} else {
		jb_puts(b, "OID.");
		jb_oid(b, o);
	}
	jb_putc(b, '=');
	if (!jb_asn1_string(&s, v)) {
		/* The DER of the value: tag, length, contents. */
		ASN1_TYPE *t = ASN1_TYPE_new();
		unsigned char *der = NULL;
		int n = -1;
		char hex[3];

		if (t && ASN1_TYPE_set1(t, ASN1_STRING_type(v), v))
			n = i2d_ASN1_TYPE(t, &der);
		jb_putc(b, '#');
		for (int i = 0; i < n; i++) {
			snprintf(hex, sizeof(hex), "%02x", der[i]);
			jb_puts(b, hex);
		}
		OPENSSL_free(der);
		ASN1_TYPE_free(t);
		return;
	}
	{
		static const char escapees[] = ",+=\n<>#;\\\"";
		const unsigned char *p = (const unsigned char *)(s.p ? s.p : "");
		size_t len = s.n;
		int quote = 0, white = 0;
		int quoted = len > 1 && p[0] == '"' && p[len - 1] == '"';
		jbuf out = { 0 };

		for (size_t i = 0; i < len; i++) {
			unsigned char c = p[i];
			int esc = c && strchr(escapees, c) != NULL;

			if (quoted && (i == 0 || i == len - 1)) {
				jb_putc(&out, (char)c);
				continue;
			}
			if (java_printable(c) || esc) {
				if (!quote && ((i == 0 && (c == ' ' ||
					c == '\n')) || esc))
					quote = 1;
				if (c != ' ' && c != '\n') {
					if (c == '"' || c == '\\')
						jb_putc(&out, '\\');
					white = 0;
				} else {
					if (!quote && white)
						quote = 1;
					white = 1;
				}
			} else if (c < 0x80 || (c & 0xC0) != 0x80) {
				white = 0;
			}
			jb_putc(&out, (char)c);
		}
		if (out.n && (out.p[out.n - 1] == ' ' ||
			      out.p[out.n - 1] == '\n'))
			quote = 1;
		if (!quoted && quote)
			jb_putc(b, '"');
		if (out.p)
			jb_puts(b, out.p);
		if (!quoted && quote)
			jb_putc(b, '"');
		free(out.p);
	}
	free(s.p);
}

/* X500Name.toString(): RDNs most specific first, ", " between, the
 * attributes of one RDN in their order with " + " between. */
static void jb_name(jbuf *b, const X509_NAME *name)
{
	int n = X509_NAME_entry_count(name);

	for (int i = n - 1; i >= 0;) {
		int set = X509_NAME_ENTRY_set(X509_NAME_get_entry(name, i)), j;

		for (j = i; j > 0 && X509_NAME_ENTRY_set(
			     X509_NAME_get_entry(name, j - 1)) == set; j--)
			;
		if (i != n - 1)
			jb_puts(b, ", ");
		for (int k = j; k <= i; k++) {
			if (k != j)
				jb_puts(b, " + ");
			jb_ava(b, X509_NAME_get_entry(name, k));
		}
		i = j - 1;
	}
}

/* Print what was built, escaped, and free it. */
static void jb_print(FILE *f, jbuf *b)
{
	char *d = cli_display_escaped(b->p ? b->p : "");

	fputs(d ? d : "", f);
	free(d);
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
}

static void put_name(FILE *f, X509_NAME *name)
{
	jbuf b = { 0 };

	jb_name(&b, name);
	jb_print(f, &b);
}

static void put_time(FILE *f, const ASN1_TIME *t)
{
	struct tm tm;
	char buf[64];

	if (!t || !ASN1_TIME_to_tm(t, &tm) ||
	    !strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S UTC %Y", &tm))
		snprintf(buf, sizeof(buf), "?");
	fputs(buf, f);
}

/* keytool prints BigInteger.toString(16): lowercase, no leading zeros. */
static void put_serial(FILE *f, const ASN1_INTEGER *serial)
{
	BIGNUM *bn = ASN1_INTEGER_to_BN(serial, NULL);
	char *hex = bn ? BN_bn2hex(bn) : NULL, *p;

	if (!hex) {
		fputs("?", f);
	} else {
		p = hex;
		if (*p == '-')
			fputc(*p++, f);
		while (p[0] == '0' && p[1])
			p++;
		for (; *p; p++)
			fputc(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p, f);
	}
	OPENSSL_free(hex);
	BN_free(bn);
}

static void put_fingerprint(FILE *f, X509 *x, const EVP_MD *md,
			    const char *name)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	char hex[EVP_MAX_MD_SIZE * 3 + 1] = "?";

	if (X509_digest(x, md, d, &n))
		cli_hex(hex, d, n, ':');
	fprintf(f, "\t %s: %s\n", name, hex);
}

/* Java's names: SHA256withRSA, SHA384withECDSA, Ed25519, RSASSA-PSS. */
static void sigalg_name(char *out, size_t out_len, X509 *x)
{
	int sig = X509_get_signature_nid(x), md = NID_undef, pk = NID_undef;

	if (sig != NID_undef && OBJ_find_sigid_algs(sig, &md, &pk) &&
	    md != NID_undef) {
		const char *kind = pk == NID_rsaEncryption ? "RSA" :
				   pk == NID_X9_62_id_ecPublicKey ? "ECDSA" :
				   pk == NID_dsa ? "DSA" : OBJ_nid2sn(pk);
		const char *mds = OBJ_nid2sn(md);
		char mdu[32];
		size_t i;

		for (i = 0; mds && mds[i] && i + 1 < sizeof(mdu); i++)
			mdu[i] = (char)(mds[i] >= 'a' && mds[i] <= 'z' ?
					mds[i] - 'a' + 'A' : mds[i]);
		mdu[i] = 0;
		snprintf(out, out_len, "%swith%s", mdu, kind ? kind : "?");
	} else if (sig == NID_ED25519) {
		snprintf(out, out_len, "Ed25519");
	} else if (sig == NID_ED448) {
		snprintf(out, out_len, "Ed448");
	} else if (sig == NID_rsassaPss) {
		snprintf(out, out_len, "RSASSA-PSS");
	} else {
		const X509_ALGOR *alg = NULL;
		const ASN1_OBJECT *obj = NULL;

		X509_get0_signature(NULL, &alg, x);
		if (alg)
			X509_ALGOR_get0(&obj, NULL, NULL, alg);
		if (!obj || OBJ_obj2txt(out, (int)out_len, obj, 1) <= 0)
			snprintf(out, out_len, "?");
	}
	ERR_clear_error();
}

/* keytool: "2048-bit RSA key", "384-bit EC (secp384r1) key". */
static void key_text(char *out, size_t out_len, X509 *x)
{
	EVP_PKEY *pk = X509_get0_pubkey(x);
	char group[64] = "";

	if (pk && EVP_PKEY_is_a(pk, "EC")) {
		EVP_PKEY_get_utf8_string_param(pk, OSSL_PKEY_PARAM_GROUP_NAME,
					       group, sizeof(group), NULL);
		/* Java names P-256 secp256r1, as the other NIST curves. */
		snprintf(out, out_len, "%d-bit EC (%s) key",
			 EVP_PKEY_get_bits(pk),
			 strcmp(group, "prime256v1") ? group : "secp256r1");
	} else if (pk && (EVP_PKEY_is_a(pk, "RSA") ||
			  EVP_PKEY_is_a(pk, "RSA-PSS") ||
			  EVP_PKEY_is_a(pk, "DSA"))) {
		snprintf(out, out_len, "%d-bit %s key", EVP_PKEY_get_bits(pk),
			 EVP_PKEY_is_a(pk, "DSA") ? "DSA" :
			 EVP_PKEY_is_a(pk, "RSA") ? "RSA" : "RSASSA-PSS");
	} else if (pk && EVP_PKEY_is_a(pk, "ED25519")) {
		snprintf(out, out_len, "255-bit Ed25519 key");
	} else if (pk && EVP_PKEY_is_a(pk, "ED448")) {
		snprintf(out, out_len, "448-bit Ed448 key");
	} else {
		char desc[96];

		cli_key_desc(desc, sizeof(desc), x);
		snprintf(out, out_len, "%s key", desc);
	}
	ERR_clear_error();
}

/* sun.security.util.HexDumpEncoder.encodeBuffer(): 16 bytes a line,
 * offset (16 bits), ASCII. */
static void jb_hexdump(jbuf *b, const unsigned char *p, size_t len)
{
	char t[8];

	for (size_t off = 0; off < len; off += 16) {
		snprintf(t, sizeof(t), "%04X: ", (unsigned)(off & 0xFFFF));
		jb_puts(b, t);
		for (size_t i = 0; i < 16; i++) {
			if (off + i < len) {
				snprintf(t, sizeof(t), "%02X ", p[off + i]);
				jb_puts(b, t);
			} else {
				jb_puts(b, "   ");
			}
			if (i == 7)
				jb_puts(b, "  ");
		}
		jb_putc(b, ' ');
		for (size_t i = 0; i < 16 && off + i < len; i++) {
			unsigned char ch = p[off + i];

			/* HexDumpEncoder prints ' ' to 'z' only. */
			jb_putc(b, ch >= ' ' && ch <= 'z' ? (char)ch : '.');
		}
		jb_putc(b, '\n');
	}
}

/* Append raw text escaped (Java prints it as it is; a terminal should
 * not get control characters from a file). */
static void jb_escaped(jbuf *b, const char *raw)
{
	char *d = cli_display_escaped(raw ? raw : "");

	if (d)
		jb_puts(b, d);
	free(d);
}

static void jb_string_escaped(jbuf *b, const ASN1_STRING *s)
{
	jbuf t = { 0 };

	if (!jb_asn1_string(&t, s))
		jb_puts(&t, "?");
	jb_escaped(b, t.p);
	free(t.p);
}

static void jb_name_escaped(jbuf *b, const X509_NAME *name)
{
	jbuf t = { 0 };

	jb_name(&t, name);
	jb_escaped(b, t.p);
	free(t.p);
}

/* InetAddress.getHostAddress(): IPv6 as eight groups, no "::"; an
 * IPv4-mapped IPv6 address as IPv4. */
static void jb_ip1(jbuf *b, const unsigned char *a, size_t n)
{
	static const unsigned char mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF
	};
	char t[48];

	if (n == 16 && !memcmp(a, mapped, 12)) {
		a += 12;
		n = 4;
	}
	if (n == 4) {
		snprintf(t, sizeof(t), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		jb_puts(b, t);
		return;
	}
	for (size_t i = 0; i < 16; i += 2) {
		snprintf(t, sizeof(t), "%s%x", i ? ":" : "",
			 (unsigned)(a[i] << 8 | a[i + 1]));
		jb_puts(b, t);
	}
}

/* IPAddressName.toString(): an address, an IPv4 address and mask
 * ("a/m"), an IPv6 address and prefix length ("a/n"). */
static void jb_ip(jbuf *b, const ASN1_OCTET_STRING *o)
{
	const unsigned char *a = ASN1_STRING_get0_data(o);
	size_t n = (size_t)ASN1_STRING_length(o);
	char t[8];

	if (n == 4 || n == 16) {
		jb_ip1(b, a, n);
	} else if (n == 8) {
		jb_ip1(b, a, 4);
		jb_putc(b, '/');
		jb_ip1(b, a + 4, 4);
	} else if (n == 32) {
		int bits = 0;

		jb_ip1(b, a, 16);
		while (bits < 128 && (a[16 + bits / 8] & (0x80 >> bits % 8)))
			bits++;
		snprintf(t, sizeof(t), "/%d", bits);
		jb_puts(b, t);
	} else {
		jb_putc(b, '\n');
		jb_hexdump(b, a, n);
	}
}

/* GeneralName.toString(). */
static void jb_gname(jbuf *b, const GENERAL_NAME *g)
{
	switch (g->type) {
	case GEN_DNS:
		jb_puts(b, "DNSName: ");
		jb_string_escaped(b, g->d.dNSName);
		break;
	case GEN_EMAIL:
		jb_puts(b, "RFC822Name: ");
		jb_string_escaped(b, g->d.rfc822Name);
		break;
	case GEN_URI:
		jb_puts(b, "URIName: ");
		jb_string_escaped(b, g->d.uniformResourceIdentifier);
		break;
	case GEN_IPADD:
		jb_puts(b, "IPAddress: ");
		jb_ip(b, g->d.iPAddress);
		break;
	case GEN_OTHERNAME:
		/* Java knows no type of other name. */
		jb_puts(b, "Other-Name: Unrecognized ObjectIdentifier: ");
		jb_oid(b, g->d.otherName->type_id);
		break;
	case GEN_DIRNAME:
		/* X500Name.toString(), no label. */
		jb_name_escaped(b, g->d.directoryName);
		break;
	case GEN_RID:
		jb_puts(b, "OIDName: ");
		jb_oid(b, g->d.registeredID);
		break;
	case GEN_X400:
		jb_puts(b, "X400Address: <DER-encoded value>");
		break;
	default: {
		BIO *m = BIO_new(BIO_s_mem());
		char *mem;
		long n;

		if (m && GENERAL_NAME_print(m, (GENERAL_NAME *)g) > 0 &&
		    BIO_write(m, "", 1) == 1 &&
		    (n = BIO_get_mem_data(m, &mem)) > 0)
			jb_escaped(b, mem);
		BIO_free(m);
	}
	}
}

/* GeneralNames.toString(): a Java list, "[a, b]". */
static void jb_gnames(jbuf *b, const GENERAL_NAMES *gens)
{
	jb_putc(b, '[');
	for (int i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
		if (i)
			jb_puts(b, ", ");
		jb_gname(b, sk_GENERAL_NAME_value(gens, i));
	}
	jb_putc(b, ']');
}

/* Subject/IssuerAlternativeNameExtension.toString(). */
static void jb_altname(jbuf *b, const char *what, const GENERAL_NAMES *gens)
{
	jb_puts(b, what);
	jb_puts(b, " [\n");
	for (int i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
		jb_puts(b, "  ");
		jb_gname(b, sk_GENERAL_NAME_value(gens, i));
		jb_putc(b, '\n');
	}
	jb_puts(b, "]\n");
}

static void jb_ku(jbuf *b, const ASN1_BIT_STRING *ku)
{
	static const char *const names[] = {
		"DigitalSignature", "Non_repudiation", "Key_Encipherment",
		"Data_Encipherment", "Key_Agreement", "Key_CertSign",
		"Crl_Sign", "Encipher_Only", "Decipher_Only"
	};

	jb_puts(b, "KeyUsage [\n");
	for (int i = 0; i < 9; i++)
		if (ASN1_BIT_STRING_get_bit(ku, i)) {
			jb_puts(b, "  ");
			jb_puts(b, names[i]);
			jb_putc(b, '\n');
		}
	jb_puts(b, "]\n");
}

/* ExtendedKeyUsageExtension.toString(): the names of KnownOIDs. */
static void jb_eku(jbuf *b, const EXTENDED_KEY_USAGE *eku)
{
	static const struct { const char *oid, *name; } names[] = {
		{ "2.5.29.37.0", "anyExtendedKeyUsage" },
		{ "1.3.6.1.5.5.7.3.1", "serverAuth" },
		{ "1.3.6.1.5.5.7.3.2", "clientAuth" },
		{ "1.3.6.1.5.5.7.3.3", "codeSigning" },
		{ "1.3.6.1.5.5.7.3.4", "emailProtection" },
		{ "1.3.6.1.5.5.7.3.5", "ipsecEndSystem" },
		{ "1.3.6.1.5.5.7.3.6", "ipsecTunnel" },
		{ "1.3.6.1.5.5.7.3.7", "ipsecUser" },
		{ "1.3.6.1.5.5.7.3.8", "timeStamping" },
		{ "1.3.6.1.5.5.7.3.9", "OCSPSigning" },
		{ "2.16.840.1.113730.4.1", "NETSCAPE_ExportApproved" },
		{ "1.3.6.1.4.1.311.10.3.3", "MICROSOFT_ExportApproved" },
	};

	jb_puts(b, "ExtendedKeyUsages [\n");
	for (int i = 0; i < sk_ASN1_OBJECT_num(eku); i++) {
		ASN1_OBJECT *o = sk_ASN1_OBJECT_value(eku, i);
		const char *name = NULL;
		char oid[128] = "";

		OBJ_obj2txt(oid, sizeof(oid), o, 1);
		for (size_t k = 0; k < sizeof(names) / sizeof(*names); k++)
			if (!strcmp(names[k].oid, oid))
				name = names[k].name;
		jb_puts(b, "  ");
		jb_puts(b, name ? name : oid);
		jb_putc(b, '\n');
	}
	jb_puts(b, "]\n");
}

static void jb_bc(jbuf *b, const BASIC_CONSTRAINTS *bc)
{
	char t[48];

	jb_puts(b, "BasicConstraints:[\n  CA:");
	jb_puts(b, bc->ca ? "true\n" : "false\n");
	if (!bc->ca) {
		jb_puts(b, "  PathLen: undefined\n");
	} else if (!bc->pathlen) {
		jb_puts(b, "  PathLen: no limit\n");
	} else {
		snprintf(t, sizeof(t), "  PathLen:%ld\n",
			 ASN1_INTEGER_get(bc->pathlen));
		jb_puts(b, t);
	}
	jb_puts(b, "]\n");
}

/* KeyIdentifier.toString(). */
static void jb_keyid(jbuf *b, const ASN1_OCTET_STRING *id)
{
	jb_puts(b, "KeyIdentifier [\n");
	jb_hexdump(b, ASN1_STRING_get0_data(id),
		   (size_t)ASN1_STRING_length(id));
	jb_puts(b, "]\n");
}

/* AuthorityKeyIdentifierExtension.toString(): the key identifier, the
 * issuer names and "SerialNumber: " with the bytes of
 * BigInteger.toByteArray() (the DER contents) in lowercase hex. */
static void jb_aki(jbuf *b, const AUTHORITY_KEYID *aki)
{
	jb_puts(b, "AuthorityKeyIdentifier [\n");
	if (aki->keyid)
		jb_keyid(b, aki->keyid);
	if (aki->issuer) {
		jb_gnames(b, aki->issuer);
		jb_putc(b, '\n');
	}
	if (aki->serial) {
		unsigned char *der = NULL, *p;
		int n = i2d_ASN1_INTEGER(aki->serial, &der);
		long len;
		int tag, cls;
		char t[4];

		jb_puts(b, "SerialNumber: ");
		p = der;
		if (n > 0 && !(ASN1_get_object((const unsigned char **)&p, &len,
					       &tag, &cls, n) & 0x80))
			for (long i = 0; i < len; i++) {
				snprintf(t, sizeof(t), "%s%02x", i ? ":" : "",
					 p[i]);
				jb_puts(b, t);
			}
		OPENSSL_free(der);
		jb_putc(b, '\n');
	}
	jb_puts(b, "]\n");
}

/* Authority/SubjectInfoAccessExtension.toString(): a Java list of
 * AccessDescription.toString(). */
static void jb_aia(jbuf *b, const char *what, const AUTHORITY_INFO_ACCESS *aia)
{
	jb_puts(b, what);
	jb_puts(b, " [\n  [");
	for (int i = 0; i < sk_ACCESS_DESCRIPTION_num(aia); i++) {
		const ACCESS_DESCRIPTION *ad = sk_ACCESS_DESCRIPTION_value(aia,
									  i);
		char oid[128] = "?";
		const char *m;

		OBJ_obj2txt(oid, sizeof(oid), ad->method, 1);
		m = !strcmp(oid, "1.3.6.1.5.5.7.48.2") ? "caIssuers" :
		    !strcmp(oid, "1.3.6.1.5.5.7.48.5") ? "caRepository" :
		    !strcmp(oid, "1.3.6.1.5.5.7.48.3") ? "timeStamping" :
		    !strcmp(oid, "1.3.6.1.5.5.7.48.1") ? "ocsp" : oid;
		if (i)
			jb_puts(b, ", ");
		jb_puts(b, "\n   accessMethod: ");
		jb_puts(b, m);
		jb_puts(b, "\n   accessLocation: ");
		jb_gname(b, ad->location);
		jb_putc(b, '\n');
	}
	jb_puts(b, "]\n]\n");
}

/* CRLDistributionPointsExtension.toString(), DistributionPoint.toString(). */
static void jb_crldp(jbuf *b, const char *what, const CRL_DIST_POINTS *dps)
{
	static const char *const reasons[] = {
		NULL, "key compromise", "CA compromise", "affiliation changed",
		"superseded", "cessation of operation", "certificate hold",
		"privilege withdrawn", "AA compromise"
	};

	jb_puts(b, what);
	jb_puts(b, " [\n  [");
	for (int i = 0; i < sk_DIST_POINT_num(dps); i++) {
		const DIST_POINT *dp = sk_DIST_POINT_value(dps, i);

		if (i)
			jb_puts(b, ", ");
		jb_puts(b, "DistributionPoint:\n     ");
		if (dp->distpoint && dp->distpoint->type == 0) {
			jb_gnames(b, dp->distpoint->name.fullname);
		} else if (dp->distpoint) {
			/* An RDN: its attributes, " + " between. */
			const STACK_OF(X509_NAME_ENTRY) *rdn =
				dp->distpoint->name.relativename;
			jbuf t = { 0 };

			for (int k = 0; k < sk_X509_NAME_ENTRY_num(rdn); k++) {
				if (k)
					jb_puts(&t, " + ");
				jb_ava(&t, sk_X509_NAME_ENTRY_value(rdn, k));
			}
			jb_escaped(b, t.p);
			free(t.p);
		}
		jb_putc(b, '\n');
		if (dp->reasons) {
			int nbits = ASN1_STRING_length(dp->reasons) * 8;

			jb_puts(b, "   ReasonFlags:\n");
			for (int r = 0; r < nbits; r++) {
				char t[40];

				if (!ASN1_BIT_STRING_get_bit(dp->reasons, r))
					continue;
				if (r > 0 && r < 9)
					snprintf(t, sizeof(t), "    %s\n",
						 reasons[r]);
				else
					snprintf(t, sizeof(t),
						 "    Unknown reason %d\n", r);
				jb_puts(b, t);
			}
		}
		if (dp->CRLissuer) {
			jb_puts(b, "   CRLIssuer:");
			jb_gnames(b, dp->CRLissuer);
			jb_putc(b, '\n');
		}
	}
	jb_puts(b, "]]\n");
}

/* CertificatePoliciesExtension.toString(): per policy its OID and a Java
 * set of PolicyQualifierInfo.toString(), each qualifier's DER dumped. */
static void jb_policies(jbuf *b, const CERTIFICATEPOLICIES *cps)
{
	jb_puts(b, "CertificatePolicies [\n");
	for (int i = 0; i < sk_POLICYINFO_num(cps); i++) {
		const POLICYINFO *pi = sk_POLICYINFO_value(cps, i);

		jb_puts(b, "  [CertificatePolicyId: [");
		jb_oid(b, pi->policyid);
		jb_puts(b, "]\n[");
		for (int k = 0; k < sk_POLICYQUALINFO_num(pi->qualifiers); k++) {
			const POLICYQUALINFO *q =
				sk_POLICYQUALINFO_value(pi->qualifiers, k);
			int nid = OBJ_obj2nid(q->pqualid);
			unsigned char *der = NULL;
			int n;

			if (nid == NID_id_qt_cps)
				n = i2d_ASN1_IA5STRING(q->d.cpsuri, &der);
			else if (nid == NID_id_qt_unotice)
				n = i2d_USERNOTICE(q->d.usernotice, &der);
			else
				n = i2d_ASN1_TYPE(q->d.other, &der);
			if (k)
				jb_puts(b, ", ");
			jb_puts(b, "PolicyQualifierInfo: [\n  qualifierID: ");
			jb_oid(b, q->pqualid);
			jb_puts(b, "\n  qualifier: ");
			if (n > 0)
				jb_hexdump(b, der, (size_t)n);
			else
				jb_puts(b, "null");
			jb_puts(b, "\n]");
			OPENSSL_free(der);
		}
		jb_puts(b, "]  ]\n");
	}
	jb_puts(b, "]\n");
}

/* NetscapeCertTypeExtension.toString() (no newline after the last). */
static void jb_nscerttype(jbuf *b, const ASN1_BIT_STRING *bits)
{
	static const char *const names[] = {
		"   SSL client\n", "   SSL server\n", "   S/MIME\n",
		"   Object Signing\n", NULL, "   SSL CA\n", "   S/MIME CA\n",
		"   Object Signing CA"
	};

	jb_puts(b, "NetscapeCertType [\n");
	for (int i = 0; i < 8; i++)
		if (names[i] && ASN1_BIT_STRING_get_bit(bits, i))
			jb_puts(b, names[i]);
	jb_puts(b, "]\n");
}

static void jb_time(jbuf *b, const ASN1_TIME *t)
{
	struct tm tm;
	char buf[64];

	if (!t || !ASN1_TIME_to_tm(t, &tm) ||
	    !strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S UTC %Y", &tm))
		snprintf(buf, sizeof(buf), "?");
	jb_puts(b, buf);
}

/* PrivateKeyUsageExtension.toString(). */
static void jb_pkup(jbuf *b, const PKEY_USAGE_PERIOD *pk)
{
	jb_puts(b, "PrivateKeyUsage: [\n");
	if (pk->notBefore) {
		jb_puts(b, "From: ");
		jb_time(b, pk->notBefore);
		if (pk->notAfter)
			jb_puts(b, ", ");
	}
	if (pk->notAfter) {
		jb_puts(b, "To: ");
		jb_time(b, pk->notAfter);
	}
	jb_puts(b, "]\n");
}

/* GeneralSubtrees.toString(), a Java list of GeneralSubtree.toString(). */
static void jb_subtrees(jbuf *b, const STACK_OF(GENERAL_SUBTREE) *trees)
{
	jb_puts(b, "   GeneralSubtrees:\n[");
	for (int i = 0; i < sk_GENERAL_SUBTREE_num(trees); i++) {
		const GENERAL_SUBTREE *t = sk_GENERAL_SUBTREE_value(trees, i);
		char n[32];

		if (i)
			jb_puts(b, ", ");
		jb_puts(b, "\n   GeneralSubtree: [\n    GeneralName: ");
		if (t->base)
			jb_gname(b, t->base);
		snprintf(n, sizeof(n), "\n    Minimum: %ld",
			 t->minimum ? ASN1_INTEGER_get(t->minimum) : 0L);
		jb_puts(b, n);
		jb_puts(b, "\n    Maximum: ");
		if (t->maximum) {
			snprintf(n, sizeof(n), "%ld",
				 ASN1_INTEGER_get(t->maximum));
			jb_puts(b, n);
		} else {
			jb_puts(b, "undefined");
		}
		jb_puts(b, "    ]\n");
	}
	jb_puts(b, "]\n");
}

/* NameConstraintsExtension.toString(). */
static void jb_nc(jbuf *b, const NAME_CONSTRAINTS *nc)
{
	jb_puts(b, "NameConstraints: [");
	if (nc->permittedSubtrees) {
		jb_puts(b, "\n    Permitted:");
		jb_subtrees(b, nc->permittedSubtrees);
	}
	if (nc->excludedSubtrees) {
		jb_puts(b, "\n    Excluded:");
		jb_subtrees(b, nc->excludedSubtrees);
	}
	jb_puts(b, "   ]\n");
}

/* PolicyConstraintsExtension.toString(). */
static void jb_pc(jbuf *b, const POLICY_CONSTRAINTS *pc)
{
	char t[96];

	jb_puts(b, "PolicyConstraints: [  Require: ");
	if (pc->requireExplicitPolicy)
		snprintf(t, sizeof(t), "%ld;",
			 ASN1_INTEGER_get(pc->requireExplicitPolicy));
	else
		snprintf(t, sizeof(t), "unspecified;");
	jb_puts(b, t);
	jb_puts(b, "\tInhibit: ");
	if (pc->inhibitPolicyMapping)
		snprintf(t, sizeof(t), "%ld",
			 ASN1_INTEGER_get(pc->inhibitPolicyMapping));
	else
		snprintf(t, sizeof(t), "unspecified");
	jb_puts(b, t);
	jb_puts(b, " ]\n");
}

/* PolicyMappingsExtension.toString(), CertificatePolicyMap.toString(). */
static void jb_pm(jbuf *b, const POLICY_MAPPINGS *pm)
{
	jb_puts(b, "PolicyMappings [\n[");
	for (int i = 0; i < sk_POLICY_MAPPING_num(pm); i++) {
		const POLICY_MAPPING *m = sk_POLICY_MAPPING_value(pm, i);

		if (i)
			jb_puts(b, ", ");
		jb_puts(b, "CertificatePolicyMap: [\n"
			   "IssuerDomain:CertificatePolicyId: [");
		jb_oid(b, m->issuerDomainPolicy);
		jb_puts(b, "]\nSubjectDomain:CertificatePolicyId: [");
		jb_oid(b, m->subjectDomainPolicy);
		jb_puts(b, "]\n]\n");
	}
	jb_puts(b, "]]\n");
}

/* Whether Java has a class for the extension (OIDMap): the others it
 * prints as a hex dump of their value. */
static int java_knows(int nid)
{
	static const int known[] = {
		NID_subject_key_identifier, NID_key_usage,
		NID_private_key_usage_period, NID_subject_alt_name,
		NID_issuer_alt_name, NID_basic_constraints, NID_crl_number,
		NID_crl_reason, NID_name_constraints, NID_policy_mappings,
		NID_authority_key_identifier, NID_policy_constraints,
		NID_netscape_cert_type, NID_certificate_policies,
		NID_ext_key_usage, NID_inhibit_any_policy,
		NID_crl_distribution_points, NID_certificate_issuer,
		NID_sinfo_access, NID_info_access,
		NID_issuing_distribution_point, NID_delta_crl,
		NID_freshest_crl, NID_id_pkix_OCSP_noCheck,
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
		if (known[i] == nid)
			return 1;
	return 0;
}

static void put_extension(FILE *f, X509_EXTENSION *ext, int no)
{
	ASN1_OBJECT *obj = X509_EXTENSION_get_object(ext);
	int nid = OBJ_obj2nid(obj), crit = X509_EXTENSION_get_critical(ext);
	void *v = java_knows(nid) ? X509V3_EXT_d2i(ext) : NULL;
	jbuf b = { 0 };
	char oid[80];

	OBJ_obj2txt(oid, sizeof(oid), obj, 1);
	fprintf(f, "#%d: ObjectId: %s Criticality=%s\n", no, oid,
		crit ? "true" : "false");
	if (!java_knows(nid)) {
		/* Extension.toString() and keytool's dump of the value. */
		const ASN1_OCTET_STRING *d = X509_EXTENSION_get_data(ext);

		if (ASN1_STRING_length(d) == 0) {
			jb_puts(&b, "(Empty value)\n");
		} else {
			jb_hexdump(&b, ASN1_STRING_get0_data(d),
				   (size_t)ASN1_STRING_length(d));
			jb_putc(&b, '\n');
		}
	} else if (v && nid == NID_subject_alt_name) {
		jb_altname(&b, "SubjectAlternativeName", v);
	} else if (v && nid == NID_issuer_alt_name) {
		jb_altname(&b, "IssuerAlternativeName", v);
	} else if (v && nid == NID_key_usage) {
		jb_ku(&b, v);
	} else if (v && nid == NID_ext_key_usage) {
		jb_eku(&b, v);
	} else if (v && nid == NID_basic_constraints) {
		jb_bc(&b, v);
	} else if (v && nid == NID_subject_key_identifier) {
		jb_puts(&b, "SubjectKeyIdentifier [\n");
		jb_keyid(&b, v);
		jb_puts(&b, "]\n");
	} else if (v && nid == NID_authority_key_identifier) {
		jb_aki(&b, v);
	} else if (v && nid == NID_info_access) {
		jb_aia(&b, "AuthorityInfoAccess", v);
	} else if (v && nid == NID_sinfo_access) {
		jb_aia(&b, "SubjectInfoAccess", v);
	} else if (v && nid == NID_crl_distribution_points) {
		jb_crldp(&b, "CRLDistributionPoints", v);
	} else if (v && nid == NID_freshest_crl) {
		jb_crldp(&b, "FreshestCRL", v);
	} else if (v && nid == NID_certificate_policies) {
		jb_policies(&b, v);
	} else if (v && nid == NID_netscape_cert_type) {
		jb_nscerttype(&b, v);
	} else if (v && nid == NID_private_key_usage_period) {
		jb_pkup(&b, v);
	} else if (v && nid == NID_name_constraints) {
		jb_nc(&b, v);
	} else if (v && nid == NID_policy_constraints) {
		jb_pc(&b, v);
	} else if (v && nid == NID_policy_mappings) {
		jb_pm(&b, v);
	} else if (v && nid == NID_inhibit_any_policy && crit) {
		char t[48];

		snprintf(t, sizeof(t), "InhibitAnyPolicy: %ld\n",
			 ASN1_INTEGER_get(v));
		jb_puts(&b, t);
	} else if (nid == NID_inhibit_any_policy) {
		/* Java refuses it (RFC 5280 says it MUST be critical) and
		 * lists it after the others (java_unparseable()). */
		const ASN1_OCTET_STRING *d = X509_EXTENSION_get_data(ext);

		jb_puts(&b, "Unparseable InhibitAnyPolicy extension due to\n"
			"java.io.IOException: Criticality cannot be false "
			"for InhibitAnyPolicy\n\n");
		jb_hexdump(&b, ASN1_STRING_get0_data(d),
			   (size_t)ASN1_STRING_length(d));
	} else if (v && nid == NID_id_pkix_OCSP_noCheck) {
		/* OCSPNoCheckExtension.toString(): nothing more. */
	} else {
		/* Not (yet) in Java's words: OpenSSL's text, marked by its
		 * long name. */
		BIO *m = BIO_new(BIO_s_mem());

		fprintf(f, "%s [\n", nid != NID_undef ? OBJ_nid2ln(nid) : oid);
		if (m && X509V3_EXT_print(m, ext, X509V3_EXT_DUMP_UNKNOWN,
					  0) > 0) {
			BIO_puts(m, "\n");
			put_bio(f, m, "  ");
		}
		BIO_free(m);
		fputs("]\n", f);
	}
	if (b.p)
		fputs(b.p, f);
	free(b.p);
	fputc('\n', f);
	if (v) {
		const X509V3_EXT_METHOD *m = X509V3_EXT_get(ext);

		if (m && m->it)
			ASN1_item_free(v, ASN1_ITEM_ptr(m->it));
		else if (m && m->ext_free)
			m->ext_free(v);
	}
	ERR_clear_error();
}

/* An extension that Java refuses (and OpenSSL reads). */
static int java_unparseable(X509_EXTENSION *ext)
{
	return OBJ_obj2nid(X509_EXTENSION_get_object(ext)) ==
	       NID_inhibit_any_policy && !X509_EXTENSION_get_critical(ext);
}

/* keytool lists extensions sorted by their Java name (a TreeMap); the
 * ones Java has no class for by their OID. */
static const char *java_ext_name(X509_EXTENSION *ext, char *oid, size_t len)
{
	static const struct { int nid; const char *name; } names[] = {
		{ NID_authority_key_identifier, "AuthorityKeyIdentifier" },
		{ NID_info_access, "AuthorityInfoAccess" },
		{ NID_basic_constraints, "BasicConstraints" },
		{ NID_crl_distribution_points, "CRLDistributionPoints" },
		{ NID_certificate_policies, "CertificatePolicies" },
		{ NID_ext_key_usage, "ExtendedKeyUsage" },
		{ NID_freshest_crl, "FreshestCRL" },
		{ NID_inhibit_any_policy, "InhibitAnyPolicy" },
		{ NID_issuer_alt_name, "IssuerAlternativeName" },
		{ NID_key_usage, "KeyUsage" },
		{ NID_name_constraints, "NameConstraints" },
		{ NID_netscape_cert_type, "NetscapeCertType" },
		{ NID_id_pkix_OCSP_noCheck, "OCSPNoCheck" },
		{ NID_policy_constraints, "PolicyConstraints" },
		{ NID_policy_mappings, "PolicyMappings" },
		{ NID_private_key_usage_period, "PrivateKeyUsage" },
		{ NID_subject_alt_name, "SubjectAlternativeName" },
		{ NID_sinfo_access, "SubjectInfoAccess" },
		{ NID_subject_key_identifier, "SubjectKeyIdentifier" },
	};
	int nid = OBJ_obj2nid(X509_EXTENSION_get_object(ext));

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (names[i].nid == nid)
			return names[i].name;
	OBJ_obj2txt(oid, (int)len, X509_EXTENSION_get_object(ext), 1);
	return oid;
}

static void put_extensions(FILE *f, const STACK_OF(X509_EXTENSION) *exts)
{
	int n = sk_X509_EXTENSION_num(exts), *order;
	char (*keys)[96];

	order = malloc((size_t)n * sizeof(*order));
	keys = malloc((size_t)n * sizeof(*keys));
	if (!order || !keys) {
		free(order);
		free(keys);
		cli_err(NULL, "out of memory");
		return;
	}
	for (int i = 0; i < n; i++) {
		char oid[80];

		X509_EXTENSION *e = sk_X509_EXTENSION_value(exts, i);

		/* Extensions Java cannot parse come after the others. */
		snprintf(keys[i], sizeof(keys[i]), "%s%s",
			 java_unparseable(e) ? "\x7f" : "",
			 java_ext_name(e, oid, sizeof(oid)));
		order[i] = i;
	}
	/* Insertion sort (stable): extensions are few. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 &&
		     strcmp(keys[order[j - 1]], keys[order[j]]) > 0; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	fputs("\nExtensions: \n\n", f);
	for (int i = 0; i < n; i++)
		put_extension(f, sk_X509_EXTENSION_value(exts, order[i]),
			      i + 1);
	free(order);
	free(keys);
}

/*
 * keytool's "(weak)" and "(disabled)", after OpenJDK 17's java.security:
 * jdk.certpath.disabledAlgorithms (MD2, MD5; RSA and DSA keys under 1024
 * bits, EC keys under 224) and jdk.security.legacyAlgorithms (SHA1; RSA
 * and DSA keys under 2048 bits).  0 when neither, 1 weak, 2 disabled.
 */
enum { JAVA_OK, JAVA_WEAK, JAVA_DISABLED };

static int sig_strength(const char *sig)
{
	if (!strncmp(sig, "MD2", 3) || !strncmp(sig, "MD5", 3))
		return JAVA_DISABLED;
	if (!strncmp(sig, "SHA1with", 8))
		return JAVA_WEAK;
	return JAVA_OK;
}

static int key_strength(X509 *x)
{
	EVP_PKEY *pk = X509_get0_pubkey(x);
	int bits = pk ? EVP_PKEY_get_bits(pk) : 0;

	ERR_clear_error();
	if (pk && (EVP_PKEY_is_a(pk, "RSA") || EVP_PKEY_is_a(pk, "DSA")))
		return bits < 1024 ? JAVA_DISABLED : bits < 2048 ? JAVA_WEAK :
		       JAVA_OK;
	if (pk && EVP_PKEY_is_a(pk, "EC") && bits < 224)
		return JAVA_DISABLED;
	return JAVA_OK;
}

static const char *const marks[] = { "", " (weak)", " (disabled)" };

/* Print one certificate; add keytool's warnings about it to `warn`. */
static void print_one(FILE *f, X509 *x, jbuf *warn, int no, int total)
{
	const STACK_OF(X509_EXTENSION) *exts = X509_get0_extensions(x);
	char sig[96], key[128], label[64];
	int ss, ks;

	sigalg_name(sig, sizeof(sig), x);
	key_text(key, sizeof(key), x);
	ss = sig_strength(sig);
	ks = key_strength(x);
	fputs("Owner: ", f);
	put_name(f, X509_get_subject_name(x));
	fputs("\nIssuer: ", f);
	put_name(f, X509_get_issuer_name(x));
	fputs("\nSerial number: ", f);
	put_serial(f, X509_get0_serialNumber(x));
	fputs("\nValid from: ", f);
	put_time(f, X509_get0_notBefore(x));
	fputs(" until: ", f);
	put_time(f, X509_get0_notAfter(x));
	fputs("\nCertificate fingerprints:\n", f);
	put_fingerprint(f, x, EVP_sha1(), "SHA1");
	put_fingerprint(f, x, EVP_sha256(), "SHA256");
	fprintf(f, "Signature algorithm name: %s%s\n", sig, marks[ss]);
	fprintf(f, "Subject Public Key Algorithm: %s%s\n", key, marks[ks]);
	fprintf(f, "Version: %ld\n", X509_get_version(x) + 1);
	if (sk_X509_EXTENSION_num(exts) > 0)
		put_extensions(f, exts);
	if (total > 1)
		snprintf(label, sizeof(label), "The certificate #%d of %d", no,
			 total);
	else
		snprintf(label, sizeof(label), "The certificate");
	if (ss) {
		jb_puts(warn, label);
		jb_puts(warn, " uses the ");
		jb_puts(warn, sig);
		jb_puts(warn, ss == JAVA_WEAK ? " signature algorithm which is "
			"considered a security risk. This algorithm will be "
			"disabled in a future update.\n" : " signature "
			"algorithm which is considered a security risk and is "
			"disabled.\n");
	}
	if (ks) {
		jb_puts(warn, label);
		jb_puts(warn, " uses a ");
		jb_puts(warn, key);
		jb_puts(warn, ks == JAVA_WEAK ? " which is considered a security "
			"risk. This key size will be disabled in a future "
			"update.\n" : " which is considered a security risk "
			"and is disabled.\n");
	}
}

/* As keytool -printcert: the certificates on `f`, then its warnings
 * about weak algorithms and keys on `warn` (keytool: standard error;
 * NULL: none). */
void cli_print_certs(FILE *f, STACK_OF(X509) *certs, FILE *warn_to)
{
	int n = sk_X509_num(certs);
	jbuf warn = { 0 };

	for (int i = 0; i < n; i++) {
		if (n > 1)
			fprintf(f, "%sCertificate[%d]:\n", i ? "\n" : "", i + 1);
		print_one(f, sk_X509_value(certs, i), &warn, i + 1, n);
	}
	fflush(f);
	if (warn.p && warn_to)
		fprintf(warn_to, "\nWarning:\n%s", warn.p);
	free(warn.p);
}

int cmd_printcert(cli_ctx *c)
{
	STACK_OF(X509) *certs = sk_X509_new_null();
	const char *file = c->file ? c->file : "-";
	int rc;

	if (!certs) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((rc = cli_load_certs_p7(certs, file)) == 0)
		cli_print_certs(stdout, certs, stderr);
	sk_X509_pop_free(certs, X509_free);
	return rc;
}
