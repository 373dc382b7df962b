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

# The other engines nri-wire runs on, for the engine tests (test/engines): Bun and Deno, from the
# npm registry like Node (their per-platform binary packages), installed once into
# ${XDG_CACHE_HOME:-~/.cache}/nri-wire/js-engines/<name>-<range>.
ENGINE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nri-wire/js-engines
BUN_RANGE=1.4
DENO_RANGE=2.9

# engines_path: the directories holding bun and deno, colon-separated, installed in the cache.
engines_path() {
  local bun deno
  case "$(uname -m)" in
    x86_64) bun=@oven/bun-linux-x64 deno=@deno/linux-x64-glibc ;;
    aarch64 | arm64) bun=@oven/bun-linux-aarch64 deno=@deno/linux-arm64-glibc ;;
    *) echo "with-node: no Bun or Deno package for machine $(uname -m)" >&2; return 1 ;;
  esac
  local bun_dir=$ENGINE_CACHE/bun-$BUN_RANGE deno_dir=$ENGINE_CACHE/deno-$DENO_RANGE
  if [ ! -x "$bun_dir/node_modules/$bun/bin/bun" ]; then
    npm install --prefix "$bun_dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$bun@$BUN_RANGE" >&2
  fi
  if [ ! -x "$deno_dir/node_modules/$deno/deno" ]; then
    npm install --prefix "$deno_dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$deno@$DENO_RANGE" >&2
  fi
  echo "$bun_dir/node_modules/$bun/bin:$deno_dir/node_modules/$deno"
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
