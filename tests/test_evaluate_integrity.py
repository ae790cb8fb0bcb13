"""Predictions that try to change the tests or how they run, through the real harness and CLI.

The project is graded with pytest (the host's, which the recipe's interpreter is) like the rows of
datasets/tasks.jsonl: `python -m pytest -rA`, a test patch without `diff --git` lines that adds
the FAIL_TO_PASS test to an existing test file, PYTHONPATH holding the repository's root.
"""

from __future__ import annotations

import difflib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import _pytest
import pluggy
import pytest
from typer.testing import CliRunner, Result

from env_helpers import skip_unavailable
from swe_aci.cli import app
from swe_aci.env.config import EnvConfig
from swe_aci.evaluate.harness import evaluate_instance
from swe_aci.evaluate.integrity import integrity_of
from swe_aci.evaluate.options import GradingOptions
from swe_aci.evaluate.report import InstanceReport
from swe_aci.evaluate.runner_reach import added_lines
from swe_aci.tasks import Task

PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}
CALC = "def add(a, b):\n    return a - b\n"
TESTS = "from calc import add\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n"
F2P = "tests/test_calc.py::test_add"
P2P = "tests/test_calc.py::test_add_zero"
MARK_ALL_PASSED = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
    "    report = outcome.get_result()\n    report.outcome = 'passed'\n    report.longrepr = None\n"
)


