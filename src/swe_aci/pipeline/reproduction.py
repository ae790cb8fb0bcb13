"""The reproduction test a candidate must pass: the tests the issue's own examples give
(issue_examples.py), else one the model writes. Either is kept only if it fails at the base on
the issue (not on its own import or name errors) twice, each run from a clean tree: a test that
fails only on its first run (it leaves a marker for the next) shows nothing."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from swe_aci.evaluate.parsers import TestStatus
from swe_aci.pipeline.sandbox import BROKEN_TEST, Sandbox, TestRun, fails_as_reproduction

DIRECTORY = ".git/swe-aci-pipeline"
ISSUE_FILE = f"{DIRECTORY}/test_swe_aci_issue.py"
MODEL_FILE = f"{DIRECTORY}/test_swe_aci_reproduction.py"
SECTION = re.compile(r"^(_{3,} .+ _{3,}|={3,}.*)$")  # a test's failure header, a summary's
NOT_IMPORTABLE = re.compile(r"\b(ImportError|ModuleNotFoundError|SyntaxError|IndentationError)\b")
# the exception a pytest failure stops on: `E       ValueError: ...`, `E   pkg.errors.BadKey: ...`
RAISED = re.compile(r"^E\s+(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Warning))\b", re.MULTILINE)
EXCEPTION_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning)\b")
CRASH_WORDS = re.compile(r"\b(crash|raise|exception|traceback)", re.IGNORECASE)
# a test that uses the library wrongly: a submodule never imported or a name the module lacks, a
# call that does not fit the signature
MISUSE = re.compile(
    r"^E\s+(?:AttributeError: module '[\w.]+' has no attribute|TypeError: .*?"
    r"(unexpected keyword argument|missing \d+ required (?:positional|keyword-only) argument"
    r"|takes (?:from \d+ to )?\d+ positional arguments? but|takes no arguments))",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Reproduction:
    """The accepted reproduction: its file under `.git/`, its text, where it came from
    (`issue example` or `model-written`), how many tests it holds and its output at the base."""

    file: str
    text: str
    origin: str
    tests: int
    base_output: str


def run_twice(sandbox: Sandbox, file: str, text: str) -> tuple[TestRun, TestRun]:
    """The test file at the base, twice, each from a clean tree."""
    return (
        sandbox.run_isolated({}, {file: text}, [file]),
        sandbox.run_isolated({}, {file: text}, [file]),
    )


def model_test_problem(first: TestRun, second: TestRun, issue: str) -> str | None:
    """Why a model-written test shows nothing at the base (None: it fails on the issue)."""
    problem = (
        fails_as_reproduction(first)
        or misused_api(first.output, issue)
        or unexpected_exception(first.output, issue)
    )
    if problem is None and fails_as_reproduction(second) is not None:
        return "the test fails only on its first run at the base (it changes what it tests)"
    return problem


def misused_api(output: str, issue: str) -> str | None:
    """Why a failure shows the test's own misuse of the library: an attribute the module lacks
    (`module 'pyflakes' has no attribute 'checker'`: the submodule was never imported), or a
    call that does not fit the signature. Not when the issue reports that very failure (a
    wrapper that drops a keyword argument)."""
    for match in MISUSE.finditer(output):
        words = match.group(1) or "has no attribute"
        if words not in issue:
            return f"the test uses the library wrongly ({match.group(0)[1:].strip()})"
    return None


def unexpected_exception(output: str, issue: str) -> str | None:
    """Why a failure on an exception does not show the issue: the issue names other
    exceptions, or none and speaks of no crash. A test that calls the code wrongly (a
    `ValueError` from an argument the issue never gives) fails without showing the bug, and its
    traceback would send the repair to the wrong function."""
    named = set(EXCEPTION_NAME.findall(issue))
    if not named and CRASH_WORDS.search(issue):
        return None
    for raised in RAISED.findall(output):
        if raised != "AssertionError" and raised not in named:
            return f"the test fails on {raised}, which the issue does not name"
    return None


FAILURE_LINES = 6
PYTEST_HINT = re.compile(r"(Use -v to get|Omitting \d+ identical items|Full diff:)")
FAILURE_LINE_CHARS = 160


def failure_lines(output: str) -> str:
    """What pytest says of the first failure in `output`, for the repair prompt: its `E` lines
    (the exception and the assertion's values), the prefix stripped, at most FAILURE_LINES of
    at most FAILURE_LINE_CHARS each (a small model reads `expected an instance of Sub, got
    Version` where the issue's prose says it less plainly)."""
    lines = output.splitlines()
    start = next((index for index, line in enumerate(lines) if line.startswith("E ")), None)
    if start is None:
        return ""
    said = []
    for line in lines[start:]:
        if not line.startswith("E ") or len(said) == FAILURE_LINES:
            break
        text = line[2:].strip()
        if text and not PYTEST_HINT.match(text):
            said.append(text[:FAILURE_LINE_CHARS])
    return "\n".join(said)


def rejection(problem: str, output: str) -> str:
    """Why a model-written test was not kept, for the next try's prompt: the problem and the
    first two lines pytest says of it (`No module named 'tqdm'`: the next test does without)."""
    said = failure_lines(output).splitlines()[:2]
    return f"{problem} ({'; '.join(said)})" if said else problem


def failure_text(output: str, name: str) -> str:
    """What pytest says of test `name`'s failure: its `E` lines and its short summary line,
    which pytest cuts to the terminal's width (`FAILED ...::name - Na...`)."""
    lines = output.splitlines()
    header = re.compile(rf"^_+ {re.escape(name)} _+$")
    start = next((index for index, line in enumerate(lines) if header.match(line)), len(lines))
    said = []
    for line in lines[start + 1 :]:
        if SECTION.match(line):
            break
        if line.startswith("E "):
            said.append(line)
    summary = [line for line in lines if line.startswith("FAILED ") and f"::{name} " in f"{line} "]
    return "\n".join([*said, *summary])


def accepted_issue_tests(
    first: TestRun, second: TestRun, issue: str
) -> tuple[list[str], dict[str, str]]:
    """The issue tests that failed on the issue in both runs at the base, and why each other
    one was dropped. An exception the issue itself shows (`NameError` in its traceback) is a
    failure on the issue, not a broken test."""
    accepted: list[str] = []
    dropped: dict[str, str] = {}
    if not first.statuses:
        return accepted, {"all": "the tests did not run (collection error)"}
    for test in sorted(first.statuses):
        name = test.rpartition("::")[2]
        statuses = (first.statuses.get(test), second.statuses.get(test))
        failure = failure_text(first.output, name)
        broken = BROKEN_TEST.search(failure)
        if statuses[0] is not TestStatus.FAILED:
            dropped[name] = (
                "passes at the base" if statuses[0] in (TestStatus.PASSED,) else "did not run"
            )
        elif statuses[1] is not TestStatus.FAILED:
            dropped[name] = "fails only on its first run"
        elif NOT_IMPORTABLE.search(failure) or (broken and broken.group(1) not in issue):
            dropped[name] = "fails on an import or name error, not on the issue"
        else:
            accepted.append(name)
    return accepted, dropped


def keep_tests(text: str, names: list[str]) -> str:
    """The module `text` with only the test functions `names` (and everything that is not a
    test function)."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    kept = []
    for node in tree.body:
        if (
            isinstance(node, ast.FunctionDef)
            and node.name.startswith("test")
            and node.name not in names
        ):
            continue
        kept.append("".join(lines[node.lineno - 1 : node.end_lineno]))
    return "\n\n".join(part.rstrip("\n") + "\n" for part in kept)


def outcome(run: TestRun, reproduction: Reproduction) -> tuple[bool, int]:
    """Whether every test of the reproduction passed in `run`, and how many did."""
    passed = len(run.of(reproduction.file) & run.passed)
    return passed == reproduction.tests, passed
