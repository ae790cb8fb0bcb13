"""Review before submit, through the loop: the scripted model on a real repository with the
str_replace config. The first submit shows the diff and the checklist (and names the files
created and left untouched), the second submits; limits autosubmit without a review."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swe_aci.aci.interface import ACI
from swe_aci.agent.loop import Agent
from swe_aci.agent.review import added_files
from swe_aci.configuration import ConfigError
from swe_aci.env.local import LocalEnvironment
from swe_aci.episode import EpisodeConfig, load_config
from swe_aci.models.scripted import ScriptedModel
from swe_aci.trajectory.result import EpisodeResult
from swe_aci.trajectory.store import load_trajectory

CALC = "def add(a, b):\n    return a - b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def act(command: str) -> str:
    return f"DISCUSSION\nNext step.\n```\n{command}\n```\n"


REPRODUCE = act("create reproduce.py\nfrom calc import add\nprint(add(2, 3))\nend_of_file_text")
FIX = act("str_replace calc.py\n    return a - b\nend_of_old_str\n    return a + b\nend_of_new_str")
TOUCH_TESTS = act("echo '# note' >> test_calc.py")
SUBMIT = act("submit")


@pytest.fixture
def episode(
    make_repo: Callable[..., Path], tmp_path: Path
) -> Iterator[Callable[..., EpisodeResult]]:
    environments: list[LocalEnvironment] = []

    def run(
        replies: list[str], *overrides: str, config: str = "tools/str_replace"
    ) -> EpisodeResult:
        settings: EpisodeConfig = load_config(config, ["agent.demonstrations=[]", *overrides])
        env = LocalEnvironment(str(make_repo({"calc.py": CALC, "test_calc.py": TESTS})))
        environments.append(env)
        agent = Agent(
            settings.agent,
            ScriptedModel(replies),
            ACI(env, settings.aci),
            output_dir=tmp_path / "out",
            instance_id="calc-1",
            environment="local",
        )
        return agent.run("add() subtracts")

    yield run
    for env in environments:
        env.close()


def test_the_first_submit_reviews_and_the_second_submits(
    episode: Callable[..., EpisodeResult],
) -> None:
    replies = [REPRODUCE, act("python reproduce.py"), FIX, TOUCH_TESTS, SUBMIT]
    replies += [act("rm reproduce.py"), act("git checkout -- test_calc.py"), SUBMIT]
    result = episode(replies)
    assert result.exit_status == "submitted"
    assert "reproduce.py" not in result.submission and "test_calc.py" not in result.submission
    assert "+    return a + b" in result.submission
    trajectory = load_trajectory(result.trajectory_path)
    steps = trajectory["trajectory"]
    assert [step["action"].split()[0] for step in steps] == [
        "create", "python", "str_replace", "echo", "submit", "rm", "git", "submit",
    ]  # fmt: skip
    review = steps[4]["observation"]
    assert review.startswith("Nothing has been submitted yet: first review your changes.")
    assert "<diff>\ndiff --git a/calc.py b/calc.py" in review and "+# note" in review
    assert "New files in it: reproduce.py." in review
    assert "Created and never changed since: reproduce.py." in review
    assert "Do not change the tests" in review and "run submit again" in review
    assert trajectory["info"]["review"] == {"step": 5}
    assert trajectory["info"]["submission"] == result.submission


def test_a_created_file_changed_since_is_new_but_not_untouched(
    episode: Callable[..., EpisodeResult],
) -> None:
    changed = act("insert reproduce.py 2\nprint(add(0, 0))\nend_of_new_str")
    result = episode([REPRODUCE, changed, act("echo x > notes.txt"), SUBMIT, SUBMIT])
    review = load_trajectory(result.trajectory_path)["trajectory"][3]["observation"]
    assert "New files in it: notes.txt, reproduce.py." in review
    assert (
        "never changed since" not in review
    )  # notes.txt came from the shell, reproduce.py changed


def test_limits_autosubmit_without_a_review(episode: Callable[..., EpisodeResult]) -> None:
    result = episode([FIX, act("ls")], "agent.limits.max_steps=2")
    assert result.exit_status == "submitted (exit_step_limit)"
    assert "+    return a + b" in result.submission
    info = load_trajectory(result.trajectory_path)["info"]
    assert "review" not in info


def test_the_default_config_submits_at_once(episode: Callable[..., EpisodeResult]) -> None:
    result = episode([act("echo x > notes.txt"), SUBMIT], config="default")
    assert result.exit_status == "submitted" and "notes.txt" in result.submission
    assert "review" not in load_trajectory(result.trajectory_path)["info"]


def test_review_on_submit_in_the_default_config_uses_its_template(
    episode: Callable[..., EpisodeResult],
) -> None:
    result = episode(
        [act("echo x > notes.txt"), SUBMIT, SUBMIT], "agent.review_on_submit=true", config="default"
    )
    steps = load_trajectory(result.trajectory_path)["trajectory"]
    assert len(steps) == 3 and steps[1]["observation"].startswith("Nothing has been submitted")


def test_the_review_template_is_checked_when_the_config_loads() -> None:
    with pytest.raises(
        ConfigError, match=r"agent\.review_on_submit needs agent\.templates\.review"
    ):
        load_config("tools/str_replace", ["agent.templates.review=null"])
    with pytest.raises(ConfigError, match=r"templates.review: unknown variable\(s\) patch"):
        load_config("tools/str_replace", ["agent.templates.review='{{patch}}'"])


def test_added_files_are_read_from_the_diff() -> None:
    patch = (
        "diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/new dir/r.py b/new dir/r.py\nnew file mode 100644\nindex 0..3\n"
        "--- /dev/null\n+++ b/new dir/r.py\n@@ -0,0 +1 @@\n+print(1)\n"
        '--- /dev/null\n+++ "b/caf\\303\\251.py"\n@@ -0,0 +1 @@\n+x\n'
    )
    assert added_files(patch) == ["new dir/r.py", "caf\\303\\251.py"]
