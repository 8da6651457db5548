/*
 * Sessions, login and logout.
 *
 * The session table is sorted by handle (handles only grow) and read
 * under a shared lock: a lookup takes a reference on the session and lets
 * the table go, then takes the session's own mutex, so calls on
 * different sessions never wait for each other.
 *
 * Login is per application and per token, as PKCS#11 says: C_Login in
 * one session logs in every session of that token; C_Logout, closing
 * the last session of the token, C_CloseAllSessions and C_Finalize log
 * it out, which wipes the PIN, the decrypted keys and the KEK cache.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "p11.h"

static w11_session *sess_find_locked(CK_SESSION_HANDLE h, size_t *pos)
{
	size_t lo = 0, hi = w11_g.nsess;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w11_g.sess[mid]->h == h) {
			if (pos)
				*pos = mid;
			return w11_g.sess[mid];
		}
		if (w11_g.sess[mid]->h < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void sess_unref(w11_session *s)
{
	if (atomic_fetch_sub(&s->refs, 1) == 1) {
		pthread_mutex_destroy(&s->mu);
		free(s->found);
		free(s);
	}
}

CK_RV w11_session_get(CK_SESSION_HANDLE h, w11_session **out)
{
	w11_session *s;

	*out = NULL;
	pthread_rwlock_rdlock(&w11_g.sess_lock);
	if ((s = sess_find_locked(h, NULL)) != NULL)
		atomic_fetch_add(&s->refs, 1);
	pthread_rwlock_unlock(&w11_g.sess_lock);
	if (!s)
		return CKR_SESSION_HANDLE_INVALID;
	pthread_mutex_lock(&s->mu);
	if (s->closed) {
		pthread_mutex_unlock(&s->mu);
		sess_unref(s);
		return CKR_SESSION_HANDLE_INVALID;
	}
	*out = s;
	return CKR_OK;
}

void w11_session_put(w11_session *s)
{
	if (!s)
		return;
	pthread_mutex_unlock(&s->mu);
	sess_unref(s);
}

void w11_op_end(w11_op *op)
{
	EVP_PKEY_CTX_free(op->pctx);
	EVP_MD_CTX_free(op->mdctx);
	EVP_MAC_CTX_free(op->mac);
	EVP_CIPHER_CTX_free(op->cctx);
	EVP_PKEY_free(op->pkey);
	w11_keymat_unref(op->km);
	OPENSSL_clear_free(op->buf, op->cap);
	OPENSSL_clear_free(op->sec, op->sec_len);
	OPENSSL_clear_free(op->aad, op->aad_len);
	OPENSSL_cleanse(op, sizeof(*op));
	memset(op, 0, sizeof(*op));
}

void w11_session_cache_clear(w11_session *s)
{
	for (int i = 0; i < 2; i++) {
		EVP_PKEY_CTX_free(s->cache[i].pctx);
		EVP_PKEY_free(s->cache[i].pkey);
		w11_keymat_unref(s->cache[i].km);
		memset(&s->cache[i], 0, sizeof(s->cache[i]));
	}
}

static void session_clear(w11_session *s)
{
	for (int k = 0; k < W11_OP_KINDS; k++)
		w11_op_end(&s->op[k]);
	w11_session_cache_clear(s);
	free(s->found);
	s->found = NULL;
	s->finding = 0;
}

CK_STATE w11_session_state(const w11_session *s)
{
	w11_token *t = s->tok;
	CK_USER_TYPE u;
	int rw = !!(s->flags & CKF_RW_SESSION);

	pthread_mutex_lock(&t->lock);
	u = t->login;
	pthread_mutex_unlock(&t->lock);
	if (u == CKU_SO)
		return CKS_RW_SO_FUNCTIONS;
	if (u == CKU_USER)
		return rw ? CKS_RW_USER_FUNCTIONS : CKS_RO_USER_FUNCTIONS;
	return rw ? CKS_RW_PUBLIC_SESSION : CKS_RO_PUBLIC_SESSION;
}

/* After a logout: end every key operation of the token's sessions and
 * drop their kept contexts (both hold decrypted keys).  Called with no
 * lock held. */
void w11_sessions_after_logout(w11_token *t)
{
	w11_session **v = NULL;
	size_t n = 0;

	pthread_rwlock_rdlock(&w11_g.sess_lock);
	if (w11_g.nsess && (v = malloc(w11_g.nsess * sizeof(*v))) != NULL)
		for (size_t i = 0; i < w11_g.nsess; i++)
			if (w11_g.sess[i]->tok == t) {
				atomic_fetch_add(&w11_g.sess[i]->refs, 1);
				v[n++] = w11_g.sess[i];
			}
	pthread_rwlock_unlock(&w11_g.sess_lock);
	for (size_t i = 0; i < n; i++) {
		pthread_mutex_lock(&v[i]->mu);
		for (int k = 0; k < W11_OP_KINDS; k++)
			if (v[i]->op[k].km)
				w11_op_end(&v[i]->op[k]);
		w11_session_cache_clear(v[i]);
		pthread_mutex_unlock(&v[i]->mu);
		sess_unref(v[i]);
	}
	free(v);
}

