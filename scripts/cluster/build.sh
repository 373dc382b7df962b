#!/usr/bin/env bash
# Builds what the single-node cluster suite (test/cluster/) runs, each third-party part once per
# version into a cache that survives between runs:
#
#   etcd v3.6.8                 from go.etcd.io/etcd/server/v3 (a generated module requires it)
#   Kubernetes v1.37.2          kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
#                               kubectl, from k8s.io/kubernetes (see build_kubernetes)
#   containerd, runc, crictl,   from scripts/runtimes/build.sh containerd helm node (its own cache;
#   Helm, Node, the probe image its KEY=VALUE lines are passed on)
#
# Cache: ${XDG_CACHE_HOME:-~/.cache}/nri-wire/cluster/<name>-<version>/ (a `.complete` file marks
# a finished build). The project's own Go plugin (test/cluster/go-plugin) and its image are
# rebuilt into test/cluster/.bin on every run; Go's build cache keeps that quick.
#
# Progress goes to stderr; stdout gets KEY=VALUE lines (paths) for the suite to read. A failing
# step prints `cluster: <step> failed; log: <file>` and exits 1.
set -euo pipefail

ETCD_VERSION=v3.6.8
KUBERNETES_VERSION=v1.37.2
# The staging modules (k8s.io/api, client-go, ...) are published on their own at this version.
STAGING_VERSION=v0.37.2

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/nri-wire/cluster
OWN=$ROOT/test/cluster/.bin
LOGS=$CACHE/logs
mkdir -p "$CACHE" "$OWN" "$LOGS"
export GOTOOLCHAIN=local
# Builds share the machine's cores with everything else.
NICE=(nice -n 10)

STEP_PREFIX=cluster
# shellcheck source=../lib/steps.sh
source "$ROOT/scripts/lib/steps.sh"

# etcd's main package is its server module's root. `go install MODULE@VERSION` refuses that
# module (its go.mod has replace directives), so a module of our own requires it and builds it.
build_etcd() {
  local dir=$CACHE/etcd-$ETCD_VERSION
  if [ ! -e "$dir/.complete" ]; then
    rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/mod"
    printf 'module nriwire.test/etcd\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >"$dir/mod/go.mod"
    step "build etcd $ETCD_VERSION" "$LOGS/etcd-$ETCD_VERSION.log" bash -c \
      "cd '$dir/mod' && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 ${NICE[*]} go build -trimpath -ldflags='-s -w' -o '$dir/bin/etcd' go.etcd.io/etcd/server/v3"
    rm -rf "$dir/mod"
    touch "$dir/.complete"
  fi
  echo "ETCD=$dir/bin/etcd"
}

# k8s.io/kubernetes' module archive lacks staging/, which its go.mod points its k8s.io/*
# requirements at (replace directives, v0.0.0). Those modules are published on their own, so a
# writable copy of the source drops the replace lines and requires the published versions.
build_kubernetes() {
  local dir=$CACHE/kubernetes-$KUBERNETES_VERSION
  if [ ! -e "$dir/.complete" ]; then
    rm -rf "$dir" && mkdir -p "$dir/bin"
    local src
    src=$(go_download "k8s.io/kubernetes@$KUBERNETES_VERSION" 2>"$LOGS/kubernetes-download.log") || {
      echo "cluster: download kubernetes $KUBERNETES_VERSION failed; log: $LOGS/kubernetes-download.log" >&2
      exit 1
    }
    cp -r "$src" "$dir/src" && chmod -R u+w "$dir/src"
    rm -f "$dir/src/go.work" "$dir/src/go.work.sum"
    # One replace line `k8s.io/x => ./staging/src/k8s.io/x` per staging module; `k8s.io/x v0.0.0`
    # requirements become the published version.
    sed -i -e '/=> \.\/staging\//d' -e "s#^\(\s*k8s\.io/[a-z0-9-]*\) v0\.0\.0\$#\1 $STAGING_VERSION#" "$dir/src/go.mod"
    if grep -q 'staging/' "$dir/src/go.mod"; then
      echo "cluster: $dir/src/go.mod still names staging/ after rewriting it" >&2
      exit 1
    fi
    local v=${KUBERNETES_VERSION#v} pkg=k8s.io/component-base/version
    local ldflags="-s -w -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=${v%%.*} -X $pkg.gitMinor=$(echo "$v" | cut -d. -f2) -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
    step "build kubernetes $KUBERNETES_VERSION" "$LOGS/kubernetes-$KUBERNETES_VERSION.log" bash -c \
      "cd '$dir/src' && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 ${NICE[*]} go build -trimpath -ldflags='$ldflags' -o '$dir/bin/' ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/kubelet ./cmd/kubectl"
    rm -rf "$dir/src"
    touch "$dir/.complete"
  fi
  echo "KUBE_BIN=$dir/bin"
}


# The project's own plugin, from test/cluster/go-plugin: cheap to rebuild, so never cached.
build_own() {
  step "build go plugin" "$LOGS/go-plugin.log" bash -c "cd '$ROOT/test/cluster/go-plugin' && CGO_ENABLED=0 GOFLAGS=-mod=readonly ${NICE[*]} go build -trimpath -ldflags='-s -w' -o '$OWN/go-plugin' ."
  step "build go plugin image" "$LOGS/go-plugin-image.log" bash -c "cd '$ROOT' && node --import tsx scripts/runtimes/oci-image.ts --entrypoint /plugin '$OWN/go-plugin' '$GO_PLUGIN_IMAGE' '$OWN/go-plugin-image.tar'"
  echo "GO_PLUGIN_IMAGE=$GO_PLUGIN_IMAGE"
  echo "GO_PLUGIN_IMAGE_TAR=$OWN/go-plugin-image.tar"
}

GO_PLUGIN_IMAGE=localhost/nri-wire/go-env-injector:1
command -v go >/dev/null || { echo "cluster: go is not on PATH; it builds the cluster" >&2; exit 1; }
# One build at a time per cache (two checkouts testing at once would otherwise share half-built dirs).
exec 9>"$CACHE/.lock"
flock 9
build_etcd
build_kubernetes
# containerd, runc, crictl, Helm and the probe image: the runtimes' own cache and lock.
bash "$ROOT/scripts/runtimes/build.sh" containerd helm node | sed 's/^CACHE=/RUNTIMES_CACHE=/'
build_own
echo "CACHE=$CACHE"
