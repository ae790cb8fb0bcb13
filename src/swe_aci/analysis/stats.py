"""Trajectory statistics: what each instance of a run did (steps, edits and the lint guardrail's
rejections of them, cost, tokens, whether it ended with a patch), as the one per-instance record
(`trajectory.instance.InstanceResult`), and the aggregates of a run.

A run directory is what `swe-aci batch` or `swe-aci run` writes: `<dir>/<id>/<id>.traj` per
instance (ours or paper-era; a journal left by a killed episode is read too) and, for a batch,
`<dir>/results.json`, whose exit status wins over the trajectory's (it also knows instances that
never got an episode, such as `error_environment`).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_aci.aci.edits import editing_commands, is_edit, is_rejected_edit
from swe_aci.records import RESULTS_FILE
from swe_aci.trajectory.exits import EXIT_REASONS
from swe_aci.trajectory.instance import InstanceResult
from swe_aci.trajectory.store import TrajectoryError, load_trajectory

UNFINISHED = "unfinished"
JOURNAL_SUFFIX = ".jsonl"  # `<id>.traj.jsonl`: the journal of an episode still running or killed


class AnalysisError(Exception):
    """A run directory cannot be read (one line for the user)."""


@dataclass
class RunStats:
    """Aggregates of a run. Means are over the instances that have a trajectory (an instance
    whose environment could not be built ran no episode)."""

    instances: int
    episodes: int
    exit_statuses: dict[str, int]
    submitted: int
    mean_turns: float | None
    median_turns: float | None
    edits: int
    failed_edits: int
    instances_with_failed_edit: int
    total_cost: float
    mean_cost: float | None
    tokens_sent: int
    tokens_received: int
    problems: list[str] = field(default_factory=list)


def edit_commands(trajectory: dict[str, Any]) -> frozenset[str]:
    """The editing commands the episode's interface had (as typed): as its recorded config says,
    or `edit` when the trajectory records none (paper-era files). Without them (the shell-only
    baseline) an action named `edit` is no edit of the ACI and no guardrail judged it."""
    config = trajectory.get("config")
    aci = config.get("aci") if isinstance(config, dict) else None
    commands = aci.get("commands") if isinstance(aci, dict) else None
    if not isinstance(commands, list):
        return frozenset({"edit"})
    return editing_commands(str(key) for key in commands)


def trajectory_stats(instance_id: str, trajectory: dict[str, Any]) -> InstanceResult:
    """The record of an instance made from its loaded trajectory (as `load_trajectory` returns
    it): `steps` counts the actions executed (not the exit record a limit or error adds); `edits`
    the ACI editing commands run (`edit`; the str_replace set's `str_replace`, `insert`,
    `create`), `failed_edits` those the lint guardrail rejected; the patch is the submission,
    whether the agent ran `submit` or it was autosubmitted."""
    info = trajectory.get("info", {})
    model_stats = info.get("model_stats")
    model_stats = model_stats if isinstance(model_stats, dict) else {}
    submission = info.get("submission")
    model_name = info.get("model_name")
    record = InstanceResult(
        instance_id,
        exit_status=str(info.get("exit_status") or UNFINISHED),
        model_patch=submission if isinstance(submission, str) else "",
        model_name=model_name if isinstance(model_name, str) else "",
        has_trajectory=True,
        cost=_number(model_stats.get("instance_cost"), float),
        tokens_sent=_number(model_stats.get("tokens_sent"), int),
        tokens_received=_number(model_stats.get("tokens_received"), int),
        api_calls=_number(model_stats.get("api_calls"), int),
    )
    editing = edit_commands(trajectory)
    for step in trajectory["trajectory"]:
        action = step["action"] if isinstance(step["action"], str) else ""
        if action.strip() in EXIT_REASONS:
            continue
        record.steps += 1
        words = action.split(maxsplit=1)
        record.commands.append(words[0] if words else "")
        if is_edit(action, editing):
            record.edits += 1
            rejected = rejected_edit(step)
            record.failed_edits += int(rejected)
            record.edit_results.append(not rejected)
    return record


def rejected_edit(step: dict[str, Any]) -> bool:
    """Whether the lint guardrail refused the edit of a stored edit step: as the ACI recorded it
    (`rejected_edit`), or, for a trajectory stored before it was recorded (ours of earlier
    versions, paper-era files), from how the observation starts (the one place the text is read)."""
    recorded = step.get("rejected_edit")
    if isinstance(recorded, bool):
        return recorded
    observation = step["observation"] if isinstance(step["observation"], str) else ""
    return is_rejected_edit(observation)


def _number(value: Any, kind: type[int] | type[float]) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return kind(0)
    return kind(value)


def read_instance(directory: Path, instance_id: str) -> InstanceResult:
    """The record made from `<directory>/<instance_id>/<instance_id>.traj` (or its journal)."""
    path = directory / instance_id / f"{instance_id}.traj"
    journal = path.with_name(path.name + JOURNAL_SUFFIX)
    if not path.is_file() and not journal.is_file():
        return InstanceResult(instance_id, exit_status=UNFINISHED)
    try:
        return trajectory_stats(instance_id, load_trajectory(path))
    except TrajectoryError as error:
        return InstanceResult(instance_id, exit_status=UNFINISHED, problem=str(error))


def read_results(directory: Path) -> dict[str, InstanceResult]:
    """A batch's `results.json`, each entry read leniently (empty when there is none)."""
    path = directory / RESULTS_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise AnalysisError(f"cannot read {path}: {error}") from None
    except RecursionError:
        raise AnalysisError(f"cannot read {path}: nested too deeply") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise AnalysisError(f"{path} is not a batch's results (an object of objects by id)")
    return {key: InstanceResult.from_json(key, value) for key, value in data.items()}


