/*
 * Memory hygiene: no secret is left in a process's memory once the API
 * says it is gone.
 *
 * A forked child gets a fresh high-entropy password (32 random bytes as
 * 64 hex characters) and four keys through a pipe (the parent makes them
 * after the fork, so the child's memory never held the parent's copies):
 * secret keys of 32, 31 and 5 bytes and an RSA PKCS#8 whose length is not
 * a multiple of 16, so that AES-CBC's last block is partial for three of
 * them.  The child creates a store and the entries (set_* calls), saves
 * the store (sending the bytes, which are public, to the parent), wipes
 * its own copies of the keys, calls get_key on each entry, frees the
 * keys, wipes its copy of the password, and stops itself (SIGSTOP) at
 * each checkpoint.  The parent then reads the child's whole memory
 * through /proc/PID/maps and /proc/PID/mem and searches it for:
 *
 *   - the password, and the password XOR 0x36 / 0x5c (an HMAC pad block
 *     of it gives the password away just as well);
 *   - each entry's derived key (PBKDF2 of the password, computed by the
 *     parent with OpenSSL): its AES half, its HMAC half and that half's
 *     pad blocks;
 *   - the store MAC key (the PBKDF2 behind the save) and its pad blocks;
 *   - each plaintext key: its first block, its last partial block alone
 *     and followed by its PKCS#5 padding (what a cipher context's block
 *     buffer keeps), and a whole stretch before it.
 *
 * Checkpoints: after the set_* calls and the save (everything but the
 * password, which the child still holds, must be gone); with the KEK
 * cache enabled, after get_key + key_free (the cache now holds the
 * derived keys: they must be shielded, so not found in plaintext, and its
 * pages must be MADV_DONTDUMP, "dd" in /proc/PID/smaps), after
 * wks_store_cache_clear() and after wks_store_free(); with the cache
 * disabled, after get_key + key_free and after wks_store_free().  Each
 * thread has one cipher context, reused, so only the last key it handled
 * could linger in it: the three tests put a different partial-block key
 * last (and the third derives with OpenSSL's PBKDF2, libwks.kdf.impl =
 * openssl, instead of the native one).  If gcore (gdb) is installed, a core dump of the child taken
 * while the cache holds the keys must not contain the cache's pages
 * (their PT_LOAD segments have no file bytes) nor the shielded value, nor
 * any secret in its saved registers.
 *
 * Every hit is reported with the secret, the address, and the mapping it
 * is in ([heap], [stack], a library...), so that a failure says where to
 * look.  Skipped under valgrind and ThreadSanitizer (their own shadow
 * memory and allocators would be searched too).
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tu_ossl.h"

#include "cache/cache_int.h"
#include "format/format.h"
#include "store/store_int.h"

#define PW_HEX 64

/* ---- pipes ------------------------------------------------------------------------ */

static void xwrite(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t r = write(fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(90);
		b += r;
		n -= (size_t)r;
	}
}

