#!/usr/bin/env bash
# The whole system in a kind cluster — real kubelet, containerd and runc, the chart's pods and the task Jobs as real
# containers of the freshly built image — reached through a Gateway API implementation:
#
#   1. builds what it runs on (cached; a warm run builds nothing): the kind node image (hack/kind-node.sh), the
#      kubecrew image (hack/build-image.sh), Traefik and Redis images (Traefik from its Go module, Redis from Debian)
#   2. creates a single-node kind cluster (its port 80 on 127.0.0.1:$KIND_HTTP_PORT, a free port by default) and
#      loads the images
#   3. installs the Gateway API CRDs (standard channel, from the sigs.k8s.io/gateway-api module Traefik pins) and
#      Traefik with one Gateway (hack/kind-e2e/traefik.yaml)
#   4. installs the chart with gateway.enabled: the API at /, the integrations service under /oauthsvc (URLRewrite)
#   5. checks through the Gateway: API health, 401 without a token, /oauthsvc/health with the prefix replaced, a provider
#      callback reaching the integrations service; the token endpoint (admin client → POST /oauth/token → GET /inputs);
#      the task pods' securityContext as the kubelet ran them
#   6. runs the e2e suite (test/e2e) in installed-system mode through the Gateway
#   7. runs the commands the chart's NOTES printed for that install, as printed (the Gateway URL with its port)
#   8. moves the integrations service to its own hostname (helm upgrade) and checks it there
#   9. reinstalls without the Gateway and runs the NOTES commands of that install as printed (port-forward, token,
#      kickoff, status, kubectl get ce) on a free local port (api.localPort)
#  10. deletes the cluster — also when a step fails or the run is interrupted (KEEP_CLUSTER=1 keeps it for a look
#      around; a cluster left by a killed run is deleted by the next run, or by `hack/kind-e2e.sh down`)
#
#   hack/kind-e2e.sh prepare  only 1 (npm test runs it in the background, niced, while the vitest projects run: on a
#                           cold machine the builds fill the CPU the tests leave idle)
#   hack/kind-e2e.sh up     only 1 and 2: leaves the cluster running and prints its kubeconfig's path (for
#                           `npm run bench:controller-throughput -- --kind`); `hack/kind-e2e.sh down` deletes it
#
# Needs root on a Debian-like machine the first time (hack/docker.sh installs and starts Docker), Go (kind, Traefik and
# the Kubernetes binaries are built from their modules into ~/.cache/kubecrew) and `npm ci` done.
# Settings: KIND_CLUSTER (kubecrew-e2e), KIND_HTTP_PORT (a free port), IMAGE (kubecrew:e2e), NAMESPACE (kubecrew),
# KEEP_CLUSTER, KUBECREW_CACHE and KUBECREW_IMAGE_PREFIX (where the builds are cached, see hack/debian-rootfs.sh).
# Waits are sized for a busy 2-core machine (other test runs beside it), not an idle one.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
START=$SECONDS

MODE="${1:-all}"
case "$MODE" in all | up | down | prepare) ;; *) echo "usage: hack/kind-e2e.sh [up|down|prepare]" >&2 && exit 2 ;; esac
KIND_CLUSTER="${KIND_CLUSTER:-kubecrew-e2e}"
IMAGE="${IMAGE:-kubecrew:e2e}"
NAMESPACE="${NAMESPACE:-kubecrew}"
RELEASE=kubecrew
NODE="node_modules/.bin/node"

log() { echo "kind-e2e: [$((SECONDS - START)) s] $*" >&2; }
die() {
  echo "kind-e2e: $*" >&2
  exit 1
}

