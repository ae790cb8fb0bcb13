"""Grading one instance from its test log, as SWE-bench grades.

Resolved iff every FAIL_TO_PASS test passed (PASSED or XFAIL) and every PASS_TO_PASS test was
kept (PASSED, XFAIL or SKIPPED); a test missing from the log did neither. Two sets of rules:

- `lenient` (the default): our parsers (`parsers.py`, which find what swebench's find and more),
  ids compared after `normalise_id` on both sides;
- `swebench`: swebench 5.0.2's own parsers (`swebench_parsers.py`) and its id matching (the row's
  ids as they are, a truncated parametrized id matched by prefix), so the number is comparable
  with the leaderboard.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from swe_aci.evaluate.parsers import StatusMap, TestStatus, parse_log
from swe_aci.evaluate.swebench_parsers import SWEBENCH_PARSERS

GradingMode = Literal["lenient", "swebench"]
GRADING_MODES: tuple[GradingMode, ...] = ("lenient", "swebench")

PASSING = frozenset({TestStatus.PASSED, TestStatus.XFAIL})
KEPT = PASSING | {TestStatus.SKIPPED}
PYTEST_PARAMETRIZED = re.compile(r"(.*?)\[(.*)\]")
# `test_x (module.Class.test_x)` (Python >= 3.11) is `test_x (module.Class)` (older Pythons)
UNITTEST_LONG_NAME = re.compile(r"^(\w+) \(([\w.]+)\.\1\)$")


def normalise_id(parser: str, test_id: str) -> str:
    """The form of a test id that grading compares.

    pytest: a parameter starting with one `/` (a path) keeps only `/` and its last component, so
    ids recorded on another machine match (`t[/n/fs/x/a.dcm-data0]` is `t[/a.dcm-data0]`).
    django / unittest: the Python 3.11 name form `test_x (mod.Class.test_x)` becomes the older
    `test_x (mod.Class)`.
    """
    if parser == "pytest":
        match = PYTEST_PARAMETRIZED.search(test_id)
        if match:
            main, option = match.groups()
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


def parse_for(mode: GradingMode, parser: str, log: str) -> StatusMap:
    """The statuses of `log` under the grading mode's parser."""
    if mode == "swebench":
        return SWEBENCH_PARSERS[parser](log)
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
