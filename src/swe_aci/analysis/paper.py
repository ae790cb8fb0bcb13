"""The paper's analyses of a run (SWE-agent section 5 and appendix B), split by outcome when the
run's evaluation report is given.

Definitions (each computed over the instances with a trajectory):
- turns: the actions executed (the exit record a limit adds is not one); mean, median and 75th
  percentile, and the distribution of turns over the instances whose episode ended with a patch
  ("turns to submission").
- cost and tokens: means per instance ("$ Avg. Cost" is the mean over resolved instances).
- failed edits: an `edit` the lint guardrail rejected. The share of trajectories with at least one,
  the median per trajectory, and the edit-recovery curve: a trajectory's edits form streaks, each
  a run of k >= 0 failed edits ended by a successful edit (recovered) or by the end of the episode
  (not recovered); P(k) = recovered streaks of at least k failures / streaks of at least k failures.
- the most common first three actions (their command words), and action categories by turn:
  `open` (open, goto, scroll_up, scroll_down), `search` (find_file, search_file, search_dir, grep,
  find), `edit` (edit, create), `python` (python, python3, pytest), `submit`, `other`.
- exit statuses by outcome (resolved, unresolved..., or `not evaluated`).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_aci.analysis.stats import AnalysisError
from swe_aci.records import EVALUATION_DIR, REPORT_FILE
from swe_aci.trajectory.instance import InstanceResult

CATEGORIES: dict[str, frozenset[str]] = {
    "open": frozenset({"open", "goto", "scroll_up", "scroll_down"}),
    "search": frozenset({"find_file", "search_file", "search_dir", "grep", "find"}),
    "edit": frozenset({"edit", "create"}),
    "python": frozenset({"python", "python3", "pytest"}),
    "submit": frozenset({"submit"}),
}
CATEGORY_ORDER = (*CATEGORIES, "other")
RECOVERY_K = range(5)
RESOLVED = "resolved"
UNRESOLVED = "unresolved"
NOT_EVALUATED = "not evaluated"
TOP_FIRST_ACTIONS = 10


def category(command: str) -> str:
    for name, commands in CATEGORIES.items():
        if command in commands:
            return name
    return "other"


def percentile_75(values: list[float]) -> float:
    """The 75th percentile with linear interpolation between the closest ranks."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    return statistics.quantiles(ordered, n=4, method="inclusive")[2]


def edit_streaks(results: list[bool]) -> list[tuple[int, bool]]:
    """(failures, recovered) per streak of a trajectory's edit results, in order."""
    streaks, failures = [], 0
    for passed in results:
        if passed:
            streaks.append((failures, True))
            failures = 0
        else:
            failures += 1
    if failures:
        streaks.append((failures, False))
    return streaks


def edit_recovery(records: list[InstanceResult]) -> dict[int, float | None]:
    """P(an edit eventually succeeds | k consecutive failed edits), k = 0..4 (None: no streak)."""
    streaks = [streak for record in records for streak in edit_streaks(record.edit_results)]
    curve: dict[int, float | None] = {}
    for k in RECOVERY_K:
        reached = [recovered for failures, recovered in streaks if failures >= k]
        curve[k] = sum(reached) / len(reached) if reached else None
    return curve


@dataclass
class GroupStats:
    """The analyses of one group of instances (all, resolved, unresolved)."""

    name: str
    instances: int
    turns: list[int]
    costs: list[float]
    turns_mean: float | None
    turns_median: float | None
    turns_p75: float | None
    turns_to_submission: dict[int, int]
    mean_cost: float | None
    mean_tokens_sent: float | None
    mean_tokens_received: float | None
    with_failed_edit: float | None  # share of trajectories with at least one failed edit
    median_failed_edits: float | None
    edit_recovery: dict[int, float | None]

    def to_json(self) -> dict[str, Any]:
        data = {key: value for key, value in vars(self).items() if key not in ("turns", "costs")}
        data["edit_recovery"] = {str(k): v for k, v in self.edit_recovery.items()}
        data["turns_to_submission"] = {str(k): v for k, v in self.turns_to_submission.items()}
        return data


def group_stats(name: str, records: list[InstanceResult]) -> GroupStats:
    episodes = [record for record in records if record.has_trajectory]
    turns = [record.steps for record in episodes]
    costs = [record.cost for record in episodes]

    def mean(values: list[float]) -> float | None:
        return statistics.fmean(values) if values else None

    return GroupStats(
        name=name,
        instances=len(episodes),
        turns=turns,
        costs=costs,
        turns_mean=mean(turns),
        turns_median=statistics.median(turns) if turns else None,
        turns_p75=percentile_75(turns) if turns else None,
        turns_to_submission=dict(sorted(Counter(r.steps for r in episodes if r.submitted).items())),
        mean_cost=mean(costs),
        mean_tokens_sent=mean([r.tokens_sent for r in episodes]),
        mean_tokens_received=mean([r.tokens_received for r in episodes]),
        with_failed_edit=mean([float(r.failed_edits > 0) for r in episodes]),
        median_failed_edits=statistics.median([r.failed_edits for r in episodes])
        if episodes
        else None,
        edit_recovery=edit_recovery(episodes),
    )


