#!/usr/bin/env bash
# Fails when gen/ (from proto/) or test/codegen/gen/ (from test/codegen/proto/) is not exactly
# what `npm run generate` produces.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npx buf generate --output "$out"
npx buf generate --template test/codegen/buf.gen.yaml --output "$out"
stale=0
for d in gen test/codegen/gen; do
  if ! diff -r "$out/$d" "$d" >/dev/null; then
    echo "$d/ is stale: run npm run generate and commit the result" >&2
    diff -r "$out/$d" "$d" | head -40 >&2
    stale=1
  fi
done
[ "$stale" = 0 ] || exit 1
echo "generated code matches its protos"
