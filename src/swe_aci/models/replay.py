"""Replay the raw model outputs recorded in a trajectory file, in order.

Reads our own trajectories and paper-era SWE-agent `.traj` files alike: both have a top-level
`trajectory` list whose steps carry the raw model output under `response`. A step without a usable
response (missing, empty, or a function-calling response whose action lives outside the text) is
rebuilt as its `thought` followed by its `action` in a fenced block, the thought-action format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swe_aci.models.base import ModelConfigError
from swe_aci.models.pricing import Pricing
from swe_aci.models.scripted import ScriptedModel


class ReplayModel(ScriptedModel):
    """The responses of a trajectory file as a scripted model named `replay`."""

    def __init__(self, path: str | Path, pricing: Pricing | None = None) -> None:
        self.path = Path(path)
        super().__init__(load_responses(self.path), name="replay", pricing=pricing)


def load_responses(path: Path) -> list[str]:
    """The model outputs of every step of the trajectory at `path`; ModelConfigError if none."""
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
        response = step_response(step) if isinstance(step, dict) else None
        if response is None:
            raise ModelConfigError(
                f"replay file {path}: step {index} has neither a response nor an action"
            )
        responses.append(response)
    return responses


def step_response(step: dict[str, Any]) -> str | None:
    """The recorded response of one step, or one rebuilt from its thought and action."""
    response = step.get("response")
    action = step.get("action")
    action = action.strip("\n") if isinstance(action, str) else ""
    if isinstance(response, str) and response.strip() and ("```" in response or not action.strip()):
        return response
    if not action.strip():
        return None
    thought = step.get("thought")
    thought = thought.strip() if isinstance(thought, str) else ""
    block = f"```\n{action}\n```\n"
    return f"{thought}\n{block}" if thought else block
