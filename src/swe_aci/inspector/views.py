"""What each page shows, built from a run's files as plain data for the templates.

Every string that came from a trajectory, a prediction, a task file or a test log passes through
`text.visible` here; the templates add HTML escaping on top (autoescape), so nothing read from
disk is ever markup.
"""

from __future__ import annotations

import difflib
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock
from typing import Any

from swe_aci.inspector.runs import Run, read_json
from swe_aci.inspector.text import DiffLine, diff_lines, preview, visible
from swe_aci.models.base import message_text
from swe_aci.records import REPORT_FILE
from swe_aci.trajectory.store import (
    TrajectoryError,
    normalized_trajectory,
    parse_state,
    read_stored,
    recorded_problem_statement,
)

TEST_LOG_FILE = "test_output.txt"
TEST_LOG_TAIL = 200_000  # the end of a test log is where the failures are
CACHED_TRAJECTORIES = 4


@dataclass
class QueryEntry:
    """One message sent: a history message (by index) or a literal one (placeholder, requery)."""

    index: int | None
    role: str
    label: str
    text: str = ""


@dataclass
class StepView:
    number: int
    thought: str
    action: str
    observation_preview: str
    observation_full: str | None  # None: short enough to show whole, or loaded on demand
    folded: bool
    state: dict[str, str]
    timing: dict[str, str]
    query: list[QueryEntry]
    requeries: int


@dataclass
class TestStatus:
    name: str
    kind: str  # FAIL_TO_PASS or PASS_TO_PASS
    passed: bool


@dataclass
class Evaluation:
    outcome: str
    message: str
    tests: list[TestStatus]
    log: str


@dataclass
class InstanceView:
    instance_id: str
    problem_statement: str
    exit_status: str
    model_name: str
    info: dict[str, str]
    steps: list[StepView]
    patch: list[DiffLine]
    evaluation: Evaluation | None
    gold_patch: list[DiffLine] = field(default_factory=list)
    test_patch: list[DiffLine] = field(default_factory=list)


class TrajectoryCache:
    """The last few trajectories loaded, keyed by path and checked against size and mtime, so a
    step's observation loads without parsing the file again and a growing journal is re-read."""

    def __init__(self, size: int = CACHED_TRAJECTORIES) -> None:
        self.size = size
        self.entries: OrderedDict[Path, tuple[tuple[int, int], Any, dict[str, Any]]] = OrderedDict()
        self.lock = Lock()

    def load(self, path: Path) -> tuple[Any, dict[str, Any]]:
        """(stored, normalized) trajectory; raises TrajectoryError."""
        try:
            status = path.stat()
        except OSError as error:
            raise TrajectoryError(f"cannot read trajectory {path}: {error}") from None
        signature = (status.st_size, status.st_mtime_ns)
        with self.lock:
            entry = self.entries.get(path)
            if entry is not None and entry[0] == signature:
                self.entries.move_to_end(path)
                return entry[1], entry[2]
        stored = read_stored(path)
        loaded = normalized_trajectory(stored, path)
        with self.lock:
            self.entries[path] = (signature, stored, loaded)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)
        return stored, loaded


def query_entries(stored_query: Any, history: list[dict[str, Any]]) -> list[QueryEntry]:
    """The messages a step sent, as stored: references to the history, literal ones in full."""
    entries = []
    for entry in stored_query if isinstance(stored_query, list) else []:
        index = entry if isinstance(entry, int) else None
        extra = ""
        if (
            isinstance(entry, dict)
            and "role" not in entry
            and isinstance(entry.get("message"), int)
        ):
            index = entry["message"]
            extra = " " + ", ".join(f"{k}={v}" for k, v in entry.items() if k != "message")
        if index is not None and 0 <= index < len(history):
            message = history[index]
            kind = message.get("message_type") or message.get("role", "")
            entries.append(
                QueryEntry(index, str(message.get("role", "")), visible(f"{kind}{extra}", 200))
            )
        elif isinstance(entry, dict):
            role = str(entry.get("role", ""))
            entries.append(QueryEntry(None, role, "sent as is", visible(message_text(entry))))
    return entries


def step_view(
    number: int, step: dict[str, Any], stored_step: dict[str, Any], history: list[Any], inline: bool
) -> StepView:
    observation = step["observation"] if isinstance(step["observation"], str) else ""
    short, folded = preview(observation)
    state = parse_state(step.get("state"))
    timing = {
        "execution": seconds(step.get("execution_time")),
        "model": seconds(step.get("model_latency")),
        "tokens in": count(step.get("input_tokens")),
        "tokens out": count(step.get("output_tokens")),
        "cached": count(step.get("cached_tokens")),
        "cost": dollars(step.get("cost")),
    }
    query = query_entries(stored_step.get("query"), history)
    return StepView(
        number=number,
        thought=visible(step.get("thought")),
        action=visible(step.get("action")),
        observation_preview=short,
        observation_full=visible(observation, 0) if folded and inline else None,
        folded=folded,
        state={str(k): visible(v, 2000) for k, v in state.items()},
        timing={key: value for key, value in timing.items() if value},
        query=query,
        requeries=sum(1 for entry in query if entry.index is None and entry.role == "assistant"),
    )


