"""The batch's output directory: results recorded atomically as they arrive, so a batch killed at
any instant resumes where it stopped.

`results.json` is the record of finished instances (written after `preds.json`, so every recorded
instance has its prediction); `exit_statuses.yaml` is derived from it; `run.yaml` says how the run
was made.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from swe_aci.records import (
    EXIT_STATUSES_FILE,
    PREDS_FILE,
    RESULTS_FILE,
    RUN_RECORD_FILE,
    Prediction,
    predictions_json,
    write_json_atomic,
    write_text_atomic,
)

if TYPE_CHECKING:
    from swe_aci.evaluate.report import InstanceReport

ENVIRONMENT_ERROR = "error_environment"
EXCEPTION_ERROR = "error_exception"
WORKER_DIED = "error_worker_died"
# Ends that say nothing about the agent (a build, a sandbox or a worker failed): run again on resume.
INFRASTRUCTURE_ERRORS = frozenset({ENVIRONMENT_ERROR, EXCEPTION_ERROR, WORKER_DIED})


NOT_EVALUATED = "not evaluated"
# The keys of an instance's record in results.json, in the file's order.
RESULT_KEYS = (
    *("instance_id", "exit_status", "model_patch", "model_name", "cost", "api_calls", "steps"),
    *("elapsed", "tokens_sent", "tokens_received", "failed_edits", "error", "evaluation", "tries"),
)


@dataclass
class InstanceResult:
    """One instance of a run: the one per-instance record, written by `batch` (results.json) and
    read by `stats`, `compare` and the inspector, which make it from the trajectory when a run has
    no results.json entry for the instance (`analysis.stats.trajectory_stats`).

    `exit_status` None: it did not finish (interrupted). `steps`: the actions executed (the
    record of an exit is none); `failed_edits`: the edits the lint guardrail rejected (the ACI's
    mark on each step). `tries`: how many recorded attempts this is (instances that ended in an
    infrastructure error are retried). `evaluation`: with --evaluate, resolved, unresolved...

    Not in results.json: `report`, with --evaluate the whole report of the worker that graded the
    instance, carried back to the driver with the result (pickled by Ray like the rest) so that
    the final grading takes it as it is (the report is saved under `evaluation/`, so a result
    read back from an earlier run has none); and what only the trajectory tells (`edits`, each
    executed action's first word in `commands`, each edit's verdict in `edit_results`), read by
    `stats` when it reads the trajectory (`has_trajectory`; `problem`: why it was unusable)."""

    instance_id: str
    exit_status: str | None
    model_patch: str = ""
    model_name: str = ""
    cost: float = 0.0
    api_calls: int = 0
    steps: int = 0
    elapsed: float = 0.0
    tokens_sent: int = 0
    tokens_received: int = 0
    failed_edits: int = 0
    error: str | None = None
    evaluation: str | None = None
    tries: int = 1
    report: InstanceReport | None = field(default=None, repr=False, compare=False)
    has_trajectory: bool = field(default=False, compare=False)
    edits: int = field(default=0, compare=False)
    commands: list[str] = field(default_factory=list, compare=False)
    edit_results: list[bool] = field(default_factory=list, compare=False)
    problem: str | None = field(default=None, compare=False)

    @property
    def submitted(self) -> bool:
        """The instance ended with a non-empty patch (submitted, or autosubmitted at an exit)."""
        return bool(self.model_patch.strip())

    @property
    def outcome(self) -> str:
        return self.evaluation or NOT_EVALUATED

    def to_json(self) -> dict[str, Any]:
        """The result's record in results.json."""
        return {key: getattr(self, key) for key in RESULT_KEYS}

    @classmethod
    def from_json(cls, instance_id: str, data: dict[str, Any]) -> InstanceResult:
        """A results.json entry read leniently (by stats and the inspector, over runs of any
        version): a value of the wrong type is left at its default."""
        result = cls(instance_id, None)
        for key in RESULT_KEYS[1:]:
            value, default = data.get(key), getattr(result, key)
            if value is None or isinstance(value, bool):
                continue
            if isinstance(default, float) and isinstance(value, int | float):
                value = float(value)
            elif not isinstance(value, str if default is None else type(default)):
                continue
            setattr(result, key, value)
        return result