void w11_sessions_free_all(void)
{
	for (size_t i = 0; i < w11_g.nsess; i++) {
		session_clear(w11_g.sess[i]);
		w11_g.sess[i]->closed = 1;
		sess_unref(w11_g.sess[i]);
	}
	free(w11_g.sess);
	w11_g.sess = NULL;
	w11_g.nsess = w11_g.sess_cap = 0;
}

/* ---- C_OpenSession, C_CloseSession, C_CloseAllSessions ------------------ */

CK_RV C_OpenSession(CK_SLOT_ID slot, CK_FLAGS flags, CK_VOID_PTR app,
		    CK_NOTIFY notify, CK_SESSION_HANDLE_PTR ph)
{
	w11_token *t;
	w11_session *s = NULL;
	CK_RV rv;

	(void)app, (void)notify;
	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if (!ph) {
		rv = CKR_ARGUMENTS_BAD;
		goto done;
	}
	if (!(t = w11_slot_token(slot))) {
		rv = CKR_SLOT_ID_INVALID;
		goto done;
	}
	if (!(flags & CKF_SERIAL_SESSION)) {
		rv = CKR_SESSION_PARALLEL_NOT_SUPPORTED;
		goto done;
	}
	if ((flags & CKF_RW_SESSION) && t->conf->read_only) {
		rv = CKR_TOKEN_WRITE_PROTECTED;
		goto done;
	}
	(void)w11_share_adopt(t);
	if (!(s = calloc(1, sizeof(*s)))) {
		rv = CKR_HOST_MEMORY;
		goto done;
	}
	atomic_init(&s->refs, 1);
	pthread_mutex_init(&s->mu, NULL);
	s->tok = t;
	s->flags = flags & (CKF_SERIAL_SESSION | CKF_RW_SESSION);
	pthread_mutex_lock(&t->lock);
	if (t->login == CKU_SO && !(flags & CKF_RW_SESSION)) {
		pthread_mutex_unlock(&t->lock);
		rv = CKR_SESSION_READ_WRITE_SO_EXISTS;
		goto done;
	}
	t->nsessions++;
	if (flags & CKF_RW_SESSION)
		t->nrw++;
	pthread_mutex_unlock(&t->lock);
	pthread_rwlock_wrlock(&w11_g.sess_lock);
	if (w11_g.nsess == w11_g.sess_cap) {
		size_t cap = w11_g.sess_cap ? w11_g.sess_cap * 2 : 16;
		w11_session **nv = realloc(w11_g.sess, cap * sizeof(*nv));

		if (!nv) {
			pthread_rwlock_unlock(&w11_g.sess_lock);
			pthread_mutex_lock(&t->lock);
			t->nsessions--;
			if (flags & CKF_RW_SESSION)
				t->nrw--;
			pthread_mutex_unlock(&t->lock);
			rv = CKR_HOST_MEMORY;
			goto done;
		}
		w11_g.sess = nv;
		w11_g.sess_cap = cap;
	}
	s->h = w11_g.next_sess++;
	w11_g.sess[w11_g.nsess++] = s;
	*ph = s->h;
	s = NULL;
	pthread_rwlock_unlock(&w11_g.sess_lock);
done:
	if (s) {
		pthread_mutex_destroy(&s->mu);
		free(s);
	}
	w11_leave();
	return rv;
}

/* Close a session already taken out of the table. */
static void close_one(w11_session *s)
{
	w11_token *t = s->tok;
	int last = 0;

	pthread_mutex_lock(&s->mu);
	session_clear(s);
	s->closed = 1;
	pthread_mutex_unlock(&s->mu);
	pthread_mutex_lock(&t->edit);
	pthread_mutex_lock(&t->lock);
	w11_token_drop_session_objs(t, s->h);
	t->nsessions--;
	if (s->flags & CKF_RW_SESSION)
		t->nrw--;
	if (t->nsessions == 0 && t->login != W11_NOT_LOGGED_IN) {
		/* the application's last session: its login ends */
		w11_token_logout_locked(t);
		last = 1;
	}
	pthread_mutex_unlock(&t->lock);
	pthread_mutex_unlock(&t->edit);
	if (last)
		W11_LOG("token \"%s\": last session closed: logged out",
			t->conf->label);
	sess_unref(s);
}

