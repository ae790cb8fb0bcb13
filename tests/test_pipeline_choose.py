"""The pipeline's choice among validated candidates (pipeline/choose.py): what is never
submitted, and what wins among the rest."""

from __future__ import annotations

from swe_aci.pipeline.choose import Group, best
from swe_aci.pipeline.repair import TEMPLATE, Edit


def group(
    name: str,
    reproduced: bool,
    regressions: int,
    at_base: int = 10,
    functions: int = 1,
    source: str = "block",
) -> Group:
    edit = Edit({"m.py": name}, name, 1, source)
    return Group(
        edit, f"m.py::{name}", [1], reproduced, int(reproduced), regressions, at_base,
        regressed_functions=min(functions, regressions),
    )  # fmt: skip


def test_a_candidate_breaking_most_existing_tests_is_never_chosen() -> None:
    """dateutil's isoparse: a template made the code raise everywhere, so the issue's
    exception-only reproduction passed while 567 of 567 existing tests broke."""
    raises_everywhere = group("raise", True, 567, at_base=567)
    harmless = group("noop", False, 0, at_base=567)
    assert raises_everywhere.harmful and not harmless.harmful
    assert best([raises_everywhere, harmless]) is harmless
    assert best([raises_everywhere]) is raises_everywhere  # the caller then says no fix found
    assert raises_everywhere.harm() == (
        "breaks 567 of the 567 existing tests that pass at the base (in 1 test functions)"
    )


def test_a_reproduced_candidate_breaking_a_few_tests_still_beats_one_that_fixes_nothing() -> None:
    few = group("few", True, 2)
    assert not few.harmful
    assert best([group("noop", False, 0), few]) is few
    half = group("half", True, 5)  # exactly half is not most
    assert not half.harmful and group("most", True, 6).harmful


def test_a_candidate_that_breaks_tests_and_passes_no_reproduction_is_harmful() -> None:
    breaks = group("breaks", False, 1)
    assert (
        breaks.harmful
        and breaks.harm() == "breaks 1 existing tests and passes no reproduction test"
    )
    no_signal = Group(Edit({"m.py": "x"}, "x", 1), "m.py::x", [1], True, 1, None)
    assert not no_signal.harmful  # no existing test ran: nothing to judge by


def test_a_reproduced_candidate_breaking_more_than_two_test_functions_is_never_chosen() -> None:
    """arrow's `_format_timeframe`: a generic fallback passed the reproduction and broke 26 of
    238 tests; a right fix breaks at most the test or two that pinned the old behaviour, so the
    cases of one parametrized test count once."""
    fallback = group("fallback", True, 26, at_base=238, functions=9)
    assert fallback.harmful
    assert fallback.harm() == (
        "breaks 26 of the 238 existing tests that pass at the base (in 9 test functions)"
    )
    assert best([fallback, group("noop", False, 0, at_base=238)]).label == "m.py::noop"
    one_parametrized = group("pinned", True, 12, at_base=238, functions=1)
    assert not one_parametrized.harmful
    assert not group("two", True, 2, functions=2).harmful
    assert group("three", True, 3, functions=3).harmful


def test_a_template_edit_that_breaks_an_existing_test_is_never_chosen() -> None:
    """h11: the template making `len(lengths) != 1` into `== 1` raised on every single
    Content-Length header; it passed the issue's test and broke 1 of 66 existing tests. The
    same score from a model's edit stays eligible (a right fix may break a test that pinned
    the old behaviour); a template's with no regression stays too."""
    blind = group("blind", True, 1, at_base=66, source=TEMPLATE)
    assert blind.harmful
    assert blind.harm() == (
        "a template edit that breaks 1 of the 66 existing tests that pass at the base"
    )
    assert best([blind, group("noop", False, 0, at_base=66)]).label == "m.py::noop"
    assert not group("written", True, 1, at_base=66).harmful
    assert not group("clean", True, 0, at_base=66, source=TEMPLATE).harmful
