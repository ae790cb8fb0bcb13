"""Whether a run's reproductions were right: per trajectory of a pipeline run, its accepted
reproduction test runs at the base and with the row's gold patch, as the `local` config's
validation runs it. A reproduction the gold patch does not pass asks for something the real fix
does not do, so no candidate could be right and pass it: the row was lost before the repair. A
right reproduction on an unresolved row means the repair (localization or samples) failed.

    python bench/reproductions.py --sets held_out_7 --run OUT/pipeline-held_out_7-1

One line per row (resolved, origin, the reproduction's tests failing at the base, and passing
with the gold patch), then the counts by origin and verdict.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from doctest_signal import local_sandbox, patched_texts
from strategies import set_rows
from swe_aci.env import make_environment
from swe_aci.env.config import EnvConfig
from swe_aci.episode import load_config
from swe_aci.pipeline.reproduction import ISSUE_FILE, MODEL_FILE, keep_tests
from swe_aci.recipes.workspace import task_workspace
from swe_aci.retrieval.documents import BaseTree
from swe_aci.tasks import Task

FILES = {"issue example": ISSUE_FILE, "model-written": MODEL_FILE}


def accepted_reproduction(trajectory: dict) -> tuple[str, str] | None:
    """The origin and text of the reproduction the run kept, if any (of the issue's examples,
    the tests it kept, as the pipeline does)."""
    for step in trajectory["trajectory"]:
        details = step.get("pipeline") or {}
        accepted = details.get("accepted")
        if not (step["action"].startswith("reproduce") and accepted and "test" in details):
            continue
        if isinstance(accepted, list):
            return details["origin"], keep_tests(details["test"], accepted)
        return details["origin"], details["test"]
    return None


def verdict(task: Task, origin: str, test: str, backend: str) -> dict:
    """The reproduction's tests that fail at the base and that pass with the gold patch."""
    max_file_bytes = load_config("local", []).strategy.localize.max_file_bytes
    env = make_environment(task_workspace(task, EnvConfig(backend=backend, network=False)))
    try:
        files = BaseTree(env, max_file_bytes)
        texts = patched_texts(env, files, task.patch)
        if isinstance(texts, str):
            return {"error": texts}
        box = local_sandbox(env, files)
        file = FILES[origin]
        at_base = box.run_isolated({}, {file: test}, [file])
        gold = box.run_isolated(texts, {file: test}, [file])
        tests = at_base.of(file) | gold.of(file)
        failing = tests - at_base.passed
        return {
            "tests": len(tests),
            "failing_at_base": len(failing),
            "gold_passes": len(failing & gold.passed),
            "right": bool(failing) and failing <= gold.passed,
        }
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", required=True, help="comma-separated sets or task files")
    parser.add_argument("--run", type=Path, required=True, help="a pipeline run's directory")
    parser.add_argument("--env", default="bwrap")
    args = parser.parse_args()
    rows = set_rows(args.sets)
    report = args.run / "eval" / "report.json"
    resolved = set(json.loads(report.read_text())["resolved_ids"]) if report.is_file() else None
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for path in sorted(args.run.glob("*/*.traj")):
        trajectory = json.loads(path.read_text())
        instance_id = trajectory["instance_id"]
        if instance_id not in rows:
            continue
        kept = accepted_reproduction(trajectory)
        if kept is None:
            runs, kind = None, ("none", "no reproduction")
        else:
            runs = verdict(Task.model_validate(rows[instance_id]), *kept, args.env)
            right = "error" if "error" in runs else "right" if runs["right"] else "wrong"
            kind = (kept[0], right)
        counts[kind] += 1
        mark = "" if resolved is None else f" resolved={instance_id in resolved}"
        print(f"{instance_id}{mark} {kind[0]}: {kind[1]} {json.dumps(runs)}", flush=True)
    for (origin, right), count in sorted(counts.items()):
        print(f"{origin}: {right}: {count}")


if __name__ == "__main__":
    main()
