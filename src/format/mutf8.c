/* Modified UTF-8 (Java DataInput.readUTF / writeUTF) and the API alias
 * form.  Both directions go through UTF-16 code units, because that is
 * what Java compares: two byte strings are the same alias iff they decode
 * to the same units. */
#include "format/mutf8.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "wks/wks.h"

/* One UTF-16 unit as Java's writeUTF writes it: 1 byte for U+0001..007F,
 * 2 for U+0000 (C0 80) and U+0080..07FF, 3 for the rest, surrogates
 * included.  Returns the byte count. */
static size_t put_unit(uint8_t t[3], uint32_t c)
{
	if (c >= 1 && c < 0x80) {
		t[0] = (uint8_t)c;
		return 1;
	}
	if (c < 0x800) {
		t[0] = (uint8_t)(0xC0 | (c >> 6));
		t[1] = (uint8_t)(0x80 | (c & 0x3F));
		return 2;
	}
	t[0] = (uint8_t)(0xE0 | (c >> 12));
	t[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
	t[2] = (uint8_t)(0x80 | (c & 0x3F));
	return 3;
}

/* Append the API form of one UTF-16 unit sequence. */
static int put_units_api(wks_buf *out, const uint16_t *u, size_t n)
{
	size_t i;
	uint8_t t[4];

	for (i = 0; i < n; i++) {
		uint32_t c = u[i];
		size_t k;

		if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n &&
		    u[i + 1] >= 0xDC00 && u[i + 1] <= 0xDFFF) {
			c = 0x10000 + ((c - 0xD800) << 10) + (u[i + 1] - 0xDC00u);
			i++;
			t[0] = (uint8_t)(0xF0 | (c >> 18));
			t[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
			t[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
			t[3] = (uint8_t)(0x80 | (c & 0x3F));
			k = 4;
		} else {
			k = put_unit(t, c);
		}
		if (wks_buf_put(out, t, k) < 0)
			return out->err;
	}
	return WKS_OK;
}

int wks__mutf8_to_api(wks_buf *out, const uint8_t *in, size_t n)
{
	uint16_t *units;
	size_t i = 0, nu = 0;
	int err;

	if (n > 65535)
		return wks__err(WKS_ERR_FORMAT, "string of %zu bytes is too long", n);
	if (!(units = malloc(n * sizeof(*units) + 1)))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	while (i < n) {
		uint8_t c = in[i];

		if (c < 0x80) {
			units[nu++] = c;
			i += 1;
		} else if (c >= 0xC0 && c <= 0xDF) {
			if (n - i < 2 || (in[i + 1] & 0xC0) != 0x80)
				goto bad;
			units[nu++] = (uint16_t)((c & 0x1F) << 6 | (in[i + 1] & 0x3F));
			i += 2;
		} else if (c >= 0xE0 && c <= 0xEF) {
			if (n - i < 3 || (in[i + 1] & 0xC0) != 0x80 ||
			    (in[i + 2] & 0xC0) != 0x80)
				goto bad;
			units[nu++] = (uint16_t)((c & 0x0F) << 12 |
			                         (in[i + 1] & 0x3F) << 6 |
			                         (in[i + 2] & 0x3F));
			i += 3;
		} else {
			goto bad;
		}
	}
	err = put_units_api(out, units, nu);
	free(units);
	return err;
bad:
	free(units);
	return wks__err(WKS_ERR_FORMAT,
	                "invalid modified UTF-8 at byte %zu of a string", i);
}

/* Decode an API-form string into UTF-16 units.  Accepts standard UTF-8
 * plus C0 80 (NUL) and 3-byte surrogates; rejects everything else. */
static int api_to_units(uint16_t *units, size_t *nu_out, size_t max,
                        const uint8_t *s, size_t n)
{
	size_t i = 0, nu = 0;

	while (i < n) {
		uint8_t c = s[i];
		uint32_t cp;
		size_t k;

		if (c >= 1 && c < 0x80) {
			cp = c;
			k = 1;
		} else if (c >= 0xC0 && c <= 0xDF) {
			if (n - i < 2 || (s[i + 1] & 0xC0) != 0x80)
				goto bad;
			cp = (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
			if (cp < 0x80 && !(c == 0xC0 && s[i + 1] == 0x80))
				goto bad; /* overlong, except NUL as C0 80 */
			k = 2;
		} else if (c >= 0xE0 && c <= 0xEF) {
			if (n - i < 3 || (s[i + 1] & 0xC0) != 0x80 ||
			    (s[i + 2] & 0xC0) != 0x80)
				goto bad;
			cp = (uint32_t)(c & 0x0F) << 12 |
			     (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
			if (cp < 0x800)
				goto bad;
			k = 3;
		} else if (c >= 0xF0 && c <= 0xF4) {
			if (n - i < 4 || (s[i + 1] & 0xC0) != 0x80 ||
			    (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80)
				goto bad;
			cp = (uint32_t)(c & 0x07) << 18 |
			     (uint32_t)(s[i + 1] & 0x3F) << 12 |
			     (uint32_t)(s[i + 2] & 0x3F) << 6 | (s[i + 3] & 0x3F);
			if (cp < 0x10000 || cp > 0x10FFFF)
				goto bad;
			k = 4;
		} else {
			goto bad;
		}
		if (nu + (cp >= 0x10000 ? 2 : 1) > max)
			return wks__err(WKS_ERR_INVALID, "string too long");
		if (cp >= 0x10000) {
			cp -= 0x10000;
			units[nu++] = (uint16_t)(0xD800 + (cp >> 10));
			units[nu++] = (uint16_t)(0xDC00 + (cp & 0x3FF));
		} else {
			units[nu++] = (uint16_t)cp;
		}
		i += k;
	}
	*nu_out = nu;
	return WKS_OK;
bad:
	return wks__err(WKS_ERR_INVALID, "invalid UTF-8 at byte %zu of a string", i);
}

/* Decode into a heap array of units (at most one unit per byte). */
static int api_units(uint16_t **units, size_t *nu, const char *s, size_t n)
{
	int err;

	*units = malloc(n * sizeof(**units) + 1);
	if (!*units)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if ((err = api_to_units(*units, nu, n, (const uint8_t *)s, n)) < 0) {
		free(*units);
		*units = NULL;
	}
	return err;
}

int wks__api_to_mutf8(wks_buf *out, const char *s, size_t n)
{
	uint16_t *units;
	size_t nu = 0, i, start = out->len, len = 0;
	int err;

	if ((err = api_units(&units, &nu, s, n)) < 0)
		return err;
	for (i = 0; i < nu; i++) {
		uint32_t c = units[i];
		uint8_t t[3];
		size_t k;

		k = put_unit(t, c);
		len += k;
		if (len > 65535) {
			out->len = start;
			err = wks__err(WKS_ERR_INVALID,
			               "string longer than 65535 bytes when encoded");
			break;
		}
		if ((err = wks_buf_put(out, t, k)) < 0)
			break;
	}
	free(units);
	return err;
}

int wks__api_canon(wks_buf *out, const char *s, size_t n)
{
	uint16_t *units;
	size_t nu = 0;
	int err;

	if ((err = api_units(&units, &nu, s, n)) < 0)
		return err;
	err = put_units_api(out, units, nu);
	free(units);
	return err;
}

int wks__api_validate(const char *s, size_t n)
{
	uint16_t *units;
	size_t nu = 0;
	int err;

	if ((err = api_units(&units, &nu, s, n)) == WKS_OK)
		free(units);
	return err;
}
