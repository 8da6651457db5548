/* Internals of the advisory file locks (store/lock.c; the API is in wks.h). */
#ifndef WKS_STORE_LOCK_H
#define WKS_STORE_LOCK_H

/*
 * Test hook: when set, wks_lock_acquire() calls fn("open", ctx) after each
 * open() of the file and before its flock(), so that a test can replace the
 * file at that moment and check the retry deterministically.  NULL = none.
 * Process-wide; set it only while no other thread locks.
 */
typedef void (*wks_lock_hook_fn)(const char *step, void *ctx);
void wks__lock_set_test_hook(wks_lock_hook_fn fn, void *ctx);

#endif
