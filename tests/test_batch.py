"""`swe-aci batch` on generated task sets with the scripted model: outputs, resumability after
kill -9, Ctrl-C, bad rows, failing recipes, the cost limit, fatal errors."""

from __future__ import annotations

import json
import os
import pickle
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from batch_helpers import EDIT, SUBMIT, generated_task_file, scripted_overrides
from swe_aci.batch.outputs import BatchOutputs, OutputsError
from swe_aci.cli import app
from swe_aci.evaluate.report import InstanceReport, load_instance
from swe_aci.records import Prediction
from swe_aci.trajectory.instance import InstanceResult
from swe_aci.trajectory.store import load_trajectory

PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}
SRC = str(Path(__file__).resolve().parents[1] / "src")
SLOW_STEP = "DISCUSSION\nWait.\n```\nsleep 1\n```\n"


def batch_args(
    task_file: Path, out: Path, *extra: str, replies: list[str] | None = None
) -> list[str]:
    args = ["batch", "--instances", str(task_file), "--output-dir", str(out), "--env", "local"]
    args += ["--cache-dir", str(task_file.parent / "cache")]
    for override in scripted_overrides(replies):
        args += ["--set", override]
    return [*args, *extra]


def cli(*args: str) -> Result:
    return CliRunner(env=PLAIN).invoke(app, list(args))


def results(out: Path) -> dict[str, dict[str, object]]:
    return json.loads((out / "results.json").read_text())


def test_twelve_instances_on_two_threads(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 12)
    out = tmp_path / "out"
    result = cli(*batch_args(task_file, out, "--workers", "2"))
    assert result.exit_code == 0, result.output
    preds = json.loads((out / "preds.json").read_text())
    assert len(preds) == 12
    for instance_id, prediction in preds.items():
        assert set(prediction) == {"instance_id", "model_name_or_path", "model_patch"}
        assert prediction["instance_id"] == instance_id
        assert "+    return a + b" in prediction["model_patch"]
        assert (out / instance_id / f"{instance_id}.traj").is_file()
    statuses = yaml.safe_load((out / "exit_statuses.yaml").read_text())
    assert statuses == {"instances_by_exit_status": {"submitted": sorted(preds)}}
    run = yaml.safe_load((out / "run.yaml").read_text())
    assert run["model"] == "scripted" and run["instances"] == 12 and run["workers"] == 2
    assert len(run["task_file_sha256"]) == 64 and run["config"]["model"]["name"] == "scripted"
    assert "swe_aci_version" in run
    log = (out / "batch.log").read_text()
    assert log.count(": submitted") == 12
    assert "12/12" in result.output and "batch summary" in result.output
    # Not a terminal: one plain line per instance.
    assert sum(line.startswith("[") for line in result.output.splitlines()) == 12

    again = cli(*batch_args(task_file, out, "--workers", "2"))
    assert again.exit_code == 0 and "12 from before" not in again.output
    assert (
        "done before (skipped)" in again.output
        and (out / "batch.log").read_text().count(": submitted") == 12
    )
    redo = cli(*batch_args(task_file, out, "--filter", "calc-1$", "--redo"))
    assert redo.exit_code == 0 and (out / "batch.log").read_text().count(": submitted") == 13


def test_a_bad_row_is_reported_and_the_others_run(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 2)
    lines = task_file.read_text().splitlines()
    broken = json.loads(lines[0]) | {"instance_id": "demo__bad"}
    del broken["problem_statement"]
    task_file.write_text("\n".join([lines[0], json.dumps(broken), lines[1]]) + "\n")
    out = tmp_path / "out"
    result = cli(*batch_args(task_file, out))
    assert result.exit_code == 0, result.output
    assert f"{task_file}, line 2 (demo__bad): missing key problem_statement" in result.stderr
    assert sorted(results(out)) == ["demo__calc-0", "demo__calc-1"]


