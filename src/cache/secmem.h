/* Memory for secrets of the KEK cache: whole pages from mmap, locked into
 * RAM with mlock (best effort: if RLIMIT_MEMLOCK forbids it, the pages are
 * used unlocked and one warning is sent through wks__warn()), excluded
 * from core dumps with MADV_DONTDUMP and zeroed in a child after fork()
 * with MADV_WIPEONFORK (where the kernel has it).  Every release wipes
 * first.
 *
 * wks_secpool hands out fixed-size slots carved from such pages, for the
 * shielded cache values.  It is not synchronised: the cache calls it with
 * its write lock held. */
#ifndef WKS_CACHE_SECMEM_H
#define WKS_CACHE_SECMEM_H

#include <stddef.h>
#include <stdint.h>

/* Map `len` bytes (rounded up to whole pages), zeroed, locked if the limit
 * allows, never dumped.  NULL if mmap fails. */
void *wks__secmem_map(size_t len);

/* Wipe, unlock and unmap what wks__secmem_map(len) returned.  NULL ok. */
void wks__secmem_unmap(void *p, size_t len);

typedef struct wks_secpool_chunk wks_secpool_chunk;

typedef struct {
	size_t slot_size;          /* bytes per slot */
	wks_secpool_chunk *chunks; /* singly linked */
	size_t used;               /* slots handed out */
} wks_secpool;

void wks__secpool_init(wks_secpool *p, size_t slot_size);

/* A slot of slot_size bytes (zeroed), or NULL if memory is exhausted. */
uint8_t *wks__secpool_get(wks_secpool *p);

/* Wipe a slot and return it.  Chunks left empty are unmapped (the first
 * one is kept while the pool is in use). */
void wks__secpool_put(wks_secpool *p, uint8_t *slot);

/* Wipe and unmap everything (every slot must have been put back, or is
 * abandoned and wiped with its chunk). */
void wks__secpool_release(wks_secpool *p);

/* TEST ONLY: 1 if `needle` occurs anywhere in the pool's pages. */
int wks__secpool_test_find(const wks_secpool *p, const uint8_t *needle,
                           size_t len);

#endif
