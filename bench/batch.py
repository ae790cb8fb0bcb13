"""Batch speed: instances per minute, the scheduler's own overhead, environment build times.

    python bench/batch.py [--instances 8] [--workers 1,2,4] [--executors threads,ray]
                          [--backend auto] [--docker]

- Instances per minute of a scripted 10-step episode (nine shell commands, then submit) on small
  generated repositories, with 1, 2 and 4 workers, on threads and on a local Ray cluster.
- The scheduler's own overhead per instance: with one worker, the batch's wall time minus the time
  the instances themselves took (measured inside each worker), divided by the instances. It
  covers scheduling, start delays, result transport and the atomic writes of preds.json,
  results.json and exit_statuses.yaml. Targets: < 50 ms on threads, < 300 ms on Ray.
- Environment build time of a recipe, cold and cached (target: cached ready in < 2 s), on the
  host (bwrap/local: virtualenv + base tree) and, with --docker, as a docker image.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from swe_aci.batch.outputs import BatchOutputs  # noqa: E402
from swe_aci.batch.runner import BatchOptions, BatchRunner  # noqa: E402
from swe_aci.env.config import EnvConfig  # noqa: E402
from swe_aci.episode import load_config  # noqa: E402
from swe_aci.recipes import task_workspace  # noqa: E402
from swe_aci.tasks import Task, load_tasks  # noqa: E402

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
STEP = "DISCUSSION\nLook around.\n```\necho step {n} && ls > /dev/null\n```\n"
REPLIES = [STEP.format(n=n) for n in range(9)] + ["DISCUSSION\nDone.\n```\nsubmit\n```\n"]


def make_task_file(root: Path, count: int, install: list[str] | None = None) -> Path:
    rows = []
    for number in range(count):
        project = root / "projects" / f"p{number}"
        (project / "calc").mkdir(parents=True)
        (project / "calc" / "__init__.py").write_text(
            f"def add(a, b):\n    return a - b  # {number}\n"
        )
        (project / "setup.py").write_text(
            'from setuptools import setup\nsetup(name="calc", version="0.1", packages=["calc"])\n'
        )
        subprocess.run([*GIT, "init", "-q", str(project)], check=True)
        subprocess.run([*GIT, "add", "-A"], cwd=project, check=True)
        subprocess.run([*GIT, "commit", "-qm", "init"], cwd=project, check=True)
        recipe: dict[str, object] = {"source": {"git": str(project)}}
        if install:
            recipe |= {"python": "3.9", "install": install}
        rows.append(
            {
                "instance_id": f"bench__calc-{number}",
                "repo": "bench/calc",
                "problem_statement": "add() subtracts",
                "environment": recipe,
            }
        )
    path = root / "tasks.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def run_batch(
    tasks: list[Task], backend: str, workers: int, executor: str, root: Path, cache: Path
) -> tuple[float, float]:
    """(wall seconds, summed in-worker instance seconds) of one batch."""
    config = load_config(
        None,
        ["model.name=scripted", f"model.script={json.dumps(REPLIES)}", f"env.backend={backend}"],
    )
    outputs = BatchOutputs(Path(tempfile.mkdtemp(dir=root, prefix=f"out-{executor}-{workers}-")))
    runner = BatchRunner(
        tasks,
        config,
        outputs,
        BatchOptions(workers=workers, executor=executor, cache_dir=cache),  # type: ignore[arg-type]
    )
    started = time.perf_counter()
    state = runner.run()
    wall = time.perf_counter() - started
    assert state.counts == {"submitted": len(tasks)}, state.counts
    return wall, sum(result.elapsed for result in outputs.results.values())


def build_times(root: Path, backend: str, install: list[str] | None) -> tuple[float, float]:
    (task,) = load_tasks(
        make_task_file(root / f"build-{backend}-{bool(install)}", 1, install)
    ).tasks
    cache = root / "build-cache"
    times = []
    for _ in range(2):
        started = time.perf_counter()
        prepared = task_workspace(task, EnvConfig(backend=backend), cache_dir=cache)  # type: ignore[arg-type]
        times.append(time.perf_counter() - started)
    if (
        backend == "docker"
    ):  # the task image is the bench's own: remove it (interpreter images stay)
        subprocess.run(["docker", "rmi", "-f", str(prepared.config.image)], capture_output=True)
    return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=8)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--executors", default="threads,ray")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--docker", action="store_true", help="also time docker image builds")
    args = parser.parse_args()
    console = Console()
    executors = args.executors.split(",")
    with tempfile.TemporaryDirectory(prefix="swe-aci-bench-batch-") as scratch:
        root = Path(scratch)
        cache = root / "cache"
        tasks = load_tasks(make_task_file(root / "set", args.instances)).tasks
        for task in tasks:  # environments ready before timing the scheduler
            task_workspace(task, EnvConfig(backend=args.backend), cache_dir=cache)  # type: ignore[arg-type]
        if "ray" in executors:
            import ray

            ray.init(num_cpus=max(int(w) for w in args.workers.split(",")), log_to_driver=False)
        table = Table(title=f"{args.instances} scripted 10-step instances, backend {args.backend}")
        for column in ("executor", "workers", "wall s", "instances/min", "overhead ms/instance"):
            table.add_column(column, justify="right")
        for executor in executors:
            for workers in (int(w) for w in args.workers.split(",")):
                wall, inside = run_batch(tasks, args.backend, workers, executor, root, cache)
                overhead = (wall - inside) / len(tasks) * 1000 if workers == 1 else None
                table.add_row(
                    executor,
                    str(workers),
                    f"{wall:.1f}",
                    f"{len(tasks) / wall * 60:.1f}",
                    f"{overhead:.0f}" if overhead is not None else "-",
                )
        console.print(table)
        builds = Table(title="environment build time (s)")
        for column in ("backend", "recipe", "cold", "cached"):
            builds.add_column(column, justify="right")
        editable = ["pip install --no-build-isolation --no-deps -e ."]
        for backend in ["local", *(["docker"] if args.docker else [])]:
            for install in (None, editable):
                cold, cached = build_times(root, backend, install)
                kind = "python 3.9 + editable install" if install else "git source, no install"
                builds.add_row(backend, kind, f"{cold:.2f}", f"{cached:.3f}")
        console.print(builds)


if __name__ == "__main__":
    main()
