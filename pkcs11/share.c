/*
 * The shared login (docs/PKCS11.md, "Shared login"; a token's
 * `shared-login = yes`): after a C_Login as the user, the module leaves
 * the login in the user's kernel keyring, for the kek-cache TTL: a
 * keyring of its own named "libwks-pkcs11:SERIAL", linked into the
 * user's keyring, holding one "user" key of the same name, the record
 * (sharefmt.h): the store password, the identity of the store file whose
 * MAC that login verified, the derived keys of the keys that open with
 * it, and the login's deadline (the C_Login's time plus the TTL).
 * Another process of the same user whose token is not logged in takes it
 * over (w11_share_adopt): if the store file is still that very file, it
 * loads it, imports the keys (each verified against its entry's MAC; no
 * PBKDF2), and is logged in.  That is how one login reaches every
 * `p11-kit-remote` that `p11-kit server` starts per connection.
 *
 * The login's keyring is its epoch.  Only a C_Login with the PIN makes
 * one (w11_share_login, ending any earlier one).  An edit the module
 * saves, in the process that logged in or in one that took the login
 * over, publishes the record again into that very keyring (found by its
 * id, not by its name) with the same deadline and the time left as its
 * timeout: once a C_Logout anywhere invalidated the keyring, or its
 * timeout passed, the kernel refuses the new record, so nothing revives
 * a login that ended and nothing outlives the deadline.  (Updating a
 * "user" key in place would reset its timeout to none, and a key made by
 * add_key() has none until KEYCTL_SET_TIMEOUT: both the keyring and the
 * record are made in the thread's keyring, their timeouts set, and only
 * then linked where other processes find them.)
 *
 * C_Logout in any process of the user, logged in or not, removes it; its
 * timeout removes it after the TTL; a change of the store file by anyone
 * but the module makes it stale (the next C_Login leaves a new one).
 * Nothing here runs in a process whose real and effective ids differ
 * (w11_privileged(): its user keyring is its caller's).  Failures here
 * never fail a call: the token simply is not shared (debug log).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/keyctl.h>

#include <openssl/crypto.h>

#include "p11.h"
#include "sharefmt.h"

/* The key's permissions: everything for its possessor, and for processes
 * of the same user that do not possess it (another session keyring: a
 * daemon, a systemd service) view, read, write, search and setattr, so
 * that they can find, read, renew and invalidate it.  Nobody else. */
#define SHARE_PERM 0x3f2f0000u /* 0x3f000000 possessor: all six rights;
				* 0x002f0000 user: view 0x01, read 0x02,
				* write 0x04, search 0x08, setattr 0x20
				* (keyctl(2), <keyutils.h>'s KEY_*_*) */

static void describe(char *out, size_t cap, const w11_token *t)
{
	snprintf(out, cap, "libwks-pkcs11:%s", t->serial);
}

/* The id of the key of that type and name under `ring` (searched
 * recursively), or -1. */
static long search(long ring, const char *type, const char *d)
{
	return syscall(SYS_keyctl, KEYCTL_SEARCH, ring, type, d, 0);
}

static int64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts); /* the kernel's key expiry clock */
	return (int64_t)ts.tv_sec;
}

/* Nothing is shared: the token does not ask for it, or the process's
 * user keyring is its caller's (a set-user-ID program: the password would
 * go to the caller, and the caller could plant a record). */
static int off(const w11_token *t)
{
	if (!t->conf->shared_login)
		return 1;
	if (w11_privileged()) {
		W11_LOG("token \"%s\": shared login: off in this process (its "
			"real and effective ids differ: set-user-ID or "
			"set-group-ID)", t->conf->label);
		return 1;
	}
	return 0;
}

static void rec_fid(w11_share_rec *r, const w11_fileid *f)
{
	r->dev = (uint64_t)f->dev;
	r->ino = (uint64_t)f->ino;
	r->size = (uint64_t)f->size;
	r->mtime_s = (int64_t)f->mtime.tv_sec;
	r->mtime_ns = (uint32_t)f->mtime.tv_nsec;
	r->ctime_s = (int64_t)f->ctime.tv_sec;
	r->ctime_ns = (uint32_t)f->ctime.tv_nsec;
}

