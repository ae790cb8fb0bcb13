"""Trajectory files: a journal appended during the episode, one `.traj` JSON at its end, read
back from ours or paper-era runs.

`<output_dir>/<id>/<id>.traj` has the layout of SWE-agent's trajectories:
`{"environment", "instance_id", "problem_statement", "trajectory": [steps], "history": [messages],
"info": {exit_status, submission, model_stats, ...}, "config"}`. A step has `thought`, `action`,
`observation`, `response`, `state` (a dict), `execution_time`, `model_latency`, token counts, `cost`
and `query` (the messages sent). Each message is stored once, in `history`, and a step's `query`
refers to it (the queries are what would make the file quadratic):

- a `query` entry is an int `i` (message `i` of the history as the model received it), a dict
  `{"message": i, ...}` (the same, with the keys shown added, e.g. `cache_breakpoint`), or a literal
  message (one with a `role`: an elided observation's placeholder, a requery);
- a step's `observation` is stored in full, as SWE-agent's format has it (files written before
  kept a long one as a short preview plus `observation_ref: [i, start, end]`, the span of history
  message `i` holding the full text; they still load); a long `problem_statement` is stored as a
  preview plus `problem_statement_ref`.

`load_trajectory` resolves every reference, so callers see every query and observation in full.

While the episode runs, the trajectory lives in `<id>.traj.jsonl`: one JSON object per line,
appended and flushed to disk after every step (`header`, `messages` added to the history, the
`step`, the latest `info`), so the bytes written grow linearly with the episode and a kill at any
moment leaves every finished step readable. At the end the journal is compacted into the `.traj`
(written atomically) and removed. Beside them: `<id>.patch` (non-empty submissions) and
`<id>.pred` (`{instance_id, model_name_or_path, model_patch}`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, TextIO

from swe_aci.models.base import Message, message_text, wire_message
from swe_aci.records import (
    FILE_MODE,
    PATCH_SUFFIX,
    PREDICTION_SUFFIX,
    TRAJECTORY_SUFFIX,
    Prediction,
    json_text,
    write_json_atomic,
    write_text_atomic,
)

JOURNAL_SUFFIX = ".jsonl"
# A trajectory is a few levels deep (steps, queries, messages, content parts); a file nested far
# deeper is refused as a whole before anything walks it recursively (repr, templates, copies).
MAX_DEPTH = 64
INLINE_TEXT = 2000  # a longer problem statement is stored once, in its history message
PREVIEW_TEXT = 500
STEP_DEFAULTS: dict[str, Any] = {
    "thought": "",
    "action": "",
    "observation": "",
    "response": "",
    "execution_time": 0.0,
    "model_latency": 0.0,
    "input_tokens": 0,
    "output_tokens": 0,
    "cached_tokens": 0,
    "cost": 0.0,
    "query": [],
}
# Paper-era instance template: the issue sits between these two markers.
_PAPER_ISSUE = re.compile(r"ISSUE:\n(.*?)\n\nINSTRUCTIONS:", re.DOTALL)


class TrajectoryError(Exception):
    """A trajectory file cannot be used; the message is one line naming the file."""


def output_files(directory: Path, instance_id: str) -> list[Path]:
    """Every file an episode writes for `instance_id` in its directory, temporaries a killed
    atomic write left behind included."""
    names = (
        TRAJECTORY_SUFFIX,
        f"{TRAJECTORY_SUFFIX}{JOURNAL_SUFFIX}",
        PATCH_SUFFIX,
        PREDICTION_SUFFIX,
    )
    temporaries = sorted(directory.glob(f".{instance_id}.*.tmp"))
    return [*(directory / f"{instance_id}{suffix}" for suffix in names), *temporaries]


def write_predictions(directory: Path, instance_id: str, model_name: str, submission: str) -> None:
    """`<id>.pred` always, `<id>.patch` when the submission is non-empty."""
    if submission.strip():
        write_text_atomic(directory / f"{instance_id}{PATCH_SUFFIX}", submission)
    prediction = Prediction(
        instance_id=instance_id, model_name_or_path=model_name, model_patch=submission
    )
    write_json_atomic(directory / f"{instance_id}{PREDICTION_SUFFIX}", prediction.to_json())


class TrajectoryWriter:
    """Appends an episode to its journal step by step, then compacts it into the `.traj`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.journal_path = path.with_name(path.name + JOURNAL_SUFFIX)
        self.data: dict[str, Any] = {"trajectory": [], "history": [], "info": {}}
        self._stream: TextIO | None = None

    @property
    def is_open(self) -> bool:
        return self._stream is not None

    def start(self, header: dict[str, Any], messages: list[Message], info: dict[str, Any]) -> None:
        """Remove the outputs of an earlier run of this instance, then open the journal."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for stale in output_files(self.path.parent, self.path.stem):
            stale.unlink(missing_ok=True)
        self._stream = open(self.journal_path, "x", encoding="utf-8")  # noqa: SIM115
        os.chmod(self.journal_path, FILE_MODE)
        header = dict(header)
        self.data = {**header, "trajectory": [], "history": [], "info": {}}
        record = self._extend(messages)
        statement = header.get("problem_statement")
        if isinstance(statement, str):
            for key, value in text_reference(statement, messages, "problem_statement").items():
                header[key] = self.data[key] = value
        self._append({"header": header, **record, "info": info})

    def append(self, messages: list[Message], step: dict[str, Any], info: dict[str, Any]) -> None:
        """Add messages to the history, a step (its query as history references), the info."""
        record = self._extend(messages)
        compact = compact_step(step, self.data["history"])
        self.data["trajectory"].append(compact)
        self._append({**record, "step": compact, "info": info})

    def finish(self, info: dict[str, Any]) -> None:
        """Record the final info, write the `.traj` in one piece and drop the journal."""
        if self._stream is None:
            return
        self._append({"info": info})
        self._stream.close()
        self._stream = None
        write_json_atomic(self.path, self.data)
        self.journal_path.unlink(missing_ok=True)

    def _extend(self, messages: list[Message]) -> dict[str, Any]:
        self.data["history"].extend(messages)
        return {"messages": messages} if messages else {}

    def _append(self, record: dict[str, Any]) -> None:
        self.data["info"] = record["info"]
        assert self._stream is not None, "the journal is not open"
        self._stream.write(json_text(record) + "\n")
        self._stream.flush()
        os.fdatasync(self._stream.fileno())


def compact_step(step: dict[str, Any], history: list[Message]) -> dict[str, Any]:
    """The step as stored: its query as references into `history`, its observation in full."""
    compact = dict(step)
    compact["query"] = [query_reference(m, history, i) for i, m in enumerate(step["query"])]
    return compact


def query_reference(message: Message, history: list[Message], index: int) -> Any:
    """`index` when the query's message `index` is history message `index` as sent, else the
    message itself (or a reference with the keys added)."""
    if index >= len(history):
        return message
    sent = wire_message(history[index])
    if message == sent:
        return index
    added = {key: value for key, value in message.items() if key not in sent}
    if {key: value for key, value in message.items() if key in sent} == sent and added:
        return {"message": index, **added}
    return message


def text_reference(text: str, history: list[Message], key: str) -> dict[str, Any]:
    """`{key: preview, key_ref: [i, start, end]}` when a long `text` is found in history message
    `i`; else nothing to change."""
    if len(text) <= INLINE_TEXT:
        return {}
    for index in range(len(history) - 1, -1, -1):
        content = history[index].get("content")
        start = content.find(text) if isinstance(content, str) else -1
        if start >= 0:
            preview = (
                f"{text[:PREVIEW_TEXT]}\n[... {len(text)} characters in all; the full text is "
                f"in message {index} of the history]"
            )
            return {key: preview, f"{key}_ref": [index, start, start + len(text)]}
    return {}


def read_journal(path: Path) -> dict[str, Any]:
    """Fold a journal into the stored `.traj` layout; a line cut short by a kill is ignored."""
    data: dict[str, Any] = {"trajectory": [], "history": [], "info": {}}
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except RecursionError:
            raise TrajectoryError(f"journal {path} line {number} is nested too deeply") from None
        except json.JSONDecodeError as error:
            if number == len(lines):  # the last line, written when the process was killed
                break
            message = f"journal {path} line {number} is not valid JSON: {error}"
            raise TrajectoryError(message) from None
        if not isinstance(record, dict):
            raise TrajectoryError(f"journal {path} line {number} is not a JSON object")
        data.update(record.get("header", {}))
        data["history"].extend(record.get("messages", []))
        if "step" in record:
            data["trajectory"].append(record["step"])
        data["info"] = record.get("info", data["info"])
    return data


def parse_state(state: Any) -> dict[str, Any]:
    """A step's state as a dict: paper-era files store it as JSON text."""
    if isinstance(state, dict):
        return state
    if isinstance(state, str) and state.strip():
        try:
            parsed = json.loads(state)
        except json.JSONDecodeError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def load_trajectory(path: str | Path) -> dict[str, Any]:
    """Read a trajectory (ours, finished or still a journal, or paper-era) into our layout, with
    references resolved and optional keys filled in.

    Raises TrajectoryError for a missing or unreadable file, non-JSON content, or no steps.
    """
    path = Path(path)
    return normalized_trajectory(read_stored(path), path)


