#!/usr/bin/env bash
# The Python virtual environment of the `crewai` runtime: CrewAI and its whole dependency tree from
# crewai-adapter/requirements.lock (pinned, with hashes), the adapter (crewai-adapter/kubecrew_crewai), and, for the
# tests, mypy and pytest (requirements-dev.lock). It lives in the cache outside the clone, one per lock.
#
#   hack/crewai-venv.sh ensure   create it when missing or made from another lock (idempotent; a second run only
#                                points it at this clone's adapter)
#   hack/crewai-venv.sh path     print the virtual environment's directory
#   hack/crewai-venv.sh python   print its python (what KUBECREW_CREWAI_PYTHON names)
#   hack/crewai-venv.sh check    ensure, then the adapter's type check (mypy) and tests (pytest)
#   hack/crewai-venv.sh lock     recompile the locks from requirements.in and requirements-dev.in (pip-tools, online)
#
# KUBECREW_CACHE=<dir> moves the cache (default: ${XDG_CACHE_HOME:-~/.cache}/kubecrew). KUBECREW_PYTHON names the
# Python to build it with (default python3; CrewAI needs 3.10 to 3.13).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ADAPTER="$ROOT/crewai-adapter"
CACHE="${KUBECREW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubecrew}"
CREWAI_VERSION="$(sed -n 's/^crewai\[[a-z,]*\]==\(.*\)$/\1/p' "$ADAPTER/requirements.in")"
VENV="$CACHE/crewai-$CREWAI_VERSION/venv"
PYTHON="${KUBECREW_PYTHON:-python3}"
PIP_TOOLS_VERSION=7.6.2

die() {
  echo "crewai-venv: $*" >&2
  exit 1
}

lock_digest() { cat "$ADAPTER/requirements.lock" "$ADAPTER/requirements-dev.lock" | sha256sum | cut -d' ' -f1; }
is_current() { [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.lock.sha256" 2>/dev/null)" = "$(lock_digest)" ]; }

# The adapter is imported from this clone: a .pth file in site-packages names its folder.
link_adapter() {
  local site
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
  local pth="$site/kubecrew_crewai.pth"
  if [ "$(cat "$pth" 2>/dev/null)" != "$ADAPTER" ]; then
    echo "$ADAPTER" >"$pth.$$"
    mv -f "$pth.$$" "$pth"
  fi
}

ensure() {
  command -v "$PYTHON" >/dev/null ||
    die "$PYTHON is not installed: the crewai runtime needs Python 3.10 to 3.13 with its venv module (Debian: apt-get install python3 python3-venv)"
  "$PYTHON" -c 'import sys; sys.exit(0 if (3, 10) <= sys.version_info[:2] <= (3, 13) else 1)' ||
    die "$PYTHON is Python $("$PYTHON" -c 'import platform; print(platform.python_version())'); CrewAI $CREWAI_VERSION needs 3.10 to 3.13 (set KUBECREW_PYTHON)"
  mkdir -p "$(dirname "$VENV")"
  if ! is_current; then
    # One builder at a time: a concurrent run waits here, then finds it built.
    exec 8>"$(dirname "$VENV")/.lock"
    flock 8
    if ! is_current; then
      local start=$SECONDS
      echo "crewai-venv: creating $VENV from crewai-adapter/requirements.lock (CrewAI $CREWAI_VERSION; the first time takes a few minutes)" >&2
      rm -rf "$VENV"
      "$PYTHON" -m venv "$VENV" 2>&1 | tail -5 >&2 || true
      [ -x "$VENV/bin/python" ] ||
        die "cannot create a virtual environment with $PYTHON (Debian: apt-get install python3-venv)"
      "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-hashes \
        -r "$ADAPTER/requirements.lock" -r "$ADAPTER/requirements-dev.lock" >&2 ||
        die "installing crewai-adapter/requirements.lock into $VENV failed (see pip's output above)"
      lock_digest >"$VENV/.lock.sha256"
      echo "crewai-venv: created $VENV in $((SECONDS - start)) s" >&2
    fi
  fi
  link_adapter
}

check() {
  ensure
  cd "$ADAPTER"
  "$VENV/bin/python" -m mypy
  "$VENV/bin/python" -m pytest -q
}

lock() {
  local tools
  tools="$(mktemp -d)"
  trap 'rm -rf "$tools"' EXIT
  "$PYTHON" -m venv "$tools"
  "$tools/bin/pip" install --quiet "pip-tools==$PIP_TOOLS_VERSION"
  cd "$ADAPTER"
  local compile=("$tools/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url
    --no-emit-find-links)
  "${compile[@]}" --output-file requirements.lock requirements.in
  "${compile[@]}" --output-file requirements-dev.lock requirements-dev.in
}

case "${1:-}" in
  ensure) ensure ;;
  path) echo "$VENV" ;;
  python) echo "$VENV/bin/python" ;;
  check) check ;;
  lock) lock ;;
  *) die "usage: hack/crewai-venv.sh ensure|path|python|check|lock" ;;
esac