static int rec_fid_eq(const w11_share_rec *r, const w11_fileid *f)
{
	w11_share_rec now;

	if (!f->exists)
		return 0;
	rec_fid(&now, f);
	return r->dev == now.dev && r->ino == now.ino && r->size == now.size &&
	       r->mtime_s == now.mtime_s && r->mtime_ns == now.mtime_ns &&
	       r->ctime_s == now.ctime_s && r->ctime_ns == now.ctime_ns;
}

void w11_share_carry(w11_token *t, wks_store *to)
{
	w11_storeref *r;
	w11_secret pin = { 0 };
	unsigned char *blob = NULL;
	size_t cap = 0, len = 0;

	if (!t->conf->shared_login)
		return;
	pthread_mutex_lock(&t->lock);
	r = t->login == CKU_USER ? w11_storeref_get(t) : NULL;
	if (r && w11_secret_set(&pin, t->pin.p, t->pin.len) != CKR_OK) {
		w11_storeref_put(r);
		r = NULL;
	}
	pthread_mutex_unlock(&t->lock);
	if (!r)
		return;
	wks_store_set_property(to, "wolfjce.keystore.kekCacheEnabled", "true");
	if (wks_store_cache_export(r->st, (const char *)pin.p, pin.len, NULL, 0,
				   &cap) == WKS_OK &&
	    (blob = malloc(cap)) != NULL &&
	    wks_store_cache_export(r->st, (const char *)pin.p, pin.len, blob,
				   cap, &len) == WKS_OK)
		(void)wks_store_cache_import(to, (const char *)pin.p, pin.len,
					     blob, len, NULL);
	if (blob)
		OPENSSL_clear_free(blob, cap);
	w11_secret_free(&pin);
	w11_storeref_put(r);
}

/* Put the token's login into `ring` (its login's keyring) until
 * `deadline`.  0, or -1 (logged). */
static int publish_into(w11_token *t, long ring, int64_t deadline)
{
	w11_storeref *r;
	w11_secret pin = { 0 }, rk = { 0 };
	w11_fileid fid;
	w11_share_rec rec = { 0 };
	unsigned char *blob = NULL, *out = NULL;
	size_t cap = 0, blen = 0, olen = 0, warmed = 0;
	int64_t left = deadline - now_s();
	char d[64];
	long id = -1;
	int err, rc = -1;

	pthread_mutex_lock(&t->lock);
	r = t->login == CKU_USER ? w11_storeref_get(t) : NULL;
	fid = t->fid;
	if (r && (w11_secret_set(&pin, t->pin.p, t->pin.len) != CKR_OK ||
		  (t->rec_key.len &&
		   w11_secret_set(&rk, t->rec_key.p, t->rec_key.len) !=
			   CKR_OK))) {
		w11_storeref_put(r);
		r = NULL;
	}
	pthread_mutex_unlock(&t->lock);
	if (!r || !fid.exists)
		goto done;
	if (left < 1) {
		W11_LOG("token \"%s\": shared login: its TTL is over: not "
			"published again", t->conf->label);
		goto done;
	}
	/* Every key that opens with the store password, in one batch (the
	 * ones cached already are not derived again). */
	if ((err = wks_store_cache_warm(r->st, (const char *)pin.p, pin.len,
					&warmed)) != WKS_OK ||
	    (err = wks_store_cache_export(r->st, (const char *)pin.p, pin.len,
					  NULL, 0, &cap)) != WKS_OK) {
		w11_log_wks("shared login: the keys", err);
		goto done;
	}
	if (!(blob = malloc(cap)) ||
	    wks_store_cache_export(r->st, (const char *)pin.p, pin.len, blob,
				   cap, &blen) != WKS_OK)
		goto done;
	rec_fid(&rec, &fid);
	rec.deadline = deadline;
	rec.pw = pin.p;
	rec.pw_len = pin.len;
	rec.blob = blob;
	rec.blob_len = blen;
	rec.reckey = rk.p;
	rec.reckey_len = rk.len;
	if (!(olen = w11_share_len(&rec))) {
		W11_LOG("token \"%s\": shared login: %zu keys do not fit in "
			"a keyring key (%u bytes): not shared", t->conf->label,
			warmed, W11_SHARE_MAX);
		goto done;
	}
	if (!(out = malloc(olen)))
		goto done;
	w11_share_encode(out, &rec);
	describe(d, sizeof(d), t);
	/* Made in this thread's keyring, where no other process reaches it,
	 * with its permissions and timeout set (a crash in between leaves it
	 * there, and it ends with the thread); then linked into the login's
	 * own keyring, by id, which the kernel refuses once that keyring
	 * was invalidated (C_Logout) or expired (the TTL); a record there
	 * before is replaced. */
	id = syscall(SYS_add_key, "user", d, out, olen, KEY_SPEC_THREAD_KEYRING);
	if (id < 0 ||
	    syscall(SYS_keyctl, KEYCTL_SETPERM, id, SHARE_PERM) < 0 ||
	    syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, id, (unsigned)left) < 0) {
		int e = errno;

		if (id >= 0)
			syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
		W11_LOG("token \"%s\": shared login: the keyring: %s",
			t->conf->label, strerror(e));
		goto done;
	}
	if (syscall(SYS_keyctl, KEYCTL_LINK, id, ring) < 0) {
		int e = errno;

		syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
		if (e == ENOKEY || e == EKEYEXPIRED || e == EKEYREVOKED)
			W11_LOG("token \"%s\": shared login: ended (C_Logout "
				"or its TTL): not published again",
				t->conf->label);
		else
			W11_LOG("token \"%s\": shared login: the keyring: %s",
				t->conf->label, strerror(e));
		goto done;
	}
	syscall(SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_THREAD_KEYRING);
	rc = 0;
	W11_LOG("token \"%s\": shared login: %zu key(s) in the user's "
		"keyring for %lld s", t->conf->label, warmed, (long long)left);
