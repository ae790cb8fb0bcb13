"""The syntax guard for languages other than Python: real files, real tree-sitter grammars.

For each language: an edit that breaks the syntax is refused with the error's line and the file
left byte for byte as it was, a good edit is applied, and in a file that was already broken only
the errors an edit adds refuse it. Each through the paper's `edit`, the str_replace set's
`str_replace` and its `create`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from fixtures.aci.support import Session, run, sessions
from swe_aci.aci import syntax
from swe_aci.aci.interface import ACI
from swe_aci.aci.syntax import Grammar, ParseError

UPDATED = "Edit the file again if necessary."
REFUSED = "Your changes have NOT been applied. Please fix your edit command and try again."
SR_REFUSED = "Your edit was NOT applied: it introduces new syntax error(s)."
STR_REPLACE_SET = ["view", "create_file", "str_replace", "insert", "undo_edit", "submit"]


class Case(NamedTuple):
    path: str
    source: str
    line: str  # a whole line of `source` that the edits replace
    good: str  # a replacement that keeps the file valid
    bad: str  # one that breaks it
    error: str  # the error the bad one introduces, as the model reads it
    broken: str  # a line appended to the file that breaks it on its own


CASES = {
    "javascript": Case(
        "lib/calc.js",
        "function add(a, b) {\n  return a + b;\n}\n\n"
        "function scale(values, factor) {\n  return values.map((v) => v * factor);\n}\n\n"
        "module.exports = { add, scale };\n",
        "  return a + b;",
        "  return a + b + 0;",
        "  return a + ;",
        "line 2: missing identifier",
        "const broken = ;",
    ),
    "typescript": Case(
        "src/point.ts",
        "export interface Point {\n  x: number;\n  y: number;\n}\n\n"
        "export function norm(p: Point): number {\n  return Math.sqrt(p.x * p.x + p.y * p.y);\n}\n",
        "  return Math.sqrt(p.x * p.x + p.y * p.y);",
        "  return Math.hypot(p.x, p.y);",
        "  return Math.sqrt(p.x * p.x + p.y * p.y;",
        "line 7: missing `)`",
        "let broken: = 1;",
    ),
    "tsx": Case(
        "src/Hello.tsx",
        "export function Hello({ name }: { name: string }) {\n"
        '  return <div className="hello">{name}</div>;\n}\n',
        '  return <div className="hello">{name}</div>;',
        '  return <span className="hello">{name}</span>;',
        '  return <div className="hello">{name</div>;',
        "lines 1-3: syntax error",
        "const broken = <div>{</div>;",
    ),
    "go": Case(
        "calc/calc.go",
        "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\n"
        "func Sum(values []int) int {\n\ttotal := 0\n\tfor _, v := range values {\n"
        "\t\ttotal += v\n\t}\n\treturn total\n}\n",
        "\treturn a + b",
        "\treturn b + a",
        "\treturn a + b)",
        "line 4: syntax error at `)`",
        "func Broken( {}",
    ),
    "rust": Case(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n"
        "pub fn sum(values: &[i32]) -> i32 {\n    values.iter().sum()\n}\n",
        "    values.iter().sum()",
        "    values.iter().copied().sum()",
        "    values.iter(.sum()",
        "line 6: syntax error at `(`",
        "fn broken( {}",
    ),
    "java": Case(
        "src/main/java/Calc.java",
        "public class Calc {\n    public static int add(int a, int b) {\n"
        "        return a + b;\n    }\n}\n",
        "        return a + b;",
        "        return Math.addExact(a, b);",
        "        return a + b",
        "line 3: missing `;`",
        "class Broken { void f( }",
    ),
    "c": Case(
        "src/calc.c",
        "#include <stddef.h>\n\nint add(int a, int b) {\n    return a + b;\n}\n\n"
        "int sum(const int *values, size_t n) {\n    int total = 0;\n"
        "    for (size_t i = 0; i < n; i++) {\n        total += values[i];\n    }\n"
        "    return total;\n}\n",
        "    for (size_t i = 0; i < n; i++) {",
        "    for (size_t i = 0; i != n; ++i) {",
        "    for (size_t i = 0; i < n; i++ {",
        "lines 9-12: syntax error",
        "int broken( {}",
    ),
    "cpp": Case(
        "src/sum.cpp",
        "#include <vector>\n\nnamespace calc {\n\ntemplate <typename T>\n"
        "T sum(const std::vector<T> &values) {\n    T total{};\n"
        "    for (const auto &v : values) {\n        total += v;\n    }\n    return total;\n}\n\n"
        "}  // namespace calc\n",
        "    T total{};",
        "    T total = T{};",
        "    T total{;",
        "line 14: missing `}`",
        "int broken( {}",
    ),
    "ruby": Case(
        "lib/calc.rb",
        "module Calc\n  def self.add(a, b)\n    a + b\n  end\n\n"
        "  def self.sum(values)\n    values.reduce(0) { |total, v| total + v }\n  end\nend\n",
        "    values.reduce(0) { |total, v| total + v }",
        "    values.sum",
        "    values.reduce(0) { |total, v| total + v",
        "line 7: missing `}`",
        "broken = (1",
    ),
    "php": Case(
        "src/Calc.php",
        "<?php\n\nnamespace Calc;\n\nfunction add(int $a, int $b): int\n{\n"
        "    return $a + $b;\n}\n",
        "    return $a + $b;",
        "    return $b + $a;",
        "    return $a + ;",
        "line 7: missing name",
        "$broken = ;",
    ),
}


@pytest.fixture
def session(make_repo: Callable[..., Path]) -> Iterator[Session]:
    yield from sessions(make_repo)


def read(aci: ACI, name: str) -> bytes:
    return (Path(aci.env.repo_path) / name).read_bytes()


def edit(case: Case, source: str, replacement: str) -> str:
    number = source.split("\n").index(case.line) + 1
    return f"edit {number}:{number}\n{replacement}\nend_of_edit"


def str_replace(case: Case, replacement: str) -> str:
    return f"str_replace {case.path}\n{case.line}\nend_of_old_str\n{replacement}\nend_of_new_str"


def errors_listed(output: str) -> list[str]:
    return [line[2:] for line in output.split("\n") if line.startswith("- ")]


@pytest.mark.parametrize("language", CASES)
def test_edit_that_breaks_the_syntax_is_refused(session: Session, language: str) -> None:
    case = CASES[language]
    aci = session({case.path: case.source})
    run(aci, f"open {case.path}")
    output = run(aci, edit(case, case.source, case.bad))
    assert output.startswith("Your proposed edit has introduced new syntax error(s).")
    assert errors_listed(output) == [case.error]
    assert REFUSED in output
    assert read(aci, case.path) == case.source.encode()
    assert run(aci, edit(case, case.source, case.good)).endswith(UPDATED)
    assert read(aci, case.path) == case.source.replace(case.line, case.good).encode()


@pytest.mark.parametrize("language", CASES)
def test_str_replace_that_breaks_the_syntax_is_refused(session: Session, language: str) -> None:
    case = CASES[language]
    aci = session({case.path: case.source}, commands=STR_REPLACE_SET)
    output = run(aci, str_replace(case, case.bad))
    assert output.startswith(SR_REFUSED)
    assert errors_listed(output) == [case.error]
    assert read(aci, case.path) == case.source.encode()
    assert "has been edited" in run(aci, str_replace(case, case.good))
    assert read(aci, case.path) == case.source.replace(case.line, case.good).encode()


@pytest.mark.parametrize("language", CASES)
def test_create_of_a_broken_file_creates_nothing(session: Session, language: str) -> None:
    case = CASES[language]
    aci = session({"README.md": "x\n"}, commands=STR_REPLACE_SET)
    broken = case.source.replace(case.line, case.bad).rstrip("\n")
    output = run(aci, f"create {case.path}\n{broken}\nend_of_file_text")
    assert output.startswith(SR_REFUSED)
    assert errors_listed(output) == [case.error]
    assert not (Path(aci.env.repo_path) / case.path).exists()
    created = run(aci, f"create {case.path}\n{case.source.rstrip()}\nend_of_file_text")
    assert created.startswith("File created successfully")
    assert read(aci, case.path) == case.source.encode()


@pytest.mark.parametrize("language", CASES)
def test_a_file_already_broken_is_judged_by_the_errors_an_edit_adds(
    session: Session, language: str
) -> None:
    """The error at the end stays (shifted when the edit adds a line); an edit elsewhere that
    adds none is applied, one that adds an error is refused, and the old error is not listed."""
    case = CASES[language]
    source = case.source + case.broken + "\n"
    old = {error.describe() for error in syntax.parse_errors(source, case.path)}
    assert old
    aci = session({case.path: source})
    run(aci, f"open {case.path}")
    output = run(aci, edit(case, source, case.bad))
    assert REFUSED in output
    assert errors_listed(output)
    assert not old & set(errors_listed(output))
    assert read(aci, case.path) == source.encode()
    assert run(aci, edit(case, source, f"\n{case.good}")).endswith(UPDATED)
    assert read(aci, case.path) == source.replace(case.line, f"\n{case.good}").encode()


def test_an_error_reported_on_the_edited_lines_of_a_broken_file_is_dropped(
    session: Session,
) -> None:
    """Fixing one error and leaving another: the remaining one is not new."""
    source = "const a = ;\nconst b = ;\n"
    aci = session({"m.js": source})
    run(aci, "open m.js")
    assert run(aci, "edit 1:1\nconst a = 1;\nend_of_edit").endswith(UPDATED)
    assert read(aci, "m.js") == b"const a = 1;\nconst b = ;\n"


def test_an_error_spanning_the_edit_is_the_same_error_after_it(session: Session) -> None:
    """Ruby reports a missing `end` as one ERROR over the whole file: an edit inside it changes
    where it ends, not that it is there."""
    source = "class A\n  def f(x)\n    x\n  end\n\n  def g\n    1\n  end\n"
    aci = session({"a.rb": source})
    run(aci, "open a.rb")
    assert run(aci, "edit 3:3\n    x + 1\n    x + 2\nend_of_edit").endswith(UPDATED)


def test_a_header_is_checked_as_c_or_cpp(session: Session) -> None:
    c_header = "struct node { struct node *new; };\nint count(struct node *n);\n"
    cpp_header = "namespace n {\nclass A {\n public:\n  int x() const;\n};\n}  // namespace n\n"
    aci = session({"c.h": c_header, "cpp.h": cpp_header})
    run(aci, "open c.h")
    assert run(aci, "edit 2:2\nint count(const struct node *n);\nend_of_edit").endswith(UPDATED)
    run(aci, "open cpp.h")
    assert run(aci, "edit 4:4\n  int y() const;\nend_of_edit").endswith(UPDATED)
    output = run(aci, "edit 4:4\n  int y( const;\nend_of_edit")
    assert REFUSED in output
    assert read(aci, "cpp.h") == cpp_header.replace("x()", "y()").encode()


def test_the_guard_is_switched_off_with_lint(session: Session) -> None:
    case = CASES["go"]
    aci = session({case.path: case.source}, lint=False)
    run(aci, f"open {case.path}")
    assert run(aci, edit(case, case.source, case.bad)).endswith(UPDATED)


def test_files_of_other_languages_are_not_checked(session: Session) -> None:
    aci = session({"notes.md": "# notes\n", "data.json": "{}\n", "Makefile": "all:\n"})
    for name in ("notes.md", "data.json", "Makefile"):
        run(aci, f"open {name}")
        assert run(aci, "edit 1:1\n}{ ( [\nend_of_edit").endswith(UPDATED)


def test_the_guard_fails_closed_when_a_grammar_cannot_load(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(syntax.GRAMMARS, "go", Grammar("Go", "tree_sitter_no_such_go", "language"))
    syntax._language.cache_clear()
    try:
        case = CASES["go"]
        aci = session({case.path: case.source})
        run(aci, f"open {case.path}")
        assert run(aci, edit(case, case.source, case.good)) == (
            "Your edit has NOT been applied: the syntax check of Go files could not run (the "
            "tree-sitter grammar for Go could not be loaded (ModuleNotFoundError: No module named "
            "'tree_sitter_no_such_go')). The file is unchanged."
        )
        assert read(aci, case.path) == case.source.encode()
    finally:
        syntax._language.cache_clear()


def test_parse_errors_compare_by_where_they_start() -> None:
    error = ParseError(3, 0, "syntax error", 9)
    assert error == ParseError(3, 0, "syntax error", 12)
    assert error.shifted(2) == ParseError(5, 0, "syntax error", 11)
    assert error.describe() == "lines 3-9: syntax error"
    assert ParseError(4, 2, "missing `}`", 4).describe() == "line 4: missing `}`"


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.mjs", "JavaScript"),
        ("x.TSX", "TSX"),
        ("Rakefile", "Ruby"),
        ("inc/x.h", "C or C++"),
        ("x.hpp", "C++"),
        ("x.py", None),  # flake8's, not tree-sitter's
        ("x.txt", None),
    ],
)
def test_languages_come_from_file_names(path: str, language: str | None) -> None:
    assert syntax.language_name(path) == language


def test_importing_the_interface_and_the_help_load_no_grammar() -> None:
    program = (
        "import sys, swe_aci, swe_aci.aci, swe_aci.aci.editor\n"
        "from swe_aci.aci.interface import ACI\n"
        "from swe_aci.cli import main\n"
        "sys.argv = ['swe-aci', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('tree_sitter')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"
