#!/usr/bin/env bash
# A Docker engine that can run kind's privileged node containers.
#
#   hack/docker.sh ensure    install Debian's docker.io when there is no Docker, register the capability filter below
#                            as dockerd's default runtime when the host needs it, start dockerd when it is not running;
#                            idempotent, quiet when everything is in place. Prints one clear line and fails when it
#                            cannot (no root, no apt-get, dockerd does not come up).
#   hack/docker.sh build <docker build args...>   a BuildKit build (RUN --mount secrets): `docker buildx build --load`
#                            where buildx is installed, else Debian's Docker 20.10 client, whose builder has BuildKit
#   hack/docker.sh needs-capfilter   exit 0 when this host needs the capability filter (prints the capabilities)
#
# Why a capability filter: a privileged container gets every capability runc knows. Where the host's own capability
# bounding set lacks some of them (a sandbox or a nested container without CAP_SYS_RESOURCE, say), runc refuses every
# privileged container with "unable to apply caps: operation not permitted", and kind's nodes are privileged.
# hack/runc-capfilter removes exactly the capabilities the host cannot grant from the container's spec, then runs runc.
# It is installed only where /proc/self/status shows a bounding set smaller than the kernel's capability list.
set -euo pipefail

HACK="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CAPFILTER=/usr/local/libexec/kubecrew/runc-capfilter
RUNTIME=kubecrew-runc
DAEMON_JSON=/etc/docker/daemon.json
DOCKERD_LOG=/var/log/kubecrew-dockerd.log

log() { echo "docker: $*" >&2; }
die() {
  echo "docker: $*" >&2
  exit 1
}

missing_capabilities() { bash "$HACK/runc-capfilter" --missing; }

as_root() {
  [ "$(id -u)" = 0 ] || die "$* needs root (run hack/docker.sh ensure as root, or start Docker yourself)"
}

install_docker() {
  as_root "installing Docker"
  command -v apt-get >/dev/null || die "no Docker here and no apt-get to install Debian's docker.io: install Docker yourself"
  log "installing Debian's docker.io"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io jq >/dev/null ||
    die "apt-get install docker.io failed (see above)"
}

# Registers the capability filter as dockerd's default runtime; prints "changed" when daemon.json changed.
configure_capfilter() {
  local missing="$1"
  command -v jq >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq >/dev/null
  mkdir -p "$(dirname "$CAPFILTER")" /etc/docker
  cmp -s "$HACK/runc-capfilter" "$CAPFILTER" || install -m 0755 "$HACK/runc-capfilter" "$CAPFILTER"
  local current new
  current="$(cat "$DAEMON_JSON" 2>/dev/null || echo '{}')"
  new="$(jq --arg name "$RUNTIME" --arg path "$CAPFILTER" \
    '.runtimes[$name] = {path: $path} | .["default-runtime"] = $name' <<<"$current")"
  if [ "$(jq -S . <<<"$current")" != "$(jq -S . <<<"$new")" ]; then
    printf '%s\n' "$new" >"$DAEMON_JSON"
    log "registered $CAPFILTER as dockerd's default runtime (the host lacks $missing; see hack/docker.sh)"
    echo changed
  fi
}

start_dockerd() {
  as_root "starting dockerd"
  command -v dockerd >/dev/null || die "dockerd is not installed (the docker client alone cannot run containers)"
  log "starting dockerd (log: $DOCKERD_LOG)"
  # Its own session: dockerd outlives this script (and `npm test`) on purpose, as a system service would.
  # Without the callers' lock descriptors (8, 9): a lock held by dockerd would never be released.
  setsid dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null 8>&- 9>&- &
  local _
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    kill -0 $! 2>/dev/null || break
    sleep 0.5
  done
  die "dockerd did not come up; the end of $DOCKERD_LOG: $(tail -n 3 "$DOCKERD_LOG" | tr '\n' ' ')"
}

ensure() {
  # A docker client that reaches an engine elsewhere is fine too; otherwise a local dockerd is needed.
  if ! command -v dockerd >/dev/null && ! docker info >/dev/null 2>&1; then install_docker; fi
  local missing changed=""
  missing="$(missing_capabilities)"
  if [ -n "$missing" ] && command -v dockerd >/dev/null && [ "$(id -u)" = 0 ]; then
    changed="$(configure_capfilter "$missing")"
  fi
  if docker info >/dev/null 2>&1; then
    [ -z "$changed" ] && return 0
    # A running dockerd reads default-runtime only at start: restart the one we started (pid in its pidfile).
    local pid
    pid="$(cat /var/run/docker.pid 2>/dev/null || true)"
    [ -n "$pid" ] || die "daemon.json changed but dockerd's pid is unknown: restart dockerd yourself"
    log "restarting dockerd (pid $pid) for the new default runtime"
    kill "$pid"
    local _
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
  fi
  start_dockerd
}

buildkit_build() {
  if docker buildx version >/dev/null 2>&1; then
    docker buildx build --load "$@"
  elif [ -x /usr/bin/docker ] && /usr/bin/docker version --format '{{.Client.Version}}' 2>/dev/null | grep -q '^20\.'; then
    DOCKER_BUILDKIT=1 /usr/bin/docker build "$@"
  else
    die "building needs BuildKit: install docker's buildx plugin (or Debian's docker.io, whose client has it built in)"
  fi
}

case "${1:-}" in
  ensure) ensure ;;
  build)
    shift
    buildkit_build "$@"
    ;;
  needs-capfilter)
    m="$(missing_capabilities)"
    [ -n "$m" ] && echo "$m"
    ;;
  *) die "usage: hack/docker.sh ensure|build|needs-capfilter" ;;
esac
