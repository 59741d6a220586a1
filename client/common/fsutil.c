#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int bbvfl_write_file_atomic(const char *path, const void *data, size_t len, int mode,
                            bbvfl_err *err) {
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 32);
  if (!tmp) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory writing %s", path);
  snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    int e = errno;
    free(tmp);
    return bbvfl_fail(err, BBVFL_E_IO, "cannot write %s: %s", path, strerror(e));
  }
  const unsigned char *p = data;
  size_t left = len;
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      unlink(tmp);
      free(tmp);
      return bbvfl_fail(err, BBVFL_E_IO, "cannot write %s: %s (nothing was changed)", path,
                        strerror(e));
    }
    p += n;
    left -= (size_t)n;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int e = errno;
    unlink(tmp);
    free(tmp);
    return bbvfl_fail(err, BBVFL_E_IO, "cannot write %s: %s (nothing was changed)", path,
                      strerror(e));
  }
  if (rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    free(tmp);
    return bbvfl_fail(err, BBVFL_E_IO, "cannot replace %s: %s", path, strerror(e));
  }
  free(tmp);
  return 0;
}

int bbvfl_read_file(const char *path, size_t max_len, char **out, size_t *len, bbvfl_err *err) {
  *out = NULL;
  if (len) *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return bbvfl_fail(err, BBVFL_E_IO, "cannot open %s: %s", path, strerror(errno));
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory reading %s", path);
  }
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > max_len + 1) {
        free(buf);
        fclose(f);
        return bbvfl_fail(err, BBVFL_E_IO, "%s is larger than the limit of %zu bytes", path,
                          max_len);
      }
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        fclose(f);
        return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory reading %s", path);
      }
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  int bad = ferror(f) ? errno : 0;
  fclose(f);
  if (bad) {
    free(buf);
    if (bad == EISDIR) return bbvfl_fail(err, BBVFL_E_IO, "%s is a folder, not a file", path);
    return bbvfl_fail(err, BBVFL_E_IO, "error reading %s: %s", path, strerror(bad));
  }
  if (n > max_len) {
    free(buf);
    return bbvfl_fail(err, BBVFL_E_IO, "%s is larger than the limit of %zu bytes", path, max_len);
  }
  buf[n] = '\0';
  *out = buf;
  if (len) *len = n;
  return 0;
}

int bbvfl_mkdirs(const char *path, int mode, bbvfl_err *err) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) return bbvfl_fail(err, BBVFL_E_ARG, "bad folder name '%s'", path);
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
        return bbvfl_fail(err, BBVFL_E_IO, "cannot create folder %s: %s", buf, strerror(errno));
      buf[i] = c;
    }
  }
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
    return bbvfl_fail(err, BBVFL_E_IO, "%s exists and is not a folder", path);
  return 0;
}

double bbvfl_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bbvfl_sleep(double seconds) {
  if (seconds <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void bbvfl_utc_stamp(char *out, size_t n) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  if (n) out[0] = 0;
  strftime(out, n, "%Y%m%dT%H%M%SZ", &tm);
}