done:
	if (out)
		OPENSSL_clear_free(out, olen);
	if (blob)
		OPENSSL_clear_free(blob, cap);
	w11_secret_free(&pin);
	w11_secret_free(&rk);
	w11_storeref_put(r);
	return rc;
}

void w11_share_publish(w11_token *t)
{
	long ring;
	int64_t deadline;

	if (off(t))
		return;
	pthread_mutex_lock(&t->lock);
	/* only the login that made or took over this keyring */
	ring = t->login == CKU_USER && t->share_gen == t->login_gen
	       ? t->share_ring : 0;
	deadline = t->share_deadline;
	pthread_mutex_unlock(&t->lock);
	if (ring > 0)
		(void)publish_into(t, ring, deadline);
}

void w11_share_login(w11_token *t)
{
	long ttl = t->conf->ttl, ring;
	int64_t deadline = now_s() + ttl;
	char d[64];
	int ok = 0;

	if (off(t))
		return;
	/* A new login ends the earlier one: whoever took that over can no
	 * longer publish into it. */
	w11_share_revoke(t);
	describe(d, sizeof(d), t);
	/* like the record (publish_into): timed out before anyone sees it */
	ring = syscall(SYS_add_key, "keyring", d, NULL, (size_t)0,
		       KEY_SPEC_THREAD_KEYRING);
	if (ring < 0 ||
	    syscall(SYS_keyctl, KEYCTL_SETPERM, ring, SHARE_PERM) < 0 ||
	    syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, ring, (unsigned)ttl) < 0 ||
	    syscall(SYS_keyctl, KEYCTL_LINK, ring, KEY_SPEC_USER_KEYRING) < 0) {
		int e = errno;

		if (ring >= 0)
			syscall(SYS_keyctl, KEYCTL_INVALIDATE, ring);
		W11_LOG("token \"%s\": shared login: the keyring: %s",
			t->conf->label, strerror(e));
		return;
	}
	syscall(SYS_keyctl, KEYCTL_UNLINK, ring, KEY_SPEC_THREAD_KEYRING);
	pthread_mutex_lock(&t->lock);
	if (t->login == CKU_USER) {
		t->share_ring = ring;
		t->share_deadline = deadline;
		t->share_gen = t->login_gen;
		ok = 1;
	}
	pthread_mutex_unlock(&t->lock);
	if (!ok || publish_into(t, ring, deadline) != 0) {
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, ring);
		pthread_mutex_lock(&t->lock);
		if (t->share_ring == ring)
			t->share_ring = 0;
		pthread_mutex_unlock(&t->lock);
	}
}

