/*
 * libwks: fork() hooks for the locks of programs built on libwks.
 *
 *   #include <wks/fork.h>     (includes <wks/wks.h>)
 *
 * libwks holds every lock it has across fork(), so that a child may go on
 * using the stores it inherited even when other threads were inside
 * libwks at the fork (wks.h, "Thread safety"; docs/DESIGN.md, "fork()").
 * It does so from one pthread_atfork() handler, installed when the
 * library is loaded, that runs a registry of hooks in the order of the
 * locks (their ranks): prepare hooks in ascending rank, parent and child
 * hooks in descending rank.
 *
 * A client with locks of its own that it holds while it calls libwks (the
 * OpenSSL provider's list of kept stores, a PKCS#11 module's token lock)
 * adds a hook here instead of a pthread_atfork() handler of its own.  A
 * handler of its own would run in an order nobody chose: its prepare
 * might wait for a thread that holds the client's lock and is waiting in
 * turn for a libwks lock that libwks's prepare already took.  Registered
 * here, with a rank below WKS_FORK_RANK_LIBRARY, its lock is taken before
 * any of libwks's, which is the order every thread takes them in.
 *
 * A hook's prepare takes the client's lock, its parent hook releases it,
 * and its child hook makes the lock anew (pthread_mutex_init: a lock
 * taken by the parent's thread is not the child's thread's to unlock) and
 * resets what belonged to threads the child does not have.  Hook
 * functions must not call libwks, nor add or remove hooks.
 */
#ifndef WKS_FORK_H
#define WKS_FORK_H

#include <wks/wks.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Ranks.  Every lock of libwks has a rank of WKS_FORK_RANK_LIBRARY or
 * more; a client's hook has a rank from 0 to WKS_FORK_RANK_LIBRARY - 1,
 * lower for a lock taken before another (WKS_FORK_RANK_CLIENT is the
 * provider's).  Hooks of the same rank run in the order they were added
 * (prepare) and in reverse (parent, child).
 */
#define WKS_FORK_RANK_CLIENT 10
#define WKS_FORK_RANK_LIBRARY 20

/* A hook's function; `ctx` is the pointer given to wks_fork_hook_add(). */
typedef void (*wks_fork_fn)(void *ctx);

/* A registered hook (opaque). */
typedef struct wks_fork_hook wks_fork_hook;

/*
 * Register a hook: `prepare` runs in the thread calling fork() before the
 * fork, `parent` in the parent after it, `child` in the child after it
 * (each may be NULL).  *out is the hook, to remove with
 * wks_fork_hook_remove() before `ctx` goes away.  WKS_ERR_INVALID for a
 * rank outside 0 .. WKS_FORK_RANK_LIBRARY - 1, WKS_ERR_NOMEM.
 * Thread-safe; must not be called from a hook.
 */
WKS_API int wks_fork_hook_add(wks_fork_hook **out, int rank,
			      wks_fork_fn prepare, wks_fork_fn parent,
			      wks_fork_fn child, void *ctx);

/* Unregister and free a hook: once it returns, no fork() runs the hook's
 * functions any more.  NULL is ignored.  Thread-safe; must not be called
 * from a hook. */
WKS_API void wks_fork_hook_remove(wks_fork_hook *hook);

#ifdef __cplusplus
}
#endif

#endif
