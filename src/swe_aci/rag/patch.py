"""Getting a patch out of the model's reply and checking that it applies at the base commit.

Extraction follows SWE-bench's order: a <patch> (or <diff>) element, then a ```diff / ```patch
fence, then any fence holding a diff, then a bare diff in the reply. The check is applying it
in the task's environment (`env.patch.apply_patch`: `git apply`, then with `--recount`, which
forgives wrong hunk line counts, a common slip of models); the prediction is the repository's
diff after applying, so it is exactly what the evaluation will apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from swe_aci.env.base import Environment
from swe_aci.env.patch import apply_patch

TAGGED = re.compile(r"<(patch|diff)>\n?(.*?)</\1>", re.DOTALL)
FENCED = re.compile(r"```([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
DIFF_START = re.compile(r"^(diff --git |--- )", re.MULTILINE)
REASON_CHARS = 300


def looks_like_diff(text: str) -> bool:
    return bool(re.search(r"^--- ", text, re.MULTILINE)) and bool(
        re.search(r"^\+\+\+ ", text, re.MULTILINE)
    )


def extract_diff(reply: str) -> str | None:
    """The diff in `reply`, ending with a newline; None when the reply holds none."""
    candidates = [body for _, body in TAGGED.findall(reply)]
    fenced = FENCED.findall(reply)
    candidates += [body for language, body in fenced if language.lower() in {"diff", "patch"}]
    candidates += [body for _, body in fenced]
    for candidate in candidates:
        if looks_like_diff(candidate):
            return bare_diff(candidate)
    return bare_diff(reply) if looks_like_diff(reply) else None


def bare_diff(text: str) -> str:
    """From the first file header on; the text a model writes after the diff is not dropped
    here: `git apply` ignores trailing garbage after the last hunk."""
    start = DIFF_START.search(text)
    diff = text[start.start() :] if start else text
    return diff.rstrip("\n") + "\n"


@dataclass(frozen=True)
class ApplyResult:
    """The prediction (empty when the diff does not apply) and how it was applied, or why not."""

    model_patch: str
    method: str | None
    reason: str | None


def apply_diff(env: Environment, diff: str) -> ApplyResult:
    """Apply `diff` in the repository at its base (`git apply`, then `--recount`); never raises
    for a bad diff."""
    applied = apply_patch(env, diff)
    if not applied.applied:
        return ApplyResult("", None, f"git apply failed: {applied.complaint()[:REASON_CHARS]}")
    model_patch = env.submission().patch
    if not model_patch.strip():
        return ApplyResult("", None, "the diff changes nothing")
    return ApplyResult(model_patch, applied.method, None)
