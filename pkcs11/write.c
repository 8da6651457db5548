/*
 * Changing a token: the locked load-modify-save under every change, new
 * entries (C_CreateObject here; C_GenerateKey* in keygen.c), and session
 * objects with their templates (change.c and pin.c make the other
 * changes).
 *
 * Every change of a token object is made as wks(1) makes it: the store
 * file is locked (wks_lock_acquire), loaded again through the lock with
 * the login's password, changed, and saved through the lock
 * (atomically: a temporary file renamed over the old one), so a change
 * made meanwhile by another program is never lost.  The saved store is
 * then the token's.  Session objects live in memory only.
 *
 * What a WKS store can hold decides what can be made (docs/PKCS11.md,
 * "Writing to a token"): a private key needs a certificate (a new key
 * gets a self-signed one, as keytool -genkeypair does, which a
 * certificate created later for the same key replaces); a public key is
 * stored only as part of its private key's entry; a token key's
 * attributes are those of its type (the store keeps no attributes).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "p11.h"

/* ---- the locked load-modify-save ------------------------------------------- */

/* The store file's lock, waited for at most about 10 s: a module call
 * must not hang on another program (wks(1) holds the lock while it asks
 * for a password). */
static CK_RV lock_file(wks_lock **lk, const char *path)
{
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 1000; i++) {
		int err = wks_lock_acquire(lk, path,
					   WKS_LOCK_EXCLUSIVE | WKS_LOCK_NOWAIT);

		if (err == WKS_OK)
			return CKR_OK;
		if (err != WKS_ERR_BUSY) {
			w11_log_wks("locking the store", err);
			return CKR_DEVICE_ERROR;
		}
		nanosleep(&ten_ms, NULL);
	}
	W11_LOG("%s: locked by another program for 10 s", path);
	return CKR_DEVICE_ERROR;
}

CK_RV w11_rv_of_set(int err)
{
	switch (err) {
	case WKS_OK:
		return CKR_OK;
	case WKS_ERR_NOMEM:
		return CKR_HOST_MEMORY;
	case WKS_ERR_LIMIT:
		return CKR_DEVICE_MEMORY;
	case WKS_ERR_NOTFOUND:
		return CKR_OBJECT_HANDLE_INVALID;
	case WKS_ERR_INTEGRITY:
		return CKR_FUNCTION_REJECTED;
	case WKS_ERR_EXISTS:
	case WKS_ERR_INVALID:
	case WKS_ERR_FORMAT:
	case WKS_ERR_WRONG_TYPE:
	case WKS_ERR_UNSUPPORTED:
		return CKR_ATTRIBUTE_VALUE_INVALID;
	default:
		return CKR_FUNCTION_FAILED;
	}
}

/* ---- the attribute record during an edit ---------------------------------- */

int w11_rec_value_ok(CK_ATTRIBUTE_TYPE type, CK_ULONG len)
{
	switch (type) {
	case CKA_ID:
		return len <= 256;
	case CKA_START_DATE:
	case CKA_END_DATE:
		return len == 0 || len == sizeof(CK_DATE);
	case CKA_ALLOWED_MECHANISMS:
		return len % sizeof(CK_MECHANISM_TYPE) == 0 &&
		       len <= 256 * sizeof(CK_MECHANISM_TYPE);
	/* (what the module says of a key it generated: no template's) */
	case CKA_LOCAL:
		return len == sizeof(CK_BBOOL);
	case CKA_KEY_GEN_MECHANISM:
		return len == sizeof(CK_MECHANISM_TYPE);
	default:
		return w11_rec_persistable(type) && len == sizeof(CK_BBOOL);
	}
}

int w11_rec_persistable(CK_ATTRIBUTE_TYPE t)
{
	switch (t) {
	case CKA_ID:
	case CKA_START_DATE:
	case CKA_END_DATE:
	case CKA_ALLOWED_MECHANISMS:
	case CKA_ALWAYS_AUTHENTICATE:
	case CKA_SIGN:
	case CKA_VERIFY:
	case CKA_ENCRYPT:
	case CKA_DECRYPT:
	case CKA_DERIVE:
	case CKA_WRAP:
	case CKA_UNWRAP:
	case CKA_SIGN_RECOVER:
	case CKA_VERIFY_RECOVER:
		return 1;
	default:
		return 0;
	}
}

CK_RV w11_rec_keep(w11_token *t, wks_store *st, const char *alias, int role,
		   size_t index, const CK_ATTRIBUTE *tmpl, CK_ULONG n)
{
	unsigned char d[32];
	w11_ritem *it = NULL;

	if (!t->rec_edit || !alias)
		return CKR_OK;
	for (CK_ULONG i = 0; i < n; i++) {
		const CK_ATTRIBUTE *a = &tmpl[i];

		if (!w11_rec_persistable(a->type))
			continue;
		if (!w11_rec_value_ok(a->type, a->ulValueLen))
			return CKR_ATTRIBUTE_VALUE_INVALID;
		if (!it) {
			if (wks_store_entry_digest(d, st, alias) != WKS_OK)
				return CKR_FUNCTION_FAILED;
			if (!(it = w11_rec_item(t->rec_edit, d, (uint8_t)role,
						(uint32_t)index)))
				return CKR_DEVICE_MEMORY;
		}
		if (w11_ritem_set(it, a->type, a->pValue,
				  (uint32_t)a->ulValueLen) != 0)
			return CKR_DEVICE_MEMORY;
	}
	return CKR_OK;
}

/* The record of the store `st` as it was loaded for an edit: the
 * digests of its entries, to follow them through the edit. */
typedef struct {
	unsigned char (*d)[32];
	char **alias;
	size_t n;
} digests;

static void digests_free(digests *ds)
{
	for (size_t i = 0; i < ds->n; i++)
		free(ds->alias[i]);
	free(ds->d);
	free(ds->alias);
	memset(ds, 0, sizeof(*ds));
}

static CK_RV digests_of(digests *ds, wks_store *st)
{
	char **al = NULL;
	size_t n = 0;

	memset(ds, 0, sizeof(*ds));
	if (wks_store_aliases(&al, &n, st) != WKS_OK)
		return CKR_HOST_MEMORY;
	ds->d = calloc(n ? n : 1, 32);
	ds->alias = calloc(n ? n : 1, sizeof(char *));
	if (!ds->d || !ds->alias) {
		wks_aliases_free(al);
		digests_free(ds);
		return CKR_HOST_MEMORY;
	}
	for (size_t i = 0; i < n; i++) {
		if (wks_store_entry_digest(ds->d[ds->n], st, al[i]) != WKS_OK ||
		    !(ds->alias[ds->n] = strdup(al[i])))
			continue;
		ds->n++;
	}
	wks_aliases_free(al);
	return CKR_OK;
}

static int digests_has(const digests *ds, const unsigned char d[32])
{
	for (size_t i = 0; i < ds->n; i++)
		if (memcmp(ds->d[i], d, 32) == 0)
			return 1;
	return 0;
}

/* After the edit's change: an entry the module rewrote (same alias, new
 * bytes: a new chain, a new password) keeps its items; a deleted one's
 * go, and so do those of entries that are not in the store at all
 * (deleted or replaced by another program since the record was
 * written). */
