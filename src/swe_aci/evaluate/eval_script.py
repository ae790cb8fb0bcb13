"""Grading a SWE-bench 5 row (one that carries its own `eval_script`) as SWE-bench 5 grades it.

In the task's image under swe-aci's sandbox (no network, limits, the evaluation's timeout): the
prediction applied in SWE-bench's order (`env/patch.py`, fuzzy), the task's `test_assets/` staged,
the row's `eval.sh` run with the test command's exit status recorded after the end marker (as
`swebench.harness.utils.record_test_exit_code` does), the log read between SWE-bench's markers and
parsed with the row's `log_parser`: swe-aci's equivalent parser by default, swebench's own
function under `--grading swebench`; `eval_type` honoured. A log with no result and no sign that a
suite ran, or a failing exit status with no failed test, is not graded resolved (swebench 5's
`get_logs_eval`). Under `--grading swebench` the instance's report also carries swebench's own
report dict (`get_eval_report`) made from the same log.
"""

from __future__ import annotations

import re
import shlex
import tempfile
import time
from pathlib import Path
from typing import Any

from swe_aci.env.base import Environment
from swe_aci.env.logged import run_logged
from swe_aci.env.patch import apply_patch
from swe_aci.evaluate.grading import Grade, GradingMode, TestResults, broken_run, grade
from swe_aci.evaluate.parsers import StatusMap, TestStatus, parse_log
from swe_aci.evaluate.report import InstanceReport
from swe_aci.tasks import Task

START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"
TEST_EXIT_CODE = ">>>>> Test Exit Code"
TEST_EXIT_CODE_VAR = "SWEBENCH_TEST_EXIT_CODE"
EXIT_CODE_LINE = re.compile(rf"{re.escape(TEST_EXIT_CODE)}:\s*(-?\d+)")
SCRIPT_PREAMBLE = ("#!/bin/bash", "set -uxo pipefail")
# swebench's `SUITE_RAN`: a runner's own summary line when it reports passes only by count.
SUITE_RAN = re.compile(
    r"Executed [1-9]\d* of \d+|TOTAL: [1-9]\d* (?:SUCCESS|FAILED)|[1-9]\d* passing"
    r"|Tests:\s+[1-9]\d*|Test Suites:\s+(?:\d+ \w+, )*[1-9]\d* total|^# tests [1-9]\d*"
    r"|[1-9]\d* specs?, \d+ failures?|': ok$",
    re.M,
)
# The swebench parsers a lenient (swe-aci) parser reads the same logs of, with the same test ids:
# swebench's Python parsers are pytest's in three variants (and aliases of them), Django's and
# SymPy's.
PYTEST_FAMILY = (
    "pytest pytest_options pytest_v2 seaborn matplotlib astroid flask marshmallow pvlib pyvista "
    "sqlfluff xarray pydicom requests pylint astropy scikit sphinx"
)
LENIENT_PARSERS = {
    **{f"parse_log_{name}": "pytest" for name in PYTEST_FAMILY.split()},
    "parse_log_django": "django",
    "parse_log_sympy": "sympy",
    # other languages: those whose test ids ours give exactly as swebench's (the parity tests of
    # tests/test_evaluate_parsers_other.py); TAP and PHPUnit ids differ, so they are not here
    "parse_log_gotest": "go_test",
    "parse_log_cargo": "cargo",
    "parse_log_jest": "jest",
}
MAX_ASSET_FILES = 1000
MAX_ASSET_BYTES = 200_000_000


class EvalScriptError(Exception):
    """The row's eval script cannot give a grade (one line; the instance's outcome is error)."""


def eval_script_problem(task: Task, mode: GradingMode) -> str | None:
    """Why a SWE-bench 5 row cannot be graded under `mode`, or None."""
    if mode == "lenient" and task.log_parser not in LENIENT_PARSERS:
        return (
            f"the row's log_parser {task.log_parser} has no swe-aci equivalent: grade it with "
            "--grading swebench"
        )
    if not task.FAIL_TO_PASS and task.eval_type == "pass_and_fail":
        return "the row has no FAIL_TO_PASS tests"
    return None


