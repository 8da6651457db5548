/* The fork() hook registry and wks__once (fork.h). */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1 /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#endif
#include "util/fork.h"

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static wks_fork_hook *head, *tail; /* ascending rank */
static atomic_uint forks;

/* wks__once: bodies run under a recursive mutex (a body may start
 * another), held across fork() by the hook below. */
#if defined(PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP)
static pthread_mutex_t once_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
#define ONCE_MU_STATIC 1
#else
static pthread_mutex_t once_mu; /* made by the constructor */
#define ONCE_MU_STATIC 0
#endif
static wks_fork_hook once_hook;

static void once_mu_init(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&once_mu, &a);
	pthread_mutexattr_destroy(&a);
}

void wks__once_slow(wks_once_t *o, void (*fn)(void))
{
	pthread_mutex_lock(&once_mu);
	if (!atomic_load_explicit(&o->done, memory_order_relaxed)) {
		fn();
		atomic_store_explicit(&o->done, 1, memory_order_release);
	}
	pthread_mutex_unlock(&once_mu);
}

static void once_prepare(void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&once_mu);
}

static void once_parent(void *ctx)
{
	(void)ctx;
	pthread_mutex_unlock(&once_mu);
}

static void once_child(void *ctx)
{
	(void)ctx;
	once_mu_init();
}

/* ---- the registry and the handler ------------------------------------------- */

static void atfork_prepare(void)
{
	wks_fork_hook *h;

	pthread_mutex_lock(&reg_mu);
	for (h = head; h; h = h->next)
		if (h->prepare)
			h->prepare(h->ctx);
}

static void atfork_parent(void)
{
	wks_fork_hook *h;

	for (h = tail; h; h = h->prev)
		if (h->parent)
			h->parent(h->ctx);
	pthread_mutex_unlock(&reg_mu);
}

static void atfork_child(void)
{
	wks_fork_hook *h;

	atomic_fetch_add_explicit(&forks, 1, memory_order_acq_rel);
	for (h = tail; h; h = h->prev)
		if (h->child)
			h->child(h->ctx);
	pthread_mutex_init(&reg_mu, NULL);
}

unsigned wks__fork_count(void)
{
	return atomic_load_explicit(&forks, memory_order_acquire);
}

static void add_locked(wks_fork_hook *h)
{
	wks_fork_hook *p = tail;

	/* After every hook of the same or a lower rank. */
	while (p && p->rank > h->rank)
		p = p->prev;
	h->prev = p;
	h->next = p ? p->next : head;
	if (h->next)
		h->next->prev = h;
	else
		tail = h;
	if (p)
		p->next = h;
	else
		head = h;
	h->listed = 1;
}

void wks__fork_hook_add(wks_fork_hook *h)
{
	pthread_mutex_lock(&reg_mu);
	if (!h->listed)
		add_locked(h);
	pthread_mutex_unlock(&reg_mu);
}

void wks__fork_hook_remove(wks_fork_hook *h)
{
	pthread_mutex_lock(&reg_mu);
	if (h->listed) {
		if (h->prev)
			h->prev->next = h->next;
		else
			head = h->next;
		if (h->next)
			h->next->prev = h->prev;
		else
			tail = h->prev;
		h->prev = h->next = NULL;
		h->listed = 0;
	}
	pthread_mutex_unlock(&reg_mu);
}

/* At load time, before any thread can call the library. */
__attribute__((constructor)) static void fork_init(void)
{
	if (!ONCE_MU_STATIC)
		once_mu_init();
	once_hook.rank = WKS_FORK_RANK_ONCE;
	once_hook.prepare = once_prepare;
	once_hook.parent = once_parent;
	once_hook.child = once_child;
	add_locked(&once_hook);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
