#!/usr/bin/env bash
# Builds the kubecrew image: one image for the API, the controller, the integrations service and the task runner.
#
#   hack/build-image.sh [image]     default image: kubecrew:<version of package.json>, what the chart uses by default
#   hack/build-image.sh crewai [image]  the crewai runner image (crewai.Dockerfile: the kubecrew image plus Python and
#                                   CrewAI), default kubecrew-crewai:<version>; builds the kubecrew image first if missing
#
# The base is the official Node 24 image (NODE_IMAGE, default node:24-bookworm-slim). Where it cannot be pulled (a
# machine that reaches only package registries), hack/node-base.sh builds an equivalent from Debian's packages and the
# pinned Node 24 of node_modules, and the image is built on that. Set NODE_IMAGE to choose the base yourself.
#
# Behind a TLS-inspecting proxy the build's `npm ci` must trust the proxy's CA: CA_BUNDLE (default: the host's
# /etc/ssl/certs/ca-certificates.crt when present) is handed to that step as a BuildKit secret, never copied into the
# image. CA_BUNDLE= (empty) hands none.
#
# Docker: started (and installed, as root) by hack/docker.sh ensure when missing. KUBECREW_DOCKER=podman uses podman.
set -euo pipefail
cd "$(dirname "$0")/.."

version="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -1)"
variant=kubecrew
if [ "${1:-}" = crewai ]; then
  variant=crewai
  shift
fi
image="${1:-kubecrew:$version}"
[ "$variant" = crewai ] && image="${1:-kubecrew-crewai:$version}"
CA_BUNDLE="${CA_BUNDLE-/etc/ssl/certs/ca-certificates.crt}"

log() { echo "build-image: $*" >&2; }

secret=()
[ -n "$CA_BUNDLE" ] && [ -s "$CA_BUNDLE" ] && secret=(--secret "id=ca-bundle,src=$CA_BUNDLE")

if [ "${KUBECREW_DOCKER:-docker}" != docker ]; then
  "$KUBECREW_DOCKER" build --file Dockerfile --build-arg "NODE_IMAGE=${NODE_IMAGE:-node:24-bookworm-slim}" \
    "${secret[@]}" --tag "$image" .
  echo "$image"
  exit 0
fi

bash hack/docker.sh ensure
if [ "$variant" = crewai ]; then
  # On the kubecrew image of this version (built here first when missing): its runner is the task pod's entry point.
  kubecrew_image="${KUBECREW_IMAGE:-kubecrew:$version}"
  docker image inspect "$kubecrew_image" >/dev/null 2>&1 || bash hack/build-image.sh "$kubecrew_image" >/dev/null
  start=$SECONDS
  bash hack/docker.sh build --file crewai.Dockerfile --build-arg "KUBECREW_IMAGE=$kubecrew_image" "${secret[@]}" \
    --tag "$image" . >&2
  log "built $image on $kubecrew_image in $((SECONDS - start)) s"
  echo "$image"
  exit 0
fi
base="${NODE_IMAGE:-node:24-bookworm-slim}"
if [ -z "${NODE_IMAGE:-}" ] && ! docker image inspect "$base" >/dev/null 2>&1; then
  if ! docker pull --quiet "$base" >/dev/null 2>&1; then
    log "$base cannot be pulled here; building the base from Debian's packages and the pinned Node 24 instead"
    base="$(bash hack/node-base.sh)"
  fi
fi
start=$SECONDS
bash hack/docker.sh build --file Dockerfile --build-arg "NODE_IMAGE=$base" "${secret[@]}" --tag "$image" . >&2
log "built $image on $base in $((SECONDS - start)) s"
echo "$image"
