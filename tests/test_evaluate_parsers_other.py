"""Log parsers of other languages' test runners, on real logs (tests/fixtures/logs/other, see its
README), and their parity with swebench 5.0.2's own parsers of the same runners."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_aci.evaluate.parsers import PARSERS, TestStatus, parse_log
from swe_aci.evaluate.parsers_other import OTHER_PARSERS
from swe_aci.tasks.models import Recipe

LOGS = Path(__file__).parent / "fixtures" / "logs" / "other"
P, F, E, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR, TestStatus.SKIPPED

GO_VERBOSE = {
    "TestAdd": P,
    "TestFails": F,
    "TestSkipped": S,
    "TestTable": F,
    "TestTable/small_ones": P,
    "TestTable/wrong": F,
    "TestPrintsWithoutNewline": P,  # its output ran into the `--- PASS` line
}
NODE = {
    "adds": P,
    "fails": F,
    "skipped": S,
    "todo one": S,
    "suite > nested passes": P,
    "suite > nested fails": F,
    "suite > inner > deep": P,
    "suite > inner": P,
    "suite": F,
    "with subtests > sub a": P,
    "with subtests > sub b": F,
    "with subtests": F,
}
RSPEC = {
    "Calc adds": P,
    "Calc fails": F,
    "Calc is pending": S,
    "Calc is skipped": S,
    "Calc .sum sums values": P,
    "Calc .sum when empty is zero": P,
}
EXPECTED = {
    ("go_test", "go_test_v.log"): GO_VERBOSE,
    ("go_test", "go_test.log"): {"TestFails": F, "TestTable": F, "TestTable/wrong": F},
    ("cargo", "cargo_test.log"): {
        "tests::adds": P,
        "tests::ignored": S,
        "tests::ignored_with_reason": S,
        "tests::nested::deep": P,
        "tests::panics": P,  # `tests::panics - should panic ... ok`
        "tests::fails": F,
        "src/lib.rs - add (line 3)": P,
        "src/lib.rs - sub (line 12)": F,
    },
    ("jest", "jest_verbose.log"): {
        "top level": P,
        "adds": P,
        "fails": F,
        "skipped one": S,
        "todo one": S,
        "deep passes": P,
    },
    ("mocha", "mocha_spec.log"): {
        "Calc adds": P,
        "Calc fails": F,
        "Calc is pending": S,
        "Calc #sum sums values": P,
        "Calc #sum sums nothing": F,
        "Other passes slowly": P,
    },
    ("node_test", "node_test_tap.log"): NODE,
    ("node_test", "node_test_spec.log"): NODE,
    ("tap", "node_test_tap.log"): NODE,
    ("junit_xml", "junit_reports.xml.log"): {
        "CalcTest.adds": P,
        "CalcTest.fails": F,
        "CalcTest.errors": E,
        "CalcTest.skipped": S,
        "CalcTest$Inner.deep": P,
    },
    ("junit_xml", "phpunit_junit.xml.log"): {
        "CalcTest.testAdds": P,
        "CalcTest.testFails": F,
        "CalcTest.testSkipped": S,
        "CalcTest.testIncomplete": S,
        "CalcTest.testErrors": E,
        'CalcTest.testWithData with data set "same"': P,
        'CalcTest.testWithData with data set "different"': F,
    },
    ("phpunit", "phpunit_testdox.log"): {
        "Calc > Adds": P,
        "Calc > Fails": F,
        "Calc > Skipped": S,
        "Calc > Incomplete": S,
        "Calc > Errors": F,
        'Calc > With data with data set "same"': P,
        'Calc > With data with data set "different"': F,
    },
    ("rspec", "rspec_documentation.log"): RSPEC,
    ("rspec", "rspec_json.log"): RSPEC,
}


@pytest.mark.parametrize(("parser", "log"), EXPECTED, ids=[f"{p}-{n}" for p, n in EXPECTED])
def test_every_status_of_a_real_log(parser: str, log: str) -> None:
    statuses = parse_log(parser, (LOGS / log).read_text(encoding="utf-8"))
    assert statuses == EXPECTED[parser, log]
    assert all(type(status) is TestStatus for status in statuses.values())


def test_the_parsers_are_registered_and_a_row_may_name_them() -> None:
    assert set(OTHER_PARSERS) <= set(PARSERS)
    for name in OTHER_PARSERS:
        recipe = Recipe.model_validate(
            {"source": {"path": "."}, "test_cmd": "true", "log_parser": name}
        )
        assert recipe.log_parser == name


def test_a_cut_off_junit_report_keeps_what_was_printed() -> None:
    report = (LOGS / "junit_reports.xml.log").read_text(encoding="utf-8")
    cut = report[: report.index('name="skipped()"')]
    statuses = parse_log("junit_xml", cut)
    assert statuses["CalcTest.errors"] == E
    assert "CalcTest.skipped" not in statuses


def test_mocha_runs_one_after_the_other_are_all_read() -> None:
    log = (LOGS / "mocha_spec.log").read_text(encoding="utf-8")
    second = log.replace("Calc", "Again").replace("Other", "More")
    statuses = parse_log("mocha", log + second)
    assert statuses["Calc fails"] == F and statuses["Again #sum sums values"] == P
    assert len(statuses) == 12


# -- parity with swebench 5.0.2's parsers ----------------------------------------------------

# (our parser, log) -> (swebench module, function, how its ids become ours)
SWEBENCH = {
    ("go_test", "go_test_v.log"): ("go", "parse_log_gotest", None),
    ("go_test", "go_test.log"): ("go", "parse_log_gotest", None),
    ("cargo", "cargo_test.log"): ("rust", "parse_log_cargo", None),
    ("jest", "jest_verbose.log"): ("javascript", "parse_log_jest", "jest"),
    ("tap", "node_test_tap.log"): ("javascript", "parse_log_tap", "tap"),
    ("phpunit", "phpunit_testdox.log"): ("php", "parse_log_phpunit", "phpunit9"),
}


def _their_id(transform: str | None, test_id: str) -> str:
    """swebench's TAP parser keeps the `- ` of `ok 1 - title` and a `# SKIP` directive, and drops
    the parents of nested tests; its jest parser keeps the word `skipped` jest prints before a
    skipped test's title; under PHPUnit 9 its suite is None."""
    if transform == "jest":
        return test_id.removeprefix("skipped ")
    if transform == "tap":
        return test_id.removeprefix("- ").split(" # ")[0]
    if transform == "phpunit9":
        return test_id.removeprefix("None > ")
    return test_id


