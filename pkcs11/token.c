/*
 * A token: one WKS store file.  Its object list is rebuilt from the
 * store each time the file is (re)loaded: at the first use, after a
 * login, after every change the module saves, and at a
 * C_FindObjectsInit or operation init (w11_op_start(), C_DeriveKey,
 * C_CopyObject) that finds the file changed (device, inode, size,
 * modification or change time), so that a change made by wks(1) or
 * wolfJCE is seen at the next operation.
 *
 * Handles stay the same across reloads for objects that did not change
 * (same role, alias, position and content), and so do the decrypted keys
 * (the key material, shared with session copies of the key).  A key's
 * identity is the digest of its entry's stored bytes
 * (wks_store_entry_digest()): the key material of an entry deleted or
 * written again is marked gone (mark_gone()) and never used again.
 *
 * Without a login the store is read without its password (as Java reads
 * a trust store): certificates and public keys are visible.  C_Login
 * loads it again with the password, which verifies the store's MAC, and
 * keeps the password (in a locked page) for decrypting keys and saving.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "p11.h"

static atomic_ulong next_handle = 1;

CK_OBJECT_HANDLE w11_new_handle(void)
{
	return (CK_OBJECT_HANDLE)atomic_fetch_add(&next_handle, 1);
}

/* ---- key material -------------------------------------------------------- */

w11_keymat *w11_keymat_new(void)
{
	w11_keymat *km = calloc(1, sizeof(*km));

	if (km) {
		atomic_init(&km->refs, 1);
		km->always_auth = -1;
	}
	return km;
}

w11_keymat *w11_keymat_ref(w11_keymat *km)
{
	if (km)
		atomic_fetch_add(&km->refs, 1);
	return km;
}

void w11_keymat_forget(w11_keymat *km)
{
	EVP_PKEY_free(km->priv);
	km->priv = NULL;
	OPENSSL_clear_free(km->sec, km->sec_len);
	km->sec = NULL;
}

void w11_keymat_unref(w11_keymat *km)
{
	if (!km || atomic_fetch_sub(&km->refs, 1) != 1)
		return;
	w11_keymat_forget(km);
	EVP_PKEY_free(km->pub);
	free(km->alias);
	free(km->sec_alg);
	free(km);
}

/* ---- the store reference ------------------------------------------------- */

static w11_storeref *storeref_new(wks_store *st)
{
	w11_storeref *r = malloc(sizeof(*r));

	if (r) {
		atomic_init(&r->refs, 1);
		r->st = st;
	}
	return r;
}

w11_storeref *w11_storeref_get(w11_token *t)
{
	if (t->sref)
		atomic_fetch_add(&t->sref->refs, 1);
	return t->sref;
}

void w11_storeref_put(w11_storeref *r)
{
	if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
		wks_store_free(r->st);
		free(r);
	}
}

/* ---- files ----------------------------------------------------------------- */

void w11_fileid_of(w11_fileid *id, const char *path)
{
	struct stat sb;

	memset(id, 0, sizeof(*id));
	if (stat(path, &sb) != 0)
		return;
	id->exists = 1;
	id->dev = sb.st_dev;
	id->ino = sb.st_ino;
	id->size = sb.st_size;
	id->mtime = sb.st_mtim;
	id->ctime = sb.st_ctim;
}

