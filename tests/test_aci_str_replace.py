"""The str_replace command set: view, create, str_replace, insert, undo_edit (golden observations),
the lint guardrail shared with `edit`, per-file undo, and the multi-line argument layout."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures.aci.support import Session, assert_golden, run, sessions
from swe_aci.aci.commands import BY_NAME
from swe_aci.aci.interface import ACI
from swe_aci.agent.parsing import command_text

SET = ["view", "create_file", "str_replace", "insert", "undo_edit", "search_file", "submit"]
UNITS = (
    '"""Unit conversion helpers."""\n\nFACTORS = {"s": 1, "min": 60, "h": 3600}\n\n\n'
    "def to_seconds(value, unit):\n    return value * FACTORS[unit]\n\n\n"
    "def to_minutes(value, unit):\n    return to_seconds(value, unit) / 60\n"
)
REPO = {"pkg/units.py": UNITS, "pkg/__init__.py": "", "README.md": "# demo\n", ".hidden/x": "x"}


@pytest.fixture
def start(make_repo: Callable[..., Path]) -> Iterator[Callable[..., ACI]]:
    """start(files=REPO, **config): an interface with the str_replace set on a fresh repo."""
    factories = sessions(make_repo)
    session: Session = next(factories)

    def with_set(files: dict[str, str | bytes] | None = None, **config: Any) -> ACI:
        return session(REPO if files is None else files, commands=SET, **config)

    yield with_set
    next(factories, None)  # closes the environments


def read(aci: ACI, name: str) -> bytes:
    return (Path(aci.env.repo_path) / name).read_bytes()


def replace(path: str, old: str, new: str) -> str:
    return f"str_replace {path}\n{old}\nend_of_old_str\n{new}\nend_of_new_str"


# -- view ------------------------------------------------------------------------------------


def test_view_a_file_a_range_and_a_directory(start: Callable[..., ACI]) -> None:
    aci = start()
    assert_golden("sr_view_file", run(aci, "view pkg/units.py"))
    assert_golden("sr_view_range", run(aci, "view pkg/units.py 6 -1"))
    assert_golden("sr_view_directory", run(aci, "view ."))  # two levels, .hidden and .git left out


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("view pkg/units.py 0 3", "Error: start_line 0 is outside the file's lines 1-11"),
        ("view pkg/units.py 5 99", "Error: end_line must be from start_line (5) to the last line "
                                   "(11), or -1"),
        ("view pkg/units.py 5 4", "Error: end_line must be from start_line (5)"),
        ("view pkg/units.py x 4", "Error: start_line and end_line must be numbers"),
        ("view pkg/units.py 5", "Usage: view <path> [<start_line> <end_line>]"),
        ("view pkg 1 2", "Error: a line range cannot be given for a directory"),
        ("view nowhere.py", "The path {REPO}/nowhere.py does not exist."),
    ],
)  # fmt: skip
def test_view_refuses_bad_ranges_and_paths(
    start: Callable[..., ACI], action: str, message: str
) -> None:
    assert message in run(start(), action)


def test_view_of_a_large_file_is_clipped_at_whole_lines(start: Callable[..., ACI]) -> None:
    aci = start({"big.txt": "".join(f"line {n}\n" for n in range(1, 201))}, view_max_chars=120)
    assert_golden("sr_view_clipped", run(aci, "view big.txt"))


def test_view_of_binary_and_empty_files(start: Callable[..., ACI]) -> None:
    aci = start({"blob.bin": b"\x00\x01", "empty.txt": ""})
    assert run(aci, "view blob.bin") == (
        "{REPO}/blob.bin is binary or not valid UTF-8 text, so its content is not shown."
    )
    assert run(aci, "view empty.txt") == "{REPO}/empty.txt is empty."


def test_a_directory_listing_is_capped(start: Callable[..., ACI]) -> None:
    aci = start({f"many/f{n:03}.txt": "" for n in range(250)})
    output = run(aci, "view many")
    assert output.count("\n{REPO}/many/f") == 200
    assert output.endswith("(50 more entries not shown; view a subdirectory)")


# -- create ----------------------------------------------------------------------------------


def test_create_writes_the_text_with_a_final_newline(start: Callable[..., ACI]) -> None:
    aci = start()
    action = (
        "create tools/reproduce.py\nfrom pkg.units import to_seconds\n\nprint(1)\nend_of_file_text"
    )
    assert_golden("sr_create", run(aci, action))
    assert read(aci, "tools/reproduce.py") == b"from pkg.units import to_seconds\n\nprint(1)\n"
    assert run(aci, "create README.md\nnew\nend_of_file_text") == (
        "Error: {REPO}/README.md already exists; create does not overwrite files. Change it "
        "with str_replace or insert."
    )
    assert read(aci, "README.md") == b"# demo\n"


def test_create_of_a_python_file_with_a_syntax_error_creates_nothing(
    start: Callable[..., ACI],
) -> None:
    aci = start()
    assert_golden("sr_create_lint", run(aci, "create bad.py\ndef f(:\n    pass\nend_of_file_text"))
    assert not (Path(aci.env.repo_path) / "bad.py").exists()


# -- str_replace -----------------------------------------------------------------------------


def test_str_replace_shows_a_numbered_snippet(start: Callable[..., ACI]) -> None:
    aci = start()
    output = run(aci, replace("pkg/units.py", "FACTORS[unit]", "FACTORS[unit] * 1.0"))
    assert_golden("sr_str_replace", output)
    assert (
        read(aci, "pkg/units.py") == UNITS.replace("FACTORS[unit]", "FACTORS[unit] * 1.0").encode()
    )


def test_str_replace_needs_exactly_one_occurrence(start: Callable[..., ACI]) -> None:
    aci = start()
    assert_golden("sr_str_replace_many", run(aci, replace("pkg/units.py", "value, unit", "v, u")))
    assert_golden("sr_str_replace_none", run(aci, replace("pkg/units.py", "FACTOR[unit]", "x")))
    assert run(aci, replace("pkg/units.py", "to_minutes", "to_minutes")) == (
        "No replacement was performed: old_str and new_str are the same."
    )
    assert run(aci, "str_replace pkg/units.py\nend_of_old_str\nx\nend_of_new_str") == (
        "No replacement was performed: old_str is empty."
    )
    assert read(aci, "pkg/units.py") == UNITS.encode()


def test_overlapping_occurrences_count(start: Callable[..., ACI]) -> None:
    aci = start({"a.txt": "aaa\n"})
    assert "old_str occurs 2 times" in run(aci, replace("a.txt", "aa", "b"))


def test_a_str_replace_that_breaks_the_syntax_leaves_the_file_unchanged(
    start: Callable[..., ACI],
) -> None:
    aci = start()
    output = run(aci, replace("pkg/units.py", "FACTORS[unit]", "FACTOR[unit]"))
    assert_golden("sr_str_replace_lint", output)
    assert read(aci, "pkg/units.py") == UNITS.encode()
    unlinted = start(lint=False)  # configurable exactly like edit
    assert "has been edited" in run(
        unlinted, replace("pkg/units.py", "FACTORS[unit]", "FACTOR[unit]")
    )


def test_pre_existing_errors_elsewhere_do_not_block_a_str_replace(
    start: Callable[..., ACI],
) -> None:
    aci = start({"mod.py": "import os\n\nprint(undefined_name)\n"})
    assert "has been edited" in run(aci, replace("mod.py", "import os", "import sys"))


def test_deleting_lines_and_keeping_line_endings(start: Callable[..., ACI]) -> None:
    aci = start({"crlf.txt": b"one\r\ntwo\r\nthree\r\n", "open.txt": b"a\nb"})
    run(aci, replace("crlf.txt", "two\n", ""))  # old_str ends with a newline: the line goes
    assert read(aci, "crlf.txt") == b"one\r\nthree\r\n"
    run(aci, replace("open.txt", "a", "A"))
    assert read(aci, "open.txt") == b"A\nb"  # no final newline added


# -- insert ----------------------------------------------------------------------------------


def test_insert_after_a_line(start: Callable[..., ACI]) -> None:
    aci = start()
    assert_golden("sr_insert", run(aci, "insert pkg/units.py 3\nMINUTE = 60\nend_of_new_str"))
    assert read(aci, "pkg/units.py").split(b"\n")[3] == b"MINUTE = 60"
    run(aci, "insert README.md 0\n<!-- top -->\nend_of_new_str")
    assert read(aci, "README.md") == b"<!-- top -->\n# demo\n"
    assert "insert_line must be a number from 0 (before the first line) to 2" in run(
        aci, "insert README.md 3\nx\nend_of_new_str"
    )


def test_an_insert_that_breaks_the_indentation_is_refused(start: Callable[..., ACI]) -> None:
    aci = start()
    output = run(aci, "insert pkg/units.py 6\n  x = 1\nend_of_new_str")
    assert output.startswith("Your edit was NOT applied: it introduces new syntax error(s).")
    assert "{REPO}/pkg/units.py is unchanged." in output
    assert read(aci, "pkg/units.py") == UNITS.encode()


# -- undo_edit -------------------------------------------------------------------------------


def test_undo_takes_back_the_edits_of_one_file_in_turn(start: Callable[..., ACI]) -> None:
    aci = start()
    run(aci, replace("pkg/units.py", "FACTORS[unit]", "FACTORS[unit] * 1.0"))
    run(aci, "insert pkg/units.py 0\n# header\nend_of_new_str")
    run(aci, "insert README.md 1\nmore\nend_of_new_str")
    assert_golden("sr_undo", run(aci, "undo_edit pkg/units.py"))
    assert (
        read(aci, "pkg/units.py") == UNITS.replace("FACTORS[unit]", "FACTORS[unit] * 1.0").encode()
    )
    run(aci, "undo_edit pkg/units.py")
    assert read(aci, "pkg/units.py") == UNITS.encode()
    assert read(aci, "README.md") == b"# demo\nmore\n"  # another file's history is its own
    assert run(aci, "undo_edit pkg/units.py") == (
        "Error: there is no edit of {REPO}/pkg/units.py to undo (undo_edit takes back the edits "
        "of create, str_replace and insert)."
    )


def test_undo_remembers_the_last_ten_edits_of_a_file(start: Callable[..., ACI]) -> None:
    """Each file's history is bounded: the oldest edits fall off."""
    aci = start({"n.txt": "0\n"})
    for number in range(12):
        run(aci, replace("n.txt", str(number), str(number + 1)))
    for _ in range(10):
        assert run(aci, "undo_edit n.txt").startswith("Last edit to {REPO}/n.txt undone.")
    assert read(aci, "n.txt") == b"2\n"
    assert run(aci, "undo_edit n.txt").startswith("Error: there is no edit of {REPO}/n.txt")


