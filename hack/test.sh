#!/usr/bin/env bash
# `npm test`: sets up on a fresh machine everything the tests need, then runs every suite.
#  - redis-server and nginx from Debian's packages (integration suites), chromium (the console's browser test)
#  - node_modules from the lockfile (npm ci), which brings the pinned Node 24
#  - the Kubernetes test binaries, built once into a cache outside the clone (hack/tools.sh), and the crewai runtime's
#    Python environment beside them (hack/crewai-venv.sh)
#  - tsc, eslint, prettier, the vitest projects, then the kind e2e (hack/kind-e2e.sh, `npm run test:kind`): the
#    installed system in real containers. It needs Docker (hack/docker.sh installs and starts it, as root); where
#    Docker cannot run, that is one line and the run fails: the kind e2e is never skipped without a word.
#    `npm test -- <vitest args>` runs that vitest selection only, and says that the kind e2e did not run.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null || need_apt+=(redis-server)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_apt+=(nginx-light)
[ -x /usr/bin/chromium ] || need_apt+=(chromium fonts-liberation)
# The crewai runtime's Python environment (hack/crewai-venv.sh) is made with python3's venv module.
python3 -c 'import ensurepip, venv' 2>/dev/null || need_apt+=(python3 python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "test: installing ${need_apt[*]} from Debian's packages"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

if [ ! -x node_modules/.bin/node ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "test: npm ci"
  npm ci --no-audit --no-fund
fi

if [ -x hack/tools.sh ]; then
  bash hack/tools.sh ensure
fi
# The crewai runtime's Python environment (CrewAI from crewai-adapter/requirements.lock), in the same cache.
bash hack/crewai-venv.sh ensure

export PATH="$PWD/node_modules/.bin:$PATH"
node --version
# The model project's real model (SmolLM2-135M), pulled once into the cache outside the clone; warm: its digest checked.
node hack/local-model.ts
reports="$(mktemp -d)"
# What the kind e2e runs on (its Go binaries, node image, images: 30 min on a cold machine, seconds warm) is built in
# the background while tsc, eslint and the vitest projects run, niced so the tests keep the CPU they want.
prepare_pid=""
if [ $# -eq 0 ] && bash hack/docker.sh ensure >/dev/null 2>&1; then
  nice -n 10 bash hack/kind-e2e.sh prepare >"$reports/kind-prepare.log" 2>&1 &
  prepare_pid=$!
fi
tsc --noEmit
eslint . --max-warnings 0
prettier --check . --log-level warn
# The crewai runtime's adapter: its type check (mypy) and its tests (pytest, against the real CrewAI).
bash hack/crewai-venv.sh check
status=0
if [ $# -gt 0 ]; then
  vitest run --reporter=default --reporter=json --outputFile.json="$reports/all.json" "$@" || status=$?
else
  # Two vitest processes side by side: the cluster project (its files one at a time against one control plane, mostly
  # waiting on it) and everything else. In one process vitest runs its sequential projects after the parallel ones, and
  # on 2 cores gives the parallel ones a single worker: the unit and integration files mostly wait on their servers,
  # so they get 3. The cluster run's output is printed when both are done.
  vitest run --project cluster --reporter=default --reporter=json --outputFile.json="$reports/cluster.json" \
    >"$reports/cluster.log" 2>&1 &
  cluster_pid=$!
  vitest run --project '!cluster' --maxWorkers="${KUBECREW_TEST_WORKERS:-3}" --reporter=default --reporter=json \
    --outputFile.json="$reports/rest.json" || status=$?
  cluster_status=0
  wait "$cluster_pid" || cluster_status=$?
  echo "--- the cluster project (run beside the others):"
  cat "$reports/cluster.log"
  [ "$cluster_status" -eq 0 ] || status=$cluster_status
fi
# One plain line per part, whatever the reporters printed above them.
summary="$(node -e '
  const fs = require("fs");
  const dir = process.argv[1];
  const reports = fs.readdirSync(dir).filter((f) => f.endsWith(".json")).map((f) => JSON.parse(fs.readFileSync(`${dir}/${f}`, "utf8")));
  const sum = (k) => reports.reduce((n, r) => n + r[k], 0);
  console.log(`${sum("numPassedTests")} passed, ${sum("numFailedTests")} failed` + (sum("numPendingTests") ? `, ${sum("numPendingTests")} skipped` : ""));
  // A file whose set-up or tear-down threw fails with its tests counted as skipped: name it and its error.
  for (const f of reports.flatMap((r) => r.testResults).filter((f) => f.status === "failed" && f.message))
    console.log(`vitest: file failed: ${f.name}: ${f.message.split("\n")[0]}`);
  // Each failed test by name, so the last lines of a run say what to look at.
  for (const f of reports.flatMap((r) => r.testResults))
    for (const t of f.assertionResults.filter((t) => t.status === "failed"))
      console.log(`vitest: test failed: ${f.name.replace(process.cwd() + "/", "")} > ${t.fullName}: ${(t.failureMessages[0] ?? "").split("\n")[0].replace("Error: STACK_TRACE_ERROR", "a timeout (see its FAIL block above)").slice(0, 300)}`);
  // A process that ended without writing its report (a crash) must not pass for one with nothing to report.
  if (reports.length < Number(process.argv[2])) console.log(`vitest: ${Number(process.argv[2]) - reports.length} report(s) missing`);
' "$reports" "$([ $# -gt 0 ] && echo 1 || echo 2)" || echo "no vitest report")"
echo "vitest: $summary"

kind_start=$SECONDS
if [ $# -gt 0 ]; then
  kind="NOT RUN: npm test was given a vitest selection ($*); npm run test:kind runs it"
elif ! docker_error="$(bash hack/docker.sh ensure 2>&1)"; then
  kind="FAILED: cannot run here, Docker is not usable: ${docker_error##*$'\n'} (see docs/testing.md)"
  status=1
else
  [ -z "$docker_error" ] || echo "$docker_error"
  if [ -n "$prepare_pid" ] && ! wait "$prepare_pid"; then
    echo "kind e2e: its preparation in the background failed (tried again below):"
    tail -20 "$reports/kind-prepare.log"
  fi
  kind_status=0
  bash hack/kind-e2e.sh || kind_status=$?
  if [ $kind_status -eq 0 ]; then
    kind="passed in $((SECONDS - kind_start)) s"
  else
    kind="FAILED (exit $kind_status) after $((SECONDS - kind_start)) s: see the kind-e2e lines above"
    status=1
  fi
fi
echo "vitest: $summary"
echo "kind e2e: $kind"
exit "$status"
