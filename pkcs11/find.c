/*
 * C_FindObjectsInit, C_FindObjects, C_FindObjectsFinal,
 * C_GetAttributeValue and C_GetObjectSize.
 *
 * C_FindObjectsInit first reloads the store if its file changed, so a
 * search sees what wks(1) or wolfJCE wrote since.  Two attributes of a
 * token key are only known once the key was decrypted with the login's
 * PIN (CKA_ALWAYS_AUTHENTICATE: is its password the store's?, and a
 * secret key's CKA_VALUE_LEN): a search or a read that asks for them
 * decrypts first (once per login), with no lock held.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "p11.h"

static int needs_resolve(const w11_obj *o, CK_ATTRIBUTE_TYPE t)
{
	const w11_keymat *km = o->km;

	if (!km || !km->tok)
		return 0;
	if (t == CKA_ALWAYS_AUTHENTICATE &&
	    (o->cls == CKO_PRIVATE_KEY || o->cls == CKO_SECRET_KEY))
		return km->always_auth < 0;
	if (t == CKA_VALUE_LEN && o->cls == CKO_SECRET_KEY)
		return km->sec_len == 0 && km->always_auth != 1;
	return 0;
}

/* Decrypt the keys whose attributes the template needs.  Called with
 * the token's lock held; returns with it held (it is let go meanwhile). */
static void resolve(w11_token *t, const CK_ATTRIBUTE *tmpl, CK_ULONG n,
		    CK_OBJECT_HANDLE only)
{
	w11_keymat **v;
	size_t k = 0;

	if (t->login != CKU_USER || !t->nobjs)
		return;
	if (!(v = malloc(t->nobjs * sizeof(*v))))
		return;
	for (size_t i = 0; i < t->nobjs; i++) {
		w11_obj *o = t->objs[i];

		if (only != CK_INVALID_HANDLE && o->handle != only)
			continue;
		for (CK_ULONG j = 0; j < n; j++)
			if (needs_resolve(o, tmpl[j].type)) {
				v[k++] = w11_keymat_ref(o->km);
				break;
			}
	}
	if (k) {
		pthread_mutex_unlock(&t->lock);
		for (size_t i = 0; i < k; i++) {
			(void)w11_keymat_resolve(v[i]);
			w11_keymat_unref(v[i]);
		}
		pthread_mutex_lock(&t->lock);
	}
	free(v);
}

static int matches(const w11_obj *o, const CK_ATTRIBUTE *tmpl, CK_ULONG n)
{
	int has_idlabel = 0, token_false = 0;

	for (CK_ULONG i = 0; i < n; i++) {
		const unsigned char *val;
		unsigned char *tmp = NULL;
		CK_ULONG len;
		int ok;

		if (tmpl[i].type == CKA_ID || tmpl[i].type == CKA_LABEL)
			has_idlabel = 1;
		if (tmpl[i].type == CKA_TOKEN && tmpl[i].ulValueLen == 1 &&
		    tmpl[i].pValue && !*(CK_BBOOL *)tmpl[i].pValue)
			token_false = 1;
		if (w11_obj_attr(o, tmpl[i].type, &val, &len, &tmp) != CKR_OK)
			return 0;
		ok = len == tmpl[i].ulValueLen &&
		     (len == 0 || memcmp(val, tmpl[i].pValue, len) == 0);
		OPENSSL_clear_free(tmp, len);
		if (!ok)
			return 0;
	}
	/* A copy that kept its source's CKA_ID and CKA_LABEL is not found
	 * by them (unless asked for as a session object): programs that
	 * look a key up by id or label expect the token's one object, and
	 * pkcs11-provider's copies (its key cache) would be a second. */
	if ((o->flags & W11_OF_HIDDEN) && has_idlabel && !token_false)
		return 0;
	return 1;
}

