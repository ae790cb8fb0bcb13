"""The pipeline episode: localize -> repair (n samples) -> reproduce -> validate and choose.

Each model call and each validation is one step of the trajectory (same `.traj` layout as the
agent loop: the prompt and reply in the history, the step's query referring to them), with the
stage's candidates, scores and choice under `pipeline` in the step; the steps reach `on_step` as
they finish, which is the progress a user sees. The model only ever reads the issue and the
repository's files at the base commit.
"""

from __future__ import annotations

import time
from typing import Any

from swe_aci.aci.lint import Linter
from swe_aci.configuration import jinja
from swe_aci.env.base import Environment
from swe_aci.models.base import ModelError, ModelReply
from swe_aci.pipeline.choose import Group, best, documents_of, group_edits, reason, related_tests
from swe_aci.pipeline.config import PipelineStrategy
from swe_aci.pipeline.localize import (
    candidate_locations,
    choice_grammar,
    choice_names,
    chosen_index,
    named_in,
    skeleton,
)
from swe_aci.pipeline.models import ModelPool
from swe_aci.pipeline.record import OnStep, StagedEpisode
from swe_aci.pipeline.repair import Dropped, Edit, code_blocks, make_edit
from swe_aci.pipeline.sandbox import REPRODUCTION_FILE, Sandbox, fails_as_reproduction
from swe_aci.pipeline.skeleton import Location, context_lines, module_name
from swe_aci.retrieval.documents import BaseTree
from swe_aci.trajectory.exits import ESCAPING_ERRORS, EXIT_REASONS, SUBMITTED, exit_for
from swe_aci.trajectory.files import EpisodeFiles


class OutOfTime(Exception):
    """The time budget is spent: the stages still to come are skipped."""


