/* The background reaper: one thread per process (not per store) that
 * sweeps the cache of every live store each interval, so expired keys are
 * wiped on time even when nobody touches the store.  Off by default;
 * wks_cache_reaper() starts, re-times and stops it.
 *
 * Stores register their cache at creation and unregister it before
 * freeing it.  The reaper sweeps with reg_mu held, so once
 * wks__cache_unregister() returns the reaper cannot be touching that cache
 * (nor calling its settings function) any more: freeing a store while the
 * reaper runs is safe.  Lock order: reg_mu, then a cache's own locks; no
 * cache operation takes reg_mu. */
#include "cache/cache.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "util/error.h"
#include "util/fork.h"

typedef struct reg {
	wks_cache *c;
	wks_settings_fn fn;
	void *ctx;
	struct reg *next;
} reg;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ctl_mu = PTHREAD_MUTEX_INITIALIZER; /* start/stop */
static pthread_cond_t reg_cv; /* CLOCK_MONOTONIC; wakes the thread */
static reg *regs;

/* reaper state, under reg_mu */
static int running;
static int stopping;
static unsigned interval_ms;
static unsigned long retime; /* bumped when the interval changes */
static pthread_t thread;

/* Forks this process went through (see wks__cache_forks()), and the
 * interval of the reaper to restart in a child whose parent ran one. */
static atomic_uint forks;
static atomic_uint resume_ms;

/*
 * fork(): the registry and every registered cache are locked across it,
 * so the child inherits them in a consistent state (no thread of the
 * parent is half-way through an insert), and the child resets every
 * cache before anything else runs: it must not share the parent's
 * shielding key and serials (their next inserts would reuse keystream),
 * and its pages are no longer locked (mlock is not inherited).
 */
/* reg_cv on the monotonic clock: at start, and again in a fork child. */
static void cv_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&reg_cv, &a);
	pthread_condattr_destroy(&a);
}

static void atfork_prepare(void *ctx)
{
	reg *r;

	(void)ctx;
	pthread_mutex_lock(&ctl_mu);
	pthread_mutex_lock(&reg_mu);
	for (r = regs; r; r = r->next)
		wks__cache_atfork_lock(r->c);
}

static void atfork_parent(void *ctx)
{
	reg *r;

	(void)ctx;
	for (r = regs; r; r = r->next)
		wks__cache_atfork_unlock(r->c);
	pthread_mutex_unlock(&reg_mu);
	pthread_mutex_unlock(&ctl_mu);
}

/* The child has no reaper thread (fork copies only the caller): it is
 * restarted at the child's first cache miss (wks__cache_reaper_resume). */
static void atfork_child(void *ctx)
{
	reg *r;

	(void)ctx;
	atomic_fetch_add(&forks, 1);
	atomic_store(&resume_ms, running && !stopping ? interval_ms : 0);
	running = 0;
	stopping = 0;
	/* The parent's reaper may have been waiting on reg_cv: its state
	 * (a waiter that does not exist here) must not reach the child's
	 * reaper, whose timed waits would misbehave. */
	cv_init();
	for (r = regs; r; r = r->next)
		wks__cache_atfork_child(r->c);
	/* Taken by the parent's thread: new ones. */
	pthread_mutex_init(&reg_mu, NULL);
	pthread_mutex_init(&ctl_mu, NULL);
}

static void init_once(void)
{
	cv_init();
}

/* The registry and every registered cache, held across fork() (rank
 * CACHE: after the stores' locks, which a thread may hold while it
 * enters a cache, and before the property locks, which the reaper takes
 * under reg_mu through the settings functions). */
static wks_fork_hook fork_hook = {
	WKS_FORK_RANK_CACHE, atfork_prepare, atfork_parent, atfork_child,
	NULL, NULL, NULL, 0
};

__attribute__((constructor)) static void reaper_fork_init(void)
{
	wks__fork_hook_add(&fork_hook);
}

unsigned wks__cache_forks(void)
{
	pthread_once(&once, init_once);
	return atomic_load_explicit(&forks, memory_order_acquire);
}

void wks__cache_register(wks_cache *c, wks_settings_fn fn, void *ctx)
{
	reg *r = malloc(sizeof(*r)), *p;

	pthread_once(&once, init_once);
	pthread_mutex_lock(&reg_mu);
	for (p = regs; p; p = p->next)
		if (p->c == c)
			break;
	if (p) {
		p->fn = fn;
		p->ctx = ctx;
	} else if (r) {
		/* (Without memory the cache is simply not reaped; it is
		 * still swept at every operation.) */
		r->c = c;
		r->fn = fn;
		r->ctx = ctx;
		r->next = regs;
		regs = r;
		r = NULL;
	}
	pthread_mutex_unlock(&reg_mu);
	free(r);
}

