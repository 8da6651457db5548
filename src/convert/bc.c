/*
 * Bouncy Castle keystores (bc.h): what BKS and BCFKS share: the
 * detection, the dispatch from java.c, the entries array and the budget of
 * key derivation.
 */
#include "convert/bc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/error.h"
#include "util/wipe.h"

/* ---- detection ----------------------------------------------------------- */

#define BKS_MAC_LEN 20

static int bks_like(const uint8_t *d, size_t n, unsigned *version,
		    size_t *salt_len, size_t *hdr)
{
	uint32_t v, sl;

	if (n < 8)
		return 0;
	v = wks_load_u32be(d);
	sl = wks_load_u32be(d + 4);
	if (v > 2 || sl == 0 || sl > 1024)
		return 0;
	*version = v;
	*salt_len = sl;
	*hdr = 12 + (size_t)sl;
	return 1;
}

/* The DER header at d[*i] (within n): its tag and the offset of its end
 * (which may lie beyond n); 0 if unreadable. */
static int der_head(const uint8_t *d, size_t n, size_t *i, int *tag,
		    size_t *end)
{
	size_t len, k, at = *i;

	if (at + 2 > n)
		return 0;
	*tag = d[at];
	len = d[at + 1];
	at += 2;
	if (len & 0x80) {
		k = len & 0x7F;
		if (k == 0 || k > 4 || at + k > n)
			return 0;
		for (len = 0; k; k--)
			len = len << 8 | d[at++];
	}
	*i = at;
	*end = at + len;
	return 1;
}

/* ObjectStore ::= SEQUENCE { storeData, integrityCheck }: its first element
 * a SEQUENCE starting with a SEQUENCE (EncryptedObjectStoreData) or an
 * INTEGER (ObjectStoreData), its second a SEQUENCE (HMAC) or [0]
 * (signature), and no third.  (A PKCS#12 PFX starts with an INTEGER; an
 * X.509 certificate, a CSR or a CRL has a third element; an
 * EncryptedPrivateKeyInfo starts with an OID inside.) */
static int bcfks_like(const uint8_t *d, size_t n)
{
	size_t i = 0, end, e1, e2, inner;
	int tag;

	if (!der_head(d, n, &i, &tag, &end) || tag != 0x30)
		return 0;
	if (!der_head(d, n, &i, &tag, &e1) || tag != 0x30)
		return 0;
	inner = i;
	if (!der_head(d, n, &inner, &tag, &e2) || (tag != 0x30 && tag != 0x02))
		return 0;
	if (e1 >= end)
		return 0; /* one element only */
	if (e1 >= n)
		return 1; /* (truncated: its reader says so) */
	i = e1;
	if (!der_head(d, n, &i, &tag, &e2) || (tag != 0x30 && tag != 0xA0))
		return 0;
	return e2 >= end || e2 >= n ? 1 : 0;
}

wks_keystore_type wks__bc_detect(const uint8_t *d, size_t n)
{
	unsigned version;
	size_t salt_len, hdr, used = 0;

	if (!d)
		return WKS_KEYSTORE_UNKNOWN;
	if (n >= 2 && d[0] == 0x30)
		return bcfks_like(d, n) ? WKS_KEYSTORE_BCFKS
					: WKS_KEYSTORE_UNKNOWN;
	if (!bks_like(d, n, &version, &salt_len, &hdr))
		return WKS_KEYSTORE_UNKNOWN;
	if (n >= hdr + 1 + BKS_MAC_LEN &&
	    bks_entries(NULL, NULL, d + hdr, n - hdr - BKS_MAC_LEN, &used,
			NULL) == 0 &&
	    used == n - hdr - BKS_MAC_LEN)
		return WKS_KEYSTORE_BKS;
	/* UBER: Twofish blocks holding at least the 0 that ends the entries
	 * and a SHA-1. */
	if (version <= 1 && salt_len == 20 && n >= hdr + 32 &&
	    (n - hdr) % 16 == 0)
		return WKS_KEYSTORE_UBER;
	return WKS_KEYSTORE_BKS;
}

/* ---- what the formats share --------------------------------------------- */

jks_entry *bc_add_entry(bc_store *s, jks_file *f, int sub)
{
	if (f->count == s->sub_cap) {
		size_t cap = s->sub_cap ? s->sub_cap * 2 : 8;
		jks_entry *e = realloc(f->e, cap * sizeof(*e));
		unsigned char *u;

		if (!e)
			return NULL;
		f->e = e;
		if (!(u = realloc(s->sub, cap)))
			return NULL;
		s->sub = u;
		s->sub_cap = cap;
	}
	memset(&f->e[f->count], 0, sizeof(f->e[0]));
	s->sub[f->count] = (unsigned char)sub;
	return &f->e[f->count++];
}

