/* Property sets, their resolution into wks_settings, the process-wide
 * layers (API and file), the warning handler and the public property
 * calls.
 *
 * Layers, highest first: a store's own wks_props, g_api (wks_set_property),
 * g_file ($WKS_PROPERTIES and wks_load_properties_file()), the default.
 * The first layer that holds a name decides; an empty or bad value there
 * means the default (it does not fall through to the layers below), as a
 * bad value means the default in wolfJCE.
 *
 * Hot path.  wks__settings_get() runs on every get_key.  Each wks_props
 * has a generation counter, bumped after every change.  The resolved
 * settings are cached (per store, and once for the process-wide view)
 * together with the three generations they were computed from, in a
 * seqlock made only of atomics: a reader that finds the same generations
 * copies the cached settings without taking any lock or writing any shared
 * memory.  Any change makes the next reader recompute under a mutex.
 * Release/acquire on the data words (not fences, which TSan cannot see)
 * orders the seqlock. */
#include "config/config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "util/buf.h"
#include "util/error.h"
#include "util/fork.h"
#include "util/readfile.h"

/* ---- the settings cache (a seqlock of atomic words) ---------------------- */

#define SETTINGS_WORDS ((sizeof(wks_settings) + 7) / 8)
#define TAG_WORDS 3 /* generations: store, api, file */
#define SNAP_WORDS (TAG_WORDS + SETTINGS_WORDS)

typedef struct {
	pthread_mutex_t lock;  /* serialises writers (recomputation) */
	_Atomic uint32_t seq;  /* odd while a writer is updating */
	_Atomic uint64_t w[SNAP_WORDS];
} snap_cache;

#define SNAP_CACHE_INIT { PTHREAD_MUTEX_INITIALIZER, 0, { 0 } }

/* One consistent copy of the words, or 0 if a writer was busy. */
static int snap_read(snap_cache *c, uint64_t w[SNAP_WORDS])
{
	uint32_t s1, s2;
	size_t i;

	s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
	if (s1 & 1)
		return 0;
	/* Acquire loads: the second seq load cannot move above them, and a
	 * word stored by a newer writer makes its odd seq visible. */
	for (i = 0; i < SNAP_WORDS; i++)
		w[i] = atomic_load_explicit(&c->w[i], memory_order_acquire);
	s2 = atomic_load_explicit(&c->seq, memory_order_relaxed);
	return s1 == s2;
}

/* Caller holds c->lock. */
static void snap_write(snap_cache *c, const uint64_t w[SNAP_WORDS])
{
	uint32_t s = atomic_load_explicit(&c->seq, memory_order_relaxed);
	size_t i;

	atomic_store_explicit(&c->seq, s + 1, memory_order_relaxed);
	for (i = 0; i < SNAP_WORDS; i++)
		atomic_store_explicit(&c->w[i], w[i], memory_order_release);
	atomic_store_explicit(&c->seq, s + 2, memory_order_release);
}

/* ---- property sets -------------------------------------------------------- */

typedef struct {
	char *name;
	char *value;
} prop_kv;

/* Names libwks does not use (e.g. the rest of a java.security file) are
 * kept up to this many per set; more are dropped with a warning. */
#define MAX_OTHER 4096

struct wks_props {
	pthread_mutex_t lock;        /* guards known[] and other[] */
	struct wks_props *prev, *next; /* live sets (g_live), for fork() */
	char *known[WKS_PROP_COUNT]; /* values of the known names, or NULL */
	prop_kv *other;              /* every other name */
	size_t n_other, cap_other;
	_Atomic uint64_t gen;        /* bumped after each change; >= 1 */
	snap_cache cache;            /* settings resolved for this set */
};

#define PROPS_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, { NULL }, NULL, \
                     0, 0, 1, SNAP_CACHE_INIT }

