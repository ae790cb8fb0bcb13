"""Grading one instance from its test log, as SWE-bench grades.

Resolved iff every FAIL_TO_PASS test passed (PASSED or XFAIL) and every PASS_TO_PASS test was
kept (PASSED, XFAIL or SKIPPED); a test missing from the log did neither. Two sets of rules:

- `lenient` (the default): our parsers (`parsers.py`, which find what swebench's find and more),
  ids compared after `normalise_id` on both sides;
- `swebench`: the swebench package's own parsers (the optional extra `swe-aci[swebench]`, pinned
  to 5.0.2, whose grading our fixtures record), chosen as swebench chooses them: by the row's
  repository (its `MAP_REPO_TO_PARSER_*` tables, every language it has), and for a repository it
  does not know by our parser's name (`SWEBENCH_PARSERS`); and its id matching (the row's ids as
  they are, a truncated parametrized id matched by prefix), so the number is comparable with the
  leaderboard.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel

from swe_aci.evaluate.parsers import StatusMap, TestStatus, parse_log

GradingMode = Literal["lenient", "swebench"]
GRADING_MODES: tuple[GradingMode, ...] = ("lenient", "swebench")

# characters of a log line swebench's parsers read (far beyond any test id or summary line)
SWEBENCH_LINE_LIMIT = 10_000
PASSING = frozenset({TestStatus.PASSED, TestStatus.XFAIL})
KEPT = PASSING | {TestStatus.SKIPPED}
# `test_x (module.Class.test_x)` (Python >= 3.11) is `test_x (module.Class)` (older Pythons)
UNITTEST_LONG_NAME = re.compile(r"^(\w+) \(([\w.]+)\.\1\)$")
# Our parser names -> the functions of `swebench.harness.log_parsers.python`, for the rows of a
# repository swebench does not know. swebench has no plain-unittest parser; its Django one reads
# unittest's verbose output, so `unittest` uses it.
SWEBENCH_PARSERS = {
    "pytest": "parse_log_pytest_options",
    "django": "parse_log_django",
    "unittest": "parse_log_django",
    "sympy": "parse_log_sympy",
}
# swebench's modules of log parsers, each with its table of repository -> parser.
SWEBENCH_REPO_TABLES = {
    "python": "MAP_REPO_TO_PARSER_PY",
    "c": "MAP_REPO_TO_PARSER_C",
    "go": "MAP_REPO_TO_PARSER_GO",
    "java": "MAP_REPO_TO_PARSER_JAVA",
    "javascript": "MAP_REPO_TO_PARSER_JS",
    "php": "MAP_REPO_TO_PARSER_PHP",
    "ruby": "MAP_REPO_TO_PARSER_RUBY",
    "rust": "MAP_REPO_TO_PARSER_RUST",
}
SWEBENCH_MISSING = "--grading swebench needs the swebench package: pip install 'swe-aci[swebench]'"
STATUS_NAMES = frozenset(status.value for status in TestStatus)


class SwebenchMissingError(RuntimeError):
    """The swebench package (or a module it needs) cannot be imported."""


@dataclass(frozen=True)
class SwebenchRow:
    """What swebench's parsers may read of a row (its `TestSpec`): some JavaScript and Ruby
    parsers pick a runner by the instance id or the version."""

    instance_id: str = ""
    repo: str = ""
    version: str = ""


class SwebenchParseError(ValueError):
    """swebench's parser failed on a log (one line)."""


def swebench_module(language: str) -> ModuleType:
    """swebench's `harness.log_parsers.<language>`, imported only when `--grading swebench` asks
    for it: importing it loads swebench's whole harness (docker, datasets, modal; ~1,700
    modules)."""
    try:
        return importlib.import_module(f"swebench.harness.log_parsers.{language}")
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] == "swebench":
            raise SwebenchMissingError(SWEBENCH_MISSING) from exc
        raise SwebenchMissingError(
            f"--grading swebench: the swebench package cannot import {exc.name!r}: "
            "pip install 'swe-aci[swebench]'"
        ) from exc


def swebench_log_parsers() -> ModuleType:
    """swebench's Python parsers (`harness.log_parsers.python`)."""
    return swebench_module("python")


def swebench_parser(repo: str, parser: str) -> Callable[[str, Any], dict[str, str]]:
    """The function swebench grades a row of `repo` with: its repository tables' choice, else
    the function our parser name maps to."""
    for language, table in SWEBENCH_REPO_TABLES.items():
        chosen = getattr(swebench_module(language), table).get(repo)
        if chosen is not None:
            return chosen
    if parser not in SWEBENCH_PARSERS:
        raise ValueError(
            f"unknown log parser {parser!r} (known: {', '.join(sorted(SWEBENCH_PARSERS))})"
        )
    return getattr(swebench_log_parsers(), SWEBENCH_PARSERS[parser])


