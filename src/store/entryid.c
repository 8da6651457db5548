/* The identity of an entry's content: wks_store_entry_digest() (wks/wks.h). */
#include <string.h>

#include "crypto/crypto.h"
#include "store/store_int.h"
#include "util/buf.h"
#include "util/error.h"

int wks_store_entry_digest(uint8_t out[32], wks_store *st, const char *alias)
{
	wks_buf b = WKS_BUF_INIT;
	wks_entry *e = NULL;
	int err;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	memset(out, 0, 32);
	if ((err = wks__store_get_entry(&e, st, alias)) < 0)
		return err;
	/* The type and the body (one entry's bytes can never be read as
	 * another type's), hashed in the store's own crypto context (a
	 * module with a library context of its own never reaches into the
	 * application's default one): HMAC-SHA512 under a fixed key, a
	 * collision-resistant digest, cut to 32 bytes. */
	if ((err = wks_buf_put_i32be(&b, (int32_t)e->type)) >= 0 &&
	    (err = wks_buf_put(&b, e->body, e->body_len)) >= 0) {
		uint8_t mac[WKS_MAC_LEN];

		if ((err = wks__hmac_sha512_cc(st->crypto, mac,
					       (const uint8_t *)"wks-entry", 9,
					       b.ptr, b.len)) >= 0)
			memcpy(out, mac, 32);
	}
	wks_buf_dispose(&b);
	wks__entry_unref(e);
	return err < 0 ? err : WKS_OK;
}