[ -x "$NODE" ] || die "run npm ci first (the e2e suite runs on the pinned Node 24)"
free_port() { "$NODE" -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
KIND_HTTP_PORT="${KIND_HTTP_PORT:-$(free_port)}"
BASE_URL="http://localhost:$KIND_HTTP_PORT"

if [ "$MODE" = down ]; then
  "$(bash hack/tools.sh path)/kind" delete cluster --name "$KIND_CLUSTER"
  exit 0
fi

# --- 1. what it runs on -------------------------------------------------------------------------------------------
bash hack/docker.sh ensure
# One kind e2e at a time on a machine: two would share the cluster name (each deletes what it takes for a leftover)
# and the image tags. A second run waits here for the first to end. (Taken after Docker is up: a dockerd started
# while the lock is held must not inherit it.)
LOCK_DIR="${KUBECREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubecrew}"
mkdir -p "$LOCK_DIR"
exec 8>"$LOCK_DIR/kind-e2e.lock"
if ! flock -n 8; then
  log "another kind e2e runs on this machine; waiting for it to end (lock $LOCK_DIR/kind-e2e.lock)"
  flock -w 3600 8 || die "the other kind e2e did not end within an hour"
fi
# The e2e suite's files start a local redis-server in their setup even where their tests then skip (installed mode).
if ! command -v redis-server >/dev/null; then
  [ "$(id -u)" = 0 ] || die "redis-server is missing (install Debian's redis-server)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi
# The Redis image's root filesystem is made in the background while the node image and its Go binaries are built (the
# foreground call below waits for it on the script's lock).
REDIS_PACKAGES=(redis-server redis-tools)
bash hack/debian-rootfs.sh redis "${REDIS_PACKAGES[@]}" >/dev/null &
NODE_IMAGE="$(bash hack/kind-node.sh)" # builds the Go binaries too (hack/tools.sh ensure-node)
log "node image $NODE_IMAGE"
bash hack/tools.sh ensure-node
TOOLS="$(bash hack/tools.sh path)"
KIND="$TOOLS/kind"
KUBECTL="$TOOLS/kubectl"
HELM="$TOOLS/helm"
TRAEFIK_VERSION="$(bash hack/tools.sh versions | awk '$1 == "traefik" {print $2}')"
previous_image="$(docker image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
bash hack/build-image.sh "$IMAGE" >/dev/null
# A rebuilt $IMAGE leaves the one it replaced untagged (about 400 MB a run): remove it unless a container uses it.
if [ -n "$previous_image" ] && [ "$previous_image" != "$(docker image inspect --format '{{.Id}}' "$IMAGE")" ]; then
  docker rmi "$previous_image" >/dev/null 2>&1 || true
fi
# The crewai runner image on top of it, named as the chart's default for controller.runner.crewaiImage.
CREWAI_IMAGE="${IMAGE%:*}-crewai:${IMAGE##*:}"
KUBECREW_IMAGE="$IMAGE" bash hack/build-image.sh crewai "$CREWAI_IMAGE" >/dev/null

# image_from <tag> <base> <file> <dockerfile lines>: a small image, built only when missing.
image_from() {
  local tag="$1" base="$2" file="$3" lines="$4" dir
  docker image inspect "$tag" >/dev/null 2>&1 && return 0
  dir="$(mktemp -d)"
  [ -n "$file" ] && cp "$file" "$dir/"
  printf 'FROM %s\n%s\n' "$base" "$lines" >"$dir/Dockerfile"
  bash hack/docker.sh build --quiet --tag "$tag" "$dir" >/dev/null
  rm -rf "$dir"
}
TRAEFIK_IMAGE="${KUBECREW_IMAGE_PREFIX:-kubecrew}-e2e/traefik:$TRAEFIK_VERSION"
image_from "$TRAEFIK_IMAGE" "$(bash hack/debian-rootfs.sh --image minbase)" "$TOOLS/traefik" \
  'COPY traefik /usr/local/bin/traefik
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/traefik"]'
REDIS_IMAGE="${KUBECREW_IMAGE_PREFIX:-kubecrew}-e2e/redis:bookworm"
image_from "$REDIS_IMAGE" "$(bash hack/debian-rootfs.sh --image redis "${REDIS_PACKAGES[@]}")" "" 'USER 999:999'
GATEWAY_API_CRDS="$(cd hack/k8s/traefik && go mod download -json sigs.k8s.io/gateway-api | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')/config/crd/standard"
[ -d "$GATEWAY_API_CRDS" ] || die "no Gateway API CRDs at $GATEWAY_API_CRDS"
log "images ready"
[ "$MODE" != prepare ] || exit 0

# --- 2. the cluster -----------------------------------------------------------------------------------------------
WORK="$(mktemp -d)"
export KUBECONFIG="$WORK/kubeconfig"
cleanup() {
  local status=$?
  if [ $status -ne 0 ] && [ -s "$KUBECONFIG" ]; then
    log "failed; state of the cluster:"
    "$KUBECTL" get pods,httproutes,gateways,crewexecutions -A -o wide 2>&1 | sed 's/^/  /' >&2 || true
    "$KUBECTL" -n "$NAMESPACE" logs deployment/$RELEASE-api --tail 20 2>&1 | sed 's/^/  api: /' >&2 || true
    "$KUBECTL" -n traefik logs deployment/traefik --tail 20 2>&1 | sed 's/^/  traefik: /' >&2 || true
  fi
  if [ "${KEEP_CLUSTER:-}" = 1 ]; then
    log "keeping cluster $KIND_CLUSTER (KUBECONFIG=$KUBECONFIG); delete it with: $KIND delete cluster --name $KIND_CLUSTER"
  else
    "$KIND" delete cluster --name "$KIND_CLUSTER" >/dev/null 2>&1 || true
    rm -rf "$WORK"
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A cluster of that name left by a killed run would make `create` fail.
"$KIND" delete cluster --name "$KIND_CLUSTER" >/dev/null 2>&1 || true
cat >"$WORK/kind.yaml" <<EOF
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
networking:
  # The node image's bridge CNI configuration serves the single node (no kindnetd).
  disableDefaultCNI: true
kubeadmConfigPatches:
  # Kubernetes 1.36's kubelet refuses cgroup v1 unless told otherwise; harmless on cgroup v2.
  - |
    kind: KubeletConfiguration
    failCgroupV1: false
nodes:
  - role: control-plane
    extraPortMappings:
      - containerPort: 80
        hostPort: $KIND_HTTP_PORT
        listenAddress: 127.0.0.1
        protocol: TCP
EOF
# kind gives a new node 30 s (not configurable) to log that systemd is up; on a loaded machine that can pass, and kind
# then deletes the node and fails. That, and only that kind of failure before the cluster exists, is tried again.
for attempt in 1 2 3; do
  log "creating kind cluster $KIND_CLUSTER (attempt $attempt of at most 3)"
  if "$KIND" create cluster --name "$KIND_CLUSTER" --image "$NODE_IMAGE" --config "$WORK/kind.yaml" \
    --kubeconfig "$KUBECONFIG" --wait 300s 2>&1 | tee "$WORK/create.txt" >&2 && [ "${PIPESTATUS[0]}" = 0 ]; then
    break
  fi
  "$KIND" delete cluster --name "$KIND_CLUSTER" >/dev/null 2>&1 || true
  if [ $attempt = 3 ] || ! grep -q 'could not find a log line that matches' "$WORK/create.txt"; then
    die "kind create cluster failed (see above)"
  fi
done
"$KIND" load docker-image "$IMAGE" "$CREWAI_IMAGE" "$TRAEFIK_IMAGE" "$REDIS_IMAGE" --name "$KIND_CLUSTER" >/dev/null
log "cluster up, images loaded"
if [ "$MODE" = up ]; then
  trap - EXIT
  echo "$KUBECONFIG"
  exit 0
fi

# --- 3. Gateway API and Traefik -----------------------------------------------------------------------------------
"$KUBECTL" apply --server-side -f "$GATEWAY_API_CRDS" >/dev/null
"$KUBECTL" wait --for=condition=Established crd --all --timeout 180s >/dev/null
sed "s|TRAEFIK_IMAGE|$TRAEFIK_IMAGE|" hack/kind-e2e/traefik.yaml | "$KUBECTL" apply -f - >/dev/null
"$KUBECTL" -n traefik rollout status deployment/traefik --timeout 300s >/dev/null
"$KUBECTL" -n traefik wait --for=condition=Programmed gateway/e2e --timeout 180s >/dev/null
log "Traefik $TRAEFIK_VERSION serves Gateway traefik/e2e"

# --- 4. the chart -------------------------------------------------------------------------------------------------
cat >"$WORK/values.yaml" <<EOF
image:
  repository: ${IMAGE%:*}
  tag: ${IMAGE##*:}
  pullPolicy: Never
controller:
  runner:
    imagePullPolicy: Never
redis:
  image:
    repository: ${REDIS_IMAGE%:*}
    tag: ${REDIS_IMAGE##*:}
    pullPolicy: Never
  # The node image has no storage provisioner.
  persistence:
    enabled: false
gateway:
  enabled: true
  parentRefs:
    - name: e2e
      namespace: traefik
  hostnames:
    - localhost
  scheme: http
  # The Gateway's port 80 is published on this port of the host: the NOTES and the integrations' public URL say so.
  port: $KIND_HTTP_PORT
EOF
log "installing the chart into namespace $NAMESPACE"
"$HELM" install "$RELEASE" charts/kubecrew --namespace "$NAMESPACE" --create-namespace --values "$WORK/values.yaml" \
  --wait --timeout 8m >"$WORK/install.txt"
"$KUBECTL" -n "$NAMESPACE" wait --for=condition=Ready crew/research --timeout 180s >/dev/null
"$KUBECTL" -n "$NAMESPACE" wait --for=jsonpath='{.status.parents[0].conditions[?(@.type=="Accepted")].status}'=True \
  httproute/$RELEASE-api httproute/$RELEASE-integrations --timeout 180s >/dev/null
log "chart installed"

# --- 5. through the Gateway ---------------------------------------------------------------------------------------
# expect <what> <status> <body pattern> <curl args...>
expect() {
  local what="$1" status="$2" pattern="$3" code
  shift 3
  code="$(curl -s -o "$WORK/body" -w '%{http_code}' --max-time 60 "$@")" || true
  if [ "$code" != "$status" ] || ! grep -Eq "$pattern" "$WORK/body"; then
    die "$what: expected $status matching /$pattern/, got $code: $(head -c 300 "$WORK/body")"
  fi
  log "ok: $what ($code)"
}
# until_ok <curl args...>: waits up to 3 min for three 200s in a row (Traefik picks up new endpoints a moment after
# pods are ready, and drops those of terminating pods a moment after they go).
until_ok() {
  local _ streak=0
  for _ in $(seq 1 360); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@")" = 200 ]; then
      streak=$((streak + 1))
      [ $streak -ge 3 ] && return 0
    else
      streak=0
    fi
    sleep 0.5
  done
}
until_ok "$BASE_URL/healthz"
until_ok "$BASE_URL/oauthsvc/health"
expect "API health through the Gateway" 200 . "$BASE_URL/healthz"
expect "the API asks for a token" 401 '"Unauthorized"' "$BASE_URL/inputs"
expect "integrations under /oauthsvc, prefix replaced by /" 200 '"status":"ok"' "$BASE_URL/oauthsvc/health"
expect "a provider callback reaches the integrations service" 404 . "$BASE_URL/oauthsvc/v1/auth/google/callback?code=x&state=y"
if grep -q "Integrations route not configured" "$WORK/body"; then die "the callback reached the API instead of the integrations service"; fi

ADMIN_KEY="$("$KUBECTL" -n "$NAMESPACE" get secret $RELEASE -o jsonpath='{.data.admin-key}' | base64 -d)"
expect "an admin client for the token endpoint" 201 '"client_secret"' -X POST "$BASE_URL/admin/clients" \
  -H "X-Admin-Key: $ADMIN_KEY" -H 'Content-Type: application/json' -d '{"role": "org", "crews": ["research"], "name": "kind-e2e"}'
client_id="$(sed -n 's/.*"client_id":"\([^"]*\)".*/\1/p' "$WORK/body")"
client_secret="$(sed -n 's/.*"client_secret":"\([^"]*\)".*/\1/p' "$WORK/body")"
expect "the token endpoint issues a bearer token (client_credentials)" 200 '"access_token"' -X POST \
  "$BASE_URL/oauth/token" -u "$client_id:$client_secret" -d grant_type=client_credentials
access_token="$(sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p' "$WORK/body")"
expect "the issued token opens the crew's inputs" 200 '"topic"' -H "Authorization: Bearer $access_token" \
  "$BASE_URL/crews/research/inputs"

# --- 6. the e2e suite against the installed chart ----------------------------------------------------------------
# Files that start their own controller process (api-command) run its task Jobs on the loaded image as well.
# The host as the cluster's pods reach it (the kind network's IPv4 gateway): where the suite's webhook receivers listen.
HOST_ADDRESS="$(docker network inspect kind --format '{{range .IPAM.Config}}{{.Gateway}} {{end}}' | tr ' ' '\n' | grep -m1 '^[0-9][0-9.]*$')" ||
  die "no IPv4 gateway on docker network kind"
log "running the e2e suite against $BASE_URL (webhook receivers on $HOST_ADDRESS)"
TEST_KUBECONFIG="$KUBECONFIG" \
  E2E_HOST_ADDRESS="$HOST_ADDRESS" \
  E2E_API_URL="$BASE_URL" \
  E2E_INTEGRATIONS_URL="$BASE_URL/oauthsvc" \
  E2E_NAMESPACE="$NAMESPACE" \
  E2E_ADMIN_KEY="$ADMIN_KEY" \
  E2E_RUNNER_SERVICE_ACCOUNT="$RELEASE-runner" \
  KUBECREW_RUNNER_IMAGE="$IMAGE" \
  KUBECREW_RUNNER_IMAGE_PULL_POLICY=Never \
  PATH="$REPO/node_modules/.bin:$PATH" \
  vitest run --project cluster test/e2e

# The chart's hardened securityContext as the runtime enforces it (the e2e suite's task pods used the same image and
# the controller's Job template, checked below): user 65532, read-only root, no capabilities.
in_api() { "$KUBECTL" -n "$NAMESPACE" exec deployment/$RELEASE-api -- sh -c "$1"; }
[ "$(in_api 'id -u')" = 65532 ] || die "the API container does not run as 65532"
if in_api 'echo x >/app/written' 2>"$WORK/ro"; then die "the API container's root filesystem is writable"; fi
grep -q 'Read-only file system' "$WORK/ro" || die "writing / failed otherwise than read-only: $(cat "$WORK/ro")"
[ "$(in_api "sed -n 's/^CapEff:\t//p' /proc/self/status")" = 0000000000000000 ] || die "the API container has capabilities"
log "ok: the API container runs as 65532 with a read-only root and no capabilities"
# PID 1 of each component's pod is the pause process, not Node (a SIGTERM in Node's first moments is not dropped).
for component in api controller integrations; do
  pid1="$("$KUBECTL" -n "$NAMESPACE" exec deployment/$RELEASE-$component -- cat /proc/1/cmdline | tr '\0' ' ')"
  case "$pid1" in /pause*) ;; *) die "PID 1 of the $component pod is '$pid1', not the pause process" ;; esac
done
log "ok: PID 1 of the api, controller and integrations pods is the pause process"
jobs_sc="$("$KUBECTL" -n "$NAMESPACE" get jobs -o jsonpath='{range .items[*]}{.spec.template.spec.securityContext.runAsNonRoot} {.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem} {.spec.template.spec.containers[0].securityContext.capabilities.drop} {.spec.template.spec.containers[0].securityContext.seccompProfile.type}{"\n"}{end}' | sort -u)"
if [ -n "$jobs_sc" ]; then
  [ "$jobs_sc" = 'true true ["ALL"] RuntimeDefault' ] || die "task Jobs' securityContext: $jobs_sc"
  log "ok: the task Jobs left by the suite run non-root, read-only, without capabilities, RuntimeDefault seccomp"
fi

# --- 7. the NOTES commands of the Gateway install ----------------------------------------------------------------
# run_notes <helm install output> <what step 2 must print>: the command lines of NOTES steps 1-4, run as printed in
# one shell. The one placeholder, <kickoff_id>, takes the id the printed kickoff answered; the status command is
# repeated until the run is over, and the API is given time to answer after step 2 (a port-forward starts in the
# background), as a user would. Expects a completed run and the `kubectl get crewexecutions` table.
run_notes() {
  local install="$1" reach="$2" name
  name="$(basename "$install" .txt)"
  # The command lines of steps 1-4: those starting with kubectl, export or curl, with their continuation lines.
  awk '/^1\. Wait/ {on = 1} /^Integrations:/ {on = 0} on && (cont || /^  (kubectl|export|curl) /) {print; cont = /\\$/}' \
    "$install" >"$WORK/$name.sh"
  if ! grep -Fq -- "$reach" "$WORK/$name.sh" || ! grep -q '/kickoff"' "$WORK/$name.sh" ||
    ! grep -q '<kickoff_id>' "$WORK/$name.sh"; then
    die "the NOTES no longer print '$reach', kickoff and status: $(cat "$install")"
  fi
  sed 's/^/  notes: /' "$WORK/$name.sh" >&2
  {
    echo 'set -euo pipefail'
    echo 'trap '"'"'kill $(jobs -p) 2>/dev/null || true'"'"' EXIT'
    echo 'status_of() { sed -n '"'"'s/^{"status":"\([^"]*\)".*/\1/p'"'"'; }'
    local in_kickoff="" line
    while IFS= read -r line; do
      case "$line" in
        *'/kickoff"'*)
          in_kickoff=1
          printf 'KICKOFF_ANSWER=$(%s\n' "$line"
          ;;
        *'<kickoff_id>'*)
          printf 'for _ in $(seq 1 600); do STATUS=$(%s); case "$(status_of <<<"$STATUS")" in "" | pending | running) sleep 0.5 ;; *) break ;; esac; done\n' \
            "${line//<kickoff_id>/\$KICKOFF_ID}"
          echo 'echo "status: $STATUS"'
          ;;
        *'export KUBECREW_URL='*)
          printf '%s\n' "$line"
          echo 'for _ in $(seq 1 120); do curl -s -o /dev/null --max-time 5 "$KUBECREW_URL/healthz" && break; sleep 0.5; done'
          ;;
        *)
          printf '%s\n' "$line"
          if [ -n "$in_kickoff" ] && [[ "$line" != *\\ ]]; then
            in_kickoff=""
            echo ')'
            echo 'echo "kickoff: $KICKOFF_ANSWER"'
            echo 'KICKOFF_ID=$(sed -n '"'"'s/.*"kickoff_id":"\([^"]*\)".*/\1/p'"'"' <<<"$KICKOFF_ANSWER")'
          fi
          ;;
      esac
    done <"$WORK/$name.sh"
  } >"$WORK/$name-run.sh"
  PATH="$TOOLS:$PATH" bash "$WORK/$name-run.sh" >"$WORK/$name-out.txt" 2>&1 ||
    die "the NOTES commands failed: $(tail -n 20 "$WORK/$name-out.txt")"
  grep -v '^Handling connection for' "$WORK/$name-out.txt" | sed 's/^/  notes: /' >&2
  grep -q '^status: {"status":"completed"' "$WORK/$name-out.txt" || die "the NOTES kickoff did not complete"
  grep -Eq '^NAME ' "$WORK/$name-out.txt" || die "kubectl get crewexecutions printed no table"
}
log "running the commands the NOTES of the Gateway install printed"
run_notes "$WORK/install.txt" "  export KUBECREW_URL=$BASE_URL"
log "ok: the NOTES commands of the Gateway install work as printed (its URL with the port, token, kickoff, status, kubectl get ce)"

# --- 8. integrations on their own hostname ------------------------------------------------------------------------
log "moving the integrations service to its own hostname"
"$HELM" upgrade "$RELEASE" charts/kubecrew --namespace "$NAMESPACE" --values "$WORK/values.yaml" \
  --set 'gateway.integrations.hostnames[0]=oauth.localhost' --wait --timeout 8m >"$WORK/upgrade.txt"
grep -Fq "integrations service at http://oauth.localhost:$KIND_HTTP_PORT." "$WORK/upgrade.txt" ||
  die "the NOTES do not name the integrations' own hostname with the Gateway's port: $(grep -A1 '^Integrations' "$WORK/upgrade.txt")"
# The rolled-out integrations pod replaces the old one: wait until the old one is gone.
for _ in $(seq 1 360); do
  [ "$("$KUBECTL" -n "$NAMESPACE" get pods -l app.kubernetes.io/component=integrations --no-headers 2>/dev/null | wc -l)" = 1 ] && break
  sleep 0.5
done
until_ok -H 'Host: oauth.localhost' "$BASE_URL/health"
expect "integrations at / of their own hostname" 200 '"status":"ok"' -H 'Host: oauth.localhost' "$BASE_URL/health"
expect "/oauthsvc on the API hostname now reaches the API, which explains the missing route" 502 \
  "Integrations route not configured" "$BASE_URL/oauthsvc/v1/auth/google/callback"

# --- 9. the NOTES commands of a plain install ----------------------------------------------------------------------
# A new user's install: no Gateway, so the NOTES reach the API through `kubectl port-forward`. Only what this offline
# machine needs is set (the loaded images, no storage provisioner), and api.localPort: a free port for the printed
# port-forward, so that a test or server already on 8080 does not break the run.
NOTES_PORT="$(free_port)"
log "reinstalling without the Gateway and running the NOTES commands as printed (api.localPort=$NOTES_PORT)"
"$HELM" uninstall "$RELEASE" --namespace "$NAMESPACE" --wait --timeout 5m >/dev/null
"$HELM" install "$RELEASE" charts/kubecrew --namespace "$NAMESPACE" --create-namespace \
  --set image.repository="${IMAGE%:*}",image.tag="${IMAGE##*:}",image.pullPolicy=Never \
  --set controller.runner.imagePullPolicy=Never,redis.persistence.enabled=false \
  --set redis.image.repository="${REDIS_IMAGE%:*}",redis.image.tag="${REDIS_IMAGE##*:}",redis.image.pullPolicy=Never \
  --set api.localPort="$NOTES_PORT" >"$WORK/notes-install.txt"
run_notes "$WORK/notes-install.txt" "port-forward service/$RELEASE-api $NOTES_PORT:80 &"
log "ok: the NOTES commands of a plain install work as printed (port-forward, token, kickoff, status, kubectl get ce)"

log "all checks passed"