def parse_swebench(parser: str, log: str, row: SwebenchRow | None = None) -> StatusMap:
    """The statuses swebench's own parser for the row finds in `log`, as our TestStatus.

    A status string that is none of ours (swebench keeps e.g. `PASSEDx` from a line starting
    `PASSEDx`) is left out: swebench grades it as neither passed nor kept, as we grade a missing
    test. A line longer than SWEBENCH_LINE_LIMIT is left out of the log first: swebench's
    patterns (`(.*?)\\[(.*)\\]`, `(_*) (.*)\\.py:(.*) (_*)`) backtrack, and on one line of
    megabytes the graded tests print they take hours.
    """
    row = row or SwebenchRow()
    parse = swebench_parser(row.repo, parser)
    log = "\n".join(line for line in log.split("\n") if len(line) <= SWEBENCH_LINE_LIMIT)
    from swebench.types import TestSpec  # loaded with the parsers above

    spec = TestSpec(
        instance_id=row.instance_id,
        image="",
        eval_script_list=[],
        repo=row.repo,
        version=row.version,
        FAIL_TO_PASS=[],
        PASS_TO_PASS=[],
    )
    try:
        statuses: dict[str, str] = parse(log, spec)
    except Exception as exc:  # swebench's parser, on a log the tests wrote
        raise SwebenchParseError(
            f"swebench's {parse.__name__} failed on the log: {type(exc).__name__}: "
            + " ".join(str(exc).split())[:200]
        ) from None
    return {
        test_id: TestStatus(status)
        for test_id, status in statuses.items()
        if status in STATUS_NAMES
    }


def normalise_id(parser: str, test_id: str) -> str:
    """The form of a test id that grading compares.

    pytest: a parameter starting with one `/` (a path) keeps only `/` and its last component, so
    ids recorded on another machine match (`t[/n/fs/x/a.dcm-data0]` is `t[/a.dcm-data0]`); the
    parameter is what stands between the first `[` and the last `]` (found without a regex: the
    tests being graded write the ids, and a backtracking pattern takes hours on a long one).
    django / unittest: the Python 3.11 name form `test_x (mod.Class.test_x)` becomes the older
    `test_x (mod.Class)`.
    """
    if parser == "pytest":
        opening, closing = test_id.find("["), test_id.rfind("]")
        if 0 <= opening < closing:
            main, option = test_id[:opening], test_id[opening + 1 : closing]
            if option.startswith("/") and not option.startswith("//") and "*" not in option:
                return f"{main}[/{option.split('/')[-1]}]"
        return test_id
    if parser in ("django", "unittest"):
        return UNITTEST_LONG_NAME.sub(r"\1 (\2)", test_id)
    return test_id


def normalise_statuses(parser: str, statuses: StatusMap) -> StatusMap:
    return {normalise_id(parser, test_id): status for test_id, status in statuses.items()}


def resolve_id(test_id: str, statuses: StatusMap) -> str | None:
    """The key of `statuses` recording `test_id`, or None.

    SWE-bench rows hold pytest ids cut at the first space of a parameter (`t[a` for `t[a b]`); such
    an id (more `[` than `]`) matches the ids it prefixes when they all agree on passing or not,
    as SWE-bench's grading does.
    """
    if test_id in statuses:
        return test_id
    if test_id.count("[") > test_id.count("]"):
        matches = [key for key in statuses if key.startswith(test_id)]
        if matches and len({statuses[key] in PASSING for key in matches}) == 1:
            return matches[0]
    return None


class TestResults(BaseModel):
    __test__ = False  # not a pytest test class

    success: list[str] = []
    failure: list[str] = []


class Grade(BaseModel):
    """SWE-bench's `tests_status` of one instance, and the verdict."""

    FAIL_TO_PASS: TestResults
    PASS_TO_PASS: TestResults

    @property
    def resolved(self) -> bool:
        return not self.FAIL_TO_PASS.failure and not self.PASS_TO_PASS.failure


def parse_for(
    mode: GradingMode, parser: str, log: str, row: SwebenchRow | None = None
) -> StatusMap:
    """The statuses of `log` under the grading mode's parser (swebench's for `row`)."""
    if mode == "swebench":
        return parse_swebench(parser, log, row)
    return parse_log(parser, log)


def grade(
    parser: str,
    statuses: StatusMap,
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    mode: GradingMode = "lenient",
) -> Grade:
    """Grade parsed statuses against the instance's FAIL_TO_PASS and PASS_TO_PASS ids."""
    lenient = mode == "lenient"
    normalised = normalise_statuses(parser, statuses) if lenient else statuses

    def split(test_ids: list[str], good: frozenset[TestStatus]) -> TestResults:
        results = TestResults()
        for test_id in test_ids:
            key = resolve_id(normalise_id(parser, test_id) if lenient else test_id, normalised)
            ok = key is not None and normalised[key] in good
            (results.success if ok else results.failure).append(test_id)
        return results

    return Grade(FAIL_TO_PASS=split(fail_to_pass, PASSING), PASS_TO_PASS=split(pass_to_pass, KEPT))


def broken_run(exit_code: int | None, statuses: StatusMap) -> str | None:
    """Why a test run's results cannot be graded, or None. As SWE-bench 5: a run that reports no
    test ran nothing (a broken command, a collection that found nothing), and a failing exit
    status with no failing test in the log means the run broke off (a crash, an interpreter error
    after the summary) or the log is not the run's."""
    if not statuses:
        return f"the test command ran no test (exit code {exit_code})"
    failed = any(status in (TestStatus.FAILED, TestStatus.ERROR) for status in statuses.values())
    if exit_code not in (None, 0) and not failed:
        return f"the tests exited with code {exit_code} and no test failed"
    return None