def test_a_failing_recipe_is_recorded_with_its_log_and_the_others_go_on(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 3)
    rows = [json.loads(line) for line in task_file.read_text().splitlines()]
    rows[1]["environment"]["prepare"] = ["echo no such tool >&2; exit 7"]
    task_file.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    result = cli(*batch_args(task_file, out, "--workers", "2"))
    assert result.exit_code == 0, result.output
    recorded = results(out)
    assert recorded["demo__calc-1"]["exit_status"] == "error_environment"
    error = str(recorded["demo__calc-1"]["error"])
    assert "prepare command failed" in error and "build log:" in error
    assert "no such tool" in Path(error.rsplit("build log: ", 1)[1].rstrip(")")).read_text()
    assert (
        recorded["demo__calc-0"]["exit_status"]
        == recorded["demo__calc-2"]["exit_status"]
        == "submitted"
    )
    assert json.loads((out / "preds.json").read_text())["demo__calc-1"]["model_patch"] == ""


def test_total_cost_limit_stops_starting_instances(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 6)
    out = tmp_path / "out"
    price = "model.prices={scripted: {input: 10, output: 10}}"
    args = batch_args(task_file, out, "--total-cost", "0.01", "--workers", "2", "--set", price)
    result = cli(*args)
    assert result.exit_code == 0, result.output
    recorded = results(out)
    assert 1 <= len(recorded) < 6
    # the instances already running when the limit was reached finished normally
    assert {entry["exit_status"] for entry in recorded.values()} == {"submitted"}
    assert "total cost limit $0.01 reached" in result.output


def test_a_fatal_model_error_stops_the_batch_with_one_line(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 2)
    out = tmp_path / "out"
    args = ["batch", "--instances", str(task_file), "--output-dir", str(out), "--env", "local"]
    args += ["--model", "anthropic/claude-x"]
    result = CliRunner(env={**PLAIN, "ANTHROPIC_API_KEY": None}).invoke(app, args)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: batch stopped:"), result.stderr
    # no instance finished, so none is recorded: the same command runs them all again
    assert not (out / "results.json").exists() and not (out / "preds.json").exists()


def run_batch_process(
    task_file: Path, out: Path, *extra: str, replies: list[str]
) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        "-m",
        "swe_aci",
        *batch_args(task_file, out, *extra, replies=replies),
    ]
    return subprocess.Popen(
        command,
        env={**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # kill -9 takes the whole process group, as a crash would
    )


def test_the_half_done_writes_of_a_killed_run_are_removed_when_the_next_opens_it(
    tmp_path: Path,
) -> None:
    """A batch killed between `mkstemp` and `os.replace` leaves `.results.json.XXXX.tmp`: the
    next batch (holding the directory's lock) removes it, and nothing else."""
    stale = [tmp_path / ".results.json.9zgk4w8o.tmp", tmp_path / ".preds.json.a1b2c3d4.tmp"]
    for path in stale:
        path.write_text('{"half": ')
    kept = [tmp_path / "notes.tmp", tmp_path / "w" / ".w.traj.x1y2z3.tmp"]
    kept[1].parent.mkdir()
    for path in kept:
        path.write_text("x")
    BatchOutputs(tmp_path)
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)  # an instance's own are its episode's to sweep


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 12)
    out = tmp_path / "out"
    replies = [EDIT, SLOW_STEP, SUBMIT]
    chance = random.Random(7)
    for _ in range(3):
        process = run_batch_process(task_file, out, "--workers", "2", replies=replies)
        time.sleep(chance.uniform(1.0, 5.0))
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if (out / "preds.json").exists():
            json.loads((out / "preds.json").read_text())  # valid at every instant
    process = run_batch_process(task_file, out, "--workers", "2", replies=replies)
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output
    preds = json.loads((out / "preds.json").read_text())
    recorded = results(out)
    assert set(preds) == set(recorded) == {f"demo__calc-{n}" for n in range(12)}
    for instance_id in preds:
        assert recorded[instance_id]["exit_status"] == "submitted"
        trajectory = json.loads((out / instance_id / f"{instance_id}.traj").read_text())
        assert trajectory["info"]["exit_status"] == "submitted"
        assert [step["action"].strip() for step in trajectory["trajectory"]][-1] == "submit"
    assert not list(out.glob("**/*.tmp"))


