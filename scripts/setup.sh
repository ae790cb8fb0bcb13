#!/usr/bin/env bash
# Set up swe-aci on a fresh Debian/Ubuntu machine: system packages (when root), then the package
# and its development tools in the project's own virtualenv, .venv (so the system Python of Debian
# and Ubuntu, which refuses pip installs under PEP 668, is never modified).
#
# Idempotent and quiet: once set up, a run only checks (well under a second) and prints nothing.
# PYTHON names the interpreter the virtualenv is made from (default: python3, >= 3.11).
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
venv=.venv
extras='.[dev,local]'
stamp="$venv/.swe-aci-setup"
# What the installed environment was made from: the dependencies, the extras, the interpreter.
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1) $extras $(command -v "$python" || echo none)"

if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ] &&
  command -v git >/dev/null && command -v bwrap >/dev/null; then
  exit 0
fi

if ! command -v "$python" >/dev/null; then
  echo "setup: $python not found: install Python >= 3.11 (Debian/Ubuntu: apt-get install python3)" >&2
  exit 1
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup: swe-aci needs Python >= 3.11; $python is $("$python" --version 2>&1)" >&2
  exit 1
fi

need=()
command -v git >/dev/null || need+=(git)
command -v bwrap >/dev/null || need+=(bubblewrap)
# Debian's python3 has venv but not ensurepip (pip inside a new venv) without python3-venv.
"$python" -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: please install ${need[*]} (without bubblewrap, --env auto stops with an error: choose --env local or docker)" >&2
    if [[ " ${need[*]} " == *" python3-venv "* ]]; then
      exit 1
    fi
  fi
fi

if ! "$venv/bin/python" -c '' 2>/dev/null; then
  echo "setup: creating the virtualenv $venv (from $(command -v "$python"))"
  rm -rf "$venv"
  "$python" -m venv "$venv"
fi
echo "setup: installing swe-aci and its development tools into $venv"
PIP_ROOT_USER_ACTION=ignore "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -e "$extras"
echo "$wanted" >"$stamp"
echo "setup: done; run commands with $venv/bin/python -m ... or after: source $venv/bin/activate"
