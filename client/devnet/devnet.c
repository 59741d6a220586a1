#include "devnet/devnet.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/rundirs.h"


int bbvfl_find_tool(const char *tool, char *buf, size_t n, bbvfl_err *err) {
  char envname[64];
  size_t i = 0;
  const char *pfx = "BBVFL_";
  for (; pfx[i]; i++) envname[i] = pfx[i];
  for (size_t j = 0; tool[j] && i + 1 < sizeof envname; j++)
    envname[i++] = (char)toupper((unsigned char)tool[j]);
  envname[i] = '\0';
  const char *env = getenv(envname);
  if (env && *env) {
    if (access(env, X_OK) != 0)
      return bbvfl_fail(err, BBVFL_E_ARG, "%s=%s is not an executable file", envname, env);
    snprintf(buf, n, "%s", env);
    return 0;
  }
  struct utsname u;
  const char *arch = "amd64";
  if (uname(&u) == 0 && (strcmp(u.machine, "aarch64") == 0 || strcmp(u.machine, "arm64") == 0))
    arch = "arm64";
  /* the pinned toolchain: $BBVFL_TOOLCHAIN_DIR or the source tree's devnet/ (none installed) */
  const char *devdir = bbvfl_rundir_path(BBVFL_RUNDIR_TOOLCHAIN);
  if (devdir) {
    snprintf(buf, n, "%s/node_modules/@foundry-rs/%s-linux-%s/bin/%s", devdir, tool, arch, tool);
    if (access(buf, X_OK) == 0) return 0;
  }
  const char *path = getenv("PATH");
  if (path) {
    char *copy = strdup(path);
    if (!copy) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    char *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
      snprintf(buf, n, "%s/%s", d, tool);
      if (access(buf, X_OK) == 0) {
        free(copy);
        return 0;
      }
    }
    free(copy);
  }
  if (!bbvfl_rundir_in_build_tree())
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "%s not found on PATH: set %s to its path (or BBVFL_TOOLCHAIN_DIR to a bbvfl "
                      "source tree's devnet/ folder holding the pinned toolchain)",
                      tool, envname);
  return bbvfl_fail(err, BBVFL_E_ARG,
                    "%s not found: run ./run.sh setup (installs the pinned toolchain under "
                    "devnet/node_modules) or set %s to its path",
                    tool, envname);
}

/* ---- a tiny JSON-RPC probe (the full client lives in eth/rpc) ---- */

typedef struct {
  char buf[4096];
  size_t len;
} probe_body;

static size_t probe_write(char *ptr, size_t size, size_t nmemb, void *ud) {
  probe_body *b = ud;
  size_t n = size * nmemb;
  size_t room = sizeof b->buf - 1 - b->len;
  size_t take = n < room ? n : room;
  memcpy(b->buf + b->len, ptr, take);
  b->len += take;
  b->buf[b->len] = '\0';
  return n;
}

static int probe_once(const char *url, unsigned long long *chain_id, char *why, size_t whylen) {
  CURL *c = curl_easy_init();
  if (!c) {
    snprintf(why, whylen, "libcurl init failed");
    return -1;
  }
  probe_body body = {.len = 0};
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  const char *req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_chainId\",\"params\":[]}";
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, req);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, probe_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 2000L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) {
    snprintf(why, whylen, "%s", curl_easy_strerror(rc));
    return -1;
  }
  json_error_t je;
  json_t *doc = json_loads(body.buf, 0, &je);
  const char *res = doc ? json_string_value(json_object_get(doc, "result")) : NULL;
  if (!res || strncmp(res, "0x", 2) != 0) {
    snprintf(why, whylen, "unexpected answer to eth_chainId");
    json_decref(doc);
    return -1;
  }
  *chain_id = strtoull(res + 2, NULL, 16);
  json_decref(doc);
  return 0;
}

int bbvfl_devnet_ping(const char *url, double timeout_s, unsigned long long *chain_id,
                      bbvfl_err *err) {
  double until = bbvfl_now() + timeout_s;
  char why[256] = "";
  for (;;) {
    if (probe_once(url, chain_id, why, sizeof why) == 0) return 0;
    if (bbvfl_now() >= until) break;
    bbvfl_sleep(0.05);
  }
  return bbvfl_fail(err, BBVFL_E_RPC, "no JSON-RPC answer from %s within %.0f s: %s", url,
                    timeout_s, why);
}

/* ---- devnet.json ---- */

static int record_path(const char *dir, char *buf, size_t n) {
  int k = snprintf(buf, n, "%s/devnet.json", dir);
  return (k < 0 || (size_t)k >= n) ? -1 : 0;
}

static int write_record(const bbvfl_devnet *d, bbvfl_err *err) {
  json_t *o = json_pack("{s:I, s:i, s:s, s:I, s:s, s:s, s:s}", "pid", (json_int_t)d->pid, "port",
                        d->port, "rpc_url", d->rpc_url, "chain_id", (json_int_t)d->chain_id,
                        "log", d->log_path, "state", d->state_path, "dir", d->dir);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  char *s = json_dumps(o, JSON_INDENT(2));
  json_decref(o);
  if (!s) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  char path[1100];
  record_path(d->dir, path, sizeof path);
  int rc = bbvfl_write_file_atomic(path, s, strlen(s), 0644, err);
  free(s);
  return rc;
}

