#!/usr/bin/env bash
# scripts/test-under-load.sh [--runs N] [--hogs N] [--one-core] [-- COMMAND [ARG...]]
#
# Runs the README's test command (`npm test`, or COMMAND) N times in a row (default 5) while N
# CPU-bound processes (default 2) spin beside it, to show that no test depends on the machine's
# speed. --one-core runs the command, and the spinning processes if any, on CPU 0 alone
# (`taskset -c 0`); there the default is no spinning process. Prints each run's result, its
# duration and the suite's closing `tests:` line, stops at the first failing run and exits with
# its status. The output of every run is kept in a directory it names at the start.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

runs=5
hogs=
one_core=false
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --hogs) hogs=$2; shift 2 ;;
    --one-core) one_core=true; shift ;;
    --) shift; break ;;
    -h | --help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "test-under-load: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ $# -eq 0 ]; then set -- npm test; fi
if [ -z "$hogs" ]; then if $one_core; then hogs=0; else hogs=2; fi; fi
case "$runs$hogs" in *[!0-9]*) echo "test-under-load: --runs and --hogs take whole numbers" >&2; exit 2 ;; esac

pin=()
if $one_core; then
  command -v taskset >/dev/null || { echo "test-under-load: --one-core needs taskset (util-linux)" >&2; exit 2; }
  pin=(taskset -c 0)
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/nri-wire-load.XXXXXX")
hog_pids=()
stop_hogs() {
  local pid
  for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hog_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  hog_pids=()
}
trap stop_hogs EXIT
for _ in $(seq 1 "$hogs"); do
  "${pin[@]}" sh -c 'while :; do :; done' &
  hog_pids+=($!)
done

echo "test-under-load: $runs run(s) of '$*' beside $hogs CPU-bound process(es)$($one_core && echo ' on CPU 0 alone'); output in $logs"
for i in $(seq 1 "$runs"); do
  log=$logs/run-$i.log
  start=$SECONDS
  status=0
  "${pin[@]}" "$root/scripts/with-node.sh" "$@" >"$log" 2>&1 || status=$?
  took=$((SECONDS - start))
  summary=$(grep -E '^tests: [0-9]+ passed' "$log" | tail -n 1 || true)
  if [ "$status" -eq 0 ]; then
    echo "run $i/$runs: passed in $((took / 60)) min $((took % 60)) s${summary:+ ($summary)}"
  else
    echo "run $i/$runs: FAILED (exit $status) after $((took / 60)) min $((took % 60)) s${summary:+ ($summary)}; output: $log" >&2
    grep -E '(FAIL|×|✗|Error:|AssertionError)' "$log" | head -n 40 >&2 || true
    exit "$status"
  fi
done
echo "test-under-load: all $runs run(s) passed"
