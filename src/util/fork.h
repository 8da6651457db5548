/*
 * fork() safety: every lock of the library is held across fork() by the
 * thread that forks, so a child never inherits a lock taken by a thread
 * it does not have (POSIX: only the forking thread survives).
 *
 * One pthread_atfork() handler, installed when the library is loaded (a
 * constructor: no window in which a thread could be installing it while
 * another forks), runs the hooks of this registry.  A hook covers the
 * locks of one module or of one live object (a store, a provider
 * context).  Prepare hooks run in ascending rank, the parent and child
 * hooks in descending rank, under the registry's mutex; the ranks follow
 * the library's lock order (a lock of a lower rank may be held while one
 * of a higher rank is taken, never the reverse), so prepare takes every
 * lock in an order no thread contradicts.  A child hook makes its locks
 * anew (a lock taken by the parent's thread cannot be unlocked by the
 * child's, whose thread id differs) and resets state that belonged to
 * threads the child does not have.
 *
 * One-time initialisations use pthread_once(): glibc's restarts in the
 * child an initialisation that another thread of the parent had begun
 * (its fork generation), so none is left "in progress" there.
 *
 * Hooks are added and removed with no other library lock held.  A hook's
 * functions must not add or remove hooks.
 */
#ifndef WKS_UTIL_FORK_H
#define WKS_UTIL_FORK_H

#include <pthread.h>

#include "wks/fork.h" /* wks_fork_fn, the public ranks and calls */

/* The library's ranks, from WKS_FORK_RANK_LIBRARY on; clients' hooks
 * (the provider's kept-store lock, WKS_FORK_RANK_CLIENT) rank below. */
enum {
	WKS_FORK_RANK_STORE = WKS_FORK_RANK_LIBRARY, /* each store's reader-
	                              * writer lock */
	WKS_FORK_RANK_CACHE = 30,    /* reaper registry, every KEK cache */
	WKS_FORK_RANK_PROPS = 60,    /* property sets and settings caches */
	WKS_FORK_RANK_WARN = 65,     /* the warning lock (taken under a
	                              * cache's or a property set's lock) */
	WKS_FORK_RANK_KDF = 70       /* the PBKDF2 worker pool */
};

/* A hook: the library's own are static, filled in place; a client's
 * (wks_fork_hook_add) is allocated. */
struct wks_fork_hook {
	int rank;
	wks_fork_fn prepare, parent, child; /* each may be NULL */
	void *ctx;
	struct wks_fork_hook *prev, *next; /* the registry's */
	int listed;
};

void wks__fork_hook_add(wks_fork_hook *h);
void wks__fork_hook_remove(wks_fork_hook *h); /* not listed: no-op */

#endif
