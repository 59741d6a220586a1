#!/usr/bin/env bash
# The installed library's namespace (ctest install_symbols, label symbols): `cmake --install` into
# a staging prefix, then every global that libbbvfl.a and libbbvfl.so define must carry the bbvfl_
# prefix, so a program linking libbbvfl (statically above all: the archive exports every internal
# function) never collides with it. Prints each unprefixed symbol with the object defining it and
# fails when there is one. (libbbvfl.so exporting exactly the public functions is checked by
# test_install_example.sh.)
#   usage: test_install_symbols.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-install-symbols.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$tmp/stage" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
libs=$(find "$tmp/stage" \( -name libbbvfl.a -o -name 'libbbvfl.so.*.*' \) -type f | sort)
[ "$(wc -l <<<"$libs")" = 2 ] || fail "expected an installed libbbvfl.a and libbbvfl.so.N.N.N, found: $libs"
# the lister must see the globals at all (a broken nm pipeline would pass as "none unprefixed")
total=$(nm -g --defined-only "$(grep '\.a$' <<<"$libs")" | awk 'NF == 3 && $2 ~ /^[TDBGSRCWVi]$/' | wc -l)
[ "$total" -ge 100 ] || fail "libbbvfl.a: only $total defined globals seen"
# shellcheck disable=SC2086
bash "$here/list_unprefixed.sh" $libs >"$tmp/unprefixed"
n=$(wc -l <"$tmp/unprefixed")
if [ "$n" -gt 0 ]; then
  cat "$tmp/unprefixed"
  echo "by prefix: $(sed 's/_.*//' "$tmp/unprefixed" | sort | uniq -c | awk '{printf "%s_* %s  ", $2, $1}')"
  fail "$n of $total exported globals lack the bbvfl_ prefix (make them static or prefix them)"
fi
echo "PASS: all $total exported globals of the installed libbbvfl carry the bbvfl_ prefix"
