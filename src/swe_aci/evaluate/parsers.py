"""Test log parsers: a test runner's output -> {test id: status}.

Each parser gives, on the same log, the statuses SWE-bench's parser of that framework gives (the
`swebench` 5.0.2 functions `parse_log_pytest_options`, `parse_log_django` and `parse_log_sympy`),
plus what those miss and a user would expect to count:

- pytest: ids holding spaces are kept whole (`t[a b]`); grading still finds them by the truncated
  id SWE-bench's rows carry (`t[a`), see `grading.resolve_id`.
- django / unittest: a test with a docstring is recorded under its method name as well as under
  its docstring's first line; `expected failure` is XFAIL and `unexpected success` FAILED.
- sympy: colour codes are stripped; the last test of a file (whose line ends in `[OK]`/`[FAIL]`)
  is kept; `f` (expected to fail) is XFAIL and `s` SKIPPED.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum

from swe_aci.evaluate.parsers_other import OTHER_PARSERS


class TestStatus(StrEnum):
    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    SKIPPED = "SKIPPED"
    XFAIL = "XFAIL"


TestStatus.__test__ = False  # type: ignore[attr-defined]  # not a pytest test class
StatusMap = dict[str, TestStatus]
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return ANSI_ESCAPE.sub("", text)


# -- pytest -rA ----------------------------------------------------------------------------------

PYTEST_SKIP_COUNT = re.compile(r"^\[\d+\]$")


def parse_pytest(log: str) -> StatusMap:
    """The short test summary `pytest -rA` prints: `STATUS id[ - message]` lines."""
    statuses: StatusMap = {}
    for raw in strip_ansi(log).splitlines():
        status = next((s for s in TestStatus if raw.startswith(s.value + " ")), None)
        if status is None:
            continue
        test_id = _pytest_summary_id(raw[len(status.value) + 1 :].strip())
        # `SKIPPED [1] path:line: reason` names a location, not a test
        if test_id and not PYTEST_SKIP_COUNT.match(test_id.split()[0]):
            statuses[test_id] = status
    return statuses


def _pytest_summary_id(rest: str) -> str:
    """The test id at the start of a summary line's remainder, without its ` - message`.

    The message separator ` - ` is only taken outside the id's `[...]` parameters."""
    depth = 0
    for index, char in enumerate(rest):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(depth - 1, 0)
        elif depth == 0 and rest.startswith(" - ", index):
            return rest[:index].strip()
    return rest.strip()


# -- unittest verbose (Django's runner is unittest's) --------------------------------------------

