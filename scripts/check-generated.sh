#!/usr/bin/env bash
# Fails when gen/ is not exactly what `npm run generate` produces from proto/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npx buf generate --output "$out"
if ! diff -r "$out/gen" gen >/dev/null; then
  echo "gen/ is stale: run npm run generate and commit the result" >&2
  diff -r "$out/gen" gen | head -40 >&2
  exit 1
fi
echo "gen/ matches proto/"
