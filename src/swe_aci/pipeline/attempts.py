"""Several attempts of the agent loop and a chooser (SWE-agent 1.x's retry agent).

Each attempt is a whole agent-loop episode in a fresh sandbox at its own temperature (seed + k
when a seed is set), written beside the instance's files under `attempts/<id>.attempt<k>/`; the
time budget is shared (an attempt's wall-time limit is what is left). The chooser sees only the
attempts' patches and the repository: in one more fresh sandbox each distinct patch (equal when
their changed lines are) is applied and the repository's test files that mention the changed
module run; fewest regressions win, then the most attempts agreeing, then the smallest diff. The
instance's own trajectory has one step per attempt and per validation, and the choice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from swe_aci.env.base import Environment
from swe_aci.env.patch import apply_patch
from swe_aci.models.base import ModelStats
from swe_aci.pipeline.choose import related_tests, scratch_only
from swe_aci.pipeline.config import AttemptsStrategy
from swe_aci.pipeline.record import OnStep, StagedEpisode
from swe_aci.pipeline.sandbox import Sandbox
from swe_aci.retrieval.documents import BaseTree, patched_files
from swe_aci.trajectory.exits import SUBMITTED
from swe_aci.trajectory.files import EpisodeFiles
from swe_aci.trajectory.result import EpisodeResult

# (attempt number, temperature, wall-time limit or 0) -> the attempt's result
RunAttempt = Callable[[int, float, float], EpisodeResult]


@dataclass
class Submission:
    """One distinct patch and the attempts that submitted it."""

    patch: str
    attempts: list[int] = field(default_factory=list)
    regressions: int | None = None

    @property
    def size(self) -> int:
        return len(changed_lines(self.patch))

    def key(self) -> tuple[int, int, int]:
        return (-(self.regressions or 0), len(self.attempts), -self.size)

    def describe(self) -> str:
        regressions = "not run" if self.regressions is None else str(self.regressions)
        return (
            f"attempts {','.join(map(str, self.attempts))}: regressions {regressions}, "
            f"{self.size} changed lines"
        )


def changed_lines(patch: str) -> tuple[str, ...]:
    """The patch's added and removed lines, trailing blanks stripped: equal fixes compare equal."""
    return tuple(
        line.rstrip()
        for line in patch.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


class Attempts(StagedEpisode):
    label = "attempts"
    strategy: AttemptsStrategy

    def __init__(
        self,
        strategy: AttemptsStrategy,
        run_attempt: RunAttempt,
        make_environment: Callable[[], Environment],
        files: EpisodeFiles,
        model_name: str,
        on_step: OnStep | None = None,
    ) -> None:
        super().__init__(strategy, files, model_name, ModelStats(), on_step)
        self.run_attempt = run_attempt
        self.make_environment = make_environment

    def _stages(self) -> tuple[str, str]:
        return self._choose(self._attempts())

    def _attempts(self) -> list[EpisodeResult]:
        budget = self.strategy.time_budget
        total = len(self.strategy.temperatures)
        results: list[EpisodeResult] = []
        for number, temperature in enumerate(self.strategy.temperatures, start=1):
            left = budget - (time.monotonic() - self.record.started) if budget else 0.0
            action = f"attempt {number}/{total} (T={temperature:g})"
            if budget and left <= 1:
                self.record.step(action, "skipped", "the time budget is spent", {})
                break
            result = self.run_attempt(number, temperature, max(left, 0.0))
            results.append(result)
            for name, value in vars(result.stats).items():
                setattr(self.stats, name, getattr(self.stats, name) + value)
            size = len(changed_lines(result.submission))
            observation = f"{result.exit_status}: {size} changed lines ({result.trajectory_path})"
            details = {"exit_status": result.exit_status, "trajectory": str(result.trajectory_path)}
            self.record.step(action, "agent loop", observation, details)
        return results

    def _choose(self, results: list[EpisodeResult]) -> tuple[str, str]:
        submissions: dict[tuple[str, ...], Submission] = {}
        for number, result in enumerate(results, start=1):
            if result.submission.strip():
                key = changed_lines(result.submission)
                submissions.setdefault(key, Submission(result.submission)).attempts.append(number)
        candidates = [c for c in submissions.values() if not scratch_only(c.patch)]
        if not candidates:
            status = results[-1].exit_status if results else "exit_time_limit"
            return self._end_choice(
                status, "no attempt submitted a patch of the repository's code", "", []
            )
        if len(candidates) > 1:
            self._validate(candidates)
        chosen = max(candidates, key=Submission.key)
        agree = f"{len(chosen.attempts)} of {len(results)} attempts agree"
        tested = (
            "" if chosen.regressions is None else f"; {chosen.regressions} existing tests regress"
        )
        summary = f"chose the patch of {chosen.describe()}: {agree}{tested}"
        return self._end_choice(SUBMITTED, summary, chosen.patch, candidates, chosen)

    def _validate(self, candidates: list[Submission]) -> None:
        environment = self.make_environment()
        try:
            sandbox = Sandbox(
                environment, self.strategy.validation.test_command, self.strategy.validation.timeout
            )
            base = BaseTree(environment, 1_000_000)
            tests = [path for path in base.sizes if path.endswith(".py")]
            tree = {document.path: document.text for document in base.read_all(tests)}
            changed = [path for path in patched_files(candidates[0].patch) if path.endswith(".py")]
            files = related_tests(
                tree, changed[0] if changed else "", "", self.strategy.validation.max_test_files
            )
            if not files:
                return
            before = sandbox.run_tests(files)
            passed = None if before.timed_out else before.passed
            for number, candidate in enumerate(candidates, start=1):
                if passed is not None and apply_patch(environment, candidate.patch).applied:
                    candidate.regressions = len(passed - sandbox.run_tests(files).passed)
                    apply_patch(environment, candidate.patch, reverse=True)
                self.record.step(
                    f"validate {number}/{len(candidates)}",
                    "patch tested",
                    candidate.describe(),
                    {"score": list(candidate.key())},
                )
        finally:
            environment.close()

    def _end_choice(
        self,
        status: str,
        summary: str,
        submission: str,
        candidates: list[Submission],
        chosen: Submission | None = None,
    ) -> tuple[str, str]:
        self.info["choice"] = summary
        details: dict[str, Any] = {"candidates": [c.describe() for c in candidates]}
        if chosen is not None:
            details["chosen"] = candidates.index(chosen) + 1
        return self._end(status, summary, submission, details)