CK_RV C_CloseSession(CK_SESSION_HANDLE h)
{
	w11_session *s;
	size_t pos;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	pthread_rwlock_wrlock(&w11_g.sess_lock);
	if ((s = sess_find_locked(h, &pos)) != NULL) {
		memmove(&w11_g.sess[pos], &w11_g.sess[pos + 1],
			(w11_g.nsess - pos - 1) * sizeof(w11_g.sess[0]));
		w11_g.nsess--;
	}
	pthread_rwlock_unlock(&w11_g.sess_lock);
	if (s)
		close_one(s);
	else
		rv = CKR_SESSION_HANDLE_INVALID;
	w11_leave();
	return rv;
}

CK_RV C_CloseAllSessions(CK_SLOT_ID slot)
{
	w11_token *t;
	w11_session **v = NULL;
	size_t n = 0, k = 0;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if (!(t = w11_slot_token(slot))) {
		rv = CKR_SLOT_ID_INVALID;
		goto done;
	}
	pthread_rwlock_wrlock(&w11_g.sess_lock);
	if (w11_g.nsess && !(v = malloc(w11_g.nsess * sizeof(*v)))) {
		pthread_rwlock_unlock(&w11_g.sess_lock);
		rv = CKR_HOST_MEMORY;
		goto done;
	}
	for (size_t i = 0; i < w11_g.nsess; i++) {
		if (w11_g.sess[i]->tok == t)
			v[n++] = w11_g.sess[i];
		else
			w11_g.sess[k++] = w11_g.sess[i];
	}
	w11_g.nsess = k;
	pthread_rwlock_unlock(&w11_g.sess_lock);
	for (size_t i = 0; i < n; i++)
		close_one(v[i]);
	/* also when no session was open */
	pthread_mutex_lock(&t->edit);
	pthread_mutex_lock(&t->lock);
	if (t->login != W11_NOT_LOGGED_IN)
		w11_token_logout_locked(t);
	pthread_mutex_unlock(&t->lock);
	pthread_mutex_unlock(&t->edit);
	free(v);
done:
	w11_leave();
	return rv;
}

CK_RV C_GetSessionInfo(CK_SESSION_HANDLE h, CK_SESSION_INFO_PTR info)
{
	w11_session *s;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if (!info) {
		rv = CKR_ARGUMENTS_BAD;
	} else if ((rv = w11_session_get(h, &s)) == CKR_OK) {
		memset(info, 0, sizeof(*info));
		info->slotID = s->tok->slot;
		info->state = w11_session_state(s);
		info->flags = s->flags;
		w11_session_put(s);
	}
	w11_leave();
	return rv;
}

CK_RV w11_session_cancel(CK_SESSION_HANDLE h, CK_FLAGS flags)
{
	static const struct {
		CK_FLAGS f;
		int k;
	} map[] = {
		{ CKF_SIGN, W11_OP_SIGN },     { CKF_VERIFY, W11_OP_VERIFY },
		{ CKF_ENCRYPT, W11_OP_ENCRYPT }, { CKF_DECRYPT, W11_OP_DECRYPT },
		{ CKF_DIGEST, W11_OP_DIGEST },
	};
	w11_session *s;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if ((rv = w11_session_get(h, &s)) == CKR_OK) {
		for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (flags & map[i].f)
				w11_op_end(&s->op[map[i].k]);
		w11_session_put(s);
	}
	w11_leave();
	return rv;
}

/* ---- C_Login, C_Logout ------------------------------------------------------ */

