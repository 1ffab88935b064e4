#!/usr/bin/env bash
# The whole system in a kind cluster, installed by the chart from a freshly built image, checked through the Ingress:
#
#   1. creates a kind cluster (its port 80 on localhost:$KIND_HTTP_PORT) and installs ingress-nginx
#   2. builds the image (hack/build-image.sh) and loads it into the cluster
#   3. installs the chart: API at http://localhost:$KIND_HTTP_PORT/, integrations under /oauthsvc on the same host
#   4. checks the routes through the Ingress: API health, the integrations service under /oauthsvc (prefix stripped),
#      a provider callback reaching the integrations service and not the API's "route not configured" answer
#   5. runs the e2e suite (test/e2e) against the installed chart, through the Ingress
#   6. moves the integrations service to a dedicated host (helm upgrade) and checks it at / there
#   7. deletes the cluster (KEEP_CLUSTER=1 keeps it for a look around)
#
# Needs a Docker engine (not just the docker client), Go (kind is built from its module when not on PATH) and
# network access for the kind node image, ingress-nginx and redis images. It cannot run where there is no Docker
# engine; `npm test` exercises everything up to the image build on the local control plane instead.
#
# Settings: KIND_CLUSTER (kubecrew-e2e), KIND_HTTP_PORT (8088), KIND_VERSION (v0.33.0),
# INGRESS_NGINX_VERSION (controller-v1.12.3), IMAGE (kubecrew:e2e), NAMESPACE (kubecrew), KEEP_CLUSTER.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"

KIND_CLUSTER="${KIND_CLUSTER:-kubecrew-e2e}"
KIND_HTTP_PORT="${KIND_HTTP_PORT:-8088}"
KIND_VERSION="${KIND_VERSION:-v0.33.0}"
INGRESS_NGINX_VERSION="${INGRESS_NGINX_VERSION:-controller-v1.12.3}"
IMAGE="${IMAGE:-kubecrew:e2e}"
NAMESPACE="${NAMESPACE:-kubecrew}"
RELEASE=kubecrew
BASE_URL="http://localhost:$KIND_HTTP_PORT"

log() { echo "kind-e2e: $*" >&2; }
die() {
  echo "kind-e2e: $*" >&2
  exit 1
}

# --- tools --------------------------------------------------------------------------------------------------------
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed): kind needs one"
bash hack/tools.sh ensure
TOOLS="$(bash hack/tools.sh path)"
KUBECTL="$TOOLS/kubectl"
HELM="$TOOLS/helm"
if command -v kind >/dev/null; then
  KIND="$(command -v kind)"
else
  KIND="$TOOLS/kind-$KIND_VERSION"
  if [ ! -x "$KIND" ]; then
    command -v go >/dev/null || die "kind is not on PATH and Go is not installed to build it"
    log "building kind $KIND_VERSION"
    GOBIN="$(mktemp -d)" && GOBIN="$GOBIN" go install "sigs.k8s.io/kind@$KIND_VERSION" && mv "$GOBIN/kind" "$KIND"
  fi
fi
[ -x node_modules/.bin/node ] || die "run npm ci first (the e2e suite runs on the pinned Node 24)"

