#!/usr/bin/env bash
# Runs a pinned Foundry tool (anvil, forge, cast) from devnet/node_modules without the node shim:
# the platform package carries the real binary.  Usage: devnet/tool.sh anvil|forge|cast ARGS...
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
name=${1:?usage: tool.sh anvil|forge|cast ARGS...}; shift
case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64|arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
bin="$here/node_modules/@foundry-rs/$name-linux-$arch/bin/$name"
[ -x "$bin" ] || { echo "tool.sh: $name not installed at $bin; run ./run.sh setup" >&2; exit 127; }
exec "$bin" "$@"
