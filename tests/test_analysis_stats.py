"""Trajectory statistics on hand-built run directories: ours, a paper-era trajectory, a batch's
results.json, an unreadable trajectory; and `swe-aci stats` on them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from swe_aci.analysis.stats import read_run, summarize
from swe_aci.cli.compare import stats_command

PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}
PAPER_ERA = Path(__file__).parent / "fixtures" / "paper_era" / "calc__calc-1.traj"
REJECTED = (
    "Your proposed edit has introduced new syntax error(s). Please read this error message "
    "carefully and then retry editing the file.\n\nERRORS:\n- E999 IndentationError"
)
PATCH = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def step(action: str, observation: str = "") -> dict[str, Any]:
    return {"thought": "", "action": action, "observation": observation, "state": {}}


def write_trajectory(
    directory: Path,
    instance_id: str,
    steps: list[dict[str, Any]],
    exit_status: str | None,
    submission: str | None,
    cost: float,
) -> None:
    info = {
        "exit_status": exit_status,
        "submission": submission,
        "model_stats": {
            "instance_cost": cost,
            "tokens_sent": 1000,
            "tokens_received": 100,
            "api_calls": len(steps),
        },
    }
    path = directory / instance_id / f"{instance_id}.traj"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"trajectory": steps, "history": [], "info": info}))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A batch directory: four instances with trajectories, one environment error without."""
    out = tmp_path / "out"
    write_trajectory(
        out,
        "edits",
        [
            step("open a.py", "[File: a.py (1 lines total)]"),
            step("edit 1:1\nx = (\nend_of_edit", REJECTED),
            step("edit 1:1\n  x =\nend_of_edit", "\n" + REJECTED),
            step("edit 1:1\nx = 2\nend_of_edit", "[File: a.py (1 lines total)]"),
            step("exit_cost", "Exited (autosubmitted)"),
        ],
        "submitted (exit_cost)",
        PATCH,
        0.5,
    )
    write_trajectory(
        out,
        "shell",
        [step("grep -rn edit .", "a.py:1: edit"), step("editor=1; echo $editor", "1")],
        "exit_format",
        "",
        0.25,
    )
    (out / "paper").mkdir()
    shutil.copy(PAPER_ERA, out / "paper" / "paper.traj")
    (out / "broken").mkdir()
    (out / "broken" / "broken.traj").write_text("{not json")
    results = {
        "shell": {"instance_id": "shell", "exit_status": "submitted", "model_patch": ""},
        "noenv": {"instance_id": "noenv", "exit_status": "error_environment", "cost": 0.0},
    }
    (out / "results.json").write_text(json.dumps(results))
    return out


def test_per_instance_records(run_dir: Path) -> None:
    records = {record.instance_id: record for record in read_run(run_dir)}
    assert sorted(records) == ["broken", "edits", "noenv", "paper", "shell"]

    edits = records["edits"]
    assert (edits.steps, edits.edits, edits.failed_edits) == (4, 3, 2)
    assert edits.exit_status == "submitted (exit_cost)" and edits.submitted
    assert (edits.cost, edits.tokens_sent, edits.tokens_received) == (0.5, 1000, 100)

    shell = records["shell"]  # `editor=1` is no edit; results.json's status wins
    assert (shell.steps, shell.edits, shell.failed_edits) == (2, 0, 0)
    assert shell.exit_status == "submitted" and not shell.submitted

    paper = records["paper"]  # the paper's own rejection message
    assert (paper.steps, paper.edits, paper.failed_edits) == (11, 3, 1)
    assert paper.exit_status == "submitted" and paper.submitted and paper.cost == 0.4127

    noenv = records["noenv"]
    assert noenv.exit_status == "error_environment" and not noenv.has_trajectory
    broken = records["broken"]
    assert broken.exit_status == "unfinished" and "not valid JSON" in (broken.problem or "")


def test_aggregates(run_dir: Path) -> None:
    run = summarize(read_run(run_dir))
    assert (run.instances, run.episodes, run.submitted) == (5, 3, 2)
    assert run.exit_statuses == {
        "submitted (exit_cost)": 1,
        "submitted": 2,
        "error_environment": 1,
        "unfinished": 1,
    }
    assert run.mean_turns == pytest.approx((4 + 2 + 11) / 3) and run.median_turns == 4
    assert (run.edits, run.failed_edits, run.instances_with_failed_edit) == (6, 3, 2)
    assert run.total_cost == pytest.approx(0.5 + 0.25 + 0.4127)
    assert run.mean_cost == pytest.approx((0.5 + 0.25 + 0.4127) / 3)
    assert len(run.problems) == 1 and run.problems[0].startswith("broken: ")


