/*
 * Memory hygiene: no secret is left in a process's memory once the API
 * says it is gone.
 *
 * A forked child gets a fresh high-entropy password (32 random bytes as
 * 64 hex characters) and a random 32-byte secret key through a pipe (the
 * parent makes them after the fork, so the child's memory never held the
 * parent's copies), creates a store and the key entry, saves the store
 * (sending the bytes, which are public, to the parent), wipes its own
 * copies of the key, calls get_key, frees the key, wipes its copy of the
 * password, and stops itself (SIGSTOP) at each checkpoint.  The parent
 * then reads the child's whole memory through /proc/PID/maps and
 * /proc/PID/mem and searches it for:
 *
 *   - the password, and the password XOR 0x36 / 0x5c (an HMAC pad block
 *     of it gives the password away just as well);
 *   - the entry's derived key (PBKDF2 of the password, computed by the
 *     parent with OpenSSL): its AES half, its HMAC half and that half's
 *     pad blocks;
 *   - the store MAC key (the PBKDF2 behind the save) and its pad blocks;
 *   - the plaintext secret key.
 *
 * Checkpoints: with the KEK cache enabled, after get_key + key_free (the
 * cache now holds the derived key: it must be shielded, so not found in
 * plaintext, and its pages must be MADV_DONTDUMP, "dd" in
 * /proc/PID/smaps), after wks_store_cache_clear() and after
 * wks_store_free(); with the cache disabled, after get_key + key_free and
 * after wks_store_free().  If gcore (gdb) is installed, a core dump of
 * the child taken while the cache holds the key must not contain the
 * cache's pages (their PT_LOAD segments have no file bytes) nor the
 * shielded value.
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

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "cache/cache_int.h"
#include "format/format.h"
#include "store/store_int.h"

#define PW_HEX 64
#define KEY_LEN 32
#define ALIAS "secret"

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

typedef struct {
	uint64_t status;     /* 0 = all calls succeeded, else a step number */
	uint64_t keys_page;  /* the cache's key page, or 0 */
	uint64_t slot;       /* the shielded value's slot, or 0 */
} child_report;

static void child_main(int in, int out, int cache)
{
	char pw[PW_HEX];
	uint8_t key[KEY_LEN], sha[32], got_sha[32];
	wks_store *st = NULL;
	wks_key *k = NULL;
	uint8_t *saved = NULL;
	size_t saved_len = 0, kl;
	const uint8_t *kd;
	child_report rep;
	uint64_t len64;

	/* Never outlive the test (a failing parent leaves us stopped). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(92);
	memset(&rep, 0, sizeof(rep));
	if (xread(in, pw, sizeof(pw)) || xread(in, key, sizeof(key)) ||
	    xread(in, sha, sizeof(sha)))
		_exit(91);
	if (wks_store_new(&st) != WKS_OK ||
	    wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000") ||
	    wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
	                           cache ? "true" : "false"))
		rep.status = 1;
	else if (wks_store_set_secret_key(st, ALIAS, "AES", key, sizeof(key),
	                                  pw, sizeof(pw)) != WKS_OK)
		rep.status = 2;
	OPENSSL_cleanse(key, sizeof(key));
	if (!rep.status &&
	    wks_store_save_buffer(st, &saved, &saved_len, pw, sizeof(pw)))
		rep.status = 3;
	len64 = saved_len;
	xwrite(out, &len64, sizeof(len64));
	xwrite(out, saved, saved_len);
	wks_free(saved);
	if (!rep.status &&
	    wks_store_get_key(&k, st, ALIAS, pw, sizeof(pw)) != WKS_OK)
		rep.status = 4;
	if (!rep.status) {
		kd = wks_key_data(k, &kl);
		SHA256(kd, kl, got_sha); /* one-shot: cleanses its context */
		if (kl != KEY_LEN || memcmp(got_sha, sha, 32) != 0)
			rep.status = 5;
	}
	wks_key_free(k);
	OPENSSL_cleanse(pw, sizeof(pw));
	if (cache && st->cache) {
		wks_cache *c = st->cache;
		wks_cache_keys *ck = atomic_load(&c->keys);

		rep.keys_page = (uint64_t)(uintptr_t)ck;
		/* Only addresses: a copy of the shielded value here would be
		 * found in the core dump. */
		if (c->head)
			rep.slot = (uint64_t)(uintptr_t)c->head->ct;
	}
	xwrite(out, &rep, sizeof(rep));
	raise(SIGSTOP); /* checkpoint 1: get_key done, key freed */
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
	const char *name;
	uint8_t bytes[128];
	size_t len;
} needle;

