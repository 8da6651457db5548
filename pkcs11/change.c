/*
 * C_CopyObject, C_DestroyObject and C_SetAttributeValue: session objects
 * in memory, token objects through the locked load-modify-save of
 * write.c (docs/PKCS11.md, "Writing to a token").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "p11.h"

/* ---- C_CopyObject ------------------------------------------------------------ */

/* A printable CKA_ID (SunPKCS11's KeyStore puts the Java alias there) as
 * an alias, when no label names the entry. */
static int printable_id(const unsigned char *id, size_t len)
{
	if (!len || len > 64)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (id[i] < 0x20 || id[i] > 0x7e)
			return 0;
	return 1;
}

/* A session key copied with CKA_TOKEN true: a new store entry, as
 * C_CreateObject makes one from the same key (docs/PKCS11.md, "Writing
 * to a token").  SunPKCS11's KeyStore stores a key it generated (keytool
 * -genkeypair -storetype PKCS11) that way, with a template of CKA_TOKEN
 * true and CKA_ID = the alias.  The entry's alias: the template's
 * CKA_LABEL, else the source's, else a printable CKA_ID (template's, else
 * source's) as text, else as for a new key.  Called with tok->lock held;
 * releases it for the change (a locked load and save) and returns with it
 * held again; `o` is not used once it is released. */
static CK_RV copy_to_token(w11_session *s, w11_obj *o, CK_ATTRIBUTE_PTR t,
			   CK_ULONG n, CK_OBJECT_HANDLE_PTR h)
{
	w11_token *tok = s->tok;
	const CK_ATTRIBUTE *tl = w11_tmpl(t, n, CKA_LABEL);
	const CK_ATTRIBUTE *ti = w11_tmpl(t, n, CKA_ID);
	const w11_attr *a;
	CK_ATTRIBUTE nt[2];
	CK_ULONG nn = 0;
	CK_OBJECT_CLASS cls = o->cls;
	CK_KEY_TYPE kt = CK_UNAVAILABLE_INFORMATION;
	unsigned char *label = NULL, *id = NULL, *sec = NULL;
	size_t label_len = 0, id_len = 0, sec_len = 0;
	EVP_PKEY *pk = NULL;
	CK_RV rv = CKR_OK;

	/* under tok->lock: what the copy needs from the source */
	if ((cls != CKO_PRIVATE_KEY && cls != CKO_SECRET_KEY) || !o->km ||
	    (cls == CKO_PRIVATE_KEY && !o->km->priv) ||
	    (cls == CKO_SECRET_KEY && !o->km->sec)) {
		/* a store holds certificates and public keys with their
		 * entries, made by C_CreateObject */
		W11_LOG("C_CopyObject to the token: private and secret "
			"session keys only");
		return CKR_TEMPLATE_INCONSISTENT;
	}
	if (tl && tl->ulValueLen) {
		label_len = tl->ulValueLen;
		label = OPENSSL_memdup(tl->pValue, label_len);
	} else if ((a = w11_attrs_get(&o->attrs, CKA_LABEL)) && a->len) {
		label_len = a->len;
		label = OPENSSL_memdup(a->val, label_len);
	}
	if (ti) {
		id_len = ti->ulValueLen;
		id = id_len ? OPENSSL_memdup(ti->pValue, id_len) : NULL;
	} else if ((a = w11_attrs_get(&o->attrs, CKA_ID)) && a->len) {
		id_len = a->len;
		id = OPENSSL_memdup(a->val, id_len);
	}
	if ((label_len && !label) || (id_len && !id))
		rv = CKR_HOST_MEMORY;
	if (rv == CKR_OK && cls == CKO_PRIVATE_KEY) {
		pk = o->km->priv;
		EVP_PKEY_up_ref(pk);
	} else if (rv == CKR_OK) {
		kt = o->km->ktype;
		sec_len = o->km->sec_len;
		if (!(sec = OPENSSL_memdup(o->km->sec, sec_len)))
			rv = CKR_HOST_MEMORY;
	}
	pthread_mutex_unlock(&tok->lock);
	if (rv == CKR_OK)
		rv = w11_may_create(s, 1, 1);
	if (rv == CKR_OK) {
		if (!label_len && printable_id(id, id_len)) {
			label = OPENSSL_memdup(id, id_len);
			label_len = label ? id_len : 0;
		}
		if (label_len)
			nt[nn++] = (CK_ATTRIBUTE){ CKA_LABEL, label, label_len };
		if (id_len)
			nt[nn++] = (CK_ATTRIBUTE){ CKA_ID, id, id_len };
		if (cls == CKO_PRIVATE_KEY)
			rv = w11_token_keypair(s, pk, NULL, 0, nt, nn,
					       CK_UNAVAILABLE_INFORMATION, NULL,
					       h);
		else
			rv = w11_token_secret(s, kt, sec, sec_len, nt, nn,
					      CK_UNAVAILABLE_INFORMATION, h);
	}
	EVP_PKEY_free(pk);
	OPENSSL_clear_free(sec, sec_len);
	OPENSSL_free(label);
	OPENSSL_free(id);
	pthread_mutex_lock(&tok->lock);
	return rv;
}

