#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1 /* pthread_rwlockattr_setkind_np */
#endif
#include "util/stripelock.h"

#include <stdatomic.h>

static atomic_uint stripe_next;
static _Thread_local unsigned stripe_mine; /* stripe + 1, 0 = not yet */

unsigned wks_stripe_mine(void)
{
	if (stripe_mine == 0)
		stripe_mine = atomic_fetch_add_explicit(&stripe_next, 1,
		                                        memory_order_relaxed) %
		              WKS_STRIPES + 1;
	return stripe_mine - 1;
}

int wks_stripelock_init(wks_stripelock *l)
{
	pthread_rwlockattr_t attr;
	unsigned i;
	int err;

	if ((err = pthread_rwlockattr_init(&attr)) != 0)
		return err;
#if defined(__GLIBC__)
	pthread_rwlockattr_setkind_np(&attr,
	                              PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
	for (i = 0; i < WKS_STRIPES; i++)
		if ((err = pthread_rwlock_init(&l->s[i].lk, &attr)) != 0) {
			while (i-- > 0)
				pthread_rwlock_destroy(&l->s[i].lk);
			break;
		}
	pthread_rwlockattr_destroy(&attr);
	return err;
}

void wks_stripelock_destroy(wks_stripelock *l)
{
	unsigned i;

	for (i = 0; i < WKS_STRIPES; i++)
		pthread_rwlock_destroy(&l->s[i].lk);
}

void wks_stripelock_rdlock(wks_stripelock *l, unsigned stripe)
{
	pthread_rwlock_rdlock(&l->s[stripe].lk);
}

void wks_stripelock_rdunlock(wks_stripelock *l, unsigned stripe)
{
	pthread_rwlock_unlock(&l->s[stripe].lk);
}

void wks_stripelock_wrlock(wks_stripelock *l)
{
	unsigned i;

	for (i = 0; i < WKS_STRIPES; i++)
		pthread_rwlock_wrlock(&l->s[i].lk);
}

void wks_stripelock_wrunlock(wks_stripelock *l)
{
	unsigned i;

	for (i = WKS_STRIPES; i-- > 0;)
		pthread_rwlock_unlock(&l->s[i].lk);
}
