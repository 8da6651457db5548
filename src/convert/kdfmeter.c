/* The key-derivation budget and memo of one conversion (kdfmeter.h). */
#include "convert/kdfmeter.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "util/error.h"
#include "util/wipe.h"
#include "wks/wks.h"

/* Enough for the keys and IVs of the few salts a real file uses; a file
 * that cycles through more only loses the memo, never the budget. */
#define MEMO_SLOTS 32
#define MEMO_MAX_OUT 64

struct wks__kdf_meter {
	pthread_mutex_t mu;
	uint64_t max, used;
	atomic_int spent; /* a derivation was refused */
	size_t next; /* the slot to fill next (round robin) */
	struct {
		int used;
		uint8_t id[32];   /* SHA-256 of the description */
		uint8_t out[MEMO_MAX_OUT];
		size_t out_len;
	} memo[MEMO_SLOTS];
};

static atomic_ulong kdf_runs;

unsigned long wks__convert_kdf_runs(void)
{
	return atomic_load_explicit(&kdf_runs, memory_order_relaxed);
}

static void counted(unsigned n)
{
	atomic_fetch_add_explicit(&kdf_runs, n, memory_order_relaxed);
}

wks__kdf_meter *wks__kdf_meter_new(uint64_t max_iterations)
{
	wks__kdf_meter *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (pthread_mutex_init(&m->mu, NULL) != 0) {
		free(m);
		return NULL;
	}
	m->max = max_iterations;
	return m;
}

void wks__kdf_meter_free(wks__kdf_meter *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->mu);
	wks_wipe_free(m, sizeof(*m));
}

int wks__kdf_meter_spent(const wks__kdf_meter *m)
{
	return m ? atomic_load(&m->spent) : 0;
}

/* Charge with m->mu held. */
static int charge_locked(wks__kdf_meter *m, uint64_t iterations,
			 unsigned runs)
{
	uint64_t cost = iterations;

	if (runs > 1)
		cost = iterations > UINT64_MAX / runs ? UINT64_MAX :
		       iterations * runs;
	if (atomic_load(&m->spent) || cost > m->max - m->used) {
		atomic_store(&m->spent, 1);
		return wks__err(WKS_ERR_LIMIT, "key derivations would run more "
				"than the %llu iterations one conversion may "
				"run (libwks.convert.maxKdfIterations)",
				(unsigned long long)m->max);
	}
	m->used += cost;
	return 0;
}

int wks__kdf_charge(wks__kdf_meter *m, uint64_t iterations, unsigned runs)
{
	int err = 0;

	if (m) {
		pthread_mutex_lock(&m->mu);
		err = charge_locked(m, iterations, runs);
		pthread_mutex_unlock(&m->mu);
	}
	if (err == 0)
		counted(runs);
	return err;
}

static void put_u64(uint8_t b[8], uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		b[i] = (uint8_t)v;
}

/* SHA-256 over every part of the description, each with its length. */
static int desc_id(uint8_t id[32], const wks__kdf_desc *d)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t n[5][8];
	unsigned int len = 0;
	int ok;

	put_u64(n[0], d->n1);
	put_u64(n[1], d->n2);
	put_u64(n[2], d->salt_len);
	put_u64(n[3], d->pw ? d->pw_len : 0);
	put_u64(n[4], d->pw ? 1 : 0);
	ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
	     EVP_DigestUpdate(ctx, d->what, strlen(d->what) + 1) &&
	     EVP_DigestUpdate(ctx, n, sizeof(n)) &&
	     (!d->salt_len || EVP_DigestUpdate(ctx, d->salt, d->salt_len)) &&
	     (!d->pw || !d->pw_len || EVP_DigestUpdate(ctx, d->pw, d->pw_len)) &&
	     EVP_DigestFinal_ex(ctx, id, &len) && len == 32;
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : wks__err(WKS_ERR_CRYPTO, "SHA-256 failed");
}

int wks__kdf_run(wks__kdf_meter *m, const wks__kdf_desc *d,
		 uint64_t iterations, wks__kdf_fn fn, void *arg,
		 uint8_t *out, size_t out_len)
{
	uint8_t id[32] = { 0 };
	int err = 0, memo = m && out_len <= MEMO_MAX_OUT;
	size_t s;

	if (memo && (err = desc_id(id, d)) < 0)
		return err;
	if (!m) {
		counted(1);
		goto run;
	}
	pthread_mutex_lock(&m->mu);
	for (size_t i = 0; memo && i < MEMO_SLOTS; i++) {
		if (m->memo[i].used && m->memo[i].out_len == out_len &&
		    CRYPTO_memcmp(m->memo[i].id, id, sizeof(id)) == 0) {
			memcpy(out, m->memo[i].out, out_len);
			pthread_mutex_unlock(&m->mu);
			wks_wipe(id, sizeof(id));
			return 0;
		}
	}
	err = charge_locked(m, iterations, 1);
	pthread_mutex_unlock(&m->mu);
	if (err < 0)
		goto done;
	counted(1);
run:
	if (!fn(arg, out, out_len)) {
		wks_wipe(out, out_len);
		err = wks__err(WKS_ERR_CRYPTO, "key derivation failed");
		goto done;
	}
	if (memo) {
		pthread_mutex_lock(&m->mu);
		s = m->next;
		m->next = (m->next + 1) % MEMO_SLOTS;
		wks_wipe(&m->memo[s], sizeof(m->memo[s]));
		m->memo[s].used = 1;
		memcpy(m->memo[s].id, id, sizeof(id));
		memcpy(m->memo[s].out, out, out_len);
		m->memo[s].out_len = out_len;
		pthread_mutex_unlock(&m->mu);
	}
done:
	wks_wipe(id, sizeof(id));
	return err;
}
