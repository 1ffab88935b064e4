#!/usr/bin/env bash
# A kind node image for Kubernetes v1.36.3, built on this machine from Debian's packages and Go modules: nothing is
# pulled (kind's own node images cannot be, here). `kind create cluster --image <it>` runs a single-node cluster.
#
#   hack/kind-node.sh       prints the image's name (kubecrew-kind-node:v1.36.3-<hash of the inputs>); builds what is
#                           missing, the Go binaries of hack/tools.sh ensure-node included: a warm run (same inputs,
#                           image present) builds nothing and takes about a second
#
# What goes in (hack/kind-node/ holds the node's own files, see its Dockerfile):
#   - the base: Debian bookworm with systemd, containerd 1.6, runc and the CNI plugins (hack/debian-rootfs.sh)
#   - kubelet, kubeadm, kubectl, and the kube-apiserver, kube-controller-manager, kube-scheduler and kube-proxy images,
#     from the k8s.io/kubernetes module (hack/tools.sh ensure-node); etcd v3.6.8 and CoreDNS v1.14.2 from their
#     modules; pause 3.10.2 compiled from the k8s.io/kubernetes module's build/pause/linux/pause.c. Images are tagged
#     as kubeadm v1.36.3 expects them (registry.k8s.io/...), so it finds them in containerd and pulls nothing.
#   - networking: one bridge CNI configuration for the single node (no kindnetd: create the cluster with
#     networking.disableDefaultCNI: true); no storage provisioner (PersistentVolumeClaims stay pending).
# On cgroup v1 the kubelet needs `failCgroupV1: false` (hack/kind-e2e.sh passes it through a kubeadm config patch).
set -euo pipefail
cd "$(dirname "$0")/.."

KUBERNETES_VERSION="$(bash hack/tools.sh versions | awk '$1 == "kubernetes" {print $2}')"
PAUSE_VERSION=3.10.2 # kubeadm v1.36.3's constants.PauseVersion
ETCD_TAG=3.6.8-0     # kubeadm v1.36.3's constants.DefaultEtcdVersion
COREDNS_TAG="$(bash hack/tools.sh versions | awk '$1 == "coredns" {print $2}')"
NODE_PACKAGES=(systemd systemd-sysv dbus containerd runc containernetworking-plugins iptables iproute2 ethtool socat
  conntrack ebtables kmod util-linux mount procps jq ca-certificates libseccomp2)
PROXY_PACKAGES=(iptables conntrack ipset)

log() { echo "kind-node: $*" >&2; }
die() {
  echo "kind-node: $*" >&2
  exit 1
}

bash hack/docker.sh ensure

# The image's name carries a hash of everything that goes in, so a change to any input builds a new one.
inputs="$(
  cat "$0" hack/runc-capfilter hack/debian-rootfs.sh
  find hack/kind-node -type f | sort | xargs cat
  bash hack/tools.sh versions
  printf '%s\n' "${NODE_PACKAGES[@]}" "${PROXY_PACKAGES[@]}"
)"
image="${KUBECREW_IMAGE_PREFIX:-kubecrew}-kind-node:$KUBERNETES_VERSION-$(sha256sum <<<"$inputs" | cut -c1-12)"
if docker image inspect "$image" >/dev/null 2>&1; then
  nice -n 10 bash hack/tools.sh ensure-node
  echo "$image"
  exit 0
fi

start=$SECONDS
log "building $image"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
# The Debian root filesystems (debootstrap: mostly downloading and unpacking packages) are made while Go compiles the
# binaries (hack/tools.sh ensure-node: CPU), instead of one after the other: on a cold machine that hides them.
bash hack/debian-rootfs.sh --image minbase >"$work/minbase" &
bash hack/debian-rootfs.sh --image iptables "${PROXY_PACKAGES[@]}" >"$work/proxybase" &
bash hack/debian-rootfs.sh --image kind-node "${NODE_PACKAGES[@]}" >"$work/nodebase" &
nice -n 10 bash hack/tools.sh ensure-node
for job in $(jobs -p); do wait "$job" || die "a Debian root filesystem could not be made (see above)"; done
BIN="$(bash hack/tools.sh path)"
minbase="$(cat "$work/minbase")"
proxybase="$(cat "$work/proxybase")"
nodebase="$(cat "$work/nodebase")"

# pause: static, as Kubernetes builds it.
mkdir -p "$work/pause"
pause_c="$(go env GOMODCACHE)/k8s.io/kubernetes@$KUBERNETES_VERSION/build/pause/linux/pause.c"
[ -f "$pause_c" ] || (cd hack/k8s/kubernetes && go mod download k8s.io/kubernetes) >/dev/null
command -v gcc >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev >/dev/null
gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION" -o "$work/pause/pause" "$pause_c"

# component_image <tag> <base> <binary> [entrypoint]: the binary at /usr/local/bin (or at / for an entrypoint).
component_image() {
  local tag="$1" base="$2" binary="$3" entrypoint="${4:-}" dir
  dir="$work/image-$(basename "$binary")"
  mkdir -p "$dir"
  cp "$binary" "$dir/"
  if [ -n "$entrypoint" ]; then
    printf 'FROM %s\nCOPY %s /%s\nENTRYPOINT ["/%s"]\n' "$base" "$(basename "$binary")" "$entrypoint" "$entrypoint"
  else
    printf 'FROM %s\nCOPY %s /usr/local/bin/\n' "$base" "$(basename "$binary")"
  fi >"$dir/Dockerfile"
  bash hack/docker.sh build --quiet --tag "$tag" "$dir" >/dev/null
  echo "$tag"
}
images=(
  "$(component_image "registry.k8s.io/kube-apiserver:$KUBERNETES_VERSION" "$minbase" "$BIN/kube-apiserver")"
  "$(component_image "registry.k8s.io/kube-controller-manager:$KUBERNETES_VERSION" "$minbase" "$BIN/kube-controller-manager")"
  "$(component_image "registry.k8s.io/kube-scheduler:$KUBERNETES_VERSION" "$minbase" "$BIN/kube-scheduler")"
  "$(component_image "registry.k8s.io/kube-proxy:$KUBERNETES_VERSION" "$proxybase" "$BIN/kube-proxy")"
  "$(component_image "registry.k8s.io/etcd:$ETCD_TAG" "$minbase" "$BIN/etcd")"
  "$(component_image "registry.k8s.io/coredns/coredns:$COREDNS_TAG" "$minbase" "$BIN/coredns" coredns)"
  "$(component_image "registry.k8s.io/pause:$PAUSE_VERSION" scratch "$work/pause/pause" pause)"
)
mkdir -p "$work/node/images" "$work/node/bin"
docker save "${images[@]}" -o "$work/node/images/kubernetes.tar"
docker rmi "${images[@]}" >/dev/null

cp -a hack/kind-node/files "$work/node/files"
mkdir -p "$work/node/files/usr/local/sbin" "$work/node/files/kind"
install -m 0755 hack/runc-capfilter "$work/node/files/usr/local/sbin/runc-capfilter"
echo "$KUBERNETES_VERSION" >"$work/node/files/kind/version"
cp "$BIN/kubelet" "$BIN/kubeadm" "$BIN/kubectl" "$work/node/bin/"
cp hack/kind-node/Dockerfile "$work/node/"
bash hack/docker.sh build --quiet --build-arg "BASE=$nodebase" --tag "$image" "$work/node" >/dev/null
log "built $image in $((SECONDS - start)) s"
echo "$image"