static void rec_follow(w11_rec *rec, const digests *before, wks_store *st)
{
	digests after;

	if (digests_of(&after, st) != CKR_OK)
		return;
	for (size_t i = 0; i < before->n; i++) {
		unsigned char nd[32];

		if (digests_has(&after, before->d[i]))
			continue;
		if (wks_store_contains(st, before->alias[i]) &&
		    wks_store_entry_digest(nd, st, before->alias[i]) == WKS_OK)
			w11_rec_rebind(rec, before->d[i], nd);
		else
			w11_rec_drop_entry(rec, before->d[i]);
	}
	for (uint32_t i = 0; i < rec->n;) {
		/* (a data object's item is bound to no entry) */
		if (rec->items[i].kind == W11_REC_KIND_OBJ &&
		    !digests_has(&after, rec->items[i].entry))
			w11_rec_drop_entry(rec, rec->items[i].entry);
		else
			i++;
	}
	digests_free(&after);
}

/* With the token's edit lock held. */
CK_RV w11_token_edit_ex(w11_token *t, const char *load_pw, size_t load_len,
		     const char *save_pw, size_t save_len, w11_edit_fn fn,
		     void *ctx)
{
	wks_lock *lk = NULL;
	wks_store *st = NULL;
	w11_fileid fid;
	w11_rec *rec = NULL;
	digests before = { 0 };
	CK_RV rv;
	int err, same_pw, verified = 0;

	/* t->resealed: filled by fn, read by the install, emptied here */
	if ((rv = w11_token_writable(t)) != CKR_OK ||
	    (rv = lock_file(&lk, t->conf->store)) != CKR_OK ||
	    (rv = w11_token_new_store(t, &st)) != CKR_OK)
		goto done;
	if ((err = wks_store_load_locked(st, lk, load_pw, load_len)) !=
	    WKS_OK) {
		w11_log_wks("loading the store to change it", err);
		rv = err == WKS_ERR_INTEGRITY ? CKR_PIN_INCORRECT
					      : CKR_DEVICE_ERROR;
		goto done;
	}
	/* the attribute record as it is now (under the lock, its MAC
	 * checked with the store's password), followed through the edit */
	if (!(rec = calloc(1, sizeof(*rec))) ||
	    (rv = digests_of(&before, st)) != CKR_OK) {
		rv = CKR_HOST_MEMORY;
		goto done;
	}
	(void)w11_recfile_read(t, load_pw, load_len, rec, &verified);
	t->rec_edit = rec;
	rv = fn(st, save_pw, save_len, ctx);
	t->rec_edit = NULL;
	if (rv != CKR_OK)
		goto done;
	rec_follow(rec, &before, st);
	/* an edit of the record alone (a data object, an attribute) leaves
	 * the store's bytes as they are */
	if (!t->edit_rec_only &&
	    (err = wks_store_save_locked(st, lk, save_pw, save_len)) !=
		    WKS_OK) {
		w11_log_wks("saving the store", err);
		rv = err == WKS_ERR_LIMIT ? CKR_DEVICE_MEMORY : CKR_DEVICE_ERROR;
		goto done;
	}
	/* a new password: a new salt for the record's MAC key */
	if (!(load_pw && save_pw && load_len == save_len &&
	      CRYPTO_memcmp(load_pw, save_pw, save_len) == 0))
		rec->iterations = 0;
	if (w11_recfile_write(t, rec, save_pw, save_len) != CKR_OK) {
		if (t->edit_rec_only) {
			rv = CKR_DEVICE_ERROR;
			goto done;
		}
		W11_LOG("token \"%s\": the store was saved, its attribute "
			"record was not: the objects changed show derived "
			"attributes", t->conf->label);
	}
	/* still locked: nobody changed it since */
	w11_fileid_of(&fid, t->conf->store);
	wks_lock_release(lk);
	lk = NULL;
	t->rec_next = rec;
	t->rec_next_verified = 1;
	rec = NULL;
	/* An edit under the same password keeps a shared login going (the
	 * unchanged keys carried over, no PBKDF2 for them); a new password
	 * is published by C_SetPIN once the token holds it. */
	same_pw = load_pw && save_pw && load_len == save_len &&
		  CRYPTO_memcmp(load_pw, save_pw, save_len) == 0;
	if (same_pw)
		w11_share_carry(t, st);
	rv = w11_token_install(t, st, &fid);
	st = NULL;
	if (rv == CKR_OK && same_pw)
		w11_share_publish(t);
done:
	if (rec) {
		w11_rec_free(rec);
		free(rec);
	}
	digests_free(&before);
	wks_lock_release(lk);
	wks_store_free(st);
	w11_token_resealed_clear(t);
	return rv;
}

/* w11_token_edit() with the edit lock held. */
static CK_RV edit_locked(w11_token *t, w11_edit_fn fn, void *ctx)
{
	char pin[1024];
	size_t n;
	CK_RV rv;

	pthread_mutex_lock(&t->lock);
	if (t->login != CKU_USER || t->pin.len > sizeof(pin)) {
		pthread_mutex_unlock(&t->lock);
		return CKR_USER_NOT_LOGGED_IN;
	}
	n = t->pin.len;
	memcpy(pin, t->pin.p, n);
	pthread_mutex_unlock(&t->lock);
	rv = w11_token_edit_ex(t, pin, n, pin, n, fn, ctx);
	OPENSSL_cleanse(pin, sizeof(pin));
	return rv;
}

CK_RV w11_token_edit(w11_token *t, w11_edit_fn fn, void *ctx)
{
	CK_RV rv;

	pthread_mutex_lock(&t->edit);
	rv = edit_locked(t, fn, ctx);
	pthread_mutex_unlock(&t->edit);
	return rv;
}

CK_RV w11_token_edit_rec(w11_token *t, w11_edit_fn fn, void *ctx)
{
	CK_RV rv;

	pthread_mutex_lock(&t->edit);
	t->edit_rec_only = 1;
	rv = edit_locked(t, fn, ctx);
	t->edit_rec_only = 0;
	pthread_mutex_unlock(&t->edit);
	return rv;
}

CK_RV w11_new_alias(char **out, wks_store *st, const CK_ATTRIBUTE *label,
		    const unsigned char *id, size_t id_len, const char *what)
{
	char *a;

	*out = NULL;
	if (label && label->ulValueLen) {
		if (label->ulValueLen > 4096 ||
		    memchr(label->pValue, 0, label->ulValueLen))
			return CKR_ATTRIBUTE_VALUE_INVALID;
		if (!(a = strndup(label->pValue, label->ulValueLen)))
			return CKR_HOST_MEMORY;
		if (wks_store_contains(st, a)) {
			/* aliases are unique in a store; an entry is never
			 * replaced by a new object */
			W11_LOG("an entry \"%s\" exists already", a);
			free(a);
			return CKR_ATTRIBUTE_VALUE_INVALID;
		}
		*out = a;
		return CKR_OK;
	}
	if (id_len && id_len <= 64) {
		if (!(a = malloc(2 * id_len + 1)))
			return CKR_HOST_MEMORY;
		for (size_t i = 0; i < id_len; i++)
			snprintf(a + 2 * i, 3, "%02x", id[i]);
		if (!wks_store_contains(st, a)) {
			*out = a;
			return CKR_OK;
		}
		free(a);
	}
	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[4];
		char buf[64];

		if (RAND_bytes_ex(w11_libctx, r, sizeof(r), 0) != 1)
			return CKR_FUNCTION_FAILED;
		snprintf(buf, sizeof(buf), "%s-%02x%02x%02x%02x", what, r[0],
			 r[1], r[2], r[3]);
		if (!wks_store_contains(st, buf))
			return (*out = strdup(buf)) ? CKR_OK : CKR_HOST_MEMORY;
	}
	return CKR_FUNCTION_FAILED;
}

