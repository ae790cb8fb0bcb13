"""Whole agent episodes with the offline local model on the bundled example, and whether they fix it.

    python bench/local_episodes.py                        # 5 runs, configs/local_agent.yaml as is (the agent loop)
    python bench/local_episodes.py --runs 5 --max-steps 20 --temperature 0.7 --out /tmp/runs

Each run is `python -m swe_aci run --config local_agent` on examples/wordcount in its own output
directory, one after the other (the llama.cpp server of a run uses every core). Per run: exit
status, steps, model calls, wall time of the first turn (server start, model load and the cold
prompt) and the median of the others (time between two recorded steps minus the action's execution
time, read by polling the trajectory file), prompt tokens sent and recomputed per turn (sent minus
served from llama.cpp's prompt cache), and FIXED: the run's patch applied to a fresh copy of
examples/wordcount whose original tests (restored over whatever the patch did to them) all pass.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "wordcount"
ISSUE = ROOT / "examples" / "wordcount.issue.md"
TEST_FILE = "tests/test_counter.py"
EXPECTED_TESTS = 3
POLL_SECONDS = 0.2


@dataclass
class RunResult:
    run: int
    exit_status: str
    steps: int
    model_calls: int
    first_turn_s: float
    median_turn_s: float
    sent_per_turn: float
    recomputed_per_turn: float
    fixed: bool
    tests: str
    actions: list[str] = field(default_factory=list)
    turn_seconds: list[float] = field(default_factory=list)


def step_count(path: Path) -> int:
    """Steps recorded so far (0 while the file is absent or being replaced)."""
    try:
        return len(json.loads(path.read_text())["trajectory"])
    except (OSError, ValueError, KeyError):
        return 0


def watch_steps(path: Path, stop: threading.Event, times: list[float]) -> None:
    """Append the monotonic time at which each new step appears in the trajectory."""
    seen = 0
    while not stop.is_set():
        count = step_count(path)
        times.extend([time.monotonic()] * (count - seen))
        seen = max(seen, count)
        stop.wait(POLL_SECONDS)


def run_agent(instance: str, output_dir: Path, overrides: list[str]) -> tuple[Path, list[float]]:
    """One CLI episode; (trajectory path, wall seconds from launch to each step's record)."""
    command = [
        sys.executable, "-m", "swe_aci", "run",
        "--repo", str(EXAMPLE), "--init-copy", "--issue", str(ISSUE),
        "--config", "local_agent", "--output-dir", str(output_dir), "--instance-id", instance,
    ]  # fmt: skip
    for override in overrides:
        command += ["--set", override]
    trajectory = output_dir / instance / f"{instance}.traj"
    output_dir.mkdir(parents=True, exist_ok=True)
    times: list[float] = []
    stop = threading.Event()
    started = time.monotonic()
    watcher = threading.Thread(target=watch_steps, args=(trajectory, stop, times), daemon=True)
    watcher.start()
    with open(output_dir / f"{instance}.log", "w") as log:
        subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=False)
    stop.set()
    watcher.join()
    final = step_count(trajectory)
    times.extend([time.monotonic()] * (final - len(times)))  # steps written in the last poll
    return trajectory, [moment - started for moment in times]


def patch_fixes(patch: Path | None) -> tuple[bool, str]:
    """Apply the patch to a fresh copy of the example, restore its tests, run them."""
    if patch is None or not patch.is_file():
        return False, "no patch"
    with tempfile.TemporaryDirectory(prefix="wordcount-check-") as scratch:
        copy = Path(scratch) / "wordcount"
        shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
        applied = subprocess.run(
            ["git", "apply", str(patch)], cwd=copy, capture_output=True, text=True, check=False
        )
        if applied.returncode != 0:
            return False, f"patch does not apply: {applied.stderr.strip().splitlines()[0]}"
        shutil.copy2(EXAMPLE / TEST_FILE, copy / TEST_FILE)
        tests = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST_FILE],
            cwd=copy,
            capture_output=True,
            text=True,
            check=False,
        )
        summary = (tests.stdout.strip().splitlines() or ["no output"])[-1]
        passed = tests.returncode == 0 and f"{EXPECTED_TESTS} passed" in summary
        return passed, summary


