"""Replay the raw model outputs recorded in a trajectory file, in order.

Reads our own trajectories and paper-era SWE-agent `.traj` files alike: both have a top-level
`trajectory` list whose steps carry the raw model output under `response`. A step without a usable
response (missing, empty, or a function-calling response whose action lives outside the text) is
rebuilt from its `thought` and `action` in the agent's reply format.
The step that records how an episode exited (action `exit_cost`, `exit_format`...) is not a model
reply and is skipped; the replay then ends with that same exit status.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from swe_aci.models.base import ModelConfigError
from swe_aci.models.pricing import Pricing
from swe_aci.models.reply_format import ThoughtActionFormat
from swe_aci.models.scripted import ScriptedModel

EXIT_ACTION = re.compile(r"(exit_\w+|early_exit)")


class ReplayModel(ScriptedModel):
    """The responses of a trajectory file as a scripted model named `replay`."""

    def __init__(
        self, path: str | Path, reply_format: ThoughtActionFormat, pricing: Pricing | None = None
    ) -> None:
        self.path = Path(path)
        responses, recorded_exit = load_responses(self.path, reply_format)
        super().__init__(responses, name="replay", pricing=pricing, recorded_exit=recorded_exit)


def load_responses(path: Path, reply_format: ThoughtActionFormat) -> tuple[list[str], str | None]:
    """The model outputs of the trajectory at `path` and the exit status it ended with if it did
    not end by `submit` (e.g. `exit_cost` for `submitted (exit_cost)`); ModelConfigError if none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelConfigError(f"replay file not found: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelConfigError(f"replay file {path} is not a JSON trajectory: {error}") from None
    steps = data.get("trajectory") if isinstance(data, dict) else None
    if not isinstance(steps, list) or not steps:
        raise ModelConfigError(f"replay file {path} has no steps (no 'trajectory' list)")
    responses = []
    for index, step in enumerate(steps):
        if is_exit_step(step):
            continue
        response = step_response(step, reply_format) if isinstance(step, dict) else None
        if response is None:
            raise ModelConfigError(
                f"replay file {path}: step {index} has neither a response nor an action"
            )
        responses.append(response)
    return responses, recorded_exit(data.get("info"))


def is_exit_step(step: object) -> bool:
    """The step an episode's exit is recorded as, not something the model said."""
    action = step.get("action") if isinstance(step, dict) else None
    return isinstance(action, str) and EXIT_ACTION.fullmatch(action.strip()) is not None


def recorded_exit(info: object) -> str | None:
    """`exit_cost` from an exit status `exit_cost` or `submitted (exit_cost)`; else None."""
    status = info.get("exit_status") if isinstance(info, dict) else None
    if not isinstance(status, str):
        return None
    match = re.fullmatch(r"(?:submitted \()?(exit_\w+|early_exit)\)?", status.strip())
    return match.group(1) if match else None


def step_response(step: dict[str, Any], reply_format: ThoughtActionFormat) -> str | None:
    """The recorded response of one step, or one rebuilt from its thought and action."""
    response = step.get("response")
    action = step.get("action")
    action = action.strip("\n") if isinstance(action, str) else ""
    text = response if isinstance(response, str) else ""
    if text.strip() and (reply_format.holds_block(text) or not action.strip()):
        return text
    if not action.strip():
        return None
    thought = step.get("thought")
    thought = thought.strip() if isinstance(thought, str) else ""
    return reply_format.compose(thought, action)
