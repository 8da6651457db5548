/* The fork() hook registry (fork.h) and its public face (wks/fork.h). */
#include <stdlib.h>

#include "util/error.h"
#include "util/fork.h"

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static wks_fork_hook *head, *tail; /* ascending rank */

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

	for (h = tail; h; h = h->prev)
		if (h->child)
			h->child(h->ctx);
	pthread_mutex_init(&reg_mu, NULL);
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

/* ---- clients' hooks (wks/fork.h) -------------------------------------------- */

int wks_fork_hook_add(wks_fork_hook **out, int rank, wks_fork_fn prepare,
		      wks_fork_fn parent, wks_fork_fn child, void *ctx)
{
	wks_fork_hook *h;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "wks_fork_hook_add: out is NULL");
	*out = NULL;
	/* Below every library lock: a client holds its lock while it calls
	 * libwks, so prepare must take it first. */
	if (rank < 0 || rank >= WKS_FORK_RANK_LIBRARY)
		return wks__err(WKS_ERR_INVALID, "fork hook rank %d: a client's "
				"hook ranks from 0 to %d", rank,
				WKS_FORK_RANK_LIBRARY - 1);
	if (!(h = calloc(1, sizeof(*h))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	h->rank = rank;
	h->prepare = prepare;
	h->parent = parent;
	h->child = child;
	h->ctx = ctx;
	wks__fork_hook_add(h);
	*out = h;
	return WKS_OK;
}

void wks_fork_hook_remove(wks_fork_hook *hook)
{
	if (!hook)
		return;
	wks__fork_hook_remove(hook);
	free(hook);
}

/* At load time, before any thread can call the library. */
__attribute__((constructor)) static void fork_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
