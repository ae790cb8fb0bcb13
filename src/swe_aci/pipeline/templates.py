"""Template repairs of one target as candidates: the edits of mutations.py screened against the
reproduction test in one sandbox command (`Sandbox.screen`); each that passes it is checked as a
model's edit is (it parses, it adds no lint error) and becomes an `Edit` of source `template`,
validated like the model's (the reproduction on a clean tree, then the regressions)."""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from typing import Any

from swe_aci.aci.lint import Linter
from swe_aci.pipeline import structure
from swe_aci.pipeline.blocks import edit_problem
from swe_aci.pipeline.candidates import Target
from swe_aci.pipeline.fix_patterns import Conversion
from swe_aci.pipeline.mutations import TIERS, Mutant, mutants
from swe_aci.pipeline.prompts import shown_regions
from swe_aci.pipeline.repair import TEMPLATE, Edit
from swe_aci.pipeline.reproduction import RAISED, Reproduction
from swe_aci.pipeline.sandbox import Sandbox
from swe_aci.pipeline.skeleton import Location, parse


@dataclass
class Screened:
    """The template edits tried on one target: each one's description and whether the
    reproduction passed on it; the edits it passed that are fit to validate."""

    tried: list[dict[str, Any]] = field(default_factory=list)
    passing: list[tuple[int, Edit]] = field(default_factory=list)  # (its pattern's tier, edit)

    def summary(self, label: str) -> str:
        """The step's observation: how many passed, then every edit tried and its outcome."""
        screened = [each for each in self.tried if each["passes"] is not None]
        passed = [each for each in screened if each["passes"]]
        head = (
            f"{len(self.tried)} template edits of {label}, {len(screened)} screened: "
            f"{len(passed)} pass the reproduction test"
        )
        lines = [f"- {_outcome(each)}: {each['edit']}" for each in self.tried]
        return "\n".join([head, *lines])


def _outcome(tried: dict[str, Any]) -> str:
    if tried["passes"] is None:
        return "not run (time)"
    if not tried["passes"]:
        return "fails"
    return f"passes, dropped ({tried['dropped']})" if "dropped" in tried else "passes"


TRACEBACK_MARGIN = 3


def focus_lines(
    issue: str,
    tree: dict[str, str],
    location: Location,
    region_lines: int,
    failing: list[tuple[str, int]],
) -> list[int]:
    """The lines of `location` whose templates are tried first: around those the reproduction's
    traceback passes through (`failing`), else the region of the issue's words that a blocks
    prompt shows (`prompts.shown_regions`)."""
    traced = [
        line
        for path, line in failing
        if path == location.path and location.start <= line <= location.end
    ]
    if traced:
        return sorted(
            {
                near
                for line in traced
                for near in range(line - TRACEBACK_MARGIN, line + TRACEBACK_MARGIN + 1)
            }
        )
    (region,) = shown_regions(issue, tree, Target((location,)), region_lines, [])
    return list(range(region.start, region.end + 1))


def screen_templates(
    sandbox: Sandbox,
    issue: str,
    tree: dict[str, str],
    location: Location,
    repro: Reproduction,
    focus: list[int],
    limit: int,
    linter: Linter | None,
    tiers: range,
) -> Screened:
    """At most `limit` template edits of `location` of the patterns of `tiers` run against the
    reproduction; `focus`: the lines whose edits are tried first (`focus_lines`); `issue`: its
    quoted names, for the literals that name something else."""
    text = tree[location.path]
    found = mutants(text, location, focus, limit, conversion(repro), tiers, issue)
    results = sandbox.screen(
        location.path, [each.text for each in found], {repro.file: repro.text}, [repro.file]
    )
    screened = Screened()
    for mutant, passes in zip(found, results, strict=True):
        screened.tried.append({"edit": mutant.description, "passes": passes})
        if passes:
            problem = _problem(text, mutant, location, linter)
            if problem is None:
                tier = TIERS[mutant.pattern]
                screened.passing.append((tier, _edit(text, mutant, location.path)))
            else:
                screened.tried[-1]["dropped"] = problem
    return screened


BUILTIN_ERRORS = frozenset(
    {"TypeError", "ValueError", "AttributeError", "KeyError", "IndexError", "LookupError"}
)


def conversion(repro: Reproduction) -> Conversion | None:
    """The built-in exceptions the reproduction fails on at the base and the one exception its
    test expects (`pytest.raises(X)`), when it expects one other than those."""
    tree = parse(repro.text)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)] if tree else []
    expected = {
        _last_name(call.args[0])
        for call in calls
        if isinstance(call.func, ast.Attribute) and call.func.attr == "raises" and call.args
    }
    raised = [
        name
        for name in dict.fromkeys(RAISED.findall(repro.base_output))
        if name in BUILTIN_ERRORS and name not in expected
    ]
    if len(expected) != 1 or None in expected or not raised:
        return None
    (name,) = expected
    return Conversion(tuple(raised), str(name))


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _problem(text: str, mutant: Mutant, location: Location, linter: Linter | None) -> str | None:
    """Why the edit is not kept (lint), None when it is fine: the target's lines are what it
    replaced."""
    lines = location.end - location.start + 1
    delta = mutant.text.count("\n") - text.count("\n")
    span = (location.start, location.end)
    return edit_problem(text, mutant.text, location.path, span, lines + delta, linter)


def _edit(text: str, mutant: Mutant, path: str) -> Edit:
    written = max(1, mutant.text.count("\n") - text.count("\n") + 1)
    canonical = f"{path}\n{structure.canonical(mutant.text, path)}"
    return Edit({path: mutant.text}, canonical, written, TEMPLATE, (mutant.description,))


def changed_label(text: str, new: str, location: Location) -> str:
    """What a template edit of `location` changes: the labels of the functions it changes, the
    target's first (a path argument converted in each function the issue names: `a + b`, as a
    candidate spanning two locations is labelled); the target's when it changes none."""
    old_lines, new_lines = text.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    changed = [
        line
        for tag, first, last, _, _ in matcher.get_opcodes()
        if tag != "equal"
        for line in (range(first + 1, last + 1) if last > first else [first + 1])
    ]
    functions = [each for each in structure.targets(location.path, text) if each.kind == "function"]
    labels: list[str] = []
    for line in changed:
        if location.start <= line <= location.end:
            labels.insert(0, location.label)
            continue
        around = [each for each in functions if each.start <= line <= each.end]
        if around:
            labels.append(min(around, key=lambda each: each.end - each.start).label)
    return " + ".join(dict.fromkeys(labels)) or location.label