static int xread(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = read(fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* ---- the child ------------------------------------------------------------------ */

/*
 * The keys the child stores, made by the parent after the fork.  Their
 * lengths are chosen so that AES-CBC's last block is partial for all but
 * the first: a 32-byte AES key (its last block is pure padding), a
 * 31-byte HMAC key (15 trailing bytes), a 5-byte key (one partial block)
 * and an RSA PKCS#8 whose length is not a multiple of 16.  The cipher
 * context of a provider keeps the last (partial) block in its own buffer
 * unless libwks clears it (docs/SECURITY.md, "Found and fixed").
 */
enum { K_AES, K_HMAC31, K_SHORT5, K_RSA, NKEYS };

static const char *const key_alias[NKEYS] = { "secret", "hmac31", "short5",
                                              "rsa" };
static const char *const key_alg[NKEYS] = { "AES", "HmacSHA256", "HmacSHA1",
                                            NULL };
#define MAX_KEY 2048

typedef struct {
	uint64_t status;     /* 0 = all calls succeeded, else a step number */
	uint64_t keys_page;  /* the cache's key page, or 0 */
	uint64_t slot;       /* a shielded value's slot, or 0 */
} child_report;

/* The order of the set and get calls: `last` goes last, so that its
 * block is the one a cipher context would still hold at the checkpoints
 * (each thread has one context, reused). */
static int key_at(int pos, int last)
{
	if (pos == NKEYS - 1)
		return last;
	return pos < last ? pos : pos + 1;
}

static void child_main(int in, int out, int cache, int last, int ossl_kdf)
{
	char pw[PW_HEX];
	uint8_t key[NKEYS][MAX_KEY], sha[NKEYS][32], got_sha[32], cert[MAX_KEY];
	uint32_t len[NKEYS], cert_len;
	wks_store *st = NULL;
	wks_key *k = NULL;
	uint8_t *saved = NULL;
	size_t saved_len = 0, kl;
	const uint8_t *kd;
	const uint8_t *chain[1];
	size_t chain_len[1];
	child_report rep;
	uint64_t len64;
	int i, j;

	/* Never outlive the test (a failing parent leaves us stopped). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(92);
	memset(&rep, 0, sizeof(rep));
	if (xread(in, pw, sizeof(pw)))
		_exit(91);
	for (i = 0; i < NKEYS; i++)
		if (xread(in, &len[i], sizeof(len[i])) || len[i] > MAX_KEY ||
		    xread(in, key[i], len[i]) || xread(in, sha[i], 32))
			_exit(91);
	if (xread(in, &cert_len, sizeof(cert_len)) || cert_len > MAX_KEY ||
	    xread(in, cert, cert_len))
		_exit(91);
	chain[0] = cert;
	chain_len[0] = cert_len;
	if (wks_store_new(&st) != WKS_OK ||
	    wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000") ||
	    wks_store_set_property(st, "libwks.kdf.impl",
	                           ossl_kdf ? "openssl" : "native") ||
	    wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
	                           cache ? "true" : "false"))
		rep.status = 1;
	for (j = 0; j < NKEYS && !rep.status; j++) {
		int rc;

		i = key_at(j, last);
		if (i == K_RSA)
			rc = wks_store_set_private_key(st, key_alias[i], key[i],
			                               len[i], chain, chain_len, 1,
			                               pw, sizeof(pw));
		else
			rc = wks_store_set_secret_key(st, key_alias[i], key_alg[i],
			                              key[i], len[i], pw, sizeof(pw));
		if (rc != WKS_OK) {
			fprintf(stderr, "memdump child: set \"%s\": %s\n",
			        key_alias[i], wks_error_detail());
			rep.status = 2;
		}
	}
	OPENSSL_cleanse(key, sizeof(key));
	if (!rep.status &&
	    wks_store_save_buffer(st, &saved, &saved_len, pw, sizeof(pw)))
		rep.status = 3;
	len64 = saved_len;
	xwrite(out, &len64, sizeof(len64));
	xwrite(out, saved, saved_len);
	wks_free(saved);
	raise(SIGSTOP); /* checkpoint 0: keys set, store saved */
	for (j = 0; j < NKEYS && !rep.status; j++) {
		i = key_at(j, last);
		if (wks_store_get_key(&k, st, key_alias[i], pw, sizeof(pw)) !=
		    WKS_OK) {
			rep.status = 4;
			break;
		}
		kd = wks_key_data(k, &kl);
		SHA256(kd, kl, got_sha); /* one-shot: cleanses its context */
		if (kl != len[i] || memcmp(got_sha, sha[i], 32) != 0)
			rep.status = 5;
		wks_key_free(k);
		k = NULL;
	}
	OPENSSL_cleanse(pw, sizeof(pw));
	if (cache && st && st->cache) {
		wks_cache *c = st->cache;
		wks_cache_keys *ck = atomic_load(&c->keys);

		rep.keys_page = (uint64_t)(uintptr_t)ck;
		/* Only addresses: a copy of the shielded value here would be
		 * found in the core dump. */
		if (c->head)
			rep.slot = (uint64_t)(uintptr_t)c->head->ct;
	}
	xwrite(out, &rep, sizeof(rep));
	raise(SIGSTOP); /* checkpoint 1: get_key done, keys freed */
	if (cache) {
		wks_store_cache_clear(st);
		raise(SIGSTOP); /* checkpoint 2: cache cleared */
	}
	wks_store_free(st);
	raise(SIGSTOP); /* checkpoint 3: store freed */
	_exit(0);
}

/* ---- searching the child's memory --------------------------------------------- */

typedef struct {
	char name[96];
	uint8_t bytes[128];
	size_t len;
	int is_pw; /* the password (still held by the child at checkpoint 0) */
	int info;  /* a hit is a note, not a failure */
} needle;

typedef struct {
	needle v[48];
	size_t n;
} needles;

static void add_needle(needles *ns, const char *name, const uint8_t *p,
                       size_t len)
{
	needle *nd = &ns->v[ns->n++];

	assert_true(ns->n <= sizeof(ns->v) / sizeof(ns->v[0]));
	assert_true(len > 0 && len <= sizeof(nd->bytes));
	snprintf(nd->name, sizeof(nd->name), "%s", name);
	memcpy(nd->bytes, p, len);
	nd->len = len;
}

/* A secret, and the HMAC pad blocks made from it (key XOR 0x36 / 0x5c,
 * as HMAC puts them in its first block when the key fits). */
static void add_with_pads(needles *ns, const char *name, const uint8_t *p,
                          size_t len)
{
	char nm[96];
	uint8_t x[128];
	size_t i;

	add_needle(ns, name, p, len);
	for (i = 0; i < len; i++)
		x[i] = p[i] ^ 0x36;
	assert_true((size_t)snprintf(nm, sizeof(nm), "%s ^ ipad (0x36)", name) <
	            sizeof(nm));
	add_needle(ns, nm, x, len);
	for (i = 0; i < len; i++)
		x[i] = p[i] ^ 0x5c;
	assert_true((size_t)snprintf(nm, sizeof(nm), "%s ^ opad (0x5c)", name) <
	            sizeof(nm));
	add_needle(ns, nm, x, len);
	OPENSSL_cleanse(x, sizeof(x));
}

/*
 * A plaintext key: its first 16 bytes (a whole CBC block), its last
 * partial block alone and followed by its PKCS#5 padding (exactly what a
 * cipher context's block buffer holds after encrypting or decrypting it),
 * and 32 bytes before that block (a whole copy), or the whole key if it
 * is shorter than a block.  `info`: hits of the needles other than the
 * padded block are notes, not failures (see run()).
 */
static void add_key(needles *ns, const char *alias, const uint8_t *p,
                    size_t len, int info)
{
	char nm[96];
	uint8_t blk[16];
	size_t tail = len % 16, first = ns->n, i;

	if (tail) {
		memcpy(blk, p + len - tail, tail);
		memset(blk + tail, (int)(16 - tail), 16 - tail);
		snprintf(nm, sizeof(nm), "the plaintext key \"%s\" (last block, "
		         "%zu bytes, with its padding)", alias, tail);
		add_needle(ns, nm, blk, 16);
		OPENSSL_cleanse(blk, sizeof(blk));
		first = ns->n;
		snprintf(nm, sizeof(nm), "the plaintext key \"%s\" (%s, %zu "
		         "bytes)", alias, len < 16 ? "all of it" : "last partial "
		         "block", tail);
		add_needle(ns, nm, p + len - tail, tail);
	}
	if (len >= 16) {
		snprintf(nm, sizeof(nm), "the plaintext key \"%s\" (first 16 "
		         "bytes)", alias);
		add_needle(ns, nm, p, 16);
	}
	if (len >= 64) {
		snprintf(nm, sizeof(nm), "the plaintext key \"%s\" (32 bytes "
		         "before its last block)", alias);
		add_needle(ns, nm, p + len - tail - 32 - 16, 32);
	}
	for (i = first; i < ns->n; i++)
		ns->v[i].info = info;
}

typedef struct {
	size_t regions, skipped, bytes, hits, notes;
	char report[8192];
	size_t rlen;
	char notes_report[4096];
	size_t nlen;
} scan_result;

static void report_hit(scan_result *r, const char *checkpoint,
                       const needle *nd, unsigned long addr,
                       const char *perms, const char *name)
{
	char *out = nd->info ? r->notes_report : r->report;
	size_t *olen = nd->info ? &r->nlen : &r->rlen;
	size_t cap = nd->info ? sizeof(r->notes_report) : sizeof(r->report);
	int n;

	if (nd->info)
		r->notes++;
	else
		r->hits++;
	if (*olen >= cap - 256)
		return;
	n = snprintf(out + *olen, cap - *olen,
	             "  %s: %s (%zu bytes) found at 0x%lx in %s (%s)\n",
	             checkpoint, nd->name, nd->len, addr,
	             *name ? name : "[anonymous mapping]", perms);
	if (n > 0)
		*olen += (size_t)n;
}

static void scan_child(pid_t pid, const needles *ns, const char *checkpoint,
                       int skip_pw, scan_result *r)
{
	char path[64], line[1024];
	FILE *maps;
	int mem;
	uint8_t *buf;
	const size_t chunk = 1 << 20, overlap = 128;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "r");
	assert_non_null(maps);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDONLY);
	if (mem < 0)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	buf = malloc(chunk + overlap);
	assert_non_null(buf);
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi, a;
		char perms[8] = "", name[512] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511[^\n]", &lo, &hi,
		           perms, name) < 3)
			continue;
		if (perms[0] != 'r')
			continue;
		if (hi - lo > (256ul << 20) || !strcmp(name, "[vvar]") ||
		    !strcmp(name, "[vsyscall]")) {
			r->skipped++; /* sanitizer shadow, kernel pages */
			continue;
		}
		r->regions++;
		for (a = lo; a < hi; a += chunk) {
			size_t want = hi - a < chunk + overlap ? hi - a : chunk + overlap;
			ssize_t got = pread(mem, buf, want, (off_t)a);
			size_t i, off, own;

			if (got <= 0)
				break; /* unreadable (e.g. a guard page) */
			/* Matches starting in the overlap belong to the next
			 * chunk. */
			own = (size_t)got > chunk ? chunk : (size_t)got;
			r->bytes += own;
			for (i = 0; i < ns->n; i++) {
				const needle *nd = &ns->v[i];

				if (skip_pw && nd->is_pw)
					continue;
				for (off = 0; off < own;) {
					const uint8_t *q = memchr(buf + off, nd->bytes[0],
					                          own - off);

					if (!q)
						break;
					off = (size_t)(q - buf);
					if (off + nd->len <= (size_t)got &&
					    memcmp(q, nd->bytes, nd->len) == 0)
						report_hit(r, checkpoint, nd, a + off, perms,
						           name);
					off++;
				}
			}
		}
	}
	free(buf);
	close(mem);
	fclose(maps);
}