@pytest.mark.parametrize(("parser", "log"), SWEBENCH, ids=[f"{p}-{n}" for p, n in SWEBENCH])
def test_swebench_parsers_agree_where_they_see_a_test(parser: str, log: str) -> None:
    """Every test swebench's parser reports, ours reports with the same status (its `skip`
    and `todo` TAP tests, which it counts as passed, are SKIPPED here); ours may report more:
    doc tests, `should_panic` tests and ignored ones in cargo, nested tests in TAP."""
    import importlib

    module, function, transform = SWEBENCH[parser, log]
    parse = getattr(importlib.import_module(f"swebench.harness.log_parsers.{module}"), function)
    text = (LOGS / log).read_text(encoding="utf-8")
    theirs = parse(text, None)
    ours = parse_log(parser, text)
    assert theirs
    for test_id, status in theirs.items():
        mine = _their_id(transform, test_id)
        if transform == "phpunit9":
            mine = "Calc > " + mine
        if transform == "tap" and " # " in test_id:
            assert ours[mine] == S and status == "PASSED", test_id
            continue
        matches = [key for key in ours if key == mine or key.endswith(" > " + mine)]
        assert matches, test_id
        assert {ours[key] for key in matches} == {TestStatus(status)}, test_id
    assert len(ours) >= len(theirs)


def test_lenient_grading_reads_the_new_parsers_statuses() -> None:
    from swe_aci.evaluate.grading import grade, parse_for

    statuses = parse_for("lenient", "go_test", (LOGS / "go_test_v.log").read_text())
    assert grade("go_test", statuses, ["TestTable/small_ones"], ["TestAdd"]).resolved
    assert not grade("go_test", statuses, ["TestTable/wrong"], ["TestAdd"]).resolved
    assert not grade("go_test", statuses, ["TestSkipped"], []).resolved  # a skip does not fix