int bc_check_iter(const bc_store *s, uint64_t iter, const char *what)
{
	if (iter > s->lim.max_iterations)
		return wks__err(WKS_ERR_LIMIT, "%s: iteration count %llu exceeds "
				"the limit %u (libwks.wks.maxIterationCount)",
				what, (unsigned long long)iter,
				s->lim.max_iterations);
	return 0;
}

static int cmp_alias(const void *a, const void *b)
{
	return strcmp((*(jks_entry *const *)a)->alias,
		      (*(jks_entry *const *)b)->alias);
}

int bc_check_unique(const jks_file *f)
{
	jks_entry **v;
	int err = 0;

	if (f->count < 2)
		return 0;
	if (!(v = malloc(f->count * sizeof(*v))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < f->count; i++)
		v[i] = &f->e[i];
	qsort(v, f->count, sizeof(*v), cmp_alias);
	for (size_t i = 1; i < f->count && !err; i++)
		if (!strcmp(v[i - 1]->alias, v[i]->alias))
			err = wks__err(WKS_ERR_FORMAT, "alias appears twice");
	free(v);
	return err;
}

/* ---- dispatch ------------------------------------------------------------ */

int wks__bc_parse(bc_store *s, jks_file *f, const uint8_t *data, size_t len,
		  const char *pw, size_t pw_len, const jks_limits *lim)
{
	int err;

	memset(s, 0, sizeof(*s));
	*f = (jks_file)JKS_FILE_INIT;
	s->lim = *lim;
	s->type = wks__bc_detect(data, len);
	switch (s->type) {
	case WKS_KEYSTORE_BKS:
		err = bks_parse(s, f, data, len, pw, pw_len);
		break;
	case WKS_KEYSTORE_BCFKS:
		err = bcfks_parse(s, f, data, len, pw, pw_len);
		break;
	case WKS_KEYSTORE_UBER:
		err = wks__err(WKS_ERR_UNSUPPORTED, "an UBER keystore (Bouncy "
			       "Castle's, encrypted whole with Twofish, which "
			       "libwks does not have): convert it to BKS or "
			       "PKCS12 with keytool first: keytool "
			       "-importkeystore -srcstoretype UBER "
			       "-deststoretype PKCS12 -providerpath bcprov.jar "
			       "-providerclass "
			       "org.bouncycastle.jce.provider."
			       "BouncyCastleProvider ...");
		break;
	default:
		err = wks__err(WKS_ERR_FORMAT, "not a BKS or BCFKS keystore");
	}
	if (err < 0) {
		if (err == WKS_ERR_NOMEM)
			wks__err(err, "out of memory");
		jks_file_free(f);
		wks__bc_free(s);
	}
	return err;
}

void wks__bc_free(bc_store *s)
{
	if (!s)
		return;
	if (s->plain)
		wks_wipe_free(s->plain, s->plain_len);
	free(s->sub);
	s->plain = NULL;
	s->sub = NULL;
	s->sub_cap = 0;
}

static int get(uint8_t **key, size_t *key_len, char **alg, bc_store *s,
	       const jks_file *f, size_t i, int want_private, const char *pw,
	       size_t pw_len)
{
	const jks_entry *e = i < f->count ? &f->e[i] : NULL;

	*key = NULL;
	*key_len = 0;
	if (alg)
		*alg = NULL;
	if (!e)
		return wks__err(WKS_ERR_INVALID, "no entry %zu", i);
	if (e->tag != (want_private ? JKS_TAG_KEY : JKS_TAG_SECRET))
		return wks__err(WKS_ERR_INVALID, "not a %s entry",
				want_private ? "private key" : "secret key");
	return s->type == WKS_KEYSTORE_BKS ?
	       bks_get_key(key, key_len, alg, s, e, s->sub[i], want_private,
			   pw, pw_len) :
	       bcfks_get_key(key, key_len, alg, s, e, s->sub[i], want_private,
			     pw, pw_len);
}

int wks__bc_get_key(uint8_t **pkcs8, size_t *pkcs8_len, bc_store *s,
		    const jks_file *f, size_t i, const char *pw, size_t pw_len)
{
	return get(pkcs8, pkcs8_len, NULL, s, f, i, 1, pw, pw_len);
}

int wks__bc_get_secret(uint8_t **key, size_t *key_len, char **algorithm,
		       bc_store *s, const jks_file *f, size_t i,
		       const char *pw, size_t pw_len)
{
	return get(key, key_len, algorithm, s, f, i, 0, pw, pw_len);
}
