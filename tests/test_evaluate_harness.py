"""`swe-aci evaluate` end to end on a small generated task set (recipes with a `path` source).

The project: `calc.add` subtracts (the bug); the test patch adds a test of `add` (FAIL_TO_PASS)
beside the existing test of `mul` (PASS_TO_PASS). The tests use unittest so the recipe needs no
install step.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from env_helpers import skip_unavailable
from swe_aci.cli import app
from swe_aci.env.config import EnvConfig
from swe_aci.env.logged import MAX_LOG_BYTES
from swe_aci.evaluate.harness import evaluate_instance
from swe_aci.evaluate.options import GradingOptions
from swe_aci.records import lock_holder
from swe_aci.tasks import Task

PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
MUL_TEST = (
    "import unittest\n\nfrom calc import mul\n\n\n"
    "class MulTest(unittest.TestCase):\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n"
)


def calc_patch(add_body: str, mul_body: str = "return a * b") -> str:
    """A git-style patch of calc/__init__.py giving add and mul these bodies."""
    new = f"def add(a, b):\n    {add_body}\n\n\ndef mul(a, b):\n    {mul_body}\n"
    lines = difflib.unified_diff(
        CALC.splitlines(keepends=True),
        new.splitlines(keepends=True),
        "a/calc/__init__.py",
        "b/calc/__init__.py",
    )
    return "diff --git a/calc/__init__.py b/calc/__init__.py\n" + "".join(lines)


GOLD = calc_patch("return a + b")
BREAKS_MUL = calc_patch("return a + b", "return a ** b")
HANGS = calc_patch("while True: pass")
NOT_APPLYING = GOLD.replace("return a - b", "return a // b")
TEST_PATCH = (
    "diff --git a/tests/test_add.py b/tests/test_add.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/test_add.py\n@@ -0,0 +1,8 @@\n"
    "+import unittest\n+\n+from calc import add\n+\n+\n"
    "+class AddTest(unittest.TestCase):\n+    def test_add(self):\n"
    "+        self.assertEqual(add(2, 3), 5)\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("calc-project")
    (root / "calc").mkdir()
    (root / "calc" / "__init__.py").write_text(CALC)
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_mul.py").write_text(MUL_TEST)
    return root


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("recipe-cache")


def row(project: Path, instance_id: str, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "instance_id": instance_id,
        "repo": "example/calc",
        "problem_statement": "add subtracts",
        "patch": GOLD,
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": ["test_add (tests.test_add.AddTest)"],
        "PASS_TO_PASS": json.dumps(["test_mul (tests.test_mul.MulTest.test_mul)"]),
        "environment": {
            "source": {"path": str(project)},
            "test_cmd": "python -m unittest -v tests.test_add tests.test_mul",
            "log_parser": "unittest",
        },
    }
    return {**base, **changes}


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def preds(path: Path, patches: dict[str, str | None]) -> Path:
    return write_json(
        path,
        {
            key: {"instance_id": key, "model_name_or_path": "test", "model_patch": patch}
            for key, patch in patches.items()
        },
    )


def evaluate(cache: Path, *args: str | Path) -> Result:
    env = {**PLAIN, "SWE_ACI_CACHE": str(cache)}
    return CliRunner(env=env).invoke(app, ["evaluate", *[str(arg) for arg in args]])


@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_gold_resolves_empty_does_not(
    backend: str, project: Path, cache: Path, tmp_path: Path
) -> None:
    skip_unavailable(backend)
    task = Task.model_validate(row(project, "calc-1"))
    config = EnvConfig(backend=backend)  # type: ignore[arg-type]
    gold = evaluate_instance(task, GOLD, config, tmp_path, GradingOptions(60, cache_dir=cache))
    assert gold.outcome == "resolved", gold.message
    assert gold.tests_status is not None
    assert gold.tests_status.PASS_TO_PASS.success == ["test_mul (tests.test_mul.MulTest.test_mul)"]
    saved = tmp_path / "calc-1"
    assert (saved / "patch.diff").read_text() == GOLD
    assert "test_add (tests.test_add.AddTest" in (saved / "test_output.txt").read_text()
    assert json.loads((saved / "report.json").read_text())["calc-1"]["resolved"] is True
    empty = evaluate_instance(task, "", config, tmp_path, GradingOptions(60, cache_dir=cache))
    assert empty.outcome == "empty_patch" and empty.empty_patch
    assert empty.base_outcome == "unresolved" and not empty.resolved
    assert empty.tests_status is not None
    assert empty.tests_status.FAIL_TO_PASS.failure == ["test_add (tests.test_add.AddTest)"]


def test_run_outcomes_report_and_resume(project: Path, cache: Path, tmp_path: Path) -> None:
    rows = [
        row(project, "gold"),
        row(project, "breaks-mul"),
        row(project, "not-applying"),
        row(project, "hangs"),
        row(project, "empty"),
        row(project, "no-tests", FAIL_TO_PASS=[]),
        row(project, "no-prediction"),
        {"instance_id": "bad row!", "repo": "x/y", "problem_statement": "p"},
    ]
    tasks = write_json(tmp_path / "tasks.json", rows)
    predictions = preds(
        tmp_path / "preds.json",
        {
            "gold": GOLD,
            "breaks-mul": BREAKS_MUL,
            "not-applying": NOT_APPLYING,
            "hangs": HANGS,
            "empty": None,
            "no-tests": GOLD,
            "unknown-1": GOLD,
        },
    )
    out = tmp_path / "out"
    args = [predictions, "--instances", tasks, "--output-dir", out, "--env", "local"]
    result = evaluate(cache, *args, "--timeout", "2", "--workers", "2")
    assert result.exit_code == 0, result.stderr
    assert "1 prediction(s) for ids not in" in result.stderr and "unknown-1" in result.stderr
    assert "skipped row:" in result.stderr and "bad row!" in result.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["schema_version"] == 2
    assert report["total_instances"] == 7
    assert report["submitted_instances"] == 6
    assert report["resolved_ids"] == ["gold"]
    assert report["unresolved_ids"] == ["breaks-mul", "hangs", "not-applying"]
    assert report["empty_patch_outcomes"] == {"empty": "unresolved"}
    assert report["patch_failed_ids"] == ["not-applying"]
    assert report["timeout_ids"] == ["hangs"]
    assert report["empty_patch_ids"] == ["empty"]
    assert report["error_ids"] == ["no-tests"]
    assert report["incomplete_ids"] == ["no-prediction"]
    assert report["instances"]["no-tests"]["message"] == "the row has no FAIL_TO_PASS tests"
    # an empty patch: one outcome, `empty_patch`, in the totals, the run's entry, its own report
    # and the line printed (its tests at the base are recorded beside it)
    assert "empty" not in report["unresolved_ids"] + report["completed_ids"]
    assert report["instances"]["empty"]["outcome"] == "empty_patch"
    assert report["instances"]["empty"]["message"] == "the tests at the base: unresolved"
    entry = json.loads((out / "empty" / "report.json").read_text())["empty"]
    assert (entry["outcome"], entry["base_outcome"], entry["resolved"]) == (
        "empty_patch", "unresolved", False,
    )  # fmt: skip
    assert re.search(r"empty_patch empty: the tests at the base: unresolved", result.stderr)
    assert report["instances"]["breaks-mul"]["PASS_TO_PASS_kept"] == 0
    assert report["instances"]["hangs"]["timings"]["tests"] < 30
    assert "16.7%" in result.stderr  # 1 of 6 submitted
    assert "14.3%" in result.stderr  # 1 of 7 instances

    again = evaluate(cache, *args, "--ids", "gold,breaks-mul,no-tests", "--ids", "nope")
    assert again.exit_code == 0, again.stderr
    assert again.stderr.count("report kept") == 2  # not the error: that is tried again
    assert "--ids not in" in again.stderr and "nope" in again.stderr
    redo = evaluate(cache, *args, "--ids", "gold", "--redo")
    assert redo.exit_code == 0 and "report kept" not in redo.stderr


def test_a_patch_git_rejects_applies_with_fuzz(project: Path, cache: Path, tmp_path: Path) -> None:
    """A context line that differs from the file: `git apply` refuses, `patch --fuzz` applies."""
    fuzzy = GOLD.replace(" def mul(a, b):", " def mul(x, y):")
    task = Task.model_validate(row(project, "fuzzy"))
    report = evaluate_instance(
        task, fuzzy, EnvConfig(backend="local"), tmp_path, GradingOptions(60, cache_dir=cache)
    )
    assert report.outcome == "resolved", report.message


def test_prediction_editing_the_tests_does_not_change_them(
    project: Path, cache: Path, tmp_path: Path
) -> None:
    """The files the test patch touches are restored to the base before it is applied."""
    cheat = GOLD.replace("return a + b", "return 5") + (
        "diff --git a/tests/test_add.py b/tests/test_add.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/tests/test_add.py\n@@ -0,0 +1 @@\n+# nothing to test\n"
    )
    task = Task.model_validate(row(project, "cheat"))
    report = evaluate_instance(
        task, cheat, EnvConfig(backend="local"), tmp_path, GradingOptions(60, cache_dir=cache)
    )
    assert report.outcome == "resolved"  # the real test ran: add(2, 3) == 5 holds for `return 5`
    assert "Ran 2 tests" in (tmp_path / "cheat" / "test_output.txt").read_text()


def one_line_error(result: Result, fragment: str) -> None:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], lines
    assert "Traceback" not in result.stdout + result.stderr


def test_bad_inputs_are_one_line(
    project: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = write_json(tmp_path / "tasks.json", [row(project, "calc-1")])
    not_json = tmp_path / "preds.json"
    not_json.write_text("model said: diff --git ...\n")
    one_line_error(evaluate(cache, not_json, "--instances", tasks), "neither JSON nor JSON lines")
    good = preds(tmp_path / "good.json", {"calc-1": GOLD})
    one_line_error(evaluate(cache, good, "--instances", tmp_path / "absent.json"), "absent.json")
    one_line_error(evaluate(cache, good, "--instances", tasks, "--env", "vm"), "unknown sandbox")
    one_line_error(
        evaluate(cache, good, "--instances", tasks, "--grading", "loose"), "unknown --grading"
    )
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    one_line_error(
        evaluate(cache, good, "--instances", tasks, "--env", "docker", "--output-dir", tmp_path),
        "docker",
    )


@pytest.mark.parametrize(
    ("name", "swap"),
    [
        ("fifo", "os.mkfifo(LOG)"),
        ("dev-zero", "os.symlink('/dev/zero', LOG)"),
        pytest.param("huge", "open(LOG, 'w').write('x' * 30_000_000)", marks=pytest.mark.slow),
    ],
)
def test_a_prediction_replacing_the_log_cannot_stall_or_flood_the_host(
    name: str, swap: str, project: Path, cache: Path, tmp_path: Path
) -> None:
    """The prediction's code, run by the tests, swaps the test log (its stderr) for a FIFO, a link
    to an endless device or a file past the size limit as the tests end: reading stays bounded."""
    attack = (
        "import atexit\nimport os\n\nLOG = os.readlink('/proc/self/fd/2')\n\n\n"
        f"def swap():\n    os.remove(LOG)\n    {swap}\n\n\natexit.register(swap)\n"
    )
    lines = attack.splitlines()
    patch = GOLD + (
        "diff --git a/tests/__init__.py b/tests/__init__.py\n"
        f"--- a/tests/__init__.py\n+++ b/tests/__init__.py\n@@ -0,0 +1,{len(lines)} @@\n"
        + "".join(f"+{line}\n" for line in lines)
    )
    task = Task.model_validate(row(project, f"log-{name}"))
    report = evaluate_instance(
        task, patch, EnvConfig(backend="local"), tmp_path, GradingOptions(60, cache_dir=cache)
    )
    log = (tmp_path / f"log-{name}" / "test_output.txt").read_bytes()
    # only a regular file is read, and only its last MAX_LOG_BYTES (how long reading these logs
    # takes is measured by bench/env_bounds.py's test-log case, not here)
    assert log == {"fifo": b"", "dev-zero": b"", "huge": b"x" * MAX_LOG_BYTES}[name]
    # what the tests printed went with the swapped log: no test ran, as far as the log shows
    assert report.outcome == "error" and report.message.startswith("the test command ran no test")


def test_a_failing_exit_without_a_failing_test_is_an_error(
    project: Path, cache: Path, tmp_path: Path
) -> None:
    """The prediction's code makes the test process exit 3 after every test passed."""
    attack = "import atexit\nimport os\n\natexit.register(os._exit, 3)\n"
    lines = attack.splitlines()
    patch = GOLD + (
        "diff --git a/tests/__init__.py b/tests/__init__.py\n"
        f"--- a/tests/__init__.py\n+++ b/tests/__init__.py\n@@ -0,0 +1,{len(lines)} @@\n"
        + "".join(f"+{line}\n" for line in lines)
    )
    task = Task.model_validate(row(project, "exit-3"))
    report = evaluate_instance(
        task, patch, EnvConfig(backend="local"), tmp_path, GradingOptions(60, cache_dir=cache)
    )
    assert report.test_exit_code == 3
    assert report.outcome == "error"
    assert report.message == "the tests exited with code 3 and no test failed"