static CK_RV copy_object(w11_session *s, CK_OBJECT_HANDLE src,
			 CK_ATTRIBUTE_PTR t, CK_ULONG n, CK_OBJECT_HANDLE_PTR h)
{
	w11_token *tok = s->tok;
	w11_obj *o, *c = NULL;
	int token = -1, hidden;
	char uid[32];
	CK_RV rv;

	if (!h)
		return CKR_ARGUMENTS_BAD;
	if ((rv = w11_tmpl_check(t, n)) != CKR_OK ||
	    (rv = w11_tmpl_bool(t, n, CKA_TOKEN, &token)) != CKR_OK)
		return rv;
	/* a deleted or replaced entry is not copied (w11_op_start()) */
	w11_token_check(tok);
	pthread_mutex_lock(&tok->lock);
	o = w11_token_find(tok, src);
	if (!o || !w11_obj_visible(tok, o)) {
		rv = CKR_OBJECT_HANDLE_INVALID;
	} else if (!w11_attrs_is_true(&o->attrs, CKA_COPYABLE)) {
		rv = CKR_ACTION_PROHIBITED;
	} else if (token == 1 && !(o->flags & W11_OF_TOKEN)) {
		rv = copy_to_token(s, o, t, n, h);
	} else if (token == 1 || (token == -1 && (o->flags & W11_OF_TOKEN))) {
		/* copies of token objects are session objects: a store
		 * entry is named by its alias, which a copy would have to
		 * change */
		rv = CKR_TEMPLATE_INCONSISTENT;
	} else if (!(c = calloc(1, sizeof(*c)))) {
		rv = CKR_HOST_MEMORY;
	} else {
		c->cls = o->cls;
		c->role = W11_R_SESSION;
		c->flags = o->flags & W11_OF_PRIVATE;
		c->handle = w11_new_handle();
		c->km = w11_keymat_ref(o->km);
		hidden = (o->flags & W11_OF_TOKEN) &&
			 !w11_tmpl(t, n, CKA_ID) && !w11_tmpl(t, n, CKA_LABEL);
		if (hidden)
			c->flags |= W11_OF_HIDDEN;
		snprintf(uid, sizeof(uid), "s%lu", (unsigned long)c->handle);
		if ((rv = w11_attrs_copy(&c->attrs, &o->attrs)) == CKR_OK &&
		    (rv = w11_attrs_bool(&c->attrs, CKA_TOKEN, 0)) == CKR_OK &&
		    (rv = w11_attrs_bool(&c->attrs, CKA_MODIFIABLE, 1)) ==
			    CKR_OK &&
		    (rv = w11_attrs_bool(&c->attrs, CKA_DESTROYABLE, 1)) ==
			    CKR_OK &&
		    (rv = w11_attrs_set(&c->attrs, CKA_UNIQUE_ID, uid,
					strlen(uid))) == CKR_OK)
			rv = w11_apply_template(c, t, n, W11_APPLY_COPY);
		if (rv == CKR_OK && (c->flags & W11_OF_PRIVATE) &&
		    tok->login != CKU_USER)
			rv = CKR_USER_NOT_LOGGED_IN;
		if (rv == CKR_OK) {
			c->owner = s->h;
			rv = w11_token_add_obj(tok, c);
		}
		if (rv == CKR_OK) {
			*h = c->handle;
			c = NULL;
		}
	}
	pthread_mutex_unlock(&tok->lock);
	w11_obj_free(c);
	return rv;
}