static wks_props g_api = PROPS_INIT;   /* wks_set_property() */
static wks_props g_file = PROPS_INIT;  /* properties files */
static snap_cache g_proc_cache = SNAP_CACHE_INIT; /* view without a store */

static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;

static void env_load(void);

static void ensure_env(void)
{
	pthread_once(&g_env_once, env_load);
}

/* ---- fork() ---------------------------------------------------------------
 *
 * Every property lock is held across fork() (util/fork.h, rank PROPS):
 * first the registry of live sets, then every settings cache's lock
 * (a cache lock is taken before a set's lock), then every set's lock.
 * Sets are never locked two at a time, nor caches, so their order among
 * themselves does not matter.  The child makes them all anew. */
static pthread_mutex_t g_live_mu = PTHREAD_MUTEX_INITIALIZER;
static wks_props *g_live; /* the stores' sets */

#define FOR_EACH_SET(p, i) \
	for (i = 0, p = &g_api; p; \
	     p = ++i == 1 ? &g_file : i == 2 ? g_live : p->next)

static void props_fork_prepare(void *ctx)
{
	wks_props *p;
	int i;

	(void)ctx;
	pthread_mutex_lock(&g_live_mu);
	pthread_mutex_lock(&g_proc_cache.lock);
	FOR_EACH_SET(p, i)
		pthread_mutex_lock(&p->cache.lock);
	FOR_EACH_SET(p, i)
		pthread_mutex_lock(&p->lock);
}

static void props_fork_parent(void *ctx)
{
	wks_props *p;
	int i;

	(void)ctx;
	FOR_EACH_SET(p, i) {
		pthread_mutex_unlock(&p->lock);
		pthread_mutex_unlock(&p->cache.lock);
	}
	pthread_mutex_unlock(&g_proc_cache.lock);
	pthread_mutex_unlock(&g_live_mu);
}

static void props_fork_child(void *ctx)
{
	wks_props *p;
	int i;

	(void)ctx;
	FOR_EACH_SET(p, i) {
		pthread_mutex_init(&p->lock, NULL);
		pthread_mutex_init(&p->cache.lock, NULL);
	}
	pthread_mutex_init(&g_proc_cache.lock, NULL);
	pthread_mutex_init(&g_live_mu, NULL);
}

static wks_fork_hook g_props_hook = {
	WKS_FORK_RANK_PROPS, props_fork_prepare, props_fork_parent,
	props_fork_child, NULL, NULL, NULL, 0
};

static void warn_fork_prepare(void *ctx);
static void warn_fork_parent(void *ctx);
static void warn_fork_child(void *ctx);

static wks_fork_hook g_warn_hook = {
	WKS_FORK_RANK_WARN, warn_fork_prepare, warn_fork_parent,
	warn_fork_child, NULL, NULL, NULL, 0
};

__attribute__((constructor)) static void props_fork_init(void)
{
	wks__fork_hook_add(&g_props_hook);
	wks__fork_hook_add(&g_warn_hook);
}

int wks__props_new(wks_props **out)
{
	wks_props *p;

	*out = NULL;
	ensure_env();
	p = calloc(1, sizeof(*p));
	if (!p)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if (pthread_mutex_init(&p->lock, NULL) != 0) {
		free(p);
		return wks__err(WKS_ERR_NOMEM, "cannot create a mutex");
	}
	if (pthread_mutex_init(&p->cache.lock, NULL) != 0) {
		pthread_mutex_destroy(&p->lock);
		free(p);
		return wks__err(WKS_ERR_NOMEM, "cannot create a mutex");
	}
	atomic_init(&p->gen, 1);
	atomic_init(&p->cache.seq, 0);
	for (size_t i = 0; i < SNAP_WORDS; i++)
		atomic_init(&p->cache.w[i], 0);
	pthread_mutex_lock(&g_live_mu);
	p->next = g_live;
	if (g_live)
		g_live->prev = p;
	g_live = p;
	pthread_mutex_unlock(&g_live_mu);
	*out = p;
	return WKS_OK;
}