int bbvfl_devnet_load(const char *dir, bbvfl_devnet *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  char path[1100];
  if (record_path(dir, path, sizeof path) != 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "run folder name too long");
  if (access(path, F_OK) != 0)
    return bbvfl_fail(err, BBVFL_E_STATE, "no devnet recorded in %s (start one with: bbvfl devnet up --dir %s)", dir, dir);
  json_error_t je;
  json_t *o = json_load_file(path, 0, &je);
  if (!o) return bbvfl_fail(err, BBVFL_E_PARSE, "%s: %s (line %d)", path, je.text, je.line);
  json_t *pid = json_object_get(o, "pid"), *port = json_object_get(o, "port");
  const char *url = json_string_value(json_object_get(o, "rpc_url"));
  if (!json_is_integer(pid) || !json_is_integer(port) || !url) {
    json_decref(o);
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s lacks pid, port or rpc_url", path);
  }
  out->pid = (pid_t)json_integer_value(pid);
  out->port = (int)json_integer_value(port);
  out->chain_id = (unsigned long long)json_integer_value(json_object_get(o, "chain_id"));
  snprintf(out->rpc_url, sizeof out->rpc_url, "%s", url);
  snprintf(out->dir, sizeof out->dir, "%s", dir);
  const char *s;
  if ((s = json_string_value(json_object_get(o, "log")))) snprintf(out->log_path, sizeof out->log_path, "%s", s);
  if ((s = json_string_value(json_object_get(o, "state")))) snprintf(out->state_path, sizeof out->state_path, "%s", s);
  json_decref(o);
  return 0;
}

/* Is pid a live process whose command line names anvil? (Guards against pid reuse.) */
static int pid_is_anvil(pid_t pid) {
  if (pid <= 1) return 0;
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0; /* a zombie has an empty command line */
  buf[n] = '\0';
  const char *base = strrchr(buf, '/');
  base = base ? base + 1 : buf;
  return strcmp(base, "anvil") == 0;
}

int bbvfl_devnet_alive(const bbvfl_devnet *d) { return pid_is_anvil(d->pid); }

/* Reads the port from anvil's "Listening on 127.0.0.1:PORT" line. */
static int port_from_log(const char *log_path) {
  char *text = NULL;
  size_t len = 0;
  if (bbvfl_read_file(log_path, 1 << 20, &text, &len, NULL) != 0) return 0;
  int port = 0;
  const char *p = strstr(text, "Listening on ");
  if (p) {
    const char *colon = strrchr(p, ':');
    const char *nl = strchr(p, '\n');
    if (colon && (!nl || colon < nl)) port = atoi(colon + 1);
  }
  free(text);
  return port;
}

static void reap_if_child(pid_t pid) {
  int st;
  (void)waitpid(pid, &st, WNOHANG);
}