@dataclass
class PaperStats:
    groups: list[GroupStats]
    first_actions: list[tuple[str, int]]
    categories_by_turn: list[dict[str, int]]  # index t: turn t + 1
    exit_statuses_by_outcome: dict[str, dict[str, int]]
    evaluated: bool
    resolved: int = 0
    resolved_rate: float | None = None
    outcomes: dict[str, str] = field(default_factory=dict)

    def group(self, name: str) -> GroupStats | None:
        return next((group for group in self.groups if group.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "groups": {group.name: group.to_json() for group in self.groups},
            "first_actions": [{"actions": a, "instances": n} for a, n in self.first_actions],
            "categories_by_turn": self.categories_by_turn,
            "exit_statuses_by_outcome": self.exit_statuses_by_outcome,
            "evaluated": self.evaluated,
            "resolved": self.resolved,
            "resolved_rate": self.resolved_rate,
        }


def outcomes_from_report(report: dict[str, Any]) -> dict[str, str]:
    """Each instance's outcome from a run's report.json (ours or SWE-bench's schema 2)."""
    outcomes: dict[str, str] = {}
    for key, label in (("unresolved_ids", UNRESOLVED), ("error_ids", "error")):
        for instance_id in report.get(key) or []:
            outcomes[str(instance_id)] = label
    per_instance = report.get("instances")
    if isinstance(per_instance, dict):
        for instance_id, entry in per_instance.items():
            if isinstance(entry, dict) and entry.get("outcome"):
                outcomes[str(instance_id)] = str(entry["outcome"])
    for instance_id in report.get("resolved_ids") or []:
        outcomes[str(instance_id)] = RESOLVED
    return outcomes


def paper_stats(records: list[InstanceResult], report: dict[str, Any] | None = None) -> PaperStats:
    """The paper's analyses of a run's instances; by outcome when the run's report is given."""
    outcomes = outcomes_from_report(report) if report is not None else {}

    def outcome(record: InstanceResult) -> str:
        return outcomes.get(record.instance_id, NOT_EVALUATED)

    groups = [group_stats("all", records)]
    if report is not None:
        groups.append(group_stats(RESOLVED, [r for r in records if outcome(r) == RESOLVED]))
        unresolved = [r for r in records if outcome(r) not in (RESOLVED, NOT_EVALUATED)]
        groups.append(group_stats(UNRESOLVED, unresolved))
    episodes = [record for record in records if record.has_trajectory]
    first = Counter(", ".join(record.commands[:3]) for record in episodes if record.commands)
    by_turn: list[Counter[str]] = []
    for record in episodes:
        for turn, command in enumerate(record.commands):
            if turn == len(by_turn):
                by_turn.append(Counter())
            by_turn[turn][category(command)] += 1
    statuses: dict[str, Counter[str]] = {}
    for record in records:
        statuses.setdefault(outcome(record), Counter())[record.exit_status] += 1
    resolved = sum(outcome(record) == RESOLVED for record in records)
    return PaperStats(
        groups=groups,
        first_actions=first.most_common(TOP_FIRST_ACTIONS),
        categories_by_turn=[{name: turn[name] for name in CATEGORY_ORDER} for turn in by_turn],
        exit_statuses_by_outcome={
            key: dict(value.most_common()) for key, value in statuses.items()
        },
        evaluated=report is not None,
        resolved=resolved,
        resolved_rate=resolved / len(records) if report is not None and records else None,
        outcomes=outcomes,
    )


def _number(value: float | None, decimals: int = 1) -> str:
    return "-" if value is None else f"{value:.{decimals}f}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def summary_sections(stats: PaperStats) -> list[tuple[str, list[tuple[str, str]]]]:
    """The analyses as titled (name, value) rows, as `swe-aci stats` prints them and the
    inspector's summary page shows them."""
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    if stats.evaluated:
        rate = _percent(stats.resolved_rate)
        sections.append(("evaluation", [("resolved", f"{stats.resolved} ({rate})")]))
    for group in stats.groups:
        recovery = ", ".join(
            f"k={k}: {_percent(value)}" for k, value in group.edit_recovery.items()
        )
        submission = ", ".join(f"{t}: {n}" for t, n in group.turns_to_submission.items())
        rows = [
            ("instances with a trajectory", str(group.instances)),
            (
                "turns mean / median / p75",
                " / ".join(
                    _number(v) for v in (group.turns_mean, group.turns_median, group.turns_p75)
                ),
            ),
            ("turns to submission (turns: instances)", submission or "-"),
            ("mean cost", "-" if group.mean_cost is None else f"${group.mean_cost:.4f}"),
            (
                "mean tokens sent / received",
                f"{_number(group.mean_tokens_sent, 0)} / {_number(group.mean_tokens_received, 0)}",
            ),
            ("trajectories with a failed edit", _percent(group.with_failed_edit)),
            ("median failed edits per trajectory", _number(group.median_failed_edits)),
            ("P(edit succeeds | k failed edits)", recovery),
        ]
        sections.append((f"{group.name} instances", rows))
    sections.append(
        ("most common first three actions", [(a, str(n)) for a, n in stats.first_actions])
    )
    sections.append(
        (
            "action categories by turn",
            [
                (f"turn {t}", ", ".join(f"{k} {v}" for k, v in turn.items() if v))
                for t, turn in enumerate(stats.categories_by_turn, start=1)
            ],
        )
    )
    sections.append(
        (
            "exit statuses by outcome",
            [
                (outcome, ", ".join(f"{status}: {n}" for status, n in counts.items()))
                for outcome, counts in stats.exit_statuses_by_outcome.items()
            ],
        )
    )
    return sections


def read_report(directory: Path, given: Path | None) -> dict[str, Any] | None:
    """The run's evaluation report: `given`, else `<directory>/evaluation/report.json` when it
    exists, else None. Raises AnalysisError for a report that cannot be read."""
    path = given if given is not None else directory / EVALUATION_DIR / REPORT_FILE
    if given is None and not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise AnalysisError(f"cannot read the report {path}: {error}") from None
    if not isinstance(data, dict) or "resolved_ids" not in data:
        raise AnalysisError(f"{path} is not a run's report.json (no resolved_ids)")
    return data
