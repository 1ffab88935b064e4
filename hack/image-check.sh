#!/usr/bin/env bash
# Runs a built kubecrew image as the chart runs it — read-only root filesystem, user 65532, no capabilities, /tmp as
# the only writable place — with `kubecrew dev`, and completes the example crew through the crew API:
# GET /inputs, POST /kickoff, GET /status/{id} until completed. The container is removed afterwards, also on failure.
#
#   hack/image-check.sh [image]     default: kubecrew:<version of package.json>
set -euo pipefail
cd "$(dirname "$0")/.."

version="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -1)"
image="${1:-kubecrew:$version}"
token="kco_image-check-$RANDOM$RANDOM"

die() {
  echo "image-check: $*" >&2
  exit 1
}

container="$(docker run --detach --read-only --tmpfs /tmp:rw,nosuid,nodev --user 65532:65532 --cap-drop ALL \
  --security-opt no-new-privileges --publish 127.0.0.1::8080 \
  --env HOST=0.0.0.0 --env KUBECREW_DEV_ORG_TOKEN="$token" "$image" dev)"
trap 'docker rm --force "$container" >/dev/null 2>&1 || true' EXIT
port="$(docker port "$container" 8080/tcp | head -1 | sed 's/.*://')"
url="http://127.0.0.1:$port"
auth=(-H "Authorization: Bearer $token")

for _ in $(seq 1 60); do
  curl -fs "${auth[@]}" "$url/inputs" >/dev/null 2>&1 && break
  [ "$(docker inspect -f '{{.State.Running}}' "$container")" = true ] || die "the container exited: $(docker logs "$container" 2>&1 | tail -5)"
  sleep 0.5
done
inputs="$(curl -fsS "${auth[@]}" "$url/inputs")" || die "GET /inputs failed: $(docker logs "$container" 2>&1 | tail -5)"
[ "$inputs" = '{"inputs":["topic"]}' ] || die "GET /inputs answered $inputs"
id="$(curl -fsS "${auth[@]}" -H 'Content-Type: application/json' -d '{"inputs":{"topic":"AI agents"}}' "$url/kickoff" |
  sed -n 's/.*"kickoff_id":"\([^"]*\)".*/\1/p')"
[ -n "$id" ] || die "POST /kickoff returned no kickoff_id"
status=""
for _ in $(seq 1 120); do
  status="$(curl -fsS "${auth[@]}" "$url/status/$id")"
  case "$status" in *'"state":"SUCCESS"'*) break ;; *'"state":"FAILED"'*) die "the execution failed: $status" ;; esac
  sleep 0.5
done
case "$status" in *'"state":"SUCCESS"'*) ;; *) die "not completed after 60 s: $status" ;; esac
echo "image-check: $image ran \`kubecrew dev\` read-only as $(docker exec "$container" id -u) and completed the example crew (kickoff $id)"
