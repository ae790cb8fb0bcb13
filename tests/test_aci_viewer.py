"""The file viewer: open, goto, scroll_down, scroll_up, create."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fixtures.aci.support import Session, assert_golden, run, sessions


@pytest.fixture
def session(make_repo: Callable[..., Path]) -> Iterator[Session]:
    yield from sessions(make_repo)


def numbered(count: int, prefix: str = "line") -> str:
    return "".join(f"{prefix} {n}\n" for n in range(1, count + 1))


def shown(output: str) -> tuple[int, int, int, int]:
    """(first row, last row, lines above, lines below) of a viewer output."""
    rows = [int(m) for m in re.findall(r"^(\d+):", output, re.M)]
    above = re.search(r"^\((\d+) more lines above\)$", output, re.M)
    below = re.search(r"^\((\d+) more lines below\)$", output, re.M)
    return rows[0], rows[-1], int(above[1]) if above else 0, int(below[1]) if below else 0


def test_small_file_is_shown_whole(session: Session) -> None:
    aci = session({"src/small.py": "import os\n\n\ndef f():\n    return os.sep\n"})
    assert_golden("open_small", run(aci, "open src/small.py"))
    assert aci.state()["open_file"] == f"{aci.env.repo_path}/src/small.py"


def test_open_at_line_puts_it_on_row_16(session: Session) -> None:
    aci = session({"big.txt": numbered(250)})
    output = run(aci, "open big.txt 120")
    assert_golden("open_big_at_120", output)
    assert shown(output) == (105, 204, 104, 46)
    assert shown(run(aci, "goto 120")) == (105, 204, 104, 46)


def test_scrolling_moves_98_lines_and_says_when_it_reaches_an_end(session: Session) -> None:
    aci = session({"big.txt": numbered(250)})
    assert shown(run(aci, "open big.txt")) == (1, 100, 0, 150)
    assert run(aci, "scroll_up") == "(Reached the start of the file)"
    assert shown(run(aci, "scroll_down")) == (99, 198, 98, 52)
    assert shown(run(aci, "scroll_down")) == (151, 250, 150, 0)
    assert run(aci, "scroll_down") == "(Reached the end of the file)"
    assert shown(run(aci, "scroll_up")) == (53, 152, 52, 98)


def test_window_placement_is_clamped_at_both_ends(session: Session) -> None:
    aci = session({"big.txt": numbered(250)})
    assert shown(run(aci, "open big.txt 3")) == (1, 100, 0, 150)
    assert shown(run(aci, "goto 249")) == (151, 250, 150, 0)
    assert shown(run(aci, "goto 0")) == (1, 100, 0, 150)


def test_demo_placement_on_a_1997_line_file(session: Session) -> None:
    aci = session({"fields.py": numbered(1997)})
    assert shown(run(aci, "open fields.py 1474")) == (1459, 1558, 1458, 439)


def test_open_beyond_the_end_warns_and_clamps(session: Session) -> None:
    aci = session({"big.txt": numbered(250)})
    output = run(aci, "open big.txt 400")
    assert_golden("open_beyond_end", output.split("\n(150 more lines above)")[0])
    assert shown(output) == (151, 250, 150, 0)


def test_open_at_zero_warns_and_starts_at_the_top(session: Session) -> None:
    aci = session({"small.txt": numbered(3)})
    assert run(aci, "open small.txt 0") == (
        "Warning: <line_number> (0) is less than 1\n"
        "Warning: Setting <line_number> to 1\n"
        "[File: {REPO}/small.txt (3 lines total)]\n1:line 1\n2:line 2\n3:line 3"
    )


def test_empty_file_shows_only_the_header(session: Session) -> None:
    aci = session({"empty.txt": ""})
    assert run(aci, "open empty.txt") == "[File: {REPO}/empty.txt (0 lines total)]"
    assert run(aci, "scroll_down") == "(Reached the end of the file)"


def test_last_line_without_newline_counts(session: Session) -> None:
    aci = session({"tail.txt": "a\nb"})
    assert run(aci, "open tail.txt") == "[File: {REPO}/tail.txt (2 lines total)]\n1:a\n2:b"


def test_lines_keep_their_text_verbatim(session: Session) -> None:
    aci = session({"odd.txt": "tab\there\nform\x0cfeed\ncrlf\r\n  indented\n"})
    assert run(aci, "open odd.txt") == (
        "[File: {REPO}/odd.txt (4 lines total)]\n"
        "1:tab\there\n2:form\x0cfeed\n3:crlf\r\n4:  indented"
    )


@pytest.mark.parametrize(
    ("content", "total"),
    [(b"\x00\x01binary\nmore\x00\n", 2), (b"caf\xe9 latin-1\n", 1)],
    ids=["nul-bytes", "not-utf8"],
)
def test_binary_file_shows_header_and_notice(session: Session, content: bytes, total: int) -> None:
    aci = session({"blob.bin": content})
    assert run(aci, "open blob.bin") == (
        f"[File: {{REPO}}/blob.bin ({total} lines total)]\n"
        "(This file is binary or not valid UTF-8 text, so its content is not shown.)"
    )
    assert aci.state()["open_file"].endswith("/blob.bin")


def test_path_with_spaces(session: Session) -> None:
    aci = session({"my dir/my file.py": "x = 1\ny = 2\n"})
    assert run(aci, 'open "my dir/my file.py" 2') == (
        "[File: {REPO}/my dir/my file.py (2 lines total)]\n1:x = 1\n2:y = 2"
    )


def test_relative_paths_follow_the_shell_directory(session: Session) -> None:
    aci = session({"pkg/mod.py": "a = 1\n", "top.py": "b = 2\n"})
    assert run(aci, "cd pkg") == ""
    assert run(aci, "open mod.py").startswith("[File: {REPO}/pkg/mod.py (1 lines total)]")
    assert run(aci, "open ../top.py").startswith("[File: {REPO}/top.py (1 lines total)]")
    assert aci.state() == {
        "open_file": f"{aci.env.repo_path}/top.py",
        "working_dir": f"{aci.env.repo_path}/pkg",
    }


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("open", "Usage: open <file>"),
        (
            "open a.txt x",
            "Usage: open <file> [<line_number>]\nError: <line_number> must be a number",
        ),
        (
            "open a.txt -5",
            "Usage: open <file> [<line_number>]\nError: <line_number> must be a number",
        ),
        ("open missing.txt", "File {REPO}/missing.txt not found"),
        (
            "open sub",
            "Error: {REPO}/sub is a directory. You can only open files. "
            "Use cd or ls to navigate directories.",
        ),
        ("goto 1", "No file open. Use the open command first."),
        ("scroll_down", "No file open. Use the open command first."),
        ("scroll_up", "No file open. Use the open command first."),
    ],
)
def test_viewer_errors_without_an_open_file(session: Session, action: str, expected: str) -> None:
    aci = session({"a.txt": "a\n", "sub/b.txt": "b\n"})
    assert run(aci, action) == expected
    assert aci.state()["open_file"] == "n/a"


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("goto", "Usage: goto <line>"),
        ("goto x", "Usage: goto <line>\nError: <line> must be a number"),
        ("goto 4", "Error: <line> must be less than or equal to 3"),
        ("open missing.txt", "File {REPO}/missing.txt not found"),
    ],
)
def test_errors_keep_the_open_file_and_window(session: Session, action: str, expected: str) -> None:
    aci = session({"a.txt": numbered(3)})
    run(aci, "open a.txt")
    assert run(aci, action) == expected
    assert aci.state()["open_file"] == f"{aci.env.repo_path}/a.txt"


def test_create_makes_a_one_line_file_and_opens_it(session: Session) -> None:
    aci = session({"a.txt": "a\n"})
    assert_golden("create_new", run(aci, "create new/dir/reproduce.py"))
    assert (Path(aci.env.repo_path) / "new/dir/reproduce.py").read_bytes() == b"\n"
    assert aci.state()["open_file"] == f"{aci.env.repo_path}/new/dir/reproduce.py"


def test_create_an_existing_file_is_an_error_and_opens_it(session: Session) -> None:
    aci = session({"a.txt": "keep me\n"})
    assert run(aci, "create a.txt") == (
        "Error: File '{REPO}/a.txt' already exists.\n[File: {REPO}/a.txt (1 lines total)]\n1:keep me"
    )
    assert (Path(aci.env.repo_path) / "a.txt").read_text() == "keep me\n"
    assert run(aci, "create") == "Usage: create <filename>"
