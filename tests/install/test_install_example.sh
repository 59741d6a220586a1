#!/usr/bin/env bash
# The installed library as outside code sees it: `cmake --install` into a staging prefix, then
# examples/train_offchain.c compiled with -Werror against the installed headers and linked through
# pkg-config (bbvfl.pc), once with libbbvfl.so and once with libbbvfl.a; both run and must agree
# with each other and with the installed `bbvfl train --offchain` of the same configuration.
# Also: every public header compiles alone with only the installed include/ on the include path
# (no private header leaks through a public one), the shared library's SONAME, and that it exports
# exactly the functions the public headers declare.
# Then the installed command on its own, from a copy of the prefix moved elsewhere (it must find
# share/bbvfl/ relative to itself, never through the source tree): `bbvfl devnet up` (anvil from
# BBVFL_ANVIL only), `bbvfl deploy` (the installed abi/ and data/), `bbvfl demo --epochs 1` on that
# devnet; without data/ or abi/ a deploy fails naming the installed folder and sends nothing; without
# BBVFL_ANVIL anvil is not found. Every other examples/NAME.c is an on-chain example: built
# against the installed libbbvfl.so via pkg-config and run as `NAME RPC_URL RUN_DIR` on that
# devnet, with no BBVFL_* variable set (the library finds share/bbvfl beside itself); it must exit
# 0 and print a line starting "audit: pass".
#   usage: test_install_example.sh BUILD_DIR SOURCE_DIR CC [EXTRA_FLAGS...]
# EXTRA_FLAGS: what the build's objects need at link time (the sanitizer build's -fsanitize=...).
set -euo pipefail
build=$1 src=$2 cc=$3
shift 3
extra=("$@")
. "$src/tests/support/skip.sh"
# what the installed tree finds must come from the tree itself
unset BBVFL_ABI_DIR BBVFL_DATA_DIR BBVFL_TOOLCHAIN_DIR BBVFL_SHARE_DIR BBVFL_ANVIL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-install-test.XXXXXX")
devnet_bin=""
cleanup() {
  if [ -n "$devnet_bin" ]; then "$devnet_bin" devnet down --dir "$tmp/devnet" >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
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

# ---- the installed command from a moved copy of the prefix: devnet, deploy, demo ----
[ -d "$stage/share/bbvfl/abi" ] && [ -f "$stage/share/bbvfl/data/breast_cancer.csv" ] ||
  fail "share/bbvfl/abi and share/bbvfl/data/breast_cancer.csv are not installed"
diff -r "$src/abi" "$stage/share/bbvfl/abi" >/dev/null || fail "the installed abi/ differs from the source tree's"
moved=$tmp/moved
cp -a "$stage" "$moved"
bin=$moved/bin/bbvfl
case "$(uname -m)" in aarch64 | arm64) arch=arm64 ;; *) arch=amd64 ;; esac
anvil=$src/devnet/node_modules/@foundry-rs/anvil-linux-$arch/bin/anvil
blocknum() {
  python3 -c 'import json, sys, urllib.request
r = urllib.request.Request(sys.argv[1], json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []}).encode(),
                           {"Content-Type": "application/json"})
print(int(json.load(urllib.request.urlopen(r, timeout=30))["result"], 16))' "$1"
}
if [ ! -x "$anvil" ]; then
  bbvfl_skip_setup "the pinned anvil ($anvil; ./run.sh setup): the installed bbvfl's deploy and demo"
else
  # no anvil unless named: the installed bbvfl does not look into the source tree's devnet/
  if ! PATH=/usr/bin:/bin command -v anvil >/dev/null; then
    set +e
    PATH=/usr/bin:/bin "$bin" devnet up --dir "$tmp/nodevnet" >/dev/null 2>"$tmp/noanvil.err"
    st=$?
    set -e
    [ "$st" != 0 ] || { "$bin" devnet down --dir "$tmp/nodevnet" >/dev/null 2>&1; fail "the installed bbvfl found an anvil nobody named"; }
    grep -q "BBVFL_ANVIL" "$tmp/noanvil.err" || { cat "$tmp/noanvil.err"; fail "no anvil: the error does not name BBVFL_ANVIL"; }
  fi
  devnet_bin=$bin
  BBVFL_ANVIL=$anvil "$bin" devnet up --dir "$tmp/devnet" --json >"$tmp/devnet.json" ||
    { cat "$tmp/devnet/anvil.log" 2>/dev/null; fail "the installed bbvfl devnet up"; }
  rpc_url=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["rpc_url"])' "$tmp/devnet.json")
  mkdir "$tmp/session"
  "$bin" deploy --rpc "$rpc_url" --open-registration --clients 3 --epochs 1 --seed 3 --out "$tmp/session/session.json" --json \
    >"$tmp/deploy.json" || fail "the installed bbvfl deploy (from $moved/share/bbvfl)"
  python3 - "$tmp/deploy.json" "$tmp/session/session.json" <<'PY' || fail "the installed bbvfl deploy: unexpected output"
