#!/usr/bin/env bash
# oci-image.sh [--entrypoint /PATH [--cmd ARG]...] BINARY NAME OUT.tar: packs one static binary
# as a one-layer OCI image archive (image layout in a tar) named NAME. The binary is /PATH in the
# image and its entrypoint, the --cmd arguments (in order) its default arguments. Without
# --entrypoint it is `/probe pause`, the test image. The runtimes under test import these
# archives: there is no registry to pull from.
set -euo pipefail
entrypoint=/probe
cmd=()
if [ "${1:-}" = --entrypoint ]; then
  entrypoint=$2
  shift 2
  while [ "${1:-}" = --cmd ]; do
    cmd+=("$2")
    shift 2
  done
else
  cmd=(pause)
fi
[ $# -eq 3 ] || { echo "usage: oci-image.sh [--entrypoint /PATH [--cmd ARG]...] BINARY NAME OUT.tar" >&2; exit 2; }
case $entrypoint in
  /*/* | /) echo "oci-image: entrypoint '$entrypoint' must be one name under /" >&2; exit 2 ;;
  /*) ;;
  *) echo "oci-image: entrypoint '$entrypoint' must be one name under /" >&2; exit 2 ;;
esac
# json_list ARG...: the arguments as a JSON list of strings (no quotes or backslashes in them).
json_list() {
  local out="" a
  for a in "$@"; do
    case $a in *'"'* | *'\'*) echo "oci-image: argument '$a' has a quote or a backslash" >&2; exit 2 ;; esac
    out+="${out:+,}\"$a\""
  done
  echo "[$out]"
}
bin=$1 name=$2 out=$3
file=${entrypoint#/}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rootfs" "$work/layout/blobs/sha256"
cp "$bin" "$work/rootfs/$file"
chmod 0755 "$work/rootfs/$file"

# blob FILE: moves FILE into the layout under its digest and prints "DIGEST SIZE".
blob() {
  local d s
  d=$(sha256sum "$1" | cut -d' ' -f1)
  s=$(stat -c %s "$1")
  mv "$1" "$work/layout/blobs/sha256/$d"
  echo "sha256:$d $s"
}

tar --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name -C "$work/rootfs" -cf "$work/layer.tar" "$file"
read -r layer layer_size < <(blob "$work/layer.tar")
arch=$(go env GOARCH)
printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":%s,"Cmd":%s,"Env":["PATH=/"]},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
  "$arch" "$(json_list "$entrypoint")" "$(json_list "${cmd[@]}")" "$layer" >"$work/config.json"
read -r config config_size < <(blob "$work/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"%s","size":%s}]}' \
  "$config" "$config_size" "$layer" "$layer_size" >"$work/manifest.json"
read -r manifest manifest_size < <(blob "$work/manifest.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"%s","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest" "$manifest_size" "$arch" "$name" "${name##*:}" >"$work/layout/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$work/layout/oci-layout"
tar --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name -C "$work/layout" -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "$name $manifest"
