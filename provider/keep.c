/*
 * Stores kept between opens (issue 10 item 6), so that with the KEK cache
 * on, a process that opens the same key again (a server reloading its
 * configuration, a client making a new connection) runs no PBKDF2 again:
 * neither the store MAC's (the kept store was verified with the same
 * password) nor the entry's (libwks's KEK cache of the kept store).
 *
 * Rules:
 *  - only with the KEK cache on (kek-cache = yes in the provider's
 *    section, else libwks's wolfjce.keystore.kekCacheEnabled);
 *  - only stores loaded with a password are kept, and one is reused only
 *    for the same password: the provider keeps an HMAC-SHA256 of it under
 *    a random per-provider secret, never the password.  A load without a
 *    password never uses a kept store, and a different (wrong) password
 *    loads afresh, so it fails exactly as on a first open;
 *  - a kept store is tied to the file's identity (device, inode, size,
 *    modification and change times, taken before and after the load;
 *    see wksp_fileid).  Every open
 *    through the provider, of any path, first sweeps the list
 *    (wksp_keep_sweep): each kept store whose file is gone or has another
 *    identity now is dropped, and so is each one that no open has used for
 *    longer than the KEK cache's TTL (kek-cache-ttl, else libwks's
 *    wolfjce.keystore.kekCacheTtlSec): its cached keys have expired
 *    anyway, and a store verified with a password should not outlive the
 *    cache that holds what was derived from it;
 *  - at most KEEP_MAX stores (least recently used dropped), all freed on
 *    provider teardown.  A dropped store is freed (its KEK cache wiped)
 *    when the last open using it releases it (a reference count).  The
 *    lock is never held during a load, a PBKDF2 run or a stat().
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "prov.h"

#define KEEP_MAX 64

/*
 * A file's identity: device, inode, size, modification time and change
 * time.  The change time matters: a file replaced by one of the same size
 * that reuses the inode number (tar -x of a reproducible archive on ext4,
 * which unlinks the file and creates it anew with the archive's mtime) or
 * rewritten in place with its mtime put back (cp -p, touch -r, utime())
 * keeps the other four, but no unprivileged program can set st_ctim: the
 * kernel sets it to the current time at every write, truncate, chmod,
 * rename or utime on the inode.  What still escapes: a change inside the
 * file system's timestamp granularity of the first stat (ctime is taken
 * from a coarse clock, a few ms on Linux, and only to the second on some
 * file systems), a clock set back to the same instant, or root rewriting
 * the raw device.
 */
typedef struct {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
} wksp_fileid;

static void fileid_of(wksp_fileid *id, const struct stat *sb)
{
	memset(id, 0, sizeof(*id));
	id->dev = sb->st_dev;
	id->ino = sb->st_ino;
	id->size = sb->st_size;
	id->mtime = sb->st_mtim;
	id->ctime = sb->st_ctim;
}