int w11_fileid_eq(const w11_fileid *a, const w11_fileid *b)
{
	return a->exists == b->exists && a->dev == b->dev &&
	       a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* The store's path as the serial number sees it: resolved if it exists,
 * else its folder resolved. */
static char *canonical(const char *path)
{
	char *r = realpath(path, NULL), *d, *b, *dir, *base;

	if (r)
		return r;
	if (!(d = strdup(path)) || !(b = strdup(path))) {
		free(d);
		return strdup(path);
	}
	dir = realpath(dirname(d), NULL);
	base = basename(b);
	if (dir && (r = malloc(strlen(dir) + strlen(base) + 2)))
		sprintf(r, "%s/%s", dir, base);
	free(dir);
	free(d);
	free(b);
	return r ? r : strdup(path);
}

CK_RV w11_token_init(w11_token *t, CK_SLOT_ID slot,
		     const w11_conf_token *conf)
{
	unsigned char h[32];

	memset(t, 0, sizeof(*t));
	t->slot = slot;
	t->conf = conf;
	t->login = W11_NOT_LOGGED_IN;
	atomic_init(&t->checked_ns, 0);
	if (!(t->canon = canonical(conf->store)) ||
	    !(t->rec_path = w11_rec_path(t)))
		return CKR_HOST_MEMORY;
	/* Stable for a store: from its canonical path. */
	if (!w11_digest(h, "SHA256", t->canon, strlen(t->canon)))
		return CKR_GENERAL_ERROR;
	for (int i = 0; i < 8; i++)
		snprintf(t->serial + 2 * i, 3, "%02x", h[i]);
	pthread_mutex_init(&t->edit, NULL);
	pthread_mutex_init(&t->lock, NULL);
	return CKR_OK;
}

void w11_token_fini(w11_token *t)
{
	w11_token_logout_locked(t);
	for (size_t i = 0; i < t->nobjs; i++)
		w11_obj_free(t->objs[i]);
	free(t->objs);
	w11_storeref_put(t->sref);
	w11_secret_free(&t->pin);
	if (t->rec_next) {
		w11_rec_free(t->rec_next);
		free(t->rec_next);
	}
	free(t->canon);
	free(t->rec_path);
	w11_token_resealed_clear(t);
	pthread_mutex_destroy(&t->edit);
	pthread_mutex_destroy(&t->lock);
	memset(t, 0, sizeof(*t));
}

CK_RV w11_token_new_store(w11_token *t, wks_store **out)
{
	const w11_conf_token *c = t->conf;
	wks_store *st = NULL;
	char ttl[32];
	int err;

	*out = NULL;
	if ((err = wks_store_new_ex(&st, w11_libctx, NULL)) != WKS_OK)
		return CKR_HOST_MEMORY;
	for (size_t i = 0; i < c->nprops; i++)
		if ((err = wks_store_set_property(st, c->prop_name[i],
						  c->prop_value[i])) != WKS_OK)
			goto fail;
	if (c->kek_ttl > 0) {
		snprintf(ttl, sizeof(ttl), "%ld", c->kek_ttl);
		if ((err = wks_store_set_property(st,
			"wolfjce.keystore.kekCacheTtlSec", ttl)) != WKS_OK)
			goto fail;
	}
	/* The KEK cache is on while the token is logged in. */
	if ((err = wks_store_set_property(st,
		"wolfjce.keystore.kekCacheEnabled",
		t->login == CKU_USER ? "true" : "false")) != WKS_OK)
		goto fail;
	if (w11_g.no_threads &&
	    (err = wks_store_set_property(st, "libwks.kdf.threads", "1")) !=
		    WKS_OK)
		goto fail;
	*out = st;
	return CKR_OK;
fail:
	w11_log_wks("store properties", err);
	wks_store_free(st);
	return w11_rv_of_wks(err);
}

/* ---- the object list ------------------------------------------------------- */

/* The key material of an entry as the token had it: same alias and
 * content, or the same content under an alias the new store no longer
 * has (a rename), which then takes the new alias.  Lock held. */
static w11_keymat *find_keymat(w11_token *t, wks_store *st, const char *alias,
			       const unsigned char ident[32])
{
	w11_keymat *renamed = NULL;

	for (size_t i = 0; i < t->nobjs; i++) {
		w11_keymat *km = t->objs[i]->km;

		if (!km || km->tok != t || !km->alias ||
		    memcmp(km->ident, ident, 32) != 0)
			continue;
		if (strcmp(km->alias, alias) == 0)
			return km;
		if (!renamed && !wks_store_contains(st, km->alias))
			renamed = km;
	}
	if (renamed) {
		char *a = strdup(alias);

		if (!a)
			return NULL;
		free(renamed->alias);
		renamed->alias = a;
	}
	return renamed;
}

/* The key material of an entry that an edit of this module wrote again
 * with the same key (w11_token_resealed()): found by alias, it takes the
 * entry's new identity.  Lock held (and the edit lock). */
static w11_keymat *carry_keymat(w11_token *t, const char *alias,
				int is_secret, const unsigned char ident[32])
{
	const char *was = NULL;
	size_t i;

	for (i = 0; i < t->nresealed && !was; i++)
		if (strcmp(t->resealed[i].alias, alias) == 0)
			was = t->resealed[i].was ? t->resealed[i].was : alias;
	if (!was)
		return NULL;
	for (i = 0; i < t->nobjs; i++) {
		w11_keymat *km = t->objs[i]->km;
		char *a;

		if (!km || km->tok != t || km->gone || !km->alias ||
		    km->is_secret != is_secret ||
		    !(t->objs[i]->flags & W11_OF_TOKEN) ||
		    strcmp(km->alias, was) != 0)
			continue;
		if (strcmp(km->alias, alias) != 0) {
			if (!(a = strdup(alias)))
				return NULL;
			free(km->alias);
			km->alias = a;
		}
		memcpy(km->ident, ident, 32);
		return km;
	}
	return NULL;
}

typedef struct {
	w11_obj **v;
	size_t n, cap;
} objlist;

static CK_RV list_add(objlist *l, w11_obj *o)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		w11_obj **nv = realloc(l->v, cap * sizeof(*nv));

		if (!nv) {
			w11_obj_free(o);
			return CKR_HOST_MEMORY;
		}
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n++] = o;
	return CKR_OK;
}