static void props_clear(wks_props *p)
{
	size_t i;

	for (i = 0; i < WKS_PROP_COUNT; i++) {
		free(p->known[i]);
		p->known[i] = NULL;
	}
	for (i = 0; i < p->n_other; i++) {
		free(p->other[i].name);
		free(p->other[i].value);
	}
	free(p->other);
	p->other = NULL;
	p->n_other = p->cap_other = 0;
}

void wks__props_free(wks_props *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&g_live_mu);
	if (p->prev)
		p->prev->next = p->next;
	else
		g_live = p->next;
	if (p->next)
		p->next->prev = p->prev;
	pthread_mutex_unlock(&g_live_mu);
	props_clear(p);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->cache.lock);
	free(p);
}

/* Index of an unknown name in p->other, or -1.  Caller holds p->lock. */
static long other_find(const wks_props *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_other; i++)
		if (strcmp(p->other[i].name, name) == 0)
			return (long)i;
	return -1;
}

/*
 * Set (value != NULL, ownership taken) or unset one name.  Caller holds
 * p->lock and bumps the generation afterwards.  On failure `value` is
 * freed.
 */
static int set_locked(wks_props *p, int id, const char *name, char *value)
{
	long i;
	prop_kv *nk;
	size_t cap;
	char *nm;

	if (id >= 0) {
		free(p->known[id]);
		p->known[id] = value;
		return WKS_OK;
	}
	if ((i = other_find(p, name)) >= 0) {
		free(p->other[i].value);
		if (value) {
			p->other[i].value = value;
		} else {
			free(p->other[i].name);
			p->other[i] = p->other[--p->n_other];
		}
		return WKS_OK;
	}
	if (!value)
		return WKS_OK;
	if (p->n_other >= MAX_OTHER) {
		free(value);
		wks__warn("too many properties (more than %d unknown names); "
		          "ignoring the rest", MAX_OTHER);
		return WKS_OK;
	}
	if (p->n_other == p->cap_other) {
		cap = p->cap_other ? p->cap_other * 2 : 16;
		nk = realloc(p->other, cap * sizeof(*nk));
		if (!nk) {
			free(value);
			return wks__err(WKS_ERR_NOMEM, "out of memory");
		}
		p->other = nk;
		p->cap_other = cap;
	}
	if (!(nm = strdup(name))) {
		free(value);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	p->other[p->n_other].name = nm;
	p->other[p->n_other].value = value;
	p->n_other++;
	return WKS_OK;
}

/* Printable, bounded rendering of a value for a warning. */
static void show_value(char *out, size_t cap, const char *v)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, shown = 0;
	unsigned char c;

	for (; *v && o + 8 < cap; v++) {
		if (shown++ == 40) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		c = (unsigned char)*v;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7F) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
}

/* Warn about a bad value of a known name, or about an unknown libwks.*
 * name (most likely a typo).  `origin` prefixes the message (a file) or
 * is NULL. */
static void check_value(int id, const char *name, const char *value,
                        const char *origin)
{
	char why[64], shown[200], def[32];
	const char *sep = origin ? ": " : "";

	if (!value)
		return;
	if (!origin)
		origin = "";
	if (id < 0) {
		if (strncmp(name, "libwks.", 7) == 0) {
			show_value(shown, sizeof(shown), name);
			wks__warn("%s%sunknown property \"%s\" (ignored)", origin,
			          sep, shown);
		}
		return;
	}
	wks__prop_eval(id, value, why, sizeof(why));
	if (!why[0])
		return;
	show_value(shown, sizeof(shown), value);
	wks__prop_format(def, sizeof(def), id, wks__prop_descs[id].def);
	wks__warn("%s%s%s=\"%s\" %s; using %s", origin, sep, name, shown, why, def);
}