WORK="$(mktemp -d)"
export KUBECONFIG="$WORK/kubeconfig"
cleanup() {
  local status=$?
  if [ $status -ne 0 ]; then
    log "failed; state of the release:"
    "$KUBECTL" -n "$NAMESPACE" get pods,ingress,crewexecutions -o wide 2>&1 | sed 's/^/  /' >&2 || true
    "$KUBECTL" -n "$NAMESPACE" logs deployment/$RELEASE-api --tail 30 2>&1 | sed 's/^/  api: /' >&2 || true
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

# --- 1. cluster and ingress-nginx ---------------------------------------------------------------------------------
log "creating kind cluster $KIND_CLUSTER"
cat >"$WORK/kind.yaml" <<EOF
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
  - role: control-plane
    labels:
      ingress-ready: "true"
    extraPortMappings:
      - containerPort: 80
        hostPort: $KIND_HTTP_PORT
        listenAddress: 127.0.0.1
        protocol: TCP
EOF
"$KIND" create cluster --name "$KIND_CLUSTER" --config "$WORK/kind.yaml" --kubeconfig "$KUBECONFIG" --wait 120s

log "installing ingress-nginx $INGRESS_NGINX_VERSION"
"$KUBECTL" apply -f "https://raw.githubusercontent.com/kubernetes/ingress-nginx/$INGRESS_NGINX_VERSION/deploy/static/provider/kind/deploy.yaml"
"$KUBECTL" -n ingress-nginx rollout status deployment/ingress-nginx-controller --timeout 180s
"$KUBECTL" -n ingress-nginx wait --for=condition=Complete job --all --timeout 120s

# --- 2. image -----------------------------------------------------------------------------------------------------
log "building $IMAGE"
bash hack/build-image.sh "$IMAGE" >/dev/null
"$KIND" load docker-image "$IMAGE" --name "$KIND_CLUSTER"

# --- 3. the chart -------------------------------------------------------------------------------------------------
cat >"$WORK/values.yaml" <<EOF
image:
  repository: ${IMAGE%:*}
  tag: ${IMAGE##*:}
  pullPolicy: Never
controller:
  runner:
    imagePullPolicy: Never
ingress:
  enabled: true
  className: nginx
  host: localhost
integrations:
  publicUrl: $BASE_URL/oauthsvc
EOF
log "installing the chart into namespace $NAMESPACE"
"$HELM" install "$RELEASE" charts/kubecrew --namespace "$NAMESPACE" --create-namespace --values "$WORK/values.yaml" \
  --wait --timeout 5m
"$KUBECTL" -n "$NAMESPACE" wait --for=condition=Ready crew/research --timeout 60s

# --- 4. routes through the Ingress --------------------------------------------------------------------------------
# expect <what> <status> <body pattern> <curl args...>
expect() {
  local what="$1" status="$2" pattern="$3" code
  shift 3
  code="$(curl -s -o "$WORK/body" -w '%{http_code}' --max-time 30 "$@")" || true
  if [ "$code" != "$status" ] || ! grep -Eq "$pattern" "$WORK/body"; then
    die "$what: expected $status matching /$pattern/, got $code: $(head -c 300 "$WORK/body")"
  fi
  log "ok: $what ($code)"
}
for _ in $(seq 1 60); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE_URL/healthz")" = 200 ] && break
  sleep 1
done
expect "API health through the Ingress" 200 . "$BASE_URL/healthz"
expect "the API asks for a token" 401 '"Unauthorized"' "$BASE_URL/inputs"
expect "integrations under /oauthsvc, prefix stripped" 200 '"status":"ok"' "$BASE_URL/oauthsvc/health"
expect "a provider callback reaches the integrations service" 404 . "$BASE_URL/oauthsvc/v1/auth/google/callback?code=x&state=y"
if grep -q "Integrations route not configured" "$WORK/body"; then die "the callback reached the API instead of the integrations service"; fi
expect "a 10m body passes the Ingress (the API, not nginx, answers)" 401 '"Unauthorized"' \
  -X POST -H 'Content-Type: application/json' --data-binary @<(head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' 'a') \
  "$BASE_URL/kickoff"

# --- 5. the e2e suite against the installed chart ----------------------------------------------------------------
ADMIN_KEY="$("$KUBECTL" -n "$NAMESPACE" get secret $RELEASE -o jsonpath='{.data.admin-key}' | base64 -d)"
log "running the e2e suite against $BASE_URL"
TEST_KUBECONFIG="$KUBECONFIG" \
  E2E_API_URL="$BASE_URL" \
  E2E_INTEGRATIONS_URL="$BASE_URL/oauthsvc" \
  E2E_NAMESPACE="$NAMESPACE" \
  E2E_ADMIN_KEY="$ADMIN_KEY" \
  E2E_RUNNER_SERVICE_ACCOUNT="$RELEASE-runner" \
  PATH="$REPO/node_modules/.bin:$PATH" \
  vitest run --project cluster test/e2e

# --- 6. integrations on a dedicated host --------------------------------------------------------------------------
log "moving the integrations service to its own host"
"$HELM" upgrade "$RELEASE" charts/kubecrew --namespace "$NAMESPACE" --values "$WORK/values.yaml" \
  --set ingress.integrations.host=oauth.localhost --set integrations.publicUrl="http://oauth.localhost:$KIND_HTTP_PORT" \
  --wait --timeout 5m
for _ in $(seq 1 30); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: oauth.localhost' "$BASE_URL/health")" = 200 ] && break
  sleep 1
done
expect "integrations at / of its dedicated host" 200 '"status":"ok"' -H 'Host: oauth.localhost' "$BASE_URL/health"
expect "/oauthsvc on the API host now reaches the API, which explains the missing route" 502 \
  "Integrations route not configured" "$BASE_URL/oauthsvc/v1/auth/google/callback"

log "all checks passed"
