"""Reading predictions: SWE-bench's `preds.json` (a dict by id), a JSON list, or JSONL.

A prediction is `{"instance_id", "model_name_or_path", "model_patch"}`; an empty or missing
`model_patch` is an empty prediction, not an error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from swe_aci.records import Prediction

GOLD = "gold"


class PredictionsError(Exception):
    """The predictions file cannot be used (one line for the user)."""


def read_predictions(path: Path) -> dict[str, Prediction]:
    """Predictions by instance id. A later prediction for the same id replaces an earlier one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionsError(f"cannot read predictions {path}: {exc}") from None
    rows = _json_rows(text, path)
    predictions: dict[str, Prediction] = {}
    for where, row in rows:
        if isinstance(row, dict) and row.get("model_patch") is None:
            row = {**row, "model_patch": ""}
        try:
            prediction = Prediction.model_validate(row)
        except ValidationError as exc:
            problem = exc.errors()[0]
            field = ".".join(str(part) for part in problem["loc"]) or "row"
            raise PredictionsError(
                f"{path}: prediction {where}: {field}: {problem['msg']}"
            ) from None
        predictions[prediction.instance_id] = prediction
    return predictions


def gold_predictions(patches: dict[str, str]) -> dict[str, Prediction]:
    """Each instance's gold patch as its prediction (`swe-aci evaluate gold`)."""
    return {
        instance_id: Prediction(instance_id=instance_id, model_name_or_path=GOLD, model_patch=patch)
        for instance_id, patch in patches.items()
    }


def _json_rows(text: str, path: Path) -> list[tuple[str, Any]]:
    """(where, row) pairs: where names the key, index or line of the row."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as whole_error:
        return _jsonl_rows(text, path, whole_error)
    if isinstance(data, dict):
        if "instance_id" in data:  # a JSONL file of one line
            return [("line 1", data)]
        return [(f"{key!r}", _with_id(key, row)) for key, row in data.items()]
    if isinstance(data, list):
        return [(f"#{index}", row) for index, row in enumerate(data)]
    raise PredictionsError(f"{path}: expected an object by instance id, a list or JSON lines")


def _jsonl_rows(text: str, path: Path, whole_error: json.JSONDecodeError) -> list[tuple[str, Any]]:
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise PredictionsError(f"{path}: empty file, no predictions")
    rows = []
    for number, line in lines:
        try:
            rows.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            if number == lines[0][0]:
                raise PredictionsError(
                    f"{path} is neither JSON nor JSON lines: {whole_error.msg} at line "
                    f"{whole_error.lineno} column {whole_error.colno}"
                ) from None
            raise PredictionsError(f"{path}: line {number} is not JSON: {exc.msg}") from None
    return rows


def _with_id(key: str, row: Any) -> Any:
    """A preds.json value, given its key as instance_id when it lacks one."""
    if isinstance(row, dict) and "instance_id" not in row:
        return {**row, "instance_id": key}
    return row
