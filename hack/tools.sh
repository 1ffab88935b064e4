#!/usr/bin/env bash
# The Kubernetes test binaries, built from upstream Go modules into a cache outside the clone.
#
#   hack/tools.sh ensure     build whatever is missing (idempotent; a second run does nothing)
#   hack/tools.sh ensure-node  also what the kind e2e builds on: kubelet, kubeadm, kube-scheduler, kube-proxy, kind,
#                              coredns and traefik (hack/kind-node.sh, hack/kind-e2e.sh)
#   hack/tools.sh ensure-kwok  also kwok and kube-scheduler: simulated nodes for bench:controller-scale
#   hack/tools.sh path       print the directory holding etcd, kube-apiserver, kube-controller-manager, kubectl, helm
#   hack/tools.sh versions   print the pinned versions
#
# KUBECREW_TEST_ASSETS=<dir> uses prebuilt binaries from <dir> instead (as KUBEBUILDER_ASSETS does for envtest).
# KUBECREW_CACHE=<dir> moves the cache (default: ${XDG_CACHE_HOME:-~/.cache}/kubecrew).
# The pins live in the go.mod files under hack/k8s/; change them there and here together.
set -euo pipefail

KUBERNETES_VERSION=v1.36.3
ETCD_VERSION=v3.6.8 # what Kubernetes v1.36.3 is tested with (its build/dependencies.yaml)
HELM_VERSION=v4.3.1
# The kind e2e (hack/kind-node.sh, hack/kind-e2e.sh): kind itself, and what its node image runs besides Kubernetes.
KIND_VERSION=v0.33.0
COREDNS_VERSION=v1.14.2 # what kubeadm v1.36.3 deploys (its constants.CoreDNSVersion)
TRAEFIK_VERSION=v3.6.12 # the Gateway API implementation of the kind e2e
# The scale bench (bench/controller-scale.ts): KWOK's controller simulates nodes and moves pods through stages.
KWOK_VERSION=v0.8.0
# The trace backend of the tracing tests (test/support/otel-collector.ts): the OpenTelemetry Collector's OTLP receiver
# and the contrib file exporter, in the minimal main of hack/k8s/otelcol (core v0.140.0 / contrib v0.140.0).
OTELCOL_VERSION=v0.140.0
GO_MIN=1.26

HACK="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${KUBECREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubecrew}"
BIN="$CACHE/k8s-$KUBERNETES_VERSION/bin"
BINARIES=(etcd kube-apiserver kube-controller-manager kubectl helm otelcol)
NODE_BINARIES=(kubelet kubeadm kube-scheduler kube-proxy kind coredns traefik)
KWOK_BINARIES=(kube-scheduler kwok)
KUBERNETES_COMMANDS=(kube-apiserver kube-controller-manager kubectl kubelet kubeadm kube-scheduler kube-proxy)

log() { echo "tools: $*" >&2; }
die() {
  echo "tools: $*" >&2
  exit 1
}

assets_dir() {
  if [ -n "${KUBECREW_TEST_ASSETS:-}" ]; then echo "$KUBECREW_TEST_ASSETS"; else echo "$BIN"; fi
}

# The version a binary was built at is recorded next to it; a different pin rebuilds it.
stamp() { echo "$BIN/.$1.version"; }
want_version() {
  case "$1" in
    etcd) echo "$ETCD_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    kind) echo "$KIND_VERSION" ;;
    coredns) echo "$COREDNS_VERSION" ;;
    traefik) echo "$TRAEFIK_VERSION" ;;
    kwok) echo "$KWOK_VERSION" ;;
    otelcol) echo "$OTELCOL_VERSION" ;;
    *) echo "$KUBERNETES_VERSION" ;;
  esac
}
is_current() { [ -x "$BIN/$1" ] && [ "$(cat "$(stamp "$1")" 2>/dev/null)" = "$(want_version "$1")" ]; }

check_go() {
  command -v go >/dev/null ||
    die "Go $GO_MIN or newer is needed to build the Kubernetes test binaries: install it from https://go.dev/dl/ (or set KUBECREW_TEST_ASSETS to a directory holding ${BINARIES[*]})"
  local v
  v="$(go env GOVERSION | sed 's/^go//')"
  # Go 1.21+ fetches the toolchain the go.mod files ask for by itself, unless GOTOOLCHAIN=local forbids it.
  local floor="$GO_MIN"
  [ "$(go env GOTOOLCHAIN)" = local ] || floor=1.21
  if [ "$(printf '%s\n%s\n' "$floor" "$v" | sort -V | head -1)" != "$floor" ]; then
    die "Go $GO_MIN or newer is needed to build the Kubernetes test binaries, found go$v: install it from https://go.dev/dl/"
  fi
}

