"""The ACI object: command docs, check, execute (splitting, shell, timeouts), state, submit."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from fixtures.aci.support import Session, run, sessions
from swe_aci.aci.config import ACIConfig
from swe_aci.aci.interface import ActionProblem, CheckedAction

BLOCKED = "Interactive operation '{}' is not supported by this environment"
MISUSE = (
    "Interface commands run alone on their line, as `{}` (quote an argument that holds "
    "spaces): not in a pipe, not chained with ;, && or ||, not inside a compound command, not "
    "redirected, not after VAR=value, with no extra arguments."
)
OPEN_USAGE = "open <path> [<line_number>]"


@pytest.fixture
def session(make_repo: Callable[..., Path]) -> Iterator[Session]:
    yield from sessions(make_repo)


# -- docs and config -------------------------------------------------------------------------


def test_command_docs_follow_the_config(session: Session) -> None:
    aci = session({"a.txt": "a\n"})
    docs = aci.command_docs()
    assert [doc.name for doc in docs] == [
        "open", "goto", "scroll_up", "scroll_down", "create", "edit",
        "search_file", "search_dir", "find_file", "submit",
    ]  # fmt: skip
    edit = docs[5]
    assert edit.signature == "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit"
    assert edit.ends == ("end_of_edit",)
    assert [(a.name, a.type, a.required) for a in edit.arguments] == [
        ("start_line", "integer", True),
        ("end_line", "integer", True),
        ("replacement_text", "string", True),
    ]
    assert docs[2].docstring == "moves the window up 100 lines"
    assert all("\n" not in doc.docstring for doc in docs)
    assert "literal string" in docs[6].docstring and "literal string" in docs[7].docstring

    small = session({"a.txt": "a\n"}, commands=["submit", "open"], window=40)
    assert [doc.name for doc in small.command_docs()] == ["submit", "open"]


def test_disabled_commands_are_refused(session: Session) -> None:
    aci = session({"a.txt": "a\n"}, commands=["submit"])
    refusal = "The command 'open' is not available in this interface"
    for action in ("open a.txt", "ls\nopen a.txt", "PATH=/x open a.txt", "ls | env open a.txt"):
        assert aci.check(action) == ActionProblem("blocked", refusal)
        assert run(aci, action) == refusal
    assert aci.state()["open_file"] == "n/a"


def test_config_rejects_unknown_commands_and_fields() -> None:
    with pytest.raises(ValidationError, match="unknown ACI command"):
        ACIConfig(commands=["open", "vim"])
    with pytest.raises(ValidationError):
        ACIConfig(windw=10)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="overlap must be smaller"):
        ACIConfig(window=5, overlap=5)
    with pytest.raises(ValidationError, match=r"only use the placeholder \{timeout\}"):
        ACIConfig(timeout_message="stopped after {seconds} s")


# -- check -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "entry"),
    [
        ("vim setup.py", "vim"),
        ("vi x", "vi"),
        ("nano x", "nano"),
        ("emacs -nw x", "emacs"),
        ("less README", "less"),
        ("nohup python server.py &", "nohup"),
        ("gdb ./prog", "gdb"),
        ("python", "python"),
        ("python3", "python3"),
        ("ipython", "ipython"),
        ("bash", "bash"),
        ("sh", "sh"),
        ("tail -f log.txt", "tail -f"),
        ("tail -n 5 -f log.txt", "tail -f"),
        ("ls && vim x", "vim"),
        ("cd src; EDITOR=x vim x", "vim"),
        ("echo ok\n  python  \n", "python"),
        ("open a.txt\nless a.txt", "less"),
        ("env vi x", "vi"),
        ("env -i TERM=dumb vim x", "vim"),
        ("command vi x", "vi"),
        ("exec vim x", "vim"),
        ("exec bash", "bash"),
        ("sudo nano x", "nano"),
        ("sudo -u root nano x", "nano"),
        ("ls | xargs vi", "vi"),
        ("find . -name '*.py' | xargs -I {} vim {}", "vim"),
        ("timeout 5 vim x", "vim"),
        ("nice -n 5 env vim x", "vim"),
        ("/usr/bin/vim x", "vim"),
        ("bash -c 'vim x'", "vim"),
        ('sh -ec "cd src && nano x"', "nano"),
        ("eval vim x", "vim"),
        ("env python", "python"),
        ("tail -fn 5 log.txt", "tail -f"),
        ("if true; then vim x; fi", "vim"),
    ],
)
def test_interactive_programs_are_refused(session: Session, action: str, entry: str) -> None:
    aci = session({"a.txt": "a\n"})
    assert aci.check(action) == ActionProblem("blocked", BLOCKED.format(entry))
    assert aci.execute(action).output == BLOCKED.format(entry)
    assert aci.state()["open_file"] == "n/a"


@pytest.mark.parametrize(
    "action",
    [
        "python reproduce.py",
        "python -c 'print(1)'",
        "echo 'print(1)' | python",
        "bash run.sh",
        "git status",
        "tail -n 5 a.txt",
        "echo vim; echo 'nano'",
        "cat > notes.txt <<EOF\nvim\npython\nEOF",
        "grep -r less .",
        "command -v vim",
        "env FOO=1 python reproduce.py",
        "xargs grep vim",
        "timeout 5 python -m pytest",
        "bash -c 'echo vim'",
        "tail -n 5 file-f.txt",
        "",
    ],
)
def test_ordinary_commands_pass_the_check(session: Session, action: str) -> None:
    assert isinstance(session({"a.txt": "a\n"}).check(action), CheckedAction)


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        ("edit 1:1\nx = 1", "no terminating `end_of_edit` line"),
        ("ls\nend_of_edit", "`end_of_edit` without an edit command"),
        ('open "a.txt', "The arguments of `open` could not be read (No closing quotation)"),
        ("cd src && edit 1:1\nx\nend_of_edit", MISUSE.format("edit <start_line>:<end_line>")),
    ],
)
def test_malformed_forms_are_format_problems(session: Session, action: str, fragment: str) -> None:
    aci = session({"a.txt": "a\n"})
    problem = aci.check(action)
    assert isinstance(problem, ActionProblem)
    assert problem.kind == "format" and fragment in problem.message
    assert fragment in aci.execute(action).output


# -- execute ---------------------------------------------------------------------------------


def test_lines_run_in_order_with_outputs_joined(session: Session) -> None:
    aci = session({"pkg/mod.py": "x = 1\n"})
    output = run(
        aci,
        "echo one\necho two\ncd pkg\nopen mod.py\n"
        "edit 1:1\nx = 2\nend_of_edit\ncat mod.py\nsearch_file x",
    )
    assert output == (
        "one\ntwo\n"
        "[File: {REPO}/pkg/mod.py (1 lines total)]\n1:x = 1\n"
        "[File: {REPO}/pkg/mod.py (1 lines total)]\n1:x = 2\n"
        "File updated. Please review the changes and make sure they are correct (correct "
        "indentation, no duplicate lines, etc). Edit the file again if necessary.\n"
        "x = 2\n"
        'Found 1 matches for "x" in {REPO}/pkg/mod.py:\nLine 1:x = 2\n'
        'End of matches for "x" in {REPO}/pkg/mod.py'
    )


@pytest.mark.parametrize(
    ("action", "usage"),
    [
        ("open a.txt | head -1", OPEN_USAGE),
        ("search_file x a.txt | wc -l", "search_file <search_term> [<file>]"),
        ("cd src && open a.txt", OPEN_USAGE),
        ("open a.txt; echo after", OPEN_USAGE),
        ("false || open a.txt", OPEN_USAGE),
        ("open a.txt > out.txt", OPEN_USAGE),
        ("X=1 open a.txt", OPEN_USAGE),
        ("ls | env open a.txt", OPEN_USAGE),
        ("for f in a.txt; do open $f; done", OPEN_USAGE),
        ("echo $(find_file a.txt)", "find_file <file_name> [<dir>]"),
        ("open a.txt 1 2", OPEN_USAGE),
        ("goto 1 2", "goto <line_number>"),
        ("scroll_down 5", "scroll_down"),
        ("search_file def foo bar", "search_file <search_term> [<file>]"),
        ("rm -f x && submit", "submit"),
        ("echo ok\nopen a.txt && ls", OPEN_USAGE),
    ],
)
def test_aci_commands_misused_as_shell_programs_are_refused(
    session: Session, action: str, usage: str
) -> None:
    aci = session({"a.txt": "a\n"})
    assert aci.check(action) == ActionProblem("format", MISUSE.format(usage))
    assert run(aci, action) == MISUSE.format(usage)
    assert aci.state()["open_file"] == "n/a"
    assert not (Path(aci.env.repo_path) / "out.txt").exists()


@pytest.mark.parametrize(
    "action",
    [
        "open a.txt  # a comment",
        "open 'a.txt'",
        "echo open a.txt",
        "git log --grep=open",
        "cat > notes.txt <<EOF\nopen a.txt | head\nEOF",
        "python -c 'open(\"a.txt\")'",
        "echo a \\\n  open",
    ],
)
def test_aci_command_names_as_plain_words_are_fine(session: Session, action: str) -> None:
    assert isinstance(session({"a.txt": "a\n"}).check(action), CheckedAction)


def test_shell_state_persists_and_heredocs_are_shell_text(session: Session) -> None:
    aci = session({"a.txt": "a\n"})
    assert run(aci, "export GREETING=hi\ncat > made.txt <<'EOF'\nopen a.txt\nEOF") == ""
    assert aci.state()["open_file"] == "n/a"
    assert run(aci, 'echo "$GREETING"; cat made.txt') == "hi\nopen a.txt"


def test_state(session: Session) -> None:
    aci = session({"sub/a.txt": "a\n"})
    root = aci.env.repo_path
    assert aci.state() == {"open_file": "n/a", "working_dir": root}
    run(aci, "open sub/a.txt")
    run(aci, "cd sub")
    assert aci.state() == {"open_file": f"{root}/sub/a.txt", "working_dir": f"{root}/sub"}


def test_a_timed_out_command_keeps_its_output_and_the_shell_goes_on(session: Session) -> None:
    aci = session({"a.txt": "a\n"}, command_timeout=1)
    observation = aci.execute("echo partial; sleep 10")
    assert observation.timed_out and not observation.done
    assert observation.output.startswith("partial\n")
    assert observation.output.endswith(
        "\nEXECUTION TIMED OUT BECAUSE THE COMMAND WAS RUNNING FOR MORE THAN 1 SECONDS."
    )
    assert run(aci, "echo alive") == "alive"


def test_empty_output(session: Session) -> None:
    aci = session({"a.txt": "a\n"})
    observation = aci.execute("true")
    assert observation.output == "" and not observation.done and not observation.timed_out


# -- submit ----------------------------------------------------------------------------------


def git(root: str, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def test_submit_includes_new_files_and_skips_ignored_ones(session: Session) -> None:
    aci = session({".gitignore": "*.log\n", "a.py": "x = 1\n"})
    run(aci, "open a.py\nedit 1:1\nx = 2\nend_of_edit")
    run(aci, "echo new > new.txt; echo noise > debug.log")
    observation = aci.execute("submit")
    assert observation.done and observation.submission == observation.output
    patch = observation.output
    assert "+x = 2" in patch and "new.txt" in patch and "debug.log" not in patch
    assert patch == aci.submission().patch


def test_submit_with_nothing_changed(session: Session) -> None:
    observation = session({"a.py": "x = 1\n"}).execute("submit")
    assert observation.done and observation.submission == "" and observation.output == ""


def test_submit_stops_the_action(session: Session) -> None:
    aci = session({"a.py": "x = 1\n"})
    observation = aci.execute("echo change > b.txt\nsubmit\necho later > c.txt")
    assert observation.done and "b.txt" in (observation.submission or "")
    assert not (Path(aci.env.repo_path) / "c.txt").exists()


def test_submit_sees_a_same_size_edit_made_in_the_checkout_second(session: Session) -> None:
    """Racy git: git compares whole-second mtimes, so an edit that keeps a file's size, made in
    the second the index was written, shows only through the index's own mtime."""
    aci = session({"src.py": "x = 1\n"})
    root = aci.env.repo_path
    path, index = Path(root) / "src.py", Path(root) / ".git" / "index"
    second = int(path.stat().st_mtime) - 100  # the "checkout second", safely in the past
    git(root, "config", "core.trustctime", "false")  # ctime cannot be set; leave it out
    os.utime(path, (second, second))
    # the index now caches that mtime
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, check=False)
    run(aci, "open src.py\nedit 1:1\nx = 2\nend_of_edit")
    for touched in (path, index):
        os.utime(touched, (second + 0.5, second + 0.5))
    assert "+x = 2" in aci.submission().patch


def test_the_aci_marks_an_edit_its_guardrail_rejected_on_the_observation(
    session: Session,
) -> None:
    """A rejected edit is a fact the ACI records (`rejected_edit`), for `edit` and the str_replace
    set alike; nothing downstream reads the observation's text to learn it."""
    aci = session({"mod.py": "x = 1\n"})
    bad = aci.execute("open mod.py\nedit 1:1\nx = (\nend_of_edit")
    assert bad.rejected_edit and "syntax error" in bad.output
    good = aci.execute("edit 1:1\nx = 2\nend_of_edit")
    assert not good.rejected_edit
    echoed = aci.execute("echo 'Your proposed edit has introduced new syntax error(s)'")
    assert not echoed.rejected_edit  # a shell command printing the words is no rejected edit
    str_aci = session({"mod.py": "x = 1\n"}, commands=["str_replace", "insert", "create_file"])
    for action in (
        "str_replace mod.py\nx = 1\nend_of_old_str\nx = (\nend_of_new_str",
        "insert mod.py 1\ny = (\nend_of_new_str",
        "create new.py\nz = (\nend_of_file_text",
    ):
        observation = str_aci.execute(action)
        assert observation.rejected_edit and "NOT applied" in observation.output, action