def test_a_run_of_no_test_is_an_error(project: Path, cache: Path, tmp_path: Path) -> None:
    """The prediction's code ends the test process before any test ran, exiting 0; a test command
    that runs nothing at all, exiting 0 or not."""
    attack = "import os\n\nos._exit(0)\n"
    lines = attack.splitlines()
    patch = GOLD + (
        "diff --git a/tests/__init__.py b/tests/__init__.py\n"
        f"--- a/tests/__init__.py\n+++ b/tests/__init__.py\n@@ -0,0 +1,{len(lines)} @@\n"
        + "".join(f"+{line}\n" for line in lines)
    )
    config = EnvConfig(backend="local")
    task = Task.model_validate(row(project, "no-test"))
    report = evaluate_instance(task, patch, config, tmp_path, GradingOptions(60, cache_dir=cache))
    assert (report.outcome, report.test_exit_code) == ("error", 0)
    assert report.message == "the test command ran no test (exit code 0)"
    for command, code in (("true", 0), ("echo no such suite; exit 4", 4)):
        environment = {**row(project, "x")["environment"], "test_cmd": command}
        task = Task.model_validate(row(project, f"cmd-{code}", environment=environment))
        report = evaluate_instance(
            task, GOLD, config, tmp_path, GradingOptions(60, cache_dir=cache)
        )
        assert report.outcome == "error", report
        assert report.message == f"the test command ran no test (exit code {code})"


