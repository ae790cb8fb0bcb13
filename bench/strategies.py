"""Each strategy with the offline model on the bundled example (several seeds), the small bug set
and optionally the real tasks: resolved counts (graded by `swe-aci evaluate`), wall time per task,
tokens and peak memory.

    python bench/strategies.py                                  # pipeline, example x5 + small set
    python bench/strategies.py --strategies pipeline,loop --sets example,small,real --seeds 3
    python bench/strategies.py --model local/qwen2.5-coder-0.5b --out /tmp/bench
    python bench/strategies.py --sets small,real_bugs,held_out,held_out_2,path/to/more.jsonl   # any task file

A strategy is a built-in config: `pipeline` is `local` (the pipeline), `loop` is `local_agent`
(the agent loop), `attempts` is `local_attempts` (two attempts of the loop and a chooser). Every
(strategy, set, seed) is one `swe-aci batch --workers 1` into its own directory, then
`swe-aci evaluate` of its preds.json, one after the other (llama.cpp takes every core). Peak memory
is the largest resident set among the batch process and its descendants (the llama.cpp server
included), from the batch's own rusage (wait4). The seed goes to llama.cpp
(`model.extra_body.seed`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {"pipeline": "local", "loop": "local_agent", "attempts": "local_attempts"}
SETS = {
    "small": ROOT / "datasets" / "small_bugs.jsonl",
    "real": ROOT / "datasets" / "tasks.jsonl",
    "real_bugs": ROOT / "datasets" / "real_bugs.jsonl",
    "held_out": ROOT / "datasets" / "held_out_bugs.jsonl",
    "held_out_2": ROOT / "datasets" / "held_out_bugs_2.jsonl",
    "held_out_3": ROOT / "datasets" / "held_out_bugs_3.jsonl",
    "held_out_4": ROOT / "datasets" / "held_out_bugs_4.jsonl",
    "held_out_5": ROOT / "datasets" / "held_out_bugs_5.jsonl",
    "held_out_6": ROOT / "datasets" / "held_out_bugs_6.jsonl",
    "held_out_7": ROOT / "datasets" / "held_out_bugs_7.jsonl",
    "held_out_8": ROOT / "datasets" / "held_out_bugs_8.jsonl",
    "held_out_9": ROOT / "datasets" / "held_out_bugs_9.jsonl",
    "held_out_10": ROOT / "datasets" / "held_out_bugs_10.jsonl",
}


def task_file(name: str, directory: Path) -> Path:
    """A set by name (`example`, a key of SETS) or the path of any task file."""
    if name == "example":
        return example_task_file(directory)
    path = SETS.get(name, Path(name).expanduser())
    if not path.is_file():
        raise SystemExit(f"unknown set {name!r}: example, {', '.join(SETS)} or a task file")
    return path.resolve()


def set_rows(names: str) -> dict[str, dict]:
    """The rows of comma-separated sets or task files, by instance id."""
    rows = {}
    for name in names.split(","):
        for line in task_file(name, Path(".")).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                rows[row["instance_id"]] = row
    return rows


EXAMPLE_TESTS = "tests/test_counter.py"


def example_task_file(directory: Path) -> Path:
    """The bundled example as a task row: its own failing tests are FAIL_TO_PASS."""
    row = {
        "instance_id": "wordcount",
        "repo": "examples/wordcount",
        "problem_statement": (ROOT / "examples" / "wordcount.issue.md").read_text(),
        "FAIL_TO_PASS": [
            f"{EXAMPLE_TESTS}::test_top_words_returns_n_entries",
            f"{EXAMPLE_TESTS}::test_top_words_breaks_ties_alphabetically",
        ],
        "PASS_TO_PASS": [f"{EXAMPLE_TESTS}::test_words_are_lowercased"],
        "environment": {
            "source": {"path": str(ROOT / "examples" / "wordcount")},
            "install": ["pip install pytest==8.3.4"],
            "test_cmd": f"python -m pytest -rA -p no:cacheprovider {EXAMPLE_TESTS}",
            "log_parser": "pytest",
        },
    }
    path = directory / "example.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def swe_aci(*args: str) -> float:
    """Run `swe-aci ARGS`; the peak resident memory (MB) of it and its descendants."""
    process = subprocess.Popen([sys.executable, "-m", "swe_aci", *args], cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, ["swe-aci", *args])
    return usage.ru_maxrss / 1024


def run_one(config: str, model: str, tasks: Path, seed: int, out: Path, env: str) -> dict:
    started = time.monotonic()
    peak_mb = swe_aci(
        "batch", "--instances", str(tasks), "--config", config, "--model", model,
        "--env", env, "--workers", "1", "--output-dir", str(out),
        "--set", f"model.extra_body.seed={seed}",
    )  # fmt: skip
    wall = time.monotonic() - started
    swe_aci(
        "evaluate", str(out / "preds.json"), "--instances", str(tasks), "--env", env,
        "--output-dir", str(out / "eval"),
    )  # fmt: skip
    report = json.loads((out / "eval" / "report.json").read_text())
    results = json.loads((out / "results.json").read_text())
    tokens = [0, 0]
    for instance_id in results:
        trajectory = out / instance_id / f"{instance_id}.traj"
        if trajectory.is_file():
            stats = json.loads(trajectory.read_text())["info"].get("model_stats", {})
            tokens[0] += stats.get("tokens_sent", 0)
            tokens[1] += stats.get("tokens_received", 0)
    return {
        "resolved": report["resolved_instances"],
        "total": report["total_instances"],
        "resolved_ids": report["resolved_ids"],
        "wall": wall,
        "per_task": [results[i]["elapsed"] for i in results],
        "over_300s": sorted(i for i in results if results[i]["elapsed"] > 300),
        "tokens_sent": tokens[0],
        "tokens_received": tokens[1],
        "statuses": {i: results[i]["exit_status"] for i in results},
        "peak_mb": peak_mb,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategies", default="pipeline")
    parser.add_argument("--sets", default="example,small")
    parser.add_argument("--seeds", type=int, default=5, help="runs of the example (seeds 1..N)")
    parser.add_argument("--model", default="local")
    parser.add_argument("--env", default="bwrap")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="swe-aci-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for strategy in args.strategies.split(","):
        for name in args.sets.split(","):
            tasks = task_file(name, out)
            seeds = range(1, args.seeds + 1) if name == "example" else [1]
            if not seeds:
                continue
            runs = [
                run_one(
                    CONFIGS[strategy],
                    args.model,
                    tasks,
                    seed,
                    out / f"{strategy}-{tasks.stem if name not in SETS else name}-{seed}",
                    args.env,
                )
                for seed in seeds
            ]
            per_task = [seconds for run in runs for seconds in run["per_task"]]
            rows.append(
                {
                    "strategy": strategy,
                    "set": name,
                    "runs": len(runs),
                    "resolved": sum(run["resolved"] for run in runs),
                    "attempted": sum(run["total"] for run in runs),
                    "median_s": statistics.median(per_task),
                    "max_s": max(per_task),
                    "tokens_sent": sum(run["tokens_sent"] for run in runs) // max(len(per_task), 1),
                    "tokens_received": sum(run["tokens_received"] for run in runs)
                    // max(len(per_task), 1),
                    "peak_mb": max(run["peak_mb"] for run in runs),
                    "details": runs,
                }
            )
    (out / "bench.json").write_text(json.dumps({"rows": rows}, indent=2))
    print(
        "| strategy | set | resolved | wall per task (median / max) | tokens per task (in / out) "
        "| peak memory |"
    )
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['strategy']} | {row['set']} | {row['resolved']}/{row['attempted']} | "
            f"{row['median_s']:.0f} s / {row['max_s']:.0f} s | "
            f"{row['tokens_sent']} / {row['tokens_received']} | {row['peak_mb']:.0f} MB |"
        )
    print(f"details: {out / 'bench.json'} (per task: wall, exit status, tasks over 300 s)")


if __name__ == "__main__":
    main()