void w11_share_revoke(w11_token *t)
{
	char d[64];
	long id, own;

	if (off(t))
		return;
	describe(d, sizeof(d), t);
	/* The records (inside a login's keyring, or one an older module
	 * left in the user's keyring itself), then the keyrings. */
	for (int i = 0; i < 16 && (id = search(KEY_SPEC_USER_KEYRING, "user",
					       d)) >= 0; i++)
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
	for (int i = 0; i < 16 && (id = search(KEY_SPEC_USER_KEYRING,
					       "keyring", d)) >= 0; i++)
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
	pthread_mutex_lock(&t->lock);
	own = t->share_ring;
	t->share_ring = 0;
	pthread_mutex_unlock(&t->lock);
	if (own > 0)
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, own);
}

int w11_share_adopt(w11_token *t)
{
	unsigned char *buf = NULL;
	w11_share_rec rec;
	w11_fileid cur, after;
	wks_store *st = NULL;
	size_t imported = 0;
	char d[64];
	long ring, id, n = 0;
	int64_t now;
	int adopted = 0, logged;

	if (off(t))
		return 0;
	pthread_mutex_lock(&t->lock);
	logged = t->login != W11_NOT_LOGGED_IN;
	pthread_mutex_unlock(&t->lock);
	if (logged)
		return 0;
	/* the login's keyring (none once invalidated or expired), then the
	 * record in it */
	describe(d, sizeof(d), t);
	if ((ring = search(KEY_SPEC_USER_KEYRING, "keyring", d)) < 0 ||
	    (id = search(ring, "user", d)) < 0)
		return 0;
	pthread_mutex_lock(&t->edit);
	pthread_mutex_lock(&t->lock);
	logged = t->login != W11_NOT_LOGGED_IN;
	pthread_mutex_unlock(&t->lock);
	if (logged || !(buf = malloc(W11_SHARE_MAX)))
		goto done;
	n = syscall(SYS_keyctl, KEYCTL_READ, id, buf, (size_t)W11_SHARE_MAX);
	if (n < 0 || n > (long)W11_SHARE_MAX ||
	    w11_share_decode(&rec, buf, (size_t)n) != 0) {
		W11_LOG("token \"%s\": shared login: no valid record",
			t->conf->label);
		goto done;
	}
	/* within the TTL of the C_Login that made it, as this token's
	 * configuration counts it */
	now = now_s();
	if (rec.deadline <= now || rec.deadline - now > t->conf->ttl) {
		W11_LOG("token \"%s\": shared login: the record is past its "
			"deadline or beyond this token's TTL; C_Login",
			t->conf->label);
		goto done;
	}
	w11_fileid_of(&cur, t->conf->store);
	if (!rec_fid_eq(&rec, &cur)) {
		W11_LOG("token \"%s\": shared login: the store changed since; "
			"C_Login", t->conf->label);
		goto done;
	}
	if (w11_token_new_store(t, &st) != CKR_OK)
		goto done;
	wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled", "true");
	/* The MAC of these very bytes was verified with this password by
	 * the login that left the record: the file is still that file. */
	if (wks_store_load_file(st, t->conf->store, NULL, 0) != WKS_OK)
		goto done;
	w11_fileid_of(&after, t->conf->store);
	if (!rec_fid_eq(&rec, &after))
		goto done;
	(void)wks_store_cache_import(st, (const char *)rec.pw, rec.pw_len,
				     rec.blob, rec.blob_len, &imported);
	pthread_mutex_lock(&t->lock);
	if (w11_secret_set(&t->pin, rec.pw, rec.pw_len) == CKR_OK) {
		/* the attribute record's key too: no PBKDF2 for it here
		 * (recfile.c checks it is for this record's salt) */
		if (rec.reckey_len)
			(void)w11_secret_set(&t->rec_key, rec.reckey,
					     rec.reckey_len);
		t->login = CKU_USER;
		t->login_gen++;
		t->adopted = 1;
		/* this login's keyring: its edits publish into it, until its
		 * deadline */
		t->share_ring = ring;
		t->share_deadline = rec.deadline;
		t->share_gen = t->login_gen;
		adopted = 1;
	}
	pthread_mutex_unlock(&t->lock);
	if (!adopted)
		goto done;
	(void)w11_token_install(t, st, &after);
	st = NULL;
	W11_LOG("token \"%s\": shared login taken over (%zu key(s))",
		t->conf->label, imported);
done:
	wks_store_free(st);
	if (buf)
		OPENSSL_clear_free(buf, W11_SHARE_MAX);
	pthread_mutex_unlock(&t->edit);
	return adopted;
}
