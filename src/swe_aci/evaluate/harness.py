"""Evaluating predictions: each in a fresh environment at the task's base.

Per instance: build (or take from the cache) the task's environment, start a sandbox at the base,
apply the prediction (`env.patch.apply_patch` with fuzz: SWE-bench's order of `git apply` and
`patch --fuzz`), restore the files the test patch touches
and apply it, run the test command with no network and a timeout through the runner's guard
(`runner.py`; `env.logged.run_logged`), parse its log up to the end of the runner's session, grade. The prediction's files
that can change how the tests run are listed in the report (`integrity.py`); `strict` grades such
a prediction unresolved.

The patches (`apply_patch`'s) and the log live in private directories under the sandbox's /tmp, outside the repository,
so neither the prediction nor the tests can see or overwrite them through the repository.
"""

from __future__ import annotations

import logging
import secrets
import shlex
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from swe_aci.env.base import Environment, SandboxError
from swe_aci.env.config import EnvConfig
from swe_aci.env.diff import patch_paths
from swe_aci.env.factory import make_environment
from swe_aci.env.logged import read_log, run_logged
from swe_aci.env.patch import apply_patch
from swe_aci.evaluate.eval_script import eval_script_problem, run_eval_script
from swe_aci.evaluate.grading import (
    GradingMode,
    SwebenchParseError,
    SwebenchRow,
    broken_run,
    grade,
    parse_for,
)
from swe_aci.evaluate.integrity import integrity_of
from swe_aci.evaluate.options import GradingOptions
from swe_aci.evaluate.parsers import PARSERS
from swe_aci.evaluate.report import (
    InstanceReport,
    instance_dir,
    load_instance,
    patch_digest,
    save_instance,
)
from swe_aci.evaluate.results_record import disagreement, recorded_statuses
from swe_aci.evaluate.runner import install_guard, session_log
from swe_aci.executors.base import Jobs
from swe_aci.executors.threads import ThreadExecutor
from swe_aci.recipes import RecipeError, task_workspace
from swe_aci.records import Prediction, write_text_atomic
from swe_aci.tasks import Task

# Seconds each patch command may take.
PATCH_TIMEOUT = 120.0
EVALUATION_OUTPUT_CAP = 4_200_000
Log = Callable[[str], None]
logger = logging.getLogger(__name__)


class InstanceError(Exception):
    """The harness could not evaluate an instance (one line; the instance's outcome is error)."""


def evaluation_problem(task: Task, grading: GradingMode = "lenient") -> str | None:
    """Why a task cannot be evaluated, or None."""
    if task.eval_script is not None:
        return eval_script_problem(task, grading)
    recipe = task.environment
    if recipe is None:
        return (
            "the row has neither an eval_script nor an environment recipe (an official SWE-bench "
            "4.x row?): grade it from its SWE-bench 5 row or task repository, which carry "
            "eval_script, log_parser and eval_type"
        )
    if not recipe.test_cmd:
        return "the row has no environment.test_cmd: nothing to run its tests with"
    if not recipe.log_parser or recipe.log_parser not in PARSERS:
        return f"the row's environment.log_parser must be one of {', '.join(sorted(PARSERS))}"
    if not task.FAIL_TO_PASS:
        return "the row has no FAIL_TO_PASS tests"
    return None


def evaluate_instance(
    task: Task,
    patch: str,
    env_config: EnvConfig,
    output_dir: Path,
    options: GradingOptions,
    *,
    model_name: str = "",
    log: Log | None = None,
) -> InstanceReport:
    """Evaluate one prediction of `task` and save its outputs under `output_dir/<instance_id>/`.

    Never raises for a problem of the instance (no tests, environment not buildable, sandbox
    down): that is an `error` report, saved like the others, so a run goes on. `options.mode`
    names the rules (`grading.py`); `options.strict` grades a prediction with integrity flags
    unresolved. `options.runs` > 1 evaluates it that many times, each in a fresh environment: the
    report is the first run's, with every run's outcome and the FAIL_TO_PASS / PASS_TO_PASS tests
    whose result differed between runs (`flaky_tests`); each further run's log is
    `test_output.run<k>.txt`.
    """
    started = time.monotonic()
    results = [
        _evaluate_once(task, patch, env_config, options, model_name, log)
        for _ in range(max(1, options.runs))
    ]
    report, test_log = results[0]
    if options.runs > 1:
        report.runs = options.runs
        report.run_outcomes = [each.outcome for each, _ in results]
        report.flaky_tests = flaky_tests([each for each, _ in results])
    if report.empty_patch:
        report.base_outcome = report.outcome
        report.outcome = "empty_patch"
        base = f"the tests at the base: {report.base_outcome}"
        report.message = f"{base} ({report.message})" if report.message else base
    report.timings["total"] = round(time.monotonic() - started, 3)
    save_instance(output_dir, report, patch, test_log)
    for number, (_, other_log) in enumerate(results[1:], 2):
        write_text_atomic(
            instance_dir(output_dir, task.instance_id) / run_log_name(number), other_log
        )
    return report


