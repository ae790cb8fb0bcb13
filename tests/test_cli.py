"""The `swe-aci` command line: every bad input ends in one line on stderr and a non-zero exit,
with nothing written; a good run prints its steps and result and writes its outputs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner, Result

from swe_aci.cli import REGISTRY, app
from swe_aci.configuration import builtin_config_dir
from swe_aci.trajectory.store import load_trajectory

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# Rich must not colour or wrap what the tests read.
PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}
SUBMIT = "DISCUSSION\nNothing to change.\n```\nsubmit\n```\n"
SCRIPTED = ["--model", "scripted", "--set", f"model.script={json.dumps([SUBMIT])}"]
PREDICTION_KEYS = {"instance_id", "model_name_or_path", "model_patch"}
PROGRESS_LINE = re.compile(r"turn \d+: |step took ")


def cli(*args: str | Path) -> Result:
    return CliRunner(env=PLAIN).invoke(app, [str(arg) for arg in args])


def assert_one_line_error(result: Result, fragment: str, code: int = 2) -> None:
    """Exit `code` through typer (no stray exception), one stderr line naming the problem (after
    the progress lines of the turns that ran, if any)."""
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, (result.stdout, result.stderr)
    lines = [
        line
        for line in result.stderr.splitlines()
        if line.strip() and not PROGRESS_LINE.match(line)
    ]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert fragment in lines[0]
    assert "Traceback" not in result.stdout + result.stderr


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"hello.py": "print('hello')\n", "README.md": "# hello\n"}, name="hello")


def full_config(path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """The default config, changed by `edit`, written to `path` (demonstrations made absolute)."""
    default = builtin_config_dir() / "default.yaml"
    data = yaml.safe_load(default.read_text())
    agent = data["agent"]
    agent["demonstrations"] = [str((default.parent / d).resolve()) for d in agent["demonstrations"]]
    edit(data)
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def inputs(work: Path) -> Path:
    """The bad files the cases below point at, in the current directory."""
    (work / "plain").mkdir()
    (work / "plain" / "notes.txt").write_text("not under git\n")
    (work / "empty.md").write_text("")
    (work / "blank.md").write_text("  \n\n")
    (work / "broken.yaml").write_text("agent:\n  limits: [1,\n")
    (work / "a_file").write_text("x")
    full_config(work / "unknown.yaml", lambda data: data["agent"]["limits"].update(bogus=1))
    (work / "not_json.traj").write_text("{ this is not json")
    (work / "no_steps.traj").write_text(json.dumps({"trajectory": [], "info": {}}))
    return work


# Arguments of `swe-aci` ({repo} is a committed repository) and what the one error line says.
RUN = ["run", "--issue", "fix it", "--env", "local", "--output-dir", "out", *SCRIPTED]
ON_REPO = [*RUN, "--repo", "{repo}"]
WITH_ISSUE = ["run", "--repo", "{repo}", "--env", "local", "--output-dir", "out", *SCRIPTED]
REPLAY = ["--repo", "{repo}", "--output-dir", "out"]
BAD_INPUTS = [
    pytest.param([*RUN, "--repo", "nope"], "repository path does not exist", id="missing-repo"),
    pytest.param([*RUN, "--repo", "a_file"], "is not a directory", id="repo-is-a-file"),
    pytest.param([*RUN, "--repo", "plain"], "pass --init-copy", id="not-a-git-repo"),
    pytest.param([*ON_REPO, "--commit", "deadbeef"], "unknown commit", id="unknown-commit"),
    pytest.param([*WITH_ISSUE, "--issue", ""], "the issue is empty", id="empty-issue"),
    pytest.param([*WITH_ISSUE, "--issue", " \n\t"], "the issue is empty", id="blank-issue"),
    pytest.param([*WITH_ISSUE, "--issue", "empty.md"], "the issue is empty", id="empty-file"),
    pytest.param([*WITH_ISSUE, "--issue", "blank.md"], "the issue is empty", id="blank-file"),
    pytest.param(
        [*WITH_ISSUE, "--issue", "issues/missing.md"],
        "issue file not found: issues/missing.md",
        id="issue-file-not-found",
    ),
    pytest.param(
        [*ON_REPO, "--config", "missing.yaml"], "config file not found", id="config-not-found"
    ),
    pytest.param([*ON_REPO, "--config", "broken.yaml"], "YAML error line", id="config-yaml"),
    pytest.param(
        [*ON_REPO, "--config", "unknown.yaml"],
        "unknown key agent.limits.bogus",
        id="config-unknown-key",
    ),
    pytest.param(
        [*ON_REPO, "--set", "agent.history.bogus=3"],
        "unknown key agent.history.bogus",
        id="override-unknown-key",
    ),
    pytest.param(
        [*ON_REPO, "--set", "agent.limits"], "expected key.path=value", id="override-no-value"
    ),
    pytest.param(
        [*ON_REPO, "--set", "agent.limits.max_steps=many"],
        "agent.limits.max_steps",
        id="override-bad-value",
    ),
    pytest.param(
        [*ON_REPO, "--set", "agent.limits.max_steps={{"], "not valid YAML", id="override-yaml"
    ),
    pytest.param(
        ["run", "--repo", "{repo}", "--issue", "fix it", "--env", "local", "--model", "gpt-17"],
        "unknown model 'gpt-17'",
        id="unknown-model",
    ),
    pytest.param(
        [*ON_REPO, "--env", "podman"], "--env podman: Input should be", id="unknown-backend"
    ),
    pytest.param(
        [
            "run",
            "--repo",
            "{repo}",
            "--issue",
            "fix it",
            "--config",
            "local_agent",
            "--set",
            "agent.parser=tool_calls",
            "--model",
            "local/no-such-model",
        ],
        "agent.parser=tool_calls does not work with the local model",
        id="local-tool-calls",
    ),
    pytest.param(
        ["run", "--repo", "{repo}", "--issue", "fix it", *SCRIPTED, "--output-dir", "a_file/out"],
        "output directory a_file/out is not writable",
        id="output-under-a-file",
    ),
    pytest.param([*RUN, "--repo", "x[/y]"], "x[/y]", id="markup-in-a-path"),
    *(
        pytest.param(
            [*ON_REPO, "--instance-id", bad], f"invalid instance id {bad!r}", id=f"id-{bad}"
        )
        for bad in ("../../x", "/tmp/abs", "a/b", ".", "..", "a b", "")
    ),
    *(
        pytest.param([*WITH_ISSUE, "--issue", path], "issue file not found", id=f"issue-{path}")
        for path in ("./missing", "~/no-such-issue", "docs/ISSUE", "/no/such/file", "bug.txt")
    ),
    pytest.param(
        ["run", "--repo", "{repo}", "--issue", "fix it", "--env", "local", "--output-dir", "out"],
        "no model chosen: pass --model (e.g. openai/gpt-4o",
        id="no-model",
    ),
    pytest.param(["replay", "not_json.traj", *REPLAY], "not valid JSON", id="replay-not-json"),
    pytest.param(["replay", "no_steps.traj", *REPLAY], "has no steps", id="replay-no-steps"),
    pytest.param(
        ["replay", "gone.traj", *REPLAY], "trajectory file not found", id="replay-missing"
    ),
]


@pytest.mark.parametrize(("args", "fragment"), BAD_INPUTS)
def test_bad_input_is_one_line_and_writes_nothing(
    inputs: Path, repo: Path, args: list[str], fragment: str
) -> None:
    before = sorted(path.name for path in inputs.iterdir())
    result = cli(*(arg.replace("{repo}", str(repo)) for arg in args))
    assert_one_line_error(result, fragment)
    assert sorted(path.name for path in inputs.iterdir()) == before  # no out/, no trajectories/


def test_bad_input_through_the_real_entry_point(work: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "swe_aci", "run", "--repo", "nope", "--issue", "fix it"],
        capture_output=True,
        text=True,
        env={key: value for key, value in os.environ.items() if "COLOR" not in key}
        | {"NO_COLOR": "1"},
    )
    assert result.returncode == 2
    assert result.stderr == "error: repository path does not exist: nope\n"
    assert result.stdout == ""


def command_paths() -> list[tuple[str, ...]]:
    """Every command and every group with each of its subcommands, from the CLI's registry."""
    paths: list[tuple[str, ...]] = []
    for name, entry in REGISTRY.items():
        paths.append((name,))
        if isinstance(entry, typer.Typer):
            assert entry.registered_commands, name
            for command in entry.registered_commands:
                assert command.callback is not None
                paths.append((name, command.name or command.callback.__name__))
    return paths


