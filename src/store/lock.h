/* Internals of the advisory file locks (store/lock.c; the API is in wks.h). */
#ifndef WKS_STORE_LOCK_H
#define WKS_STORE_LOCK_H

#include "store/file.h"
#include "wks/wks.h"

/* What a lock holds: its descriptor, the file's identity, the path it was
 * taken on and its kind.  WKS_OK, or WKS_ERR_INVALID for NULL. */
int wks__lock_get(const wks_lock *l, int *fd, wks_file_id *id,
                  const char **path, unsigned *kind);

/* After a save through the lock replaced the file: fd (already flock()ed
 * exclusively) becomes the lock's descriptor, the old one is closed. */
void wks__lock_moved(wks_lock *l, int fd);

/*
 * Test hook: when set, wks_lock_acquire() calls fn("open", ctx) after each
 * open() of the file and before its flock(), so that a test can replace the
 * file at that moment and check the retry deterministically.  NULL = none.
 * Process-wide; set it only while no other thread locks.
 */
typedef void (*wks_lock_hook_fn)(const char *step, void *ctx);
void wks__lock_set_test_hook(wks_lock_hook_fn fn, void *ctx);

#endif
