#!/usr/bin/env bash
# Lists every global symbol a library defines (exports to whoever links it) whose name does not
# start with bbvfl_: one line per symbol, "NAME<TAB>OBJECT" (OBJECT: the archive member that
# defines it, or the library's file name for a shared library), sorted by name. Prints nothing
# when every exported global is prefixed. Exit status 0 either way; 2 on a usage or nm error.
#   usage: list_unprefixed.sh LIBRARY...   (libbbvfl.a, libbbvfl.so, or any .o/.a/.so)
# Defined globals are nm's upper-case kinds other than U (T text, D/B/G/S data, R read-only,
# C common, W/V weak, i indirect functions); for a shared library its dynamic symbol table.
# Not counted: __odr_asan.NAME, which AddressSanitizer adds beside each global NAME (build-asan).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: list_unprefixed.sh LIBRARY..." >&2; exit 2; }
command -v nm >/dev/null || { echo "list_unprefixed.sh: nm not found (Debian package binutils)" >&2; exit 2; }
for lib in "$@"; do
  [ -f "$lib" ] || { echo "list_unprefixed.sh: $lib: no such file" >&2; exit 2; }
  case "$lib" in
    *.so | *.so.*) dyn=(-D) ;;
    *) dyn=() ;;
  esac
  out=$(nm "${dyn[@]}" -g --defined-only "$lib" 2>&1) || { echo "list_unprefixed.sh: nm $lib: $out" >&2; exit 2; }
  # member headers ("name.o:") name the object of the lines that follow
  awk -v lib="$(basename "$lib")" '
    /:$/ { obj = substr($0, 1, length($0) - 1); next }
    NF >= 2 {
      name = $NF; kind = $(NF - 1)
      if (kind !~ /^[TDBGSRCWVi]$/) next
      if (name ~ /^bbvfl_/) next
      if (name ~ /^__odr_asan[._]/) next  # AddressSanitizer'"'"'s own marker beside each global
      print name "\t" (obj != "" ? obj : lib)
    }' <<<"$out"
done | sort -u
