"""The paper's analyses on hand-made trajectories, each answer computed by hand below; the plots
read back from their figure objects; `swe-aci stats --report --plots --json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from swe_aci.analysis.paper import edit_streaks, paper_stats
from swe_aci.analysis.stats import read_run
from swe_aci.cli import app

REJECTED = "Your proposed edit has introduced new syntax error(s). Please read this error message"
PATCH = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
OK, FAIL = "edit 1:1\nx = 2\nend_of_edit", "edit 1:1\nx = (\nend_of_edit"

# (commands, exit status, cost, tokens sent): F marks an edit the guardrail rejected.
RUNS: dict[str, tuple[list[str], str, float, int]] = {
    "A": (["create r.py", FAIL, OK, "python r.py", "submit"], "submitted", 1.0, 100),
    "B": (["open a.py", "search_dir x", OK, "submit"], "submitted", 3.0, 300),
    "C": (["open a.py", FAIL, FAIL, FAIL, "exit_cost"], "submitted (exit_cost)", 2.0, 200),
    "D": (["open a.py", FAIL, OK, FAIL, FAIL, OK, "submit"], "submitted", 4.0, 400),
}
REPORT = {"resolved_ids": ["A", "B"], "unresolved_ids": ["C", "D"]}


def write_run(root: Path) -> Path:
    for instance_id, (commands, status, cost, sent) in RUNS.items():
        steps: list[dict[str, Any]] = [
            {"action": c, "observation": REJECTED if c == FAIL else "ok", "thought": ""}
            for c in commands
        ]
        info = {
            "exit_status": status,
            "submission": PATCH,
            "model_stats": {"instance_cost": cost, "tokens_sent": sent, "tokens_received": 10},
        }
        path = root / instance_id / f"{instance_id}.traj"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"trajectory": steps, "history": [], "info": info}))
    (root / "evaluation").mkdir()
    (root / "evaluation" / "report.json").write_text(json.dumps(REPORT))
    return root


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run")


def test_edit_streaks() -> None:
    # D: F T F F T -> a streak of one failure, recovered; one of two failures, recovered.
    assert edit_streaks([False, True, False, False, True]) == [(1, True), (2, True)]
    assert edit_streaks([False, False, False]) == [(3, False)]
    assert edit_streaks([True, True]) == [(0, True), (0, True)]


def test_the_paper_analyses_by_hand(run_dir: Path) -> None:
    stats = paper_stats(read_run(run_dir), REPORT)
    every, resolved, unresolved = stats.groups
    assert [g.name for g in stats.groups] == ["all", "resolved", "unresolved"]
    # turns: A 5, B 4, C 4 (the exit record is no turn), D 7 -> sorted 4 4 5 7
    assert every.turns_mean == 5.0 and every.turns_median == 4.5
    assert every.turns_p75 == pytest.approx(5.5)  # rank 0.75 * 3 = 2.25: 5 + 0.25 * (7 - 5)
    assert every.turns_to_submission == {4: 2, 5: 1, 7: 1}
    assert resolved.turns_mean == 4.5 and unresolved.turns_mean == 5.5
    # cost and tokens: the mean over resolved instances is the paper's "$ Avg. Cost"
    assert resolved.mean_cost == 2.0 and resolved.mean_tokens_sent == 200
    assert unresolved.mean_cost == 3.0
    # failed edits: A 1, B 0, C 3, D 3
    assert every.with_failed_edit == 0.75 and every.median_failed_edits == 2.0
    assert resolved.with_failed_edit == 0.5 and unresolved.median_failed_edits == 3.0
    # streaks: A (1, T), B (0, T), C (3, F), D (1, T) (2, T)
    assert every.edit_recovery == {0: 4 / 5, 1: 3 / 4, 2: 1 / 2, 3: 0.0, 4: None}
    assert resolved.edit_recovery == {0: 1.0, 1: 1.0, 2: None, 3: None, 4: None}
    assert unresolved.edit_recovery == {0: 2 / 3, 1: 2 / 3, 2: 1 / 2, 3: 0.0, 4: None}
    assert stats.first_actions[0] == ("open, edit, edit", 2)
    assert len(stats.first_actions) == 3
    by_turn = [{k: v for k, v in turn.items() if v} for turn in stats.categories_by_turn]
    assert by_turn == [
        {"edit": 1, "open": 3},  # create counts as an edit
        {"edit": 3, "search": 1},
        {"edit": 4},
        {"python": 1, "submit": 1, "edit": 2},
        {"submit": 1, "edit": 1},
        {"edit": 1},
        {"submit": 1},
    ]
    assert stats.exit_statuses_by_outcome == {
        "resolved": {"submitted": 2},
        "unresolved": {"submitted (exit_cost)": 1, "submitted": 1},
    }
    assert stats.resolved == 2 and stats.resolved_rate == 0.5


def test_without_a_report_there_is_one_group(run_dir: Path) -> None:
    stats = paper_stats(read_run(run_dir))
    assert [g.name for g in stats.groups] == ["all"] and stats.resolved_rate is None
    assert stats.exit_statuses_by_outcome == {
        "not evaluated": {"submitted": 3, "submitted (exit_cost)": 1}
    }


def test_each_plot_has_its_series(run_dir: Path, tmp_path: Path) -> None:
    from matplotlib.image import imread

    from swe_aci.analysis.plots import PLOT_NAMES, figures, write_plots

    stats = paper_stats(read_run(run_dir), REPORT)
    drawn = figures(stats)
    assert tuple(drawn) == PLOT_NAMES
    turns, categories, recovery, cost = (drawn[name].axes[0] for name in PLOT_NAMES)
    assert len(turns.containers) == 2  # resolved, unresolved
    assert len(categories.containers) == 6  # open search edit python submit other
    assert [len(bars) for bars in categories.containers] == [7] * 6  # one bar per turn
    assert len(recovery.get_lines()) == 2
    resolved_line = recovery.get_lines()[0]
    assert list(resolved_line.get_xdata()) == [0, 1] and list(resolved_line.get_ydata()) == [
        100.0,
        100.0,
    ]
    assert len(cost.containers) == 2
    legend = [text.get_text() for text in categories.get_legend().get_texts()]
    assert legend == ["open", "search", "edit", "python", "submit", "other"]
    written = write_plots(stats, tmp_path / "plots")
    assert [path.name for path in written] == [f"{name}.png" for name in PLOT_NAMES]
    for path in written:
        assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        assert imread(path).shape[2] in (3, 4)  # a decodable image


def test_stats_command_json_and_plots(run_dir: Path, tmp_path: Path) -> None:
    plots = tmp_path / "plots"
    result = CliRunner().invoke(app, ["stats", str(run_dir), "--plots", str(plots), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["paper"]["groups"]["resolved"]["mean_cost"] == 2.0
    assert data["paper"]["groups"]["all"]["edit_recovery"]["1"] == 0.75
    assert data["run"]["instances"] == 4
    assert sorted(path.name for path in plots.iterdir()) == [
        "categories_by_turn.png",
        "cost.png",
        "edit_recovery.png",
        "turns.png",
    ]
    printed = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(
        app, ["stats", str(run_dir)]
    )
    assert printed.exit_code == 0 and "P(edit succeeds | k failed edits)" in printed.output
    assert "resolved instances" in printed.output and "2 (50.0%)" in printed.output


def test_stats_command_bad_report(run_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    result = CliRunner().invoke(app, ["stats", str(run_dir), "--report", str(bad)])
    assert result.exit_code == 2 and "not a run's report.json" in result.output