class Pipeline(StagedEpisode):
    label = "pipeline"
    strategy: PipelineStrategy

    def __init__(
        self,
        strategy: PipelineStrategy,
        models: ModelPool,
        environment: Environment,
        linter: Linter | None,
        files: EpisodeFiles,
        on_step: OnStep | None = None,
    ) -> None:
        super().__init__(strategy, files, models.name, models.stats, on_step)
        self.models = models
        self.env = environment
        self.sandbox = Sandbox(
            environment, strategy.validation.test_command, strategy.validation.timeout
        )
        self.linter = linter
        self._groups: list[Group] = []

    # -- the episode -------------------------------------------------------------------------

    def _stages(self) -> tuple[str, str]:
        tree: dict[str, str] = {}
        try:
            tree = self._tree()
            candidates = self._localize(tree)
            groups = self._repair(tree, candidates)
            if not groups:
                return self._end("exit_format", "no repair sample gave a usable edit", "")
            reproduced = self._reproduce(groups[0].location)
            self._validate(tree, groups, reproduced)
            return self._choose(tree, groups, "")
        except OutOfTime:
            return self._choose(tree, self._groups, "exit_time_limit")
        except Dropped as dropped:
            return self._end("exit_format", str(dropped), "")
        except ESCAPING_ERRORS:
            raise
        except Exception as error:  # recorded as the exit, like the agent loop's
            end = exit_for(error)
            end.record(self.info)
            return self._end(end.status, f"Exit due to {EXIT_REASONS[end.status]}", "")
        finally:
            self.sandbox.remove_reproduction()

    def _tree(self) -> dict[str, str]:
        base = BaseTree(self.env, self.strategy.localize.max_file_bytes)
        python = [path for path in sorted(base.sizes) if path.endswith(".py")]
        return {document.path: document.text for document in base.read_all(python)}

    # -- stages ------------------------------------------------------------------------------

    def _localize(self, tree: dict[str, str]) -> list[Location]:
        config = self.strategy.localize
        candidates = candidate_locations(
            self.problem, documents_of(tree), config.files, config.functions
        )
        if not candidates:
            raise Dropped("no Python function found in the repository's source files")
        details: dict[str, Any] = {"candidates": [location.label for location in candidates]}
        named = named_in(self.problem, candidates)
        if len(candidates) == 1 or len(named) == 1:
            chosen = named[0] if named else candidates[0]
            candidates = [chosen, *(c for c in candidates if c is not chosen)]
            details["chosen"] = chosen.label
            why = "the issue names one candidate" if named else "one candidate function"
            self.record.step("localize", why, f"chosen: {chosen.label}", details)
            return candidates
        self._check_time()
        names = choice_names(candidates)
        prompt = self._render(
            "localize",
            problem_statement=self.problem,
            skeleton=skeleton(candidates),
            count=len(candidates),
        )
        model = self.models.get(0.0, grammar=choice_grammar(names), max_output_tokens=64)
        reply = self._ask(model, prompt)
        index = chosen_index(reply.content, names)
        if index is not None:
            candidates = [candidates[index], *candidates[:index], *candidates[index + 1 :]]
        note = (
            f"model chose {names[index]}"
            if index is not None
            else "no name in the reply: BM25's first"
        )
        details["chosen"] = candidates[0].label
        self.record.step("localize", note, f"chosen: {candidates[0].label}", details, reply, prompt)
        return candidates

    def _repair(self, tree: dict[str, str], candidates: list[Location]) -> list[Group]:
        """Samples for the chosen function; the next candidates only if none gave an edit."""
        for location in candidates[:2]:
            self._groups = group_edits(self._samples(tree, location), tree)
            if self._groups:
                break
        return self._groups

    def _samples(
        self, tree: dict[str, str], location: Location
    ) -> list[tuple[int, Location, Edit]]:
        config = self.strategy.repair
        text = tree[location.path]
        prompt = self._render(
            "repair",
            problem_statement=self.problem,
            path=location.path,
            name=location.name,
            code=location.source.rstrip("\n"),
            context=context_lines(text, location.name),
        )
        edits: list[tuple[int, Location, Edit]] = []
        total = len(config.temperatures)
        for number, temperature in enumerate(config.temperatures, start=1):
            if edits:
                self._check_time()
            model = self.models.get(
                temperature, max_output_tokens=config.max_output_tokens, seed_offset=number
            )
            reply = self._ask(model, prompt)
            action = f"repair {number}/{total} (T={temperature:g}) {location.label}"
            try:
                edit = make_edit(text, location, reply.content, self.linter)
            except Dropped as dropped:
                self.record.step(
                    action,
                    "sample dropped",
                    f"dropped: {dropped}",
                    {"dropped": str(dropped)},
                    reply,
                    prompt,
                )
                continue
            self._groups = group_edits([*edits, (number, location, edit)], tree)
            edits.append((number, location, edit))
            observation = f"candidate: {edit.changed_lines} lines replace lines {location.start}-{location.end}"
            self.record.step(action, "sample kept", observation, {"kept": True}, reply, prompt)
        return edits

    def _reproduce(self, location: Location) -> bool:
        """Whether a reproduction test that fails at the base is in place."""
        config = self.strategy.reproduce
        prompt = self._render(
            "reproduce",
            problem_statement=self.problem,
            module=module_name(location.path),
            name=location.name,
            signature=location.signature,
        )
        total = len(config.temperatures)
        for number, temperature in enumerate(config.temperatures, start=1):
            self._check_time()
            model = self.models.get(
                temperature, max_output_tokens=config.max_output_tokens, seed_offset=number
            )
            reply = self._ask(model, prompt)
            action = f"reproduce {number}/{total} (T={temperature:g})"
            test = next(
                (block for block in code_blocks(reply.content) if "def test" in block), None
            )
            if test is None:
                self.record.step(
                    action, "no test in the reply", "dropped: no test function", {}, reply, prompt
                )
                continue
            self.sandbox.write_reproduction(test)
            run = self.sandbox.run_reproduction()
            problem = fails_as_reproduction(run)
            observation = f"at the base: {problem or 'fails, as the issue says'}\n{run.tail()}"
            self.record.step(
                action,
                "reproduction test",
                observation,
                {"test": test, "accepted": problem is None},
                reply,
                prompt,
            )
            if problem is None:
                return True
        return False

    def _validate(self, tree: dict[str, str], groups: list[Group], reproduced: bool) -> None:
        files = related_tests(
            tree,
            groups[0].location.path,
            groups[0].location.name,
            self.strategy.validation.max_test_files,
        )
        base_passed: set[str] | None = None
        if files:
            self._check_time()
            base = self.sandbox.run_tests(files)
            base_passed = None if base.timed_out else base.passed
            self.record.step(
                "tests at the base",
                "existing tests",
                f"{len(base.passed)} pass of {len(base.statuses)} ({', '.join(files)})",
                {"files": files},
            )
        for number, group in enumerate(groups, start=1):
            self._check_time()
            path = group.location.path
            self.sandbox.write(path, group.edit.text)
            try:
                run = self.sandbox.run_tests(
                    [*([REPRODUCTION_FILE] if reproduced else []), *(files if base_passed else [])]
                )
            finally:
                self.sandbox.write(path, tree[path])
            if reproduced:
                reproduction = run.of(REPRODUCTION_FILE)
                group.reproduced = bool(reproduction) and reproduction <= run.passed
            if base_passed is not None:
                group.regressions = len(base_passed - run.passed)
            self.record.step(
                f"validate {number}/{len(groups)}",
                "candidate tested",
                group.describe(),
                {"score": list(group.key())},
            )

    def _choose(self, tree: dict[str, str], groups: list[Group], limit: str) -> tuple[str, str]:
        chosen = best(groups)
        if chosen is None:
            return self._end(limit or "exit_format", "no candidate to choose", "")
        self.sandbox.remove_reproduction()
        self.sandbox.write(chosen.location.path, chosen.edit.text)
        submission = self.env.submission().patch
        why = reason(chosen, groups)
        summary = f"chose the edit of {chosen.location.label} from {chosen.describe()}: {why}"
        self.info["choice"] = summary
        status = f"{SUBMITTED} ({limit})" if limit else SUBMITTED
        details = {
            "groups": [group.describe() for group in groups],
            "chosen": groups.index(chosen) + 1,
        }
        return self._end(status, summary, submission, details)

    # -- helpers -----------------------------------------------------------------------------

    def _time_left(self) -> float | None:
        """Seconds of `time_budget` left (0.0 when it is used up); None without a budget."""
        budget = self.strategy.time_budget
        if not budget:
            return None
        return max(0.0, budget - (time.monotonic() - self.record.started))

    def _check_time(self) -> None:
        if self._time_left() == 0.0:
            raise OutOfTime

    def _render(self, template: str, **variables: Any) -> str:
        return jinja().from_string(getattr(self.strategy.templates, template)).render(**variables)

    def _ask(self, model: Any, prompt: str) -> ModelReply:
        """One model call, given the budget's time left as its timeout: a slow reply (a loaded
        machine) ends the pipeline on its time limit with the candidates so far, not past it."""
        left = self._time_left()
        if left == 0.0:
            raise OutOfTime
        started = time.monotonic()
        try:
            reply = model.query([{"role": "user", "content": prompt}], timeout=left)
        except ESCAPING_ERRORS:
            raise
        except ModelError:
            if self._time_left() == 0.0:
                raise OutOfTime from None
            raise
        finally:
            self.record.waited(time.monotonic() - started)
        self.record.replied(reply)
        return reply