def test_edits_count_only_where_the_interface_has_the_edit_command(tmp_path: Path) -> None:
    steps = [step("edit 1:1\nx = (\nend_of_edit", REJECTED), step("submit", PATCH)]
    for instance_id, commands in (("aci", ["open", "edit", "submit"]), ("shell", ["submit"])):
        write_trajectory(tmp_path, instance_id, steps, "submitted", PATCH, 0.1)
        path = tmp_path / instance_id / f"{instance_id}.traj"
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "config": {"aci": {"commands": commands}}}))
    records = {record.instance_id: record for record in read_run(tmp_path)}
    assert (records["aci"].edits, records["aci"].failed_edits) == (1, 1)
    assert (records["shell"].edits, records["shell"].failed_edits, records["shell"].steps) == (
        0,
        0,
        2,
    )


def test_only_the_selected_ids(run_dir: Path) -> None:
    records = read_run(run_dir, ["edits", "never-ran"])
    assert [(r.instance_id, r.exit_status) for r in records] == [
        ("edits", "submitted (exit_cost)"),
        ("never-ran", "unfinished"),
    ]
    assert summarize(records).episodes == 1


def stats(*args: str) -> Any:
    app = typer.Typer()
    app.command("stats")(stats_command)
    app.command("version")(lambda: None)  # two commands: `stats` is then a subcommand
    return CliRunner(env=PLAIN).invoke(app, ["stats", *args])


def test_stats_command_prints_the_tables(run_dir: Path) -> None:
    result = stats(str(run_dir), "--per-instance")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()

    def row(name: str) -> str:
        return next(line for line in lines if line.startswith(f"│ {name} "))

    assert "unreadable trajectory: broken:" in result.output
    assert row("error_environment").split("│")[2].strip() == "1"
    assert row("mean turns").split("│")[2].strip() == "5.7"
    assert row("median turns").split("│")[2].strip() == "4.0"
    assert row("failed edits (lint guardrail)").split("│")[2].strip() == "3 (50.0%)"
    assert row("total cost").split("│")[2].strip() == "$1.1627"
    assert row("mean cost").split("│")[2].strip() == "$0.3876"
    assert [cell.strip() for cell in row("paper").split("│")[2:5]] == ["submitted", "11", "3"]


def test_stats_command_bad_directories(tmp_path: Path) -> None:
    missing = stats(str(tmp_path / "missing"))
    assert missing.exit_code == 2 and "error: not a directory" in missing.output
    empty = stats(str(tmp_path))
    assert empty.exit_code == 2 and "no trajectories in" in empty.output
    (tmp_path / "results.json").write_text("[1, 2]")
    bad = stats(str(tmp_path))
    assert bad.exit_code == 2 and "is not a batch's results" in bad.output
    assert "Traceback" not in bad.output


def test_a_killed_episode_is_read_from_its_journal(tmp_path: Path) -> None:
    """The journal a killed episode leaves (`<id>.traj.jsonl`), with a long observation stored
    once in the history, counts as an unfinished instance with its steps."""
    from swe_aci.trajectory import store as trajectory

    if not hasattr(trajectory, "TrajectoryWriter"):
        pytest.skip("this trajectory module writes no journal")
    writer = trajectory.TrajectoryWriter(tmp_path / "killed" / "killed.traj")
    header = {"instance_id": "killed", "config": {"aci": {"commands": ["edit", "submit"]}}}
    writer.start(header, [{"role": "system", "content": "s"}], {"exit_status": None})
    observation = REJECTED + "\n" + "x" * 5000
    edit = {
        **step("edit 1:1\nx = (\nend_of_edit", observation),
        "response": "",
        "execution_time": 0.1,
        "query": [{"role": "system", "content": "s"}],
    }
    messages = [{"role": "assistant", "content": "edit"}, {"role": "user", "content": observation}]
    writer.append(messages, edit, {"exit_status": None, "model_stats": {"instance_cost": 0.2}})
    assert not (tmp_path / "killed" / "killed.traj").exists()
    [record] = read_run(tmp_path)
    assert (record.instance_id, record.exit_status, record.has_trajectory) == (
        "killed",
        "unfinished",
        True,
    )
    assert (record.steps, record.edits, record.failed_edits, record.cost) == (1, 1, 1, 0.2)