class OutputsError(Exception):
    """The output directory cannot be used; one line."""


class BatchOutputs:
    """Reads the state a previous run left and records each new result atomically."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.results: dict[str, InstanceResult] = {}
        self.predictions: dict[str, Prediction] = {}
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OutputsError(f"cannot create output directory {directory}: {error}") from None
        self._load()

    @property
    def results_path(self) -> Path:
        return self.directory / RESULTS_FILE

    @property
    def preds_path(self) -> Path:
        return self.directory / PREDS_FILE

    def _load(self) -> None:
        for path, target in ((self.results_path, "results"), (self.preds_path, "predictions")):
            if not path.exists():
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
                raise OutputsError(f"{path} is unreadable ({error}); move it away") from None
            except RecursionError:
                raise OutputsError(f"{path} is nested too deeply to read; move it away") from None
            if not isinstance(data, dict):
                raise OutputsError(f"{path} is not a JSON object; move it away")
            try:
                if target == "results":
                    self.results = {
                        key: InstanceResult(**{k: v for k, v in value.items() if k in RESULT_KEYS})
                        for key, value in data.items()
                    }
                else:
                    self.predictions = {
                        key: Prediction.model_validate(value) for key, value in data.items()
                    }
            except (TypeError, AttributeError, ValidationError):
                raise OutputsError(f"{path} holds a malformed record; move it away") from None
        # A result without its prediction cannot be trusted: the instance is redone.
        self.results = {key: r for key, r in self.results.items() if key in self.predictions}

    def is_done(self, instance_id: str) -> bool:
        """Finished for good: recorded, and not ended by an infrastructure error."""
        result = self.results.get(instance_id)
        return result is not None and result.exit_status not in INFRASTRUCTURE_ERRORS

    def start_instance(self, instance_id: str) -> None:
        self.start_instance_in(self.directory, instance_id)

    @staticmethod
    def start_instance_in(directory: Path, instance_id: str) -> None:
        """An instance (re)starting from scratch: whatever a killed attempt left is removed, under
        the instance's lock, so files another run is writing are never deleted (InstanceBusy)."""
        from swe_aci.episode import instance_lock

        with instance_lock(directory / instance_id):
            for entry in (directory / instance_id).iterdir():
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)

    def record(self, result: InstanceResult) -> None:
        if (previous := self.results.get(result.instance_id)) is not None:
            result.tries = previous.tries + 1
        self.predictions[result.instance_id] = Prediction(
            instance_id=result.instance_id,
            model_name_or_path=result.model_name,
            model_patch=result.model_patch,
        )
        write_json_atomic(self.preds_path, predictions_json(self.predictions))
        self.results[result.instance_id] = result
        write_json_atomic(self.results_path, {k: v.to_json() for k, v in self.results.items()})
        write_text_atomic(self.directory / EXIT_STATUSES_FILE, self.exit_statuses_yaml())

    def exit_statuses_yaml(self) -> str:
        grouped: dict[str, list[str]] = {}
        for result in self.results.values():
            grouped.setdefault(result.exit_status or "unfinished", []).append(result.instance_id)
        data = {status: sorted(ids) for status, ids in sorted(grouped.items())}
        return yaml.safe_dump({"instances_by_exit_status": data}, sort_keys=False)

    def write_run_record(self, record: dict[str, Any]) -> None:
        write_text_atomic(
            self.directory / RUN_RECORD_FILE,
            yaml.safe_dump(record, sort_keys=False, allow_unicode=True),
        )

    def previous_config_hash(self) -> str | None:
        path = self.directory / RUN_RECORD_FILE
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            return None
        return data.get("config_hash") if isinstance(data, dict) else None
