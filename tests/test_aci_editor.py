"""The editor and its lint guardrail."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fixtures.aci.support import Session, assert_golden, run, sessions
from swe_aci.aci import lint
from swe_aci.aci.interface import ACI

UPDATED = (
    "File updated. Please review the changes and make sure they are correct (correct indentation, "
    "no duplicate lines, etc). Edit the file again if necessary."
)
FIVE = "".join(f"l{n}\n" for n in range(1, 6))


@pytest.fixture
def session(make_repo: Callable[..., Path]) -> Iterator[Session]:
    yield from sessions(make_repo)


def read(aci: ACI, name: str) -> bytes:
    return (Path(aci.env.repo_path) / name).read_bytes()


def python_module(functions: int) -> str:
    return "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(functions))


def test_replace_a_line(session: Session) -> None:
    aci = session({"mod.py": "def f(x):\n    return x\n"})
    run(aci, "open mod.py")
    assert_golden("edit_replace", run(aci, "edit 2:2\n    return x + 1\nend_of_edit"))
    assert read(aci, "mod.py") == b"def f(x):\n    return x + 1\n"


@pytest.mark.parametrize(
    ("action", "content"),
    [
        ("edit 6:5\nl6\nl7\nend_of_edit", "l1 l2 l3 l4 l5 l6 l7"),
        ("edit 6:9\nl6\nend_of_edit", "l1 l2 l3 l4 l5 l6"),
        ("edit 3:2\nnew\nend_of_edit", "l1 l2 new l3 l4 l5"),
        ("edit 1:0\nfirst\nend_of_edit", "first l1 l2 l3 l4 l5"),
        ("edit 2:4\nend_of_edit", "l1 l5"),
        ("edit 2:3\n  a\n\tb\n\nend_of_edit", "l1|  a|\tb||l4|l5"),
        ("edit 4:100\nend_of_edit", "l1 l2 l3"),
        ("edit 1:5\nend_of_edit", ""),
    ],
    ids=[
        "append",
        "append-end-beyond",
        "insert",
        "insert-top",
        "delete",
        "verbatim",
        "clamp",
        "all",
    ],
)
def test_edit_semantics(session: Session, action: str, content: str) -> None:
    aci = session({"f.txt": FIVE})
    run(aci, "open f.txt")
    output = run(aci, action)
    assert output.endswith(UPDATED)
    lines = content.split("|") if "|" in content else content.split()
    assert read(aci, "f.txt").decode() == "".join(f"{line}\n" for line in lines)


def test_success_window_is_centred_on_the_edit(session: Session) -> None:
    aci = session({"big.txt": "".join(f"line {n}\n" for n in range(1, 301))})
    run(aci, "open big.txt")
    output = run(aci, "edit 200:200\nchanged\nend_of_edit")
    assert output.splitlines()[1:3] == ["(149 more lines above)", "150:line 150"]
    assert "199:line 199\n200:changed\n201:line 201" in output
    assert run(aci, "scroll_down").splitlines()[2] == "201:line 201"


@pytest.mark.parametrize(
    ("action", "content"),
    [
        ("edit 1:1\nA\nend_of_edit", b"A\nb"),  # the last line is not reached: stays open
        ("edit 2:1\nnew\nend_of_edit", b"a\nnew\nb"),
        ("edit 2:2\nB\nend_of_edit", b"a\nB\n"),  # the edit reaches the last line
        ("edit 3:2\nc\nend_of_edit", b"a\nb\nc\n"),
        ("edit 2:2\nend_of_edit", b"a\n"),
    ],
    ids=["before-last", "insert-before-last", "last", "append", "delete-last"],
)
def test_a_missing_final_newline_stays_missing_unless_the_edit_reaches_it(
    session: Session, action: str, content: bytes
) -> None:
    aci = session({"f.txt": b"a\nb"})
    run(aci, "open f.txt")
    assert run(aci, action).endswith(UPDATED)
    assert read(aci, "f.txt") == content


@pytest.mark.parametrize(
    ("original", "action", "content"),
    [
        (b"a\r\nb\r\nc\r\n", "edit 2:2\nB\nX\nend_of_edit", b"a\r\nB\r\nX\r\nc\r\n"),
        (b"a\r\nb\r\n", "edit 3:2\nc\nend_of_edit", b"a\r\nb\r\nc\r\n"),
        (b"a\r\nb", "edit 1:1\nA\nend_of_edit", b"A\r\nb"),
        (b"a\r\nb", "edit 3:2\nc\nend_of_edit", b"a\r\nb\r\nc\r\n"),
        (b"a\r\nb\n", "edit 1:1\nA\nend_of_edit", b"A\nb\n"),  # mixed: left as it comes
    ],
    ids=["replace", "append", "no-final-newline", "append-after-open-line", "mixed"],
)
def test_crlf_files_keep_crlf(
    session: Session, original: bytes, action: str, content: bytes
) -> None:
    aci = session({"f.txt": original})
    run(aci, "open f.txt")
    assert run(aci, action).endswith(UPDATED)
    assert read(aci, "f.txt") == content


def test_crlf_python_files_are_linted_and_keep_crlf(session: Session) -> None:
    aci = session({"mod.py": b"def f(x):\r\n    return x\r\n"})
    run(aci, "open mod.py")
    assert "- F821 undefined name 'y'" in run(aci, "edit 2:2\n    return y\nend_of_edit")
    assert run(aci, "edit 2:2\n    return x + 1\nend_of_edit").endswith(UPDATED)
    assert read(aci, "mod.py") == b"def f(x):\r\n    return x + 1\r\n"


def test_edit_an_empty_and_a_created_file(session: Session) -> None:
    aci = session({"empty.txt": ""})
    run(aci, "open empty.txt")
    assert run(aci, "edit 1:1\nhello\nend_of_edit") == (
        "[File: {REPO}/empty.txt (1 lines total)]\n1:hello\n" + UPDATED
    )
    run(aci, "create new.py")
    run(aci, "edit 1:1\nimport sys\nprint(sys.argv)\nend_of_edit")
    assert read(aci, "new.py") == b"import sys\nprint(sys.argv)\n"


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("", "Usage: edit <start_line>:<end_line>"),
        ("3", "Usage: edit <start_line>:<end_line>"),
        ("a:3", "Usage: edit <start_line>:<end_line>\nError: start_line must be a number"),
        ("3:b", "Usage: edit <start_line>:<end_line>\nError: end_line must be a number"),
        ("-1:2", "Usage: edit <start_line>:<end_line>\nError: start_line must be a number"),
        ("0:1", "Usage: edit <start_line>:<end_line>\nError: start_line must be at least 1"),
        (
            "4:2",
            "Usage: edit <start_line>:<end_line>\nError: end_line must be at least start_line - 1 "
            "(use edit 4:3 to insert before line 4)",
        ),
        (
            "7:9",
            "Usage: edit <start_line>:<end_line>\nError: start_line must be less than or equal to 6 "
            "(the file has 5 lines)",
        ),
    ],
)
def test_invalid_ranges_leave_the_file_alone(session: Session, spec: str, error: str) -> None:
    aci = session({"f.txt": FIVE})
    run(aci, "open f.txt")
    assert run(aci, f"edit {spec}\nx\nend_of_edit") == error
    assert read(aci, "f.txt") == FIVE.encode()


def test_edit_needs_an_open_file(session: Session) -> None:
    aci = session({"f.txt": FIVE})
    assert run(aci, "edit 1:1\nx\nend_of_edit") == "No file open. Use the `open` command first."


def test_binary_files_are_not_edited(session: Session) -> None:
    aci = session({"b.bin": b"\x00\x01\n"})
    run(aci, "open b.bin")
    assert run(aci, "edit 1:1\nx\nend_of_edit") == (
        "Error: {REPO}/b.bin is binary or not valid UTF-8 text; it cannot be edited."
    )
    assert read(aci, "b.bin") == b"\x00\x01\n"


# -- the lint guardrail ----------------------------------------------------------------------


def test_broken_indentation_is_rejected_and_the_file_is_untouched(session: Session) -> None:
    aci = session({"mod.py": "def f(x):\n    y = x\n    return y\n"})
    run(aci, "open mod.py")
    output = run(aci, "edit 3:3\n        return y\nend_of_edit")
    assert_golden("edit_lint_unexpected_indent", output)
    assert read(aci, "mod.py") == b"def f(x):\n    y = x\n    return y\n"


def test_a_rejected_edit_keeps_every_byte(session: Session) -> None:
    original = b"def f(x):\r\n    y = x\r\n    return y"  # CRLF, no final newline
    aci = session({"mod.py": original})
    run(aci, "open mod.py")
    assert "- E999 IndentationError" in run(aci, "edit 2:2\n        y = x\nend_of_edit")
    assert read(aci, "mod.py") == original


def test_rejection_views_are_focused_on_the_edit(session: Session) -> None:
    aci = session({"mod.py": python_module(10)})
    run(aci, "open mod.py")
    output = run(aci, "edit 17:18\ndef f4(x):\n    return x + y\nend_of_edit")
    assert_golden("edit_lint_undefined_name", output)
    assert read(aci, "mod.py") == python_module(10).encode()


def test_demo_rejection_windows(session: Session) -> None:
    """The paper's demo: `edit 1475:1475` on a 1997-line file shows rows 1469-1479 applied
    (1468 above, 518 below) and rows 1470-1480 original (1469 above, 517 below)."""
    source = "".join(f"x{n} = {n}\n" for n in range(1, 1998))
    aci = session({"fields.py": source})
    run(aci, "open fields.py 1474")
    output = run(aci, "edit 1475:1475\nx1475 = undefined_name\nend_of_edit")
    applied, original = output.split("This is the original code before your edit")
    assert "(1468 more lines above)\n1469:" in applied
    assert "1479:x1479 = 1479\n(518 more lines below)" in applied
    assert "(1469 more lines above)\n1470:" in original
    assert "1480:x1480 = 1480\n(517 more lines below)" in original


def test_undefined_name_is_rejected(session: Session) -> None:
    aci = session({"mod.py": "import os\n\n\ndef f():\n    return os.sep\n"})
    run(aci, "open mod.py")
    output = run(aci, "edit 5:5\n    return os.sep + missing\nend_of_edit")
    assert "ERRORS:\n- F821 undefined name 'missing'\n\n" in output
    assert "Your changes have NOT been applied." in output
    assert read(aci, "mod.py") == b"import os\n\n\ndef f():\n    return os.sep\n"


def test_pre_existing_errors_do_not_block_an_edit(session: Session) -> None:
    source = "def f():\n    return 1\n\n\ndef g():\n    return undefined_thing\n"
    aci = session({"mod.py": source})
    run(aci, "open mod.py")
    output = run(aci, "edit 2:2\n    a = 1\n    b = 2\n    return a + b\nend_of_edit")
    assert output.endswith(UPDATED)
    assert b"return undefined_thing" in read(aci, "mod.py")


def test_errors_inside_the_replaced_range_count_again(session: Session) -> None:
    source = "def g():\n    return undefined_thing\n"
    aci = session({"mod.py": source})
    run(aci, "open mod.py")
    output = run(aci, "edit 2:2\n    return other_undefined\nend_of_edit")
    assert "- F821 undefined name 'other_undefined'" in output
    assert read(aci, "mod.py") == source.encode()


def test_non_python_files_are_never_linted(session: Session) -> None:
    aci = session({"notes.txt": "text\n", "script": "echo\n"})
    for name in ("notes.txt", "script"):
        run(aci, f"open {name}")
        assert run(aci, "edit 1:1\n   def broken(:\nend_of_edit").endswith(UPDATED)


def test_lint_can_be_switched_off(session: Session) -> None:
    aci = session({"mod.py": "x = 1\n"}, lint=False)
    run(aci, "open mod.py")
    assert run(aci, "edit 1:1\n    x = (\nend_of_edit").endswith(UPDATED)


def test_the_original_is_linted_once_per_content(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = lint.run_flake8

    def counting(text: str, filename: str, select: tuple[str, ...]) -> tuple[lint.LintError, ...]:
        calls.append(text)
        return real(text, filename, select)

    monkeypatch.setattr(lint, "run_flake8", counting)
    aci = session({"mod.py": python_module(3)})
    run(aci, "open mod.py")
    run(aci, "edit 2:2\n    return x + 10\nend_of_edit")
    assert len(calls) == 2  # the original and the edited text
    run(aci, "edit 6:6\n    return x + 11\nend_of_edit")
    assert len(calls) == 3  # the original is the previous result: only the new text is linted
    run(aci, "edit 6:6\n    return x + oops\nend_of_edit")
    assert len(calls) == 4


def test_introduced_errors_shift_and_drop_pre_existing_ones() -> None:
    error = lint.LintError
    before = (error(2, 0, "F821", "a"), error(5, 0, "F821", "b"), error(9, 4, "E111", "c"))
    after = (
        error(2, 0, "F821", "a"),  # above the edit: kept, not new
        error(5, 0, "F821", "b"),  # was inside the replaced range 4..6: counts as new
        error(10, 4, "E111", "c"),  # shifted by +1 (four lines replace 4..6): not new
        error(11, 0, "F821", "d"),  # new
    )
    assert lint.introduced_errors(before, after, 4, 6, 4) == [after[1], after[3]]


def test_a_file_too_large_to_edit_points_to_the_shell(session: Session) -> None:
    source = python_module(50)
    aci = session({"mod.py": source}, edit_max_bytes=len(source) - 1)
    run(aci, "open mod.py")
    assert run(aci, "edit 2:2\n    return x\nend_of_edit") == (
        f"Error: {{REPO}}/mod.py is {len(source)} bytes, more than the edit command handles "
        f"({len(source) - 1} bytes). Change it with shell commands instead (e.g. sed -i)."
    )
    assert read(aci, "mod.py") == source.encode()
    assert run(aci, "goto 5").startswith("[File: {REPO}/mod.py (200 lines total)]")


def test_the_guardrail_fails_closed_when_flake8_fails(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crashing flake8 (here its checker) must not let an unchecked edit through."""
    from flake8.checker import FileChecker

    def crash(self: FileChecker) -> None:
        raise RuntimeError("plugin exploded")

    monkeypatch.setattr(FileChecker, "run_checks", crash)
    aci = session({"mod.py": "x = 1\n", "notes.txt": "a\n"})
    run(aci, "open mod.py")
    assert run(aci, "edit 1:1\nx = 2\nend_of_edit") == (
        "Your edit has NOT been applied: the syntax check of Python files could not run "
        "(flake8 failed: RuntimeError: plugin exploded). The file is unchanged."
    )
    assert read(aci, "mod.py") == b"x = 1\n"
    run(aci, "open notes.txt")
    assert run(aci, "edit 1:1\nb\nend_of_edit").endswith(UPDATED)  # other files: no lint