def file_patch(path: str, old: str, new: str) -> str:
    """A plain unified diff (no `diff --git`) of one file from `old` to `new` ('' = absent)."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{path}" if old else "/dev/null",
            f"b/{path}",
        )
    )
    return "".join(lines)


GOLD = file_patch("calc/__init__.py", CALC, CALC.replace("a - b", "a + b"))
# as the shipped rows: a plain unified diff, no `diff --git` header
TEST_PATCH = file_patch(
    "tests/test_calc.py", TESTS, TESTS + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("calc-pytest")
    (root / "calc").mkdir()
    (root / "calc" / "__init__.py").write_text(CALC)
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TESTS)
    return root


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("recipe-cache")


def row(project: Path, instance_id: str) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "repo": "example/calc",
        "problem_statement": "add subtracts",
        "patch": GOLD,
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": [F2P],
        "PASS_TO_PASS": [P2P],
        "environment": {
            "source": {"path": str(project)},
            "test_cmd": f"{sys.executable} -m pytest -rA -p no:cacheprovider tests/test_calc.py",
            "log_parser": "pytest",
        },
    }


def grade(
    project: Path, cache: Path, out: Path, name: str, patch: str, backend: str = "local"
) -> InstanceReport:
    skip_unavailable(backend)
    task = Task.model_validate(row(project, name))
    config = EnvConfig(backend=backend)  # type: ignore[arg-type]
    return evaluate_instance(task, patch, config, out, GradingOptions(120, cache_dir=cache))


@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_gold_resolves_through_the_guard(
    backend: str, project: Path, cache: Path, tmp_path: Path
) -> None:
    report = grade(project, cache, tmp_path, "gold", GOLD, backend)
    assert report.outcome == "resolved", report.message
    assert not report.integrity.flagged
    assert (
        "swe-aci: end of the pytest session" in (tmp_path / "gold" / "test_output.txt").read_text()
    )
    empty = grade(project, cache, tmp_path, "empty", "", backend)
    assert (empty.outcome, empty.base_outcome) == ("empty_patch", "unresolved")


@pytest.mark.parametrize(
    "cheat",
    [
        # a passing test of the FAIL_TO_PASS name, defined before the test patch's
        TESTS + "\n\ndef test_add():\n    pass\n",
        # the function under test replaced at the top of the test file
        "import calc\n\ncalc.add = lambda a, b: a + b\n" + TESTS,
    ],
    ids=["same-name-test", "monkeypatch"],
)
def test_a_prediction_editing_the_test_patch_files_is_reset(
    cheat: str, project: Path, cache: Path, tmp_path: Path
) -> None:
    patch = file_patch("tests/test_calc.py", TESTS, cheat)
    report = grade(project, cache, tmp_path, "cheat", patch)
    assert report.outcome == "unresolved", report.message
    assert report.tests_status is not None
    assert report.tests_status.FAIL_TO_PASS.failure == [F2P]
    assert [flag.path for flag in report.integrity.flagged] == ["tests/test_calc.py"]


PLUGIN_ATTACKS = {
    "root-conftest": file_patch("conftest.py", "", MARK_ALL_PASSED),
    "tests-conftest": file_patch("tests/conftest.py", "", MARK_ALL_PASSED),
    "pytest-ini-plugin": file_patch("cheat_plugin.py", "", MARK_ALL_PASSED)
    + file_patch("tests/pytest.ini", "", "[pytest]\naddopts = --rootdir=. -p cheat_plugin\n"),
}


@pytest.mark.parametrize("name", sorted(PLUGIN_ATTACKS))
def test_hooks_faking_results_are_flagged_and_strict_grades_them_unresolved(
    name: str, project: Path, cache: Path, tmp_path: Path
) -> None:
    """As in SWE-bench, a hook marking every test passed fools the lenient grading; the report
    flags the files, the run counts the instance, and --strict grades it unresolved."""
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([row(project, name)]))
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({name: {"instance_id": name, "model_patch": PLUGIN_ATTACKS[name]}}))
    out = tmp_path / "out"
    args = [preds, "--instances", tasks, "--env", "local", "--output-dir", out]
    lenient = evaluate(cache, *args)
    assert lenient.exit_code == 0, lenient.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["resolved_ids"] == [name]
    assert report["integrity_flagged_ids"] == [name]
    assert report["resolved_with_integrity_flags"] == 1
    instance = json.loads((out / name / "report.json").read_text())[name]
    assert instance["integrity"]["flagged"], instance
    strict = evaluate(cache, *args, "--strict")
    assert strict.exit_code == 0, strict.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["strict"] is True
    assert report["resolved_ids"] == [] and report["strict_unresolved_ids"] == [name]
    assert report["instances"][name]["message"].startswith("strict: ")


def evaluate(cache: Path, *args: str | Path) -> Result:
    env = {**PLAIN, "SWE_ACI_CACHE": str(cache)}
    return CliRunner(env=env).invoke(app, ["evaluate", *[str(arg) for arg in args]])


FAKE_SUMMARY = f"print('PASSED {F2P}')\nprint('PASSED {P2P}', flush=True)\nos._exit(0)\n"
RUNNER_ATTACKS = {
    # the module under test (no flag) prints results after pytest's summary and exits 0
    "atexit": file_patch(
        "calc/__init__.py",
        CALC,
        "import atexit\nimport os\n\n\ndef _fake():\n"
        + "".join(f"    {line}\n" for line in FAKE_SUMMARY.splitlines())
        + "\n\natexit.register(_fake)\n\n\n"
        + CALC,
    ),
    # a sitecustomize at the root (PYTHONPATH holds it) loading a plugin that fakes results
    "sitecustomize": file_patch("cheat_plugin.py", "", MARK_ALL_PASSED)
    + file_patch(
        "sitecustomize.py", "", "import os\n\nos.environ['PYTEST_ADDOPTS'] = '-p cheat_plugin'\n"
    ),
    # a pytest.py at the root shadowing pytest under `python -m pytest`
    "pytest-module": file_patch("pytest.py", "", f"import os\n\n{FAKE_SUMMARY}"),
    # the same as a package, under src/ too
    "pytest-package": file_patch("pytest/__init__.py", "", f"import os\n\n{FAKE_SUMMARY}"),
}


@pytest.mark.parametrize("backend", ["local", "bwrap"])
@pytest.mark.parametrize("name", sorted(RUNNER_ATTACKS))
def test_a_prediction_cannot_replace_the_runner_or_report_after_it(
    name: str, backend: str, project: Path, cache: Path, tmp_path: Path
) -> None:
    """These work on SWE-bench; here the real pytest runs without the repository's
    sitecustomize, and what is printed after pytest's session is not a result."""
    report = grade(project, cache, tmp_path, name, RUNNER_ATTACKS[name], backend)
    assert report.outcome == "unresolved", report.message
    assert report.tests_status is not None
    assert report.tests_status.FAIL_TO_PASS.failure == [F2P]
    log = (tmp_path / name / "test_output.txt").read_text()
    assert "1 failed, 1 passed" in log
    if name != "atexit":
        assert report.integrity.flagged