COMMAND_PATHS = command_paths()


def test_the_help_covers_every_group() -> None:
    groups = {path[0] for path in COMMAND_PATHS if len(path) == 2}
    assert {"models", "images", "tasks"} <= groups


@pytest.mark.parametrize("path", [(), *COMMAND_PATHS], ids=lambda path: " ".join(path) or "top")
def test_help_of_every_command(path: tuple[str, ...]) -> None:
    result = cli(*path, "--help")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    if not path:
        assert "Usage: " in result.stdout
        assert all(name in result.stdout for name in REGISTRY)
    else:
        assert f" {' '.join(path)} [OPTIONS]" in result.stdout
        assert "--help" in result.stdout


def test_the_top_level_help_lists_the_registry_in_order_with_each_summary() -> None:
    """The list is made without building the commands; it says what each one's own help says."""
    listed = cli("--help").stdout.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed] == list(REGISTRY)
    for line, name in zip(listed, REGISTRY, strict=True):
        first_words = " ".join(cli(name, "--help").stdout.split("\n\n", 1)[1].split()[:3])
        assert first_words in line, (name, line)


def test_a_mistyped_command_gets_a_suggestion() -> None:
    result = cli("rnu")
    assert result.exit_code == 2
    assert "No such command 'rnu'. Did you mean 'run'?" in result.stderr


