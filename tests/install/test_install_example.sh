#!/usr/bin/env bash
# The installed library as outside code sees it: `cmake --install` into a staging prefix, then
# examples/train_offchain.c compiled with -Werror against the installed headers and linked through
# pkg-config (bbvfl.pc), once with libbbvfl.so and once with libbbvfl.a; both run and must agree
# with each other and with the installed `bbvfl train --offchain` of the same configuration.
# Also: every public header compiles alone with only the installed include/ on the include path
# (no private header leaks through a public one), the shared library's SONAME, and that it exports
# exactly the functions the public headers declare.
#   usage: test_install_example.sh BUILD_DIR SOURCE_DIR CC [EXTRA_FLAGS...]
# EXTRA_FLAGS: what the build's objects need at link time (the sanitizer build's -fsanitize=...).
set -euo pipefail
build=$1 src=$2 cc=$3
shift 3
extra=("$@")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v pkg-config >/dev/null || fail "pkg-config is not installed (Debian package pkg-config)"
stage=$tmp/stage
cflags=(-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Werror)

cmake --install "$build" --prefix "$stage" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
pc=$(find "$stage" -name bbvfl.pc -path '*/pkgconfig/*')
[ -n "$pc" ] || fail "no bbvfl.pc installed"
libdir=$(dirname "$(dirname "$pc")")
[ -x "$stage/bin/bbvfl" ] || fail "the bbvfl binary is not installed in bin/"
[ -f "$libdir/libbbvfl.a" ] || fail "libbbvfl.a is not installed in $libdir"
soname=$(readelf -d "$libdir/libbbvfl.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
case "$soname" in libbbvfl.so.[0-9]*) ;; *) fail "libbbvfl.so has no versioned SONAME (got '$soname')" ;; esac
[ -e "$libdir/$soname" ] || fail "the SONAME link $soname is not installed"
# only the public headers are installed: include/bbvfl/*.h and nothing else
others=$(cd "$stage/include" && find . -type f ! -path './bbvfl/*.h')
[ -z "$others" ] || fail "files installed beside the public headers: $others"

export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(sed -n 's/^#define BBVFL_VERSION_STRING "\(.*\)"/\1/p' "$stage/include/bbvfl/version.h")
[ "$(pkg-config --modversion bbvfl)" = "$version" ] || fail "bbvfl.pc says $(pkg-config --modversion bbvfl), version.h $version"
[ "$(pkg-config --variable=prefix bbvfl)" = "$stage" ] || fail "bbvfl.pc's prefix is not the install prefix $stage"
req=$(pkg-config --print-requires-private bbvfl)
for dep in libsecp256k1 libsodium libcurl jansson openblas libcrypto; do
  grep -qw "$dep" <<<"$req" || fail "bbvfl.pc: Requires.private lacks $dep"
done

# every public header on its own, only the installed include/ on the path (C, and C++ when there)
for h in "$stage"/include/bbvfl/*.h; do
  printf '#include <bbvfl/%s>\ntypedef int one_header_only;\n' "$(basename "$h")" >"$tmp/one.c"
  "$cc" "${cflags[@]}" -fsyntax-only -I"$stage/include" "$tmp/one.c" || fail "$(basename "$h") does not compile alone"
  if command -v c++ >/dev/null; then
    c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only -x c++ -I"$stage/include" "$tmp/one.c" ||
      fail "$(basename "$h") does not compile as C++"
  fi
done
"$cc" "${cflags[@]}" -c -I"$stage/include" "$src/examples/train_offchain.c" -o "$tmp/example.o" ||
  fail "the example does not compile with only the installed include/"

# the shared library exports what the headers declare (BBVFL_API), nothing else
nm -D --defined-only "$libdir/libbbvfl.so" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort >"$tmp/exported"
# (every function the preprocessed headers declare: a name followed by '(')
"$cc" -E -P -I"$stage/include" "$stage/include/bbvfl/bbvfl.h" | grep -o '\bbbvfl_[a-z0-9_]*(' | tr -d '(' |
  sort -u >"$tmp/declared"
[ "$(wc -l <"$tmp/declared")" -ge 10 ] || fail "found too few function declarations in the headers"
diff "$tmp/declared" "$tmp/exported" >"$tmp/exports.diff" ||
  { cat "$tmp/exports.diff"; fail "libbbvfl.so's exports differ from the public declarations (< declared, > exported)"; }

data=$src/data/breast_cancer.csv
epochs=3
# shared
"$cc" "${cflags[@]}" "${extra[@]}" "$src/examples/train_offchain.c" $(pkg-config --cflags --libs bbvfl) \
  -Wl,-rpath,"$libdir" -o "$tmp/example_shared" || fail "the example does not build against libbbvfl.so via pkg-config"
readelf -d "$tmp/example_shared" | grep -q "NEEDED.*\[$soname\]" || fail "example_shared does not load $soname"
"$tmp/example_shared" "$data" "$epochs" >"$tmp/shared.out" || { cat "$tmp/shared.out"; fail "example_shared exited $?"; }
cat "$tmp/shared.out"
auroc=$(sed -n 's/^final test AUROC \([0-9.]*\)$/\1/p' "$tmp/shared.out")
# the example's run is seeded (bbvfl_config_set_seed): its noise is the seed's, so no epsilon holds
eps=$(sed -n 's/^epsilon \([0-9.e+inf]*\) at delta 1e-05, level row_feature .*method none.*/\1/p' "$tmp/shared.out")
[ -n "$auroc" ] || fail "no 'final test AUROC' line"
[ "$eps" = inf ] || fail "no 'epsilon inf ... level row_feature ... method none' line (a seeded run)"
[ "$(grep -c '^epoch ' "$tmp/shared.out")" = "$epochs" ] || fail "expected $epochs epoch lines"
awk -v a="$auroc" 'BEGIN { exit !(a > 0.9 && a <= 1) }' || fail "AUROC $auroc: the model did not learn"