/* ---- templates applied to session objects ---------------------------------- */

static const CK_ATTRIBUTE_TYPE byte_attrs[] = {
	CKA_LABEL, CKA_ID, CKA_SUBJECT, CKA_START_DATE, CKA_END_DATE,
};
static const CK_ATTRIBUTE_TYPE bool_attrs[] = {
	CKA_SIGN, CKA_VERIFY, CKA_ENCRYPT, CKA_DECRYPT, CKA_DERIVE, CKA_WRAP,
	CKA_UNWRAP, CKA_SIGN_RECOVER, CKA_VERIFY_RECOVER, CKA_SENSITIVE,
	CKA_EXTRACTABLE, CKA_PRIVATE, CKA_MODIFIABLE, CKA_COPYABLE,
	CKA_DESTROYABLE, CKA_TRUSTED, CKA_WRAP_WITH_TRUSTED,
};

/* A data object's own attributes, changeable as its label is. */
static const CK_ATTRIBUTE_TYPE data_attrs[] = {
	CKA_APPLICATION, CKA_OBJECT_ID, CKA_VALUE,
};

static int in_list(CK_ATTRIBUTE_TYPE t, const CK_ATTRIBUTE_TYPE *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == t)
			return 1;
	return 0;
}

/* Usage flags: a copy may drop a use, never add one. */
static const CK_ATTRIBUTE_TYPE usage_attrs[] = {
	CKA_SIGN, CKA_VERIFY, CKA_ENCRYPT, CKA_DECRYPT, CKA_DERIVE, CKA_WRAP,
	CKA_UNWRAP, CKA_SIGN_RECOVER, CKA_VERIFY_RECOVER,
};

/* May a boolean go from `was` to `v` outside of creation?  C_SetAttributeValue
 * (W11_APPLY_SET): CKA_SENSITIVE and CKA_WRAP_WITH_TRUSTED only to true,
 * CKA_EXTRACTABLE and CKA_COPYABLE only to false, CKA_TRUSTED never to true
 * (the security officer's), CKA_PRIVATE, CKA_MODIFIABLE and CKA_DESTROYABLE
 * never.  C_CopyObject (W11_APPLY_COPY): the same, and a copy may only
 * tighten what its source allows: CKA_PRIVATE only to true, CKA_MODIFIABLE,
 * CKA_DESTROYABLE and the usage flags only to false. */
static int bool_change_ok(CK_ATTRIBUTE_TYPE ty, int was, int v, int mode)
{
	if (v == was)
		return 1;
	switch (ty) {
	case CKA_SENSITIVE:
	case CKA_WRAP_WITH_TRUSTED:
		return v;
	case CKA_EXTRACTABLE:
	case CKA_COPYABLE:
	case CKA_TRUSTED:
		return !v;
	case CKA_PRIVATE:
		return mode == W11_APPLY_COPY && v;
	case CKA_MODIFIABLE:
	case CKA_DESTROYABLE:
		return mode == W11_APPLY_COPY && !v;
	default:
		if (mode == W11_APPLY_COPY &&
		    in_list(ty, usage_attrs,
			    sizeof(usage_attrs) / sizeof(usage_attrs[0])))
			return !v;
		return 1;
	}
}

/*
 * Apply a template to a session object: at creation (W11_APPLY_CREATE)
 * every attribute of the lists above that the object has; later
 * (W11_APPLY_SET, W11_APPLY_COPY) only the changes bool_change_ok()
 * allows.  Other attributes of the template are the creation's inputs
 * or must equal the object's.
 */
CK_RV w11_apply_template(w11_obj *o, const CK_ATTRIBUTE *t, CK_ULONG n,
			  int mode)
{
	int creating = mode == W11_APPLY_CREATE;
	CK_RV rv;

	for (CK_ULONG i = 0; i < n; i++) {
		CK_ATTRIBUTE_TYPE ty = t[i].type;
		const w11_attr *cur = w11_attrs_get(&o->attrs, ty);
		int isb = in_list(ty, bool_attrs,
				  sizeof(bool_attrs) / sizeof(bool_attrs[0]));

		if (in_list(ty, byte_attrs,
			    sizeof(byte_attrs) / sizeof(byte_attrs[0])) ||
		    (o->cls == CKO_DATA &&
		     in_list(ty, data_attrs,
			     sizeof(data_attrs) / sizeof(data_attrs[0])))) {
			if (!cur) {
				if (creating)
					continue;
				return CKR_ATTRIBUTE_TYPE_INVALID;
			}
			if ((rv = w11_attrs_set(&o->attrs, ty, t[i].pValue,
						t[i].ulValueLen)) != CKR_OK)
				return rv;
			continue;
		}
		if (isb) {
			int v, was;

			if (!cur) {
				/* an attribute of another kind of object:
				 * ignored at creation */
				if (creating)
					continue;
				return CKR_ATTRIBUTE_TYPE_INVALID;
			}
			if (t[i].ulValueLen != sizeof(CK_BBOOL) || !t[i].pValue)
				return CKR_ATTRIBUTE_VALUE_INVALID;
			v = *(CK_BBOOL *)t[i].pValue ? 1 : 0;
			was = cur->len == 1 && cur->val[0];
			if (!creating && !bool_change_ok(ty, was, v, mode))
				return CKR_ATTRIBUTE_READ_ONLY;
			/* the security officer's, never a template's: so no
			 * key may wrap a CKA_WRAP_WITH_TRUSTED one (wrap.c) */
			if (creating && ty == CKA_TRUSTED && v && !was &&
			    o->cls != CKO_CERTIFICATE)
				return CKR_ATTRIBUTE_READ_ONLY;
			if ((rv = w11_attrs_bool(&o->attrs, ty, v)) != CKR_OK)
				return rv;
			if (ty == CKA_PRIVATE)
				o->flags = v ? (o->flags | W11_OF_PRIVATE)
					     : (o->flags & ~W11_OF_PRIVATE);
			continue;
		}
		if (!creating) {
			const unsigned char *val;
			unsigned char *tmp = NULL;
			CK_ULONG len = 0;
			int same;

			rv = w11_obj_attr(o, ty, &val, &len, &tmp);
			same = rv == CKR_OK && len == t[i].ulValueLen &&
			       (!len || memcmp(val, t[i].pValue, len) == 0);
			OPENSSL_clear_free(tmp, len);
			if (rv == CKR_ATTRIBUTE_TYPE_INVALID)
				return rv;
			if (!same)
				return CKR_ATTRIBUTE_READ_ONLY;
		}
	}
	return CKR_OK;
}