static CK_RV build_key_entry(w11_token *t, wks_store *st, const char *alias,
			     objlist *l)
{
	X509 *chain[64] = { 0 };
	size_t cc = 0, id_len = 0;
	unsigned char id[256], ident[32];
	w11_keymat *km = NULL;
	w11_obj *o;
	CK_RV rv = CKR_OK;
	int err;

	if ((err = wks_store_cert_count(&cc, st, alias)) != WKS_OK || cc == 0)
		return CKR_OK; /* cannot happen for a loaded entry */
	if (cc > 64)
		cc = 64;
	for (size_t i = 0; i < cc; i++)
		if ((err = wks_store_get_cert(&chain[i], st, alias, i)) !=
		    WKS_OK) {
			w11_log_wks(alias, err);
			goto done;
		}
	if ((rv = w11_cert_id(id, &id_len, sizeof(id), chain[0])) != CKR_OK)
		goto done;
	if ((err = wks_store_entry_digest(ident, st, alias)) != WKS_OK) {
		w11_log_wks(alias, err);
		rv = w11_rv_of_wks(err);
		goto done;
	}
	if (!(km = find_keymat(t, st, alias, ident)))
		km = carry_keymat(t, alias, 0, ident);
	if (km) {
		w11_keymat_ref(km);
	} else {
		if (!(km = w11_keymat_new()) || !(km->alias = strdup(alias))) {
			rv = CKR_HOST_MEMORY;
			goto done;
		}
		km->tok = t;
		memcpy(km->ident, ident, 32);
		km->pub = X509_get_pubkey(chain[0]);
		km->ktype = km->pub ? w11_pkey_type(km->pub)
				    : CKK_VENDOR_DEFINED;
	}
	if (km->ktype != CKK_VENDOR_DEFINED) {
		if ((rv = w11_obj_privkey(&o, km, chain[0], alias, id, id_len,
					  W11_OF_TOKEN)) != CKR_OK ||
		    (rv = list_add(l, o)) != CKR_OK ||
		    (rv = w11_obj_pubkey(&o, km, chain[0], alias, id, id_len,
					 W11_OF_TOKEN)) != CKR_OK ||
		    (rv = list_add(l, o)) != CKR_OK)
			goto done;
	} else {
		W11_LOG("entry \"%s\": a key type the module does not use: "
			"its certificates only", alias);
	}
	/* certificates = leaf: the CA certificates are not objects (OpenSSH
	 * makes every certificate's key an identity) */
	for (size_t i = 0; i < (t->conf->leaf_certs ? 1 : cc); i++) {
		unsigned char cid[256];
		size_t cid_len = id_len;

		if (i == 0)
			memcpy(cid, id, id_len);
		else if ((rv = w11_cert_id(cid, &cid_len, sizeof(cid),
					   chain[i])) != CKR_OK)
			goto done;
		if ((rv = w11_obj_cert(&o, chain[i],
				       i ? W11_R_CHAIN : W11_R_LEAF, alias, i,
				       cid, cid_len)) != CKR_OK ||
		    (rv = list_add(l, o)) != CKR_OK)
			goto done;
	}
done:
	w11_keymat_unref(km);
	for (size_t i = 0; i < cc; i++)
		X509_free(chain[i]);
	return rv;
}

static CK_RV build_secret_entry(w11_token *t, wks_store *st,
				const char *alias, objlist *l)
{
	char *alg = NULL;
	unsigned char ident[32];
	w11_keymat *km = NULL;
	w11_obj *o;
	CK_RV rv = CKR_OK;
	int err;

	if ((err = wks_store_secret_algorithm(&alg, st, alias)) != WKS_OK ||
	    (err = wks_store_entry_digest(ident, st, alias)) != WKS_OK) {
		w11_log_wks(alias, err);
		goto done;
	}
	if (!(km = find_keymat(t, st, alias, ident)))
		km = carry_keymat(t, alias, 1, ident);
	if (km) {
		w11_keymat_ref(km);
	} else {
		if (!(km = w11_keymat_new()) || !(km->alias = strdup(alias)) ||
		    !(km->sec_alg = strdup(alg))) {
			rv = CKR_HOST_MEMORY;
			goto done;
		}
		km->tok = t;
		km->is_secret = 1;
		memcpy(km->ident, ident, 32);
		km->ktype = w11_ktype_of_jca(alg);
	}
	if ((rv = w11_obj_secret(&o, km, alias, W11_OF_TOKEN)) == CKR_OK)
		rv = list_add(l, o);
done:
	w11_keymat_unref(km);
	wks_free(alg);
	return rv;
}