typedef struct {
	needle v[24];
	size_t n;
} needles;

static void add_needle(needles *ns, const char *name, const uint8_t *p,
                       size_t len)
{
	needle *nd = &ns->v[ns->n++];

	assert_true(ns->n <= sizeof(ns->v) / sizeof(ns->v[0]));
	assert_true(len <= sizeof(nd->bytes));
	nd->name = name;
	memcpy(nd->bytes, p, len);
	nd->len = len;
}

/* A secret, and the HMAC pad blocks made from it (key XOR 0x36 / 0x5c,
 * as HMAC puts them in its first block when the key fits). */
static void add_with_pads(needles *ns, const char *name, const char *ipad_name,
                          const char *opad_name, const uint8_t *p, size_t len)
{
	uint8_t x[128];
	size_t i;

	add_needle(ns, name, p, len);
	for (i = 0; i < len; i++)
		x[i] = p[i] ^ 0x36;
	add_needle(ns, ipad_name, x, len);
	for (i = 0; i < len; i++)
		x[i] = p[i] ^ 0x5c;
	add_needle(ns, opad_name, x, len);
	OPENSSL_cleanse(x, sizeof(x));
}

typedef struct {
	size_t regions, skipped, bytes, hits;
	char report[8192];
	size_t rlen;
} scan_result;

static void report_hit(scan_result *r, const char *checkpoint,
                       const needle *nd, unsigned long addr,
                       const char *perms, const char *name)
{
	int n;

	r->hits++;
	if (r->rlen >= sizeof(r->report) - 256)
		return;
	n = snprintf(r->report + r->rlen, sizeof(r->report) - r->rlen,
	             "  %s: %s (%zu bytes) found at 0x%lx in %s (%s)\n",
	             checkpoint, nd->name, nd->len, addr,
	             *name ? name : "[anonymous mapping]", perms);
	if (n > 0)
		r->rlen += (size_t)n;
}

static void scan_child(pid_t pid, const needles *ns, const char *checkpoint,
                       scan_result *r)
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
	char *dir, core_path[4200];
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
		if ((at = find_bytes(core, len, ns->v[i].bytes, ns->v[i].len)))
			report_hit(r, "core dump (cache holding the key)", &ns->v[i],
			           (unsigned long)(at - core), "file offset",
			           "the gcore file");
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

