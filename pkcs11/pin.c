/*
 * PINs and new tokens: C_SetPIN, C_InitPIN (the store password, and every
 * key password that was the old one) and C_InitToken (a store emptied,
 * or created at the configured path).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "p11.h"

/* ---- PINs ------------------------------------------------------------------ */

typedef struct {
	const char *old;
	size_t old_len;
	w11_token *tok;
} pin_ctx;

/* Every key whose password was the old store password takes the new
 * one; a key with a password of its own keeps it. */
static CK_RV setpin_fn(wks_store *st, const char *pin, size_t n, void *arg)
{
	pin_ctx *c = arg;
	char **al = NULL;
	size_t na = 0;
	CK_RV rv = CKR_OK;
	int err;

	if ((err = wks_store_aliases(&al, &na, st)) != WKS_OK)
		return w11_rv_of_set(err);
	for (size_t i = 0; i < na && rv == CKR_OK; i++) {
		wks_entry_type ty = wks_store_entry_type(st, al[i]);

		if (ty != WKS_ENTRY_PRIVATE_KEY && ty != WKS_ENTRY_SECRET_KEY)
			continue;
		err = wks_store_change_key_password(st, al[i], c->old,
						    c->old_len, pin, n);
		if (err != WKS_OK && err != WKS_ERR_INTEGRITY) {
			w11_log_wks(al[i], err);
			rv = w11_rv_of_set(err);
		} else if (err == WKS_OK) {
			/* the same key: its objects keep their handles */
			rv = w11_token_resealed(c->tok, al[i], NULL);
		}
	}
	wks_aliases_free(al);
	return rv;
}

static CK_RV change_pin(w11_token *t, const char *old, size_t old_len,
			const char *pin, size_t len)
{
	pin_ctx c = { old, old_len, t };
	CK_RV rv;

	if (!old || !pin)
		return CKR_ARGUMENTS_BAD;
	if (!old_len || !len || old_len > 1024 || len > 1024)
		return CKR_PIN_LEN_RANGE;
	pthread_mutex_lock(&t->edit);
	rv = w11_token_edit_ex(t, old, old_len, pin, len, setpin_fn, &c);
	if (rv == CKR_OK) {
		pthread_mutex_lock(&t->lock);
		if (t->login != W11_NOT_LOGGED_IN)
			rv = w11_secret_set(&t->pin, pin, len);
		pthread_mutex_unlock(&t->lock);
		if (rv == CKR_OK)
			w11_share_publish(t);
	}
	pthread_mutex_unlock(&t->edit);
	return rv;
}

static CK_RV set_pin(w11_session *s, CK_UTF8CHAR_PTR old, CK_ULONG old_len,
		     CK_UTF8CHAR_PTR pin, CK_ULONG len)
{
	if (w11_token_writable(s->tok) != CKR_OK)
		return CKR_TOKEN_WRITE_PROTECTED;
	if (!(s->flags & CKF_RW_SESSION))
		return CKR_SESSION_READ_ONLY;
	return change_pin(s->tok, (const char *)old, old_len,
			  (const char *)pin, len);
}

CK_RV C_SetPIN(CK_SESSION_HANDLE h, CK_UTF8CHAR_PTR old, CK_ULONG old_len,
	       CK_UTF8CHAR_PTR pin, CK_ULONG len)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, set_pin(s, old, old_len, pin, len));
}

/* The SO's PIN is the store password too: C_InitPIN sets a new one. */
static CK_RV init_pin(w11_session *s, CK_UTF8CHAR_PTR pin, CK_ULONG len)
{
	w11_token *t = s->tok;
	char old[1024];
	size_t n;
	CK_RV rv;

	pthread_mutex_lock(&t->lock);
	if (t->login != CKU_SO || t->pin.len > sizeof(old)) {
		pthread_mutex_unlock(&t->lock);
		return CKR_USER_NOT_LOGGED_IN;
	}
	n = t->pin.len;
	memcpy(old, t->pin.p, n);
	pthread_mutex_unlock(&t->lock);
	rv = set_pin(s, (CK_UTF8CHAR_PTR)old, n, pin, len);
	OPENSSL_cleanse(old, sizeof(old));
	return rv;
}

