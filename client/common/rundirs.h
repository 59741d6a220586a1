/* Where the files bbvfl reads at run time live: the contract artifacts (abi/), the bundled data
 * sets (data/) and, in a build tree only, the pinned node toolchain (devnet/node_modules).
 *
 * The code runs either from the build tree it was compiled in or from an installed (and possibly
 * moved) prefix. Which one is decided by where the running image is: libbbvfl.so itself when the
 * code is in the shared library, else the executable (/proc/self/exe). An image under the build
 * tree (BBVFL_BUILD_TREE, compiled in) reads the source tree (BBVFL_SOURCE_TREE): abi/, data/,
 * devnet/. Any other image reads the prefix it sits in: bin/../share/bbvfl (from an executable) or
 * lib/../share/bbvfl (from the shared library), as `cmake --install` lays it out
 * (BBVFL_BIN_TO_SHARE, BBVFL_LIB_TO_SHARE: the relative paths, compiled in); an installed image
 * never falls back to the source tree. Environment overrides, first match wins:
 *   abi/       $BBVFL_ABI_DIR, then $BBVFL_SHARE_DIR/abi
 *   data/      $BBVFL_DATA_DIR, then $BBVFL_SHARE_DIR/data
 *   toolchain  $BBVFL_TOOLCHAIN_DIR (a folder holding node_modules/@foundry-rs/...); an installed
 *              image has none otherwise (anvil comes from $BBVFL_ANVIL or PATH, devnet/devnet.h)
 * The strings returned are owned by this module (static storage) or by the environment; they stay
 * valid until the next call or setenv. Thread-safe as long as nobody calls setenv meanwhile.
 */
#ifndef BBVFL_COMMON_RUNDIRS_H
#define BBVFL_COMMON_RUNDIRS_H

typedef enum {
  BBVFL_RUNDIR_ABI,       /* the contract artifacts <Name>.json */
  BBVFL_RUNDIR_DATA,      /* breast_cancer.csv and the other bundled data sets */
  BBVFL_RUNDIR_TOOLCHAIN, /* the folder holding node_modules/@foundry-rs */
} bbvfl_rundir;

/* The folder for `which` (see above), without a trailing slash. NULL only for
 * BBVFL_RUNDIR_TOOLCHAIN of an installed image without $BBVFL_TOOLCHAIN_DIR. */
const char *bbvfl_rundir_path(bbvfl_rundir which);

/* 1 when the running image is in the build tree (source-tree files), 0 when installed. */
int bbvfl_rundir_in_build_tree(void);

/* The installed layout's share folder (e.g. /usr/local/share/bbvfl) the image would use, or
 * $BBVFL_SHARE_DIR when set; NULL for a build-tree image without $BBVFL_SHARE_DIR. */
const char *bbvfl_rundir_share(void);

#endif