static CK_RV add_session_obj(w11_session *s, w11_obj *o, CK_OBJECT_HANDLE *h)
{
	w11_token *t = s->tok;
	CK_RV rv;

	o->owner = s->h;
	o->flags &= ~W11_OF_TOKEN;
	pthread_mutex_lock(&t->lock);
	rv = w11_token_add_obj(t, o);
	pthread_mutex_unlock(&t->lock);
	if (rv != CKR_OK) {
		w11_obj_free(o);
		return rv;
	}
	if (h)
		*h = o->handle;
	return CKR_OK;
}

/* Attributes a generated key gets (CKA_LOCAL, its mechanism, and whether
 * it was always sensitive / never extractable). */
static CK_RV mark_generated(w11_obj *o, CK_MECHANISM_TYPE gen_mech)
{
	int sens = w11_attrs_is_true(&o->attrs, CKA_SENSITIVE);
	int extr = w11_attrs_is_true(&o->attrs, CKA_EXTRACTABLE);
	CK_RV rv;

	if (gen_mech == CK_UNAVAILABLE_INFORMATION)
		return CKR_OK;
	if ((rv = w11_attrs_bool(&o->attrs, CKA_LOCAL, 1)) ||
	    (rv = w11_attrs_ulong(&o->attrs, CKA_KEY_GEN_MECHANISM, gen_mech)))
		return rv;
	if (o->cls == CKO_PUBLIC_KEY)
		return CKR_OK;
	if ((rv = w11_attrs_bool(&o->attrs, CKA_ALWAYS_SENSITIVE, sens)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_NEVER_EXTRACTABLE, !extr)))
		return rv;
	return CKR_OK;
}

CK_RV w11_session_keypair(w11_session *s, EVP_PKEY *pk,
			  const CK_ATTRIBUTE *pub_t, CK_ULONG pub_n,
			  const CK_ATTRIBUTE *priv_t, CK_ULONG priv_n,
			  CK_MECHANISM_TYPE gen_mech, CK_OBJECT_HANDLE *pub_h,
			  CK_OBJECT_HANDLE *priv_h)
{
	w11_keymat *km = w11_keymat_new();
	w11_obj *po = NULL, *qo = NULL;
	CK_RV rv;

	if (!km)
		return CKR_HOST_MEMORY;
	km->ktype = w11_pkey_type(pk);
	km->always_auth = 0;
	if ((rv = w11_pkey_public(&km->pub, pk)) != CKR_OK)
		goto fail;
	if (priv_h) {
		EVP_PKEY_up_ref(pk);
		km->priv = pk;
		if ((rv = w11_obj_privkey(&po, km, NULL, NULL, NULL, 0, 0)) ||
		    (rv = w11_apply_template(po, priv_t, priv_n,
						 W11_APPLY_CREATE)) ||
		    (rv = mark_generated(po, gen_mech)))
			goto fail;
	}
	if (pub_h) {
		if ((rv = w11_obj_pubkey(&qo, km, NULL, NULL, NULL, 0, 0)) ||
		    (rv = w11_apply_template(qo, pub_t, pub_n,
						 W11_APPLY_CREATE)) ||
		    (rv = mark_generated(qo, gen_mech)))
			goto fail;
	}
	if (po) {
		rv = add_session_obj(s, po, priv_h);
		po = NULL;
		if (rv != CKR_OK)
			goto fail;
	}
	if (qo) {
		rv = add_session_obj(s, qo, pub_h);
		qo = NULL;
		if (rv != CKR_OK && priv_h) {
			pthread_mutex_lock(&s->tok->lock);
			w11_token_remove_obj(s->tok, *priv_h);
			pthread_mutex_unlock(&s->tok->lock);
		}
	}
fail:
	w11_obj_free(po);
	w11_obj_free(qo);
	w11_keymat_unref(km);
	return rv;
}

CK_RV w11_session_secret(w11_session *s, CK_KEY_TYPE kt,
			 const unsigned char *v, size_t len,
			 const CK_ATTRIBUTE *t, CK_ULONG n,
			 CK_MECHANISM_TYPE gen_mech, CK_OBJECT_HANDLE *h)
{
	w11_keymat *km = w11_keymat_new();
	w11_obj *o = NULL;
	CK_RV rv;

	if (!km)
		return CKR_HOST_MEMORY;
	km->is_secret = 1;
	km->ktype = kt;
	km->always_auth = 0;
	if (!(km->sec = OPENSSL_memdup(v, len))) {
		rv = CKR_HOST_MEMORY;
		goto done;
	}
	km->sec_len = len;
	if ((rv = w11_obj_secret(&o, km, NULL, 0)) ||
	    (rv = w11_apply_template(o, t, n, W11_APPLY_CREATE)) ||
	    (rv = mark_generated(o, gen_mech)))
		goto done;
	rv = add_session_obj(s, o, h);
	o = NULL;
done:
	w11_obj_free(o);
	w11_keymat_unref(km);
	return rv;
}

CK_RV w11_may_create(w11_session *s, int token, int private_obj)
{
	w11_token *t = s->tok;
	CK_USER_TYPE u;

	pthread_mutex_lock(&t->lock);
	u = t->login;
	pthread_mutex_unlock(&t->lock);
	if (token) {
		if (w11_token_writable(t) != CKR_OK)
			return CKR_TOKEN_WRITE_PROTECTED;
		if (!(s->flags & CKF_RW_SESSION))
			return CKR_SESSION_READ_ONLY;
		/* saving needs the store's password */
		if (u != CKU_USER)
			return CKR_USER_NOT_LOGGED_IN;
	}
	if (private_obj && u != CKU_USER)
		return CKR_USER_NOT_LOGGED_IN;
	return CKR_OK;
}

