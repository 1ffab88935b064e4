#!/usr/bin/env bash
# A real Kubernetes control plane on loopback for tests and local work, plus a local node that runs pods as processes.
#
#   hack/local-cluster.sh up [--no-node]  start etcd, kube-apiserver, kube-controller-manager and the local node
#                                         (idempotent: a running cluster is left as it is); prints the start time
#   hack/local-cluster.sh up --kwok       instead of the local node: kube-scheduler and KWOK with one fake node
#                                         (pods scheduled, then moved to Running and Succeeded by KWOK's stages,
#                                         hack/kwok/kwok.yaml); client rate limits raised for the scale bench
#   hack/local-cluster.sh kubeconfig      print the admin kubeconfig's path
#   hack/local-cluster.sh status          exit 0 when the cluster answers /readyz
#   hack/local-cluster.sh down            stop everything it started, pods' processes included
#
# KUBECREW_CLUSTER_DIR=<dir> holds the state (etcd data, kubeconfigs, logs, pid files, the node's pod directories);
# default ${XDG_CACHE_HOME:-~/.cache}/kubecrew/cluster. Give each concurrent cluster its own directory (the vitest
# global setup does). KUBECREW_CLUSTER_PKI=<dir> moves the certificates (default ~/.cache/kubecrew/pki).
# The binaries come from hack/tools.sh (KUBECREW_TEST_ASSETS overrides, as there).
# KUBECREW_CLUSTER_PROFILING=1 serves kube-apiserver's /debug/pprof (off by default), for CPU profiles during a bench:
#   kubectl --kubeconfig <dir>/admin.kubeconfig get --raw '/debug/pprof/profile?seconds=30' > apiserver.pb
# KUBECREW_CLUSTER_AUDIT=<file> writes kube-apiserver's audit log there (off by default), for the scale bench's split of
# the result → status time: only the CrewExecution status writes (patch and update of crewexecutions/status), at
# Request level (the patch body: which write marked a task done) and only their ResponseComplete stage
# (requestReceivedTimestamp: received; stageTimestamp: answered, the write committed), one JSON line each, written
# synchronously (blocking mode: none dropped). Its cost: the policy's match on every request, and one ~1.7 KB line
# per status write (two per 1-task execution: 35 MB for 10,000; ~1.5 ms of kube-apiserver CPU per execution, ~3 %).
# KUBECREW_CLUSTER_FEATURE_GATES=<gates> passes kube-apiserver --feature-gates (e.g. ConcurrentWatchObjectDecode=true),
# for A/B runs of the scale bench; unset, the apiserver runs with its defaults.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${KUBECREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubecrew}"
STATE="${KUBECREW_CLUSTER_DIR:-$CACHE/cluster}"
# Certificates and keys for loopback only, shared by every cluster this user starts (made once, then reused).
PKI="${KUBECREW_CLUSTER_PKI:-$CACHE/pki}"
RUN="$STATE/run"
LOGS="$STATE/logs"
KUBECONFIG_ADMIN="$STATE/admin.kubeconfig"
NODE_BIN="$REPO/node_modules/.bin/node"
SERVICE_CIDR=10.0.0.0/24
# kube-controller-manager runs only what a cluster without a scheduler or cloud needs for Jobs and namespaces.
CONTROLLERS=job-controller,cronjob-controller,garbage-collector-controller,ttl-after-finished-controller,serviceaccount-token-controller,serviceaccount-controller,namespace-controller,root-ca-certificate-publisher-controller,clusterrole-aggregation-controller,deployment-controller,replicaset-controller

log() { echo "local-cluster: $*" >&2; }
die() {
  echo "local-cluster: $*" >&2
  exit 1
}

now_ms() { date +%s%3N; }

# phase <name>: with KUBECREW_CLUSTER_TIMINGS=1, how long each step of `up` took
PHASE_START=""
phase() {
  local t
  t=$(now_ms)
  if [ "${KUBECREW_CLUSTER_TIMINGS:-}" = 1 ] && [ -n "$PHASE_START" ]; then log "  $1: $((t - PHASE_START)) ms"; fi
  PHASE_START=$t
}

