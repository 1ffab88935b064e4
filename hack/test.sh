#!/usr/bin/env bash
# `npm test`: sets up on a fresh machine everything the tests need, then runs every suite.
#  - redis-server and nginx from Debian's packages (integration suites), chromium (the console's browser test)
#  - node_modules from the lockfile (npm ci), which brings the pinned Node 24
#  - the Kubernetes test binaries, built once into a cache outside the clone (hack/tools.sh)
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

export PATH="$PWD/node_modules/.bin:$PATH"
node --version
tsc --noEmit
eslint . --max-warnings 0
prettier --check . --log-level warn
report="$(mktemp -d)/vitest.json"
status=0
vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
# One plain line per part, whatever the reporters printed above them.
summary="$(node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));
  // A file whose set-up or tear-down threw fails with its tests counted as skipped: name it and its error.
  for (const f of r.testResults.filter((f) => f.status === "failed" && f.message))
    console.log(`vitest: file failed: ${f.name}: ${f.message.split("\n")[0]}`);
' "$report" || echo "no vitest report")"
echo "vitest: $summary"

kind_start=$SECONDS
if [ $# -gt 0 ]; then
  kind="NOT RUN: npm test was given a vitest selection ($*); npm run test:kind runs it"
elif ! docker_error="$(bash hack/docker.sh ensure 2>&1)"; then
  kind="FAILED: cannot run here, Docker is not usable: ${docker_error##*$'\n'} (see README, Tests)"
  status=1
else
  [ -z "$docker_error" ] || echo "$docker_error"
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
