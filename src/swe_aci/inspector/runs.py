"""The runs the inspector shows, read from what `run`, `batch`, `evaluate` and `compare` write.

A run directory is one of:
- a batch's output (`results.json`, `preds.json`, `<id>/<id>.traj`, `evaluation/`), also while the
  batch is still running (instances with only a journal so far);
- the output of `swe-aci run` (`<id>/<id>.traj`, no `results.json`);
- a directory of paper-era SWE-agent files (`<id>.traj` side by side);
- a `compare` output (`<config>/batch/` and `<config>/evaluation/` per config): one run per config.

The run page needs a row per instance. A batch's `results.json` and the evaluation's report hold
everything of a finished instance, so a run of hundreds of instances is listed without opening a
trajectory; only instances without a result (still running, or `swe-aci run` outputs) are read
from their trajectory or journal. Every path handed out is checked to lie under its run directory
once symlinks are resolved.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_aci.analysis.stats import UNFINISHED, AnalysisError, read_results, trajectory_stats
from swe_aci.records import (
    BATCH_DIR,
    EVALUATION_DIR,
    REPORT_FILE,
    TRAJECTORY_SUFFIX,
    is_valid_instance_id,
)
from swe_aci.trajectory.instance import InstanceResult
from swe_aci.trajectory.store import JOURNAL_SUFFIX, TrajectoryError, load_trajectory

RUNNING = "running"
UNREADABLE = "unreadable"  # a .traj that cannot be read: its row says so, the others are shown


class InspectError(Exception):
    """A run directory cannot be shown (one line for the user)."""


@dataclass
class Run:
    """A run directory (`root`) and where its evaluation is, if anywhere."""

    name: str
    root: Path
    evaluation: Path | None  # None: not evaluated (or its directory leads out of the run)
    problems: list[str] = field(default_factory=list)

    def inside(self, relative: str | Path) -> Path | None:
        """`root / relative` when it exists and, symlinks resolved, lies under the root."""
        return contained(self.root, relative)

    def evaluation_report(self) -> dict[str, Any] | None:
        """The run's evaluation report.json, if there is a readable one."""
        report = read_json(self.evaluation / REPORT_FILE) if self.evaluation else None
        return report if isinstance(report, dict) else None

    def evaluation_dir(self, instance_id: str) -> Path | None:
        """The instance's evaluation directory, if it lies inside the evaluation directory."""
        if self.evaluation is None or not is_valid_instance_id(instance_id):
            return None
        return contained(self.evaluation, instance_id)

    def trajectory_path(self, instance_id: str) -> Path | None:
        """The instance's `.traj` (or journal), nested or flat, inside the run; None if absent."""
        if not is_valid_instance_id(instance_id):
            return None
        for relative in (f"{instance_id}/{instance_id}.traj", f"{instance_id}.traj"):
            for candidate in (relative, relative + JOURNAL_SUFFIX):
                path = contained(self.root, candidate)
                if path is not None and path.is_file():
                    return path
        return None

    def instance_ids(self) -> list[str]:
        """Every instance the run knows: results, nested and flat trajectories, journals."""
        ids = {key for key in read_results_safely(self) if is_valid_instance_id(key)}
        for child in self.root.iterdir():
            name = child.name
            if child.is_dir() and name != EVALUATION_DIR:
                if any((child / f"{name}{suffix}").is_file() for suffix in TRAJ_SUFFIXES):
                    ids.add(name)
            elif child.is_file():
                for suffix in TRAJ_SUFFIXES:
                    if name.endswith(suffix) and is_valid_instance_id(name[: -len(suffix)]):
                        ids.add(name[: -len(suffix)])
        return sorted(ids)

    def outcomes(self) -> dict[str, str]:
        """Each evaluated instance's outcome: from the run's report, else (an evaluation still
        going) from the per-instance reports written so far."""
        report = self.evaluation_report()
        by_id = report.get("instances") if report is not None else None
        if isinstance(by_id, dict):
            return {
                key: str(value.get("outcome"))
                for key, value in by_id.items()
                if isinstance(value, dict) and value.get("outcome")
            }
        outcomes = {}
        if self.evaluation is not None and self.evaluation.is_dir():
            for child in self.evaluation.iterdir():
                inside = self.evaluation_dir(child.name)
                entry = read_json(inside / REPORT_FILE) if inside is not None else None
                if isinstance(entry, dict) and isinstance(entry.get(child.name), dict):
                    outcomes[child.name] = str(entry[child.name].get("outcome"))
        return outcomes

    def rows(self) -> list[InstanceResult]:
        """The run page's rows (the per-instance record), from the summary files; trajectories
        only where no result is. The evaluation's outcome, where there is one, is the record's."""
        results = read_results_safely(self)
        outcomes = self.outcomes()
        rows = []
        for instance_id in self.instance_ids():
            row = results.get(instance_id) or self._row_from_trajectory(instance_id)
            row.exit_status = row.exit_status or RUNNING
            row.evaluation = outcomes.get(instance_id)
            rows.append(row)
        return rows

    def _row_from_trajectory(self, instance_id: str) -> InstanceResult:
        path = self.trajectory_path(instance_id)
        if path is None:
            return InstanceResult(instance_id, exit_status=RUNNING)
        try:
            record = trajectory_stats(instance_id, load_trajectory(path))
        except TrajectoryError as error:
            if path.name.endswith(JOURNAL_SUFFIX):  # a journal with no step yet
                return InstanceResult(instance_id, exit_status=RUNNING)
            self.problems.append(f"{instance_id}: {error}")  # shown above the rows
            return InstanceResult(instance_id, exit_status=UNREADABLE)
        if path.name.endswith(JOURNAL_SUFFIX) and record.exit_status == UNFINISHED:
            record.exit_status = RUNNING
        return record