static CK_RV build(w11_token *t, wks_store *st, objlist *l)
{
	char **al = NULL;
	size_t n = 0;
	w11_obj *o;
	CK_RV rv = CKR_OK;
	int err;

	if (!st)
		return CKR_OK;
	if ((err = wks_store_aliases(&al, &n, st)) != WKS_OK)
		return w11_rv_of_wks(err);
	for (size_t i = 0; i < n && rv == CKR_OK; i++) {
		X509 *x = NULL;
		unsigned char id[256];
		size_t id_len;

		size_t first = l->n;

		switch (wks_store_entry_type(st, al[i])) {
		case WKS_ENTRY_PRIVATE_KEY:
			rv = build_key_entry(t, st, al[i], l);
			break;
		case WKS_ENTRY_SECRET_KEY:
			rv = build_secret_entry(t, st, al[i], l);
			break;
		case WKS_ENTRY_CERTIFICATE:
			if (t->conf->leaf_certs)
				break;
			if ((err = wks_store_get_cert(&x, st, al[i], 0)) !=
			    WKS_OK) {
				w11_log_wks(al[i], err);
				break;
			}
			if ((rv = w11_cert_id(id, &id_len, sizeof(id), x)) ==
				    CKR_OK &&
			    (rv = w11_obj_cert(&o, x, W11_R_TRUSTED, al[i], 0,
					       id, id_len)) == CKR_OK)
				rv = list_add(l, o);
			X509_free(x);
			break;
		default:
			break;
		}
		/* the entry's objects know its bytes (the attribute record
		 * is bound to them) */
		if (rv == CKR_OK && l->n > first) {
			unsigned char d[32];

			if (wks_store_entry_digest(d, st, al[i]) == WKS_OK)
				for (size_t k = first; k < l->n; k++)
					memcpy(l->v[k]->edig, d, 32);
		}
		/* one entry the module cannot show does not hide the others */
		if (rv != CKR_OK && rv != CKR_HOST_MEMORY) {
			W11_LOG("entry \"%s\": not shown (0x%lx)", al[i],
				(unsigned long)rv);
			rv = CKR_OK;
		}
	}
	wks_aliases_free(al);
	return rv;
}

/* The token's key material that no object of the new list `l` holds
 * (its entry was deleted or its bytes replaced) is gone: forgotten, and
 * session copies of the key, which share it, fail from now on.  Lock
 * held. */
static void mark_gone(w11_token *t, const objlist *l)
{
	for (size_t i = 0; i < t->nobjs; i++)
		if (t->objs[i]->km)
			t->objs[i]->km->live = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i]->km)
			l->v[i]->km->live = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i]->km && (l->v[i]->flags & W11_OF_TOKEN))
			l->v[i]->km->live = 1;
	for (size_t i = 0; i < t->nobjs + l->n; i++) {
		w11_obj *o = i < t->nobjs ? t->objs[i] : l->v[i - t->nobjs];
		w11_keymat *km = o->km;

		if (km && km->tok == t && !km->live && !km->gone) {
			km->gone = 1;
			w11_keymat_forget(km);
			W11_LOG("token \"%s\": entry \"%s\" deleted or replaced: "
				"its key is no longer usable", t->conf->label,
				km->alias ? km->alias : "?");
		}
	}
}

/* Give the token objects of `l` what the record says of them: only what
 * a verified record says of a private object; a public key object the
 * record marks deleted leaves the list.  Lock held. */
