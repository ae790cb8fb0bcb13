"""The pipeline episode: localize -> reproduce -> repair and validate until a candidate passes
-> choose.

Each model call and each validation is one step of the trajectory (same `.traj` layout as the
agent loop: the prompt and reply in the history, the step's query referring to them), with the
stage's candidates, scores and choice under `pipeline` in the step; the steps reach `on_step` as
they finish, which is the progress a user sees. The model only ever reads the issue and the
repository's files at the base commit.

The reproduction comes first (the issue's own examples, else a model-written test), so every new
candidate is validated as it appears; while none passes it with no regression the search goes on
within `time_budget`: more samples of the target (new temperatures and seeds), then the next
targets (the next candidates, then the first two together): search.py. The model calls and the
budget: asking.py.

A repository in another language (structure.py: JavaScript/TypeScript, Go, Rust, Java, C/C++,
Ruby, PHP) is localized over its own files and repaired by blocks; the stages that write and
run pytest tests (the reproduction, the regression tests) are skipped, each with a step saying
why.
"""

from __future__ import annotations

import shlex
from typing import Any

from swe_aci.aci.lint import Linter
from swe_aci.env.base import Environment
from swe_aci.env.diff import patch_paths
from swe_aci.pipeline import execution, regressions, reproduction, structure
from swe_aci.pipeline.asking import Asking, OutOfTime
from swe_aci.pipeline.choose import Group, best, documents_of, reason
from swe_aci.pipeline.config import PipelineStrategy
from swe_aci.pipeline.imports import import_aliases
from swe_aci.pipeline.issue_examples import (
    exception_names,
    importable_names,
    issue_tests,
    reproduction_imports,
    source_trees,
)
from swe_aci.pipeline.issue_prose import reported_outputs
from swe_aci.pipeline.localize import (
    candidate_locations,
    choice_grammar,
    choice_names,
    chosen_index,
    issue_choice,
    skeleton,
)
from swe_aci.pipeline.mend import mend_test, top_level_names
from swe_aci.pipeline.models import ModelPool
from swe_aci.pipeline.outside_definitions import outside_definitions
from swe_aci.pipeline.record import OnStep, StagedEpisode, record_skipped
from swe_aci.pipeline.repair import Dropped, code_blocks
from swe_aci.pipeline.reproduction import Reproduction
from swe_aci.pipeline.sandbox import Sandbox, SandboxNotRestored
from swe_aci.pipeline.search import Search
from swe_aci.pipeline.skeleton import Location, module_name
from swe_aci.pipeline.tracebacks import first_targets, traceback_locations
from swe_aci.pipeline.validation import Validation
from swe_aci.retrieval.documents import BaseTree
from swe_aci.trajectory.exits import ESCAPING_ERRORS, EXIT_REASONS, SUBMITTED, exit_for
from swe_aci.trajectory.files import EpisodeFiles


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
        self.asking = Asking(strategy, self.record)
        self.sandbox = Sandbox(
            environment,
            strategy.validation.test_command,
            strategy.validation.timeout,
            self.asking.time_left,
        )
        self.linter = linter
        self._groups: list[Group] = []
        self._reproduction: Reproduction | None = None
        self.language = structure.PYTHON

    # -- the episode -------------------------------------------------------------------------

    def _stages(self) -> tuple[str, str]:
        tree: dict[str, str] = {}
        try:
            tree = self._tree()
            candidates = self._localize(tree)
            self.sandbox.reset()
            self._reproduce(tree, candidates)
            validation = Validation(
                self.sandbox, self.strategy.validation, self.record, self.asking.check_time,
                self.problem,
            )  # fmt: skip
            search = Search(
                self.strategy, self.problem, self.models, self.asking, self.sandbox,
                validation, self.record, self.linter, self._reproduction, self.language,
                self._groups,
            )  # fmt: skip
            candidates = self._follow_execution(tree, candidates)
            search.run(tree, *self._follow_traceback(tree, candidates))
            if not self._groups:
                return self._end("exit_format", "no repair sample gave a usable edit", "")
            return self._choose(self._groups, "")
        except OutOfTime:
            return self._choose(self._groups, "exit_time_limit")
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
        """The base's Python files and pytest configuration files, by path; in a repository
        of another language, the files of that language."""
        base = BaseTree(self.env, self.strategy.localize.max_file_bytes)
        self.language = structure.repository_language(base.sizes)
        if self.language != structure.PYTHON:
            endings = structure.suffixes(self.language)
            wanted = [path for path in sorted(base.sizes) if path.endswith(endings)]
            return {document.path: document.text for document in base.read_all(wanted)}
        wanted = [
            path
            for path in sorted(base.sizes)
            if path.endswith(".py") or path in regressions.PYTEST_CONFIGS
        ]
        tree = {document.path: document.text for document in base.read_all(wanted)}
        configs = {path: tree.pop(path) for path in regressions.PYTEST_CONFIGS if path in tree}
        self.sandbox.test_command = regressions.test_command(
            self.strategy.validation.test_command, configs
        )
        return tree

    # -- stages ------------------------------------------------------------------------------

    def _localize(self, tree: dict[str, str]) -> list[Location]:
        config = self.strategy.localize
        documents = documents_of(tree, structure.suffixes(self.language))
        candidates, spans = candidate_locations(
            self.problem, documents, config.files, config.functions
        )
        if not candidates:
            raise Dropped(f"no {self.language} function found in the repository's source files")
        details: dict[str, Any] = {
            "candidates": [location.label for location in candidates],
            "code_spans": {span: round(weight, 2) for span, weight in spans.weights.items()},
        }
        picked = issue_choice(self.problem, candidates, spans)
        if len(candidates) == 1 or picked is not None:
            chosen, why = picked or (candidates[0], "one candidate function")
            candidates = [chosen, *(c for c in candidates if c is not chosen)]
            details["chosen"] = chosen.label
            self.record.step("localize", why, f"chosen: {chosen.label}", details)
            return candidates
        self.asking.check_time()
        names = choice_names(candidates)
        prompt = self.asking.render(
            "localize",
            problem_statement=self.problem,
            skeleton=skeleton(candidates),
            count=len(candidates),
        )
        model = self.models.get(0.0, grammar=choice_grammar(names), max_output_tokens=64)
        reply = self.asking.ask(model, prompt)
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

    def _reproduce(self, tree: dict[str, str], candidates: list[Location]) -> None:
        """The issue's own examples as tests; the model's test when none fails at the base. Both
        are pytest tests: skipped in a repository of another language."""
        if self.language != structure.PYTHON:
            why = f"the reproduction tests are pytest tests{self._not_python}"
            record_skipped(self.record, "reproduce", why)
            return
        modules = source_trees(tree)
        importable = importable_names(modules)
        aliases = import_aliases([*tree.values(), self.problem])
        text = issue_tests(self.problem, importable, exception_names(modules), aliases)
        if text:
            self.asking.check_time()
            first, second = reproduction.run_twice(self.sandbox, reproduction.ISSUE_FILE, text)
            accepted, dropped = reproduction.accepted_issue_tests(first, second, self.problem)
            if accepted:
                kept = reproduction.keep_tests(text, accepted)
                self._reproduction = Reproduction(
                    reproduction.ISSUE_FILE, kept, "issue example", len(accepted), first.output
                )
            why = "; ".join(f"{name}: {problem}" for name, problem in dropped.items())
            observation = (
                f"{len(accepted)} of {len(accepted) + len(dropped)} tests from the issue's "
                f"examples fail at the base (twice){': ' + why if why else ''}\n{first.tail()}"
            )
            self.record.step(
                "reproduce from the issue",
                "tests from the issue's examples, no model",
                observation,
                {"test": text, "accepted": accepted, "dropped": dropped, "origin": "issue example"},
            )
        if self._reproduction is None:
            self._model_reproduction(tree, candidates[0], importable, aliases)

    def _model_reproduction(
        self,
        tree: dict[str, str],
        location: Location,
        importable: dict[str, str],
        aliases: dict[str, str],
    ) -> None:
        config = self.strategy.reproduce
        module = module_name(location.path)
        variables = {
            "problem_statement": self.problem,
            "module": module,
            "name": location.qualname,
            "signature": location.signature,
            "imports": reproduction_imports(self.problem, module, location.qualname),
            "definitions": outside_definitions(self.problem, tree),
        }
        module_names = top_level_names(tree.get(location.path, ""))
        reported = reported_outputs(self.problem)
        total = len(config.temperatures)
        rejected = ""
        for number, temperature in enumerate(config.temperatures, start=1):
            self.asking.check_time()
            prompt = self.asking.render("reproduce", **variables, rejected=rejected)
            model = self.models.get(
                temperature, max_output_tokens=config.max_output_tokens, seed_offset=number
            )
            reply = self.asking.ask(model, prompt)
            action = f"reproduce {number}/{total} (T={temperature:g})"
            test = next(
                (block for block in code_blocks(reply.content) if "def test" in block), None
            )
            if test is None:
                self.record.step(
                    action, "no test in the reply", "dropped: no test function", {}, reply, prompt
                )
                continue
            test, mended = mend_test(test, module, module_names, importable, reported, aliases)
            file = reproduction.MODEL_FILE
            first, second = reproduction.run_twice(self.sandbox, file, test)
            problem = reproduction.model_test_problem(first, second, self.problem)
            observation = f"at the base: {problem or 'fails, as the issue says'}\n{first.tail()}"
            if mended:
                observation = f"mended before it ran: {'; '.join(mended)}\n{observation}"
            info = {"test": test, "accepted": problem is None, "origin": "model-written"}
            self.record.step(
                action,
                "reproduction test",
                observation,
                {**info, "mended": mended},
                reply,
                prompt,
            )
            if problem is None:
                tests = max(len(first.of(file)), 1)
                self._reproduction = Reproduction(file, test, "model-written", tests, first.output)
                return
            rejected = reproduction.rejection(problem, first.output)

    def _follow_execution(self, tree: dict[str, str], candidates: list[Location]) -> list[Location]:
        """The targets reordered by what the failing reproduction executes (execution.py); as
        they were when there is no reproduction or the run leaves no record."""
        repro = self._reproduction
        if repro is None:
            return candidates
        self.asking.check_time()
        output = self.sandbox.path(execution.PLUGIN.output)
        self.env.run(f"rm -f -- {shlex.quote(output)}", timeout=30)
        run = self.sandbox.run_isolated(
            {}, {repro.file: repro.text}, [repro.file], execution.PLUGIN
        )
        try:
            text = self.env.read_file(output).decode("utf-8", "replace")
        except OSError as error:
            why = f"the run left no record of what it executed ({error.strerror or error})"
            self.record.step("follow the execution", why, f"targets unchanged\n{run.tail()}", {})
            return candidates
        executed = execution.read_executed(text, tree)
        ordered = execution.execution_order(
            self.problem, candidates, executed, tree, self.strategy.localize.functions
        )
        reached = [location.label for location in ordered if executed.reaches(location)]
        self.record.step(
            "follow the execution",
            "the reproduction run again, recording the repository's functions it calls",
            f"it executes {len(executed.functions)} functions in {len(executed.files)} files; "
            f"targets: {', '.join(location.label for location in ordered[:4])}",
            {
                "files": sorted(executed.files),
                "functions": sorted(executed.functions),
                "targets": reached,
            },
        )
        return ordered

    def _follow_traceback(
        self, tree: dict[str, str], candidates: list[Location]
    ) -> tuple[list[Location], bool]:
        """The functions the reproduction's traceback passes through first (tracebacks.py);
        whether it named any other than the localizer's choice."""
        if self._reproduction is None:
            return candidates, False
        traced = traceback_locations(self._reproduction.base_output, tree)
        if not traced or [location.label for location in traced] == [candidates[0].label]:
            return candidates, False
        labels = [location.label for location in traced]
        self.record.step(
            "follow the traceback",
            "the reproduction fails with an exception raised in the repository's code",
            f"first targets: {', '.join(labels)} (the localizer chose {candidates[0].label})",
            {"traced": labels},
        )
        return first_targets(candidates, traced), True

    def _choose(self, groups: list[Group], limit: str) -> tuple[str, str]:
        chosen = best(groups)
        if chosen is None:
            return self._end(limit or "exit_format", "no candidate to choose", "")
        details = {
            "groups": [f"{group.label}: {group.describe()}" for group in groups],
            "chosen": groups.index(chosen) + 1,
            "reproduction": self._reproduction.origin if self._reproduction else None,
        }
        if chosen.harmful:
            summary = f"no fix found: the best candidate ({chosen.label}) {chosen.harm()}"
            self.info["choice"] = summary
            return self._end(limit or "exit_format", summary, "", details)
        self.sandbox.remove_reproduction()
        self.sandbox.reset()
        for path, text in chosen.edit.texts.items():
            self.sandbox.write(path, text)
        submission = self.env.submission().patch
        if set(patch_paths(submission)) != set(chosen.edit.texts):
            raise SandboxNotRestored("the submission holds more than the chosen edit")
        why = reason(chosen, groups)
        origin = f" ({self._reproduction.origin})" if self._reproduction else ""
        summary = f"chose the edit of {chosen.label} from {chosen.describe()}{origin}: {why}"
        self.info["choice"] = summary
        status = f"{SUBMITTED} ({limit})" if limit else SUBMITTED
        return self._end(status, summary, submission, details)

    # -- helpers -----------------------------------------------------------------------------

    @property
    def _not_python(self) -> str:
        return f"; the repository's code is {self.language}"
