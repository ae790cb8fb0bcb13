"""The issue's inline code (`$`, `NotImplemented`, `'__no__pad__'`) found verbatim in the
candidates' code. BM25 splits the issue into word tokens and drops its symbols; a span of code
the issue writes that only a few locations hold points at them more surely than its words do
(`NotImplemented` names the one wrapper that returns it, `$` the one regular expression that
ends with it). A location scores the inverse document frequency of each span it holds, over the
locations ranked: a span that nearly all of them hold (`v`, `in`) counts for next to nothing."""

from __future__ import annotations

import math
from dataclasses import dataclass

from swe_aci.pipeline.issue_literals import BACKTICKS, outside_code
from swe_aci.pipeline.skeleton import Location

MAX_SPAN_CHARS = 80
MAX_SPANS = 40


def code_spans(issue: str) -> list[str]:
    """The backticked spans of the issue's prose (not its code blocks or `>>>` sessions), each
    once, a trailing `()` dropped (`wcswidth()` is written `def wcswidth(n)` in the code)."""
    found = []
    for span in BACKTICKS.findall(outside_code(issue)):
        span = span.strip().removesuffix("()")
        if span and len(span) <= MAX_SPAN_CHARS:
            found.append(span)
    return list(dict.fromkeys(found))[:MAX_SPANS]


@dataclass(frozen=True)
class SpanScores:
    """The weight of each span of the issue that some location holds."""

    weights: dict[str, float]

    def held(self, location: Location) -> list[str]:
        return [span for span in self.weights if span in location.source]

    def of(self, location: Location) -> float:
        return sum(self.weights[span] for span in self.held(location))


def span_scores(issue: str, locations: list[Location]) -> SpanScores:
    """The spans' weights over `locations`: log(locations / locations holding the span)."""
    weights = {}
    for span in code_spans(issue):
        holding = sum(span in location.source for location in locations)
        if holding:
            weights[span] = math.log(len(locations) / holding)
    return SpanScores(weights)
