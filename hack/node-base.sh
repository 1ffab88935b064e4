#!/usr/bin/env bash
# A stand-in for the official Node 24 image (node:24-bookworm-slim), for machines that cannot pull images: Debian
# bookworm (minbase, from Debian's packages), the pinned Node 24 from node_modules (the `node` devDependency) and npm.
#
#   hack/node-base.sh     prints the image's name; builds it when Docker does not have it yet
#
# hack/build-image.sh uses it only when the official image cannot be pulled. Needs root (debootstrap), `npm ci` done.
set -euo pipefail
cd "$(dirname "$0")/.."

NPM_VERSION=11.21.2
CACHE="${KUBECREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubecrew}"

die() {
  echo "node-base: $*" >&2
  exit 1
}

[ -x node_modules/node/bin/node ] || die "run npm ci first (the pinned Node 24 comes from node_modules)"
node_version="$(node_modules/node/bin/node -p process.versions.node)"
image="${KUBECREW_IMAGE_PREFIX:-kubecrew}-node-base:$node_version-npm$NPM_VERSION-bookworm"
if docker image inspect "$image" >/dev/null 2>&1; then
  echo "$image"
  exit 0
fi

start=$SECONDS
debian="$(bash hack/debian-rootfs.sh --image minbase)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/usr/local/bin" "$work/usr/local/lib/node_modules"
cp node_modules/node/bin/node "$work/usr/local/bin/node"
npm_tgz="$CACHE/npm/npm-$NPM_VERSION.tgz"
if [ ! -f "$npm_tgz" ]; then
  mkdir -p "$(dirname "$npm_tgz")"
  (cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null) || die "npm pack npm@$NPM_VERSION failed"
  mv "$work/npm-$NPM_VERSION.tgz" "$npm_tgz"
fi
mkdir "$work/usr/local/lib/node_modules/npm"
tar -xzf "$npm_tgz" -C "$work/usr/local/lib/node_modules/npm" --strip-components 1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/usr/local/bin/npx"
printf 'FROM %s\nCOPY usr/local /usr/local\nENV NODE_VERSION=%s\nCMD ["node"]\n' "$debian" "$node_version" >"$work/Dockerfile"
bash hack/docker.sh build --quiet --tag "$image" "$work" >/dev/null
echo "node-base: built $image in $((SECONDS - start)) s" >&2
echo "$image"
