#!/usr/bin/env bash
# A Debian root filesystem from Debian's packages, as a tarball cached outside the clone; the base of the images that
# cannot be pulled here (hack/node-base.sh, hack/kind-node.sh).
#
#   hack/debian-rootfs.sh <name> [package...]   prints the tarball's path; builds it once with debootstrap
#                                               (--variant=minbase, plus the packages) when missing
#   hack/debian-rootfs.sh --image <name> [package...]   the same as a Docker image, kubecrew-debian:<suite>-<name>
#                                               (imported once; prints its name)
#
# Cache: ${KUBECREW_CACHE:-~/.cache/kubecrew}/debian/<suite>-<name>.tar, keyed by the name and the package list (a
# different list for the same name rebuilds). Needs root and debootstrap (installed from Debian's packages if missing).
# KUBECREW_IMAGE_PREFIX (default kubecrew) prefixes the names of the images hack/ builds: with KUBECREW_CACHE, a cold
# build beside the cached one (how the cold times in bench/README.md were measured).
set -euo pipefail

SUITE=bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE="${KUBECREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubecrew}/debian"

die() {
  echo "debian-rootfs: $*" >&2
  exit 1
}

as_image=""
if [ "${1:-}" = --image ]; then
  as_image=1
  shift
fi
[ $# -ge 1 ] || die "usage: hack/debian-rootfs.sh [--image] <name> [package...]"
name="$1"
shift
packages="$(printf '%s\n' "$@" | sort -u | paste -sd, -)"
tar="$CACHE/$SUITE-$name.tar"

if [ -n "$as_image" ]; then
  tar="$(bash "$0" "$name" "$@")"
  # The tag names the package list's hash too: a changed list imports anew.
  image="${KUBECREW_IMAGE_PREFIX:-kubecrew}-debian:$SUITE-$name-$(sha256sum <"$tar.packages" | cut -c1-8)"
  docker image inspect "$image" >/dev/null 2>&1 ||
    docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$tar" "$image" >/dev/null
  echo "$image"
  exit 0
fi

built() { [ -f "$tar" ] && [ "$(cat "$tar.packages" 2>/dev/null)" = "$packages" ]; }
if built; then
  echo "$tar"
  exit 0
fi

[ "$(id -u)" = 0 ] || die "building a Debian root filesystem needs root (debootstrap)"
mkdir -p "$CACHE"
# Several root filesystems may be made at once (hack/kind-node.sh): one apt-get at a time.
if ! command -v debootstrap >/dev/null; then
  (
    flock 8
    command -v debootstrap >/dev/null || {
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
    }
  ) 8>"$CACHE/.install.lock" || die "cannot install debootstrap"
fi
exec 9>"$CACHE/.$name.lock"
flock 9
# Another run may have built it while this one waited for the lock.
if built; then
  echo "$tar"
  exit 0
fi
root="$(mktemp -d "$CACHE/.$name.XXXXXX")"
trap 'rm -rf "$root"' EXIT
start=$SECONDS
echo "debian-rootfs: debootstrap $SUITE ($name${packages:+: $packages})" >&2
debootstrap --variant=minbase ${packages:+--include="$packages"} "$SUITE" "$root" "$MIRROR" >"$root.log" 2>&1 || {
  tail -n 20 "$root.log" >&2
  rm -f "$root.log"
  die "debootstrap failed (the end of its log is above)"
}
rm -f "$root.log"
# Nothing downloaded stays in the image: package lists and the .deb cache only served the build.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/* "$root"/tmp/*
tar --numeric-owner -C "$root" -cf "$tar.tmp" .
mv -f "$tar.tmp" "$tar"
echo "$packages" >"$tar.packages"
echo "debian-rootfs: $tar in $((SECONDS - start)) s" >&2
echo "$tar"