CK_RV C_CopyObject(CK_SESSION_HANDLE hs, CK_OBJECT_HANDLE o,
		   CK_ATTRIBUTE_PTR t, CK_ULONG n, CK_OBJECT_HANDLE_PTR h)
{
	w11_session *s;

	W11_SESSION_CALL(hs, s, copy_object(s, o, t, n, h));
}

/* ---- C_DestroyObject ------------------------------------------------------- */

static CK_RV delete_fn(wks_store *st, const char *pin, size_t n, void *arg)
{
	(void)pin, (void)n;
	return w11_rv_of_set(wks_store_delete(st, arg));
}

/* A token data object's item: changed (t, n) or removed (del). */
typedef struct {
	w11_token *tok;
	const unsigned char *id;
	const CK_ATTRIBUTE *t;
	CK_ULONG n;
	int del;
} data_ctx;

static CK_RV data_set_fn(wks_store *st, const char *pin, size_t pn,
			 void *arg)
{
	data_ctx *c = arg;
	w11_ritem *it;

	(void)st, (void)pin, (void)pn;
	if (!c->tok->rec_edit ||
	    !(it = w11_rec_find(c->tok->rec_edit, c->id, 0, 0)) ||
	    it->kind != W11_REC_KIND_DATA)
		return CKR_OBJECT_HANDLE_INVALID; /* gone meanwhile */
	if (c->del) {
		w11_rec_drop_entry(c->tok->rec_edit, c->id);
		return CKR_OK;
	}
	for (CK_ULONG i = 0; i < c->n; i++)
		if (w11_ritem_set(it, c->t[i].type, c->t[i].pValue,
				  (uint32_t)c->t[i].ulValueLen) != 0)
			return CKR_DEVICE_MEMORY;
	return CKR_OK;
}

typedef struct {
	w11_token *t;
	const char *alias;
} pub_ctx;

static CK_RV delete_pub_fn(wks_store *st, const char *pin, size_t n,
			   void *arg)
{
	pub_ctx *c = arg;
	unsigned char d[32];
	w11_ritem *it;

	(void)pin, (void)n;
	if (!c->t->rec_edit || !wks_store_contains(st, c->alias))
		return CKR_OBJECT_HANDLE_INVALID;
	if (wks_store_entry_digest(d, st, c->alias) != WKS_OK ||
	    !(it = w11_rec_item(c->t->rec_edit, d, W11_R_PUB, 0)))
		return CKR_DEVICE_MEMORY;
	it->flags |= W11_REC_F_DELETED;
	return CKR_OK;
}

static CK_RV destroy_object(w11_session *s, CK_OBJECT_HANDLE h)
{
	w11_token *t = s->tok;
	w11_obj *o;
	char *alias = NULL;
	CK_RV rv = CKR_OK;
	int pub = 0;

	pthread_mutex_lock(&t->lock);
	o = w11_token_find(t, h);
	if (!o || !w11_obj_visible(t, o)) {
		rv = CKR_OBJECT_HANDLE_INVALID;
	} else if (!w11_attrs_is_true(&o->attrs, CKA_DESTROYABLE)) {
		/* a certificate of a key entry: the entry goes with its
		 * private key */
		rv = CKR_ACTION_PROHIBITED;
	} else if (!(o->flags & W11_OF_TOKEN)) {
		w11_token_remove_obj(t, h);
		pthread_mutex_unlock(&t->lock);
		return CKR_OK;
	} else if (!(alias = strdup(o->alias))) {
		rv = CKR_HOST_MEMORY;
	}
	pub = o && o->role == W11_R_PUB;
	if (rv == CKR_OK && o->role == W11_R_DATA) {
		/* a token data object: its item in the attribute record */
		unsigned char id[32];

		memcpy(id, o->edig, 32);
		pthread_mutex_unlock(&t->lock);
		free(alias);
		if ((rv = w11_may_create(s, 1, 0)) == CKR_OK)
			rv = w11_token_edit_rec(t, data_set_fn,
						&(data_ctx){ t, id, NULL, 0, 1 });
		return rv;
	}
	pthread_mutex_unlock(&t->lock);
	if (rv == CKR_OK && (rv = w11_may_create(s, 1, 0)) == CKR_OK) {
		if (pub) {
			/* a key pair's public key object: its entry stays,
			 * the record says the object is gone */
			pub_ctx pc = { t, alias };

			rv = w11_token_edit_rec(t, delete_pub_fn, &pc);
		} else {
			rv = w11_token_edit(t, delete_fn, alias);
		}
	}
	free(alias);
	return rv;
}