CK_RV C_FindObjectsInit(CK_SESSION_HANDLE h, CK_ATTRIBUTE_PTR tmpl,
			CK_ULONG n)
{
	w11_session *s;
	w11_token *t;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if ((rv = w11_session_get(h, &s)) != CKR_OK)
		goto done;
	t = s->tok;
	if (s->finding) {
		rv = CKR_OPERATION_ACTIVE;
		goto put;
	}
	if ((rv = w11_tmpl_check_ex(tmpl, n, 1)) != CKR_OK)
		goto put;
	/* a change made by another program is seen now; a store never read
	 * (unreadable) is an error, not an empty token */
	if ((rv = w11_token_refresh(t)) != CKR_OK)
		goto put;
	pthread_mutex_lock(&t->lock);
	resolve(t, tmpl, n, CK_INVALID_HANDLE);
	free(s->found);
	s->found = NULL;
	s->nfound = s->pos = 0;
	if (t->nobjs && !(s->found = malloc(t->nobjs * sizeof(*s->found)))) {
		pthread_mutex_unlock(&t->lock);
		rv = CKR_HOST_MEMORY;
		goto put;
	}
	for (size_t i = 0; i < t->nobjs; i++) {
		w11_obj *o = t->objs[i];

		if (w11_obj_visible(t, o) && matches(o, tmpl, n))
			s->found[s->nfound++] = o->handle;
	}
	pthread_mutex_unlock(&t->lock);
	s->finding = 1;
put:
	w11_session_put(s);
done:
	w11_leave();
	return rv;
}

CK_RV C_FindObjects(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE_PTR out,
		    CK_ULONG max, CK_ULONG_PTR count)
{
	w11_session *s;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if ((rv = w11_session_get(h, &s)) != CKR_OK)
		goto done;
	if (!count || (!out && max)) {
		rv = CKR_ARGUMENTS_BAD;
	} else if (!s->finding) {
		rv = CKR_OPERATION_NOT_INITIALIZED;
	} else {
		CK_ULONG k = 0;

		while (k < max && s->pos < s->nfound)
			out[k++] = s->found[s->pos++];
		*count = k;
	}
	w11_session_put(s);
done:
	w11_leave();
	return rv;
}

CK_RV C_FindObjectsFinal(CK_SESSION_HANDLE h)
{
	w11_session *s;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if ((rv = w11_session_get(h, &s)) != CKR_OK)
		goto done;
	if (!s->finding) {
		rv = CKR_OPERATION_NOT_INITIALIZED;
	} else {
		free(s->found);
		s->found = NULL;
		s->nfound = s->pos = 0;
		s->finding = 0;
	}
	w11_session_put(s);
done:
	w11_leave();
	return rv;
}

CK_RV C_GetAttributeValue(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE ho,
			  CK_ATTRIBUTE_PTR tmpl, CK_ULONG n)
{
	w11_session *s;
	w11_token *t;
	w11_obj *o;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if ((rv = w11_session_get(h, &s)) != CKR_OK)
		goto done;
	t = s->tok;
	if (!tmpl && n) {
		rv = CKR_ARGUMENTS_BAD;
		goto put;
	}
	pthread_mutex_lock(&t->lock);
	if ((o = w11_token_find(t, ho)) && w11_obj_visible(t, o)) {
		resolve(t, tmpl, n, ho);
		o = w11_token_find(t, ho);
	}
	if (!o || !w11_obj_visible(t, o)) {
		rv = CKR_OBJECT_HANDLE_INVALID;
	} else {
		for (CK_ULONG i = 0; i < n; i++) {
			const unsigned char *val;
			unsigned char *tmp = NULL;
			CK_ULONG len = 0;
			CK_RV r = w11_obj_attr(o, tmpl[i].type, &val, &len,
					       &tmp);

			if (r == CKR_OK)
				r = w11_attr_out(&tmpl[i], val, len);
			else
				tmpl[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
			OPENSSL_clear_free(tmp, len);
			if (r != CKR_OK && rv == CKR_OK)
				rv = r;
		}
	}
	pthread_mutex_unlock(&t->lock);
put:
	w11_session_put(s);
done:
	w11_leave();
	return rv;
}

CK_RV C_GetObjectSize(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE ho,
		      CK_ULONG_PTR size)
{
	w11_session *s;
	w11_obj *o;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if ((rv = w11_session_get(h, &s)) != CKR_OK)
		goto done;
	if (!size) {
		rv = CKR_ARGUMENTS_BAD;
	} else {
		pthread_mutex_lock(&s->tok->lock);
		o = w11_token_find(s->tok, ho);
		if (!o || !w11_obj_visible(s->tok, o)) {
			rv = CKR_OBJECT_HANDLE_INVALID;
		} else {
			CK_ULONG sum = 0;

			for (size_t i = 0; i < o->attrs.n; i++)
				sum += o->attrs.v[i].len;
			*size = sum;
		}
		pthread_mutex_unlock(&s->tok->lock);
	}
	w11_session_put(s);
done:
	w11_leave();
	return rv;
}
