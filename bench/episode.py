"""Whole-episode speed: a 10-step scripted episode through the real CLI and in-process.

    python bench/episode.py [--repeat 5] [--backends local,docker]

Reports, per backend, the median wall time of `swe-aci run` for a 10-step episode with the full
default ACI (create, edit with lint, python, search_dir, open, search_file, goto, edit, python,
submit) on the bundled example, the tokens sent, the harness's own per-step overhead (episode
time minus command execution, measured in-process), and the start-up time of `swe-aci --help`.
Targets: per-step overhead < 10 ms, whole 10-step CLI episode < 1.5 s on docker, --help < 250 ms.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "wordcount"
ISSUE = ROOT / "examples" / "wordcount.issue.md"
IMAGE = "swe-aci/base:bookworm"

REPLIES = [
    "DISCUSSION\nReproduce first.\n```\ncreate reproduce.py\n```",
    "DISCUSSION\nWrite it.\n```\nedit 1:1\nfrom wordcount import top_words\n\n"
    'print(top_words("a b c a b a", 3))\nend_of_edit\n```',
    "DISCUSSION\nRun it.\n```\npython3 reproduce.py\n```",
    'DISCUSSION\nFind the function.\n```\nsearch_dir "def top_words"\n```',
    "DISCUSSION\nOpen it.\n```\nopen wordcount/counter.py\n```",
    'DISCUSSION\nFind the slice.\n```\nsearch_file "ranked["\n```',
    "DISCUSSION\nLook at it.\n```\ngoto 21\n```",
    "DISCUSSION\nFix the slice.\n```\nedit 21:21\n    return ranked[:n]\nend_of_edit\n```",
    "DISCUSSION\nCheck.\n```\npython3 reproduce.py && rm reproduce.py\n```",
    "DISCUSSION\nDone.\n```\nsubmit\n```",
]


def cli_episode(backend: str, output: Path) -> tuple[float, dict]:
    """One `swe-aci run` as a user types it; returns (seconds, the trajectory's info)."""
    command = [
        sys.executable,
        "-m",
        "swe_aci",
        "run",
        "--repo",
        str(EXAMPLE),
        "--init-copy",
        "--issue",
        str(ISSUE),
        "--env",
        backend,
        *(("--image", IMAGE) if backend == "docker" else ()),
        "--instance-id",
        "bench",
        "--output-dir",
        str(output),
        "--set",
        "model.name=scripted",
        "--set",
        f"model.script={json.dumps(REPLIES)}",
    ]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    elapsed = time.perf_counter() - started
    info = json.loads((output / "bench" / "bench.traj").read_text())["info"]
    return elapsed, info


def harness_overhead(backend: str) -> float:
    """Median milliseconds per step the loop spends outside command execution.

    Measured between consecutive steps (model query, parsing, history, templates, trajectory
    write), minus the step's own execution time; sandbox start and teardown are excluded.
    """
    from swe_aci.cli.common import resolved_repo
    from swe_aci.env.config import Workspace
    from swe_aci.episode import load_config, run_episode

    overrides = [f"env.backend={backend}", f"env.image={IMAGE}", "model.name=scripted"]
    config = load_config(None, [*overrides, f"model.script={json.dumps(REPLIES)}"])
    marks: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as scratch, resolved_repo(str(EXAMPLE), True) as repo:
        result = run_episode(
            config,
            Workspace(config.env, repo),
            ISSUE.read_text(),
            instance_id="bench",
            output_dir=Path(scratch),
            on_step=lambda step: marks.append((time.perf_counter(), step.execution_time)),
        )
    assert result.exit_status == "submitted", result.exit_status
    overheads = [
        (later - earlier) - executing
        for (earlier, _), (later, executing) in itertools.pairwise(marks)
    ]
    return statistics.median(overheads) * 1000


def help_time(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "swe_aci", "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--backends", default="local,docker")
    args = parser.parse_args()

    table = Table(title="10-step scripted episode through `swe-aci run` (medians)")
    for column in ("backend", "CLI episode", "spread", "tokens sent", "harness / step"):
        table.add_column(column, justify="right")
    for backend in args.backends.split(","):
        times, info = [], {}
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as output:
                elapsed, info = cli_episode(backend, Path(output))
            times.append(elapsed)
        overhead = statistics.median(harness_overhead(backend) for _ in range(args.repeat))
        table.add_row(
            backend,
            f"{statistics.median(times):.2f} s",
            f"{min(times):.2f}-{max(times):.2f} s",
            str(info["model_stats"]["tokens_sent"]),
            f"{overhead:.1f} ms",
        )
    console = Console()
    console.print(table)
    console.print(f"swe-aci --help: {help_time(args.repeat * 2) * 1000:.0f} ms (median)")


if __name__ == "__main__":
    main()
