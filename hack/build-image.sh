#!/usr/bin/env bash
# Builds the kubecrew image with Docker (or KUBECREW_DOCKER=podman|nerdctl): one image for the API, the controller,
# the integrations service and the task runner.
#
#   hack/build-image.sh [image]     default image: kubecrew:<version of package.json>, what the chart uses by default
#
# Needs a container engine; `docker` as a client alone is not enough (`docker info` must answer).
set -euo pipefail
cd "$(dirname "$0")/.."

DOCKER="${KUBECREW_DOCKER:-docker}"
version="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -1)"
image="${1:-kubecrew:$version}"

command -v "$DOCKER" >/dev/null || { echo "build-image: $DOCKER is not installed" >&2; exit 1; }
if ! "$DOCKER" info >/dev/null 2>&1; then
  echo "build-image: $DOCKER cannot reach a container engine (is the Docker daemon running?)" >&2
  exit 1
fi

"$DOCKER" build --file Dockerfile --tag "$image" .
echo "$image"