def run_log_name(number: int) -> str:
    return f"test_output.run{number}.txt"


def flaky_tests(reports: list[InstanceReport]) -> list[str]:
    """The FAIL_TO_PASS and PASS_TO_PASS tests whose result differs between the graded runs (a
    run that graded nothing, e.g. one that timed out, counts each test as not passed)."""
    graded = [report.tests_status for report in reports]
    first = next((grade for grade in graded if grade is not None), None)
    if first is None:
        return []
    tests = [
        *first.FAIL_TO_PASS.success,
        *first.FAIL_TO_PASS.failure,
        *first.PASS_TO_PASS.success,
        *first.PASS_TO_PASS.failure,
    ]
    passed = [
        set() if grade is None else {*grade.FAIL_TO_PASS.success, *grade.PASS_TO_PASS.success}
        for grade in graded
    ]
    return [test for test in dict.fromkeys(tests) if len({test in run for run in passed}) > 1]


def _evaluate_once(
    task: Task,
    patch: str,
    env_config: EnvConfig,
    options: GradingOptions,
    model_name: str,
    log: Log | None,
) -> tuple[InstanceReport, str]:
    """One evaluation in a fresh environment: its report (unsaved) and test log."""
    started = time.monotonic()
    timings: dict[str, float] = {}
    report = InstanceReport(
        instance_id=task.instance_id,
        model_name_or_path=model_name,
        outcome="error",
        empty_patch=not patch.strip(),
        patch_sha256=patch_digest(patch),
        grading=options.mode,
        strict=options.strict,
        integrity=integrity_of(patch, task.test_patch or ""),
    )
    test_log = ""
    try:
        problem = evaluation_problem(task, options.mode)
        if problem is not None:
            raise InstanceError(problem)
        with _timed(timings, "environment"):
            environment = _start_environment(task, env_config, options.cache_dir, log)
        try:
            report, test_log = _evaluate_in(
                environment, task, patch, options.timeout, report, timings
            )
        finally:
            environment.close()
    except (InstanceError, RecipeError, SandboxError, SwebenchParseError, OSError) as exc:
        report.message = " ".join(str(exc).split()) or type(exc).__name__
    except Exception as exc:  # a harness bug must not stop the other instances
        logger.exception("evaluating %s failed", task.instance_id)
        report.message = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())}"
    timings["total"] = round(time.monotonic() - started, 3)
    report.timings = timings
    return report, test_log


def _start_environment(
    task: Task, env_config: EnvConfig, cache_dir: Path | None, log: Log | None
) -> Environment:
    """The task's workspace with no network and room for the test log (the recipe leaves both
    as it found them)."""
    output_cap = max(env_config.output_cap, EVALUATION_OUTPUT_CAP)
    config = env_config.model_copy(update={"network": False, "output_cap": output_cap})
    return make_environment(task_workspace(task, config, cache_dir=cache_dir, log=log))


def _evaluate_in(
    env: Environment,
    task: Task,
    patch: str,
    timeout: float,
    report: InstanceReport,
    timings: dict[str, float],
) -> tuple[InstanceReport, str]:
    work = f"/tmp/swe-aci-eval-{secrets.token_hex(8)}"
    try:
        if task.eval_script is not None:
            return run_eval_script(env, task, patch, timeout, report, timings, work)
        return _apply_and_test(env, task, patch, timeout, report, timings, work)
    finally:
        env.run(f"chmod u+rwx {work} 2>/dev/null; rm -rf {work}", timeout=PATCH_TIMEOUT)