static void run(int cache)
{
	int p2c[2], c2p[2], status;
	pid_t pid;
	char pw[PW_HEX + 1];
	uint8_t rnd[32], key[KEY_LEN], sha[32], dk[WKS_DK_LEN], skey[64];
	uint8_t *saved;
	uint64_t len64;
	child_report rep;
	wks_entry **v = NULL;
	size_t n = 0;
	wks_file_info fi;
	wks_settings cfg;
	needles ns;
	scan_result res;
	const char *cps[3];
	size_t ncp, cp;
	char flags[256];

	memset(&res, 0, sizeof(res));
	memset(&ns, 0, sizeof(ns));
	assert_int_equal(pipe(p2c), 0);
	assert_int_equal(pipe(c2p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p2c[1]);
		close(c2p[0]);
		child_main(p2c[0], c2p[1], cache);
	}
	g_child = pid;
	close(p2c[0]);
	close(c2p[1]);

	/* Secrets made after the fork: the child has no copy but its own. */
	assert_int_equal(RAND_bytes(rnd, sizeof(rnd)), 1);
	tu_hex(pw, rnd, sizeof(rnd));
	assert_int_equal(RAND_bytes(key, sizeof(key)), 1);
	SHA256(key, sizeof(key), sha);
	xwrite(p2c[1], pw, PW_HEX);
	xwrite(p2c[1], key, sizeof(key));
	xwrite(p2c[1], sha, sizeof(sha));
	close(p2c[1]);

	assert_int_equal(xread(c2p[0], &len64, sizeof(len64)), 0);
	assert_true(len64 > 0 && len64 < (1u << 20));
	saved = malloc(len64);
	assert_non_null(saved);
	assert_int_equal(xread(c2p[0], saved, len64), 0);
	assert_int_equal(xread(c2p[0], &rep, sizeof(rep)), 0);
	close(c2p[0]);
	if (rep.status)
		fail_msg("child: step %llu failed", (unsigned long long)rep.status);

	/* The derived keys, by OpenSSL. */
	wks__settings_get(&cfg, NULL);
	TU_OK(wks__decode(&v, &n, NULL, &fi, saved, len64, &cfg));
	assert_int_equal(n, 1);
	assert_int_equal(PKCS5_PBKDF2_HMAC(pw, PW_HEX, v[0]->salt, WKS_SALT_LEN,
	                                   v[0]->iterations, EVP_sha512(),
	                                   WKS_DK_LEN, dk), 1);
	assert_int_equal(PKCS5_PBKDF2_HMAC(pw, PW_HEX, fi.salt, WKS_SALT_LEN,
	                                   fi.iterations, EVP_sha512(), 64,
	                                   skey), 1);
	wks__entries_free(v, n);
	free(saved);

	add_with_pads(&ns, "the password", "the password ^ ipad (0x36)",
	              "the password ^ opad (0x5c)", (const uint8_t *)pw, PW_HEX);
	add_needle(&ns, "the password's first 16 bytes", (const uint8_t *)pw, 16);
	add_needle(&ns, "the derived AES key (dk[0..32))", dk, 32);
	add_with_pads(&ns, "the derived HMAC key (dk[32..96))",
	              "the derived HMAC key ^ ipad", "the derived HMAC key ^ opad",
	              dk + 32, 64);
	add_with_pads(&ns, "the store MAC key", "the store MAC key ^ ipad",
	              "the store MAC key ^ opad", skey, 64);
	add_needle(&ns, "the plaintext secret key", key, KEY_LEN);

	if (cache) {
		cps[0] = "cache on, after get_key and wks_key_free (key cached)";
		cps[1] = "cache on, after wks_store_cache_clear";
		cps[2] = "cache on, after wks_store_free";
		ncp = 3;
	} else {
		cps[0] = "cache off, after get_key and wks_key_free";
		cps[1] = "cache off, after wks_store_free";
		ncp = 2;
	}
	for (cp = 0; cp < ncp; cp++) {
		assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
		if (!WIFSTOPPED(status))
			fail_msg("child did not stop at checkpoint %zu (status %d)",
			         cp + 1, status);
		scan_child(pid, &ns, cps[cp], &res);
		if (cache && cp == 0) {
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
	print_message("memdump: %s: %zu checkpoints, %zu regions (%zu skipped), "
	              "%zu MB searched for %zu secrets: %zu found\n",
	              cache ? "cache on" : "cache off", ncp, res.regions,
	              res.skipped, res.bytes >> 20, ns.n, res.hits);
	OPENSSL_cleanse(pw, sizeof(pw));
	OPENSSL_cleanse(&ns, sizeof(ns));
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(dk, sizeof(dk));
	OPENSSL_cleanse(skey, sizeof(skey));
	if (res.hits)
		fail_msg("SECRETS LEFT IN MEMORY (%zu hits; a bug in libwks or "
		         "in what it calls):\n%s(hits in [stack] outside any "
		         "buffer libwks wipes: rerun with LD_BIND_NOW=1 to see "
		         "whether lazy PLT binding spilled vector registers holding "
		         "them; see docs/SECURITY.md, \"Found and fixed\")",
		         res.hits, res.report);
}

static void test_memdump__cache_on(void **state)
{
	(void)state;
	if (skip_reason())
		skip();
	run(1);
}

static void test_memdump__cache_off(void **state)
{
	(void)state;
	if (skip_reason())
		skip();
	run(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_memdump__cache_off, kill_child),
		cmocka_unit_test_teardown(test_memdump__cache_on, kill_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