def analyse(run: int, trajectory: Path, recorded: list[float]) -> RunResult:
    data = json.loads(trajectory.read_text())
    steps = data["trajectory"]
    info = data["info"]
    # Wall time of each turn: from the previous record to this one, minus running the action;
    # an exit step without a model call (step limit) is no turn.
    turns = [
        end - start - step["execution_time"]
        for start, end, step in zip([0.0, *recorded], recorded, steps, strict=False)
        if step["input_tokens"]
    ]
    queried = [step for step in steps if step["input_tokens"]]
    sent = [step["input_tokens"] for step in queried]
    recomputed = [step["input_tokens"] - step["cached_tokens"] for step in queried]
    patch = trajectory.with_suffix(".patch")
    fixed, tests = patch_fixes(patch if patch.is_file() else None)
    return RunResult(
        run=run,
        exit_status=str(info.get("exit_status")),
        steps=len(steps),
        model_calls=info["model_stats"]["api_calls"],
        first_turn_s=round(turns[0], 1) if turns else 0.0,
        median_turn_s=round(statistics.median(turns[1:]), 1) if len(turns) > 1 else 0.0,
        sent_per_turn=round(statistics.mean(sent)) if sent else 0,
        recomputed_per_turn=round(statistics.mean(recomputed)) if recomputed else 0,
        fixed=fixed,
        tests=tests,
        actions=[
            step["action"].strip().splitlines()[0] if step["action"] else "" for step in steps
        ],
        turn_seconds=[round(turn, 1) for turn in turns],
    )


def print_table(results: list[RunResult]) -> None:
    print(
        f"{'run':>3}  {'exit status':<30} {'steps':>5} {'calls':>5} {'1st turn s':>10} "
        f"{'median turn s':>13} {'sent/turn':>9} {'recomp/turn':>11}  fixed  tests"
    )
    for r in results:
        print(
            f"{r.run:>3}  {r.exit_status:<30} {r.steps:>5} {r.model_calls:>5} "
            f"{r.first_turn_s:>10} {r.median_turn_s:>13} {r.sent_per_turn:>9} "
            f"{r.recomputed_per_turn:>11}  {'yes' if r.fixed else 'no':<5}  {r.tests}"
        )
    distinct = len({tuple(r.actions) for r in results})
    print(f"{distinct} distinct action sequence(s) among {len(results)} runs")
    print(f"{sum(r.fixed for r in results)} of {len(results)} runs fixed the bug")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-steps", type=int, help="cap each episode (agent.limits.max_steps)")
    parser.add_argument("--temperature", type=float, help="model.temperature (config: 0.0)")
    parser.add_argument("--out", type=Path, help="keep the runs here (default: a temporary dir)")
    args = parser.parse_args()
    overrides = []
    if args.max_steps is not None:
        overrides.append(f"agent.limits.max_steps={args.max_steps}")
    if args.temperature is not None:
        overrides.append(f"model.temperature={args.temperature}")
    out = args.out or Path(tempfile.mkdtemp(prefix="swe-aci-local-episodes-"))
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for run in range(1, args.runs + 1):
        trajectory, recorded = run_agent(f"run{run}", out / f"run{run}", overrides)
        if not trajectory.is_file():
            sys.exit(f"run {run} wrote no trajectory; see {out / f'run{run}' / f'run{run}.log'}")
        results.append(analyse(run, trajectory, recorded))
        print(json.dumps(asdict(results[-1])), flush=True)
    print(f"\noutputs: {out}  overrides: {' '.join(overrides) or 'none'}")
    print_table(results)
    (out / "summary.json").write_text(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