/* The VmFlags of the mapping containing addr ("" if none). */
static void vmflags(pid_t pid, uint64_t addr, char *out, size_t out_len)
{
	char path[64], line[1024];
	FILE *f;
	int in = 0;

	*out = '\0';
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = addr >= lo && addr < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			size_t l = strcspn(line + 8, "\n");

			if (l >= out_len)
				l = out_len - 1;
			memcpy(out, line + 8, l);
			out[l] = '\0';
			break;
		}
	}
	fclose(f);
}

static int has_flag(const char *flags, const char *flag)
{
	char pat[8];

	snprintf(pat, sizeof(pat), " %s", flag);
	return strstr(flags, pat) != NULL;
}

/* ---- the core dump (optional) ------------------------------------------------- */

static const uint8_t *find_bytes(const uint8_t *h, size_t hl,
                                 const uint8_t *n, size_t nl)
{
	size_t i;

	for (i = 0; nl && i + nl <= hl; i++)
		if (h[i] == n[0] && memcmp(h + i, n, nl) == 0)
			return h + i;
	return NULL;
}

#include <elf.h>

static int have_gcore(void)
{
	return tu_system("command -v gcore >/dev/null 2>&1") == 0;
}

/* 1: the core holds no bytes of the page at addr; 0: it does; -1: no
 * segment covers it at all (also fine: not dumped). */