def read_stored(path: Path) -> Any:
    """The trajectory at `path` as stored (references unresolved): a `.traj`, or the journal
    folded (given directly, or found beside a `.traj` path that does not exist yet)."""
    journal = path.with_name(path.name + JOURNAL_SUFFIX)
    try:
        if path.name.endswith(f".traj{JOURNAL_SUFFIX}"):
            stored = read_journal(path)
        elif not path.exists() and journal.is_file():
            stored = read_journal(journal)
        else:
            stored = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise TrajectoryError(f"trajectory {path} is nested too deeply to read") from None
    except FileNotFoundError:
        raise TrajectoryError(f"trajectory file not found: {path}") from None
    except IsADirectoryError:
        raise TrajectoryError(f"trajectory path is a directory: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TrajectoryError(f"cannot read trajectory {path}: {error}") from None
    except json.JSONDecodeError as error:
        raise TrajectoryError(f"trajectory {path} is not valid JSON: {error}") from None
    if nesting_depth(stored) > MAX_DEPTH:
        raise TrajectoryError(f"trajectory {path} is nested too deeply to read (over {MAX_DEPTH})")
    return stored


def nesting_depth(value: Any) -> int:
    """How deeply lists and dicts nest in `value` (walked without recursion)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            pending.extend(
                (child, depth + 1) for child in children if isinstance(child, dict | list)
            )
    return deepest


def normalized_trajectory(data: Any, path: Path) -> dict[str, Any]:
    """A stored trajectory (as `read_stored` returns it) in our layout, references resolved."""
    steps = data.get("trajectory") if isinstance(data, dict) else None
    if not isinstance(steps, list) or not steps:
        raise TrajectoryError(f"trajectory {path} has no steps (no non-empty 'trajectory' list)")
    if not all(isinstance(step, dict) for step in steps):
        raise TrajectoryError(f"trajectory {path} has a step that is not a JSON object")
    history = data.get("history")
    history = [m for m in history if isinstance(m, dict)] if isinstance(history, list) else []
    info = data.get("info")
    try:
        loaded = {
            **resolve_text(data, "problem_statement", history),
            "trajectory": [normalized_step(step, history) for step in steps],
            "history": history,
            "info": info if isinstance(info, dict) else {},
        }
    except (IndexError, TypeError, ValueError, KeyError):
        raise TrajectoryError(f"trajectory {path} refers to a message it does not hold") from None
    return loaded


def resolve_text(record: dict[str, Any], key: str, history: list[Message]) -> dict[str, Any]:
    """`record` with `key` restored from the history span `key_ref` names, if any."""
    reference = record.get(f"{key}_ref")
    if reference is None:
        return record
    index, start, end = reference
    resolved = {name: value for name, value in record.items() if name != f"{key}_ref"}
    resolved[key] = history[index]["content"][start:end]
    return resolved


def resolve_query(query: Any, history: list[Message]) -> list[Message]:
    if not isinstance(query, list):
        return []
    messages = []
    for entry in query:
        if isinstance(entry, int):
            messages.append(wire_message(history[entry]))
        elif isinstance(entry, dict) and "role" not in entry and "message" in entry:
            added = {key: value for key, value in entry.items() if key != "message"}
            messages.append(wire_message(history[entry["message"]]) | added)
        else:
            messages.append(entry)
    return messages


def normalized_step(step: dict[str, Any], history: list[Message]) -> dict[str, Any]:
    result = {**STEP_DEFAULTS, **resolve_text(step, "observation", history)}
    for key in ("thought", "action", "observation", "response"):
        if result[key] is None:
            result[key] = ""
    result["state"] = parse_state(step.get("state"))
    result["query"] = resolve_query(result["query"], history)
    return result


def recorded_problem_statement(trajectory: dict[str, Any]) -> str | None:
    """The issue a trajectory worked on: stored by us, or cut out of a paper-era instance message."""
    stored = trajectory.get("problem_statement")
    if isinstance(stored, str) and stored.strip():
        return stored
    for message in trajectory.get("history", []):
        demo = message.get("is_demo") or message.get("message_type") == "demonstration"
        if message.get("role") == "user" and not demo:
            match = _PAPER_ISSUE.search(message_text(message))
            return match.group(1) if match else None
    return None