CK_RV C_InitPIN(CK_SESSION_HANDLE h, CK_UTF8CHAR_PTR pin, CK_ULONG len)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, init_pin(s, pin, len));
}

/* ---- C_InitToken ------------------------------------------------------------ */

static CK_RV empty_fn(wks_store *st, const char *pin, size_t n, void *arg)
{
	char **al = NULL;
	size_t na = 0;
	int err;

	(void)pin, (void)n, (void)arg;
	if ((err = wks_store_aliases(&al, &na, st)) != WKS_OK)
		return w11_rv_of_set(err);
	for (size_t i = 0; i < na && err == WKS_OK; i++)
		err = wks_store_delete(st, al[i]);
	wks_aliases_free(al);
	return w11_rv_of_set(err);
}

/* A new store file, created only if none exists (a temporary file in the
 * same folder, link()ed to the name). */
static CK_RV create_store(w11_token *t, const char *pin, size_t len)
{
	wks_store *st = NULL;
	char *tmp = NULL;
	CK_RV rv;
	int fd, err;

	if ((rv = w11_token_new_store(t, &st)) != CKR_OK)
		return rv;
	if (!(tmp = malloc(strlen(t->conf->store) + 16))) {
		rv = CKR_HOST_MEMORY;
		goto done;
	}
	sprintf(tmp, "%s.init-XXXXXX", t->conf->store);
	if ((fd = mkstemp(tmp)) < 0) {
		W11_LOG("%s: %s", tmp, strerror(errno));
		free(tmp);
		tmp = NULL;
		rv = CKR_DEVICE_ERROR;
		goto done;
	}
	close(fd);
	if ((err = wks_store_save_file(st, tmp, pin, len)) != WKS_OK) {
		w11_log_wks("creating the store", err);
		rv = CKR_DEVICE_ERROR;
	} else if (link(tmp, t->conf->store) != 0) {
		W11_LOG("%s: %s", t->conf->store, strerror(errno));
		rv = CKR_DEVICE_ERROR;
	}
done:
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	wks_store_free(st);
	return rv;
}

static CK_RV init_token(CK_SLOT_ID slot, CK_UTF8CHAR_PTR pin, CK_ULONG len,
			CK_UTF8CHAR_PTR label)
{
	w11_token *t = w11_slot_token(slot);
	w11_fileid fid;
	size_t open;
	CK_RV rv;

	(void)label; /* the token's label is the configuration's */
	if (!t)
		return CKR_SLOT_ID_INVALID;
	if (!pin)
		return CKR_ARGUMENTS_BAD;
	if (!len || len > 1024)
		return CKR_PIN_LEN_RANGE;
	if (w11_token_writable(t) != CKR_OK)
		return CKR_TOKEN_WRITE_PROTECTED;
	pthread_mutex_lock(&t->lock);
	open = t->nsessions;
	pthread_mutex_unlock(&t->lock);
	if (open)
		return CKR_SESSION_EXISTS;
	pthread_mutex_lock(&t->edit);
	w11_fileid_of(&fid, t->conf->store);
	/* An existing store is emptied, if the PIN is its password. */
	if (fid.exists)
		rv = w11_token_edit_ex(t, (const char *)pin, len, (const char *)pin, len,
			     empty_fn, NULL);
	else
		rv = create_store(t, (const char *)pin, len);
	pthread_mutex_unlock(&t->edit);
	if (rv == CKR_OK)
		rv = w11_token_refresh(t);
	W11_LOG("C_InitToken \"%s\": %s the store %s", t->conf->label,
		rv != CKR_OK ? "failed to make" : fid.exists ? "emptied"
		: "created", t->conf->store);
	return rv;
}

CK_RV C_InitToken(CK_SLOT_ID slot, CK_UTF8CHAR_PTR pin, CK_ULONG len,
		  CK_UTF8CHAR_PTR label)
{
	CK_RV rv = w11_enter();

	if (rv != CKR_OK)
		return rv;
	rv = init_token(slot, pin, len, label);
	w11_leave();
	return rv;
}