/* The handle of the token object of an entry, after a change. */
static CK_OBJECT_HANDLE handle_of(w11_token *t, const char *alias, int role,
				  size_t index)
{
	CK_OBJECT_HANDLE h = CK_INVALID_HANDLE;

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->nobjs; i++) {
		w11_obj *o = t->objs[i];

		if ((o->flags & W11_OF_TOKEN) && o->role == role && o->alias &&
		    strcmp(o->alias, alias) == 0 && o->chain_index == index) {
			h = o->handle;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return h;
}

/* ---- new token entries -------------------------------------------------- */

/* A key the module generated: CKA_LOCAL and CKA_KEY_GEN_MECHANISM in the
 * record (never from a template).  During an edit. */
static CK_RV rec_keep_generated(w11_token *t, wks_store *st,
				const char *alias, int role,
				CK_MECHANISM_TYPE mech)
{
	unsigned char d[32];
	CK_BBOOL yes = CK_TRUE;
	w11_ritem *it;

	if (mech == CK_UNAVAILABLE_INFORMATION || !t || !t->rec_edit)
		return CKR_OK;
	if (wks_store_entry_digest(d, st, alias) != WKS_OK)
		return CKR_FUNCTION_FAILED;
	if (!(it = w11_rec_item(t->rec_edit, d, (uint8_t)role, 0)) ||
	    w11_ritem_set(it, CKA_LOCAL, &yes, sizeof(yes)) != 0 ||
	    w11_ritem_set(it, CKA_KEY_GEN_MECHANISM, &mech, sizeof(mech)) != 0)
		return CKR_DEVICE_MEMORY;
	return CKR_OK;
}

/* Does the record give the key of entry `alias` the CKA_ID id[0..len)
 * (any CKA_ID, for id NULL)?  During an edit. */
static int rec_key_id_is(w11_token *t, wks_store *st, const char *alias,
			 const unsigned char *id, size_t len)
{
	unsigned char d[32];
	const w11_rattr *a;

	if (!t || !t->rec_edit ||
	    wks_store_entry_digest(d, st, alias) != WKS_OK ||
	    !(a = w11_ritem_get(w11_rec_find(t->rec_edit, d, W11_R_PRIV, 0),
				CKA_ID)))
		return 0;
	return !id || (a->len == len && memcmp(a->val, id, len) == 0);
}

typedef struct {
	EVP_PKEY *pk;
	CK_KEY_TYPE kt;
	const unsigned char *val;
	size_t val_len;
	const CK_ATTRIBUTE *label;
	const unsigned char *id;
	size_t id_len;
	X509 *cert;
	w11_token *tok; /* the token (add_cert_fn: its key's entry written
			 * again; the attribute record) */
	char *alias;  /* out */
	int role;     /* out */
	size_t index; /* out */
	/* what the attribute record keeps of the templates (tok: above) */
	const CK_ATTRIBUTE *t1, *t2; /* private / secret key, public key */
	CK_ULONG n1, n2;
	int added;    /* out: the certificate was written (not found) */
	CK_MECHANISM_TYPE gen_mech; /* generated by, else unavailable */
} add_ctx;

static CK_RV add_secret_fn(wks_store *st, const char *pin, size_t n,
			   void *arg)
{
	add_ctx *c = arg;
	/* Java's names: AES, DESede, or an HMAC key for a generic secret */
	const char *alg = w11_jca_of_ktype(c->kt);
	CK_RV rv;

	if (!alg)
		return CKR_TEMPLATE_INCONSISTENT; /* no such WKS entry */
	if ((rv = w11_new_alias(&c->alias, st, c->label, NULL, 0, "secret")) !=
	    CKR_OK)
		return rv;
	if ((rv = w11_rv_of_set(wks_store_set_secret_key(
		     st, c->alias, alg, c->val, c->val_len, pin, n))) != CKR_OK)
		return rv;
	if ((rv = w11_rec_keep(c->tok, st, c->alias, W11_R_SECRET, 0, c->t1,
			       c->n1)) != CKR_OK)
		return rv;
	return rec_keep_generated(c->tok, st, c->alias, W11_R_SECRET,
				  c->gen_mech);
}

CK_RV w11_token_secret(w11_session *s, CK_KEY_TYPE kt, const unsigned char *v,
		       size_t len, const CK_ATTRIBUTE *t, CK_ULONG n,
		       CK_MECHANISM_TYPE gen_mech, CK_OBJECT_HANDLE *h)
{
	add_ctx c = { 0 };
	CK_RV rv;

	if (!w11_jca_of_ktype(kt))
		return CKR_TEMPLATE_INCONSISTENT; /* before any work */
	c.gen_mech = gen_mech;
	c.kt = kt;
	c.val = v;
	c.val_len = len;
	c.label = w11_tmpl(t, n, CKA_LABEL);
	c.tok = s->tok;
	c.t1 = t;
	c.n1 = n;
	rv = w11_token_edit(s->tok, add_secret_fn, &c);
	if (rv == CKR_OK &&
	    (*h = handle_of(s->tok, c.alias, W11_R_SECRET, 0)) ==
		    CK_INVALID_HANDLE)
		rv = CKR_FUNCTION_FAILED;
	free(c.alias);
	return rv;
}

static CK_RV add_keypair_fn(wks_store *st, const char *pin, size_t n,
			    void *arg)
{
	add_ctx *c = arg;
	unsigned char kid[20];
	CK_RV rv;

	if (!c->id_len) {
		if ((rv = w11_key_id(kid, c->pk)) != CKR_OK)
			return rv;
		c->id = kid;
		c->id_len = sizeof(kid);
	}
	if ((rv = w11_new_alias(&c->alias, st, c->label, c->id, c->id_len,
				"key")) != CKR_OK ||
	    (rv = w11_self_signed(&c->cert, c->pk, c->alias, c->id, c->id_len,
				  NULL)) != CKR_OK)
		goto done;
	if ((rv = w11_rv_of_set(wks_store_set_pkey(st, c->alias, c->pk,
						   &c->cert, 1, pin, n))) ==
		    CKR_OK &&
	    (rv = w11_rec_keep(c->tok, st, c->alias, W11_R_PRIV, 0, c->t1,
			       c->n1)) == CKR_OK)
		rv = w11_rec_keep(c->tok, st, c->alias, W11_R_PUB, 0, c->t2,
				  c->n2);
	if (rv == CKR_OK &&
	    (rv = rec_keep_generated(c->tok, st, c->alias, W11_R_PRIV,
				     c->gen_mech)) == CKR_OK)
		rv = rec_keep_generated(c->tok, st, c->alias, W11_R_PUB,
					c->gen_mech);
done:
	if (c->id == kid) {
		c->id = NULL;
		c->id_len = 0;
	}
	return rv;
}

CK_RV w11_token_keypair(w11_session *s, EVP_PKEY *pk, const CK_ATTRIBUTE *pub_t,
			CK_ULONG pub_n, const CK_ATTRIBUTE *priv_t,
			CK_ULONG priv_n, CK_MECHANISM_TYPE gen_mech,
			CK_OBJECT_HANDLE *pub_h, CK_OBJECT_HANDLE *priv_h)
{
	const CK_ATTRIBUTE *id1 = w11_tmpl(priv_t, priv_n, CKA_ID);
	const CK_ATTRIBUTE *id2 = w11_tmpl(pub_t, pub_n, CKA_ID);
	const CK_ATTRIBUTE *id = id1 ? id1 : id2;
	add_ctx c = { 0 };
	CK_RV rv;

	if (id1 && id2 &&
	    (id1->ulValueLen != id2->ulValueLen ||
	     (id1->ulValueLen &&
	      memcmp(id1->pValue, id2->pValue, id1->ulValueLen) != 0)))
		return CKR_TEMPLATE_INCONSISTENT;
	if (id && (id->ulValueLen > 64 || (id->ulValueLen && !id->pValue)))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	c.gen_mech = gen_mech;
	c.pk = pk;
	c.label = w11_tmpl(priv_t, priv_n, CKA_LABEL);
	if (!c.label || !c.label->ulValueLen)
		c.label = w11_tmpl(pub_t, pub_n, CKA_LABEL);
	if (id) {
		c.id = id->pValue;
		c.id_len = id->ulValueLen;
	}
	c.tok = s->tok;
	c.t1 = priv_t;
	c.n1 = priv_n;
	c.t2 = pub_t;
	c.n2 = pub_n;
	rv = w11_token_edit(s->tok, add_keypair_fn, &c);
	if (rv == CKR_OK) {
		*priv_h = handle_of(s->tok, c.alias, W11_R_PRIV, 0);
		if (pub_h)
			*pub_h = handle_of(s->tok, c.alias, W11_R_PUB, 0);
		if (*priv_h == CK_INVALID_HANDLE ||
		    (pub_h && *pub_h == CK_INVALID_HANDLE))
			rv = CKR_FUNCTION_FAILED;
	}
	X509_free(c.cert);
	free(c.alias);
	return rv;
}

/* A certificate: the chain of the key it belongs to, or a trusted
 * certificate entry.  Two passes over the entries: first only the key
 * whose CKA_ID the template gives (its chain takes the certificate if
 * its last one was issued by it, or has it already), then any entry
 * (already there, a new leaf of a key, a chain that grows), so that a
 * company intermediate that other keys hold already is appended to the
 * key it was written for. */
static CK_RV add_cert_fn(wks_store *st, const char *pin, size_t n, void *arg)
{
	add_ctx *c = arg;
	char **al = NULL;
	size_t na = 0;
	CK_RV rv = CKR_OK;
	int err;

	if ((err = wks_store_aliases(&al, &na, st)) != WKS_OK)
		return w11_rv_of_set(err);
	for (size_t k = 0; k < 2 * na && !c->alias; k++) {
		size_t i = k % na;
		int by_id = k < na; /* the first pass */
		X509 *chain[64] = { 0 }, *x = c->cert;
		size_t cc = 0, keep = 0;
		EVP_PKEY *key = NULL;
		unsigned char eid[256];
		size_t eid_len = 0;
		int id_match;

		if (by_id && !c->id_len)
			continue;
		if (wks_store_entry_type(st, al[i]) == WKS_ENTRY_CERTIFICATE) {
			if (by_id)
				continue;
			if (wks_store_get_cert(&chain[0], st, al[i], 0) ==
				    WKS_OK &&
			    X509_cmp(chain[0], x) == 0) {
				c->role = W11_R_TRUSTED;
				c->alias = strdup(al[i]);
			}
			X509_free(chain[0]);
			continue;
		}
		if (wks_store_entry_type(st, al[i]) != WKS_ENTRY_PRIVATE_KEY ||
		    wks_store_cert_count(&cc, st, al[i]) != WKS_OK || !cc ||
		    cc > 63)
			continue;
		for (size_t j = 0; j < cc; j++)
			if (wks_store_get_cert(&chain[j], st, al[i], j) !=
			    WKS_OK)
				goto next;
		id_match = c->id_len &&
			   ((w11_cert_id(eid, &eid_len, sizeof(eid), chain[0]) ==
				     CKR_OK &&
			     eid_len == c->id_len &&
			     memcmp(eid, c->id, eid_len) == 0) ||
			    rec_key_id_is(c->tok, st, al[i], c->id, c->id_len));
		if (by_id && !id_match)
			goto next;
		for (size_t j = 0; j < cc; j++)
			if (X509_cmp(chain[j], x) == 0) {
				/* already there */
				c->role = j ? W11_R_CHAIN : W11_R_LEAF;
				c->index = j;
				c->alias = strdup(al[i]);
				goto next;
			}
		if (by_id && X509_check_issued(x, chain[cc - 1]) != X509_V_OK) {
			goto next;
		} else if (EVP_PKEY_eq(X509_get0_pubkey(chain[0]),
				       X509_get0_pubkey(x)) == 1) {
			/* the key's certificate: it replaces the leaf (a
			 * self-signed one from C_GenerateKeyPair); the CA
			 * certificates stay if they issued it.  The key's
			 * CKA_ID stays what it was (kept in the record). */
			if (rec_key_id_is(c->tok, st, al[i], NULL, 0) ||
			    w11_cert_id(eid, &eid_len, sizeof(eid),
					chain[0]) != CKR_OK)
				eid_len = 0;
			keep = cc > 1 && X509_check_issued(chain[1], x) ==
						 X509_V_OK
				       ? cc - 1
				       : 0;
			X509_free(chain[0]);
			chain[0] = x;
			X509_up_ref(x);
			cc = 1 + keep;
			c->role = W11_R_LEAF;
		} else if (id_match &&
			   X509_check_issued(x, chain[cc - 1]) == X509_V_OK) {
			/* the issuer of the chain's last certificate, with
			 * the key's CKA_ID: the chain grows */
			chain[cc++] = x;
			X509_up_ref(x);
			c->role = W11_R_CHAIN;
			c->index = cc - 1;
		} else {
			goto next;
		}
		if ((err = wks_store_get_pkey(&key, st, al[i], pin, n)) !=
		    WKS_OK) {
			W11_LOG("entry \"%s\": its key has its own password: "
				"its chain cannot be changed here", al[i]);
			rv = CKR_FUNCTION_REJECTED;
		} else {
			rv = w11_rv_of_set(wks_store_set_pkey(st, al[i], key,
							  chain, cc, pin, n));
			/* the same key: its objects keep their handles */
			if (rv == CKR_OK && c->tok)
				rv = w11_token_resealed(c->tok, al[i], NULL);
		}
		EVP_PKEY_free(key);
		if (rv == CKR_OK && !(c->alias = strdup(al[i])))
			rv = CKR_HOST_MEMORY;
		c->added = 1;
		if (rv == CKR_OK && c->role == W11_R_LEAF && eid_len) {
			CK_ATTRIBUTE ka = { CKA_ID, eid, eid_len };

			if ((rv = w11_rec_keep(c->tok, st, al[i], W11_R_PRIV, 0,
					       &ka, 1)) == CKR_OK)
				rv = w11_rec_keep(c->tok, st, al[i], W11_R_PUB,
						  0, &ka, 1);
		}
next:
		for (size_t j = 0; j < 64; j++)
			X509_free(chain[j]);
		if (rv != CKR_OK)
			break;
	}
	wks_aliases_free(al);
	if (rv != CKR_OK || c->alias)
		return rv;
	/* a trusted certificate entry */
	c->role = W11_R_TRUSTED;
	c->added = 1;
	if ((rv = w11_new_alias(&c->alias, st, c->label, c->id, c->id_len,
				"cert")) != CKR_OK)
		return rv;
	return w11_rv_of_set(wks_store_set_cert(st, c->alias, c->cert));
}

/* C_CreateObject of a certificate: the entry's change, then the CKA_ID
 * the template gave the certificate object, kept as given. */
static CK_RV add_cert_keep_fn(wks_store *st, const char *pin, size_t n,
			      void *arg)
{
	add_ctx *c = arg;
	CK_ATTRIBUTE ia = { CKA_ID, (void *)c->id, c->id_len };
	CK_RV rv = add_cert_fn(st, pin, n, arg);

	if (rv != CKR_OK || !c->added || !c->id_len)
		return rv;
	return w11_rec_keep(c->tok, st, c->alias, c->role, c->index, &ia, 1);
}

/* ---- C_CreateObject -------------------------------------------------------- */

static CK_RV session_cert(w11_session *s, X509 *x, const CK_ATTRIBUTE *t,
			  CK_ULONG n, CK_OBJECT_HANDLE *h)
{
	w11_obj *o = NULL;
	CK_RV rv;
	char uid[32];

	if ((rv = w11_obj_cert(&o, x, W11_R_SESSION, NULL, 0, NULL, 0)) !=
	    CKR_OK)
		return rv;
	o->flags = 0;
	snprintf(uid, sizeof(uid), "s%lu", (unsigned long)o->handle);
	if ((rv = w11_attrs_bool(&o->attrs, CKA_TOKEN, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_TRUSTED, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_DESTROYABLE, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_MODIFIABLE, 1)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_UNIQUE_ID, uid, strlen(uid))) ||
	    (rv = w11_apply_template(o, t, n, W11_APPLY_CREATE))) {
		w11_obj_free(o);
		return rv;
	}
	return add_session_obj(s, o, h);
}