assets() { bash "$REPO/hack/tools.sh" path; }

pid_alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

# free_ports <n>: n distinct free loopback ports, one a line, drawn as the tests draw theirs (hack/free-ports.ts): below
# the kernel's ephemeral range, so that no outgoing connection takes one before etcd or kube-apiserver binds it.
free_ports() { "$NODE_BIN" "$REPO/hack/free-ports.ts" "$1"; }

readyz() {
  [ -f "$STATE/apiserver.port" ] || return 1
  curl -sf --max-time 2 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "https://127.0.0.1:$(cat "$STATE/apiserver.port")/readyz" >/dev/null 2>&1
}

# wait_for <what> <seconds> <log file> <command...>
wait_for() {
  local what="$1" timeout="$2" logfile="$3"
  shift 3
  local deadline=$((SECONDS + timeout))
  until "$@"; do
    if [ $SECONDS -ge $deadline ]; then
      log "$what did not come up in ${timeout}s; last lines of $logfile:"
      tail -n 30 "$logfile" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
}

# start <name> <command...>: a detached process (own session), its pid recorded, its output in logs/<name>.log
start() {
  local name="$1"
  shift
  setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null 8>&- 9>&- &
  echo $! >"$RUN/$name.pid"
}

stop() {
  local name="$1" pid
  [ -f "$RUN/$name.pid" ] || return 0
  pid="$(cat "$RUN/$name.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$name.pid"
}

# --- certificates (made once per state dir; a warm start reuses them) --------------------------------------------
sign() { # sign <name> <subject> [extensions]
  local name="$1" subject="$2" ext="${3:-}"
  openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subject" -out "$PKI/$name.csr" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n%s\n' "$ext" >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial -days 3650 \
    -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

make_pki() {
  [ -f "$PKI/.complete" ] && return
  mkdir -p "$(dirname "$PKI")"
  exec 8>"$PKI.lock"
  flock 8
  if [ -f "$PKI/.complete" ]; then
    exec 8>&-
    return
  fi
  rm -rf "$PKI"
  mkdir -p "$PKI"
  chmod 700 "$PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -subj "/CN=kubecrew-local-ca" -days 3650 \
    -out "$PKI/ca.crt" 2>/dev/null
  sign apiserver "/CN=kube-apiserver" \
    "extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  # The local node serves the kubelet API (pod logs) on loopback.
  sign kubelet "/CN=kubecrew-local-node" "extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
  sign admin "/O=system:masters/CN=kubecrew-admin" "extendedKeyUsage=clientAuth"
  sign controller-manager "/O=system:masters/CN=system:kube-controller-manager" "extendedKeyUsage=clientAuth"
  sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  touch "$PKI/.complete"
  exec 8>&-
}

write_kubeconfig() { # write_kubeconfig <file> <user cert name> <port>
  local file="$1" user="$2" port="$3"
  cat >"$file.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kubecrew-local
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 <"$PKI/$user.crt")
    client-key-data: $(base64 -w0 <"$PKI/$user.key")
contexts:
- name: kubecrew-local
  context:
    cluster: kubecrew-local
    user: $user
    namespace: default
current-context: kubecrew-local
EOF
  mv "$file.tmp" "$file"
}

control_plane_running() { pid_alive etcd && pid_alive kube-apiserver && pid_alive kube-controller-manager && readyz; }

start_node() {
  start local-node "$NODE_BIN" "$REPO/hack/local-node/main.ts" --kubeconfig "$KUBECONFIG_ADMIN" \
    --state-dir "$STATE/node" --serving-cert "$PKI/kubelet.crt" --serving-key "$PKI/kubelet.key"
  wait_for "the local node" 30 "$LOGS/local-node.log" node_ready
}

node_ready() {
  pid_alive local-node || {
    tail -n 30 "$LOGS/local-node.log" >&2
    die "the local node exited"
  }
  [ -f "$STATE/node/ready" ]
}