def test_ctrl_c_finishes_the_current_step_then_resume_completes(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 3)
    out = tmp_path / "out"
    replies = [EDIT, SLOW_STEP, SLOW_STEP, SLOW_STEP, SUBMIT]
    process = run_batch_process(task_file, out, replies=replies)
    deadline = time.monotonic() + 60
    while not list(out.glob("demo__calc-*/*.traj*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 130, output
    interrupted = load_trajectory(out / "demo__calc-0" / "demo__calc-0.traj")
    assert interrupted["info"]["exit_status"] in (None, "exit_interrupted")
    assert interrupted["trajectory"]
    assert "demo__calc-0" not in (results(out) if (out / "results.json").exists() else {})
    assert "interrupted" in output
    process = run_batch_process(task_file, out, replies=[EDIT, SUBMIT])
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output
    assert sorted(results(out)) == ["demo__calc-0", "demo__calc-1", "demo__calc-2"]


def test_unusable_inputs_are_one_line(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 1)
    for args, fragment in [
        (["batch", "--instances", str(tmp_path / "missing.json")], "task file not found"),
        (["batch", "--instances", str(task_file), "--slice", "x"], "bad --slice"),
        (["batch", "--instances", str(task_file), "--executor", "dask"], "unknown --executor"),
    ]:
        result = cli(*args)
        assert result.exit_code == 2, result.output
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and fragment in lines[0], result.stderr
    out = tmp_path / "out"
    assert cli(*batch_args(task_file, out)).exit_code == 0
    other = cli(*batch_args(task_file, out, "--set", "agent.limits.max_steps=7"))
    assert other.exit_code == 2 and "different config" in other.stderr


def test_evaluate_grades_each_instance_after_its_episode(tmp_path: Path) -> None:
    # the host's interpreter has pytest (the recipe's virtualenv installs nothing)
    test_cmd = f"{sys.executable} -m pytest -rA -p no:cacheprovider"
    task_file = generated_task_file(tmp_path, 3, test_cmd=test_cmd)
    out = tmp_path / "out"
    first = cli(*batch_args(task_file, out, "--slice", "0:1", "--workers", "2"))
    assert first.exit_code == 0, first.output
    assert not (out / "evaluation").exists()
    result = cli(*batch_args(task_file, out, "--evaluate", "--workers", "2"))
    assert result.exit_code == 0, result.output
    recorded = results(out)
    # graded by the workers right after their episodes; the instance of the earlier run without
    # --evaluate is graded at the end, for the run's report
    assert [recorded[f"demo__calc-{n}"].get("evaluation") for n in range(3)] == [
        None,
        "resolved",
        "resolved",
    ]
    report = json.loads((out / "evaluation" / "report.json").read_text())
    assert report["resolved_ids"] == [f"demo__calc-{n}" for n in range(3)]
    assert report["schema_version"] == 2
    for n in range(3):
        instance_id = f"demo__calc-{n}"
        saved = json.loads((out / "evaluation" / instance_id / "report.json").read_text())
        assert saved[instance_id]["outcome"] == "resolved"
    assert "resolved" in result.output and "evaluation:" in result.output
    # `swe-aci evaluate` on the same predictions reuses the reports
    again = cli(
        "evaluate",
        str(out / "preds.json"),
        "--instances",
        str(task_file),
        "--env",
        "local",
        "--output-dir",
        str(out / "evaluation"),
    )
    assert again.exit_code == 0, again.output
    assert again.output.count("report kept") == 3


def test_the_final_grading_takes_the_reports_of_the_workers_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --evaluate the final grading neither reads back nor grades again what this run's
    workers graded (their reports come back with the results); an instance an earlier run
    finished is still read from disk."""
    import swe_aci.batch.evaluation as batch_evaluation
    import swe_aci.evaluate.harness as harness

    test_cmd = f"{sys.executable} -m pytest -rA -p no:cacheprovider"
    task_file = generated_task_file(tmp_path, 3, test_cmd=test_cmd)
    out = tmp_path / "out"
    first = cli(*batch_args(task_file, out, "--slice", "0:1", "--evaluate"))
    assert first.exit_code == 0, first.output
    read: list[str] = []
    graded_by_workers: list[str] = []
    graded_at_the_end: list[str] = []

    def counted_load(output_dir: Path, instance_id: str) -> object:
        read.append(instance_id)
        return load_instance(output_dir, instance_id)

    def counted(calls: list[str], evaluate: Any) -> Any:
        def wrapper(task: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append(task.instance_id)
            return evaluate(task, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(harness, "load_instance", counted_load)
    monkeypatch.setattr(
        batch_evaluation,
        "evaluate_instance",
        counted(graded_by_workers, batch_evaluation.evaluate_instance),
    )
    monkeypatch.setattr(
        harness, "evaluate_instance", counted(graded_at_the_end, harness.evaluate_instance)
    )
    result = cli(*batch_args(task_file, out, "--evaluate", "--workers", "2"))
    assert result.exit_code == 0, result.output
    assert sorted(graded_by_workers) == ["demo__calc-1", "demo__calc-2"]
    assert read == ["demo__calc-0"] and graded_at_the_end == []
    report = json.loads((out / "evaluation" / "report.json").read_text())
    ids = [f"demo__calc-{n}" for n in range(3)]
    assert report["resolved_ids"] == ids and report["completed_ids"] == ids
    assert {i: entry["outcome"] for i, entry in report["instances"].items()} == dict.fromkeys(
        ids, "resolved"
    )
    # the workers' reports are in memory only: results.json is as before
    assert all("report" not in entry for entry in results(out).values())


def test_a_result_carries_its_report_through_pickling_but_not_into_results_json(
    tmp_path: Path,
) -> None:
    """Ray pickles a worker's result to bring it to the driver: the report comes along."""
    report = InstanceReport(instance_id="a-1", outcome="resolved", patch_sha256="0" * 64)
    result = InstanceResult("a-1", "submitted", model_patch="diff", evaluation="resolved")
    result.report = report
    carried = pickle.loads(pickle.dumps(result))
    assert carried == result and carried.report == report
    outputs = BatchOutputs(tmp_path)
    outputs.record(carried)
    assert "report" not in results(tmp_path)["a-1"]
    assert BatchOutputs(tmp_path).results["a-1"].report is None


def test_the_shell_only_baseline_produces_predictions(tmp_path: Path) -> None:
    """The paper's shell-only baseline: plain shell edits (sed), then submit, as predictions."""
    task_file = generated_task_file(tmp_path, 2)
    out = tmp_path / "out"
    result = cli(*batch_args(task_file, out, "--config", "shell_only", "--workers", "2"))
    assert result.exit_code == 0, result.output
    preds = json.loads((out / "preds.json").read_text())
    assert sorted(preds) == ["demo__calc-0", "demo__calc-1"]
    for instance_id, prediction in preds.items():
        assert prediction["instance_id"] == instance_id
        assert prediction["model_name_or_path"] == "scripted"
        assert "+    return a + b" in prediction["model_patch"]
    assert yaml.safe_load((out / "run.yaml").read_text())["config"]["description"].startswith(
        "The paper's shell-only baseline"
    )


@pytest.mark.parametrize(
    "content",
    [
        '{"a": {"instance_id": "a", "model_patch": 3}}',
        '{"a": "not a record"}',
        "[1, 2]",
    ],
)
def test_a_malformed_preds_json_is_one_line_and_left_alone(tmp_path: Path, content: str) -> None:
    """Predictions written earlier are read back through the one prediction record: a row that is
    not one stops the batch with one line naming the file, which is not rewritten."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "preds.json").write_text(content)
    with pytest.raises(OutputsError, match=r"preds\.json") as error:
        BatchOutputs(out)
    assert "\n" not in str(error.value)
    assert (out / "preds.json").read_text() == content


def test_the_recorded_prediction_is_the_one_record(tmp_path: Path) -> None:
    outputs = BatchOutputs(tmp_path / "out")
    outputs.record(InstanceResult("a", "submitted", model_patch="diff\n", model_name="m"))
    again = BatchOutputs(tmp_path / "out")
    assert again.predictions == {
        "a": Prediction(instance_id="a", model_name_or_path="m", model_patch="diff\n")
    }
    assert json.loads((tmp_path / "out" / "preds.json").read_text()) == {
        "a": {"instance_id": "a", "model_name_or_path": "m", "model_patch": "diff\n"}
    }


def test_a_rejected_edit_is_recorded_on_its_step_and_counted_from_there(tmp_path: Path) -> None:
    """The ACI's mark of a rejected edit reaches the `.traj` step (`rejected_edit`) and the
    batch's count; `stats` reads the mark, and only a step stored without one (an older file)
    from the observation's text."""
    from swe_aci.analysis.stats import read_run

    see = "DISCUSSION\nLook.\n```\nopen calc/__init__.py\n```\n"
    bad = "DISCUSSION\nBreak it.\n```\nedit 1:1\ndef add(a, b:\nend_of_edit\n```\n"
    task_file = generated_task_file(tmp_path, 1)
    out = tmp_path / "out"
    result = cli(*batch_args(task_file, out, replies=[see, bad, EDIT, SUBMIT]))
    assert result.exit_code == 0, result.output
    assert results(out)["demo__calc-0"]["failed_edits"] == 1
    path = out / "demo__calc-0" / "demo__calc-0.traj"
    stored = json.loads(path.read_text())
    assert [step["rejected_edit"] for step in stored["trajectory"]] == [False, True, False, False]
    [record] = read_run(out)
    assert (record.edits, record.failed_edits) == (1, 1)
    # the mark wins over the text: a rejection whose text says otherwise, and an older step
    stored["trajectory"][1]["observation"] = "File updated."
    path.write_text(json.dumps(stored))
    (out / "results.json").unlink()
    [record] = read_run(out)
    assert record.failed_edits == 1 and record.edit_results == [False]
    del stored["trajectory"][1]["rejected_edit"]
    path.write_text(json.dumps(stored))
    [record] = read_run(out)
    assert record.failed_edits == 0  # an older step: its text says the edit went through


def test_batch_stats_and_the_inspector_share_one_per_instance_record(tmp_path: Path) -> None:
    """What batch writes for an instance (results.json, keys as before) is the record `stats` and
    the inspector's run page read back: one type, the same counts."""
    from swe_aci.analysis.stats import read_run
    from swe_aci.inspector.runs import discover

    task_file = generated_task_file(tmp_path, 1)
    out = tmp_path / "out"
    result = cli(*batch_args(task_file, out, replies=[EDIT, SUBMIT]))
    assert result.exit_code == 0, result.output
    assert list(results(out)["demo__calc-0"]) == [
        *("instance_id", "exit_status", "model_patch", "model_name", "cost", "api_calls"),
        *("steps", "elapsed", "tokens_sent", "tokens_received", "failed_edits", "error"),
        *("evaluation", "tries"),
    ]
    written = BatchOutputs(out).results["demo__calc-0"]
    [stats] = read_run(out)
    [row] = discover([out])[0].rows()
    assert type(stats) is type(row) is InstanceResult
    assert row == written and row.outcome == "not evaluated"
    assert (stats.exit_status, stats.steps, stats.failed_edits, stats.submitted) == (
        written.exit_status,
        written.steps,
        written.failed_edits,
        True,
    )
    assert stats.has_trajectory and stats.commands == ["sed", "submit"]