static int core_excludes(const uint8_t *core, size_t len, uint64_t addr)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)core;
	size_t i;

	assert_true(len > sizeof(*eh) && !memcmp(eh->e_ident, ELFMAG, SELFMAG));
	assert_int_equal(eh->e_type, ET_CORE);
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(core + eh->e_phoff +
		                                            i * eh->e_phentsize);

		if (ph->p_type == PT_LOAD && addr >= ph->p_vaddr &&
		    addr < ph->p_vaddr + ph->p_memsz)
			return ph->p_filesz == 0;
	}
	return -1;
}

/* What holds file offset off of a core: the address it dumps, or the
 * notes (registers and process information). */
static void core_where(const uint8_t *core, size_t len, size_t off,
                       char *out, size_t out_len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)core;
	size_t i;

	snprintf(out, out_len, "the gcore file");
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(core + eh->e_phoff +
		                                            i * eh->e_phentsize);

		if (off < ph->p_offset || off - ph->p_offset >= ph->p_filesz ||
		    ph->p_offset > len)
			continue;
		if (ph->p_type == PT_NOTE)
			snprintf(out, out_len, "the gcore file's notes (saved "
			         "registers)");
		else if (ph->p_type == PT_LOAD)
			snprintf(out, out_len, "the gcore file, memory at 0x%llx",
			         (unsigned long long)(ph->p_vaddr + off -
			                              ph->p_offset));
		return;
	}
}

/* Bytes of the child's memory at addr. */
static void peek(pid_t pid, uint64_t addr, uint8_t *out, size_t n)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, out, n, (off_t)addr), (ssize_t)n);
	close(fd);
}

