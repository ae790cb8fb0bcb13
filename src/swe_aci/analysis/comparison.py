"""The comparison of configs on the same instances, as the paper's Table 3 shows its ablations:
per config % resolved, % submitted, mean turns, mean cost and the share of edits the lint
guardrail rejected, each with its difference to the first config (the baseline).

Percentages are of all selected instances (an instance that did not finish counts as neither
submitted nor resolved); differences of percentages are in points.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from rich.table import Table

from swe_aci.analysis.stats import summarize
from swe_aci.trajectory.instance import InstanceResult

# (key, column title, decimals): the metrics compared, in the table's order.
METRICS: tuple[tuple[str, str, int], ...] = (
    ("resolved_pct", "% resolved", 1),
    ("submitted_pct", "% submitted", 1),
    ("mean_turns", "mean turns", 1),
    ("mean_cost", "mean cost ($)", 4),
    ("failed_edit_pct", "% failed edits", 1),
)


@dataclass
class ConfigOutcome:
    """How one config did on the selected instances."""

    name: str
    config: str
    model: str
    instances: int
    finished: int
    resolved_ids: list[str]
    submitted: int
    mean_turns: float | None
    mean_cost: float | None
    total_cost: float
    edits: int
    failed_edits: int
    exit_statuses: dict[str, int]

    @property
    def resolved(self) -> int:
        return len(self.resolved_ids)

    @property
    def resolved_pct(self) -> float | None:
        return percent(self.resolved, self.instances)

    @property
    def submitted_pct(self) -> float | None:
        return percent(self.submitted, self.instances)

    @property
    def failed_edit_pct(self) -> float | None:
        return percent(self.failed_edits, self.edits)

    def metric(self, key: str) -> float | None:
        value: float | None = getattr(self, key)
        return value

    def deltas(self, baseline: ConfigOutcome) -> dict[str, float | None]:
        """Each metric minus the baseline's (None when either is unknown)."""
        result: dict[str, float | None] = {}
        for key, _, decimals in METRICS:
            mine, theirs = self.metric(key), baseline.metric(key)
            result[key] = None if mine is None or theirs is None else round(mine - theirs, decimals)
        return result

    def to_json(self, baseline: ConfigOutcome) -> dict[str, Any]:
        metrics = {key: rounded(self.metric(key), decimals) for key, _, decimals in METRICS}
        return {
            "name": self.name,
            "config": self.config,
            "model": self.model,
            "instances": self.instances,
            "finished": self.finished,
            "resolved": self.resolved,
            "submitted": self.submitted,
            **metrics,
            "total_cost": round(self.total_cost, 6),
            "edits": self.edits,
            "failed_edits": self.failed_edits,
            "exit_statuses": self.exit_statuses,
            "resolved_ids": self.resolved_ids,
            "delta": self.deltas(baseline),
        }


def percent(part: int, whole: int) -> float | None:
    return 100 * part / whole if whole else None


def rounded(value: float | None, decimals: int) -> float | None:
    return None if value is None else round(value, decimals)


def config_outcome(
    name: str,
    config: str,
    model: str,
    records: list[InstanceResult],
    resolved_ids: Iterable[str],
    finished_ids: Iterable[str],
) -> ConfigOutcome:
    """A config's outcome from its instances' statistics and the ids evaluation resolved."""
    stats = summarize(records)
    selected = {record.instance_id for record in records}
    return ConfigOutcome(
        name=name,
        config=config,
        model=model,
        instances=len(records),
        finished=len(selected & set(finished_ids)),
        resolved_ids=sorted(selected & set(resolved_ids)),
        submitted=stats.submitted,
        mean_turns=stats.mean_turns,
        mean_cost=stats.mean_cost,
        total_cost=stats.total_cost,
        edits=stats.edits,
        failed_edits=stats.failed_edits,
        exit_statuses=stats.exit_statuses,
    )


def comparison_record(outcomes: list[ConfigOutcome], **about: Any) -> dict[str, Any]:
    """comparison.json: what was compared (`about`), then one entry per config, the first being
    the baseline of every delta."""
    baseline = outcomes[0]
    return {**about, "baseline": baseline.name, "configs": [o.to_json(baseline) for o in outcomes]}


def cell(value: float | None, delta: float | None, decimals: int, baseline: bool) -> str:
    if value is None:
        return "-"
    text = f"{value:.{decimals}f}"
    if baseline:
        return text
    if delta is None:
        return f"{text} [dim](-)[/]"
    style = "green" if delta > 0 else "red" if delta < 0 else "dim"
    return f"{text} [{style}]({delta:+.{decimals}f})[/]"


def comparison_table(outcomes: list[ConfigOutcome]) -> Table:
    """The Table-3-style comparison: each metric with its delta against the first config."""
    baseline = outcomes[0]
    table = Table(title="comparison (deltas against the first config)")
    table.add_column("config")
    table.add_column("model")
    table.add_column("instances", justify="right")
    for _, title, _ in METRICS:
        table.add_column(title, justify="right")
    for index, outcome in enumerate(outcomes):
        deltas = outcome.deltas(baseline)
        finished = "" if outcome.finished == outcome.instances else f" ({outcome.finished} done)"
        table.add_row(
            escape(outcome.name),
            escape(outcome.model),
            f"{outcome.instances}{finished}",
            *(
                cell(outcome.metric(key), deltas[key], decimals, index == 0)
                for key, _, decimals in METRICS
            ),
        )
    return table