start_kwok() {
  local bin="$1"
  start kube-scheduler "$bin/kube-scheduler" --kubeconfig "$KUBECONFIG_ADMIN" \
    --authentication-kubeconfig "$KUBECONFIG_ADMIN" --authorization-kubeconfig "$KUBECONFIG_ADMIN" \
    --bind-address 127.0.0.1 --secure-port "$(free_ports 1)" --leader-elect=false \
    --kube-api-qps 2000 --kube-api-burst 4000 --v=1
  start kwok "$bin/kwok" --kubeconfig "$KUBECONFIG_ADMIN" --config "$REPO/hack/kwok/kwok.yaml" \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --v WARN
  "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations: { kwok.x-k8s.io/node: fake }
  labels: { kubernetes.io/hostname: kwok-node-0, type: kwok }
EOF
  wait_for "the KWOK node" 60 "$LOGS/kwok.log" kwok_node_ready
  # The apiserver taints a new node not-ready; the node lifecycle controller that would lift it is not run here (it
  # would also mark the node lost, KWOK's fast stages send no heartbeats).
  "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" taint node kwok-node-0 node.kubernetes.io/not-ready:NoSchedule- >/dev/null
}

kwok_node_ready() {
  pid_alive kwok || {
    tail -n 30 "$LOGS/kwok.log" >&2
    die "kwok exited"
  }
  pid_alive kube-scheduler || {
    tail -n 30 "$LOGS/kube-scheduler.log" >&2
    die "kube-scheduler exited"
  }
  [ "$("$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" get node kwok-node-0 \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

# The audit policy of KUBECREW_CLUSTER_AUDIT: the CrewExecution status writes with their bodies, nothing else.
audit_policy() {
  cat >"$STATE/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
  - level: Request
    verbs: [patch, update]
    resources:
      - group: kubecrew.io # core/api-group.ts
        resources: [crewexecutions/status]
  - level: None
EOF
}

default_service_account() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" get serviceaccount default -n default >/dev/null 2>&1; }

need_commands() {
  local missing=()
  for c in openssl curl setsid flock base64; do command -v "$c" >/dev/null || missing+=("$c"); done
  [ ${#missing[@]} -eq 0 ] || die "needs ${missing[*]} (Debian: apt-get install openssl curl util-linux coreutils)"
  [ -x "$NODE_BIN" ] || die "node_modules/.bin/node is missing: run npm ci first"
}

up() {
  need_commands
  local with_node=1 kwok=0
  [ "${1:-}" = "--no-node" ] && with_node=0
  if [ "${1:-}" = "--kwok" ]; then
    with_node=0
    kwok=1
  fi
  local t0
  t0=$(now_ms)
  PHASE_START=$t0
  mkdir -p "$STATE" "$RUN" "$LOGS"
  exec 9>"$STATE/.lock"
  flock 9
  if [ $kwok = 1 ]; then bash "$REPO/hack/tools.sh" ensure-kwok; else bash "$REPO/hack/tools.sh" ensure; fi
  local bin
  bin="$(assets)"
  KUBECTL="$bin/kubectl"

  if control_plane_running; then
    if [ $with_node = 1 ] && ! pid_alive local-node; then start_node; fi
    if [ $kwok = 1 ] && ! pid_alive kwok; then die "already up without KWOK: run down first"; fi
    if [ -n "${KUBECREW_CLUSTER_AUDIT:-}" ] && [ "$(cat "$STATE/audit.path" 2>/dev/null)" != "$KUBECREW_CLUSTER_AUDIT" ]; then
      die "already up without the audit log to $KUBECREW_CLUSTER_AUDIT: run down first"
    fi
    log "already up; kubeconfig: $KUBECONFIG_ADMIN"
    return
  fi
  stop_all
  make_pki

  local ports etcd_port etcd_peer_port api_port
  ports=$(free_ports 3)
  {
    read -r etcd_port
    read -r etcd_peer_port
    read -r api_port
  } <<<"$ports"
  rm -rf "$STATE/etcd"
  # A backend quota of 8 GiB (etcd's default is 2): the scale bench's 10,000-execution runs write every revision of
  # tens of thousands of objects between the apiserver's compactions (every 5 min), and a full quota stops all writes.
  start etcd "$bin/etcd" --name local --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "local=http://127.0.0.1:$etcd_peer_port" --unsafe-no-fsync --log-level warn \
    --quota-backend-bytes 8589934592
  phase "certificates and ports"
  wait_for etcd 20 "$LOGS/etcd.log" curl -sf --max-time 1 "http://127.0.0.1:$etcd_port/health" -o /dev/null

  echo "$api_port" >"$STATE/apiserver.port"
  local profiling=false
  [ "${KUBECREW_CLUSTER_PROFILING:-}" = 1 ] && profiling=true
  local audit=()
  rm -f "$STATE/audit.path"
  if [ -n "${KUBECREW_CLUSTER_AUDIT:-}" ]; then
    audit_policy
    audit=(--audit-policy-file "$STATE/audit-policy.yaml" --audit-log-path "$KUBECREW_CLUSTER_AUDIT"
      --audit-log-format json --audit-log-mode blocking)
    echo "$KUBECREW_CLUSTER_AUDIT" >"$STATE/audit.path"
  fi
  local gates=()
  [ -n "${KUBECREW_CLUSTER_FEATURE_GATES:-}" ] && gates=(--feature-gates "$KUBECREW_CLUSTER_FEATURE_GATES")
  write_kubeconfig "$KUBECONFIG_ADMIN" admin "$api_port"
  write_kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager "$api_port"
  start kube-apiserver "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --cert-dir "$STATE/apiserver-certs" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" \
    --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --endpoint-reconciler-type none \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" \
    --kubelet-preferred-address-types InternalIP \
    --allow-privileged=true --profiling="$profiling" --enable-priority-and-fairness=false --v=1 "${audit[@]}" "${gates[@]}"
  phase etcd
  wait_for kube-apiserver 60 "$LOGS/kube-apiserver.log" readyz
  phase kube-apiserver

  # The scale bench creates thousands of Jobs a minute: the Job controller's client limits and workers must not be
  # the ceiling it measures.
  local kcm_limits=(--kube-api-qps 200 --kube-api-burst 400 --concurrent-job-syncs 10)
  [ $kwok = 1 ] && kcm_limits=(--kube-api-qps 2000 --kube-api-burst 4000 --concurrent-job-syncs 50)
  start kube-controller-manager "$bin/kube-controller-manager" \
    --kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --secure-port 0 --leader-elect=false --controllers "$CONTROLLERS" \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --use-service-account-credentials=false \
    "${kcm_limits[@]}" --v=1
  # The serviceaccount controller creating `default` in `default` means the controllers are working.
  wait_for kube-controller-manager 60 "$LOGS/kube-controller-manager.log" default_service_account
  phase kube-controller-manager

  if [ $with_node = 1 ]; then start_node; fi
  if [ $kwok = 1 ]; then start_kwok "$bin"; fi
  phase "local node"
  local ms=$(($(now_ms) - t0))
  log "up in $((ms / 1000)).$(printf '%03d' $((ms % 1000)) | cut -c1) s; kubeconfig: $KUBECONFIG_ADMIN"
}

stop_all() {
  stop local-node
  # Processes of pods the node could not stop (it was killed): it records each pod process group it starts.
  if [ -d "$STATE/node/pgids" ]; then
    for f in "$STATE/node/pgids"/*; do
      [ -e "$f" ] || continue
      kill -KILL -- "-$(basename "$f")" 2>/dev/null || true
      rm -f "$f"
    done
  fi
  stop kwok
  stop kube-scheduler
  stop kube-controller-manager
  stop kube-apiserver
  stop etcd
  rm -f "$STATE/apiserver.port" "$STATE/node/ready"
}

down() {
  mkdir -p "$STATE" "$RUN"
  exec 9>"$STATE/.lock"
  flock 9
  stop_all
  rm -rf "$STATE/etcd"
  log "down"
}

# Sourced (hack/local-cluster.test.ts draws ports with free_ports), it only defines the functions.
[[ "${BASH_SOURCE[0]}" != "$0" ]] && return 0
case "${1:-}" in
  up)
    shift
    up "$@"
    ;;
  down) down ;;
  kubeconfig) echo "$KUBECONFIG_ADMIN" ;;
  status) control_plane_running ;;
  *) die "usage: hack/local-cluster.sh up [--no-node|--kwok] | down | kubeconfig | status" ;;
esac
