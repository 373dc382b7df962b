# Sourced by the build scripts (scripts/runtimes/build.sh, scripts/cluster/build.sh). Each sets
# STEP_PREFIX (the word its messages start with) before using these.

# step NAME LOG COMMAND...: runs COMMAND with its output in LOG, naming NAME and LOG on failure.
step() {
  local name=$1 log=$2
  shift 2
  echo "$STEP_PREFIX: $name (log: $log)" >&2
  local start=$SECONDS
  if ! "$@" >"$log" 2>&1; then
    echo "$STEP_PREFIX: $name failed; log: $log" >&2
    tail -n 20 "$log" | sed 's/^/  | /' >&2
    exit 1
  fi
  echo "$STEP_PREFIX: $name done in $((SECONDS - start)) s" >&2
}

# go_download MODULE@VERSION [nosumdb]: the module's source directory, fetched through the module
# proxy; go's output on stderr. With `nosumdb` the checksum database is not asked about MODULE
# (it does not list cri-tools).
go_download() {
  local mod=${1%@*} tmp nosumdb=
  [ "${2:-}" = nosumdb ] && nosumdb=$mod
  tmp=$(mktemp -d)
  printf 'module download\n\ngo 1.24\n' >"$tmp/go.mod"
  (cd "$tmp" && GONOSUMDB=$nosumdb GOFLAGS=-mod=mod go mod download -json "$1") >"$tmp/out.json" || {
    cat "$tmp/out.json" >&2
    rm -rf "$tmp"
    return 1
  }
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' "$tmp/out.json"
  rm -rf "$tmp"
}
