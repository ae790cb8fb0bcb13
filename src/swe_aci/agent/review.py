"""Review before submit (`agent.review_on_submit`): the first `submit` of an episode shows the
model its diff and the config's checklist (`agent.templates.review`) instead of ending the
episode; the next `submit` submits. Automatic submission at a limit never reviews."""

from __future__ import annotations

import posixpath
import re

from swe_aci.aci.interface import ACI, Observation
from swe_aci.agent.templates import Templates

_ADDED = re.compile(r'^--- /dev/null\n\+\+\+ (b/.+|"b/.+")$', re.MULTILINE)


def added_files(patch: str) -> list[str]:
    """The repository-relative paths a diff adds (new files), in diff order."""
    return [_unquote(match.group(1)) for match in _ADDED.finditer(patch)]


def review_observation(templates: Templates, aci: ACI, submitted: Observation) -> Observation:
    """What the first submit shows: the review template over the diff it would have submitted.
    `untouched_files` are the added files a create command made and nothing changed since."""
    patch = submitted.submission or ""
    new_files = added_files(patch)
    created = set(aci.untouched_creations())
    root = aci.env.repo_path
    untouched = [path for path in new_files if posixpath.join(root, path) in created]
    text = templates.render("review", diff=patch, new_files=new_files, untouched_files=untouched)
    return Observation(output=text)


def _unquote(path: str) -> str:
    """`b/<path>` without its prefix; a path git quoted (unusual characters, C-style escapes)
    keeps its escapes, as git wrote it."""
    return path.strip('"').removeprefix("b/")