def with_exit_code(eval_script: str) -> str:
    """The script, recording the test command's own status after the end marker (the script's
    own status is that of the `git checkout` that ends it)."""
    lines = [line for line in eval_script.strip().split("\n") if line not in SCRIPT_PREAMBLE]
    for index, line in enumerate(lines):
        if END_TEST_OUTPUT in line:
            lines[index : index + 1] = [
                f"{TEST_EXIT_CODE_VAR}=$?",
                line,
                f'echo "{TEST_EXIT_CODE}: ${TEST_EXIT_CODE_VAR}"',
            ]
            break
    return "\n".join([*SCRIPT_PREAMBLE, *lines]) + "\n"


def stage_assets(env: Environment, task: Task) -> None:
    """Copy the task's `test_assets/<path>` files to `<path>` in the repository (binary files a
    patch cannot carry), through the sandbox's bounded file writes."""
    if task.task_dir is None:
        return
    root = Path(task.task_dir) / "test_assets"
    if not root.is_dir():
        return
    files = [path for path in sorted(root.rglob("*")) if path.is_file() and not path.is_symlink()]
    if len(files) > MAX_ASSET_FILES or sum(path.stat().st_size for path in files) > MAX_ASSET_BYTES:
        raise EvalScriptError(f"{root}: more test assets than {MAX_ASSET_FILES} files or 200 MB")
    for path in files:
        relative = path.relative_to(root).as_posix()
        env.write_file(f"{env.repo_path}/{relative}", path.read_bytes())


def script_command(work: str) -> str:
    return f"bash {shlex.quote(work + '/eval.sh')}"


def test_output(log: str) -> str | None:
    """The log between SWE-bench's markers; None when they are not both there (the script broke
    off before or while running the tests)."""
    if START_TEST_OUTPUT not in log or END_TEST_OUTPUT not in log:
        return None
    return log.split(START_TEST_OUTPUT, 1)[1].split(END_TEST_OUTPUT, 1)[0]


def recorded_exit_code(log: str) -> int | None:
    match = EXIT_CODE_LINE.search(log)
    return int(match.group(1)) if match else None


def statuses_of(task: Task, mode: GradingMode, log: str) -> StatusMap:
    """The tests' statuses in the log under the row's parser (swebench's under `swebench`); the
    whole log when the markers' region holds none (swebench's fallback)."""
    sliced = test_output(log)
    if sliced is None:
        raise EvalScriptError("the eval script's log lacks SWE-bench's test-output markers")
    statuses = parse_with(task, mode, sliced) or parse_with(task, mode, log)
    if not statuses and not SUITE_RAN.search(log):
        raise EvalScriptError("no test ran: the log has no result and no sign of a test suite")
    return statuses


def parse_with(task: Task, mode: GradingMode, log: str) -> StatusMap:
    assert task.log_parser is not None
    if mode == "lenient":
        return parse_log(LENIENT_PARSERS[task.log_parser], log)
    from swe_aci.evaluate.grading import swebench_log_parsers

    swebench_log_parsers()  # one line when swebench is missing
    from swebench.harness.log_parsers import PARSER_REGISTRY

    parse = PARSER_REGISTRY.get(task.log_parser)
    if parse is None:
        raise EvalScriptError(f"swebench has no log parser {task.log_parser}")
    found = parse(log, test_spec(task))
    names = {status.value for status in TestStatus}
    return {test: TestStatus(status) for test, status in found.items() if status in names}


