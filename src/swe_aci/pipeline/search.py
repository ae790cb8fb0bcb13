"""The repair search of a pipeline episode: the strong template repairs, then the model's samples
of each target, each new candidate validated as it appears, until one passes the reproduction
with no regression; then, with time left, the weak template repairs, then every pattern's of the
next `repair.further_templates` candidates, then rounds of one more sample of each target until
the budget or `repair.rounds_after` ends. Without a reproduction:
the first target's samples that give an edit (or the next target's), validated by the existing
tests alone."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from swe_aci.aci.lint import Linter
from swe_aci.pipeline.asking import Asking
from swe_aci.pipeline.candidates import Target, search_order
from swe_aci.pipeline.choose import Group, add_edit
from swe_aci.pipeline.config import PipelineStrategy
from swe_aci.pipeline.models import ModelPool
from swe_aci.pipeline.mutations import EVERY, STRONG, WEAK
from swe_aci.pipeline.repair import Dropped, Edit
from swe_aci.pipeline.reproduction import Reproduction, failure_lines
from swe_aci.pipeline.samples import BUDGET_LEFT, MORE_SAMPLES, sample_form
from swe_aci.pipeline.sandbox import Sandbox
from swe_aci.pipeline.skeleton import Location
from swe_aci.pipeline.templates import changed_label, focus_lines, screen_templates
from swe_aci.pipeline.tracebacks import traced_lines
from swe_aci.pipeline.validation import Validation
from swe_aci.trajectory.recorder import EpisodeRecorder

TEMPLATES_VALIDATED = 10  # a test forging the screen's output costs at most these runs

Sample = tuple[Target, int, int, float, str]  # target, number, of how many, temperature, phase


@dataclass
class Search:
    """What the search uses of its episode; `groups` (the candidates so far, shared with the
    episode, which chooses among them even when the budget ends the search) grows as it goes."""

    strategy: PipelineStrategy
    problem: str
    models: ModelPool
    asking: Asking
    sandbox: Sandbox
    validation: Validation
    record: EpisodeRecorder
    linter: Linter | None
    reproduction: Reproduction | None
    language: str
    groups: list[Group] = field(default_factory=list)
    samples: int = 0

    def run(self, tree: dict[str, str], candidates: list[Location], by_rounds: bool) -> None:
        """Target by target, each next target's first sample before the first target's more
        samples (`first_looks`), or, `by_rounds` (the traceback put several functions under
        suspicion), every target's first sample, then every target's second, and so on."""
        config = self.strategy.repair
        order = search_order(candidates, config.locations)
        if self.reproduction is None:
            order = [target for target in order if len(target.locations) == 1][:2]
        runs = [self._schedule(index, target) for index, target in enumerate(order)]
        if by_rounds:
            runs = [[each for each in turn if each] for turn in itertools.zip_longest(*runs)]
        elif self.reproduction is not None:
            runs = first_looks(runs)
        if self._templates(tree, order, STRONG, ""):
            return
        for run in runs:
            for sample in run:
                if self.groups:
                    self.asking.check_time()
                group = self._sample(tree, *sample)
                if group is not None and self.reproduction is not None:
                    self.validation.validate(tree, group, self.reproduction, self.language)
                    if group.solved:
                        return
            if self.reproduction is None and self.groups:
                break
        if self.reproduction is None:
            for group in self.groups:
                self.asking.check_time()
                self.validation.validate(tree, group, self.reproduction, self.language)
        elif not (
            self._templates(tree, order, WEAK, " (weaker patterns)")
            or self._further_templates(tree, candidates)
        ):
            self._spend_the_budget(tree, order, self.reproduction)

    def _spend_the_budget(
        self, tree: dict[str, str], order: list[Target], reproduction: Reproduction
    ) -> None:
        """`repair.rounds_after` rounds of one more sample of each target while none passes the
        reproduction: a run whose plan found nothing had budget left (the plans of the fifth
        held-out set ended at a median 109 s of 240 s), and another seed is the one way left to
        a fix. Each round's temperature is the next of `more_temperatures`."""
        config = self.strategy.repair
        temperatures = config.more_temperatures or config.temperatures
        planned = len(config.temperatures) + len(config.more_temperatures)
        total = planned + config.rounds_after
        for turn in range(config.rounds_after):
            temperature = temperatures[turn % len(temperatures)]
            for target in order:
                self.asking.check_time()
                group = self._sample(
                    tree, target, planned + turn + 1, total, temperature, BUDGET_LEFT
                )
                if group is not None:
                    self.validation.validate(tree, group, reproduction, self.language)
                    if group.solved:
                        return

    def _further_templates(self, tree: dict[str, str], candidates: list[Location]) -> bool:
        """Every pattern's template repairs of the `repair.further_templates` candidates after
        the first `repair.locations`, once those found nothing: the fix is often in a function
        the reproduction runs below the first three (dacite's `_build_value_for_collection`,
        the fifth), and a target's templates take about a second to screen where one model
        sample takes several."""
        config = self.strategy.repair
        further = candidates[config.locations : config.locations + config.further_templates]
        targets = [Target((location,)) for location in further]
        return self._templates(tree, targets, EVERY, " (a further target, every pattern)")

    def _templates(
        self, tree: dict[str, str], order: list[Target], tiers: range, which: str
    ) -> bool:
        """The template repairs (templates.py) of the patterns of `tiers` (STRONG before the
        model's samples, WEAK once they found nothing) of each single Python target of `order`,
        each target's screened against the reproduction; those passing it validated in the
        order of their patterns (`mutations.TIERS`), then of the targets, at most
        TEMPLATES_VALIDATED; whether one passes with no regression. `which`: what the steps'
        names add to the target's (the weaker patterns, a further target)."""
        config = self.strategy.repair
        repro = self.reproduction
        if repro is None or not config.templates:
            return False
        failing = traced_lines(repro.base_output, tree)
        passing: list[tuple[int, int, Target, Edit]] = []
        singles = [t for t in order if len(t.locations) == 1 and t.first.path.endswith(".py")]
        for index, target in enumerate(singles):
            self.asking.check_time()
            location = target.first
            focus = focus_lines(self.problem, tree, location, config.region_lines, failing)
            screened = screen_templates(
                self.sandbox,
                self.problem,
                tree,
                location,
                repro,
                focus,
                config.templates,
                self.linter,
                tiers,
            )
            self.record.step(
                f"templates {target.label}{which}",
                "template repairs screened against the reproduction test, no model",
                screened.summary(target.label),
                {"source": "template", "location": target.label, "tried": screened.tried},
            )
            passing += [(tier, index, target, edit) for tier, edit in screened.passing]
        passing.sort(key=lambda each: each[:2])
        for _, _, target, edit in passing[:TEMPLATES_VALIDATED]:
            self.samples += 1
            path = target.first.path
            label = changed_label(tree[path], edit.texts[path], target.first)
            group, new = add_edit(self.groups, self.samples, label, edit, tree)
            if new:
                self.validation.validate(tree, group, repro, self.language)
                if group.solved:
                    return True
        return False

    def _schedule(self, index: int, target: Target) -> list[Sample]:
        """The samples of the `index`-th target: `repair.temperatures` and, with a
        reproduction, `repair.more_temperatures`."""
        config = self.strategy.repair
        phase = "first target" if index == 0 else "next target"
        schedule = [(t, phase) for t in config.temperatures]
        if self.reproduction is not None:
            schedule += [(t, MORE_SAMPLES) for t in config.more_temperatures]
        return [
            (target, number, len(schedule), temperature, why)
            for number, (temperature, why) in enumerate(schedule, start=1)
        ]

    def _sample(
        self,
        tree: dict[str, str],
        target: Target,
        number: int,
        total: int,
        temperature: float,
        phase: str,
    ) -> Group | None:
        """One repair sample of `target`; the group it joins when it gives an edit that is new."""
        self.samples += 1
        output = self.reproduction.base_output if self.reproduction is not None else ""
        sample = sample_form(
            self.strategy.repair, self.problem, tree, target, number, phase, output
        )
        source = sample.source
        prompt = self.asking.render(
            sample.template, **sample.variables, failure=failure_lines(output)
        )
        model = self.models.get(
            temperature,
            grammar=sample.grammar,
            max_output_tokens=sample.max_output_tokens,
            seed_offset=self.samples,
        )
        reply = self.asking.ask(model, prompt)
        action = f"repair {number}/{total} (T={temperature:g}) {target.label}"
        details: dict[str, Any] = {"source": source, "location": target.label, "phase": phase}
        if sample.window is not None:
            details["window"] = [sample.window.start, sample.window.end]
        try:
            edit = sample.edit(tree, reply.content, self.linter)
        except Dropped as dropped:
            details["dropped"] = str(dropped)
            self.record.step(
                action, f"{source} sample dropped ({phase})", f"dropped: {dropped}", details,
                reply, prompt,
            )  # fmt: skip
            return None
        group, new = add_edit(self.groups, self.samples, target.label, edit, tree)
        details.update(kept=True, notes=list(edit.notes), new=new)
        observation = f"candidate ({source}): {edit.changed_lines} lines written" + (
            f"; {'; '.join(edit.notes)}" if edit.notes else ""
        )
        if not new:
            observation += f"; the same edit as samples {','.join(map(str, group.samples[:-1]))}"
        thought = f"{source} sample kept ({phase})"
        self.record.step(action, thought, observation, details, reply, prompt)
        return group if new else None


def first_looks(runs: list[list[Sample]]) -> list[list[Sample]]:
    """The targets' samples in the order they are drawn while none passes: the first target's
    first samples (`repair.temperatures`), then every next target's first sample, then the first
    target's more samples, then the rest of each next target's. A fix outside the first target
    is not left to samples the budget never reaches (rfc3986's regex constant was the third
    target; the first took the whole budget, seven samples)."""
    if len(runs) < 2:
        return runs
    first, nexts = runs[0], runs[1:]
    more = [sample for sample in first if sample[4] == MORE_SAMPLES]
    head = first[: len(first) - len(more)]
    return [head, [run[0] for run in nexts if run], more, *[run[1:] for run in nexts]]
