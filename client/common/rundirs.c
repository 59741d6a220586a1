/* Where the run-time files live: the build tree's source folders or the installed prefix's
 * share/bbvfl. See rundirs.h. */
#include "common/rundirs.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set by CMakeLists.txt: the source and build trees (absolute, symlinks resolved) and the
 * relative paths from the installed bin/ and lib/ to the installed share/bbvfl. */
#if !defined(BBVFL_SOURCE_TREE) || !defined(BBVFL_BUILD_TREE) || !defined(BBVFL_BIN_TO_SHARE) || \
    !defined(BBVFL_LIB_TO_SHARE)
#error "BBVFL_SOURCE_TREE, BBVFL_BUILD_TREE, BBVFL_BIN_TO_SHARE and BBVFL_LIB_TO_SHARE must be defined"
#endif

static struct {
  int build_tree;
  char share[PATH_MAX]; /* an installed image's share/bbvfl; empty in the build tree */
} g_where;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static const char g_anchor = 0; /* an address inside this image, for dladdr */

static void join(char *out, size_t n, const char *dir, const char *rel) {
  int k = rel[0] == '/' ? snprintf(out, n, "%s", rel) : snprintf(out, n, "%s/%s", dir, rel);
  if (k < 0 || (size_t)k >= n) out[0] = '\0';
}

static void locate(void) {
  char image[PATH_MAX] = "";
  int in_lib = 0;
  /* the shared library: its link map names its file; the executable's entry has an empty name */
  Dl_info info;
  struct link_map *lm = NULL;
  if (dladdr1(&g_anchor, &info, (void **)&lm, RTLD_DL_LINKMAP) != 0 && lm && lm->l_name &&
      lm->l_name[0] && realpath(lm->l_name, image))
    in_lib = 1;
  if (!in_lib && !realpath("/proc/self/exe", image)) image[0] = '\0';
  char *slash = strrchr(image, '/');
  if (slash) *slash = '\0';
  size_t bl = strlen(BBVFL_BUILD_TREE);
  if (image[0] && strncmp(image, BBVFL_BUILD_TREE, bl) == 0 && (image[bl] == '\0' || image[bl] == '/')) {
    g_where.build_tree = 1;
    return;
  }
  char joined[PATH_MAX];
  join(joined, sizeof joined, image, in_lib ? BBVFL_LIB_TO_SHARE : BBVFL_BIN_TO_SHARE);
  /* tidy (bin/../share/bbvfl -> share/bbvfl) when it exists; else as joined, for the messages */
  if (!joined[0] || !realpath(joined, g_where.share)) snprintf(g_where.share, sizeof g_where.share, "%s", joined);
}

int bbvfl_rundir_in_build_tree(void) {
  pthread_once(&g_once, locate);
  return g_where.build_tree;
}

const char *bbvfl_rundir_share(void) {
  const char *env = getenv("BBVFL_SHARE_DIR");
  if (env && *env) return env;
  pthread_once(&g_once, locate);
  return g_where.build_tree ? NULL : g_where.share;
}

const char *bbvfl_rundir_path(bbvfl_rundir which) {
  static _Thread_local char buf[PATH_MAX];
  const char *env = NULL, *sub = NULL;
  switch (which) {
    case BBVFL_RUNDIR_ABI: env = "BBVFL_ABI_DIR", sub = "abi"; break;
    case BBVFL_RUNDIR_DATA: env = "BBVFL_DATA_DIR", sub = "data"; break;
    case BBVFL_RUNDIR_TOOLCHAIN: env = "BBVFL_TOOLCHAIN_DIR", sub = NULL; break;
  }
  if (!env) return NULL;
  const char *v = getenv(env);
  if (v && *v) return v;
  const char *share_env = getenv("BBVFL_SHARE_DIR");
  if (sub && share_env && *share_env) {
    join(buf, sizeof buf, share_env, sub);
    return buf;
  }
  pthread_once(&g_once, locate);
  if (g_where.build_tree) {
    join(buf, sizeof buf, BBVFL_SOURCE_TREE, sub ? sub : "devnet");
    return buf;
  }
  if (!sub) return NULL; /* the toolchain is not installed */
  join(buf, sizeof buf, g_where.share, sub);
  return buf;
}
