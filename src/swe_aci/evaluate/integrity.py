"""Which files of a prediction can change how the tests are collected, run or reported.

The harness resets the test patch's files and runs pytest through its guard (see `runner.py`),
but a prediction can still ship a `conftest.py` that marks every test passed, a test
configuration that loads a plugin or deselects tests, or a module an interpreter loads at start.
So can added lines of any other file that reach into the runner (`runner_reach.py`), and the
tests' own report can disagree with what pytest recorded (`results_record.py`). Such a prediction
is not rejected (a real fix may touch `setup.cfg`), it is flagged: every
instance's report lists these files, the run's report counts the resolved instances that have any,
and `--strict` grades them unresolved.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic import BaseModel

from swe_aci.env.diff import patch_paths
from swe_aci.evaluate.runner_reach import runner_reaches

TEST_CONFIG_FILES = frozenset({"pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"})
STARTUP_MODULES = frozenset({"sitecustomize.py", "usercustomize.py"})
TEST_DIRECTORIES = frozenset({"test", "tests", "testing"})
# Top-level modules of the test runner a file at the root (or under src/) would shadow.
RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "py", "iniconfig"})


class IntegrityFlag(BaseModel):
    path: str
    reason: str


class Integrity(BaseModel):
    """The flagged files of one prediction; `strict_unresolved` when `--strict` graded it
    unresolved because of them."""

    flagged: list[IntegrityFlag] = []
    strict_unresolved: bool = False

    @property
    def is_flagged(self) -> bool:
        return bool(self.flagged)


def integrity_of(prediction: str, test_patch: str) -> Integrity:
    """The files of the `prediction` patch that can change how the tests run, each with why."""
    test_files = set(patch_paths(test_patch))
    flagged = []
    for path in patch_paths(prediction):
        reason = _reason(path, test_files)
        if reason is not None:
            flagged.append(IntegrityFlag(path=path, reason=reason))
    already = {flag.path for flag in flagged}
    for reach in runner_reaches(prediction, skip=already.__contains__):
        flagged.append(IntegrityFlag(path=reach.path, reason=reach.reason))
    return Integrity(flagged=flagged)


def _reason(path: str, test_files: set[str]) -> str | None:
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else path
    top = parts[1] if len(parts) > 1 and parts[0] == "src" else parts[0] if parts else path
    if path in test_files:
        return "a file of the test patch (reset to the base before the tests run)"
    if name == "conftest.py":
        return "pytest loads it: hooks can change collection and results"
    if name in TEST_CONFIG_FILES:
        return "test configuration (options, plugins, test selection)"
    if name in STARTUP_MODULES or name.endswith(".pth"):
        return "loaded by the interpreter at start-up"
    if top.removesuffix(".py") in RUNNER_MODULES:
        return "shadows a module of the test runner"
    if any(part in TEST_DIRECTORIES for part in parts[:-1]) or _is_test_module(name):
        return "a test file or a file under a test directory"
    return None


def _is_test_module(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
