"""The submission: every change against the base commit, minus the hidden patch.

A hidden patch (the oracle tests the harness added to the working tree) must not be part of what
the model submits. The environment takes the diff itself (`Environment.submission`): in a fresh
git process that obeys no configuration the agent could write on the host, with a private index,
so asking for the submission changes nothing the model can see and cannot be steered by the
state of its shell. If the hidden patch does not reverse cleanly (the model edited the same
lines), the files it touches are left out: the evaluation replaces them with the oracle versions
anyway. Binary files and files over the size cap are left out too, and listed separately.
"""

from __future__ import annotations

from swe_aci.env.base import Environment, Submission


def take_submission(env: Environment, hidden_patch: str | None) -> Submission:
    """The patch and the changed files left out of it (binary or too large)."""
    return env.submission(hidden_patch)


def submission(env: Environment, hidden_patch: str | None, timeout: float) -> str:
    """The patch alone (the diff's own bound is `EnvConfig.diff_timeout`; `timeout` is kept
    for existing callers)."""
    del timeout
    return take_submission(env, hidden_patch).patch