static CK_RV create_cert(w11_session *s, int token, const CK_ATTRIBUTE *t,
			 CK_ULONG n, CK_OBJECT_HANDLE *h)
{
	const CK_ATTRIBUTE *v = w11_tmpl(t, n, CKA_VALUE);
	const CK_ATTRIBUTE *id = w11_tmpl(t, n, CKA_ID);
	CK_ULONG ct = CKC_X_509;
	const unsigned char *p;
	add_ctx c = { 0 };
	X509 *x = NULL;
	CK_RV rv;

	if ((rv = w11_tmpl_ulong(t, n, CKA_CERTIFICATE_TYPE, &ct)) != CKR_OK)
		return rv;
	if (ct != CKC_X_509)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if (!v || !v->pValue || !v->ulValueLen)
		return CKR_TEMPLATE_INCOMPLETE;
	p = v->pValue;
	if (v->ulValueLen > 1 << 24 ||
	    !(x = X509_new_ex(w11_libctx, NULL)) ||
	    !d2i_X509(&x, &p, (long)v->ulValueLen) ||
	    p != (const unsigned char *)v->pValue + v->ulValueLen) {
		X509_free(x);
		return CKR_ATTRIBUTE_VALUE_INVALID;
	}
	if (!token) {
		rv = session_cert(s, x, t, n, h);
		X509_free(x);
		return rv;
	}
	c.cert = x;
	c.tok = s->tok;
	c.label = w11_tmpl(t, n, CKA_LABEL);
	if (id && id->ulValueLen <= 256) {
		c.id = id->pValue;
		c.id_len = id->ulValueLen;
	}
	rv = w11_token_edit(s->tok, add_cert_keep_fn, &c);
	if (rv == CKR_OK &&
	    (*h = handle_of(s->tok, c.alias, c.role, c.index)) ==
		    CK_INVALID_HANDLE) {
		if (s->tok->conf->leaf_certs && c.role != W11_R_LEAF)
			W11_LOG("certificate stored in \"%s\", which this "
				"token (certificates = leaf) does not show",
				c.alias ? c.alias : "?");
		rv = CKR_FUNCTION_FAILED;
	}
	X509_free(x);
	free(c.alias);
	return rv;
}