void wks__cache_unregister(wks_cache *c)
{
	reg **link, *r = NULL;

	pthread_once(&once, init_once);
	pthread_mutex_lock(&reg_mu); /* waits for a sweep in progress */
	for (link = &regs; *link; link = &(*link)->next)
		if ((*link)->c == c) {
			r = *link;
			*link = r->next;
			break;
		}
	pthread_mutex_unlock(&reg_mu);
	free(r);
}

/* reg_mu held. */
static void sweep_all(void)
{
	wks_settings cfg;
	reg *r;

	for (r = regs; r; r = r->next) {
		r->fn(&cfg, r->ctx);
		wks__cache_sweep(r->c, &cfg);
	}
}

static void deadline_after(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void *reaper_main(void *arg)
{
	struct timespec deadline;
	unsigned long seen;

	(void)arg;
	pthread_mutex_lock(&reg_mu);
	seen = retime;
	deadline_after(&deadline, interval_ms);
	while (!stopping) {
		if (pthread_cond_timedwait(&reg_cv, &reg_mu, &deadline) == 0) {
			if (!stopping && retime != seen) {
				seen = retime;
				deadline_after(&deadline, interval_ms);
			}
			continue; /* (spurious wake-ups keep the deadline) */
		}
		if (stopping)
			break;
		sweep_all();
		deadline_after(&deadline, interval_ms);
	}
	pthread_mutex_unlock(&reg_mu);
	return NULL;
}

static int start(void)
{
	sigset_t all, old;
	int rc;

	/* The reaper never handles signals: they go to the caller's
	 * threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&thread, NULL, reaper_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* wks_cache_reaper() without touching the caller's error state: 0, or -1
 * if the thread could not be started. */
static int reaper_control(unsigned interval)
{
	int err = WKS_OK;

	pthread_once(&once, init_once);
	pthread_mutex_lock(&ctl_mu);
	pthread_mutex_lock(&reg_mu);
	if (interval > 0) {
		interval_ms = interval;
		if (running) {
			retime++;
			pthread_cond_broadcast(&reg_cv);
		} else {
			stopping = 0;
			if (start() == 0)
				running = 1;
			else
				err = -1;
		}
		pthread_mutex_unlock(&reg_mu);
	} else if (running) {
		stopping = 1;
		pthread_cond_broadcast(&reg_cv);
		pthread_mutex_unlock(&reg_mu);
		pthread_join(thread, NULL);
		pthread_mutex_lock(&reg_mu);
		running = 0;
		stopping = 0;
		pthread_mutex_unlock(&reg_mu);
	} else {
		pthread_mutex_unlock(&reg_mu);
	}
	pthread_mutex_unlock(&ctl_mu);
	return err;
}

WKS_API int wks_cache_reaper(unsigned interval)
{
	wks__err_clear();
	atomic_store(&resume_ms, 0); /* the caller decides from now on */
	if (reaper_control(interval) < 0)
		return wks__err(WKS_ERR_NOMEM, "cannot start the KEK cache "
		                "reaper thread");
	return WKS_OK;
}

void wks__cache_reaper_resume(void)
{
	unsigned ms;

	if (!atomic_load_explicit(&resume_ms, memory_order_relaxed))
		return;
	if ((ms = atomic_exchange(&resume_ms, 0)) != 0)
		(void)reaper_control(ms); /* (no thread: swept at each use) */
}

int wks__cache_test_find_all(const uint8_t *needle, size_t len)
{
	reg *r;
	int found = 0;

	pthread_once(&once, init_once);
	pthread_mutex_lock(&reg_mu);
	for (r = regs; r && !found; r = r->next)
		found = wks__cache_test_find(r->c, needle, len);
	pthread_mutex_unlock(&reg_mu);
	return found;
}

size_t wks__cache_test_count_all(void)
{
	size_t n = 0;
	reg *r;

	pthread_once(&once, init_once);
	pthread_mutex_lock(&reg_mu);
	for (r = regs; r; r = r->next)
		n += wks__cache_test_count(r->c);
	pthread_mutex_unlock(&reg_mu);
	return n;
}