def test_undo_of_a_create_removes_the_file(start: Callable[..., ACI]) -> None:
    aci = start()
    run(aci, "create notes.txt\nhello\nend_of_file_text")
    assert run(aci, "undo_edit notes.txt") == (
        "Last edit to {REPO}/notes.txt undone: the file it created was removed."
    )
    assert not (Path(aci.env.repo_path) / "notes.txt").exists()
    assert aci.untouched_creations() == []


def test_untouched_creations_are_the_created_files_nothing_changed(
    start: Callable[..., ACI],
) -> None:
    aci = start()
    run(aci, "create reproduce.py\nprint(1)\nend_of_file_text")
    run(aci, "create helper.py\nx = 1\nend_of_file_text")
    run(aci, replace("helper.py", "x = 1", "x = 2"))
    root = aci.env.repo_path
    assert aci.untouched_creations() == [f"{root}/reproduce.py"]
    aci.execute("echo '# changed' >> reproduce.py")  # a change through the shell counts too
    assert aci.untouched_creations() == []


# -- the layout of multi-line arguments ------------------------------------------------------


def test_a_missing_terminator_is_a_format_error_with_the_layout(start: Callable[..., ACI]) -> None:
    aci = start()
    problem = aci.check("str_replace pkg/units.py\nFACTORS\nend_of_old_str\nFACTORZ")
    assert problem is not None and problem.kind == "format"
    assert problem.message == (
        "The str_replace command has no terminating `end_of_new_str` line. The str_replace "
        "layout is:\nstr_replace <path>\n<old_str>\nend_of_old_str\n<new_str>\nend_of_new_str"
    )
    stray = aci.check("end_of_new_str")
    assert stray is not None
    assert stray.message.startswith("`end_of_new_str` without a str_replace or insert command")


@pytest.mark.parametrize(
    ("old", "new"),
    [("two\n", ""), ("two", "2"), ("two\n", "2\n2\n"), ("o\nt", "o t")],
    ids=["delete-line", "in-line", "grow", "across-lines"],
)
def test_function_call_arguments_reach_the_command_exactly(
    start: Callable[..., ACI], old: str, new: str
) -> None:
    """The tool-calling path writes the blocks so that their lines give the strings back."""
    aci = start({"f.txt": "one\ntwo\nthree\n"})
    doc = BY_NAME["str_replace"].doc(aci.config)
    aci.execute(command_text(doc, {"path": "f.txt", "old_str": old, "new_str": new}))
    assert read(aci, "f.txt") == "one\ntwo\nthree\n".replace(old, new, 1).encode()
