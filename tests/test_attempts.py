"""Several attempts of the agent loop and the chooser, with scripted models through the real
sandbox: every attempt's files, the validation by the repository's tests, the choice."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit_tree
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.env.factory import make_environment
from swe_aci.episode import load_config, run_episode
from swe_aci.pipeline.attempts import Attempts, changed_lines
from swe_aci.pipeline.choose import scratch_only
from swe_aci.trajectory.files import EpisodeFiles
from swe_aci.trajectory.store import load_trajectory

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef double(a):\n    return add(a, a)\n"
TESTS = "from calc import add, double\n\n\ndef test_double():\n    assert double(0) == 0\n"
ISSUE = "add() subtracts instead of adding"
SUBMIT = "DISCUSSION\nDone.\n```\nsubmit\n```\n"


def edit(old: str, new: str) -> str:
    return f"DISCUSSION\nFix.\n```\nsed -i 's/{old}/{new}/' calc/__init__.py\n```\n"


def repo(root: Path) -> Path:
    commit_tree(root, {"calc/__init__.py": BUGGY, "tests/test_calc.py": TESTS})
    return root


def config(script: list[str], *extra: str):
    return load_config(
        "attempts",
        ["model.name=scripted", f"model.script={json.dumps(script)}", "env.backend=local", *extra],
    )


def test_three_identical_attempts_agree_and_every_attempt_is_kept(tmp_path: Path) -> None:
    source = repo(tmp_path / "repo")
    shown: list[str] = []
    result = run_episode(
        config([edit("a - b", "a + b"), SUBMIT]),
        Workspace(EnvConfig(backend="local"), str(source)),
        ISSUE,
        instance_id="calc",
        output_dir=tmp_path / "out",
        on_step=lambda step: shown.append(step.action),
    )
    assert result.exit_status == "submitted" and "+    return a + b" in result.submission
    assert [a.strip() for a in shown].count("submit") == 3 and shown[-1] == "choose"
    for number in (1, 2, 3):
        attempt = load_trajectory(
            tmp_path / f"out/calc/attempts/calc.attempt{number}/calc.attempt{number}.traj"
        )
        assert attempt["info"]["exit_status"] == "submitted"
    trajectory = load_trajectory(tmp_path / "out/calc/calc.traj")
    assert [s["action"] for s in trajectory["trajectory"]] == [
        "attempt 1/3 (T=0)", "attempt 2/3 (T=0.7)", "attempt 3/3 (T=0.7)", "choose",
    ]  # fmt: skip
    assert "3 of 3 attempts agree" in trajectory["info"]["choice"]
    assert trajectory["info"]["model_stats"]["api_calls"] == 6
    assert (
        json.loads((tmp_path / "out/calc/calc.pred").read_text())["model_patch"]
        == result.submission
    )


def test_the_chooser_prefers_the_patch_without_regressions(tmp_path: Path) -> None:
    """Attempts 1 and 2 agree on a patch that fixes add but breaks double (a regression of the
    repository's own test); attempt 3 alone fixes add only: regressions outweigh the majority."""
    source = repo(tmp_path / "repo")
    scripts = {
        1: [edit("return add(a, a)", "return 1"), edit("a - b", "a + b"), SUBMIT],
        2: [edit("return add(a, a)", "return 1"), edit("a - b", "a + b"), SUBMIT],
        3: [edit("a - b", "b + a"), SUBMIT],
    }
    strategy = config([SUBMIT]).strategy
    out = tmp_path / "out"

    def run_attempt(number: int, _temperature: float, _wall: float):
        return run_episode(
            config(scripts[number]),
            Workspace(EnvConfig(backend="local"), str(source)),
            ISSUE,
            instance_id=f"calc.attempt{number}",
            output_dir=out / "calc" / "attempts",
        )

    attempts = Attempts(
        strategy,
        run_attempt,
        lambda: make_environment(Workspace(EnvConfig(backend="local"), str(source))),
        EpisodeFiles(out, "calc", "local"),
        "scripted",
    )
    result = attempts.run(ISSUE)
    assert "+    return b + a" in result.submission and "return 1" not in result.submission
    trajectory = load_trajectory(out / "calc/calc.traj")
    steps = {s["action"]: s for s in trajectory["trajectory"]}
    assert "attempts 1,2: regressions 1" in steps["validate 1/2"]["observation"]
    assert "attempts 3: regressions 0" in steps["validate 2/2"]["observation"]
    assert steps["choose"]["pipeline"]["chosen"] == 2
    assert "1 of 3 attempts agree; 0 existing tests regress" in trajectory["info"]["choice"]


def test_changed_lines_ignore_headers_and_trailing_blanks() -> None:
    one = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b  \n"
    two = "--- a/x\n+++ b/x\n@@ -3 +3 @@\n-a\n+b\n"
    assert changed_lines(one) == changed_lines(two) == ("-a", "+b")


def test_a_patch_of_scratch_files_alone_is_never_chosen(tmp_path: Path) -> None:
    """The agent wrote `reproduce.py` (nothing imports it) and no fix: no patch is submitted."""
    source = repo(tmp_path / "repo")
    scratch = "DISCUSSION\nRepro.\n```\necho 'from calc import add; print(add(1, 2))' > reproduce.py\n```\n"
    result = run_episode(
        config([scratch, SUBMIT], "strategy.temperatures=[0.0]"),
        Workspace(EnvConfig(backend="local"), str(source)),
        ISSUE,
        instance_id="calc",
        output_dir=tmp_path / "out",
    )
    assert result.submission == ""
    trajectory = load_trajectory(tmp_path / "out/calc/calc.traj")
    assert "no attempt submitted a patch of the repository's code" in trajectory["info"]["choice"]


def test_scratch_only_tells_new_unimported_files_from_fixes() -> None:
    new = "--- /dev/null\n+++ b/reproduce.py\n@@ -0,0 +1 @@\n+from calc import add\n"
    fix = "--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -1 +1 @@\n-a\n+b\n"
    helper = "--- /dev/null\n+++ b/calc/helper.py\n@@ -0,0 +1 @@\n+X = 1\n"
    user = "--- /dev/null\n+++ b/calc/user.py\n@@ -0,0 +1 @@\n+from calc.helper import X\n"
    assert scratch_only(new) and not scratch_only(new + fix)
    assert not scratch_only(helper + user) and scratch_only(helper)
