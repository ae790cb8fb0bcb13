"""SWE-bench 5 task repositories: read as swebench reads them, graded as swebench grades them,
written so that swebench reads them back."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml

from swe_aci.evaluate.eval_script import (
    EvalScriptError,
    grade_eval_script,
    statuses_of,
    with_exit_code,
)
from swe_aci.evaluate.parsers import TestStatus
from swe_aci.tasks import Task
from swe_aci.tasks.loading import TaskFileError, load_task, load_tasks
from task_repo_helpers import F2P, GOLD, P2P, TEST_PATCH, write_task, write_task_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_task_repo(
        tmp_path / "calc-tasks", {"calc__a-1": "pass_and_fail", "calc__b-2": "fail_only"}
    )


def test_a_task_repository_loads_as_swebench_reads_it(repo: Path) -> None:
    from swebench.task.repo import load_task_repo

    theirs = {row["instance_id"]: row for row in load_task_repo(repo)}
    task_set = load_tasks(repo)
    assert not task_set.problems
    assert [task.instance_id for task in task_set.tasks] == ["calc__a-1", "calc__b-2"]
    for task in task_set.tasks:
        row = theirs[task.instance_id]
        for key in ("repo", "version", "base_commit", "image", "log_parser", "eval_type"):
            assert getattr(task, key) == row[key], key
        assert task.eval_script == row["eval_script"]
        assert task.patch == row["patch"] == GOLD
        assert task.test_patch == row["test_patch"] == TEST_PATCH
        assert task.problem_statement == row["problem_statement"]
        assert (row["FAIL_TO_PASS"], row["PASS_TO_PASS"]) == (task.FAIL_TO_PASS, task.PASS_TO_PASS)
        assert task.task_dir == str(repo / "tasks" / task.instance_id)


def test_swebench_finds_the_test_repository_well_formed(repo: Path) -> None:
    from swebench.task.checks import check_task_repo, errors

    assert errors(check_task_repo(repo)) == []


def test_swebench_makes_its_test_spec_from_our_row(repo: Path) -> None:
    from swebench.harness.utils import make_test_spec

    from swe_aci.evaluate.eval_script import swebench_instance

    for task in load_tasks(repo).tasks:
        spec = make_test_spec(swebench_instance(task))
        assert spec.eval_script == with_exit_code(task.eval_script or "")
        assert spec.eval_type == task.eval_type and spec.log_parser == "parse_log_django"


def test_one_instance_by_directory_and_id(repo: Path) -> None:
    assert load_task(f"{repo}:calc__b-2").eval_type == "fail_only"


def test_a_bad_task_directory_is_one_problem_naming_it_and_the_others_load(repo: Path) -> None:
    broken = write_task(repo, "calc__c-3", eval_type="pass_and_fail")
    (broken / "eval.sh").unlink()
    odd = write_task(repo, "calc__d-4", eval_type="pass_and_fail")
    (odd / "tests.json").write_text("[")
    task_set = load_tasks(repo)
    assert [task.instance_id for task in task_set.tasks] == ["calc__a-1", "calc__b-2"]
    problems = sorted(str(problem) for problem in task_set.problems)
    assert len(problems) == 2
    assert "tasks/calc__c-3" in problems[0] and "eval.sh is missing" in problems[0]
    assert "tasks/calc__d-4" in problems[1]


def test_dataset_and_split_choose_what_the_repository_publishes(repo: Path) -> None:
    write_task(repo, "calc__old-9", eval_type="pass_and_fail", split="deprecated")
    assert len(load_tasks(repo).tasks) == 2  # an unpublished split stays out
    config = {"datasets": ["calc-bench", "calc-lite"], "splits": ["test", "deprecated"]}
    (repo / "sweb.yaml").write_text(yaml.safe_dump(config))
    assert [t.instance_id for t in load_tasks(repo, split="deprecated").tasks] == ["calc__old-9"]
    assert load_tasks(repo, dataset="calc-lite").tasks == []
    with pytest.raises(TaskFileError, match="does not publish 'nope'; it publishes calc-bench"):
        load_tasks(repo, dataset="nope")
    with pytest.raises(TaskFileError, match="choose from a task repository"):
        load_tasks(repo / "sweb.yaml", dataset="calc-bench")


def test_a_swebench5_row_in_jsonl_keeps_its_eval_fields(tmp_path: Path) -> None:
    row = {
        "instance_id": "calc__a-1",
        "repo": "example/calc",
        "problem_statement": "x",
        "image": "swebench/sweb.eval.x86_64.calc_1776_a-1:latest",
        "eval_script": "#!/bin/bash\n: '>>>>> Start Test Output'\ntrue\n: '>>>>> End Test Output'\n",
        "log_parser": "parse_log_pytest",
        "eval_type": "fail_only",
        "FAIL_TO_PASS": json.dumps(["t::a"]),
        "PASS_TO_PASS": "[]",
    }
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    (task,) = load_tasks(tmp_path / "rows.jsonl").tasks
    assert (task.log_parser, task.eval_type, task.task_dir) == (
        "parse_log_pytest",
        "fail_only",
        None,
    )


def test_the_exit_code_is_recorded_as_swebench_records_it() -> None:
    from swebench.harness.utils import parse_eval_script, record_test_exit_code

    script = (
        "#!/bin/bash\nset -uxo pipefail\ncd /testbed\n: '>>>>> Start Test Output'\n"
        "pytest -rA\n: '>>>>> End Test Output'\ngit checkout x -- tests\n"
    )
    theirs = record_test_exit_code(parse_eval_script(script))
    assert with_exit_code(script) == "\n".join(["#!/bin/bash", "set -uxo pipefail", *theirs]) + "\n"


def _task(eval_type: str) -> Task:
    return Task(
        instance_id="calc__a-1",
        repo="example/calc",
        problem_statement="x",
        image="i",
        eval_script="",
        log_parser="parse_log_django",
        eval_type=eval_type,
        FAIL_TO_PASS=[F2P],
        PASS_TO_PASS=[P2P],
    )


@pytest.mark.parametrize("eval_type", ["pass_and_fail", "fail_only"])
@pytest.mark.parametrize(
    "statuses",
    [
        {F2P: "PASSED", P2P: "PASSED"},
        {F2P: "FAILED", P2P: "PASSED"},
        {P2P: "PASSED"},  # F2P absent: success only under fail_only
        {F2P: "ERROR", P2P: "SKIPPED"},
    ],
)
def test_both_eval_types_grade_as_swebench_grades(eval_type: str, statuses: dict) -> None:
    from swebench.harness.constants import EvalType
    from swebench.harness.grading import get_eval_tests_report

    ours = grade_eval_script(
        _task(eval_type), "swebench", {k: TestStatus(v) for k, v in statuses.items()}
    )
    gold = {"FAIL_TO_PASS": [F2P], "PASS_TO_PASS": [P2P]}
    theirs = get_eval_tests_report(statuses, gold, eval_type=EvalType(eval_type))
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        assert getattr(ours, key).success == theirs[key]["success"], key
        assert getattr(ours, key).failure == theirs[key]["failure"], key


def test_a_log_without_markers_or_without_any_test_is_not_graded() -> None:
    with pytest.raises(EvalScriptError, match="markers"):
        statuses_of(_task("fail_only"), "lenient", "Ran 0 tests\n")
    empty_run = "+ : '>>>>> Start Test Output'\nnothing here\n+ : '>>>>> End Test Output'\n"
    with pytest.raises(EvalScriptError, match="no test ran"):
        statuses_of(_task("fail_only"), "lenient", empty_run)


def test_an_official_row_without_eval_script_says_what_grading_needs() -> None:
    from swe_aci.evaluate.harness import evaluation_problem

    row = Task(instance_id="a__b-1", repo="a/b", problem_statement="x", base_commit="abc")
    problem = evaluation_problem(row)
    assert problem is not None and "SWE-bench 5 row or task repository" in problem
    odd = _task("pass_and_fail").model_copy(update={"log_parser": "parse_log_go"})
    assert "--grading swebench" in (evaluation_problem(odd) or "")
    assert evaluation_problem(odd, "swebench") is None


def _evaluate(predictions: str, repo: Path, out: Path, grading: str) -> dict:
    import subprocess
    import sys

    command = [
        sys.executable,
        "-m",
        "swe_aci",
        "evaluate",
        predictions,
        "--instances",
        str(repo),
        "--env",
        "docker",
        "--output-dir",
        str(out),
        "--grading",
        grading,
        "--timeout",
        "120",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    return {path.parent.name: json.loads(path.read_text()) for path in out.glob("*/report.json")}


@pytest.fixture
def built_repo(repo: Path):
    """The repository's images are built by the first evaluation and removed at the end."""
    yield repo
    import docker

    client = docker.from_env()
    for task in load_tasks(repo).tasks:
        with contextlib.suppress(docker.errors.ImageNotFound):
            client.images.remove(task.image or "", force=True)


