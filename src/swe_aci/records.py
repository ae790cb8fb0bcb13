"""The ground floor every layer writes on: atomic file writes, the instance-id rule, the prediction
record and the names of the files a run leaves. Imports nothing of swe_aci."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

FILE_MODE = 0o644  # mkstemp creates 0600; outputs are meant to be shared like any other file

# The files a run leaves, by the command that writes them.
PREDS_FILE = "preds.json"  # batch, rag: SWE-bench's predictions, a dict by instance id
RESULTS_FILE = "results.json"  # batch: the record of finished instances
EXIT_STATUSES_FILE = "exit_statuses.yaml"  # batch: instance ids by exit status
RUN_RECORD_FILE = "run.yaml"  # batch: the command, the task file and the config of the run
BATCH_LOG_FILE = "batch.log"  # batch: one line per event
REPORT_FILE = "report.json"  # evaluate: the run's report, and each instance's
EVALUATION_DIR = "evaluation"  # batch --evaluate, compare: where the grading goes in a run
COMPARISON_FILE = "comparison.json"  # compare: the table of configs
TRAJECTORY_SUFFIX = ".traj"  # an episode's <id>.traj, <id>.patch, <id>.pred
PATCH_SUFFIX = ".patch"
PREDICTION_SUFFIX = ".pred"

INSTANCE_ID = re.compile(r"[A-Za-z0-9_.-]+")
INSTANCE_ID_RULE = (
    "use letters, digits, '_', '.' and '-' only; it cannot be . or .. (it names a directory)"
)


def is_valid_instance_id(instance_id: str) -> bool:
    """Usable as a file and directory name inside the output directory, and nothing else."""
    return INSTANCE_ID.fullmatch(instance_id) is not None and instance_id not in (".", "..")


class InstanceIdError(ValueError):
    """An instance id that cannot name files inside the output directory (one line)."""


def check_instance_id(instance_id: str) -> str:
    """The id, if it can name files inside the output directory; else InstanceIdError."""
    if not is_valid_instance_id(instance_id):
        raise InstanceIdError(f"invalid instance id {instance_id!r}: {INSTANCE_ID_RULE}")
    return instance_id


def instance_id_from(text: str, fallback: str) -> str:
    """`text` made a valid instance id: other characters become `_`, edge dots go."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip(".")
    return cleaned if is_valid_instance_id(cleaned) else fallback


class Prediction(BaseModel):
    """One instance's predicted patch, as SWE-bench reads it: every writer of a prediction
    (`<id>.pred`, `preds.json` of batch and rag) builds this record, every reader validates it."""

    instance_id: str
    model_name_or_path: str = ""
    model_patch: str = ""

    @property
    def is_empty(self) -> bool:
        return not self.model_patch.strip()

    def to_json(self) -> dict[str, str]:
        return self.model_dump(mode="json")


def predictions_json(predictions: dict[str, Prediction]) -> dict[str, dict[str, str]]:
    """`preds.json`'s content: the records by instance id."""
    return {instance_id: record.to_json() for instance_id, record in predictions.items()}


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that `path` always holds either the old or the new complete content."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False))


def write_text_atomic(path: Path, text: str) -> None:
    """Write a temporary file beside `path`, flush it to disk, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
