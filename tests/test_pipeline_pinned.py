"""Regressions the issue explains (pipeline/pinned.py): an existing test that pins the literal a
candidate replaces by the name the issue asks for does not count against it, so the search stops
on that candidate; any other regression still counts."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_tree
from swe_aci.env.config import Workspace
from swe_aci.episode import load_config, run_episode
from swe_aci.pipeline.pinned import pinned_tests, replaced_literals
from swe_aci.trajectory.store import load_trajectory

PLATFORMS = '''"""Platform tags."""

import sysconfig


def platform_tags():
    version = sysconfig.get_config_var("APP_ABI_VERSION")
    if version:
        yield f"app_{version}_x86"
    yield "generic"
'''

TESTS = """import sysconfig

import pytest

from tagger.platforms import platform_tags


@pytest.mark.parametrize("config", [{"APP_ABI_VERSION": "1"}])
def test_app_version(monkeypatch, config):
    monkeypatch.setattr(sysconfig, "get_config_var", config.get)
    assert list(platform_tags()) == ["app_1_x86", "generic"]


def test_generic(monkeypatch):
    monkeypatch.setattr(sysconfig, "get_config_var", {}.get)
    assert list(platform_tags()) == ["generic"]


class TestNames:
    def test_generic_last(self, monkeypatch):
        monkeypatch.setattr(sysconfig, "get_config_var", {}.get)
        assert list(platform_tags())[-1] == "generic"
"""

ISSUE = """No app platform tag: the wrong sysconfig variable is read

The interpreter publishes its platform version as `APP_PLATFORM_VERSION`; tagger looks for a
variable of another name, so the tag is never given:

```python
import sysconfig
from tagger.platforms import platform_tags
sysconfig.get_config_var = {"APP_PLATFORM_VERSION": "1"}.get
print(list(platform_tags()))
# actual:   ['generic']
# expected: ['app_1_x86', 'generic']
```
"""

RENAMED = PLATFORMS.replace('"APP_ABI_VERSION"', '"APP_PLATFORM_VERSION"')
TREE = {
    "tagger/__init__.py": "",
    "tagger/platforms.py": PLATFORMS,
    "tests/test_platforms.py": TESTS,
}


def run(tmp_path: Path, issue: str) -> tuple[str, dict[str, dict]]:
    repo = tmp_path / "repo"
    commit_tree(repo, TREE)
    config = load_config(
        "pipeline",
        ["model.name=scripted", f"model.script={json.dumps(['No test.'])}", "env.backend=local"],
    )
    result = run_episode(config, Workspace(config.env, str(repo)), issue, instance_id="t",
                         output_dir=tmp_path / "out")  # fmt: skip
    trajectory = load_trajectory(tmp_path / "out/t/t.traj")
    steps = {step["action"]: step for step in trajectory["trajectory"]}
    return result.submission, steps


def test_a_test_pinning_the_replaced_literal_does_not_hold_the_search(tmp_path: Path) -> None:
    submission, steps = run(tmp_path, ISSUE)
    assert '+    version = sysconfig.get_config_var("APP_PLATFORM_VERSION")' in submission
    validated = steps["validate 1"]["observation"]
    assert "reproduction test passes, regressions 0 (and 1 that pin `APP_ABI_VERSION`" in validated
    assert not [action for action in steps if action.startswith("repair")]  # it stopped there
    assert "pin `APP_ABI_VERSION`, which the edit replaces" in steps["choose"]["observation"]


def test_a_test_pinning_a_name_the_issue_mentions_still_regresses(tmp_path: Path) -> None:
    """The issue asks that the old name keep working: breaking its test is a regression."""
    issue = ISSUE + "\n`APP_ABI_VERSION` must keep working on older interpreters.\n"
    _, steps = run(tmp_path, issue)
    assert "reproduction test passes, regressions 1, " in steps["validate 1"]["observation"]
    assert any(action.startswith("repair") for action in steps)  # the search went on


def test_only_the_tests_quoting_the_old_literal_are_pinned() -> None:
    files = {"tagger/platforms.py": RENAMED}
    literals = replaced_literals(TREE, files, ISSUE)
    assert literals == ("APP_ABI_VERSION",)
    regressed = {
        "tests/test_platforms.py::test_app_version[config0]",
        "tests/test_platforms.py::test_generic",
        "tests/test_platforms.py::TestNames::test_generic_last",
        "tests/test_gone.py::test_x",
    }
    assert pinned_tests(TREE, regressed, literals) == {
        "tests/test_platforms.py::test_app_version[config0]": "APP_ABI_VERSION"  # decorator
    }
    # a literal not replaced by a name the issue writes is no explanation
    other = {"tagger/platforms.py": PLATFORMS.replace('"APP_ABI_VERSION"', '"APP_VERSION"')}
    assert replaced_literals(TREE, other, ISSUE) == ()
    assert replaced_literals(TREE, files, ISSUE + "Keep `APP_ABI_VERSION`.") == ()
