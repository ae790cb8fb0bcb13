#!/usr/bin/env bash
# The README's two commands as a new user runs them: on a fresh clone of this checkout's HEAD, with
# the system Python (/usr/bin/python3, which refuses pip installs under PEP 668) first on PATH and
# no other interpreter (pyenv...) on it. Command 1 replays the recorded episode (MODEL=replay).
set -euo pipefail
cd "$(dirname "$0")/.."

clone=$(mktemp -d -t swe-aci-first-use-XXXXXX)
trap 'rm -rf "$clone"' EXIT
git clone --quiet --no-hardlinks . "$clone/swe-aci"
cd "$clone/swe-aci"
system=(env -i HOME="$HOME" TERM="${TERM:-dumb}" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
echo "python3 here: $("${system[@]}" sh -c 'command -v python3; python3 --version')"

echo "\$ MODEL=replay ./examples/run_example.sh"
"${system[@]}" MODEL=replay ./examples/run_example.sh
echo "\$ ./scripts/setup.sh && .venv/bin/python -m pytest -q"
"${system[@]}" sh -c './scripts/setup.sh && .venv/bin/python -m pytest -q'