import json, sys
d = json.load(open(sys.argv[1]))
session = open(sys.argv[2]).read()
json.loads(session)
assert d["contract"].startswith("0x") and len(d["contract"]) == 42, d
assert d["contract"].lower() in session.lower(), "session.json does not name the deployed contract"
print("installed deploy:", d["contract"], "block", d["deploy_block"])
PY
  "$bin" demo --epochs 1 --rpc "$rpc_url" --out "$tmp/demo" --json >"$tmp/demo.out" 2>"$tmp/demo.err" ||
    { tail -n 20 "$tmp/demo.err"; fail "the installed bbvfl demo --epochs 1"; }
  python3 - "$tmp/demo.out" <<'PY' || fail "the installed bbvfl demo: no sane report"
import json, sys
rep = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert rep["epochs"] == 1 and 0.5 < rep["auroc"] <= 1, rep
print("installed demo --epochs 1: AUROC %.4f, gas per coordinate %s" % (rep["auroc"], rep["gas_per_coordinate"]))
PY
  # without the installed data/ (then abi/) a deploy fails before any transaction, naming the
  # installed folder (the source tree's are still there: finding them would be a fall-back)
  for sub in data abi; do
    mv "$moved/share/bbvfl/$sub" "$tmp/$sub.aside"
    before=$(blocknum "$rpc_url")
    set +e
    "$bin" deploy --rpc "$rpc_url" --open-registration --clients 3 --epochs 1 --seed 3 --out "$tmp/session/again.json" >/dev/null 2>"$tmp/no$sub.err"
    st=$?
    set -e
    [ "$st" != 0 ] || fail "deploy without the installed $sub/ succeeded (did it read the source tree?)"
    grep -qF "$moved/share/bbvfl/$sub/" "$tmp/no$sub.err" || { cat "$tmp/no$sub.err"; fail "the error does not name the installed $sub/ folder"; }
    [ "$(blocknum "$rpc_url")" = "$before" ] || fail "a deploy failing for want of $sub/ mined a block"
    [ ! -e "$tmp/session/again.json" ] || fail "a deploy failing for want of $sub/ wrote its session file"
    [ "$sub" = abi ] || mv "$tmp/$sub.aside" "$moved/share/bbvfl/$sub"
  done
  # BBVFL_SHARE_DIR points the same binary at another share/bbvfl
  BBVFL_SHARE_DIR=$stage/share/bbvfl "$bin" deploy --rpc "$rpc_url" --open-registration --clients 3 --epochs 1 --seed 3 \
    --out "$tmp/session/shared.json" >/dev/null || fail "deploy with BBVFL_SHARE_DIR=$stage/share/bbvfl"

  # the on-chain examples, against the installed shared library
  for ex in "$src"/examples/*.c; do
    name=$(basename "$ex" .c)
    [ "$name" = train_offchain ] && continue
    "$cc" "${cflags[@]}" "${extra[@]}" "$ex" $(pkg-config --cflags --libs bbvfl) -Wl,-rpath,"$libdir" \
      -o "$tmp/$name" || fail "examples/$name.c does not build against the installed libbbvfl.so via pkg-config"
    "$tmp/$name" "$rpc_url" "$tmp/run-$name" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
      { tail -n 30 "$tmp/$name.out" "$tmp/$name.err"; fail "examples/$name exited non-zero"; }
    grep -q '^audit: pass' "$tmp/$name.out" || { tail -n 30 "$tmp/$name.out"; fail "examples/$name: no 'audit: pass' line"; }
    echo "examples/$name: $(grep '^audit: pass' "$tmp/$name.out" | head -n 1)"
  done
fi

echo "PASS: installed libbbvfl $version ($soname), the example via pkg-config: shared, static, and = bbvfl train;" \
  "the installed bbvfl (moved) deploys and runs demo from its share/bbvfl"
bbvfl_skip_exit
