/* The fork() hook registry (fork.h). */
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

/* At load time, before any thread can call the library. */
__attribute__((constructor)) static void fork_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