static int fileid_eq(const wksp_fileid *a, const wksp_fileid *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

struct wksp_kept {
	wksp_kept *next;
	int refs;      /* the list's reference, one per open using it, one
			* per sweep looking at it */
	int users;     /* opens using it */
	int listed;
	uint64_t last_used; /* ms (monotonic) when an open last released it */
	uint64_t ttl;       /* ms: dropped when idle for longer */
	char *path;
	wksp_fileid id;
	unsigned char pw_mac[32];
	wks_store *st;
};

static void keep_fork_prepare(void *ctx)
{
	wksp_provctx *pc = ctx;

	pthread_mutex_lock(&pc->keep_lock);
}

static void keep_fork_parent(void *ctx)
{
	wksp_provctx *pc = ctx;

	pthread_mutex_unlock(&pc->keep_lock);
}

/* The parent's thread took it: a new one.  The kept stores stay (their
 * own locks and caches are reset by libwks's hooks); the reference counts
 * of opens running in the parent's other threads are never released in
 * the child, which only keeps those stores alive. */
static void keep_fork_child(void *ctx)
{
	wksp_provctx *pc = ctx;

	pthread_mutex_init(&pc->keep_lock, NULL);
}

int wksp_keep_init(wksp_provctx *pc)
{
	/* Not RAND_bytes: while the provider is being activated, the
	 * application's library context may have no random generator yet
	 * (`-provider wks -provider default` loads wks first). */
	size_t got = 0;

	while (got < sizeof(pc->keep_secret)) {
		ssize_t r = getrandom(pc->keep_secret + got,
				      sizeof(pc->keep_secret) - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		got += (size_t)r;
	}
	if (pthread_mutex_init(&pc->keep_lock, NULL) != 0)
		return 0;
	pc->keep_lock_ok = 1;
	/* keep_lock is held across fork(), before any of libwks's locks
	 * (wksp_keep_count() reads the caches' statistics with it held):
	 * libwks's registry runs the hook in that order (wks/fork.h). */
	return wks_fork_hook_add(&pc->keep_fork, WKS_FORK_RANK_CLIENT,
				 keep_fork_prepare, keep_fork_parent,
				 keep_fork_child, pc) == WKS_OK;
}

static void kept_free(wksp_kept *k)
{
	if (k) {
		wks_store_free(k->st);
		free(k->path);
		OPENSSL_cleanse(k, sizeof(*k));
		free(k);
	}
}

void wksp_keep_free_all(wksp_provctx *pc)
{
	wksp_kept *k, *next;

	if (!pc->keep_lock_ok)
		return;
	wks_fork_hook_remove(pc->keep_fork);
	pc->keep_fork = NULL;
	for (k = pc->kept; k; k = next) {
		next = k->next;
		kept_free(k); /* teardown: no open is using any of them */
	}
	pc->kept = NULL;
	pthread_mutex_destroy(&pc->keep_lock);
	pc->keep_lock_ok = 0;
	OPENSSL_cleanse(pc->keep_secret, sizeof(pc->keep_secret));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Whether k has been idle for longer than its TTL (lock held). */
static int idle_expired(const wksp_kept *k, uint64_t now)
{
	return k->users == 0 && now > k->last_used &&
	       now - k->last_used > k->ttl;
}

/* The KEK cache's TTL of a store, in ms (saturating). */
static uint64_t ttl_of(wks_store *st)
{
	unsigned long long sec = 300;
	char v[32], *end;

	if (wks_get_property(v, sizeof(v), st,
			     "wolfjce.keystore.kekCacheTtlSec") == WKS_OK) {
		errno = 0;
		sec = strtoull(v, &end, 10);
		if (end == v || *end || errno)
			sec = errno == ERANGE ? ULLONG_MAX : 300;
	}
	return sec > UINT64_MAX / 1000u ? UINT64_MAX : (uint64_t)sec * 1000u;
}

void wksp_keep_release(wksp_provctx *pc, wksp_kept *k)
{
	int last;

	if (!k)
		return;
	pthread_mutex_lock(&pc->keep_lock);
	k->users--;
	k->last_used = now_ms();
	last = --k->refs == 0;
	pthread_mutex_unlock(&pc->keep_lock);
	if (last)
		kept_free(k);
}

static int same_file(const wksp_kept *k, const struct stat *sb)
{
	wksp_fileid now;

	fileid_of(&now, sb);
	return fileid_eq(&k->id, &now);
}

/* Whether stores opened now use the KEK cache (and so are kept). */
static int cache_on(const wksp_provctx *pc, wks_store *st)
{
	char v[16];

	if (pc->kek_cache >= 0)
		return pc->kek_cache;
	return wks_get_property(v, sizeof(v), st,
				"wolfjce.keystore.kekCacheEnabled") == WKS_OK &&
	       !strcasecmp(v, "true");
}

/* HMAC-SHA256 of the password; 0 (nothing kept or reused, and nothing
 * left on the error queue) if HMAC is not available. */
static int pw_mac(unsigned char out[32], const wksp_provctx *pc,
		  const char *pw, size_t pw_len)
{
	size_t len = 0;
	int ok;

	if (pc->set_error_mark)
		pc->set_error_mark(pc->handle);
	ok = EVP_Q_mac(pc->libctx, "HMAC", NULL, "SHA256", NULL,
		       pc->keep_secret, sizeof(pc->keep_secret),
		       (const unsigned char *)pw, pw_len, out, 32,
		       &len) != NULL && len == 32;
	if (pc->pop_error_to_mark)
		pc->pop_error_to_mark(pc->handle);
	return ok;
}

/* Unlink k from the list (lock held); returns 1 if that was its last
 * reference (the caller frees it after unlocking). */
static int unlist(wksp_provctx *pc, wksp_kept *k)
{
	wksp_kept **pp;

	for (pp = &pc->kept; *pp; pp = &(*pp)->next) {
		if (*pp == k) {
			*pp = k->next;
			k->next = NULL;
			k->listed = 0;
			return --k->refs == 0;
		}
	}
	return 0;
}

void wksp_keep_sweep(wksp_provctx *pc)
{
	wksp_kept *held[KEEP_MAX], *drop[KEEP_MAX], *c;
	unsigned char gone[KEEP_MAX];
	size_t nheld = 0, ndrop = 0, i;
	uint64_t now;

	if (!pc->keep_lock_ok)
		return;
	/* Hold a reference to each (so that its path stays valid), stat
	 * the files with no lock held, then drop under the lock whatever is
	 * still listed and gone, changed or idle too long. */
	pthread_mutex_lock(&pc->keep_lock);
	for (c = pc->kept; c && nheld < KEEP_MAX; c = c->next) {
		c->refs++;
		held[nheld++] = c;
	}
	pthread_mutex_unlock(&pc->keep_lock);
	if (nheld == 0)
		return;
	for (i = 0; i < nheld; i++) {
		struct stat sb;

		gone[i] = stat(held[i]->path, &sb) != 0 ||
			  !same_file(held[i], &sb);
	}
	now = now_ms();
	pthread_mutex_lock(&pc->keep_lock);
	for (i = 0; i < nheld; i++) {
		c = held[i];
		if (c->listed && (gone[i] || idle_expired(c, now)))
			(void)unlist(pc, c); /* not the last: ours is left */
		if (--c->refs == 0)
			drop[ndrop++] = c;
	}
	pthread_mutex_unlock(&pc->keep_lock);
	while (ndrop)
		kept_free(drop[--ndrop]);
}

size_t wksp_keep_count(wksp_provctx *pc)
{
	const wksp_kept *c;
	size_t n = 0;

	if (!pc->keep_lock_ok)
		return 0;
	pthread_mutex_lock(&pc->keep_lock);
	for (c = pc->kept; c; c = c->next)
		n++;
	pthread_mutex_unlock(&pc->keep_lock);
	return n;
}

uint64_t wksp_keep_cache_hits(wksp_provctx *pc)
{
	const wksp_kept *c;
	uint64_t n = 0;

	if (!pc->keep_lock_ok)
		return 0;
	pthread_mutex_lock(&pc->keep_lock);
	for (c = pc->kept; c; c = c->next) {
		wks_cache_stats cs;

		/* the cache's own lock only: never waits for a PBKDF2 */
		if (wks_store_cache_stats(&cs, c->st) == WKS_OK)
			n += cs.hits;
	}
	pthread_mutex_unlock(&pc->keep_lock);
	return n;
}

int wksp_keep_open(wksp_provctx *pc, wks_store **out, wksp_kept **handle,
		   const char *path, const char *pw, size_t pw_len)
{
	wksp_kept *k = NULL, *drop[KEEP_MAX + 2];
	unsigned char mac[32];
	struct stat before, after;
	wksp_fileid id_before, id_after;
	size_t ndrop = 0, n;
	int err, keep, have_mac = 0;

	*out = NULL;
	*handle = NULL;
	if (!(k = calloc(1, sizeof(*k))))
		return WKS_ERR_NOMEM;
	k->refs = 1;
	k->users = 1;
	if ((err = wks_store_new_ex(&k->st, pc->libctx, NULL)) < 0)
		goto fail;
	if (pc->kek_cache >= 0 && (err = wks_store_set_property(k->st,
			"wolfjce.keystore.kekCacheEnabled",
			pc->kek_cache ? "true" : "false")) < 0)
		goto fail;
	if (pc->kek_ttl[0] && (err = wks_store_set_property(k->st,
			"wolfjce.keystore.kekCacheTtlSec", pc->kek_ttl)) < 0)
		goto fail;
	keep = pw_len > 0 && cache_on(pc, k->st) && stat(path, &before) == 0;
	if (keep && (have_mac = pw_mac(mac, pc, pw, pw_len))) {
		uint64_t now = now_ms();
		wksp_kept *c;

		pthread_mutex_lock(&pc->keep_lock);
		for (c = pc->kept; c; c = c->next) {
			if (!strcmp(c->path, path) && same_file(c, &before) &&
			    !idle_expired(c, now) &&
			    CRYPTO_memcmp(c->pw_mac, mac, sizeof(mac)) == 0) {
				wksp_kept **pp;

				c->refs++;
				c->users++;
				/* Most recently used first. */
				for (pp = &pc->kept; *pp != c; pp = &(*pp)->next)
					;
				*pp = c->next;
				c->next = pc->kept;
				pc->kept = c;
				break;
			}
		}
		pthread_mutex_unlock(&pc->keep_lock);
		if (c) {
			kept_free(k);
			OPENSSL_cleanse(mac, sizeof(mac));
			*out = c->st;
			*handle = c;
			return WKS_OK;
		}
	}

	/* A fresh load, with no lock held. */
	if ((err = wks_store_load_file(k->st, path, pw, pw_len)) < 0)
		goto fail;
	if (keep && have_mac) {
		/* Changed (or gone) during the load: not kept. */
		if (stat(path, &after) != 0) {
			keep = 0;
		} else {
			fileid_of(&id_before, &before);
			fileid_of(&id_after, &after);
			keep = fileid_eq(&id_before, &id_after);
		}
	}
	if (keep && have_mac && (k->path = strdup(path)) != NULL) {
		wksp_kept **pp;

		k->id = id_after;
		k->ttl = ttl_of(k->st);
		k->last_used = now_ms();
		memcpy(k->pw_mac, mac, sizeof(mac));
		pthread_mutex_lock(&pc->keep_lock);
		/* What it replaces: the same path (another file version or
		 * another password), and the least recently used beyond
		 * KEEP_MAX. */
		for (pp = &pc->kept; *pp;) {
			wksp_kept *c = *pp;

			if (!strcmp(c->path, path)) {
				if (unlist(pc, c))
					drop[ndrop++] = c;
				continue;
			}
			pp = &c->next;
		}
		k->refs++;
		k->listed = 1;
		k->next = pc->kept;
		pc->kept = k;
		for (n = 0, pp = &pc->kept; *pp; n++) {
			wksp_kept *c = *pp;

			if (n >= KEEP_MAX && ndrop < sizeof(drop) / sizeof(drop[0])) {
				if (unlist(pc, c))
					drop[ndrop++] = c;
				continue;
			}
			pp = &c->next;
		}
		pthread_mutex_unlock(&pc->keep_lock);
		while (ndrop)
			kept_free(drop[--ndrop]);
	}
	OPENSSL_cleanse(mac, sizeof(mac));
	*out = k->st;
	*handle = k;
	return WKS_OK;
fail:
	OPENSSL_cleanse(mac, sizeof(mac));
	kept_free(k);
	return err;
}
