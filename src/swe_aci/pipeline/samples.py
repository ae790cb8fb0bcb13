"""The form of one repair sample: a whole rewrite of a short Python function (repair.py), a
windowed rewrite of a longer Python target (windows.py) or search/replace blocks (blocks.py);
its template, the template's variables and output cap, and how its reply becomes an edit.

Which form: a short function is rewritten whole, then (once the first samples did not pass)
every other sample is blocks; a longer Python target gets blocks, or, `repair.window_lines` set,
windows (first) and blocks in turn; two targets at once and other languages get blocks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from swe_aci.aci.lint import Linter
from swe_aci.pipeline.block_grammar import blocks_grammar
from swe_aci.pipeline.blocks import block_edit
from swe_aci.pipeline.candidates import Target
from swe_aci.pipeline.config import RepairConfig
from swe_aci.pipeline.prompts import blocks_variables, rewrite_variables, shown_regions, shown_spans
from swe_aci.pipeline.repair import Edit, fold_docstring, make_edit, rewrite_tokens
from swe_aci.pipeline.tracebacks import traced_lines
from swe_aci.pipeline.windows import Window, window_edit, window_of, window_variables

MORE_SAMPLES = "more samples"  # the phase after a target's first `repair.temperatures`
BUDGET_LEFT = "budget left"  # the rounds after the plan and the templates found nothing


@dataclass(frozen=True)
class Sample:
    """One sample's form: `source` (rewrite, window, block), the template it renders with
    `variables`, its output cap, what the reply is read against, and the grammar that
    constrains it (blocks)."""

    source: str
    template: str
    variables: dict[str, Any]
    max_output_tokens: int
    target: Target
    window: Window | None = None
    shown: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    grammar: str | None = None

    def edit(self, tree: dict[str, str], reply: str, linter: Linter | None) -> Edit:
        """The checked edit the reply makes; Dropped with the reason."""
        location = self.target.first
        if self.window is not None:
            return window_edit(tree[location.path], self.window, reply, linter)
        if self.source == "rewrite":
            return make_edit(tree[location.path], location, reply, linter)
        texts = {path: tree[path] for path in self.target.paths}
        return block_edit(texts, reply, location.path, linter, self.shown)


def sample_form(
    config: RepairConfig,
    issue: str,
    tree: dict[str, str],
    target: Target,
    number: int,
    phase: str,
    base_output: str,
) -> Sample:
    """The form of sample `number` of `target` in `phase`; `base_output`: the reproduction's
    output at the base (its traceback's lines place the window and the regions)."""
    location = target.first
    failing = traced_lines(base_output, tree)
    if target.rewrites(config.rewrite_max_lines):
        if not (phase in (MORE_SAMPLES, BUDGET_LEFT) and number % 2 == 0):
            function = fold_docstring(location.source)
            return Sample(
                "rewrite",
                "repair",
                rewrite_variables(issue, tree, location),
                rewrite_tokens(function, config.max_output_tokens),
                target,
            )
    elif (
        config.window_lines and number % 2 == 1 and len(target.locations) == 1
    ) and location.path.endswith(".py"):
        text = tree[location.path]
        line = next(
            (
                line
                for path, line in failing
                if path == location.path and location.start <= line <= location.end
            ),
            None,
        )
        window = window_of(issue, text, location, config.window_lines, line)
        if window is not None:
            return Sample(
                "window",
                "window",
                window_variables(issue, text, window),
                rewrite_tokens(window.code(text), config.max_output_tokens),
                target,
                window,
            )
    regions = shown_regions(issue, tree, target, config.region_lines, failing)
    spans = shown_spans(regions)
    hidden = {shown.location.path: shown.folded for shown in regions}
    return Sample(
        "block",
        "blocks",
        blocks_variables(issue, tree, regions),
        config.block_output_tokens,
        target,
        shown=spans,
        grammar=blocks_grammar(tree, spans, hidden) if config.block_grammar else None,
    )