/*
 * What gcore would write: the readable mappings of the child that are not
 * MADV_DONTDUMP ("dd").  A sanitizer's reserved shadow and allocator
 * spaces are terabytes of readable address space: never dump those.
 */
static unsigned long long dump_estimate(pid_t pid)
{
	char path[64], line[1024];
	unsigned long long total = 0, cur = 0;
	int readable = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s ", &lo, &hi, perms) == 3 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			cur = hi - lo;
			readable = perms[0] == 'r';
		} else if (!strncmp(line, "VmFlags:", 8)) {
			if (readable && !has_flag(line + 8, "dd"))
				total += cur;
		}
	}
	fclose(f);
	return total;
}

static int sanitizer_build(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
	return 1;
#else
	return 0;
#endif
#else
	return 0;
#endif
}

static void check_core(pid_t pid, const child_report *rep, const needles *ns,
                       scan_result *r)
{
	char *dir, core_path[4200], where[96];
	uint8_t *core = NULL, shielded[32];
	const uint8_t *at;
	size_t len = 0, i;
	unsigned long long est = dump_estimate(pid);
	struct statvfs vfs;
	int rc, key_in, slot_in;

	if (sanitizer_build() || est > (512ull << 20)) {
		print_message("memdump: core dump check skipped (%s, %llu MB "
		              "would be dumped)\n", sanitizer_build()
		              ? "sanitizer build" : "too large", est >> 20);
		return;
	}
	dir = tu_tmpdir();
	if (statvfs(dir, &vfs) != 0 ||
	    (unsigned long long)vfs.f_bavail * vfs.f_frsize < 2 * est +
	    (256ull << 20)) {
		print_message("memdump: core dump check skipped (not enough free "
		              "space in %s)\n", dir);
		tu_rmtree(dir);
		free(dir);
		return;
	}
	/* SIGKILL: the process group (gcore's gdb too) dies on time. */
	rc = tu_system("timeout -s KILL 120 gcore -o %s/core %d >/dev/null "
	               "2>&1", dir, (int)pid);
	snprintf(core_path, sizeof(core_path), "%s/core.%d", dir, (int)pid);
	if (rc == 0 && access(core_path, R_OK) == 0)
		core = tu_read_file(core_path, &len);
	/* The core holds secrets: gone before anything can fail. */
	tu_rmtree(dir);
	free(dir);
	if (!core) {
		print_message("memdump: gcore failed (status %d): core dump check "
		              "skipped\n", rc);
		return;
	}
	key_in = core_excludes(core, len, rep->keys_page) == 0;
	slot_in = rep->slot && core_excludes(core, len, rep->slot) == 0;
	/* The shielded value is no secret without the key page, but it should
	 * not be in the dump either: note where it is if it is. */
	peek(pid, rep->slot, shielded, sizeof(shielded));
	if ((at = find_bytes(core, len, shielded, sizeof(shielded))) != NULL)
		print_message("memdump: note: the shielded cached value appears "
		              "in the core at file offset %zu (outside the cache's "
		              "pages)\n", (size_t)(at - core));
	for (i = 0; i < ns->n; i++)
		if ((at = find_bytes(core, len, ns->v[i].bytes, ns->v[i].len))) {
			core_where(core, len, (size_t)(at - core), where,
			           sizeof(where));
			report_hit(r, "core dump (cache holding the key)", &ns->v[i],
			           (unsigned long)(at - core), "file offset", where);
		}
	OPENSSL_cleanse(core, len);
	free(core);
	if (key_in)
		fail_msg("the core dump contains the cache's key page (0x%llx)",
		         (unsigned long long)rep->keys_page);
	if (slot_in)
		fail_msg("the core dump contains the cache's value page (0x%llx)",
		         (unsigned long long)rep->slot);
	print_message("memdump: gcore: %zu-byte core; the cache's key and "
	              "value pages are not in it\n", len);
}

/* ---- the test ---------------------------------------------------------------------- */

static pid_t g_child = -1;

/* A failed assertion longjmps out of run(): never leave the child
 * stopped (it would hold the test's output pipe open). */
static int kill_child(void **state)
{
	(void)state;
	if (g_child > 0) {
		kill(g_child, SIGKILL);
		waitpid(g_child, NULL, 0);
		g_child = -1;
	}
	return 0;
}

static int skip_reason(void)
{
	const char *pre = getenv("LD_PRELOAD");

#if defined(__SANITIZE_THREAD__)
	print_message("memdump: skipped under ThreadSanitizer\n");
	return 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	print_message("memdump: skipped under ThreadSanitizer\n");
	return 1;
#endif
#endif
	if ((pre && strstr(pre, "vgpreload")) || getenv("WKS_UNDER_VALGRIND")) {
		print_message("memdump: skipped under valgrind\n");
		return 1;
	}
	return 0;
}

