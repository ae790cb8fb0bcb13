#!/usr/bin/env bash
# Set up swe-aci, run the agent on the bundled example (no API key needed), then run the example's
# own tests on a fresh copy with the agent's patch applied. Exits non-zero if they fail.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 -m swe_aci run \
  --repo examples/wordcount --init-copy \
  --issue examples/wordcount.issue.md \
  --model replay --set model.replay_path=examples/wordcount.traj \
  --instance-id wordcount --output-dir "$out/trajectories"

patch="$out/trajectories/wordcount/wordcount.patch"
[ -s "$patch" ] || { echo "example: the agent produced no patch"; exit 1; }
cp -r examples/wordcount "$out/check"
git -C "$out/check" apply "$patch"
echo "== the example's tests on the patched copy"
(cd "$out/check" && python3 -m pytest -q -p no:cacheprovider)
echo "example: tests pass with the agent's patch"