/* A public key on the token exists only as part of its private key's
 * entry: creating it finds that entry's public key object. */
static CK_RV token_pubkey(w11_session *s, EVP_PKEY *pk, CK_OBJECT_HANDLE *h)
{
	w11_token *t = s->tok;

	(void)w11_token_refresh(t);
	pthread_mutex_lock(&t->lock);
	*h = CK_INVALID_HANDLE;
	for (size_t i = 0; i < t->nobjs; i++) {
		w11_obj *o = t->objs[i];

		if ((o->flags & W11_OF_TOKEN) && o->role == W11_R_PUB &&
		    o->km && o->km->pub && EVP_PKEY_eq(o->km->pub, pk) == 1) {
			*h = o->handle;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (*h != CK_INVALID_HANDLE)
		return CKR_OK;
	W11_LOG("a WKS store holds a public key only with its private key");
	return CKR_TEMPLATE_INCONSISTENT;
}

static CK_RV create_key(w11_session *s, CK_OBJECT_CLASS cls, int token,
			const CK_ATTRIBUTE *t, CK_ULONG n, CK_OBJECT_HANDLE *h)
{
	CK_KEY_TYPE kt = CK_UNAVAILABLE_INFORMATION;
	const CK_ATTRIBUTE *v;
	EVP_PKEY *pk = NULL;
	CK_RV rv;

	if ((rv = w11_tmpl_ulong(t, n, CKA_KEY_TYPE, &kt)) != CKR_OK)
		return rv;
	if (kt == CK_UNAVAILABLE_INFORMATION)
		return CKR_TEMPLATE_INCOMPLETE;
	if (cls == CKO_SECRET_KEY) {
		if (kt != CKK_AES && kt != CKK_GENERIC_SECRET &&
		    kt != CKK_DES3 && kt != CKK_HKDF)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		if (!(v = w11_tmpl(t, n, CKA_VALUE)) || !v->pValue ||
		    !v->ulValueLen)
			return CKR_TEMPLATE_INCOMPLETE;
		if (!w11_secret_len_ok(kt, v->ulValueLen))
			return CKR_ATTRIBUTE_VALUE_INVALID;
		if (token)
			return w11_token_secret(s, kt, v->pValue, v->ulValueLen,
						t, n, CK_UNAVAILABLE_INFORMATION,
						h);
		return w11_session_secret(s, kt, v->pValue, v->ulValueLen, t,
					  n, CK_UNAVAILABLE_INFORMATION, h);
	}
	if (kt != CKK_RSA && kt != CKK_EC && kt != CKK_EC_EDWARDS)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if ((rv = w11_pkey_from_template(&pk, cls == CKO_PRIVATE_KEY, kt, t,
					 n)) != CKR_OK)
		return rv;
	if (cls == CKO_PUBLIC_KEY)
		rv = token ? token_pubkey(s, pk, h)
			   : w11_session_keypair(s, pk, t, n, NULL, 0,
						 CK_UNAVAILABLE_INFORMATION, h,
						 NULL);
	else if (token)
		rv = w11_token_keypair(s, pk, NULL, 0, t, n,
				       CK_UNAVAILABLE_INFORMATION, NULL, h);
	else
		rv = w11_session_keypair(s, pk, NULL, 0, t, n,
					 CK_UNAVAILABLE_INFORMATION, NULL, h);
	EVP_PKEY_free(pk);
	return rv;
}

/* The attributes of a data object the attribute record keeps, and the
 * check of a value for one of them. */
static const CK_ATTRIBUTE_TYPE data_kept[] = {
	CKA_LABEL, CKA_APPLICATION, CKA_OBJECT_ID, CKA_VALUE, CKA_PRIVATE,
};

int w11_rec_data_attr(CK_ATTRIBUTE_TYPE type, CK_ULONG len)
{
	if (type == CKA_PRIVATE)
		return len == sizeof(CK_BBOOL);
	return in_list(type, data_kept, sizeof(data_kept) /
				       sizeof(data_kept[0])) &&
	       len <= W11_REC_MAX_VALUE;
}

typedef struct {
	w11_token *tok;
	const CK_ATTRIBUTE *t;
	CK_ULONG n;
	int priv;
	unsigned char id[32]; /* out */
} data_ctx;

static CK_RV data_add_fn(wks_store *st, const char *pin, size_t pn,
			 void *arg)
{
	data_ctx *c = arg;
	w11_token *t = c->tok;
	CK_BBOOL pv = c->priv ? CK_TRUE : CK_FALSE;
	w11_ritem *it;

	(void)st, (void)pin, (void)pn;
	if (!t || !t->rec_edit)
		return CKR_FUNCTION_FAILED;
	if (RAND_bytes_ex(w11_libctx, c->id, sizeof(c->id), 0) != 1)
		return CKR_FUNCTION_FAILED;
	if (!(it = w11_rec_data(t->rec_edit, c->id)))
		return CKR_DEVICE_MEMORY;
	if (w11_ritem_set(it, CKA_PRIVATE, &pv, sizeof(pv)) != 0)
		return CKR_DEVICE_MEMORY;
	for (CK_ULONG i = 0; i < c->n; i++) {
		const CK_ATTRIBUTE *a = &c->t[i];

		if (a->type == CKA_PRIVATE || a->type == CKA_CLASS ||
		    a->type == CKA_TOKEN)
			continue;
		if (!w11_rec_data_attr(a->type, a->ulValueLen)) {
			/* a data object's other attributes are fixed */
			if (in_list(a->type, bool_attrs, sizeof(bool_attrs) /
						      sizeof(bool_attrs[0])))
				continue;
			return CKR_ATTRIBUTE_VALUE_INVALID;
		}
		if (w11_ritem_set(it, a->type, a->pValue,
				  (uint32_t)a->ulValueLen) != 0)
			return CKR_DEVICE_MEMORY;
	}
	return CKR_OK;
}

/* A token data object: an item of the attribute record (a WKS store has
 * no entry for one), made under the store's lock like every change. */
static CK_RV token_data(w11_session *s, int priv, const CK_ATTRIBUTE *t,
			CK_ULONG n, CK_OBJECT_HANDLE *h)
{
	w11_token *tok = s->tok;
	data_ctx c = { tok, t, n, priv, { 0 } };
	CK_RV rv = w11_token_edit_rec(tok, data_add_fn, &c);

	if (rv != CKR_OK)
		return rv;
	*h = CK_INVALID_HANDLE;
	pthread_mutex_lock(&tok->lock);
	for (size_t i = 0; i < tok->nobjs; i++)
		if (tok->objs[i]->role == W11_R_DATA &&
		    memcmp(tok->objs[i]->edig, c.id, 32) == 0)
			*h = tok->objs[i]->handle;
	pthread_mutex_unlock(&tok->lock);
	return *h == CK_INVALID_HANDLE ? CKR_FUNCTION_FAILED : CKR_OK;
}

/* A session data object (CKO_DATA), in memory like every other. */
static CK_RV create_data(w11_session *s, int token, int priv,
			 const CK_ATTRIBUTE *t, CK_ULONG n,
			 CK_OBJECT_HANDLE *h)
{
	static const CK_ATTRIBUTE_TYPE given[] = {
		CKA_LABEL, CKA_APPLICATION, CKA_OBJECT_ID, CKA_VALUE,
	};
	w11_obj *o;
	char uid[32];
	CK_RV rv;

	if (token)
		return token_data(s, priv, t, n, h);
	if (!(o = calloc(1, sizeof(*o))))
		return CKR_HOST_MEMORY;
	o->cls = CKO_DATA;
	o->role = W11_R_SESSION;
	o->handle = w11_new_handle();
	o->flags = priv ? W11_OF_PRIVATE : 0;
	snprintf(uid, sizeof(uid), "s%lu", (unsigned long)o->handle);
	if ((rv = w11_attrs_ulong(&o->attrs, CKA_CLASS, CKO_DATA)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_TOKEN, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_PRIVATE, priv)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_MODIFIABLE, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_COPYABLE, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_DESTROYABLE, 1)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_UNIQUE_ID, uid, strlen(uid))))
		goto fail;
	for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++) {
		const CK_ATTRIBUTE *a = w11_tmpl(t, n, given[i]);

		if (a && a->ulValueLen > (1u << 24)) {
			rv = CKR_ATTRIBUTE_VALUE_INVALID;
			goto fail;
		}
		if ((rv = w11_attrs_set(&o->attrs, given[i],
					a ? a->pValue : NULL,
					a ? a->ulValueLen : 0)) != CKR_OK)
			goto fail;
	}
	if ((rv = w11_apply_template(o, t, n, W11_APPLY_CREATE)) != CKR_OK)
		goto fail;
	return add_session_obj(s, o, h);