/* A malloc'ed copy of value as Java's Security.getProperty() returns it:
 * trimmed (wks__prop_trim), so that every later reader (resolution,
 * wks_get_property) sees what wolfJCE sees. */
static char *dup_trimmed(const char *value)
{
	size_t at, n;
	char *v;

	wks__prop_trim(value, strlen(value), &at, &n);
	if ((v = malloc(n + 1)) != NULL) {
		memcpy(v, value + at, n);
		v[n] = '\0';
	}
	return v;
}

static void bump(wks_props *p)
{
	atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
}

static int props_set(wks_props *p, const char *name, const char *value,
                     const char *origin)
{
	char *v = NULL;
	int id, err;

	if (!p || !name || !*name)
		return wks__err(WKS_ERR_INVALID, "property name is NULL or empty");
	id = wks__prop_find(name);
	if (value && !(v = dup_trimmed(value)))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	check_value(id, name, v, origin);
	pthread_mutex_lock(&p->lock);
	err = set_locked(p, id, name, v);
	pthread_mutex_unlock(&p->lock);
	bump(p);
	return err;
}

int wks__props_set(wks_props *p, const char *name, const char *value)
{
	return props_set(p, name, value, NULL);
}

void wks__props_reset_process(void)
{
	wks_props *layers[2] = { &g_api, &g_file };
	size_t l;

	ensure_env();
	for (l = 0; l < 2; l++) {
		pthread_mutex_lock(&layers[l]->lock);
		props_clear(layers[l]);
		pthread_mutex_unlock(&layers[l]->lock);
		bump(layers[l]);
	}
}

/* ---- resolution ---------------------------------------------------------- */

/*
 * Fill v[] for every known property from the layers (store may be NULL).
 * Each layer is locked in turn, never two at once.
 */
static void resolve(int64_t v[WKS_PROP_COUNT], wks_props *store)
{
	wks_props *layers[3] = { store, &g_api, &g_file };
	int done[WKS_PROP_COUNT] = { 0 };
	size_t l;
	int i;

	for (l = 0; l < 3; l++) {
		if (!layers[l])
			continue;
		pthread_mutex_lock(&layers[l]->lock);
		for (i = 0; i < WKS_PROP_COUNT; i++) {
			if (done[i] || !layers[l]->known[i])
				continue;
			v[i] = wks__prop_eval(i, layers[l]->known[i], NULL, 0);
			done[i] = 1;
		}
		pthread_mutex_unlock(&layers[l]->lock);
	}
	for (i = 0; i < WKS_PROP_COUNT; i++)
		if (!done[i])
			v[i] = wks__prop_descs[i].def;
}

static void load_tags(uint64_t tag[TAG_WORDS], wks_props *store)
{
	tag[0] = store ? atomic_load_explicit(&store->gen, memory_order_acquire) : 0;
	tag[1] = atomic_load_explicit(&g_api.gen, memory_order_acquire);
	tag[2] = atomic_load_explicit(&g_file.gen, memory_order_acquire);
}

static int tags_match(const uint64_t w[SNAP_WORDS], const uint64_t tag[TAG_WORDS])
{
	return w[0] == tag[0] && w[1] == tag[1] && w[2] == tag[2];
}

void wks__settings_get(wks_settings *out, wks_props *store_props)
{
	snap_cache *c = store_props ? &store_props->cache : &g_proc_cache;
	uint64_t tag[TAG_WORDS], w[SNAP_WORDS];
	int64_t v[WKS_PROP_COUNT];

	ensure_env();
	load_tags(tag, store_props);
	if (snap_read(c, w) && tags_match(w, tag)) {
		memcpy(out, &w[TAG_WORDS], sizeof(*out));
		return;
	}
	pthread_mutex_lock(&c->lock);
	/* Generations are read before the values: a change racing with the
	 * resolution leaves an older tag, so the next call recomputes. */
	load_tags(tag, store_props);
	if (snap_read(c, w) && tags_match(w, tag)) {
		memcpy(out, &w[TAG_WORDS], sizeof(*out));
	} else {
		resolve(v, store_props);
		memset(w, 0, sizeof(w));
		wks__settings_from_values(out, v);
		memcpy(w, tag, sizeof(tag));
		memcpy(&w[TAG_WORDS], out, sizeof(*out));
		snap_write(c, w);
	}
	pthread_mutex_unlock(&c->lock);
}