static void rec_apply(w11_token *t, objlist *l, const w11_rec *rec,
		      int verified)
{
	size_t k = 0;

	(void)t;
	for (size_t i = 0; i < l->n; i++)
		if ((l->v[i]->flags & W11_OF_TOKEN) && l->v[i]->km)
			l->v[i]->km->force_auth = 0;
	for (size_t i = 0; i < l->n; i++) {
		w11_obj *o = l->v[i];
		const w11_ritem *it = NULL;

		if ((o->flags & W11_OF_TOKEN) &&
		    (verified || !(o->flags & W11_OF_PRIVATE)))
			it = w11_rec_find(rec, o->edig, (uint8_t)o->role,
					  (uint32_t)o->chain_index);
		if (it && (it->flags & W11_REC_F_DELETED) &&
		    o->role == W11_R_PUB) {
			w11_obj_free(o);
			continue;
		}
		for (uint32_t j = 0; it && j < it->n; j++) {
			const w11_rattr *a = &it->a[j];

			if (!w11_rec_value_ok((CK_ATTRIBUTE_TYPE)a->type, a->len))
				continue;
			if (a->type == CKA_ALWAYS_AUTHENTICATE) {
				/* (computed, not in the table: km says) */
				if (o->km && a->val[0] &&
				    (o->role == W11_R_PRIV ||
				     o->role == W11_R_SECRET))
					o->km->force_auth = 1;
				continue;
			}
			/* (a key has no CKA_ALLOWED_MECHANISMS of its own:
			 * the record's is the only one) */
			if (!w11_attrs_get(&o->attrs, (CK_ATTRIBUTE_TYPE)a->type) &&
			    !(a->type == CKA_ALLOWED_MECHANISMS &&
			      (o->cls == CKO_PRIVATE_KEY ||
			       o->cls == CKO_PUBLIC_KEY ||
			       o->cls == CKO_SECRET_KEY)))
				continue;
			if (w11_attrs_set(&o->attrs, (CK_ATTRIBUTE_TYPE)a->type,
					  a->val, a->len) != CKR_OK)
				continue;
		}
		l->v[k++] = o;
	}
	l->n = k;
	/* the token's data objects: only a verified record's private ones */
	for (uint32_t i = 0; i < rec->n; i++) {
		const w11_ritem *it = &rec->items[i];
		const w11_rattr *pa;
		w11_obj *o;

		if (it->kind != W11_REC_KIND_DATA)
			continue;
		pa = w11_ritem_get(it, CKA_PRIVATE);
		if (!verified && (!pa || pa->len != 1 || pa->val[0]))
			continue;
		if (w11_obj_data(&o, it) == CKR_OK && list_add(l, o) != CKR_OK)
			break; /* (list_add freed it) */
	}
}

CK_RV w11_token_install(w11_token *t, wks_store *st, const w11_fileid *fid)
{
	objlist l = { 0 };
	w11_storeref *r = NULL, *old;
	unsigned char *used = NULL;
	CK_RV rv;

	w11_rec rec = { 0 };
	w11_fileid rfid;
	int verified = 0;

	/* (the record file's identity before it is read: a change after
	 * that makes the next refresh read it again) */
	w11_fileid_of(&rfid, t->rec_path ? t->rec_path : "");

	/* the attribute record: the one the edit just wrote, else read
	 * (with the login's password, if any: its MAC checked) */
	if (t->rec_next) {
		rec = *t->rec_next;
		verified = t->rec_next_verified;
		free(t->rec_next);
		t->rec_next = NULL;
	} else if (st) {
		char pin[1024];
		size_t pin_len = 0;

		pthread_mutex_lock(&t->lock);
		if (t->login == CKU_USER && t->pin.len <= sizeof(pin)) {
			memcpy(pin, t->pin.p, t->pin.len);
			pin_len = t->pin.len;
		}
		pthread_mutex_unlock(&t->lock);
		(void)w11_recfile_read(t, pin_len ? pin : NULL, pin_len, &rec,
				       &verified);
		OPENSSL_cleanse(pin, sizeof(pin));
	}
	if (st && !(r = storeref_new(st))) {
		wks_store_free(st);
		w11_rec_free(&rec);
		return CKR_HOST_MEMORY;
	}
	pthread_mutex_lock(&t->lock);
	/* Session objects stay as they are. */
	for (size_t i = 0; i < t->nobjs; i++)
		if (!(t->objs[i]->flags & W11_OF_TOKEN) &&
		    (rv = list_add(&l, t->objs[i])) != CKR_OK)
			goto fail;
	if ((rv = build(t, st, &l)) != CKR_OK)
		goto fail;
	rec_apply(t, &l, &rec, verified);
	w11_rec_free(&rec);
	/* Unchanged token objects keep their handles: same role and
	 * content (or the same key material: carried over by
	 * carry_keymat()) under the same alias, or under an alias the store
	 * no longer has (renamed); each old handle goes to one object. */
	if (t->nobjs && !(used = calloc(t->nobjs, 1))) {
		rv = CKR_HOST_MEMORY;
		goto fail;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < l.n; i++) {
			w11_obj *o = l.v[i];

			if (!(o->flags & W11_OF_TOKEN) || o->reused)
				continue;
			for (size_t j = 0; j < t->nobjs; j++) {
				w11_obj *p = t->objs[j];

				if (used[j] || !(p->flags & W11_OF_TOKEN) ||
				    p->role != o->role ||
				    (memcmp(p->ident, o->ident, 32) != 0 &&
				     !(o->km && p->km == o->km)))
					continue;
				if (pass == 0 ? strcmp(p->alias, o->alias) != 0
					      : wks_store_contains(st, p->alias))
					continue;
				o->handle = p->handle;
				o->reused = 1;
				used[j] = 1;
				break;
			}
		}
	free(used);
	mark_gone(t, &l);
	for (size_t j = 0; j < t->nobjs; j++)
		if (t->objs[j]->flags & W11_OF_TOKEN)
			w11_obj_free(t->objs[j]);
	free(t->objs);
	t->objs = l.v;
	t->nobjs = l.n;
	t->cap = l.cap;
	old = t->sref;
	t->sref = r;
	t->fid = *fid;
	t->rfid = rfid;
	t->load_failed = 0;
	pthread_mutex_unlock(&t->lock);
	w11_storeref_put(old);
	W11_LOG("token \"%s\": %zu object(s)", t->conf->label, l.n);
	return CKR_OK;
fail:
	/* l holds the session objects (still owned by t) and some new
	 * token objects */
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i]->flags & W11_OF_TOKEN)
			w11_obj_free(l.v[i]);
	free(l.v);
	pthread_mutex_unlock(&t->lock);
	w11_storeref_put(r);
	w11_rec_free(&rec);
	return rv;
}

