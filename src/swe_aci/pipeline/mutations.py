"""Template repairs: small edits of a target's code from the fixed catalogue of fix patterns of
fix_patterns.py, made without the model and kept only when the reproduction test passes on them.

A pattern that applies at several places of the target with the same text also gives one edit
changing all of them (both `'%s+'` of a function), and of three or more, each two neighbours.
The edits are ordered by how often the pattern fixes real bugs (`TIERS`), those on the lines in
focus first (the reproduction's traceback, or the issue's words), then by the distance to them;
the strong patterns are tried before the model's samples, the weak ones after (`STRONG`, `WEAK`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from swe_aci.pipeline.fix_patterns import Conversion, changes
from swe_aci.pipeline.missing_fstring import PATTERN as FSTRING_PATTERN
from swe_aci.pipeline.missing_fstring import fstring_changes
from swe_aci.pipeline.path_arguments import PATTERN as PATH_PATTERN
from swe_aci.pipeline.path_arguments import path_changes
from swe_aci.pipeline.shown_bytes import PATTERN as BYTES_PATTERN
from swe_aci.pipeline.shown_bytes import bytes_changes
from swe_aci.pipeline.similar_names import PATTERN as SIMILAR_NAME
from swe_aci.pipeline.skeleton import Location, parse
from swe_aci.pipeline.source_edits import Change, Source

# pattern -> tier: the order edits are tried in (lower first)
TIERS = {
    "class of self": 0,
    "null check": 0,
    "range check": 0,
    "regex anchor": 0,
    "emptiness guard": 0,
    "empty unpacked": 1,
    "index guard": 1,
    "none test": 1,
    "off by one": 1,
    "exception converted": 1,
    "literal named by the issue": 1,
    PATH_PATTERN: 1,
    BYTES_PATTERN: 1,
    FSTRING_PATTERN: 1,
    "comparison": 1,
    "empty value": 1,
    "condition strengthened": 2,
    "regex quantifier": 2,
    SIMILAR_NAME: 2,
    "arithmetic": 2,
    "integer": 3,
    "boolean operator": 3,
    "operand dropped": 3,
    "condition negated": 4,
}
# The patterns tried before the model's samples, and those tried only after them: swapping
# `and` for `or` or dropping an operand passes a weak reproduction more often than it fixes
# (calutil: `month == 2 and is_leap_year(year)` made `or` passed the model's test, the bug is
# in `is_leap_year`).
STRONG = range(3)
WEAK = range(3, 5)
EVERY = range(STRONG.start, WEAK.stop)
# patterns whose changes differ in text and fix one thing together: each alone, and all at once
ALL_AT_ONCE = frozenset({PATH_PATTERN, FSTRING_PATTERN})
# the patterns of their own modules, each offered only where the issue's words call for it
CALLED_FOR_BY_THE_ISSUE = (path_changes, bytes_changes, fstring_changes)


@dataclass(frozen=True)
class Mutant:
    """One template edit of a file: its new text, its pattern, what it changes (for the
    trajectory: `line 98: n -> min(n, len(pwcs))`) and the first line it changes."""

    text: str
    pattern: str
    description: str
    line: int


def mutants(
    text: str,
    location: Location,
    focus: list[int],
    limit: int,
    conversion: Conversion | None = None,
    tiers: range | None = None,
    issue: str = "",
) -> list[Mutant]:
    """At most `limit` template edits of `location` in `text` that parse, each distinct, in the
    order they are worth trying: those changing a line of `focus` first (templates.py: the
    lines the reproduction's traceback passes through, or those of the issue's words), each
    group by tier, then by the distance to `focus`; `conversion`: the exceptions to convert
    (the target's body in `try:`, the raised ones re-raised as the expected one); `tiers`: the
    patterns' tiers wanted (`STRONG`, `WEAK`; None: all); `issue`: its text, for the patterns
    it calls for (literals naming what it quotes, CALLED_FOR_BY_THE_ISSUE)."""
    tree = parse(text)
    if tree is None:
        return []
    edits = changes(tree, text, location, conversion, issue)
    source = Source(text)
    for called_for in CALLED_FOR_BY_THE_ISSUE:
        edits += called_for(tree, source, location, issue)
    edits = list(dict.fromkeys(edits))  # a literal given to `re` is also a literal
    if tiers is not None:
        edits = [each for each in edits if TIERS[each.pattern] in tiers]

    def order(change: tuple[Change, ...]) -> tuple[bool, int, int, int]:
        line = change[0].line
        distance = min((abs(line - each) for each in focus), default=0)
        return distance > 0, TIERS[change[0].pattern], distance, line

    singles = [(change,) for change in edits]
    ordered = sorted(singles + _grouped(edits, text), key=order)
    found: list[Mutant] = []
    seen = {ast.dump(tree)}
    for group in ordered:
        if len(found) >= limit:
            break
        new_text = _apply(text, group)
        new_tree = parse(new_text)
        if new_tree is None or (dump := ast.dump(new_tree)) in seen:
            continue
        seen.add(dump)
        found.append(Mutant(new_text, group[0].pattern, _describe(text, group), group[0].line))
    return found


def _grouped(changes: list[Change], text: str) -> list[tuple[Change, ...]]:
    """For each pattern making the same text the same new text at several places (in the same
    `context`), and each of ALL_AT_ONCE: all of them at once, and each two neighbours."""
    by_key: dict[tuple[str, ...], list[Change]] = {}
    for change in changes:
        old = text[change.start : change.end]
        key = (change.pattern, old, change.new, change.context)
        by_key.setdefault(key[:1] if change.pattern in ALL_AT_ONCE else key, []).append(change)
    found = []
    for group in by_key.values():
        if len(group) > 1 and _disjoint(group):
            found.append(tuple(group))
            if len(group) > 2:  # and each two neighbours (parse's two align branches of three)
                found += [tuple(group[i : i + 2]) for i in range(len(group) - 1)]
    return found


def _disjoint(group: list[Change]) -> bool:
    spans = sorted((change.start, change.end) for change in group)
    return all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1))


def _apply(text: str, group: tuple[Change, ...]) -> str:
    for change in sorted(group, key=lambda each: each.start, reverse=True):
        text = text[: change.start] + change.new + text[change.end :]
    return text


def _describe(text: str, group: tuple[Change, ...]) -> str:
    first = group[0]
    start = first.start - 1 if first.start == first.end else first.start  # an insertion
    old = " ".join(text[start : first.end].split())
    new = " ".join((text[start : first.start] + first.new).split())
    where = f"line {first.line}" + (f" and {len(group) - 1} more" if len(group) > 1 else "")
    return f"{first.pattern}, {where}: `{_short(old)}` -> `{_short(new)}`"


def _short(code: str, limit: int = 80) -> str:
    return code if len(code) <= limit else code[: limit - 3] + "..."