def run_instance_ids(directory: Path) -> list[str]:
    """The instances a run directory holds: those of results.json and those with a trajectory."""
    if not directory.is_dir():
        raise AnalysisError(f"not a directory: {directory}")
    ids = set(read_results(directory))
    for child in directory.iterdir():
        name = child.name
        if not child.is_dir():
            continue
        if (child / f"{name}.traj").is_file() or (child / f"{name}.traj{JOURNAL_SUFFIX}").is_file():
            ids.add(name)
    return sorted(ids)


def read_run(directory: Path, instance_ids: Iterable[str] | None = None) -> list[InstanceResult]:
    """Every instance of a run directory, each read from its trajectory and its `results.json`
    entry; of `instance_ids` only, when given (an id the directory knows nothing of is
    `unfinished`)."""
    results = read_results(directory)
    ids = list(instance_ids) if instance_ids is not None else run_instance_ids(directory)
    records = []
    for instance_id in ids:
        record = read_instance(directory, instance_id)
        result = results.get(instance_id)
        if result is not None:
            with_result(record, result)
        records.append(record)
    return records


def with_result(record: InstanceResult, result: InstanceResult) -> InstanceResult:
    """The record made from a trajectory updated from the instance's `results.json` entry, whose
    exit status wins (and which alone knows the wall time, the tries, the grading's outcome)."""
    if result.exit_status:
        record.exit_status = result.exit_status
        if not record.submitted:
            record.model_patch = result.model_patch
        record.model_name = record.model_name or result.model_name
        record.elapsed, record.tries = result.elapsed, result.tries
        record.error, record.evaluation = result.error, result.evaluation
        if not record.has_trajectory:
            record.cost = result.cost
            record.api_calls = result.api_calls
    return record


def summarize(records: list[InstanceResult]) -> RunStats:
    episodes = [record for record in records if record.has_trajectory]
    turns = [record.steps for record in episodes]
    total_cost = sum(record.cost for record in records)
    return RunStats(
        instances=len(records),
        episodes=len(episodes),
        exit_statuses=dict(Counter(record.exit_status for record in records).most_common()),
        submitted=sum(record.submitted for record in records),
        mean_turns=statistics.fmean(turns) if turns else None,
        median_turns=statistics.median(turns) if turns else None,
        edits=sum(record.edits for record in records),
        failed_edits=sum(record.failed_edits for record in records),
        instances_with_failed_edit=sum(record.failed_edits > 0 for record in records),
        total_cost=total_cost,
        mean_cost=sum(record.cost for record in episodes) / len(episodes) if episodes else None,
        tokens_sent=sum(record.tokens_sent for record in records),
        tokens_received=sum(record.tokens_received for record in records),
        problems=[f"{r.instance_id}: {r.problem}" for r in records if r.problem],
    )