int wks__property_text(char *buf, size_t buf_len, wks_props *store_props,
                       const char *name)
{
	wks_props *layers[3] = { store_props, &g_api, &g_file };
	int64_t v[WKS_PROP_COUNT];
	int id, found = 0;
	size_t l;
	long i;

	if (buf && buf_len)
		buf[0] = '\0';
	if (!buf || !buf_len || !name)
		return wks__err(WKS_ERR_INVALID, "NULL buffer or name, or size 0");
	ensure_env();
	if ((id = wks__prop_find(name)) >= 0) {
		resolve(v, store_props);
		wks__prop_format(buf, buf_len, id, v[id]);
		return WKS_OK;
	}
	/* A name libwks does not use: its raw value, if some layer has it. */
	for (l = 0; l < 3 && !found; l++) {
		if (!layers[l])
			continue;
		pthread_mutex_lock(&layers[l]->lock);
		if ((i = other_find(layers[l], name)) >= 0) {
			snprintf(buf, buf_len, "%s", layers[l]->other[i].value);
			found = 1;
		}
		pthread_mutex_unlock(&layers[l]->lock);
	}
	if (!found)
		return wks__err(WKS_ERR_NOTFOUND, "unknown property \"%.200s\"", name);
	return WKS_OK;
}

/* ---- properties files ---------------------------------------------------- */

typedef struct {
	prop_kv *kv;
	size_t n, cap;
} kv_list;

static void kv_list_free(kv_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->kv[i].name);
		free(l->kv[i].value);
	}
	free(l->kv);
	l->kv = NULL;
	l->n = l->cap = 0;
}