EDIT_SESSION = [
    "DISCUSSION\nLet's look at the file.\n```\nopen hello.py\n```\n",
    "DISCUSSION\nGreet the world.\n```\nedit 1:1\nprint('hello, world')\nend_of_edit\n```\n",
    "DISCUSSION\nAnd add a test file.\n```\necho 'assert True' > test_hello.py\n```\n",
    SUBMIT,
]


def test_successful_run_prints_steps_and_writes_outputs(work: Path, repo: Path) -> None:
    script = json.dumps(EDIT_SESSION)
    result = cli(
        "run", "--repo", repo, "--issue", "Say hello to the world.", "--env", "local",
        "--model", "scripted", "--set", f"model.script={script}",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    # stderr says what is happening: each turn as it starts, each step's time split
    assert "turn 1: waiting for the model (0 tokens sent, 0 received so far)" in result.stderr
    assert "turn 4: waiting for the model" in result.stderr
    assert result.stderr.count("step took ") == 4
    assert "error" not in result.stderr
    directory = next((work / "trajectories").iterdir())  # the default output directory
    assert directory.name.startswith("hello-")  # repository name + hash of the issue
    name = directory.name
    out = result.stdout
    for shown in (
        "$ open hello.py",
        "1:print('hello')",
        "$ edit 1:1",
        "File updated.",
        "$ submit",
        "exit status: submitted",
        f"trajectory: trajectories/{name}/{name}.traj",
        f"patch: trajectories/{name}/{name}.patch",
        "cost: $0.0000 (4 calls,",
        "4 steps)",
    ):
        assert shown in out, shown
    assert out.splitlines()[-1] == (
        "result: a patch was produced (2 files changed); the model submitted"
    )
    patch = (directory / f"{name}.patch").read_text()
    assert "-print('hello')\n+print('hello, world')\n" in patch
    assert "+++ b/test_hello.py\n@@ -0,0 +1 @@\n+assert True\n" in patch
    prediction = json.loads((directory / f"{name}.pred").read_text())
    assert set(prediction) == PREDICTION_KEYS
    assert prediction == {
        "instance_id": name,
        "model_name_or_path": "scripted",
        "model_patch": patch,
    }
    trajectory = load_trajectory(directory / f"{name}.traj")
    assert trajectory["environment"] == "local"
    assert trajectory["info"]["exit_status"] == "submitted"
    assert trajectory["info"]["submission"] == patch
    assert [step["action"].split()[0] for step in trajectory["trajectory"]] == [
        "open", "edit", "echo", "submit",
    ]  # fmt: skip


def test_the_bundled_example_runs_with_the_replay_model(work: Path) -> None:
    """What `MODEL=replay examples/run_example.sh` does: issue file, plain directory, replay."""
    result = cli(
        "run", "--repo", EXAMPLES / "wordcount", "--init-copy",
        "--issue", EXAMPLES / "wordcount.issue.md", "--env", "local",
        "--model", "replay", "--set", f"model.replay_path={EXAMPLES / 'wordcount.traj'}",
        "--instance-id", "wordcount", "--output-dir", "out",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    recorded = load_trajectory(EXAMPLES / "wordcount.traj")
    produced = load_trajectory(work / "out/wordcount/wordcount.traj")
    assert produced["problem_statement"] == (EXAMPLES / "wordcount.issue.md").read_text()
    assert (work / "out/wordcount/wordcount.patch").read_text() == recorded["info"]["submission"]
    assert "3 passed" in result.stdout  # the example's tests, run by the agent


def test_empty_submission_has_a_prediction_but_no_patch(work: Path, repo: Path) -> None:
    result = cli(
        "run", "--repo", repo, "--issue", "Nothing to do.", "--env", "local",
        "--instance-id", "noop", "--output-dir", "out", *SCRIPTED,
    )  # fmt: skip
    assert result.exit_code == 3, result.stderr  # no patch
    assert "patch: none (empty diff)" in result.stdout
    assert result.stdout.splitlines()[-1] == (
        "result: no patch was produced (nothing changed); the model submitted"
    )
    assert sorted(path.name for path in (work / "out" / "noop").iterdir()) == [
        "noop.pred",
        "noop.traj",
    ]
    prediction = json.loads((work / "out" / "noop" / "noop.pred").read_text())
    assert prediction["model_patch"] == ""


def test_long_one_line_issue_is_text_not_a_path(work: Path, repo: Path) -> None:
    issue = "The greeting is printed in lower case but the style guide wants it capitalised. " * 4
    result = cli(
        "run", "--repo", repo, "--issue", issue, "--env", "local", "--instance-id", "long",
        "--output-dir", "out", *SCRIPTED,
    )  # fmt: skip
    assert result.exit_code == 3, result.stderr  # no patch
    assert load_trajectory(work / "out/long/long.traj")["problem_statement"] == issue


def snapshot(root: Path) -> dict[str, tuple[bytes | str, int, int]]:
    """Every entry under `root`: content (or link target), mode and modification time."""
    entries: dict[str, tuple[bytes | str, int, int]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            content: bytes | str = os.readlink(path)
        elif path.is_file():
            content = path.read_bytes()
        else:
            content = "<dir>"
        entries[str(path.relative_to(root))] = (content, info.st_mode, info.st_mtime_ns)
    return entries


def test_init_copy_works_on_a_copy_and_leaves_the_directory_untouched(work: Path) -> None:
    plain = work / "plain"
    (plain / "pkg").mkdir(parents=True)
    (plain / "pkg" / "greet.py").write_text("def greet():\n    return 'hi'\n")
    (plain / "run.sh").write_text("#!/bin/sh\necho run\n")
    (plain / "run.sh").chmod(0o755)
    (plain / "link").symlink_to("pkg/greet.py")
    before = snapshot(plain)
    replies = [
        "```\nopen pkg/greet.py\n```\n",
        "```\nedit 2:2\n    return 'hello'\nend_of_edit\n```\n",
        "```\nrm run.sh && echo new > added.txt\n```\n",
        SUBMIT,
    ]
    result = cli(
        "run", "--repo", plain, "--init-copy", "--issue", "Say hello.", "--env", "local",
        "--instance-id", "copy", "--output-dir", "out",
        "--model", "scripted", "--set", f"model.script={json.dumps(replies)}",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    patch = (work / "out/copy/copy.patch").read_text()
    assert "-    return 'hi'\n+    return 'hello'\n" in patch
    assert "deleted file mode 100755" in patch and "+new\n" in patch
    assert snapshot(plain) == before
    assert not (plain / ".git").exists()


def test_configs_lists_the_builtin_configs_with_their_description(work: Path) -> None:
    result = cli("configs")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    names = [line.split()[0] for line in lines]
    assert {"default", "shell_only", "local"} <= set(names)
    shown = dict(zip(names, lines, strict=True))
    assert "shell-only baseline" in shown["shell_only"]
    assert "(no description)" not in result.stdout


def test_a_builtin_config_in_a_group_is_listed_and_runs_by_name(
    work: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builtin = work / "configs"
    (builtin / "ablations").mkdir(parents=True)
    for path in builtin_config_dir().glob("*.yaml"):
        (builtin / path.name).write_text(path.read_text())
    (work / "examples").symlink_to(EXAMPLES)  # where the demonstration path of the configs points
    (builtin / "ablations" / "window_30.yaml").write_text(
        'extends: default\ndescription: "a 30-line window"\naci:\n  window: 30\n'
    )
    monkeypatch.setattr("swe_aci.configuration.builtin_config_dir", lambda: builtin)
    listed = cli("configs")
    assert "ablations/window_30  a 30-line window" in listed.stdout
    result = cli(
        "run", "--repo", repo, "--issue", "Nothing to do.", "--config", "ablations/window_30",
        "--env", "local", "--instance-id", "w30", "--output-dir", "out", *SCRIPTED,
    )  # fmt: skip
    assert result.exit_code == 3, result.stderr  # no patch
    config = load_trajectory(work / "out/w30/w30.traj")["config"]
    assert config["aci"]["window"] == 30


def test_a_rerun_with_an_empty_diff_leaves_no_earlier_patch(work: Path, repo: Path) -> None:
    common = ["--repo", repo, "--env", "local", "--instance-id", "again", "--output-dir", "out"]
    first = cli("run", *common, "--issue", "Say hello.", "--model", "scripted", "--set",
                f"model.script={json.dumps(EDIT_SESSION)}")  # fmt: skip
    assert first.exit_code == 0 and (work / "out/again/again.patch").exists()
    second = cli("run", *common, "--issue", "Nothing to do.", *SCRIPTED)
    assert second.exit_code == 3, second.stderr  # no patch
    assert sorted(path.name for path in (work / "out" / "again").iterdir()) == [
        "again.pred",
        "again.traj",
    ]
    assert json.loads((work / "out/again/again.pred").read_text())["model_patch"] == ""