# the installed command line, same configuration: the same AUROC and epsilon
"$stage/bin/bbvfl" train --offchain --data "$data" --clients 4 --b 16 --beta 0.2 --batch 10 --P 16 --seed 7 --reproducible-noise \
  --epochs "$epochs" --json --out "$tmp/run" >"$tmp/cli.json" || fail "the installed bbvfl train failed"
python3 - "$tmp/cli.json" "$auroc" "$eps" <<'PY' || fail "the example and bbvfl train --offchain disagree"
import json, sys
d = json.load(open(sys.argv[1]))
auroc, eps = float(sys.argv[2]), float(sys.argv[3])
rf = d["privacy"]["row_feature"]["epsilon"]  # None: reproducible noise, as the example's seeded run
ok = abs(d["auroc"] - auroc) < 1e-6 and rf is None and eps == float("inf") and d["epsilon_void"]
print(f"bbvfl train: AUROC {d['auroc']:.6f} epsilon {rf}; example: AUROC {auroc:.6f} epsilon {eps:.6g}")
sys.exit(0 if ok else 1)
PY

# static: libbbvfl.a with the Libs.private and Requires.private of bbvfl.pc
static_libs=$(pkg-config --static --libs bbvfl) || fail "pkg-config --static --libs bbvfl"
static_libs=${static_libs/-lbbvfl/-l:libbbvfl.a}
if ! "$cc" "${cflags[@]}" "${extra[@]}" "$src/examples/train_offchain.c" $(pkg-config --cflags bbvfl) $static_libs \
     -o "$tmp/example_static" 2>"$tmp/static.log"; then
  # the dependencies' own static closures (libcurl's Libs.private: nghttp2, ssh2, ldap ...) need
  # -dev packages of their own; without them link libbbvfl.a against the shared dependencies,
  # which still checks that bbvfl.pc names every library libbbvfl.a needs
  grep -q "cannot find -l" "$tmp/static.log" || { cat "$tmp/static.log"; fail "static link failed"; }
  echo "note: pkg-config --static: $(grep -o 'cannot find -l[^:]*' "$tmp/static.log" | sort -u | tr '\n' ' ')"
  echo "note: linking libbbvfl.a against the shared dependencies instead"
  private=$(sed -n 's/^Libs.private: //p' "$pc")
  "$cc" "${cflags[@]}" "${extra[@]}" "$src/examples/train_offchain.c" $(pkg-config --cflags bbvfl) \
    -L"$libdir" -l:libbbvfl.a $(pkg-config --libs $req) $private -o "$tmp/example_static" ||
    fail "the example does not link against libbbvfl.a with bbvfl.pc's dependencies"
fi
if readelf -d "$tmp/example_static" | grep -q "NEEDED.*libbbvfl"; then fail "example_static loads libbbvfl.so"; fi
"$tmp/example_static" "$data" "$epochs" >"$tmp/static.out" || fail "example_static exited $?"
diff "$tmp/shared.out" "$tmp/static.out" || fail "the static and the shared example differ"

# a bad input is an error with its category, exit status 1, no crash
set +e
"$tmp/example_shared" "$tmp/missing.csv" >/dev/null 2>"$tmp/err.txt"
st=$?
set -e
[ "$st" = 1 ] || fail "a missing data file: exit $st, expected 1"
grep -q "(io)" "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "a missing data file is not reported as an io error"; }
echo "PASS: installed libbbvfl $version ($soname), the example via pkg-config: shared, static, and = bbvfl train"
