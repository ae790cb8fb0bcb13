"""Trajectory files: written atomically after every step, read back from ours or paper-era runs.

Layout of `<output_dir>/<id>/<id>.traj` (paper-era-behaviour 6):
`{"environment", "problem_statement", "trajectory": [steps], "history": [messages],
"info": {exit_status, submission, model_stats, ...}, "config"}`. A step has `thought`, `action`,
`observation`, `response`, `state` (a dict), `execution_time`, `input_tokens`, `output_tokens`,
`query` (the messages sent). Next to it, at the end of an episode: `<id>.patch` (when the
submission is non-empty) and `<id>.pred` (`{instance_id, model_name_or_path, model_patch}`).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from swe_aci.models.base import message_text

FILE_MODE = 0o644  # mkstemp creates 0600; outputs are meant to be shared like any other file
STEP_DEFAULTS: dict[str, Any] = {
    "thought": "",
    "action": "",
    "observation": "",
    "response": "",
    "execution_time": 0.0,
    "query": [],
}
# Paper-era instance template: the issue sits between these two markers.
_PAPER_ISSUE = re.compile(r"ISSUE:\n(.*?)\n\nINSTRUCTIONS:", re.DOTALL)


class TrajectoryError(Exception):
    """A trajectory file cannot be used; the message is one line naming the file."""


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


def write_predictions(directory: Path, instance_id: str, model_name: str, submission: str) -> None:
    """`<id>.pred` always, `<id>.patch` when the submission is non-empty."""
    if submission.strip():
        write_text_atomic(directory / f"{instance_id}.patch", submission)
    prediction = {
        "instance_id": instance_id,
        "model_name_or_path": model_name,
        "model_patch": submission,
    }
    write_json_atomic(directory / f"{instance_id}.pred", prediction)


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
    """Read a trajectory (ours or paper-era) into our layout, optional keys filled in.

    Raises TrajectoryError for a missing or unreadable file, non-JSON content, or no steps.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TrajectoryError(f"trajectory file not found: {path}") from None
    except IsADirectoryError:
        raise TrajectoryError(f"trajectory path is a directory: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TrajectoryError(f"cannot read trajectory {path}: {error}") from None
    except json.JSONDecodeError as error:
        raise TrajectoryError(f"trajectory {path} is not valid JSON: {error}") from None
    steps = data.get("trajectory") if isinstance(data, dict) else None
    if not isinstance(steps, list) or not steps:
        raise TrajectoryError(f"trajectory {path} has no steps (no non-empty 'trajectory' list)")
    if not all(isinstance(step, dict) for step in steps):
        raise TrajectoryError(f"trajectory {path} has a step that is not a JSON object")
    history = data.get("history")
    info = data.get("info")
    return {
        **data,
        "trajectory": [normalized_step(step) for step in steps],
        "history": [m for m in history if isinstance(m, dict)] if isinstance(history, list) else [],
        "info": info if isinstance(info, dict) else {},
    }


def normalized_step(step: dict[str, Any]) -> dict[str, Any]:
    result = {**STEP_DEFAULTS, **step}
    for key in ("thought", "action", "observation", "response"):
        if result[key] is None:
            result[key] = ""
    result["state"] = parse_state(step.get("state"))
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