def test_the_grading_mode_is_recorded_and_a_report_of_another_mode_is_not_reused(
    project: Path, cache: Path, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([row(project, "calc")]))
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({"calc": {"instance_id": "calc", "model_patch": GOLD}}))
    out = tmp_path / "out"
    args = [preds, "--instances", tasks, "--env", "local", "--output-dir", out]
    assert evaluate(cache, *args).exit_code == 0
    assert json.loads((out / "report.json").read_text())["grading"] == "lenient"
    result = evaluate(cache, *args, "--grading", "swebench")
    assert result.exit_code == 0, result.stderr
    assert "report kept" not in result.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["grading"] == "swebench" and report["resolved_ids"] == ["calc"]
    assert json.loads((out / "calc" / "report.json").read_text())["calc"]["grading"] == "swebench"
    again = evaluate(cache, *args, "--grading", "swebench")
    assert "report kept" in again.stderr


def test_a_repository_holding_pytest_at_its_base_runs_its_own(
    project: Path, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """pytest's own repository: the runner modules it has at the base are not guarded, so its
    tests run with its pytest (here the host's pytest copied in, announcing itself)."""
    root = tmp_path_factory.mktemp("calc-with-pytest")
    shutil.copytree(project, root, dirs_exist_ok=True)
    for module in (pytest, _pytest, pluggy):
        shutil.copytree(Path(module.__file__).parent, root / module.__name__)
    init = root / "pytest" / "__init__.py"
    init.write_text(init.read_text() + "\nprint('own pytest of the repository')\n")
    report = grade(root, tmp_path / "cache", tmp_path, "own-pytest", GOLD)
    assert report.outcome == "resolved", report.message
    assert (
        "own pytest of the repository" in (tmp_path / "own-pytest" / "test_output.txt").read_text()
    )


SHIPPED_TASKS = Path(__file__).resolve().parents[1] / "datasets" / "tasks.jsonl"
SHIPPED_CHEAT = (
    "--- a/tests/test_strutils.py\n+++ b/tests/test_strutils.py\n@@ -274,3 +274,7 @@\n"
    "     assert b2h(-(1024 ** 2)) == '-1M'\n     # ndigits controls the fractional part.\n"
    "     assert b2h(1024, 2) == '1.00K'\n+\n+\n+def test_singularize_double_s():\n+    pass\n"
)


@pytest.mark.slow
def test_a_shipped_row_is_not_fooled_by_a_test_of_the_fail_to_pass_name(tmp_path: Path) -> None:
    """The attack on a row of datasets/tasks.jsonl itself (its environment built from the sdist)."""
    skip_unavailable("bwrap")
    instance_id = "mahmoud__boltons-26.0.0-singularize-double-s"
    rows = [json.loads(line) for line in SHIPPED_TASKS.read_text().splitlines()]
    task = Task.model_validate(next(r for r in rows if r["instance_id"] == instance_id))
    config = EnvConfig(backend="bwrap")
    report = evaluate_instance(
        task, SHIPPED_CHEAT, config, tmp_path, GradingOptions(600, cache_dir=tmp_path / "c")
    )
    assert report.outcome == "unresolved", report.message
    assert report.tests_status is not None
    assert report.tests_status.FAIL_TO_PASS.failure == task.FAIL_TO_PASS


PATCHED_REPORTER = f"""
import _pytest.terminal

_summary_stats = _pytest.terminal.TerminalReporter.summary_stats


def _with_results(self):
    _summary_stats(self)
    self.write_line("PASSED {F2P}")
    self._session.exitstatus = 0


_pytest.terminal.TerminalReporter.summary_stats = _with_results
"""
# the same, out of reach of a search of the added lines
HIDDEN_REPORTER = f"""
import importlib
_reporter = getattr(importlib.import_module("_py" "test.terminal"), "Terminal" "Reporter")
_summary_stats = _reporter.summary_stats


def _with_results(self):
    _summary_stats(self)
    self.write_line("PASSED {F2P}")
    self._session.exitstatus = 0


setattr(_reporter, "summary_stats", _with_results)
"""
REPORTER_ATTACKS = {
    "patched-reporter": PATCHED_REPORTER,
    "hidden-patched-reporter": HIDDEN_REPORTER,
}


@pytest.mark.parametrize("name", sorted(REPORTER_ATTACKS))
def test_a_patched_reporter_in_a_source_file_is_flagged_and_strict_grades_it_unresolved(
    name: str, project: Path, cache: Path, tmp_path: Path
) -> None:
    """Twelve lines appended to the module under test (no test file, no configuration) make
    pytest print `PASSED <F2P>` after its real summary: the log says resolved. The added lines
    are flagged where they can be read as reaching into the runner, and pytest's own record of
    the run (the guard's plugin, outside the repository) disagrees with the log in both cases."""
    assert len(REPORTER_ATTACKS[name].strip().splitlines()) == 12
    attack = file_patch("calc/__init__.py", CALC, CALC + REPORTER_ATTACKS[name])
    lenient = grade(project, cache, tmp_path / "lenient", name, attack)
    log = (tmp_path / "lenient" / name / "test_output.txt").read_text()
    assert "1 failed, 1 passed" in log and log.splitlines().count(f"PASSED {F2P}") == 1
    assert lenient.outcome == "resolved"  # what the log says: the attack works on the log
    reasons = {flag.path: flag.reason for flag in lenient.integrity.flagged}
    assert reasons["(pytest's own record)"] == (
        f"the log reports 1 test(s) passed that pytest's own record of the run does not: {F2P}"
    )
    if name == "patched-reporter":
        assert reasons["calc/__init__.py"].startswith("added lines reach into the test runner")
    else:
        assert "calc/__init__.py" not in reasons

    task = Task.model_validate(row(project, name))
    config = EnvConfig(backend="local")
    strict = evaluate_instance(
        task, attack, config, tmp_path / "strict", GradingOptions(120, cache_dir=cache, strict=True)
    )
    assert strict.outcome == "unresolved" and strict.integrity.strict_unresolved
    assert strict.message.startswith("strict: ")


def test_honest_runs_agree_with_pytests_own_record(
    project: Path, cache: Path, tmp_path: Path
) -> None:
    """The gold patch and an unresolving one: no disagreement, no flag."""
    for name, patch in (("gold", GOLD), ("nothing", CALC_NOOP)):
        report = grade(project, cache, tmp_path, name, patch)
        assert report.integrity.flagged == [], report.integrity
        assert report.outcome == ("resolved" if name == "gold" else "unresolved")


CALC_NOOP = file_patch("calc/__init__.py", CALC, CALC + "\n\ndef sub(a, b):\n    return a - b\n")


@pytest.mark.parametrize(
    ("added", "reason"),
    [
        ("from _pytest import terminal", "imports pytest's internals (line 3)"),
        ("def pytest_runtest_makereport(item, call):", "defines a pytest hook (line 3)"),
        ("import sys; sys.modules['pytest'] = None", "reaches the runner through sys.modules"),
        ("os.environ['PYTEST_ADDOPTS'] = '-p x'", "loads pytest plugins (line 3)"),
        ("import atexit\n+atexit.register(lambda: print('PASSED x'))", "an atexit handler writing"),
        ("x = 'TerminalReporter'", "patches pytest's terminal reporter (line 3)"),
    ],
)
def test_added_lines_reaching_into_the_runner_are_flagged(added: str, reason: str) -> None:
    new_count = 3 + added.count("\n")
    patch = (
        f"--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,{new_count} @@\n"
        f" import os\n x = 1\n+{added}\n"
    )
    (flag,) = integrity_of(patch, "").flagged
    assert flag.path == "pkg/mod.py" and reason in flag.reason, flag.reason
    # in a test file the lines are the tests' own business (the file is flagged as a test file)
    in_tests = patch.replace("pkg/mod.py", "tests/test_mod.py")
    assert [f.reason for f in integrity_of(in_tests, "").flagged] == [
        "a test file or a file under a test directory"
    ]


def test_only_added_lines_count_and_a_plus_plus_line_in_a_hunk_is_content() -> None:
    patch = (
        "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,3 +1,3 @@\n import os\n"
        "-import _pytest\n+++ x\n x = 1\n"
    )
    assert integrity_of(patch, "").flagged == []
    assert added_lines(patch) == {"pkg/mod.py": [(2, "++ x")]}
