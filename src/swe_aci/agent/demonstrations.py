"""Demonstrations made from trajectories (`swe-aci traj-to-demo`), as the paper's were: a good
episode (one that ended with `submit`) kept whole, minus the prompts each step sent, and checked
against the interface of the config that will show it (every action must be one that config
would run)."""

from __future__ import annotations

from typing import Any

from swe_aci.aci.checking import ActionChecker, ActionProblem
from swe_aci.aci.config import ACIConfig
from swe_aci.trajectory.exits import EXIT_REASONS, SUBMITTED


class DemonstrationError(Exception):
    """The trajectory cannot be a demonstration (one line for the user)."""


def demonstration_from(trajectory: dict[str, Any]) -> dict[str, Any]:
    """The demonstration of a loaded trajectory (as `load_trajectory` returns it, so every
    reference is resolved and the file stands alone), without the steps' queries."""
    status = trajectory.get("info", {}).get("exit_status")
    if status != SUBMITTED:
        raise DemonstrationError(
            f"only an episode that ended with submit makes a demonstration (this one: {status})"
        )
    if not trajectory.get("history"):
        raise DemonstrationError("the trajectory has no history: nothing to show the model")
    steps = [{k: v for k, v in step.items() if k != "query"} for step in trajectory["trajectory"]]
    return {**trajectory, "trajectory": steps}


def demonstration_problems(demonstration: dict[str, Any], aci: ACIConfig) -> list[str]:
    """Each step whose action the interface `aci` would not run, with why."""
    checker = ActionChecker(aci)
    problems = []
    for number, step in enumerate(demonstration["trajectory"], start=1):
        action = step.get("action", "").strip()
        if action in EXIT_REASONS:
            continue
        problem = checker.check(action)
        if isinstance(problem, ActionProblem):
            first = problem.message.strip().splitlines()[0] if problem.message.strip() else ""
            problems.append(f"step {number} ({action.splitlines()[0][:60]}): {first}")
    return problems