CK_RV C_DestroyObject(CK_SESSION_HANDLE hs, CK_OBJECT_HANDLE h)
{
	w11_session *s;

	W11_SESSION_CALL(hs, s, destroy_object(s, h));
}

/* ---- C_SetAttributeValue --------------------------------------------------- */

typedef struct {
	char *alias;
	char *label;            /* new label: rename */
	const unsigned char *id; /* new CKA_ID: re-issued certificate */
	size_t id_len;
	int set_id;
	/* what the attribute record keeps for the object (role, index) */
	w11_token *tok;
	int role;
	size_t index;
	CK_ATTRIBUTE keep[16];
	CK_ULONG nkeep;
} set_ctx;

static CK_RV set_fn(wks_store *st, const char *pin, size_t n, void *arg)
{
	set_ctx *c = arg;
	X509 *leaf = NULL, *cert = NULL;
	EVP_PKEY *pk = NULL;
	size_t cc = 0;
	CK_RV rv = CKR_OK;
	int err, reissued = 0;

	if (c->set_id) {
		/* a self-signed certificate takes the new subject key
		 * identifier too (it is re-issued, signed by its key), so
		 * that the key's objects agree; for any other the record
		 * alone keeps the object's new CKA_ID */
		if ((err = wks_store_cert_count(&cc, st, c->alias)) ||
		    (err = wks_store_get_cert(&leaf, st, c->alias, 0))) {
			rv = w11_rv_of_set(err);
			goto done;
		}
		if (cc != 1 || X509_check_issued(leaf, leaf) != X509_V_OK ||
		    X509_verify(leaf, X509_get0_pubkey(leaf)) != 1)
			goto keep;
		if ((err = wks_store_get_pkey(&pk, st, c->alias, pin, n))) {
			rv = err == WKS_ERR_INTEGRITY ? CKR_FUNCTION_REJECTED
						      : w11_rv_of_set(err);
			goto done;
		}
		if ((rv = w11_self_signed(&cert, pk, NULL, c->id, c->id_len,
					  leaf)) != CKR_OK ||
		    (rv = w11_rv_of_set(wks_store_set_pkey(st, c->alias, pk, &cert,
						       1, pin, n))) != CKR_OK)
			goto done;
		reissued = 1;
	}
keep:
	if (c->label &&
	    (rv = w11_rv_of_set(wks_store_rename(st, c->alias, c->label))) !=
		    CKR_OK)
		goto done;
	/* a new certificate, the same key: its objects keep their handles */
	if (reissued &&
	    (rv = w11_token_resealed(c->tok, c->label ? c->label : c->alias,
				     c->alias)) != CKR_OK)
		goto done;
	rv = w11_rec_keep(c->tok, st, c->label ? c->label : c->alias, c->role,
			  c->index, c->keep, c->nkeep);
done:
	X509_free(leaf);
	X509_free(cert);
	EVP_PKEY_free(pk);
	return rv;
}

/* May C_SetAttributeValue change `type` of token object `o` (the
 * attribute record keeps it)?  A certificate's CKA_ID; a key's usage
 * flags and dates. */
static int keepable(const w11_obj *o, CK_ATTRIBUTE_TYPE type)
{
	if (type == CKA_ID)
		return 1;
	if (o->role != W11_R_PRIV && o->role != W11_R_PUB &&
	    o->role != W11_R_SECRET)
		return 0;
	return w11_rec_persistable(type) && type != CKA_ALLOWED_MECHANISMS &&
	       type != CKA_ALWAYS_AUTHENTICATE;
}