def grade_eval_script(task: Task, mode: GradingMode, statuses: StatusMap) -> Grade:
    """SWE-bench's verdict of the statuses: `pass_and_fail` as every row is graded; `fail_only`:
    a test fails only when the log reports it FAILED (absent counts as success)."""
    parser = LENIENT_PARSERS.get(task.log_parser or "", "pytest")
    if task.eval_type == "pass_and_fail":
        return grade(parser, statuses, task.FAIL_TO_PASS, task.PASS_TO_PASS, mode)

    def split(test_ids: list[str]) -> TestResults:
        results = TestResults()
        for test_id in test_ids:
            failed = statuses.get(test_id) == TestStatus.FAILED
            (results.failure if failed else results.success).append(test_id)
        return results

    return Grade(FAIL_TO_PASS=split(task.FAIL_TO_PASS), PASS_TO_PASS=split(task.PASS_TO_PASS))


def test_spec(task: Task) -> Any:
    """swebench's TestSpec of the row, as `make_test_spec` builds it."""
    from swebench.harness.utils import make_test_spec

    return make_test_spec(swebench_instance(task))


def swebench_instance(task: Task) -> dict[str, Any]:
    """The row as the instance dict swebench's harness reads."""
    return {
        "instance_id": task.instance_id,
        "repo": task.repo,
        "version": task.version,
        "base_commit": task.base_commit,
        "image": task.image,
        "eval_script": task.eval_script,
        "log_parser": task.log_parser,
        "eval_type": task.eval_type,
        "FAIL_TO_PASS": task.FAIL_TO_PASS,
        "PASS_TO_PASS": task.PASS_TO_PASS,
    }


def swebench_report(task: Task, patch: str, model_name: str, log: str) -> dict[str, Any]:
    """swebench's own `get_eval_report` of this log (its keys: `patch_exists`,
    `patch_successfully_applied`, `resolved`, `tests_status`, ...)."""
    from swebench.harness.grading import get_eval_report

    prediction = {
        "instance_id": task.instance_id,
        "model_name_or_path": model_name,
        "model_patch": patch,
    }
    with tempfile.NamedTemporaryFile("w", suffix=".log", encoding="utf-8") as handle:
        handle.write(log)
        handle.flush()
        report = get_eval_report(test_spec(task), prediction, handle.name, True)
    return report[task.instance_id]


def run_eval_script(
    env: Environment,
    task: Task,
    patch: str,
    timeout: float,
    report: InstanceReport,
    timings: dict[str, float],
    work: str,
) -> tuple[InstanceReport, str]:
    """Apply the prediction, run the row's eval script, grade its log (see the module's
    docstring); the report's outcome is set, the log returned."""
    started = time.monotonic()
    if patch.strip():
        applied = apply_patch(env, patch, fuzz=True)
        if not applied.applied:
            timings["patch"] = round(time.monotonic() - started, 3)
            report.outcome = "patch_failed"
            report.message = applied.complaint()
            return report, ""
    stage_assets(env, task)
    env.write_file(f"{work}/eval.sh", with_exit_code(task.eval_script or "").encode("utf-8"))
    timings["patch"] = round(time.monotonic() - started, 3)
    started = time.monotonic()
    result = run_logged(env, script_command(work), timeout=timeout, log_path=f"{work}/eval.log")
    timings["tests"] = round(time.monotonic() - started, 3)
    exit_code = recorded_exit_code(result.log)
    report.test_exit_code = exit_code
    if report.grading == "swebench":
        report.swebench_report = swebench_report(task, patch, report.model_name_or_path, result.log)
    if result.timed_out:
        report.outcome = "timeout"
        report.message = f"the tests ran past the {timeout:g} s timeout"
        return report, result.log
    try:
        statuses = statuses_of(task, report.grading, result.log)
    except EvalScriptError as error:
        report.outcome = "error"
        report.message = str(error)
        return report, result.log
    report.tests_status = grade_eval_script(task, report.grading, statuses)
    report.record_verdict(broken_run(exit_code, statuses) if statuses else None)
    return report, result.log
