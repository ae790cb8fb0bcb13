"""search_file, search_dir and find_file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fixtures.aci.support import Session, assert_golden, run, sessions


@pytest.fixture
def session(make_repo: Callable[..., Path]) -> Iterator[Session]:
    yield from sessions(make_repo)


TREE: dict[str, str | bytes] = {
    "src/app.py": "import os\n\n\ndef handler(event):\n    return os.environ[event]\n",
    "src/util.py": "def helper():\n    return 'handler'\n",
    "src/sub dir/deep.py": "# handler handler\nx = 1\n",
    "docs/notes.md": "Call handler() first.\nThen handler() again.\n",
    ".hidden/secret.py": "handler = 1\n",
    "src/.cache.py": "handler = 2\n",
    "data.bin": b"handler\x00\x01\x02",
    "flags.txt": "-v verbose\n--all everything\na.b literal\naxb not literal\n",
}


# -- search_file -----------------------------------------------------------------------------


def test_search_file_in_the_open_file(session: Session) -> None:
    aci = session(TREE)
    run(aci, "open src/app.py")
    assert_golden("search_file_found", run(aci, "search_file os"))


def test_search_file_given_a_file_keeps_the_open_file(session: Session) -> None:
    aci = session(TREE)
    run(aci, "open src/app.py")
    assert run(aci, "search_file handler docs/notes.md") == (
        'Found 2 matches for "handler" in {REPO}/docs/notes.md:\n'
        "Line 1:Call handler() first.\n"
        "Line 2:Then handler() again.\n"
        'End of matches for "handler" in {REPO}/docs/notes.md'
    )
    assert aci.state()["open_file"].endswith("/src/app.py")


def test_search_file_terms_are_literal_even_with_a_leading_dash(session: Session) -> None:
    aci = session(TREE)
    run(aci, "open flags.txt")
    assert run(aci, "search_file -v") == (
        'Found 1 matches for "-v" in {REPO}/flags.txt:\nLine 1:-v verbose\n'
        'End of matches for "-v" in {REPO}/flags.txt'
    )
    assert "Line 2:--all everything" in run(aci, "search_file --all")
    assert run(aci, "search_file a.b").count("Line ") == 1


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("search_file", "Usage: search_file <search_term> [<file>]"),
        ("search_file x", "No file open. Use the open command first."),
        (
            "search_file x nope.py",
            "Usage: search_file <search_term> [<file>]\n"
            "Error: File name {REPO}/nope.py not found. Please provide a valid file name.",
        ),
        (
            "search_file x src",
            "Usage: search_file <search_term> [<file>]\n"
            "Error: File name {REPO}/src not found. Please provide a valid file name.",
        ),
        ("search_file zzz src/app.py", 'No matches found for "zzz" in {REPO}/src/app.py'),
        (
            "search_file handler data.bin",
            "Error: {REPO}/data.bin is binary or not valid UTF-8 text; search_file only searches "
            "text files.",
        ),
    ],
)
def test_search_file_errors(session: Session, action: str, expected: str) -> None:
    assert run(session(TREE), action) == expected


def test_search_file_cap(session: Session) -> None:
    aci = session({"many.txt": "hit\n" * 51, "fifty.txt": "hit\n" * 50})
    assert run(aci, "search_file hit many.txt") == (
        'More than 51 lines matched for "hit" in {REPO}/many.txt. Please narrow your search.'
    )
    assert run(aci, "search_file hit fifty.txt").startswith('Found 50 matches for "hit"')


# -- search_dir ------------------------------------------------------------------------------


def test_search_dir_counts_per_file_skipping_hidden_and_binary(session: Session) -> None:
    aci = session(TREE)
    assert_golden("search_dir_found", run(aci, "search_dir handler"))


def test_search_dir_in_a_subdirectory_and_from_the_shell_directory(session: Session) -> None:
    aci = session(TREE)
    expected = (
        'Found 3 matches for "handler" in {REPO}/src:\n'
        "{REPO}/src/app.py (1 matches)\n"
        "{REPO}/src/sub dir/deep.py (1 matches)\n"
        "{REPO}/src/util.py (1 matches)\n"
        'End of matches for "handler" in {REPO}/src'
    )
    assert run(aci, "search_dir handler src") == expected
    run(aci, "cd src")
    assert run(aci, "search_dir handler") == expected
    assert run(aci, 'search_dir handler "sub dir"') == (
        'Found 1 matches for "handler" in {REPO}/src/sub dir:\n'
        "{REPO}/src/sub dir/deep.py (1 matches)\n"
        'End of matches for "handler" in {REPO}/src/sub dir'
    )


def test_search_dir_inside_a_hidden_directory(session: Session) -> None:
    aci = session(TREE)
    assert run(aci, "search_dir handler .hidden") == (
        'Found 1 matches for "handler" in {REPO}/.hidden:\n'
        "{REPO}/.hidden/secret.py (1 matches)\n"
        'End of matches for "handler" in {REPO}/.hidden'
    )


def test_search_dir_terms_are_literal(session: Session) -> None:
    aci = session(TREE)
    assert run(aci, "search_dir -v") == (
        'Found 1 matches for "-v" in {REPO}:\n{REPO}/flags.txt (1 matches)\n'
        'End of matches for "-v" in {REPO}'
    )
    assert run(aci, "search_dir a.b").startswith('Found 1 matches for "a.b"')
    assert run(aci, "search_dir 'handler(event'") == (
        'Found 1 matches for "handler(event" in {REPO}:\n{REPO}/src/app.py (1 matches)\n'
        'End of matches for "handler(event" in {REPO}'
    )
    assert run(aci, 'search_dir "it\'s"') == 'No matches found for "it\'s" in {REPO}'


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("search_dir", "Usage: search_dir <search_term> [<dir>]"),
        ("search_dir zzz_nowhere", 'No matches found for "zzz_nowhere" in {REPO}'),
        ("search_dir x nodir", "Directory {REPO}/nodir not found"),
        ("search_dir x flags.txt", "Directory {REPO}/flags.txt not found"),
    ],
)
def test_search_dir_errors(session: Session, action: str, expected: str) -> None:
    assert run(session(TREE), action) == expected


def test_search_dir_cap_counts_files(session: Session) -> None:
    files: dict[str, str | bytes] = {f"pkg/m{n:02}.py": "hit = 1\nhit = 2\n" for n in range(51)}
    aci = session(files)
    assert run(aci, "search_dir hit") == (
        'More than 51 files matched for "hit" in {REPO}. Please narrow your search.'
    )
    run(aci, "rm pkg/m00.py")
    output = run(aci, "search_dir hit pkg")
    assert output.startswith('Found 100 matches for "hit" in {REPO}/pkg:\n{REPO}/pkg/m01.py (2')
    assert output.count(" (2 matches)") == 50


# -- find_file -------------------------------------------------------------------------------


def test_find_file_with_wildcards(session: Session) -> None:
    aci = session(TREE)
    assert_golden("find_file_found", run(aci, "find_file '*.py'"))
    assert run(aci, "find_file app.py src") == (
        'Found 1 matches for "app.py" in {REPO}/src:\n{REPO}/src/app.py'
    )
    assert run(aci, "find_file -v") == 'No matches found for "-v" in {REPO}'


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("find_file", "Usage: find_file <file_name> [<dir>]"),
        ("find_file nothing.py", 'No matches found for "nothing.py" in {REPO}'),
        ("find_file x.py nodir", "Directory {REPO}/nodir not found"),
    ],
)
def test_find_file_errors(session: Session, action: str, expected: str) -> None:
    assert run(session(TREE), action) == expected


def test_find_file_cap(session: Session) -> None:
    aci = session({f"d{n:02}/conf.py": "" for n in range(51)})
    assert run(aci, "find_file conf.py") == (
        'More than 51 files matched for "conf.py" in {REPO}. Please narrow your search.'
    )
    assert run(aci, "find_file conf.py d07") == (
        'Found 1 matches for "conf.py" in {REPO}/d07:\n{REPO}/d07/conf.py'
    )
