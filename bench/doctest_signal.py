"""How much regression signal the changed modules' docstring examples give, and whether it is
right: per task row, the doctests of the modules a patch changes run at the base and with the
patch, as the `local` config's validation runs them (its test command, `--doctest-modules`, from
a clean tree).

    python bench/doctest_signal.py --sets real,real_bugs,held_out_6           # the gold patches
    python bench/doctest_signal.py --sets real --predictions OUT/preds.json   # a run's patches

A gold patch that breaks a doctest passing at the base would make the signal wrong (a right fix
counted as a regression); a prediction the harness did not resolve that breaks one is a wrong
fix the signal would have turned down. One line per row, then the counts.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from strategies import set_rows
from swe_aci.env import Environment, make_environment
from swe_aci.env.config import EnvConfig
from swe_aci.episode import load_config
from swe_aci.pipeline import regressions
from swe_aci.pipeline.sandbox import Sandbox
from swe_aci.recipes.workspace import task_workspace
from swe_aci.retrieval.documents import BaseTree, patched_files
from swe_aci.tasks import Task

PATCH_FILE = "/tmp/swe-aci-doctest-signal.diff"


def patched_texts(env: Environment, files: BaseTree, patch: str) -> dict[str, str] | str:
    """The files `patch` changes as it leaves them (the tree is clean again after), or why it
    does not apply."""
    root = shlex.quote(env.repo_path)
    env.write_file(PATCH_FILE, patch.encode())
    applied = env.run(f"cd {root} && git apply {PATCH_FILE}", timeout=60)
    if applied.exit_code != 0:
        return f"the patch does not apply: {applied.output}"
    texts = {document.path: document.text for document in files.read_all(patched_files(patch))}
    env.run(f"cd {root} && git checkout -q -- .", timeout=60)
    return texts


def local_sandbox(env: Environment, files: BaseTree) -> Sandbox:
    """The sandbox the `local` config's validation runs tests in: its test command, with the
    options the repository's pytest configuration needs."""
    strategy = load_config("local", []).strategy
    configs = {
        document.path: document.text
        for document in files.read_all(list(regressions.PYTEST_CONFIGS))
    }
    command = regressions.test_command(strategy.validation.test_command, configs)
    return Sandbox(env, command, timeout=120)


def doctest_runs(task: Task, patch: str, backend: str) -> dict | None:
    """The doctests of the modules `patch` changes, at the base and with it (None: no module
    it changes holds a docstring example)."""
    paths = patched_files(patch)
    strategy = load_config("local", []).strategy
    env = make_environment(task_workspace(task, EnvConfig(backend=backend, network=False)))
    try:
        files = BaseTree(env, strategy.localize.max_file_bytes)
        tree = {document.path: document.text for document in files.read_all(paths)}
        modules = regressions.doctest_modules(tree, paths)
        if not modules:
            return None
        texts = patched_texts(env, files, patch)
        if isinstance(texts, str):
            return {"modules": modules, "error": texts}
        box = local_sandbox(env, files)
        at_base = box.run_isolated({}, {}, modules, statuses_only=True, doctests=True)
        after = box.run_isolated(texts, {}, modules, statuses_only=True, doctests=True)
        return {
            "modules": modules,
            "pass_at_base": len(at_base.passed),
            "ran": len(at_base.statuses),
            "regressed": sorted(at_base.passed - after.passed),
        }
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", required=True, help="comma-separated sets or task files")
    parser.add_argument("--predictions", type=Path, help="a preds.json (default: gold patches)")
    parser.add_argument("--report", type=Path, help="the harness's report.json of those preds")
    parser.add_argument("--env", default="bwrap")
    args = parser.parse_args()
    rows = set_rows(args.sets)
    if args.predictions:
        predictions = json.loads(args.predictions.read_text())
        patches = {key: value["model_patch"] for key, value in predictions.items() if key in rows}
    else:
        patches = {key: row["patch"] for key, row in rows.items()}
    resolved = set(json.loads(args.report.read_text())["resolved_ids"]) if args.report else None
    signal = regressing = 0
    for instance_id, patch in patches.items():
        if not patch.strip():
            continue
        runs = doctest_runs(Task.model_validate(rows[instance_id]), patch, args.env)
        if runs and runs.get("pass_at_base"):
            signal += 1
            regressing += bool(runs["regressed"])
        verdict = "" if resolved is None else f" resolved={instance_id in resolved}"
        print(f"{instance_id}{verdict}: {json.dumps(runs)}", flush=True)
    print(
        f"{len(patches)} patches; {signal} change a module with a doctest passing at the base; "
        f"{regressing} of them break one"
    )


if __name__ == "__main__":
    main()