@pytest.mark.docker
@pytest.mark.timeout(600)
@pytest.mark.parametrize("grading", ["lenient", "swebench"])
def test_gold_resolves_and_empty_does_not_in_the_tasks_own_images(
    built_repo: Path, tmp_path: Path, grading: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    empty = tmp_path / "empty.jsonl"
    rows = [
        {"instance_id": i, "model_name_or_path": "m", "model_patch": ""}
        for i in ("calc__a-1", "calc__b-2")
    ]
    empty.write_text("".join(json.dumps(row) + "\n" for row in rows))
    gold = _evaluate("gold", built_repo, tmp_path / "gold", grading)
    none = _evaluate(str(empty), built_repo, tmp_path / "empty", grading)
    for instance_id in ("calc__a-1", "calc__b-2"):
        resolved, unresolved = gold[instance_id][instance_id], none[instance_id][instance_id]
        assert resolved["resolved"] is True, resolved
        assert unresolved["resolved"] is False, unresolved
        if grading == "swebench":  # swebench's own report of the same logs agrees
            assert resolved["swebench_report"]["resolved"] is True
            assert unresolved["swebench_report"]["resolved"] is False
            assert resolved["swebench_report"]["tests_status"] == resolved["tests_status"] | {
                key: resolved["swebench_report"]["tests_status"][key]
                for key in ("FAIL_TO_FAIL", "PASS_TO_FAIL")
            }


def _outcomes(reports: dict) -> dict:
    return {
        instance_id: (entry[instance_id]["resolved"], entry[instance_id].get("tests_status"))
        for instance_id, entry in reports.items()
    }


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_the_small_bug_set_exported_as_a_task_repository_grades_as_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    from swebench.task.repo import load_task_repo

    monkeypatch.chdir(tmp_path)
    rows = Path(__file__).parents[1] / "datasets" / "small_bugs.jsonl"
    exported = tmp_path / "small-bugs-repo"
    command = [sys.executable, "-m", "swe_aci", "tasks", "export", str(exported)]
    command += ["--format", "swebench5", "--instances", str(rows), "--dataset", "small-bugs"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-2000:]
    from swebench.task.checks import check_task_repo, errors

    assert errors(check_task_repo(exported)) == []
    original = load_tasks(rows).tasks
    assert sorted(row["instance_id"] for row in load_task_repo(exported)) == sorted(
        task.instance_id for task in original
    )
    try:
        theirs = _outcomes(_evaluate("gold", rows, tmp_path / "original", "lenient"))
        ours = _outcomes(_evaluate("gold", exported, tmp_path / "exported", "lenient"))
    finally:
        import docker

        client = docker.from_env()
        for task in load_tasks(exported).tasks:
            with contextlib.suppress(docker.errors.ImageNotFound):
                client.images.remove(task.image or "", force=True)
    assert ours == theirs
    assert all(resolved for resolved, _ in ours.values())


@pytest.mark.docker
@pytest.mark.timeout(600)
def test_a_scripted_agent_fixes_a_task_of_the_repository_in_its_image_and_is_graded(
    built_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from swe_aci.cli import app

    monkeypatch.chdir(tmp_path)
    edit = "DISCUSSION\nFix it.\n```\nsed -i 's/a - b/a + b/' calc.py\n```\n"
    submit = "DISCUSSION\nDone.\n```\nsubmit\n```\n"
    out = tmp_path / "run"
    args = ["batch", "--instances", str(built_repo), "--output-dir", str(out), "--env", "docker"]
    args += ["--filter", "calc__a-1", "--evaluate"]
    args += ["--set", "model.name=scripted", "--set", f"model.script={json.dumps([edit, submit])}"]
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, args)
    assert result.exit_code == 0, result.output
    prediction = json.loads((out / "preds.json").read_text())["calc__a-1"]
    assert "+    return a + b" in prediction["model_patch"]
    assert "tests/" not in prediction["model_patch"]  # the agent never saw the test patch
    report = json.loads((out / "evaluation" / "report.json").read_text())
    assert report["resolved_ids"] == ["calc__a-1"]


def test_the_commands_choose_a_dataset_and_a_split_of_a_task_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from swe_aci.cli import app

    monkeypatch.chdir(tmp_path)
    write_task(repo, "calc__old-9", eval_type="pass_and_fail", split="deprecated")
    config = {"datasets": ["calc-bench"], "splits": ["test", "deprecated"]}
    (repo / "sweb.yaml").write_text(yaml.safe_dump(config))
    runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})
    unknown = runner.invoke(app, ["evaluate", "gold", "--instances", str(repo), "--dataset", "x"])
    assert unknown.exit_code != 0
    assert "does not publish 'x'; it publishes calc-bench" in unknown.output
    args = ["evaluate", "gold", "--instances", str(repo), "--split", "deprecated", "--env", "bwrap"]
    chosen = runner.invoke(app, [*args, "--output-dir", str(tmp_path / "out")])
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["total_instances"] == 1, chosen.output  # the deprecated split alone
    assert report["error_ids"] == ["calc__old-9"]  # an image row needs the docker sandbox
