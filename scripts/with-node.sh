#!/usr/bin/env bash
# scripts/with-node.sh [--line N] COMMAND [ARG...]: runs COMMAND with Node first on PATH (npm, npx
# and every child process use it too). Without --line it uses the Node on PATH when it is a
# supported line (22, 24, 26 or newer), and otherwise Node 26; --line N always uses line N. A line
# that is needed comes from the npm registry (node-linux-<arch>@N), installed once into
# ${XDG_CACHE_HOME:-~/.cache}/nri-wire/node/N. .ci/run sources this file for with_node.
set -euo pipefail

NODE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nri-wire/node

# node_bin LINE: the directory holding the newest node of LINE from the registry, installed in the cache.
node_bin() {
  local arch dir=$NODE_CACHE/$1
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "with-node: no Node package for machine $(uname -m)" >&2; return 1 ;;
  esac
  if [ ! -x "$dir/node_modules/node-linux-$arch/bin/node" ]; then
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-$arch@$1" >&2
  fi
  echo "$dir/node_modules/node-linux-$arch/bin"
}

# with_node LINE COMMAND...: runs COMMAND with that line's node first on PATH.
with_node() {
  local bin
  bin=$(node_bin "$1")
  PATH="$bin:$PATH" "${@:2}"
}

# supported_on_path: whether the node on PATH is a supported line.
supported_on_path() {
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || return 1
  [ "$major" = 22 ] || [ "$major" = 24 ] || [ "$major" -ge 26 ]
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  if [ "${1:-}" = --line ]; then
    with_node "$2" "${@:3}"
  elif supported_on_path; then
    exec "$@"
  else
    with_node 26 "$@"
  fi
fi
