/* A small stand-alone driver for libFuzzer-style targets (int LLVMFuzzerTestOneInput(const
 * uint8_t *, size_t)), so fuzz targets run with gcc and under ASan/UBSan without libFuzzer.
 *
 * Without arguments it runs random and mutated inputs for BBVFL_FUZZ_SECONDS seconds (default
 * 10), seeded from BBVFL_FUZZ_SEED or the clock; the seed is printed so a run can be replayed.
 * Inputs start from the target's seeds (optional: define bbvfl_fuzz_seeds in the target) and
 * random bytes, then are mutated (bit flips, interesting bytes and words, insertions, deletions,
 * duplicated chunks, splices). Each input is copied into a buffer of exactly its size, so reads
 * past the end are caught by ASan. A finding aborts (sanitizer report or assertion); the input
 * being run is then saved to fuzz-crash-<seed>.bin in the working directory.
 * With file arguments it runs each file once (to replay a saved crash), like libFuzzer.
 *
 * Optional hooks a target may define: LLVMFuzzerInitialize (as libFuzzer) and
 *   void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));
 * BBVFL_FUZZ_MAX_LEN caps the input size (default 4096). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) __attribute__((weak));
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

#define CORPUS_MAX 512

static uint64_t rng;
static uint8_t *corpus[CORPUS_MAX];
static size_t corpus_len[CORPUS_MAX];
static size_t ncorpus;
static size_t max_len = 4096;

/* the input being run, for the crash dump */
static const uint8_t *volatile current;
static volatile size_t current_len;
static char crash_path[64];

static uint64_t rnd(void) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static void dump_current(void) {
  if (!current) return;
  int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t off = 0;
  while (off < current_len) {
    ssize_t w = write(fd, current + off, current_len - off);
    if (w <= 0) break;
    off += (size_t)w;
  }
  close(fd);
  static const char msg[] = "fuzz driver: the failing input was saved (see fuzz-crash-*.bin)\n";
  ssize_t ignored = write(2, msg, sizeof msg - 1);
  (void)ignored;
}