/* An RSA key and its self-signed certificate, the key's PKCS#8 encoding
 * in p8 with a length that is not a multiple of 16 (its last CBC block
 * is partial with 6 to 15 bytes of the key in it). */
#ifdef WKS_CRYPTO_WOLFCRYPT
/* The first PEM block of tests/data/pki/name decoded straight into out
 * (no heap copy of the DER: the child inherits this process's heap). */
static uint32_t pem_into(uint8_t *out, size_t max, const char *name)
{
	char path[4096];
	size_t n, i, o = 0;
	char *t;
	const char *p, *e;
	unsigned acc = 0;
	int bits = 0;

	snprintf(path, sizeof(path), "%s/tests/data/pki/%s", WKS_SOURCE_DIR,
	         name);
	t = (char *)tu_read_file(path, &n);
	p = strstr(t, "-----\n");
	assert_non_null(p);
	e = strstr(p + 6, "-----END");
	assert_non_null(e);
	for (i = (size_t)(p + 6 - t); t + i < e; i++) {
		int c = (unsigned char)t[i], v;

		v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ?
		    c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52 :
		    c == '+' ? 62 : c == '/' ? 63 : -1;
		if (v < 0)
			continue;
		acc = acc << 6 | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			assert_true(o < max);
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	free(t);
	return (uint32_t)o;
}

/* The wolfCrypt build: the same kind of key from tests/data/pki
 * (memdump-rsa.key, RSA-1024 whose PKCS#8 length is 6..15 mod 16, and
 * its self-signed memdump-rsa.pem; gen.sh made them). */
static void rsa_key(uint8_t *p8, uint32_t *p8_len, uint8_t *cert,
                    uint32_t *cert_len)
{
	*p8_len = pem_into(p8, MAX_KEY, "memdump-rsa.key");
	assert_true(*p8_len % 16 >= 6);
	*cert_len = pem_into(cert, MAX_KEY, "memdump-rsa.pem");
}
#else
static void rsa_key(uint8_t *p8, uint32_t *p8_len, uint8_t *cert,
                    uint32_t *cert_len)
{
	EVP_PKEY *k = NULL;
	PKCS8_PRIV_KEY_INFO *p8i;
	X509 *x;
	X509_NAME *name;
	unsigned char *der = NULL;
	int n = 0, tries;

	for (tries = 0; tries < 50; tries++) {
		EVP_PKEY_free(k);
		k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024);
		assert_non_null(k);
		OPENSSL_clear_free(der, (size_t)n);
		der = NULL;
		p8i = EVP_PKEY2PKCS8(k);
		assert_non_null(p8i);
		n = i2d_PKCS8_PRIV_KEY_INFO(p8i, &der);
		PKCS8_PRIV_KEY_INFO_free(p8i);
		assert_true(n > 0 && n <= MAX_KEY);
		if (n % 16 >= 6)
			break;
	}
	assert_true(n % 16 >= 6);
	memcpy(p8, der, (size_t)n);
	*p8_len = (uint32_t)n;
	OPENSSL_clear_free(der, (size_t)n);
	x = X509_new();
	assert_non_null(x);
	assert_true(X509_set_version(x, 2));
	assert_true(ASN1_INTEGER_set(X509_get_serialNumber(x), 1));
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(x), 0));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(x), 86400));
	assert_true(X509_set_pubkey(x, k));
	name = X509_get_subject_name(x);
	assert_true(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                                       (const unsigned char *)"memdump",
	                                       -1, -1, 0));
	assert_true(X509_set_issuer_name(x, name));
	assert_true(X509_sign(x, k, EVP_sha256()));
	der = NULL;
	n = i2d_X509(x, &der);
	assert_true(n > 0 && n <= MAX_KEY);
	memcpy(cert, der, (size_t)n);
	*cert_len = (uint32_t)n;
	OPENSSL_free(der);
	X509_free(x);
	EVP_PKEY_free(k);
}
#endif