static CK_RV set_attrs(w11_session *s, CK_OBJECT_HANDLE h, CK_ATTRIBUTE_PTR t,
		       CK_ULONG n)
{
	w11_token *tok = s->tok;
	set_ctx c = { .tok = tok };
	w11_obj *o;
	CK_RV rv;

	if ((rv = w11_tmpl_check(t, n)) != CKR_OK)
		return rv;
	pthread_mutex_lock(&tok->lock);
	o = w11_token_find(tok, h);
	if (!o || !w11_obj_visible(tok, o)) {
		rv = CKR_OBJECT_HANDLE_INVALID;
	} else if (!w11_attrs_is_true(&o->attrs, CKA_MODIFIABLE)) {
		rv = CKR_ACTION_PROHIBITED;
	} else if (o->role == W11_R_DATA) {
		/* a token data object: its item in the attribute record */
		unsigned char id[32];

		for (CK_ULONG i = 0; i < n && rv == CKR_OK; i++)
			if (t[i].type == CKA_PRIVATE || t[i].type == CKA_CLASS ||
			    !w11_rec_data_attr(t[i].type, t[i].ulValueLen))
				rv = CKR_ATTRIBUTE_READ_ONLY;
		memcpy(id, o->edig, 32);
		pthread_mutex_unlock(&tok->lock);
		if (rv == CKR_OK && (rv = w11_may_create(s, 1, 0)) == CKR_OK)
			rv = w11_token_edit_rec(tok, data_set_fn,
						&(data_ctx){ tok, id, t, n, 0 });
		return rv;
	} else if (!(o->flags & W11_OF_TOKEN)) {
		/* a session object: in memory (all or nothing) */
		w11_attrs saved = { 0 };
		unsigned flags = o->flags;

		if ((rv = w11_attrs_copy(&saved, &o->attrs)) == CKR_OK &&
		    (rv = w11_apply_template(o, t, n, W11_APPLY_SET)) !=
			    CKR_OK) {
			w11_attrs_free(&o->attrs);
			o->attrs = saved;
			o->flags = flags;
			memset(&saved, 0, sizeof(saved));
		}
		w11_attrs_free(&saved);
		pthread_mutex_unlock(&tok->lock);
		return rv;
	} else {
		for (CK_ULONG i = 0; i < n && rv == CKR_OK; i++) {
			const unsigned char *val;
			unsigned char *tmp = NULL;
			CK_ULONG len = 0;
			int same;

			rv = w11_obj_attr(o, t[i].type, &val, &len, &tmp);
			same = rv == CKR_OK && len == t[i].ulValueLen &&
			       (!len || memcmp(val, t[i].pValue, len) == 0);
			OPENSSL_clear_free(tmp, len);
			if (rv != CKR_OK)
				break;
			if (same)
				continue;
			if (t[i].type == CKA_LABEL && o->role != W11_R_CHAIN) {
				if (!t[i].ulValueLen ||
				    memchr(t[i].pValue, 0, t[i].ulValueLen) ||
				    !(c.label = strndup(t[i].pValue,
							t[i].ulValueLen)))
					rv = CKR_ATTRIBUTE_VALUE_INVALID;
			} else if (t[i].type == CKA_ID &&
				   (o->role == W11_R_PRIV ||
				    o->role == W11_R_PUB ||
				    o->role == W11_R_LEAF) &&
				   t[i].ulValueLen && t[i].ulValueLen <= 64) {
				c.set_id = 1;
				c.id = t[i].pValue;
				c.id_len = t[i].ulValueLen;
				c.keep[c.nkeep++] = t[i];
			} else if (keepable(o, t[i].type) && c.nkeep < 16) {
				/* kept in the attribute record */
				c.keep[c.nkeep++] = t[i];
			} else {
				rv = CKR_ATTRIBUTE_READ_ONLY;
			}
		}
		c.tok = tok;
		c.role = o->role;
		c.index = o->chain_index;
		if (rv == CKR_OK && (c.label || c.set_id || c.nkeep) &&
		    !(c.alias = strdup(o->alias)))
			rv = CKR_HOST_MEMORY;
	}
	pthread_mutex_unlock(&tok->lock);
	/* (attributes the record keeps, alone: the store stays as it is) */
	if (rv == CKR_OK && (c.label || c.set_id || c.nkeep) &&
	    (rv = w11_may_create(s, 1, 0)) == CKR_OK)
		rv = c.label || c.set_id ? w11_token_edit(tok, set_fn, &c)
					 : w11_token_edit_rec(tok, set_fn, &c);
	free(c.alias);
	free(c.label);
	return rv;
}

CK_RV C_SetAttributeValue(CK_SESSION_HANDLE hs, CK_OBJECT_HANDLE h,
			  CK_ATTRIBUTE_PTR t, CK_ULONG n)
{
	w11_session *s;

	W11_SESSION_CALL(hs, s, set_attrs(s, h, t, n));
}

