/* Locked, undumpable pages and a slot pool on top of them (see secmem.h). */
#include "cache/secmem.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config/config.h"
#include "util/wipe.h"

/* One warning per process and per kind, not one per mapping. */
static atomic_int warned_mlock;
static atomic_int warned_dontdump;

static size_t page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

static size_t round_pages(size_t len)
{
	size_t ps = page_size();

	if (len == 0)
		len = 1;
	if (len > SIZE_MAX - (ps - 1))
		return 0;
	return (len + ps - 1) / ps * ps;
}

void *wks__secmem_map(size_t len)
{
	size_t n = round_pages(len);
	void *p;

	if (n == 0)
		return NULL;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	         -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_DONTDUMP
	if (madvise(p, n, MADV_DONTDUMP) != 0 &&
	    atomic_exchange(&warned_dontdump, 1) == 0)
		wks__warn("libwks: madvise(MADV_DONTDUMP) failed for the KEK "
		          "cache (%s): cached keys may appear in core dumps",
		          strerror(errno));
#endif
	/* A child process after fork() sees these pages zeroed (Linux 4.14
	 * and later): it never holds the parent's keys or shielded values,
	 * whatever it does.  The cache also resets itself in the child
	 * (cache.h, "fork()"), so an older kernel that refuses the advice
	 * loses only this second line of defence: no warning. */
#ifdef MADV_WIPEONFORK
	(void)madvise(p, n, MADV_WIPEONFORK);
#endif
	/* Locking is best effort: without it the keys are still shielded
	 * and undumpable, but the kernel may write the pages to swap.  The
	 * usual cause is a small RLIMIT_MEMLOCK (ulimit -l). */
	if (mlock(p, n) != 0 && atomic_exchange(&warned_mlock, 1) == 0)
		wks__warn("libwks: mlock failed for the KEK cache (%s); cached "
		          "keys stay shielded but may be swapped out (raise "
		          "RLIMIT_MEMLOCK, ulimit -l)", strerror(errno));
	return p;
}

void wks__secmem_unmap(void *p, size_t len)
{
	size_t n = round_pages(len);

	if (!p)
		return;
	wks_wipe(p, n);
	munlock(p, n); /* harmless if the lock had failed */
	munmap(p, n);
}

/* ---- slot pool ------------------------------------------------------------
 * A chunk is one mapping of CHUNK_PAGES pages cut into slots.  Its free
 * slots are a stack of indices kept in ordinary memory (indices are not
 * secret), so a free slot holds only zeros. */

#define CHUNK_PAGES 1

struct wks_secpool_chunk {
	uint8_t *base;
	size_t len;
	size_t nslots;
	size_t nfree;
	uint32_t *free; /* stack of free slot indices, nfree on it */
	wks_secpool_chunk *next;
};

void wks__secpool_init(wks_secpool *p, size_t slot_size)
{
	p->slot_size = slot_size;
	p->chunks = NULL;
	p->used = 0;
}

static void chunk_free(wks_secpool_chunk *ch)
{
	wks__secmem_unmap(ch->base, ch->len);
	free(ch->free);
	free(ch);
}

static wks_secpool_chunk *chunk_new(size_t slot_size)
{
	wks_secpool_chunk *ch = calloc(1, sizeof(*ch));
	size_t i;

	if (!ch)
		return NULL;
	ch->len = page_size() * CHUNK_PAGES;
	ch->nslots = ch->len / slot_size;
	if (ch->nslots == 0 || ch->nslots > UINT32_MAX)
		goto fail;
	ch->free = malloc(ch->nslots * sizeof(*ch->free));
	if (!ch->free)
		goto fail;
	ch->base = wks__secmem_map(ch->len);
	if (!ch->base)
		goto fail;
	/* Highest index at the bottom so slots go out in address order. */
	for (i = 0; i < ch->nslots; i++)
		ch->free[i] = (uint32_t)(ch->nslots - 1 - i);
	ch->nfree = ch->nslots;
	return ch;
fail:
	free(ch->free);
	free(ch);
	return NULL;
}

uint8_t *wks__secpool_get(wks_secpool *p)
{
	wks_secpool_chunk *ch;

	for (ch = p->chunks; ch; ch = ch->next)
		if (ch->nfree > 0)
			break;
	if (!ch) {
		if (!(ch = chunk_new(p->slot_size)))
			return NULL;
		ch->next = p->chunks;
		p->chunks = ch;
	}
	p->used++;
	return ch->base + (size_t)ch->free[--ch->nfree] * p->slot_size;
}

void wks__secpool_put(wks_secpool *p, uint8_t *slot)
{
	wks_secpool_chunk **link, *ch;

	if (!slot)
		return;
	for (link = &p->chunks; (ch = *link) != NULL; link = &ch->next)
		if (slot >= ch->base && slot < ch->base + ch->len)
			break;
	if (!ch)
		abort(); /* not ours: a bug, never continue with it */
	wks_wipe(slot, p->slot_size);
	ch->free[ch->nfree++] = (uint32_t)((size_t)(slot - ch->base) /
	                                   p->slot_size);
	p->used--;
	/* Give back a chunk that became empty, unless it is the only one. */
	if (ch->nfree == ch->nslots && (ch != p->chunks || ch->next)) {
		*link = ch->next;
		chunk_free(ch);
	}
}

void wks__secpool_release(wks_secpool *p)
{
	wks_secpool_chunk *ch, *next;

	for (ch = p->chunks; ch; ch = next) {
		next = ch->next;
		chunk_free(ch);
	}
	p->chunks = NULL;
	p->used = 0;
}

int wks__secpool_test_find(const wks_secpool *p, const uint8_t *needle,
                           size_t len)
{
	const wks_secpool_chunk *ch;
	size_t i;

	if (len == 0)
		return 0;
	for (ch = p->chunks; ch; ch = ch->next)
		for (i = 0; i + len <= ch->len; i++)
			if (memcmp(ch->base + i, needle, len) == 0)
				return 1;
	return 0;
}