/* Is the attribute record file the one the objects were built with?
 * (Another process may change the record alone: a data object, an
 * attribute.)  Lock held. */
static int rec_unchanged(const w11_token *t)
{
	w11_fileid r;

	w11_fileid_of(&r, t->rec_path ? t->rec_path : "");
	return w11_fileid_eq(&r, &t->rfid);
}

CK_RV w11_token_refresh(w11_token *t)
{
	w11_fileid now, after;
	wks_store *st = NULL;
	char pin[1024];
	size_t pin_len = 0;
	CK_RV rv = CKR_OK;
	int err, same;

	(void)w11_share_adopt(t);
	w11_fileid_of(&now, t->conf->store);
	pthread_mutex_lock(&t->lock);
	same = (t->sref || !now.exists) && w11_fileid_eq(&now, &t->fid) &&
	       rec_unchanged(t);
	pthread_mutex_unlock(&t->lock);
	if (same)
		return CKR_OK;
	pthread_mutex_lock(&t->edit);
	w11_fileid_of(&now, t->conf->store);
	pthread_mutex_lock(&t->lock);
	same = (t->sref || !now.exists) && w11_fileid_eq(&now, &t->fid) &&
	       rec_unchanged(t);
	if (!same && t->login != W11_NOT_LOGGED_IN && t->pin.len <= sizeof(pin)) {
		memcpy(pin, t->pin.p, t->pin.len);
		pin_len = t->pin.len;
	}
	pthread_mutex_unlock(&t->lock);
	if (same)
		goto done;
	if (!now.exists) {
		W11_LOG("token \"%s\": no store file %s", t->conf->label,
			t->conf->store);
		rv = w11_token_install(t, NULL, &now);
		goto done;
	}
	if ((rv = w11_token_new_store(t, &st)) != CKR_OK)
		goto done;
	err = wks_store_load_file(st, t->conf->store, pin_len ? pin : NULL,
				  pin_len);
	if (err == WKS_ERR_INTEGRITY && pin_len) {
		/* The store's password changed under a logged-in token: the
		 * login no longer holds. */
		W11_LOG("token \"%s\": the store's password changed: logged "
			"out", t->conf->label);
		/* (Sessions drop what they kept of the login at their next
		 * call: their contexts belong to an older login_gen.) */
		pthread_mutex_lock(&t->lock);
		w11_token_logout_locked(t);
		pthread_mutex_unlock(&t->lock);
		wks_store_free(st);
		st = NULL;
		if ((rv = w11_token_new_store(t, &st)) != CKR_OK)
			goto done;
		err = wks_store_load_file(st, t->conf->store, NULL, 0);
	}
	if (err != WKS_OK) {
		w11_log_wks(t->conf->store, err);
		wks_store_free(st);
		pthread_mutex_lock(&t->lock);
		t->load_failed = 1;
		t->fid = now; /* not again until it changes */
		/* Nothing read yet: no objects is not an empty token. */
		if (!t->sref)
			rv = err == WKS_ERR_NOMEM ? CKR_HOST_MEMORY
						  : CKR_DEVICE_ERROR;
		pthread_mutex_unlock(&t->lock);
		goto done;
	}
	/* The identity taken before the load may predate a change that
	 * the load read: take it again, and if the two differ, the next
	 * refresh loads once more. */
	w11_fileid_of(&after, t->conf->store);
	if (!w11_fileid_eq(&now, &after))
		memset(&now, 0, sizeof(now));
	rv = w11_token_install(t, st, &now);
done:
	OPENSSL_cleanse(pin, sizeof(pin));
	pthread_mutex_unlock(&t->edit);
	return rv;
}

