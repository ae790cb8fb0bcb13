"""The tests' results as pytest itself recorded them (the guard's plugin, loaded from outside the
repository, writes them to a file at a random path the tests cannot list), compared with what the
log says.

The log is what the process printed, and code under test can print anything (a patched
`TerminalReporter` adding `PASSED <id>` after the real summary). A FAIL_TO_PASS or PASS_TO_PASS
test the log counts as passed that pytest's record does not is a disagreement, and a disagreement
is an integrity flag (`--strict` grades it unresolved).
"""

from __future__ import annotations

import json

from swe_aci.evaluate.grading import Grade, grade
from swe_aci.evaluate.integrity import IntegrityFlag
from swe_aci.evaluate.parsers import StatusMap, TestStatus

RECORD_PATH = "(pytest's own record)"
MAX_NAMED = 3


def recorded_statuses(text: str) -> StatusMap:
    """Each test's status from the record's JSON lines `[id, phase, status]`, as `pytest -rA`'s
    summary gives it: the call's result, or the setup's when the test never ran (an error or a
    skip there); an error at teardown after a call does not replace the call's line, which the
    summary prints last."""
    calls: StatusMap = {}
    others: StatusMap = {}
    for line in text.splitlines():
        try:
            test_id, phase, status = json.loads(line)
            value = TestStatus(status)
        except (ValueError, TypeError):
            continue  # a partial last line, an XPASS (no status of ours, as in the log)
        if not isinstance(test_id, str):
            continue
        (calls if phase == "call" else others)[test_id] = value
    return {**others, **calls}


def disagreement(
    log_grade: Grade, record: StatusMap, fail_to_pass: list[str], pass_to_pass: list[str]
) -> IntegrityFlag | None:
    """The flag for the graded tests the log counts as passed and pytest's record does not
    (matched under the lenient id rules, whatever the grading mode), or None."""
    recorded = grade("pytest", record, fail_to_pass, pass_to_pass, "lenient")
    differing = [
        test_id
        for logged, kept in (
            (log_grade.FAIL_TO_PASS, recorded.FAIL_TO_PASS),
            (log_grade.PASS_TO_PASS, recorded.PASS_TO_PASS),
        )
        for test_id in logged.success
        if test_id in kept.failure
    ]
    if not differing:
        return None
    named = ", ".join(differing[:MAX_NAMED]) + (" ..." if len(differing) > MAX_NAMED else "")
    return IntegrityFlag(
        path=RECORD_PATH,
        reason=(
            f"the log reports {len(differing)} test(s) passed that pytest's own record of the "
            f"run does not: {named}"
        ),
    )
