"""The batch's output directory: results recorded atomically as they arrive, so a batch killed at
any instant resumes where it stopped.

`results.json` is the record of finished instances (written after `preds.json`, so every recorded
instance has its prediction); `exit_statuses.yaml` is derived from it; `run.yaml` says how the run
was made.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from swe_aci.records import (
    EXIT_STATUSES_FILE,
    PREDS_FILE,
    RESULTS_FILE,
    RUN_RECORD_FILE,
    OutputLock,
    Prediction,
    predictions_json,
    write_json_atomic,
    write_text_atomic,
)
from swe_aci.trajectory.instance import RESULT_KEYS, InstanceResult

ENVIRONMENT_ERROR = "error_environment"
EXCEPTION_ERROR = "error_exception"
WORKER_DIED = "error_worker_died"
# Ends that say nothing about the agent (a build, a sandbox or a worker failed): run again on resume.
INFRASTRUCTURE_ERRORS = frozenset({ENVIRONMENT_ERROR, EXCEPTION_ERROR, WORKER_DIED})


class OutputsError(Exception):
    """The output directory cannot be used; one line."""


class BatchOutputs:
    """Reads the state a previous run left and records each new result atomically. Made by the
    batch holding the directory's lock: what a killed run's atomic writes left half done (their
    temporaries) is stale and removed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.results: dict[str, InstanceResult] = {}
        self.predictions: dict[str, Prediction] = {}
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OutputsError(f"cannot create output directory {directory}: {error}") from None
        self._remove_temporaries()
        self._load()

    def _remove_temporaries(self) -> None:
        for name in (RESULTS_FILE, PREDS_FILE, EXIT_STATUSES_FILE, RUN_RECORD_FILE):
            for temporary in self.directory.glob(f".{name}.*.tmp"):
                with contextlib.suppress(OSError):
                    temporary.unlink(missing_ok=True)

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
        the instance's lock, so files another run is writing are never deleted (OutputLockError)."""
        with OutputLock.instance(directory / instance_id):
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