CK_RV w11_token_resealed(w11_token *t, const char *alias, const char *was)
{
	struct w11_resealed *nv;
	char *a = strdup(alias), *w = was ? strdup(was) : NULL;

	if (!a || (was && !w) ||
	    !(nv = realloc(t->resealed, (t->nresealed + 1) * sizeof(*nv)))) {
		free(a);
		free(w);
		return CKR_HOST_MEMORY;
	}
	t->resealed = nv;
	t->resealed[t->nresealed].alias = a;
	t->resealed[t->nresealed++].was = w;
	return CKR_OK;
}

void w11_token_resealed_clear(w11_token *t)
{
	for (size_t i = 0; i < t->nresealed; i++) {
		free(t->resealed[i].alias);
		free(t->resealed[i].was);
	}
	free(t->resealed);
	t->resealed = NULL;
	t->nresealed = 0;
}

void w11_token_check(w11_token *t)
{
	struct timespec ts;
	long long now, last;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	last = atomic_load_explicit(&t->checked_ns, memory_order_relaxed);
	if (last && now >= last && now - last < W11_CHECK_NS)
		return;
	atomic_store_explicit(&t->checked_ns, now, memory_order_relaxed);
	(void)w11_token_refresh(t);
}

void w11_token_logout_locked(w11_token *t)
{
	w11_secret_free(&t->pin);
	w11_secret_free(&t->rec_key);
	t->login = W11_NOT_LOGGED_IN;
	t->adopted = 0;
	t->login_gen++;
	for (size_t i = 0; i < t->nobjs; i++) {
		w11_keymat *km = t->objs[i]->km;

		if (km && km->tok == t) {
			w11_keymat_forget(km);
			km->always_auth = -1;
		}
	}
	if (t->sref) {
		wks_store_set_property(t->sref->st,
				       "wolfjce.keystore.kekCacheEnabled",
				       "false");
		wks_store_cache_clear(t->sref->st);
	}
}

w11_obj *w11_token_find(w11_token *t, CK_OBJECT_HANDLE h)
{
	for (size_t i = 0; i < t->nobjs; i++)
		if (t->objs[i]->handle == h)
			return t->objs[i];
	return NULL;
}

int w11_obj_visible(const w11_token *t, const w11_obj *o)
{
	return !(o->flags & W11_OF_PRIVATE) || t->login == CKU_USER;
}

CK_RV w11_token_add_obj(w11_token *t, w11_obj *o)
{
	if (t->nobjs == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		w11_obj **nv = realloc(t->objs, cap * sizeof(*nv));

		if (!nv)
			return CKR_HOST_MEMORY;
		t->objs = nv;
		t->cap = cap;
	}
	t->objs[t->nobjs++] = o;
	return CKR_OK;
}

void w11_token_remove_obj(w11_token *t, CK_OBJECT_HANDLE h)
{
	for (size_t i = 0; i < t->nobjs; i++)
		if (t->objs[i]->handle == h) {
			w11_obj_free(t->objs[i]);
			memmove(&t->objs[i], &t->objs[i + 1],
				(t->nobjs - i - 1) * sizeof(t->objs[0]));
			t->nobjs--;
			return;
		}
}

void w11_token_drop_session_objs(w11_token *t, CK_SESSION_HANDLE s)
{
	size_t k = 0;

	for (size_t i = 0; i < t->nobjs; i++) {
		w11_obj *o = t->objs[i];

		if (!(o->flags & W11_OF_TOKEN) && o->owner == s)
			w11_obj_free(o);
		else
			t->objs[k++] = o;
	}
	t->nobjs = k;
}

/* ---- decrypting keys --------------------------------------------------- */

static CK_RV decrypt(w11_storeref *r, const char *alias, int is_secret,
		     const char *pin, size_t pin_len, EVP_PKEY **pkey,
		     unsigned char **sec, size_t *sec_len)
{
	wks_key *k = NULL;
	int err;

	if (!is_secret) {
		err = wks_store_get_pkey(pkey, r->st, alias, pin, pin_len);
	} else if ((err = wks_store_get_key(&k, r->st, alias, pin,
					    pin_len)) == WKS_OK) {
		const uint8_t *d = wks_key_data(k, sec_len);

		if (!(*sec = OPENSSL_memdup(d, *sec_len ? *sec_len : 1)))
			err = WKS_ERR_NOMEM;
		wks_key_free(k);
	}
	if (err != WKS_OK && err != WKS_ERR_INTEGRITY)
		w11_log_wks(alias, err);
	return err == WKS_OK ? CKR_OK
	       : err == WKS_ERR_INTEGRITY ? CKR_PIN_INCORRECT
	       : err == WKS_ERR_NOTFOUND ? CKR_KEY_HANDLE_INVALID
	       : w11_rv_of_wks(err);
}

