/* Single flight: concurrent misses on one tag run one derivation.
 *
 * The tag covers entry id, iterations, salt and password, so threads with
 * different passwords never share a flight.  The first thread to miss
 * leads; later ones wait on the flight's condition variable.  A waiter
 * never receives key bytes from the leader: when the leader succeeded it
 * re-reads the cache (and verifies the value itself); when the leader's
 * MAC check failed it fails the same way (same tag, hence the same entry,
 * password and derived key: its own attempt could only fail too); after
 * any other failure (out of memory...) it tries again itself. */
#include "cache/cache_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/wipe.h"

wks_flight *wks__flight_enter(wks_cache *c, const uint8_t tag[WKS_CACHE_TAG_LEN],
                              int *leader)
{
	wks_flight *f, *nf;

	/* Allocated before taking the lock; freed if not needed. */
	nf = calloc(1, sizeof(*nf));
	if (nf && pthread_cond_init(&nf->cv, NULL) != 0) {
		free(nf);
		nf = NULL;
	}
	pthread_mutex_lock(&c->flight_mu);
	for (f = c->flights; f; f = f->next)
		if (memcmp(f->tag, tag, WKS_CACHE_TAG_LEN) == 0)
			break;
	if (f) {
		f->refs++;
		*leader = 0;
	} else if ((f = nf) != NULL) {
		nf = NULL;
		memcpy(f->tag, tag, WKS_CACHE_TAG_LEN);
		f->refs = 1;
		f->next = c->flights;
		c->flights = f;
		*leader = 1;
	}
	pthread_mutex_unlock(&c->flight_mu);
	if (nf) {
		pthread_cond_destroy(&nf->cv);
		free(nf);
	}
	return f;
}

/* flight_mu held. */
static void unref(wks_flight *f)
{
	if (--f->refs == 0) {
		pthread_cond_destroy(&f->cv);
		wks_wipe_free(f, sizeof(*f));
	}
}

int wks__flight_wait(wks_cache *c, wks_flight *f, char *detail,
                     size_t detail_len)
{
	int r;

	pthread_mutex_lock(&c->flight_mu);
	while (!f->done)
		pthread_cond_wait(&f->cv, &c->flight_mu);
	r = f->result;
	snprintf(detail, detail_len, "%s", f->detail);
	unref(f);
	pthread_mutex_unlock(&c->flight_mu);
	return r;
}

void wks__flight_finish(wks_cache *c, wks_flight *f, int result)
{
	wks_flight **link;

	/* Waiters that fail with this result report the same detail (it
	 * never holds secrets, see wks_error_detail()). */
	if (result < 0)
		snprintf(f->detail, sizeof(f->detail), "%s", wks_error_detail());
	pthread_mutex_lock(&c->flight_mu);
	/* Unlinked first: a thread missing from now on starts a new flight,
	 * after re-reading the cache (see wks__cache_obtain). */
	for (link = &c->flights; *link; link = &(*link)->next)
		if (*link == f) {
			*link = f->next;
			break;
		}
	f->done = 1;
	f->result = result;
	pthread_cond_broadcast(&f->cv);
	unref(f);
	pthread_mutex_unlock(&c->flight_mu);
}

void wks__flight_forget_all(wks_cache *c)
{
	wks_flight *f, *next;

	/* Their condition variables may have had waiters in the parent:
	 * pthread_cond_destroy() could wait for them forever, so the memory
	 * is freed without it (glibc's condition variables hold no other
	 * resource). */
	for (f = c->flights; f; f = next) {
		next = f->next;
		wks_wipe_free(f, sizeof(*f));
	}
	c->flights = NULL;
}