# go build <module dir> <ldflags> <packages...>: builds into a scratch dir, then moves the binaries into place.
go_build() {
  local dir="$1" ldflags="$2"
  shift 2
  local out
  out="$(mktemp -d "$BIN/.build.XXXXXX")"
  (cd "$HACK/k8s/$dir" && CGO_ENABLED=0 GOFLAGS="-buildvcs=false -mod=readonly" \
    go build -trimpath -ldflags "$ldflags" -o "$out/" "$@") || {
    rm -rf "$out"
    die "building $dir failed (see the go output above)"
  }
  mv -f "$out"/* "$BIN/"
  rmdir "$out"
}

# build_kubernetes <command...>: commands of the k8s.io/kubernetes module (cmd/<name>).
build_kubernetes() {
  # The same -X flags as Kubernetes' own hack/lib/version.sh, so `kubectl version`, client-go and helm's kubeVersion
  # checks see the real release.
  local minor ld="-s -w"
  minor="$(echo "$KUBERNETES_VERSION" | cut -d. -f2)"
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ld+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ld+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  log "building $* $KUBERNETES_VERSION (the first time takes a while)"
  go_build kubernetes "$ld" "${@/#/k8s.io/kubernetes/cmd/}"
  for b in "$@"; do want_version "$b" >"$(stamp "$b")"; done
}

build_etcd() {
  log "building etcd $ETCD_VERSION"
  go_build etcd "-s -w" go.etcd.io/etcd/server/v3
  mv -f "$BIN/server" "$BIN/etcd" # go names a main package ending in /v3 after the element before it
  want_version etcd >"$(stamp etcd)"
}

build_helm() {
  log "building helm $HELM_VERSION"
  go_build helm "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
    helm.sh/helm/v4/cmd/helm
  want_version helm >"$(stamp helm)"
}

# ensure <binary...>
build_kind() {
  log "building kind $KIND_VERSION"
  go_build kind "-s -w" sigs.k8s.io/kind
  want_version kind >"$(stamp kind)"
}

build_coredns() {
  log "building coredns $COREDNS_VERSION"
  go_build coredns "-s -w" github.com/coredns/coredns
  want_version coredns >"$(stamp coredns)"
}

build_traefik() {
  log "building traefik $TRAEFIK_VERSION"
  go_build traefik "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION" \
    github.com/traefik/traefik/v3/cmd/traefik
  want_version traefik >"$(stamp traefik)"
}

build_kwok() {
  log "building kwok $KWOK_VERSION"
  go_build kwok "-s -w" sigs.k8s.io/kwok/cmd/kwok
  want_version kwok >"$(stamp kwok)"
}

build_otelcol() {
  log "building otelcol $OTELCOL_VERSION"
  go_build otelcol "-s -w" .
  want_version otelcol >"$(stamp otelcol)"
}

ensure() {
  if [ -n "${KUBECREW_TEST_ASSETS:-}" ]; then
    for b in "$@"; do
      [ -x "$KUBECREW_TEST_ASSETS/$b" ] || die "KUBECREW_TEST_ASSETS=$KUBECREW_TEST_ASSETS has no executable $b"
    done
    return
  fi
  mkdir -p "$BIN"
  local todo=() b
  # Everything asked for is built already: no need to wait for a builder of other binaries (on a cold machine the
  # kind e2e's preparation builds its own binaries while the test suites start their clusters).
  for b in "$@"; do is_current "$b" || todo+=("$b"); done
  [ ${#todo[@]} -eq 0 ] && return
  # One builder at a time: concurrent `npm test` runs wait here instead of building twice; then look again.
  exec 9>"$BIN/.lock"
  flock 9
  todo=()
  for b in "$@"; do is_current "$b" || todo+=("$b"); done
  [ ${#todo[@]} -eq 0 ] && return
  check_go
  local start=$SECONDS kube=()
  for b in "${todo[@]}"; do
    case " ${KUBERNETES_COMMANDS[*]} " in *" $b "*) kube+=("$b") ;; esac
  done
  [ ${#kube[@]} -eq 0 ] || build_kubernetes "${kube[@]}"
  case " ${todo[*]} " in *" etcd "*) build_etcd ;; esac
  case " ${todo[*]} " in *" helm "*) build_helm ;; esac
  case " ${todo[*]} " in *" kind "*) build_kind ;; esac
  case " ${todo[*]} " in *" coredns "*) build_coredns ;; esac
  case " ${todo[*]} " in *" traefik "*) build_traefik ;; esac
  case " ${todo[*]} " in *" kwok "*) build_kwok ;; esac
  case " ${todo[*]} " in *" otelcol "*) build_otelcol ;; esac
  log "built ${todo[*]} into $BIN in $((SECONDS - start)) s"
}

case "${1:-}" in
  ensure) ensure "${BINARIES[@]}" ;;
  ensure-node) ensure "${BINARIES[@]}" "${NODE_BINARIES[@]}" ;;
  ensure-kwok) ensure "${BINARIES[@]}" "${KWOK_BINARIES[@]}" ;;
  path) assets_dir ;;
  versions)
    printf 'kubernetes %s\netcd %s\nhelm %s\nkind %s\ncoredns %s\ntraefik %s\nkwok %s\notelcol %s\n' "$KUBERNETES_VERSION" \
      "$ETCD_VERSION" "$HELM_VERSION" "$KIND_VERSION" "$COREDNS_VERSION" "$TRAEFIK_VERSION" "$KWOK_VERSION" "$OTELCOL_VERSION"
    ;;
  *) die "usage: hack/tools.sh ensure|ensure-node|ensure-kwok|path|versions" ;;
esac