fail:
	w11_obj_free(o);
	return rv;
}

static CK_RV create_object(w11_session *s, CK_ATTRIBUTE_PTR t, CK_ULONG n,
			   CK_OBJECT_HANDLE_PTR h)
{
	CK_OBJECT_CLASS cls = CK_UNAVAILABLE_INFORMATION;
	int token = 0, priv;
	CK_RV rv;

	if (!h)
		return CKR_ARGUMENTS_BAD;
	if ((rv = w11_tmpl_check(t, n)) != CKR_OK ||
	    (rv = w11_tmpl_ulong(t, n, CKA_CLASS, &cls)) != CKR_OK ||
	    (rv = w11_tmpl_bool(t, n, CKA_TOKEN, &token)) != CKR_OK)
		return rv;
	priv = cls == CKO_PRIVATE_KEY || cls == CKO_SECRET_KEY;
	if ((rv = w11_tmpl_bool(t, n, CKA_PRIVATE, &priv)) != CKR_OK)
		return rv;
	if (cls == CK_UNAVAILABLE_INFORMATION)
		return CKR_TEMPLATE_INCOMPLETE;
	if (cls != CKO_CERTIFICATE && cls != CKO_PUBLIC_KEY &&
	    cls != CKO_PRIVATE_KEY && cls != CKO_SECRET_KEY &&
	    cls != CKO_DATA)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if ((rv = w11_may_create(s, token, priv)) != CKR_OK)
		return rv;
	if (cls == CKO_DATA)
		return create_data(s, token, priv, t, n, h);
	if (cls == CKO_CERTIFICATE)
		return create_cert(s, token, t, n, h);
	return create_key(s, cls, token, t, n, h);
}

CK_RV w11_create_object(w11_session *s, const CK_ATTRIBUTE *t, CK_ULONG n,
			CK_OBJECT_HANDLE *h)
{
	return create_object(s, (CK_ATTRIBUTE_PTR)t, n, h);
}

CK_RV C_CreateObject(CK_SESSION_HANDLE hs, CK_ATTRIBUTE_PTR t, CK_ULONG n,
		     CK_OBJECT_HANDLE_PTR h)
{
	w11_session *s;

	W11_SESSION_CALL(hs, s, create_object(s, t, n, h));
}

