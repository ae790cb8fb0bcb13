"""Validating the pipeline's candidates: the reproduction test run on each, and its regressions
of the repository's existing tests, each run from a clean tree holding only that candidate's edit
(`pipeline/sandbox.py`). Python repositories run pytest on the test files that import the changed
module (`regressions.related_tests`) and on the changed modules' docstring examples
(`regressions.doctest_modules`); a repository of another language runs its own
`validation.suite_command`, or gets no regression signal. Every run at the base is a step of the
trajectory, run once per set of test files."""

from __future__ import annotations

from collections.abc import Callable

from swe_aci.pipeline import pinned, regressions, reproduction, structure
from swe_aci.pipeline.choose import Group
from swe_aci.pipeline.config import ValidateConfig
from swe_aci.pipeline.record import record_skipped
from swe_aci.pipeline.reproduction import Reproduction
from swe_aci.pipeline.sandbox import Sandbox
from swe_aci.trajectory.recorder import EpisodeRecorder


class Validation:
    """Scores candidates in place (`Group.reproduced`, `reproduction_passes`, `regressions`);
    `check_time` raises when the time budget is spent, before each run."""

    def __init__(
        self,
        sandbox: Sandbox,
        config: ValidateConfig,
        record: EpisodeRecorder,
        check_time: Callable[[], None],
        problem: str,
    ) -> None:
        self.sandbox = sandbox
        self.problem = problem
        self.config = config
        self.record = record
        self.check_time = check_time
        self.validated: list[Group] = []
        self._baselines: dict[tuple[str, ...], set[str] | None] = {}
        self._suite_passes_at_base: bool | None = None

    def validate(
        self,
        tree: dict[str, str],
        group: Group,
        repro: Reproduction | None,
        language: str,
    ) -> None:
        """The candidate's reproduction test run and its regressions of the existing tests
        (pytest's: Python repositories only), then one step with its score."""
        if language == structure.PYTHON:
            self._test(tree, group, repro)
        elif self.config.suite_command:
            self._run_suite(group, self.config.suite_command)
        elif not self.validated:
            why = (
                "the existing tests run with pytest only; the repository's code is "
                f"{language}: no regression signal"
            )
            record_skipped(self.record, "tests at the base", why)
        self.record.step(
            f"validate {len(self.validated) + 1}",
            "candidate tested",
            group.describe(),
            {"score": list(group.key()), "label": group.label, "source": group.edit.source},
        )
        self.validated.append(group)

    def _test(self, tree: dict[str, str], group: Group, repro: Reproduction | None) -> None:
        if repro is not None:
            self.check_time()
            run = self.sandbox.run_isolated(
                group.edit.texts, {repro.file: repro.text}, [repro.file]
            )
            group.reproduced, group.reproduction_passes = reproduction.outcome(run, repro)
            group.timed_out = run.timed_out
        changed = list(group.edit.texts)
        files = regressions.related_tests(
            tree,
            changed,
            [name.rpartition("::")[2].rpartition(".")[2] for name in group.label.split(" + ")],
            self.config.max_test_files,
        )
        modules = regressions.doctest_modules(tree, changed)
        base = self._baseline(files, modules)
        if base:
            self.check_time()
            run = self.sandbox.run_isolated(
                group.edit.texts, {}, [*files, *modules], statuses_only=True, doctests=bool(modules)
            )
            regressed = base - run.passed
            literals = pinned.replaced_literals(tree, group.edit.texts, self.problem)
            group.pinned = pinned.pinned_tests(tree, regressed, literals)
            counted = regressed - set(group.pinned)
            group.regressions = len(counted)
            group.regressed_functions = len({test.partition("[")[0] for test in counted})
            group.tests_at_base = len(base)
            group.timed_out = group.timed_out or run.timed_out

    def _run_suite(self, group: Group, command: str) -> None:
        """The repository's own test command on the candidate: a regression when it fails
        there and passed at the base (run once; failing there, no regression signal)."""
        if self._suite_passes_at_base is None:
            self.check_time()
            base = self.sandbox.run_suite({}, command)
            self._suite_passes_at_base = base.passed
            signal = "passes" if base.passed else "fails: no regression signal"
            self.record.step(
                "tests at the base",
                "the repository's test command",
                f"`{command}` {signal}\n{base.tail()}",
                {"command": command, "passed": base.passed},
            )
        if self._suite_passes_at_base:
            self.check_time()
            group.regressions = 0 if self.sandbox.run_suite(group.edit.texts, command).passed else 1

    def _baseline(self, files: list[str], modules: list[str]) -> set[str] | None:
        """The tests of `files` and the doctests of `modules` passing at the base (None: no test
        ran, no regression signal); run once per set of files."""
        key = (*files, *modules)
        if key not in self._baselines:
            passed: set[str] | None = None
            if key:
                self.check_time()
                base = self.sandbox.run_isolated(
                    {}, {}, list(key), statuses_only=True, doctests=bool(modules)
                )
                passed = None if base.timed_out or not base.passed else base.passed
                if passed:
                    signal = f"{len(base.passed)} pass of {len(base.statuses)}"
                elif base.timed_out:
                    signal = "no regression signal (the tests timed out)"
                else:
                    signal = f"no regression signal ({len(base.statuses)} tests ran, none passed)"
                tail = "" if passed else f"\n{base.tail()}"
                self.record.step(
                    "tests at the base",
                    "existing tests",
                    f"{signal} ({', '.join(key)}){tail}",
                    {"files": files, "doctests": modules},
                )
            self._baselines[key] = passed
        return self._baselines[key]
