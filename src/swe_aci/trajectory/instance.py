"""One instance of a run as every reader sees it: the per-instance record `batch` writes to
results.json and `stats`, `compare` and the inspector read (from results.json, or made from the
trajectory). On the ground floor, so that none of its readers imports the batch runner."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    report: Any = field(default=None, repr=False, compare=False)  # evaluate's InstanceReport
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
