"""`swe-aci merge-preds`: the predictions of several runs or shards as one preds.json.

An input is a predictions file (preds.json, a JSON list or JSONL, as `evaluate` reads them) or a
run directory: its `preds.json` when it has one, else every `<id>.pred` below it. Identical
duplicates merge; the same instance id with different patches is a conflict, refused unless a rule
says which input wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from swe_aci.evaluate.predictions import PredictionsError, read_predictions
from swe_aci.records import PREDICTION_SUFFIX, PREDS_FILE, Prediction

Prefer = Literal["first", "last"]
MAX_IDS_NAMED = 10


class MergeError(Exception):
    """The inputs cannot be merged as asked (one line for the user)."""


@dataclass
class Merged:
    predictions: dict[str, Prediction] = field(default_factory=dict)
    duplicates: int = 0  # identical predictions met again
    resolved: list[str] = field(default_factory=list)  # conflicting ids a rule decided


def read_input(path: Path) -> dict[str, Prediction]:
    """One input's predictions by instance id."""
    if path.is_dir():
        if (path / PREDS_FILE).is_file():
            return read_predictions(path / PREDS_FILE)
        found: dict[str, Prediction] = {}
        for pred in sorted(path.rglob(f"*{PREDICTION_SUFFIX}")):
            if pred.is_file() and not pred.is_symlink():
                found.update(read_predictions(pred))
        if not found:
            raise MergeError(f"{path} holds no {PREDS_FILE} and no *{PREDICTION_SUFFIX} files")
        return found
    if not path.exists():
        raise MergeError(f"no such file or directory: {path}")
    return read_predictions(path)


def merge_predictions(
    inputs: list[Path], prefer: Prefer | None = None, winner: Path | None = None
) -> Merged:
    """The inputs merged in order. A conflict (same id, different patch) is decided by `prefer`
    (the first or the last input holding the id wins) or by `winner` (that input wins the
    conflicts it is part of); any other conflict raises MergeError naming the ids."""
    if winner is not None and all(path.resolve() != winner.resolve() for path in inputs):
        raise MergeError(f"--winner {winner} is not one of the inputs")
    merged = Merged()
    source: dict[str, Path] = {}
    conflicts: list[str] = []
    for path in inputs:
        try:
            predictions = read_input(path)
        except PredictionsError as error:
            raise MergeError(str(error)) from None
        for instance_id, prediction in predictions.items():
            earlier = merged.predictions.get(instance_id)
            if earlier is None:
                merged.predictions[instance_id], source[instance_id] = prediction, path
                continue
            if earlier.model_patch == prediction.model_patch:
                merged.duplicates += 1
                continue
            take = decide(path, source[instance_id], prefer, winner)
            if take is None:
                conflicts.append(f"{instance_id} ({source[instance_id]} vs {path})")
                continue
            merged.resolved.append(instance_id)
            if take:
                merged.predictions[instance_id], source[instance_id] = prediction, path
    if conflicts:
        named = ", ".join(conflicts[:MAX_IDS_NAMED])
        more = (
            f" and {len(conflicts) - MAX_IDS_NAMED} more" if len(conflicts) > MAX_IDS_NAMED else ""
        )
        raise MergeError(
            f"{len(conflicts)} instance ids have different patches: {named}{more}; "
            "choose with --prefer first|last or --winner PATH"
        )
    return merged


def decide(later: Path, earlier: Path, prefer: Prefer | None, winner: Path | None) -> bool | None:
    """True: the later input's prediction wins; False: the earlier one stays; None: undecided."""
    if winner is not None:
        target = winner.resolve()
        if later.resolve() == target:
            return True
        if earlier.resolve() == target:
            return False
        return None
    if prefer is None:
        return None
    return prefer == "last"
