#!/usr/bin/env bash
# Set up swe-aci on a fresh Debian/Ubuntu machine: system packages (when root), then the package.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v git >/dev/null || need+=(git)
command -v bwrap >/dev/null || need+=(bubblewrap)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: please install ${need[*]} (without bubblewrap, --env auto stops with an error: choose --env local or docker)" >&2
  fi
fi

python3 -m pip install --quiet --disable-pip-version-check -e '.[dev,local]'
