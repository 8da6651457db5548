/* A reader-writer lock split in stripes, each on its own cache line.
 *
 * A reader takes the read lock of its thread's stripe only; a writer takes
 * the write lock of every stripe in index order.  Concurrent readers on
 * different threads therefore touch no shared cache line (one rwlock word
 * would bounce between cores on every read, which is most of the cost of a
 * microsecond-long cached get_key).  Writers are preferred, so a steady
 * stream of readers cannot starve them; a thread must not take its read
 * lock twice. */
#ifndef WKS_UTIL_STRIPELOCK_H
#define WKS_UTIL_STRIPELOCK_H

#include <pthread.h>
#include <stdalign.h>

#define WKS_STRIPES 8
#define WKS_CACHE_LINE 64

typedef struct {
	struct {
		alignas(WKS_CACHE_LINE) pthread_rwlock_t lk;
	} s[WKS_STRIPES];
} wks_stripelock;

/* 0 or an errno value. */
int wks_stripelock_init(wks_stripelock *l);
void wks_stripelock_destroy(wks_stripelock *l);

/* This thread's stripe (threads get stripes round robin, so the first
 * WKS_STRIPES threads never share one). */
unsigned wks_stripe_mine(void);

void wks_stripelock_rdlock(wks_stripelock *l, unsigned stripe);
void wks_stripelock_rdunlock(wks_stripelock *l, unsigned stripe);
void wks_stripelock_wrlock(wks_stripelock *l);
void wks_stripelock_wrunlock(wks_stripelock *l);

#endif
