"""Evaluation speed: a task file with its gold patches, cold and warm, 1 and 2 workers, against the
floor of running the same test commands directly in the prepared virtualenvs.

    python bench/evaluate.py TASKS [--backend bwrap] [--skip-cold]

- cold: a new, empty recipe cache (every environment built: sdist fetched, virtualenv, install);
  1 worker, then 2 workers on another empty cache;
- warm: the environments cached; 1 and 2 workers (each a new output directory);
- floor: per task, a copy of the cached base tree with the gold and test patches applied and
  `test_cmd` run with the cached virtualenv active and the sandbox shell's Python settings, no
  sandbox, one at a time and two at a time; only the test commands are timed (copying and
  patching are not).

Also reports how long each warm environment took to be ready (sandbox started at the base, the
task's interpreter active). Targets: warm within 1.3x of the floor; each environment under 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from swe_aci.env.config import EnvConfig
from swe_aci.evaluate.harness import evaluate_all
from swe_aci.evaluate.options import GradingOptions
from swe_aci.evaluate.predictions import gold_predictions
from swe_aci.evaluate.report import InstanceReport
from swe_aci.recipes.host import host_build
from swe_aci.recipes.interpreter import find_interpreter
from swe_aci.tasks import Task, load_tasks

TEST_TIMEOUT = 600.0  # seconds the tests of one instance may run


def evaluate_gold(
    tasks: list[Task], backend: str, cache: Path, workers: int
) -> tuple[float, dict[str, InstanceReport]]:
    predictions = gold_predictions({task.instance_id: task.patch or "" for task in tasks})
    with tempfile.TemporaryDirectory(prefix="swe-aci-bench-eval-") as output:
        started = time.monotonic()
        reports = evaluate_all(
            tasks,
            predictions,
            EnvConfig(backend=backend),  # type: ignore[arg-type]
            Path(output),
            GradingOptions(TEST_TIMEOUT, workers=workers, cache_dir=cache),
        )
        elapsed = time.monotonic() - started
    unresolved = sorted(key for key, report in reports.items() if not report.resolved)
    if unresolved:
        sys.exit(f"gold patches not resolved: {', '.join(unresolved)}")
    return elapsed, reports


def prepared_tree(task: Task, cache: Path, workdir: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the cached base tree with the gold and test patches applied, and the variables
    that make its cached virtualenv active (as the sandbox's shell does)."""
    assert task.environment is not None
    built = host_build(task, find_interpreter(task.environment.python), cache, None)
    tree = workdir / task.instance_id
    shutil.copytree(built.tree, tree, symlinks=True)
    for patch in (task.patch, task.test_patch):
        subprocess.run(["git", "apply", "-"], cwd=tree, input=(patch or "").encode(), check=True)
    env = dict(os.environ)
    env.update(
        PYTHONDONTWRITEBYTECODE="1",  # as the sandbox's shell sets it
        VIRTUAL_ENV=str(built.venv),
        PATH=f"{built.venv / 'bin'}:{os.environ['PATH']}",
        PYTHONPATH=f"{tree / 'src'}:{tree}" if built.src_layout else str(tree),
    )
    return tree, env


def floor(tasks: list[Task], cache: Path, workers: int) -> float:
    with tempfile.TemporaryDirectory(prefix="swe-aci-bench-floor-") as workdir:
        prepared = [(task, *prepared_tree(task, cache, Path(workdir))) for task in tasks]

        def run(item: tuple[Task, Path, dict[str, str]]) -> None:
            task, tree, env = item
            assert task.environment is not None and task.environment.test_cmd
            subprocess.run(
                ["bash", "-c", task.environment.test_cmd],
                cwd=tree,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, prepared))
        return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--backend", default="bwrap")
    parser.add_argument("--skip-cold", action="store_true", help="only warm runs and the floor")
    parser.add_argument("--cache", type=Path, help="warm cache to reuse (default: a new one)")
    args = parser.parse_args()
    task_set = load_tasks(args.tasks)
    tasks = task_set.tasks
    console = Console()
    console.print(f"{len(tasks)} tasks from {args.tasks}, backend {args.backend}")
    figures: dict[str, float] = {}
    scratch = Path(tempfile.mkdtemp(prefix="swe-aci-bench-cache-"))
    try:
        warm_cache = args.cache or scratch / "warm"
        if not args.skip_cold:
            figures["cold, 1 worker"], _ = evaluate_gold(tasks, args.backend, warm_cache, 1)
            cold2 = scratch / "cold2"
            figures["cold, 2 workers"], _ = evaluate_gold(tasks, args.backend, cold2, 2)
        else:
            evaluate_gold(tasks, args.backend, warm_cache, 2)  # fill the cache
        figures["warm, 1 worker"], reports = evaluate_gold(tasks, args.backend, warm_cache, 1)
        figures["warm, 2 workers"], reports2 = evaluate_gold(tasks, args.backend, warm_cache, 2)
        figures["floor, 1 at a time"] = floor(tasks, warm_cache, 1)
        figures["floor, 2 at a time"] = floor(tasks, warm_cache, 2)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    ready = [report.timings["environment"] for report in reports.values()]
    table = Table(title=f"evaluating {len(tasks)} gold patches ({args.backend})")
    table.add_column("run")
    table.add_column("wall s", justify="right")
    for name, seconds in figures.items():
        table.add_row(name, f"{seconds:.1f}")
    table.add_row(
        "warm / floor (1)", f"{figures['warm, 1 worker'] / figures['floor, 1 at a time']:.2f}x"
    )
    table.add_row(
        "warm / floor (2)", f"{figures['warm, 2 workers'] / figures['floor, 2 at a time']:.2f}x"
    )
    table.add_row("environment ready, median", f"{statistics.median(ready):.2f}")
    table.add_row("environment ready, max", f"{max(ready):.2f}")
    console.print(table)
    tests = {key: report.timings.get("tests", 0.0) for key, report in reports.items()}
    print(
        json.dumps(
            {
                "figures": figures,
                "environment_ready": ready,
                "tests_seconds": tests,
                "warm2_totals": {k: r.timings["total"] for k, r in reports2.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