@pytest.mark.parametrize(
    ("backend", "outcome"),
    [
        ("local", "resolved"),  # no sandbox: the host's network is there
        ("bwrap", "unresolved"),
        pytest.param("docker", "unresolved", marks=pytest.mark.docker),
    ],
)
def test_tests_run_without_network(
    backend: str, outcome: str, project: Path, cache: Path, tmp_path: Path
) -> None:
    """A prediction whose fix works only when the tests reach a server listening on the host."""
    skip_unavailable(backend)
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        reach = f"__import__('socket').create_connection(('127.0.0.1', {port}), 2)"
        patch = calc_patch(f"return a + b if {reach} else 0")
        task = Task.model_validate(row(project, f"network-{backend}"))
        config = EnvConfig(backend=backend)  # type: ignore[arg-type]
        report = evaluate_instance(
            task, patch, config, tmp_path, GradingOptions(60, cache_dir=cache)
        )
    assert report.outcome == outcome, report.message


@pytest.mark.docker
def test_docker_and_bwrap_give_the_same_report(project: Path, cache: Path, tmp_path: Path) -> None:
    skip_unavailable("docker")
    skip_unavailable("bwrap")
    task = Task.model_validate(row(project, "calc-1"))
    outcomes = {}
    for backend in ("bwrap", "docker"):
        for name, patch in (("gold", GOLD), ("empty", ""), ("breaks-mul", BREAKS_MUL)):
            config = EnvConfig(backend=backend)  # type: ignore[arg-type]
            report = evaluate_instance(
                task, patch, config, tmp_path / backend, GradingOptions(120, cache_dir=cache)
            )
            outcomes[backend, name] = (report.outcome, report.tests_status)
    for name in ("gold", "empty", "breaks-mul"):
        assert outcomes["bwrap", name] == outcomes["docker", name]
    assert outcomes["docker", "gold"][0] == "resolved"


