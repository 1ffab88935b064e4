#!/usr/bin/env bash
# A Debian root filesystem from Debian's packages, as a tarball cached outside the clone; the base of the images that
# cannot be pulled here (hack/node-base.sh, hack/kind-node.sh).
#
#   hack/debian-rootfs.sh <name> [package...]   prints the tarball's path; builds it once with debootstrap
#                                               (--variant=minbase, plus the packages) when missing
#   hack/debian-rootfs.sh --image <name> [package...]   the same as a Docker image, kubecrew-debian:<suite>-<name>
#                                               (imported once; prints its name)
#   hack/debian-rootfs.sh --mirror              prints the Debian mirror a build fetches from
#
# The mirror: DEBIAN_MIRROR, else the one this Debian host's apt uses (its first deb source of a suite other than the
# security archive's, in /etc/apt/sources.list.d/*.sources, then /etc/apt/sources.list and sources.list.d/*.list).
#
# Cache: ${KUBECREW_CACHE:-~/.cache/kubecrew}/debian/<suite>-<name>.tar, keyed by the name and the package list (a
# different list for the same name rebuilds). Needs root and debootstrap (installed from Debian's packages if missing).
# KUBECREW_IMAGE_PREFIX (default kubecrew) prefixes the names of the images hack/ builds: with KUBECREW_CACHE, a cold
# build beside the cached one (how the cold times in bench/README.md were measured).
set -euo pipefail

SUITE=bookworm
CACHE="${KUBECREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubecrew}/debian"

die() {
  echo "debian-rootfs: $*" >&2
  exit 1
}

# The mirror of the host's apt sources (no address is written here); nothing on a host that is not Debian.
apt_mirror() {
  [ "$(. /etc/os-release 2>/dev/null && echo "${ID:-}")" = debian ] || return 0
  local f deb822=() one_line=()
  for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && deb822+=("$f"); done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do [ -f "$f" ] && one_line+=("$f"); done
  {
    # deb822 stanzas: Types, URIs, Suites, Enabled (field names in any case, values continued on indented lines).
    [ ${#deb822[@]} -eq 0 ] || awk 'BEGIN { RS = ""; FS = "\n" }
      {
        delete field; key = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^#/) continue
          if ($i ~ /^[ \t]/ && key != "") { field[key] = field[key] " " $i; continue }
          n = index($i, ":"); if (n == 0) continue
          key = tolower(substr($i, 1, n - 1)); field[key] = substr($i, n + 1)
        }
        if (field["types"] !~ /(^|[ \t])deb([ \t]|$)/ || tolower(field["enabled"]) ~ /no/) next
        ok = 0; ns = split(field["suites"], s, /[ \t]+/)
        for (j = 1; j <= ns; j++) if (s[j] != "" && s[j] !~ /-security$/) ok = 1
        if (!ok) next
        nu = split(field["uris"], u, /[ \t]+/)
        for (j = 1; j <= nu; j++) if (u[j] ~ /^https?:\/\//) print u[j]
      }' "${deb822[@]}"
    # One-line entries: deb [options] URI suite component...
    [ ${#one_line[@]} -eq 0 ] || awk '$1 == "deb" {
        i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/ && i < NF) i++
        if ($i ~ /^\[/ || $i ~ /\]$/) i++
        if ($i ~ /^https?:\/\// && $(i + 1) !~ /-security$/) print $i
      }' "${one_line[@]}"
  } | head -n 1
}

debian_mirror() {
  local mirror="${DEBIAN_MIRROR:-$(apt_mirror)}"
  [ -n "$mirror" ] || die "no Debian mirror: set DEBIAN_MIRROR (this host's apt sources name none)"
  echo "$mirror"
}

if [ "${1:-}" = --mirror ]; then
  debian_mirror
  exit 0
fi

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
mirror="$(debian_mirror)"
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
echo "debian-rootfs: debootstrap $SUITE ($name${packages:+: $packages}) from $mirror" >&2
debootstrap --variant=minbase ${packages:+--include="$packages"} "$SUITE" "$root" "$mirror" >"$root.log" 2>&1 || {
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