static CK_RV login(w11_session *s, CK_USER_TYPE u, const char *pin,
		   size_t len)
{
	w11_token *t = s->tok;
	wks_store *st = NULL;
	w11_fileid fid;
	CK_RV rv;
	int err, replace = 0;

	pthread_mutex_lock(&t->edit);
	pthread_mutex_lock(&t->lock);
	if (t->login != W11_NOT_LOGGED_IN && t->adopted && u == CKU_USER) {
		/* The first C_Login of this process on a login it took over
		 * (share.c): the shared password matches, no PBKDF2
		 * (programs that log in whenever they have a PIN, such as
		 * pkcs11-tool, take CKR_USER_ALREADY_LOGGED_IN as a
		 * failure).  Any other PIN is checked against the store as
		 * without a shared login, so that a wrong guess costs a store
		 * MAC check all the same (p11-kit server's clients can try
		 * PINs), and only replaces the shared login if the store does
		 * open with it. */
		if (len == t->pin.len && CRYPTO_memcmp(pin, t->pin.p, len) == 0) {
			t->adopted = 0;
			pthread_mutex_unlock(&t->lock);
			rv = CKR_OK;
			goto done;
		}
		replace = 1;
	} else if (t->login != W11_NOT_LOGGED_IN) {
		rv = t->login == u ? CKR_USER_ALREADY_LOGGED_IN
				   : CKR_USER_ANOTHER_ALREADY_LOGGED_IN;
		pthread_mutex_unlock(&t->lock);
		goto done;
	}
	if (u == CKU_SO && t->nsessions > t->nrw) {
		pthread_mutex_unlock(&t->lock);
		rv = CKR_SESSION_READ_ONLY_EXISTS;
		goto done;
	}
	pthread_mutex_unlock(&t->lock);
	w11_fileid_of(&fid, t->conf->store);
	if (!fid.exists) {
		W11_LOG("token \"%s\": C_Login: no store %s: the token is "
			"not initialised", t->conf->label, t->conf->store);
		rv = CKR_USER_PIN_NOT_INITIALIZED;
		goto done;
	}
	if ((rv = w11_token_new_store(t, &st)) != CKR_OK)
		goto done;
	/* The password opens the store: its MAC is verified with it. */
	err = wks_store_load_file(st, t->conf->store, pin, len);
	if (err != WKS_OK) {
		if (err != WKS_ERR_INTEGRITY)
			w11_log_wks(t->conf->store, err);
		rv = err == WKS_ERR_INTEGRITY ? CKR_PIN_INCORRECT
		     : err == WKS_ERR_INVALID ? CKR_PIN_LEN_RANGE
		     : err == WKS_ERR_NOMEM ? CKR_HOST_MEMORY : CKR_DEVICE_ERROR;
		wks_store_free(st);
		goto done;
	}
	if (u == CKU_USER)
		wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
				       "true");
	pthread_mutex_lock(&t->lock);
	if (replace && t->login != W11_NOT_LOGGED_IN)
		w11_token_logout_locked(t);
	rv = w11_secret_set(&t->pin, pin, len);
	if (rv == CKR_OK) {
		t->login = u;
		t->login_gen++;
	}
	pthread_mutex_unlock(&t->lock);
	if (rv != CKR_OK) {
		wks_store_free(st);
		goto done;
	}
	rv = w11_token_install(t, st, &fid);
	W11_LOG("token \"%s\": logged in (%s)", t->conf->label,
		u == CKU_SO ? "SO" : "user");
	/* a login with the PIN: a new shared login, the earlier one ended */
	if (rv == CKR_OK && u == CKU_USER)
		w11_share_login(t);
done:
	pthread_mutex_unlock(&t->edit);
	return rv;
}

CK_RV C_Login(CK_SESSION_HANDLE h, CK_USER_TYPE u, CK_UTF8CHAR_PTR pin,
	      CK_ULONG len)
{
	w11_session *s;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if ((rv = w11_session_get(h, &s)) != CKR_OK)
		goto done;
	if (!pin) {
		/* no protected authentication path */
		rv = CKR_ARGUMENTS_BAD;
	} else if (len == 0 || len > 1024) {
		rv = CKR_PIN_LEN_RANGE;
	} else if (u == CKU_CONTEXT_SPECIFIC) {
		rv = w11_context_login(s, (const char *)pin, len);
	} else if (u == CKU_USER || u == CKU_SO) {
		/* A login shared by another process of the user is this
		 * process's too (CKR_USER_ALREADY_LOGGED_IN). */
		if (u == CKU_USER)
			(void)w11_share_adopt(s->tok);
		rv = login(s, u, (const char *)pin, len);
	} else {
		rv = CKR_USER_TYPE_INVALID;
	}
	w11_session_put(s);
done:
	w11_leave();
	return rv;
}

CK_RV C_Logout(CK_SESSION_HANDLE h)
{
	w11_session *s;
	w11_token *t;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if ((rv = w11_session_get(h, &s)) != CKR_OK)
		goto done;
	t = s->tok;
	/* let the session go: the sessions are visited below */
	w11_session_put(s);
	pthread_mutex_lock(&t->edit);
	pthread_mutex_lock(&t->lock);
	if (t->login == W11_NOT_LOGGED_IN)
		rv = CKR_USER_NOT_LOGGED_IN;
	else
		w11_token_logout_locked(t);
	pthread_mutex_unlock(&t->lock);
	/* An explicit logout ends the login for all the user's processes,
	 * also from a process that is not logged in itself (one whose
	 * takeover failed, wks-pkcs11-logout on a stale record): after any
	 * C_Logout nobody takes a login over until a new C_Login. */
	w11_share_revoke(t);
	pthread_mutex_unlock(&t->edit);
	if (rv == CKR_OK) {
		w11_sessions_after_logout(t);
		W11_LOG("token \"%s\": logged out", t->conf->label);
	}
done:
	w11_leave();
	return rv;
}
