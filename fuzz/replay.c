/*
 * Standalone replay driver: feeds every file given on the command line
 * (folders are walked, one level of files, sorted) to the target's
 * LLVMFuzzerTestOneInput, once each.  Linked without libFuzzer, so it
 * builds with gcc as well; CI runs it over fuzz/corpus/<target> and
 * fuzz/regressions/<target>.  A failing input aborts (FUZZ_CHECK) or is
 * reported by the sanitizers, with its name printed first.
 *
 *   fuzz_replay_<target> [-v] DIR_OR_FILE...
 *
 * An input that runs longer than FUZZ_REPLAY_TIMEOUT seconds (default 60,
 * like the -timeout of the libFuzzer replay) is a failure: a hostile file
 * must not make the code run for minutes.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int verbose;
static size_t files, bytes;
static const char *current;
static unsigned timeout_s = 60;

static void on_alarm(int sig)
{
	static const char msg[] = "replay: TIMEOUT: this input ran longer than "
	                          "the limit (a denial of service): ";

	(void)sig;
	/* async-signal-safe output only */
	if (write(2, msg, sizeof(msg) - 1) < 0 ||
	    (current && write(2, current, strlen(current)) < 0) ||
	    write(2, "\n", 1) < 0)
		_exit(2);
	abort();
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	/* +1: a zero-byte input still gets a valid, distinct pointer. */
	if (!(buf = malloc((size_t)n + 1)) ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	if (verbose)
		fprintf(stderr, "replay: %s (%ld bytes)\n", path, n);
	else
		/* Named on stdout before the run, so a crash can be traced. */
		printf("%s\n", path), fflush(stdout);
	current = path;
	alarm(timeout_s);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	alarm(0);
	current = NULL;
	free(buf);
	files++;
	bytes += (size_t)n;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: cannot open %s\n", dir);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		char *p;
		struct stat st;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		len = strlen(dir) + strlen(de->d_name) + 2;
		if (!(p = malloc(len)))
			abort();
		snprintf(p, len, "%s/%s", dir, de->d_name);
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if (!(names = realloc(names, cap * sizeof(*names))))
				abort();
		}
		names[n++] = p;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		if (run_file(names[i]) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct stat st;
	int i, rc = 0;

	if (getenv("FUZZ_REPLAY_TIMEOUT"))
		timeout_s = (unsigned)strtoul(getenv("FUZZ_REPLAY_TIMEOUT"), NULL, 10);
	signal(SIGALRM, on_alarm);
	LLVMFuzzerInitialize(&argc, &argv);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0) {
			verbose = 1;
			continue;
		}
		if (stat(argv[i], &st) != 0) {
			/* An absent folder is empty (no regressions yet). */
			fprintf(stderr, "replay: %s: absent, skipped\n", argv[i]);
			continue;
		}
		if ((S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i])) != 0)
			rc = 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "replay: %zu inputs, %zu bytes, %.2f s\n", files, bytes,
	        (double)(t1.tv_sec - t0.tv_sec) +
	        (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return rc;
}