static int kv_list_add(const char *name, const char *value, void *ctx)
{
	kv_list *l = ctx;
	prop_kv *nk;
	size_t cap;

	if (!*name) /* "=value": Java keeps key "", which nothing can use */
		return WKS_OK;
	if (l->n == l->cap) {
		cap = l->cap ? l->cap * 2 : 32;
		if (!(nk = realloc(l->kv, cap * sizeof(*nk))))
			return wks__err(WKS_ERR_NOMEM, "out of memory");
		l->kv = nk;
		l->cap = cap;
	}
	l->kv[l->n].name = strdup(name);
	l->kv[l->n].value = dup_trimmed(value);
	if (!l->kv[l->n].name || !l->kv[l->n].value) {
		free(l->kv[l->n].name);
		free(l->kv[l->n].value);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	l->n++;
	return WKS_OK;
}

/*
 * Read a properties file into g_file.  Nothing is applied unless the
 * whole file parses.  Does not call ensure_env() (env_load() uses it).
 */
static int load_file(const char *path)
{
	wks_buf text = WKS_BUF_INIT;
	kv_list l = { NULL, 0, 0 };
	char saved[256];
	size_t i;
	int err;

	if ((err = wks__file_read(&text, path, WKS_PROPS_FILE_MAX, NULL)) < 0)
		goto done;
	if ((err = wks__props_parse((const char *)text.ptr, text.len,
	                            kv_list_add, &l)) < 0) {
		snprintf(saved, sizeof(saved), "%s", wks_error_detail());
		wks__err(err, "\"%.200s\": %s", path, saved);
		goto done;
	}
	for (i = 0; i < l.n; i++)
		check_value(wks__prop_find(l.kv[i].name), l.kv[i].name,
		            l.kv[i].value, path);
	pthread_mutex_lock(&g_file.lock);
	for (i = 0; i < l.n && err == WKS_OK; i++) {
		err = set_locked(&g_file, wks__prop_find(l.kv[i].name),
		                 l.kv[i].name, l.kv[i].value);
		l.kv[i].value = NULL; /* owned by g_file now (or freed) */
	}
	pthread_mutex_unlock(&g_file.lock);
	bump(&g_file);
done:
	kv_list_free(&l);
	wks_buf_dispose(&text);
	return err;
}

/*
 * 1 if this process runs in secure-execution mode, where the environment
 * comes from a less privileged caller and must not be trusted: set-user-ID
 * and set-group-ID programs, and programs that gained capabilities from
 * their file (setcap cap_ipc_lock+ep, what a daemon adds so that the KEK
 * cache can lock memory) or from an LSM.  The kernel says so in the
 * auxiliary vector (AT_SECURE), which is what glibc's secure_getenv()
 * reads; secure_getenv() itself needs _GNU_SOURCE, which this project
 * does not define.  The id comparison covers systems without AT_SECURE.
 */
static int secure_mode(void)
{
#if defined(__linux__) && defined(AT_SECURE)
	if (getauxval(AT_SECURE) != 0)
		return 1;
#endif
	return getuid() != geteuid() || getgid() != getegid();
}

/* $WKS_PROPERTIES, once per process.  Ignored in secure-execution mode
 * (secure_mode(): as secure_getenv() would).  Failures are warnings, and
 * the caller's error detail is kept. */
static void env_load(void)
{
	const char *path;
	char saved[512], why[512];

	if (secure_mode())
		return;
	path = getenv("WKS_PROPERTIES");
	if (!path || !*path)
		return;
	snprintf(saved, sizeof(saved), "%s", wks_error_detail());
	if (load_file(path) < 0) {
		snprintf(why, sizeof(why), "%s", wks_error_detail());
		wks__warn("WKS_PROPERTIES: %s; file ignored", why);
	}
	wks__err(0, "%s", saved);
}

/* ---- warnings ------------------------------------------------------------ */

static pthread_mutex_t g_warn_lock = PTHREAD_MUTEX_INITIALIZER;
static wks_warning_fn g_warn_fn;
static void *g_warn_ctx;

/* Held across fork() (rank WARN, after the property and cache locks: a
 * warning may be sent with one of those held; the handler must not call
 * back into libwks, so nothing is taken under this lock). */
static void warn_fork_prepare(void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&g_warn_lock);
}

static void warn_fork_parent(void *ctx)
{
	(void)ctx;
	pthread_mutex_unlock(&g_warn_lock);
}

static void warn_fork_child(void *ctx)
{
	(void)ctx;
	pthread_mutex_init(&g_warn_lock, NULL);
}

void wks__warn(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Called under the lock, so that once wks_set_warning_handler()
	 * returns, the previous handler is no longer running. */
	pthread_mutex_lock(&g_warn_lock);
	if (g_warn_fn)
		g_warn_fn(msg, g_warn_ctx);
	pthread_mutex_unlock(&g_warn_lock);
}

/* ---- public API ---------------------------------------------------------- */

WKS_API void wks_set_warning_handler(wks_warning_fn fn, void *ctx)
{
	pthread_mutex_lock(&g_warn_lock);
	g_warn_fn = fn;
	g_warn_ctx = fn ? ctx : NULL;
	pthread_mutex_unlock(&g_warn_lock);
}

WKS_API int wks_set_property(const char *name, const char *value)
{
	wks__err_clear();
	return props_set(&g_api, name, value, NULL);
}

WKS_API int wks_load_properties_file(const char *path)
{
	wks__err_clear();
	if (!path)
		return wks__err(WKS_ERR_INVALID, "NULL path");
	/* The $WKS_PROPERTIES file first, so that this one overrides it. */
	ensure_env();
	return load_file(path);
}

/* wks_get_property() is in store/store.c: the store owns its property
 * table and passes it to wks__property_text(). */
