#!/usr/bin/env bash
# oci-image.sh BINARY NAME OUT.tar: packs one static binary as a one-layer OCI image archive
# (image layout in a tar) named NAME, whose default command is `/probe pause`. The runtimes
# under test import it: there is no registry to pull a sandbox image from.
set -euo pipefail
bin=$1 name=$2 out=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rootfs" "$work/layout/blobs/sha256"
cp "$bin" "$work/rootfs/probe"
chmod 0755 "$work/rootfs/probe"

# blob FILE: moves FILE into the layout under its digest and prints "DIGEST SIZE".
blob() {
  local d s
  d=$(sha256sum "$1" | cut -d' ' -f1)
  s=$(stat -c %s "$1")
  mv "$1" "$work/layout/blobs/sha256/$d"
  echo "sha256:$d $s"
}

tar --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name -C "$work/rootfs" -cf "$work/layer.tar" probe
read -r layer layer_size < <(blob "$work/layer.tar")
arch=$(go env GOARCH)
printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/probe"],"Cmd":["pause"],"Env":["PATH=/"]},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
  "$arch" "$layer" >"$work/config.json"
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
