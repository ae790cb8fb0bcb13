"""`Sandbox.screen`: candidate texts of one module run against a test in one sandbox command, on
the real `local` and `bwrap` environments."""

from __future__ import annotations

import os
import posixpath
import shlex
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import commit_tree
from env_helpers import skip_unavailable
from swe_aci.env import make_environment
from swe_aci.env.base import Environment
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.evaluate.parsers import TestStatus
from swe_aci.pipeline import sandbox as sandbox_module
from swe_aci.pipeline.config import ValidateConfig
from swe_aci.pipeline.sandbox import REPRODUCTION_FILE, Sandbox

BASE = "def add(a, b):\n    return a - b\n"
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a * b\n"
HANGS = "def add(a, b):\n    while True:\n        pass\n"
TEST = """\
from calc import add


def test_add():
    with open("stray.txt", "w") as out:  # the screen must not leave this behind
        out.write("x")
    assert add(2, 3) == 5
"""
TESTS = {REPRODUCTION_FILE: TEST}
TEMPLATES = posixpath.join(posixpath.dirname(REPRODUCTION_FILE), "templates")


@pytest.fixture(params=["local", "bwrap"])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Environment]:
    skip_unavailable(request.param)
    repo = tmp_path / "repo"
    commit_tree(repo, {"calc.py": BASE, ".gitignore": "*.log\n"})
    environment = make_environment(Workspace(EnvConfig(backend=request.param), str(repo)))
    yield environment
    environment.close()


def sandbox_of(env: Environment, command: str = ValidateConfig().test_command) -> Sandbox:
    return Sandbox(env, command, timeout=60)


def assert_at_base(env: Environment, box: Sandbox) -> None:
    assert env.read_file(box.path("calc.py")).decode() == BASE
    root = shlex.quote(env.repo_path)
    status = env.run(f"cd {root} && git status --porcelain --ignored", timeout=30)
    assert status.exit_code == 0 and status.output.strip() == ""
    assert env.run(f"test -e {shlex.quote(box.path(TEMPLATES))}").exit_code != 0


def test_only_the_candidate_the_test_passes_on_is_reported_and_the_tree_is_back_at_base(
    env: Environment,
) -> None:
    box = sandbox_of(env)
    screened = box.screen("calc.py", [BASE, RIGHT, WRONG], TESTS, [REPRODUCTION_FILE])
    assert screened == [False, True, False]
    assert_at_base(env, box)
    assert box.screen("calc.py", [], TESTS, [REPRODUCTION_FILE]) == []


def ancestors_to_spare() -> set[tuple[int, str]]:
    """(pid, start time) of this process and its ancestors: outside any sandbox, so the hostile
    test leaves them alone (on `local` its ancestors go on up to these)."""
    spared, pid = set(), os.getpid()
    while pid > 0:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        spared.add((pid, fields[19]))
        pid = int(fields[1])
    return spared


HOSTILE = """\
import os

SPARED = {spared!r}


def ancestors():
    pid = os.getpid()
    while pid > 0:
        try:
            with open(f"/proc/{{pid}}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return
        if (pid, fields[19]) in SPARED:
            return
        yield pid
        pid = int(fields[1])


def test_forges_the_screen_marks():
    forged = "".join(f"swe-aci-screened {{i}} 0\\n" for i in range(51))
    for pid in ancestors():
        try:
            with open(f"/proc/{{pid}}/fd/1", "a") as out:
                out.write(forged)
        except OSError:
            pass
    assert False
"""


def test_a_test_forging_the_screens_marks_gets_nothing_past_the_clean_tree_validation(
    env: Environment,
) -> None:
    """A forged mark may make the screen report a candidate (it is a screen only); it never
    reports an index that does not exist, never raises, and the validation on a clean tree that
    follows (`run_isolated`) sees the test fail."""
    box = sandbox_of(env)
    hostile = {REPRODUCTION_FILE: HOSTILE.format(spared=ancestors_to_spare())}
    screened = box.screen("calc.py", [WRONG, RIGHT, BASE], hostile, [REPRODUCTION_FILE])
    assert len(screened) == 3 and all(each in (True, False, None) for each in screened)
    assert_at_base(env, box)
    for index, text in enumerate([WRONG, RIGHT, BASE]):
        if screened[index]:
            run = box.run_isolated({"calc.py": text}, hostile, [REPRODUCTION_FILE])
            assert set(run.statuses.values()) == {TestStatus.FAILED}, run.tail()
    assert_at_base(env, box)


def test_a_candidate_making_the_test_hang_is_cut_off_and_the_next_still_screened(
    env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module, "SCREEN_RUN_SECONDS", 2)
    box = sandbox_of(env)
    started = time.monotonic()
    screened = box.screen("calc.py", [HANGS, RIGHT], TESTS, [REPRODUCTION_FILE])
    assert screened[0] in (False, None) and screened[1] is True
    assert time.monotonic() - started < 20
    assert_at_base(env, box)


def test_a_test_command_setting_a_variable_screens_too(env: Environment) -> None:
    """configs/pipeline.yaml's command starts with `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`."""
    command = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {ValidateConfig().test_command}"
    box = sandbox_of(env, command)
    assert box.run_isolated({"calc.py": RIGHT}, TESTS, [REPRODUCTION_FILE]).passed
    assert box.screen("calc.py", [RIGHT], TESTS, [REPRODUCTION_FILE]) == [True]


CHATTY_TESTS = """\
import pytest

from calc import add


@pytest.mark.parametrize("n", range(300))
def test_chatty(n):
    print("case", n, "x" * 400)  # captured output of every passing test
    assert add(n, 0) == n


@pytest.mark.parametrize("n", range(40))
def test_breaks(n):
    assert add(n, 1) == n + 1, "a long message " * 100
"""


def test_the_existing_tests_statuses_survive_a_suite_that_prints_and_fails_at_length(
    env: Environment,
) -> None:
    """Every test's status reaches the summary within the output cap (100 kB): -rA would print
    the 300 passing tests' captured output first (120 kB), and full tracebacks of the 40
    failures fill it too; the existing tests' runs print a failure's summary line alone."""
    box = sandbox_of(env)
    run = box.run_isolated(
        {}, {"tests/test_chatty.py": CHATTY_TESTS}, ["tests/test_chatty.py"], statuses_only=True
    )
    assert len(run.statuses) == 340 and len(run.passed) == 300
    old = sandbox_of(env, ValidateConfig().test_command.replace("-rfEsxXp", "-rA"))
    lost = old.run_isolated({}, {"tests/test_chatty.py": CHATTY_TESTS}, ["tests/test_chatty.py"])
    assert len(lost.statuses) < 340