SHIPPED_TASKS = Path(__file__).resolve().parents[1] / "datasets" / "tasks.jsonl"


@pytest.mark.slow
@pytest.mark.timeout(1800)  # twelve environments built from a cold cache
@pytest.mark.parametrize("backend", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_shipped_tasks_gold_resolves_all_and_empty_none(backend: str, tmp_path: Path) -> None:
    """The real task set: every gold patch resolved, every empty prediction not (cold cache: the
    environments are built from their sdists)."""
    skip_unavailable(backend)
    if not SHIPPED_TASKS.is_file():
        pytest.skip(f"no task set at {SHIPPED_TASKS}")
    ids = [json.loads(line)["instance_id"] for line in SHIPPED_TASKS.read_text().splitlines()]
    empty = preds(tmp_path / "empty.json", dict.fromkeys(ids, ""))
    cache = tmp_path / "cache"
    for predictions, expected in (("gold", ids), (empty, [])):
        out = tmp_path / f"out-{expected == ids}"
        args = [predictions, "--instances", SHIPPED_TASKS, "--env", backend, "--workers", "2"]
        result = evaluate(cache, *args, "--output-dir", out, "--timeout", "600")
        assert result.exit_code == 0, result.stderr
        report = json.loads((out / "report.json").read_text())
        if expected:
            assert report["completed_ids"] == sorted(ids)
        else:  # SWE-bench's meaning: an empty patch is not completed; graded under our own key
            assert report["completed_ids"] == [] and report["empty_patch_ids"] == sorted(ids)
            assert report["empty_patch_outcomes"] == dict.fromkeys(sorted(ids), "unresolved")
        assert report["resolved_ids"] == sorted(expected)


def test_a_second_evaluate_on_the_same_output_directory_fails_naming_the_first(
    project: Path, cache: Path, tmp_path: Path
) -> None:
    """Two real `swe-aci evaluate` processes: the second ends at once with one line and the
    first's pid; once the first is gone the directory can be used again."""
    tasks = write_json(tmp_path / "tasks.json", [row(project, "hangs")])
    predictions = preds(tmp_path / "preds.json", {"hangs": HANGS})
    out = tmp_path / "out"
    args = ["evaluate", predictions, "--instances", tasks, "--env", "local", "--output-dir", out]
    env = {**os.environ, "SWE_ACI_CACHE": str(cache), "NO_COLOR": "1"}
    command = [sys.executable, "-m", "swe_aci", *map(str, args)]
    first = subprocess.Popen(
        [*command, "--timeout", "8"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
            out.is_dir() and lock_holder(out.stat()) == str(first.pid)
        ):
            time.sleep(0.1)
        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2, second.stderr
        lines = [line for line in second.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and f"(pid {first.pid})" in lines[0], lines
    finally:
        assert first.wait(timeout=90) == 0  # the hanging tests stopped at their timeout
    third = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert third.returncode == 0, third.stderr
    assert "report kept" in third.stderr


def test_runs_mark_an_instance_whose_tests_differ_between_runs_flaky(
    project: Path, cache: Path, tmp_path: Path
) -> None:
    """`--runs 3`: the PASS_TO_PASS test of `flaky` fails on its second run only (its test
    command breaks it then, as a test depending on the machine's state would); `steady` gives
    the same results each time."""
    counter = tmp_path / "runs-so-far"
    flaky_cmd = (
        f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n + 1)) > {counter}; "
        "if [ $n = 1 ]; then sed -i 's/6)/7)/' tests/test_mul.py; fi; "
        "python -m unittest -v tests.test_add tests.test_mul"
    )
    environment = {**row(project, "x")["environment"], "test_cmd": flaky_cmd}
    tasks = write_json(
        tmp_path / "tasks.json",
        [row(project, "steady"), row(project, "flaky", environment=environment)],
    )
    predictions = preds(tmp_path / "preds.json", {"steady": GOLD, "flaky": GOLD})
    out = tmp_path / "out"
    args = [predictions, "--instances", tasks, "--output-dir", out, "--env", "local"]
    result = evaluate(cache, *args, "--runs", "3")
    assert result.exit_code == 0, result.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["runs"] == 3 and report["flaky_ids"] == ["flaky"]
    mul = "test_mul (tests.test_mul.MulTest.test_mul)"
    assert report["instances"]["flaky"]["flaky_tests"] == [mul]
    assert "flaky_tests" not in report["instances"]["steady"]
    entry = json.loads((out / "flaky" / "report.json").read_text())["flaky"]
    assert entry["run_outcomes"] == ["resolved", "unresolved", "resolved"]
    assert entry["outcome"] == "resolved"  # the first run's
    assert "FAIL" in (out / "flaky" / "test_output.run2.txt").read_text()
    assert "flaky (3 runs)" in result.stderr and "flaky: flaky" in result.stderr
    # the same runs again: kept; one run is another evaluation, and its reports say nothing of runs
    again = evaluate(cache, *args, "--runs", "3")
    assert again.stderr.count("report kept") == 2
    once = evaluate(cache, *args)
    assert once.exit_code == 0 and "report kept" not in once.stderr
    single = json.loads((out / "report.json").read_text())
    assert "flaky_ids" not in single and "runs" not in single
    assert "runs" not in json.loads((out / "steady" / "report.json").read_text())["steady"]


def test_runs_must_be_a_small_positive_number(project: Path, cache: Path, tmp_path: Path) -> None:
    tasks = write_json(tmp_path / "tasks.json", [row(project, "steady")])
    for value in ("0", "-1", "21", "many"):
        result = evaluate(cache, "gold", "--instances", tasks, "--runs", value)
        assert result.exit_code == 2 and "--runs" in result.stderr, result.stderr