TRAJ_SUFFIXES = (TRAJECTORY_SUFFIX, f"{TRAJECTORY_SUFFIX}{JOURNAL_SUFFIX}")


def read_json(path: Path) -> Any:
    """The JSON content of `path`, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def read_results_safely(run: Run) -> dict[str, InstanceResult]:
    try:
        return read_results(run.root)
    except AnalysisError as error:  # an unreadable results.json: shown, the trajectories used
        message = f"results.json: {error}"
        if message not in run.problems:
            run.problems.append(message)
        return {}


def contained(root: Path, relative: str | Path) -> Path | None:
    """`root / relative` resolved, if it exists and lies under `root` resolved; else None."""
    text = str(relative)
    if "\x00" in text:
        return None
    try:
        candidate = (root / text).resolve(strict=True)
        base = root.resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        return None
    return candidate if candidate.is_relative_to(base) else None


def discover(paths: list[Path]) -> list[Run]:
    """The runs under the given directories, in the order given (a compare output gives one run
    per config, in its directory order). A config's batch or an evaluation directory that is a
    symlink out of the given directory is left out."""
    runs: list[Run] = []
    for given in paths:
        path = given.expanduser()
        if not path.is_dir():
            raise InspectError(f"not a directory: {given}")
        root = path.resolve()
        configs = sorted(child for child in root.iterdir() if (child / BATCH_DIR).is_dir())
        if configs:
            for child in configs:
                batch = contained(root, f"{child.name}/{BATCH_DIR}")
                if batch is not None:
                    evaluation = contained(root, f"{child.name}/{EVALUATION_DIR}")
                    runs.append(Run(f"{root.name}/{child.name}", batch, evaluation))
        else:
            runs.append(Run(root.name, root, contained(root, EVALUATION_DIR)))
    names = [run.name for run in runs]
    for index, run in enumerate(runs):
        if names.count(run.name) > 1:
            run.name = f"{run.name} ({index + 1})"
    return runs