static void on_signal(int sig) {
  dump_current();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void corpus_add(const uint8_t *data, size_t len) {
  if (len > max_len) len = max_len;
  size_t slot = ncorpus < CORPUS_MAX ? ncorpus++ : below(CORPUS_MAX);
  uint8_t *copy = malloc(len ? len : 1);
  if (!copy) return;
  if (len) memcpy(copy, data, len);
  free(corpus[slot]);
  corpus[slot] = copy;
  corpus_len[slot] = len;
}

static int run_one(const uint8_t *data, size_t len) {
  uint8_t *exact = malloc(len ? len : 1); /* exactly len bytes: overreads hit a redzone */
  if (!exact) return 0;
  if (len) memcpy(exact, data, len);
  current = exact;
  current_len = len;
  LLVMFuzzerTestOneInput(exact, len);
  current = NULL;
  free(exact);
  return 0;
}

static const uint8_t interesting8[] = {0x00, 0x01, 0x7f, 0x80, 0x81, 0xb7, 0xb8, 0xbf, 0xc0, 0xf7, 0xf8, 0xff, 0x20, 0x40};

/* Mutates buf (len bytes, capacity max_len) in place; returns the new length. */
static size_t mutate(uint8_t *buf, size_t len) {
  int rounds = 1 + (int)below(4);
  for (int r = 0; r < rounds; r++) {
    switch (below(9)) {
      case 0: /* flip a bit */
        if (len) buf[below(len)] ^= (uint8_t)(1u << below(8));
        break;
      case 1: /* interesting byte */
        if (len) buf[below(len)] = interesting8[below(sizeof interesting8)];
        break;
      case 2: /* random byte */
        if (len) buf[below(len)] = (uint8_t)rnd();
        break;
      case 3: /* insert random bytes */
        if (len < max_len) {
          size_t n = 1 + below(len < max_len - 16 ? 16 : max_len - len);
          if (len + n > max_len) n = max_len - len;
          size_t at = below(len + 1);
          memmove(buf + at + n, buf + at, len - at);
          for (size_t i = 0; i < n; i++) buf[at + i] = (uint8_t)rnd();
          len += n;
        }
        break;
      case 4: /* delete a range */
        if (len) {
          size_t at = below(len), n = 1 + below(len - at);
          memmove(buf + at, buf + at + n, len - at - n);
          len -= n;
        }
        break;
      case 5: /* duplicate a chunk */
        if (len && len < max_len) {
          size_t from = below(len), n = 1 + below(len - from);
          if (n > max_len - len) n = max_len - len;
          size_t at = below(len + 1);
          uint8_t tmp[4096];
          if (n > sizeof tmp) n = sizeof tmp;
          memcpy(tmp, buf + from, n);
          memmove(buf + at + n, buf + at, len - at);
          memcpy(buf + at, tmp, n);
          len += n;
        }
        break;
      case 6: /* a 32-byte big-endian word with a small or huge value (ABI offsets/lengths) */
        if (len >= 32) {
          size_t at = below(len - 31) & ~(size_t)31;
          if (at + 32 > len) at = len - 32;
          uint64_t v = below(4) ? below(len + 64) : rnd();
          memset(buf + at, below(8) ? 0 : 0xff, 24);
          for (int i = 0; i < 8; i++) buf[at + 31 - i] = (uint8_t)(v >> (8 * i));
        }
        break;
      case 7: /* truncate */
        if (len) len = below(len + 1);
        break;
      default: /* splice with another corpus entry */
        if (ncorpus) {
          size_t k = below(ncorpus);
          size_t at = below(len + 1), n = corpus_len[k] ? below(corpus_len[k] + 1) : 0;
          if (at + n > max_len) n = max_len - at;
          if (n) memcpy(buf + at, corpus[k], n);
          if (at + n > len) len = at + n;
        }
    }
  }
  return len;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  const char *ml = getenv("BBVFL_FUZZ_MAX_LEN");
  if (ml && *ml) {
    max_len = (size_t)strtoull(ml, NULL, 10);
    if (max_len < 64) max_len = 64;
    if (max_len > 1 << 20) max_len = 1 << 20;
  }
  if (argc > 1) { /* replay files */
    for (int i = 1; i < argc; i++) {
      FILE *f = fopen(argv[i], "rb");
      if (!f) {
        fprintf(stderr, "cannot open %s\n", argv[i]);
        return 2;
      }
      uint8_t *buf = malloc(1 << 20);
      size_t n = fread(buf, 1, 1 << 20, f);
      fclose(f);
      run_one(buf, n);
      free(buf);
      printf("ran %s (%zu bytes)\n", argv[i], n);
    }
    return 0;
  }
  const char *s = getenv("BBVFL_FUZZ_SEED");
  uint64_t seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) * 1000003u + (uint64_t)getpid();
  rng = seed;
  double seconds = 10;
  const char *sec = getenv("BBVFL_FUZZ_SECONDS");
  if (sec && *sec) seconds = strtod(sec, NULL);
  snprintf(crash_path, sizeof crash_path, "fuzz-crash-%llu.bin", (unsigned long long)seed);
  printf("%s: seed %llu, %.1f s, inputs up to %zu bytes (BBVFL_FUZZ_SEED / BBVFL_FUZZ_SECONDS)\n", argv[0],
         (unsigned long long)seed, seconds, max_len);
  fflush(stdout);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(dump_current);
  signal(SIGSEGV, on_signal);
  signal(SIGABRT, on_signal);
  signal(SIGBUS, on_signal);
  signal(SIGFPE, on_signal);

  if (bbvfl_fuzz_seeds) bbvfl_fuzz_seeds(corpus_add);
  for (size_t i = 0; i < ncorpus; i++) run_one(corpus[i], corpus_len[i]);
  uint8_t *buf = malloc(max_len);
  if (!buf) return 2;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  unsigned long long execs = 0;
  for (;;) {
    if ((execs & 255) == 0) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) >= seconds) break;
    }
    size_t len;
    if (ncorpus == 0 || below(10) == 0) { /* fresh random input, mostly short */
      len = below(8) ? below(256) : below(max_len + 1);
      for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)rnd();
    } else {
      size_t k = below(ncorpus);
      len = corpus_len[k];
      memcpy(buf, corpus[k], len);
    }
    len = mutate(buf, len);
    run_one(buf, len);
    execs++;
    if (below(64) == 0) corpus_add(buf, len); /* no coverage feedback: keep a random walk */
  }
  printf("%s: %llu inputs, no finding\n", argv[0], execs);
  free(buf);
  for (size_t i = 0; i < ncorpus; i++) free(corpus[i]);
  return 0;
}