def seconds(value: Any) -> str:
    return f"{value:.3f} s" if is_number(value) and value else ""


def count(value: Any) -> str:
    return str(int(value)) if is_number(value) and value else ""


def dollars(value: Any) -> str:
    return f"${value:.4f}" if is_number(value) and value else ""


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def instance_view(
    run: Run,
    instance_id: str,
    stored: Any,
    loaded: dict[str, Any],
    *,
    inline: bool,
    task: Any = None,
) -> InstanceView:
    """The instance page of a loaded trajectory (`inline`: full observations in the page)."""
    info = loaded["info"]
    stored_steps = stored.get("trajectory", []) if isinstance(stored, dict) else []
    history = loaded["history"]
    steps = [
        step_view(i + 1, step, stored_steps[i] if i < len(stored_steps) else {}, history, inline)
        for i, step in enumerate(loaded["trajectory"])
    ]
    model_stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    summary = {
        "environment": visible(loaded.get("environment") or "", 200),
        "elapsed": seconds(info.get("elapsed_time")),
        "cost": dollars(model_stats.get("instance_cost")),
        "tokens sent": count(model_stats.get("tokens_sent")),
        "tokens received": count(model_stats.get("tokens_received")),
        "api calls": count(model_stats.get("api_calls")),
    }
    for key in ("error", "submission_note", "autosubmission_error", "exit_signal"):
        if info.get(key):
            summary[key] = visible(info[key], 5000)
    submission = info.get("submission")
    statement = loaded.get("problem_statement")
    if not isinstance(statement, str):
        statement = recorded_problem_statement(loaded) or ""
    view = InstanceView(
        instance_id=instance_id,
        problem_statement=visible(statement),
        exit_status=visible(info.get("exit_status") or "running", 200),
        model_name=visible(info.get("model_name") or "", 200),
        info={key: value for key, value in summary.items() if value},
        steps=steps,
        patch=diff_lines(submission) if isinstance(submission, str) and submission.strip() else [],
        evaluation=evaluation_view(run, instance_id),
    )
    if task is not None:
        view.gold_patch = diff_lines(task.patch) if task.patch else []
        view.test_patch = diff_lines(task.test_patch) if task.test_patch else []
    return view


def evaluation_view(run: Run, instance_id: str) -> Evaluation | None:
    """The instance's evaluation: outcome, each test's status, the end of the test log."""
    directory = run.evaluation_dir(instance_id)
    if directory is None:
        return None
    report = read_json(directory / REPORT_FILE)
    entry = report.get(instance_id) if isinstance(report, dict) else None
    if not isinstance(entry, dict):
        return None
    tests = []
    status = entry.get("tests_status") if isinstance(entry.get("tests_status"), dict) else {}
    for kind in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        groups = status.get(kind) if isinstance(status.get(kind), dict) else {}
        for passed, key in ((True, "success"), (False, "failure")):
            names = groups.get(key) if isinstance(groups.get(key), list) else []
            tests.extend(TestStatus(visible(name, 1000), kind, passed) for name in names)
    log = ""
    try:
        with open(directory / TEST_LOG_FILE, "rb") as stream:
            stream.seek(0, 2)
            size = stream.tell()
            stream.seek(max(0, size - TEST_LOG_TAIL))
            log = stream.read().decode("utf-8", "replace")
            if size > TEST_LOG_TAIL:
                log = f"[... the first {size - TEST_LOG_TAIL} bytes not shown]\n" + log
    except OSError:
        pass
    return Evaluation(
        outcome=visible(entry.get("outcome") or "", 100),
        message=visible(entry.get("message") or "", 5000),
        tests=tests,
        log=visible(log, 0),
    )


@dataclass
class CompareRow:
    left: StepView | None
    right: StepView | None
    same: bool


def aligned_steps(left: list[StepView], right: list[StepView]) -> tuple[list[CompareRow], int]:
    """The two runs' steps aligned on equal actions (difflib), and the index of the first row
    where they differ (-1 when they never do)."""

    def key(step: StepView) -> str:
        return " ".join(step.action.split())

    matcher = difflib.SequenceMatcher(None, [key(s) for s in left], [key(s) for s in right], False)
    rows: list[CompareRow] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(
                CompareRow(left[i], right[j], True)
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            )
            continue
        for offset in range(max(i2 - i1, j2 - j1)):
            a = left[i1 + offset] if i1 + offset < i2 else None
            b = right[j1 + offset] if j1 + offset < j2 else None
            rows.append(CompareRow(a, b, False))
    first = next((index for index, row in enumerate(rows) if not row.same), -1)
    return rows, first
