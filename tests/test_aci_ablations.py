"""The paper's ablations (Table 3) as configs: each loads and produces its interface."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from fixtures.aci.support import Session, run, sessions
from swe_aci.aci.config import ACIConfig
from swe_aci.aci.interface import ACI, ActionProblem, CheckedAction
from swe_aci.agent.loop import Agent
from swe_aci.env.local import LocalEnvironment
from swe_aci.episode import EpisodeConfig, load_config
from swe_aci.models.scripted import ScriptedModel
from swe_aci.trajectory.store import load_trajectory

ABLATIONS = Path(__file__).resolve().parents[1] / "configs" / "ablations"
UPDATED = "File updated. Please review the changes"
SEARCH_COMMANDS = ("search_file", "search_dir", "find_file")


def ablation(name: str) -> EpisodeConfig:
    return load_config(ABLATIONS / f"{name}.yaml")


def act(command: str) -> str:
    return f"DISCUSSION\nNext step.\n```\n{command}\n```\n"


@pytest.fixture
def session(make_repo: Callable[..., Path]) -> Iterator[Session]:
    yield from sessions(make_repo)


@pytest.fixture
def episode(make_repo: Callable[..., Path], tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """episode(config, replies) -> the trajectory of a scripted episode on a small repository."""
    environments: list[LocalEnvironment] = []

    def start(config: EpisodeConfig, replies: list[str]) -> dict[str, Any]:
        env = LocalEnvironment(str(make_repo({"calc.py": "def add(a, b):\n    return a - b\n"})))
        environments.append(env)
        agent = Agent(
            config.agent,
            ScriptedModel(replies),
            ACI(env, config.aci),
            output_dir=tmp_path / "out",
            instance_id="calc-1",
            environment="local",
        )
        result = agent.run("add() subtracts")
        return load_trajectory(result.trajectory_path)

    yield start
    for env in environments:
        env.close()


def prompt(trajectory: dict[str, Any]) -> str:
    """The system message and the instance message of an episode."""
    kinds = ("system_prompt", "instance")
    return "\n".join(m["content"] for m in trajectory["history"] if m["message_type"] in kinds)


@pytest.mark.parametrize("path", sorted(ABLATIONS.glob("*.yaml")), ids=lambda path: path.stem)
def test_each_ablation_loads_and_changes_only_its_own_keys(path: Path) -> None:
    config = load_config(path)
    assert config.description.startswith("Ablation: ") and "\n" not in config.description
    raw = yaml.safe_load(path.read_text())
    assert raw["extends"] == "default"
    assert set(raw) - {"extends", "description"} <= {"aci", "agent"}
    default = load_config(None).model_dump()
    changed = {
        f"{section}.{key}"
        for section in ("aci", "agent")
        for key, value in config.model_dump()[section].items()
        if value != default[section][key]
    }
    expected = {f"{section}.{key}" for section in ("aci", "agent") for key in raw.get(section, {})}
    assert changed == expected


def test_window_30_shows_30_lines(session: Session) -> None:
    config = ablation("window_30").aci
    aci = session({"big.txt": "".join(f"line {n}\n" for n in range(1, 101))}, **config.model_dump())
    output = run(aci, "open big.txt")
    assert re.findall(r"^(\d+):", output, re.M) == [str(n) for n in range(1, 31)]
    assert output.endswith("(70 more lines below)")
    assert re.findall(r"^(\d+):", run(aci, "scroll_down"), re.M)[0] == "29"
    assert "moves the window down 30 lines" in [d.docstring for d in aci.command_docs()]


def test_full_file_viewer_shows_the_whole_file(session: Session) -> None:
    config = ablation("full_file").aci
    aci = session({"big.txt": "".join(f"line {n}\n" for n in range(1, 251))}, **config.model_dump())
    for action in ("open big.txt", "open big.txt 200"):
        output = run(aci, action)
        assert output.splitlines()[0] == "[File: {REPO}/big.txt (250 lines total)]"
        assert len(output.splitlines()) == 251 and "more lines" not in output
    edited = run(aci, "edit 200:200\nchanged\nend_of_edit")
    assert "\n1:line 1\n" in edited and "\n250:line 250\n" in edited
    refusal = "The command 'goto' is not available in this interface"
    assert aci.check("goto 10") == ActionProblem("blocked", refusal)
    with pytest.raises(ValidationError, match=r"remove goto, scroll_down from aci\.commands"):
        ACIConfig(window=None, commands=["open", "goto", "scroll_down"])


def test_full_file_prompt_describes_the_whole_file_viewer(episode: Callable[..., Any]) -> None:
    text = prompt(episode(ablation("full_file"), [act("submit")]))
    assert "it shows the whole of one file at a time" in text
    assert "None" not in text and "goto" not in text and "scroll" not in text


def test_no_search_has_no_search_commands_and_refuses_them(
    episode: Callable[..., Any], session: Session
) -> None:
    replies = [
        act("search_dir add"),
        act("find_file calc.py"),
        act("grep -rn add ."),
        act("submit"),
    ]
    trajectory = episode(ablation("no_search"), replies)
    text = prompt(trajectory)
    assert not any(name in text for name in SEARCH_COMMANDS)
    assert "grep -rn" in text
    assert [step["action"].strip() for step in trajectory["trajectory"]] == [
        "grep -rn add .",
        "submit",
    ]
    aci = session({"a.txt": "a\n"}, **ablation("no_search").aci.model_dump())
    for name in SEARCH_COMMANDS:
        problem = aci.check(f"{name} add")
        assert isinstance(problem, ActionProblem)
        assert problem.kind == "blocked" and f"'{name}'" in problem.message


def test_iterative_search_moves_through_the_matches(session: Session) -> None:
    config = ablation("iterative_search").aci
    files = {
        "pkg/a.py": "".join(f"x{n} = {n}\n" for n in range(1, 21)).replace("x10 =", "target ="),
        "pkg/b.py": "target = 1\nother = 2\ntarget += 1\n",
        "README.md": "no match here\n",
    }
    aci = session(files, **config.model_dump())
    assert run(aci, "next") == "No search in progress. Use the search command first."
    first = run(aci, "search target pkg")
    assert first == (
        '[Match 1 of 3 for "target"]\n[File: {REPO}/pkg/a.py (20 lines total)]\n'
        "(6 more lines above)\n7:x7 = 7\n8:x8 = 8\n9:x9 = 9\n10:target = 10\n11:x11 = 11\n"
        "12:x12 = 12\n13:x13 = 13\n(7 more lines below)"
    )
    assert aci.state()["open_file"] == f"{aci.env.repo_path}/pkg/a.py"
    assert run(aci, "prev") == (
        'This is the first match for "target". Use next to see the following ones.'
    )
    second = run(aci, "next")
    assert second.startswith('[Match 2 of 3 for "target"]\n[File: {REPO}/pkg/b.py (3 lines')
    assert "1:target = 1\n2:other = 2\n3:target += 1" in second
    assert aci.state()["open_file"] == f"{aci.env.repo_path}/pkg/b.py"
    assert run(aci, "next").startswith('[Match 3 of 3 for "target"]')
    assert run(aci, "next") == (
        'No more matches for "target" (this is match 3 of 3). Use prev to go back.'
    )
    assert run(aci, "prev").startswith('[Match 2 of 3 for "target"]')
    # the open file is the match's: the editor carries on from there
    assert UPDATED in run(aci, "edit 2:2\nother = 3\nend_of_edit")
    # one file, no match, and the file cap of search_dir
    assert run(aci, "search x1 pkg/a.py").startswith('[Match 1 of 10 for "x1"]')
    assert run(aci, "search nothing_like_this") == (
        'No matches found for "nothing_like_this" in {REPO}'
    )
    assert run(aci, "search target missing.py") == "File {REPO}/missing.py not found"


def test_iterative_search_caps_files_like_search_dir(session: Session) -> None:
    config = ablation("iterative_search").aci.model_copy(update={"search_cap": 2})
    aci = session({f"f{n}.txt": "hit\n" for n in range(3)}, **config.model_dump())
    assert run(aci, "search hit") == (
        'More than 3 files matched for "hit" in {REPO}. Please narrow your search.'
    )


def test_iterative_search_prompt(episode: Callable[..., Any]) -> None:
    text = prompt(episode(ablation("iterative_search"), [act("submit")]))
    assert "search <search_term> [<path>]" in text and "next and prev move" in text
    assert "search_dir" not in text and "search_file" not in text


def test_no_edit_refuses_edit_and_says_how_to_change_files(episode: Callable[..., Any]) -> None:
    replies = [
        act("edit 2:2\n    return a + b\nend_of_edit"),
        act("sed -i 's/a - b/a + b/' calc.py"),
        act("submit"),
    ]
    trajectory = episode(ablation("no_edit"), replies)
    assert "+    return a + b" in trajectory["info"]["submission"]
    assert trajectory["trajectory"][0]["action"].startswith("sed")
    text = prompt(trajectory)
    assert "there is no edit command" in text and "edit <start_line>" not in text
    assert "create <filename>" not in text


def test_no_lint_edit_accepts_a_syntax_error(session: Session) -> None:
    config = ablation("no_lint").aci
    aci = session({"mod.py": "def f(x):\n    return x\n"}, **config.model_dump())
    run(aci, "open mod.py")
    assert UPDATED in run(aci, "edit 2:2\n        return (x\nend_of_edit")
    assert (Path(aci.env.repo_path) / "mod.py").read_text() == "def f(x):\n        return (x\n"
    (edit,) = [doc for doc in aci.command_docs() if doc.name == "edit"]
    assert "syntax errors" not in edit.docstring


def test_no_lint_prompt_does_not_promise_the_guardrail(episode: Callable[..., Any]) -> None:
    text = prompt(episode(ablation("no_lint"), [act("submit")]))
    assert "About editing" in text and "refused and the file stays" not in text
    assert "checked for syntax errors" not in text
    default = prompt(episode(load_config(None), [act("submit")]))
    assert "refused and the file stays" in default and "checked for syntax errors" in default


def test_context_ablations_are_agent_settings() -> None:
    assert ablation("full_history").agent.history.type == "full"
    assert ablation("no_demonstration").agent.demonstrations == []


@pytest.mark.parametrize("path", sorted(ABLATIONS.glob("*.yaml")), ids=lambda path: path.stem)
def test_the_demonstration_uses_only_the_ablations_commands(path: Path, session: Session) -> None:
    config = load_config(path)
    aci = session({"a.txt": "a\n"}, **config.aci.model_dump())
    for demonstration in config.agent.demonstrations:
        for step in load_trajectory(demonstration)["trajectory"]:
            assert isinstance(aci.check(step["action"].strip()), CheckedAction), step["action"]
