#include "eth_vectors.h"
#include "test_skip.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

int bbvfl_test_vectors(const char *file, json_t **out, const char **why) {
  static char msg[1024];
  *out = NULL;
  const char *dir = getenv("BBVFL_SHARED_DIR");
  if (!dir || !*dir) {
    *why = "BBVFL_SHARED_DIR is not set: skipping the ethers.js vector tests";
    return 0;
  }
  char path[768];
  snprintf(path, sizeof path, "%s/vectors/%s", dir, file);
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(msg, sizeof msg, "%s is absent: skipping the ethers.js vector tests", path);
    *why = msg;
    return 0;
  }
  if (strchr(path, '\'')) {
    *why = "the vector path contains a quote character";
    return -1;
  }
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
  FILE *p = popen(cmd, "r");
  if (!p) {
    *why = "cannot run gzip";
    return -1;
  }
  json_error_t jerr;
  json_t *root = json_loadf(p, 0, &jerr);
  int rc = pclose(p);
  if (!root || rc != 0) {
    snprintf(msg, sizeof msg, "cannot read %s: %s", path, root ? "gzip failed" : jerr.text);
    json_decref(root);
    *why = msg;
    return -1;
  }
  *out = root;
  return 1;
}

json_t *bbvfl_test_vectors_or_skip(const char *file) {
  json_t *root;
  const char *why;
  int rc = bbvfl_test_vectors(file, &root, &why);
  if (rc == 0) {
    bbvfl_test_skip(BBVFL_SKIP_SETUP, why);
  }
  if (rc < 0) fail_msg("%s", why);
  return root;
}

char *bbvfl_test_run_cast(const char *const *args, const char **why) {
  static char msg[256];
  const char *cast = getenv("BBVFL_CAST");
  if (!cast || !*cast) {
    *why = "BBVFL_CAST is not set";
    return NULL;
  }
  size_t nargs = 0;
  while (args[nargs]) nargs++;
  char **argv = calloc(nargs + 2, sizeof *argv);
  if (!argv) return NULL;
  argv[0] = (char *)cast;
  for (size_t i = 0; i < nargs; i++) argv[i + 1] = (char *)args[i];
  int fds[2];
  if (pipe(fds) != 0) {
    free(argv);
    *why = "pipe failed";
    return NULL;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    free(argv);
    *why = "fork failed";
    return NULL;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execv(cast, argv);
    _exit(127);
  }
  free(argv);
  close(fds[1]);
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (len + 1024 > cap) {
      cap *= 2;
      char *nb = realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    ssize_t r = read(fds[0], buf + len, cap - len - 1);
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  buf[len] = '\0';
  while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ')) buf[--len] = '\0';
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(msg, sizeof msg, "cast %s exited with status %d", args[0] ? args[0] : "",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    *why = msg;
    free(buf);
    return NULL;
  }
  return buf;
}