def _apply_and_test(
    env: Environment,
    task: Task,
    patch: str,
    timeout: float,
    report: InstanceReport,
    timings: dict[str, float],
    work: str,
) -> tuple[InstanceReport, str]:
    assert task.environment is not None  # checked by evaluation_problem
    parser = task.environment.log_parser
    with _timed(timings, "patch"):
        guard = install_guard(env, work, parser)
        if patch.strip():
            applied = apply_patch(env, patch, fuzz=True)
            if not applied.applied:
                report.outcome = "patch_failed"
                report.message = applied.complaint()
                return report, ""
        _restore_test_files(env, task.test_patch or "")
        if (task.test_patch or "").strip():
            applied = apply_patch(env, task.test_patch or "", fuzz=True)
            if not applied.applied:
                raise InstanceError(f"the row's test_patch does not apply: {applied.complaint()}")
    log_path = f"{work}/test_output.txt"
    # the evaluation's directory cannot be listed while the tests run (pytest's record of the
    # results has a random name in it); its files are reached by their paths
    hide = f"chmod u=wx,go= {work} 2>/dev/null"
    with _timed(timings, "tests"):
        result = run_logged(
            env,
            f"{hide}; {guard.prefix}\n{task.environment.test_cmd}",
            timeout=timeout,
            log_path=log_path,
        )
    test_log = result.log
    report.test_exit_code = result.exit_code
    if result.timed_out:
        report.outcome = "timeout"
        report.message = f"the tests ran past the {timeout:g} s timeout"
        return report, test_log
    reported = session_log(test_log, guard.mark)
    row = SwebenchRow(instance_id=task.instance_id, repo=task.repo)
    statuses = parse_for(report.grading, parser, reported or "", row)
    report.tests_status = grade(
        parser, statuses, task.FAIL_TO_PASS, task.PASS_TO_PASS, report.grading
    )
    if reported is None:
        report.outcome = "unresolved"
        report.message = "pytest's session did not end (the log has no end-of-session mark)"
        return report, test_log
    if guard.results is not None:
        record = recorded_statuses(read_log(env, guard.results))
        flag = disagreement(report.tests_status, record, task.FAIL_TO_PASS, task.PASS_TO_PASS)
        if flag is not None:
            report.integrity.flagged.append(flag)
    report.record_verdict(broken_run(result.exit_code, statuses))
    return report, test_log


def _restore_test_files(env: Environment, test_patch: str) -> None:
    """Put the files the test patch touches back as they are at the base (as SWE-bench does), so
    a prediction that edited the tests neither blocks the test patch nor changes the tests."""
    files = sorted(patch_paths(test_patch))
    if not files:
        return
    base = shlex.quote(env.base_commit)
    commands = [
        f"git --literal-pathspecs checkout -q {base} -- {shlex.quote(name)} 2>/dev/null"
        f" || rm -rf -- {shlex.quote(name)}"
        for name in files
    ]
    env.run(f"cd {shlex.quote(env.repo_path)} && " + " ; ".join(commands), timeout=PATCH_TIMEOUT)


class _timed:
    """Record a block's wall time under `name` in `timings`, even when it raises."""

    def __init__(self, timings: dict[str, float], name: str) -> None:
        self.timings, self.name = timings, name

    def __enter__(self) -> None:
        self.start = time.monotonic()

    def __exit__(self, *exc_info: object) -> None:
        self.timings[self.name] = round(time.monotonic() - self.start, 3)


def evaluate_all(
    tasks: Iterable[Task],
    predictions: dict[str, Prediction],
    env_config: EnvConfig,
    output_dir: Path,
    options: GradingOptions,
    *,
    on_done: Callable[[InstanceReport, bool], None] | None = None,
    graded: dict[str, InstanceReport] | None = None,
) -> dict[str, InstanceReport]:
    """Evaluate every task that has a prediction, `options.workers` at a time.

    An instance whose saved report was made from the same patch under the same rules is not
    evaluated again unless `options.redo` (one that ended in `error` always is: the harness's
    failure may be gone); `on_done(report, reused)` is called as each instance finishes.
    `graded` holds reports the caller already has in memory, just made by `evaluate_instance`
    into `output_dir` (a batch's workers): one made from the same patch under the same rules is
    taken as it is, neither read back from disk nor evaluated again, whatever `options.redo` and
    its outcome.
    """
    reports: dict[str, InstanceReport] = {}
    pending: list[tuple[Task, Prediction]] = []
    graded = graded or {}
    for task in tasks:
        prediction = predictions.get(task.instance_id)
        if prediction is None:
            continue
        fresh = graded.get(task.instance_id)
        if fresh is not None:
            saved = fresh
        else:
            saved = None if options.redo else load_instance(output_dir, task.instance_id)
        if (
            saved is not None
            and (saved is fresh or saved.completed)
            and saved.patch_sha256 == patch_digest(prediction.model_patch)
            and (saved.grading, saved.strict, saved.runs)
            == (options.mode, options.strict, options.runs)
        ):
            reports[task.instance_id] = saved
            if on_done is not None:
                on_done(saved, True)
        else:
            pending.append((task, prediction))

    def run_one(task: Task, prediction: Prediction) -> InstanceReport:
        return evaluate_instance(
            task,
            prediction.model_patch,
            env_config,
            output_dir,
            options,
            model_name=prediction.model_name_or_path,
        )

    todo = list(reversed(pending))

    def report(event: object) -> None:
        assert isinstance(event, InstanceReport)
        reports[event.instance_id] = event
        if on_done is not None:
            on_done(event, False)

    # on Ctrl-C: start nothing new; the instances running finish (within their timeout)
    ThreadExecutor(options.workers).run(
        Jobs(
            lambda: todo.pop() if todo else None,
            len(todo),
            lambda item, channel: run_one(*item),
        ),
        report,
    )
    return reports