CK_RV w11_keymat_get(w11_keymat *km, const char *pin, size_t pin_len,
		     EVP_PKEY **pkey, unsigned char **sec, size_t *sec_len)
{
	w11_token *t = km->tok;
	w11_storeref *r = NULL;
	EVP_PKEY *pk = NULL;
	unsigned char *s = NULL;
	size_t sl = 0;
	char own[1024], *alias = NULL;
	size_t own_len = 0;
	uint64_t gen;
	CK_RV rv;

	if (pkey)
		*pkey = NULL;
	if (sec) {
		*sec = NULL;
		*sec_len = 0;
	}
	if (!t) {
		/* a session key: decrypted since it was made */
		if (km->is_secret) {
			if (!(*sec = OPENSSL_memdup(km->sec, km->sec_len)))
				return CKR_HOST_MEMORY;
			*sec_len = km->sec_len;
		} else {
			if (!km->priv)
				return CKR_KEY_FUNCTION_NOT_PERMITTED;
			EVP_PKEY_up_ref(km->priv);
			*pkey = km->priv;
		}
		return CKR_OK;
	}
	pthread_mutex_lock(&t->lock);
	if (km->gone) {
		pthread_mutex_unlock(&t->lock);
		return CKR_KEY_HANDLE_INVALID;
	}
	if (t->login != CKU_USER) {
		pthread_mutex_unlock(&t->lock);
		return CKR_USER_NOT_LOGGED_IN;
	}
	gen = t->login_gen;
	if (!pin) {
		if (km->always_auth == 1 || km->force_auth) {
			pthread_mutex_unlock(&t->lock);
			return CKR_USER_NOT_LOGGED_IN;
		}
		if (km->login_gen == gen && (km->priv || km->sec)) {
			if (km->priv) {
				EVP_PKEY_up_ref(km->priv);
				*pkey = km->priv;
			} else if (!(*sec = OPENSSL_memdup(km->sec,
							   km->sec_len))) {
				pthread_mutex_unlock(&t->lock);
				return CKR_HOST_MEMORY;
			} else {
				*sec_len = km->sec_len;
			}
			pthread_mutex_unlock(&t->lock);
			return CKR_OK;
		}
		if (t->pin.len > sizeof(own)) {
			pthread_mutex_unlock(&t->lock);
			return CKR_PIN_LEN_RANGE;
		}
		memcpy(own, t->pin.p, t->pin.len);
		own_len = t->pin.len;
		pin = own;
		pin_len = own_len;
	}
	r = w11_storeref_get(t);
	alias = km->alias ? strdup(km->alias) : NULL;
	pthread_mutex_unlock(&t->lock);
	if (!r || !alias) {
		rv = r ? CKR_HOST_MEMORY : CKR_KEY_HANDLE_INVALID;
		goto done;
	}
	rv = decrypt(r, alias, km->is_secret, pin, pin_len, &pk, &s, &sl);
	if (own_len) {
		/* with the store password: learn whether the key has its
		 * own password, and keep the key for this login */
		pthread_mutex_lock(&t->lock);
		if (km->gone) {
			rv = CKR_KEY_HANDLE_INVALID;
		} else if (gen == t->login_gen) {
			if (rv == CKR_PIN_INCORRECT) {
				km->always_auth = 1;
			} else if (rv == CKR_OK) {
				km->always_auth = 0;
				km->login_gen = gen;
				if (km->is_secret && !km->sec &&
				    (km->sec = OPENSSL_memdup(s, sl ? sl : 1)))
					km->sec_len = sl;
				else if (!km->is_secret && !km->priv &&
					 EVP_PKEY_up_ref(pk))
					km->priv = pk;
			}
		}
		pthread_mutex_unlock(&t->lock);
		if (rv == CKR_PIN_INCORRECT)
			rv = CKR_USER_NOT_LOGGED_IN;
	}
	if (rv == CKR_OK) {
		if (pkey) {
			*pkey = pk;
			pk = NULL;
		}
		if (sec) {
			*sec = s;
			*sec_len = sl;
			s = NULL;
		}
	}
done:
	EVP_PKEY_free(pk);
	OPENSSL_clear_free(s, sl);
	OPENSSL_cleanse(own, sizeof(own));
	free(alias);
	w11_storeref_put(r);
	return rv;
}

CK_RV w11_keymat_resolve(w11_keymat *km)
{
	EVP_PKEY *pk = NULL;
	unsigned char *s = NULL;
	size_t sl = 0;
	CK_RV rv;

	if (!km->tok)
		return CKR_OK;
	rv = w11_keymat_get(km, NULL, 0, &pk, &s, &sl);
	EVP_PKEY_free(pk);
	OPENSSL_clear_free(s, sl);
	return rv == CKR_USER_NOT_LOGGED_IN ? CKR_OK : rv;
}