static void run(int cache, int last, int ossl_kdf)
{
	static uint8_t key[NKEYS][MAX_KEY], cert[MAX_KEY];
	int p2c[2], c2p[2], status;
	pid_t pid;
	char pw[PW_HEX + 1], nm[96];
	uint8_t rnd[32], sha[32], dk[WKS_DK_LEN], skey[64];
	uint32_t len[NKEYS], cert_len;
	uint8_t *saved;
	uint64_t len64;
	child_report rep;
	wks_entry **v = NULL;
	size_t n = 0, i, nkey = 0;
	wks_file_info fi;
	wks_settings cfg;
	needles ns;
	scan_result res;
	const char *cps[4];
	size_t ncp, cp;
	char flags[256];

	memset(&res, 0, sizeof(res));
	memset(&ns, 0, sizeof(ns));
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(pipe(p2c), 0);
	assert_int_equal(pipe(c2p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p2c[1]);
		close(c2p[0]);
		child_main(p2c[0], c2p[1], cache, last, ossl_kdf);
	}
	g_child = pid;
	close(p2c[0]);
	close(c2p[1]);

	/* Secrets made after the fork: the child has no copy but its own. */
	assert_int_equal(RAND_bytes(rnd, sizeof(rnd)), 1);
	tu_hex(pw, rnd, sizeof(rnd));
	len[K_AES] = 32;
	len[K_HMAC31] = 31;
	len[K_SHORT5] = 5;
	for (i = 0; i < K_RSA; i++)
		assert_int_equal(RAND_bytes(key[i], (int)len[i]), 1);
	rsa_key(key[K_RSA], &len[K_RSA], cert, &cert_len);
	xwrite(p2c[1], pw, PW_HEX);
	for (i = 0; i < NKEYS; i++) {
		SHA256(key[i], len[i], sha);
		xwrite(p2c[1], &len[i], sizeof(len[i]));
		xwrite(p2c[1], key[i], len[i]);
		xwrite(p2c[1], sha, sizeof(sha));
	}
	xwrite(p2c[1], &cert_len, sizeof(cert_len));
	xwrite(p2c[1], cert, cert_len);
	close(p2c[1]);

	assert_int_equal(xread(c2p[0], &len64, sizeof(len64)), 0);
	if (len64 == 0)
		fail_msg("child: creating the keys or saving failed");
	assert_true(len64 < (1u << 20));
	saved = malloc(len64);
	assert_non_null(saved);
	assert_int_equal(xread(c2p[0], saved, len64), 0);

	/* The derived keys, by OpenSSL. */
	wks__settings_get(&cfg, NULL);
	TU_OK(wks__decode(&v, &n, NULL, &fi, saved, len64, &cfg));
	assert_int_equal(n, NKEYS);
	add_with_pads(&ns, "the password", (const uint8_t *)pw, PW_HEX);
	add_needle(&ns, "the password's first 16 bytes", (const uint8_t *)pw, 16);
	for (i = 0; i < ns.n; i++)
		ns.v[i].is_pw = 1;
	for (i = 0; i < n; i++) {
		assert_int_equal(PKCS5_PBKDF2_HMAC(pw, PW_HEX, v[i]->salt,
		                                   WKS_SALT_LEN, v[i]->iterations,
		                                   EVP_sha512(), WKS_DK_LEN, dk), 1);
		snprintf(nm, sizeof(nm), "entry %zu's derived AES key", i);
		add_needle(&ns, nm, dk, 32);
		snprintf(nm, sizeof(nm), "entry %zu's derived HMAC key", i);
		add_with_pads(&ns, nm, dk + 32, 64);
	}
	assert_int_equal(PKCS5_PBKDF2_HMAC(pw, PW_HEX, fi.salt, WKS_SALT_LEN,
	                                   fi.iterations, EVP_sha512(), 64,
	                                   skey), 1);
	wks__entries_free(v, n);
	free(saved);
	add_with_pads(&ns, "the store MAC key", skey, 64);
	for (i = 0; i < NKEYS; i++) {
		add_key(&ns, key_alias[i], key[i], len[i], i == K_RSA);
		nkey++;
	}

	cps[0] = cache ? "cache on, after set_* and save"
	               : "cache off, after set_* and save";
	if (cache) {
		cps[1] = "cache on, after get_key and wks_key_free (keys cached)";
		cps[2] = "cache on, after wks_store_cache_clear";
		cps[3] = "cache on, after wks_store_free";
		ncp = 4;
	} else {
		cps[1] = "cache off, after get_key and wks_key_free";
		cps[2] = "cache off, after wks_store_free";
		ncp = 3;
	}
	for (cp = 0; cp < ncp; cp++) {
		assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
		if (!WIFSTOPPED(status))
			fail_msg("child did not stop at checkpoint %zu (status %d)",
			         cp, status);
		if (cp == 1) {
			assert_int_equal(xread(c2p[0], &rep, sizeof(rep)), 0);
			close(c2p[0]);
			if (rep.status)
				fail_msg("child: step %llu failed",
				         (unsigned long long)rep.status);
		}
		/* At checkpoint 0 the child still holds the password. */
		scan_child(pid, &ns, cps[cp], cp == 0, &res);
		if (cache && cp == 1) {
			/* The cache's pages: never dumped (and locked if allowed). */
			assert_true(rep.keys_page != 0 && rep.slot != 0);
			vmflags(pid, rep.keys_page, flags, sizeof(flags));
			print_message("memdump: cache key page 0x%llx VmFlags:%s\n",
			              (unsigned long long)rep.keys_page, flags);
			if (!has_flag(flags, "dd"))
				fail_msg("the cache's key page is not MADV_DONTDUMP "
				         "(VmFlags:%s)", flags);
			if (!has_flag(flags, "lo"))
				print_message("memdump: note: the key page is not "
				              "mlocked (RLIMIT_MEMLOCK?)\n");
			vmflags(pid, rep.slot, flags, sizeof(flags));
			print_message("memdump: cache value page 0x%llx VmFlags:%s\n",
			              (unsigned long long)rep.slot, flags);
			if (!has_flag(flags, "dd"))
				fail_msg("the cache's value page is not MADV_DONTDUMP "
				         "(VmFlags:%s)", flags);
			if (have_gcore())
				check_core(pid, &rep, &ns, &res);
			else
				print_message("memdump: gcore not installed: core dump "
				              "check skipped\n");
		}
		kill(pid, SIGCONT);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	g_child = -1;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	print_message("memdump: %s, %s PBKDF2: %zu keys (%u, %u, %u and %u "
	              "bytes; \"%s\" last), %zu checkpoints, %zu regions (%zu "
	              "skipped), %zu MB searched for %zu secrets: %zu found\n",
	              cache ? "cache on" : "cache off",
	              ossl_kdf ? "OpenSSL's" : "native", nkey, len[0], len[1],
	              len[2], len[3], key_alias[last], ncp, res.regions,
	              res.skipped, res.bytes >> 20, ns.n, res.hits);
	OPENSSL_cleanse(pw, sizeof(pw));
	OPENSSL_cleanse(&ns, sizeof(ns));
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(cert, sizeof(cert));
	OPENSSL_cleanse(dk, sizeof(dk));
	OPENSSL_cleanse(skey, sizeof(skey));
	/* Setting a private key parses it to check it against its
	 * certificate, and OpenSSL 3.0's DER decoder (EVP_PKCS82PKEY)
	 * frees its copy of the PKCS#8 without cleansing it: whole copies of
	 * the RSA key are OpenSSL's, reported here but not failed on (see
	 * docs/SECURITY.md).  Its last block with its padding, which only a
	 * cipher context holds, is checked like every other secret. */
	/* (Long reports go out whole: cmocka's messages are truncated.) */
	if (res.notes) {
		print_message("memdump: note: %zu copies of the RSA key left by "
		              "OpenSSL's PKCS#8 decoder (not libwks):\n",
		              res.notes);
		fputs(res.notes_report, stdout);
		fflush(stdout);
	}
	if (res.hits) {
		fputs(res.report, stderr);
		fflush(stderr);
	}
	if (res.hits)
		fail_msg("SECRETS LEFT IN MEMORY (%zu hits, listed above; a bug "
		         "in libwks or in what it calls; hits in [stack] outside "
		         "any buffer libwks wipes: rerun with LD_BIND_NOW=1 to see "
		         "whether lazy PLT binding spilled vector registers holding "
		         "them; see docs/SECURITY.md, \"Found and fixed\")",
		         res.hits);
}

static void test_memdump__cache_on(void **state)
{
	(void)state;
	if (skip_reason())
		skip();
	run(1, K_HMAC31, 0);
}

static void test_memdump__cache_off(void **state)
{
	(void)state;
	if (skip_reason())
		skip();
	run(0, K_RSA, 0);
}

/* The 5-byte key last: all of it is in one partial block.  And PBKDF2 by
 * OpenSSL (libwks.kdf.impl=openssl): its HMAC and digest contexts must
 * leave nothing either. */
static void test_memdump__short_key_last(void **state)
{
	(void)state;
	if (skip_reason())
		skip();
	run(0, K_SHORT5, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_memdump__cache_off, kill_child),
		cmocka_unit_test_teardown(test_memdump__cache_on, kill_child),
		cmocka_unit_test_teardown(test_memdump__short_key_last,
		                          kill_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