UNITTEST_NAME = re.compile(r"^\w+ \([\w.]+\)$")
UNITTEST_RESULTS = (
    (re.compile(r"^(.*) \.\.\.\s+(?:ok|OK)$"), TestStatus.PASSED),
    (re.compile(r"^(.*?) \.\.\. skipped"), TestStatus.SKIPPED),
    (re.compile(r"^(.*?) \.\.\. FAIL$"), TestStatus.FAILED),
    (re.compile(r"^(.*?) \.\.\. ERROR$"), TestStatus.ERROR),
    (re.compile(r"^(.*?) \.\.\. expected failure$"), TestStatus.XFAIL),
    (re.compile(r"^(.*?) \.\.\. unexpected success$"), TestStatus.FAILED),
)
# Output a test printed after its ` ... ` and before its `ok`: the ones SWE-bench knows.
DJANGO_INTERRUPTED_OK = (
    re.compile(
        r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$",
        re.MULTILINE,
    ),
    re.compile(r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$", re.MULTILINE),
    re.compile(
        r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$", re.MULTILINE
    ),
)
DJANGO_MIGRATION_PREFIX = "Applying sites.0002_alter_domain_unique...test_no_migrations"


def parse_unittest(log: str) -> StatusMap:
    """`unittest -v` / Django's `runtests.py --verbosity 2`: `name ... result` lines.

    A name is `test_x (module.Class)` (Python < 3.11) or `test_x (module.Class.test_x)`; a test with
    a docstring prints its name alone on a line and `docstring first line ... result` on the next.
    """
    statuses: StatusMap = {}
    previous_line = ""
    running: str | None = None  # the test whose ` ... ` was printed last
    for raw in strip_ansi(log).splitlines():
        line = raw.strip()
        if "--version is equivalent to version" in line:
            statuses["--version is equivalent to version"] = TestStatus.PASSED
        if " ... " in line:
            running = line.split(" ... ")[0]
        if line.startswith(DJANGO_MIGRATION_PREFIX) and line.endswith(" ... ok"):
            line = line.split("...", 1)[-1].strip()
        for pattern, status in UNITTEST_RESULTS:
            match = pattern.match(line)
            if match:
                name = match.group(1)
                statuses[name] = status
                if UNITTEST_NAME.match(previous_line) and not UNITTEST_NAME.match(name):
                    statuses[previous_line] = status  # the docstring's test, by its name
                break
        for prefix, status in (("FAIL:", TestStatus.FAILED), ("ERROR:", TestStatus.ERROR)):
            if line.startswith(prefix) and len(line.split()) > 1:
                statuses[line.split()[1]] = status  # SWE-bench keeps the bare method name
        if line.startswith("ok") and running is not None:
            statuses[running] = TestStatus.PASSED  # `name ... <output the test printed>\nok`
        previous_line = line
    for pattern in DJANGO_INTERRUPTED_OK:
        for match in pattern.finditer(log):
            statuses[match.group(1)] = TestStatus.PASSED
    return statuses


# -- sympy's own runner (bin/test --verbose) -----------------------------------------------------

SYMPY_FILE_VERDICTS = ("[OK]", "[FAIL]")
SYMPY_RESULTS = {
    "ok": TestStatus.PASSED,
    "F": TestStatus.FAILED,
    "E": TestStatus.ERROR,
    "f": TestStatus.XFAIL,
    "s": TestStatus.SKIPPED,
}


def sympy_failure_header(line: str) -> str | None:
    """`path.py:test_name` of a failure header `___ path.py:test_name ___`, as SWE-bench's
    `(_*) (.*)\\.py:(.*) (_*)` finds it in a line (from the line's first space to the last
    `.py:` before its last space, then to that space), without the regex: its backtracking
    takes time growing with the square of a line the graded tests print."""
    last_space = line.rfind(" ")
    suffix = line.rfind(".py:", 0, last_space)
    first_space = line.find(" ")
    if suffix < 0 or not 0 <= first_space < suffix:
        return None
    return f"{line[first_space + 1 : suffix]}.py:{line[suffix + 4 : last_space]}"


def parse_sympy(log: str) -> StatusMap:
    """`test_name <result>` lines, plus the failure headers `___ path.py:test_name ___`."""
    text = strip_ansi(log)
    statuses: StatusMap = {}
    for raw in text.splitlines():
        header = sympy_failure_header(raw)
        if header is not None:
            statuses[header] = TestStatus.FAILED
    for raw in text.splitlines():
        line = raw.strip()
        for verdict in SYMPY_FILE_VERDICTS:  # a file's line ends `[OK]` or `[FAIL]`
            if line.endswith(verdict):
                line = line.removesuffix(verdict).rstrip()
        if not line.startswith("test_"):
            continue
        words = line.split()
        status = SYMPY_RESULTS.get(words[-1]) if len(words) > 1 else None
        if status is not None:
            statuses[words[0]] = status
    return statuses


def _as_statuses(parse: Callable[[str], dict[str, str]]) -> Callable[[str], StatusMap]:
    return lambda log: {test_id: TestStatus(status) for test_id, status in parse(log).items()}


PARSERS: dict[str, Callable[[str], StatusMap]] = {
    "pytest": parse_pytest,
    "django": parse_unittest,
    "unittest": parse_unittest,
    "sympy": parse_sympy,
    **{name: _as_statuses(parse) for name, parse in OTHER_PARSERS.items()},  # other languages
}


def parse_log(parser: str, log: str) -> StatusMap:
    """Parse `log` with the named parser (one of PARSERS)."""
    if parser not in PARSERS:
        raise ValueError(f"unknown log parser {parser!r} (known: {', '.join(sorted(PARSERS))})")
    return PARSERS[parser](log)