int bbvfl_devnet_up(const bbvfl_devnet_opts *o, bbvfl_devnet *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (!o->dir || !*o->dir) return bbvfl_fail(err, BBVFL_E_ARG, "devnet: a run folder is required");
  if (o->port < 0 || o->port > 65535)
    return bbvfl_fail(err, BBVFL_E_ARG, "devnet: port %d is out of range (0-65535)", o->port);
  if (bbvfl_mkdirs(o->dir, 0755, err) != 0) return -1;
  bbvfl_devnet old;
  if (bbvfl_devnet_load(o->dir, &old, NULL) == 0 && bbvfl_devnet_alive(&old))
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "a devnet is already running from %s (pid %ld, %s); stop it with: bbvfl "
                      "devnet down --dir %s",
                      o->dir, (long)old.pid, old.rpc_url, o->dir);
  char anvil[1024];
  if (o->anvil) snprintf(anvil, sizeof anvil, "%s", o->anvil);
  else if (bbvfl_find_tool("anvil", anvil, sizeof anvil, err) != 0) return -1;

  char absdir[1024];
  if (!realpath(o->dir, absdir)) return bbvfl_fail(err, BBVFL_E_IO, "cannot resolve %s: %s", o->dir, strerror(errno));
  snprintf(out->dir, sizeof out->dir, "%s", absdir);
  snprintf(out->log_path, sizeof out->log_path, "%s/anvil.log", absdir);
  if (o->state) snprintf(out->state_path, sizeof out->state_path, "%s", o->state);
  else if (o->persist) snprintf(out->state_path, sizeof out->state_path, "%s/state.json", absdir);

  char portbuf[16], btbuf[32], cachebuf[1100];
  snprintf(portbuf, sizeof portbuf, "%d", o->port);
  /* anvil writes the historical states it evicts from memory under --cache-path, by default
     ~/.foundry/anvil/tmp, and never removes them (about 1 GB per long session): keep them in the
     run folder, where `down` deletes them */
  snprintf(cachebuf, sizeof cachebuf, "%s/anvil-cache", absdir);
  const char *argv[24];
  int a = 0;
  argv[a++] = anvil;
  argv[a++] = "--host";
  argv[a++] = "127.0.0.1";
  argv[a++] = "--port";
  argv[a++] = portbuf;
  argv[a++] = "--cache-path";
  argv[a++] = cachebuf;
  if (out->state_path[0]) {
    argv[a++] = "--state";
    argv[a++] = out->state_path;
    if (!o->dump_at_exit_only) {
      argv[a++] = "--state-interval"; /* also survive a hard kill: dump every 2 s */
      argv[a++] = "2";
    }
  }
  const char *fork_name = o->hardfork ? o->hardfork : "cancun";
  if (strcmp(fork_name, "default") != 0) {
    argv[a++] = "--hardfork";
    argv[a++] = fork_name;
  }
  if (o->block_time > 0) {
    snprintf(btbuf, sizeof btbuf, "%g", o->block_time);
    argv[a++] = "--block-time";
    argv[a++] = btbuf;
  }
  if (o->lean_history) {
    argv[a++] = "--prune-history";
    argv[a++] = "8";
  }
  argv[a] = NULL;

  int logfd = open(out->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (logfd < 0) return bbvfl_fail(err, BBVFL_E_IO, "cannot write %s: %s", out->log_path, strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(logfd);
    return bbvfl_fail(err, BBVFL_E_INTERNAL, "fork failed: %s", strerror(errno));
  }
  if (pid == 0) {
    setsid(); /* its own process group: a Ctrl-C aimed at us is handled by us, not by anvil */
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    dup2(logfd, 1);
    dup2(logfd, 2);
    execv(anvil, (char *const *)argv);
    dprintf(2, "exec %s failed: %s\n", anvil, strerror(errno));
    _exit(127);
  }
  close(logfd);
  out->pid = pid;
  double timeout = o->timeout_s > 0 ? o->timeout_s : 30.0;
  double until = bbvfl_now() + timeout;
  while (out->port == 0) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      return bbvfl_fail(err, BBVFL_E_STATE,
                        "anvil exited before it listened (status %d); see %s (port %d taken?)",
                        WIFEXITED(st) ? WEXITSTATUS(st) : -1, out->log_path, o->port);
    }
    out->port = port_from_log(out->log_path);
    if (out->port) break;
    if (bbvfl_now() > until) {
      kill(pid, SIGKILL);
      reap_if_child(pid);
      return bbvfl_fail(err, BBVFL_E_TIMEOUT, "anvil did not start listening within %.0f s; see %s", timeout, out->log_path);
    }
    bbvfl_sleep(0.02);
  }
  snprintf(out->rpc_url, sizeof out->rpc_url, "http://127.0.0.1:%d", out->port);
  double left = until - bbvfl_now();
  if (bbvfl_devnet_ping(out->rpc_url, left > 1 ? left : 1, &out->chain_id, err) != 0) {
    kill(pid, SIGKILL);
    reap_if_child(pid);
    return bbvfl_wrap(err, "anvil started (pid %ld) but does not answer", (long)pid);
  }
  if (write_record(out, err) != 0) {
    kill(pid, SIGTERM);
    reap_if_child(pid);
    return -1;
  }
  return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

int bbvfl_devnet_down(const char *dir, double timeout_s, bbvfl_err *err) {
  bbvfl_devnet d;
  if (bbvfl_devnet_load(dir, &d, err) != 0) return -1;
  if (timeout_s <= 0) timeout_s = 15.0;
  if (bbvfl_devnet_alive(&d)) {
    kill(d.pid, SIGTERM); /* anvil dumps its state (with --state) and exits */
    double until = bbvfl_now() + timeout_s;
    while (bbvfl_devnet_alive(&d) && bbvfl_now() < until) {
      reap_if_child(d.pid);
      bbvfl_sleep(0.02);
    }
    if (bbvfl_devnet_alive(&d)) {
      kill(d.pid, SIGKILL);
      until = bbvfl_now() + 5;
      while (bbvfl_devnet_alive(&d) && bbvfl_now() < until) {
        reap_if_child(d.pid);
        bbvfl_sleep(0.02);
      }
    }
    reap_if_child(d.pid);
    if (bbvfl_devnet_alive(&d))
      return bbvfl_fail(err, BBVFL_E_STATE, "anvil (pid %ld) did not stop", (long)d.pid);
  }
  char path[1100];
  /* anvil's evicted states (see --cache-path in up): scratch, useless once it has stopped */
  snprintf(path, sizeof path, "%s/anvil-cache", d.dir);
  nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  record_path(dir, path, sizeof path);
  if (unlink(path) != 0 && errno != ENOENT)
    return bbvfl_fail(err, BBVFL_E_IO, "cannot remove %s: %s", path, strerror(errno));
  return 0;
}
