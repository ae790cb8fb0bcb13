"""`swe-aci compare` end to end: two configs (default and shell_only) on two generated tasks with the
scripted model, evaluated by running the tasks' tests; then resumed; and its user errors.

The scripted replies use the ACI: open the file, an edit the lint guardrail rejects, the fix, submit.
Under `default` both tasks are resolved; under `shell_only` the ACI commands do not exist, nothing
changes, and the empty submissions resolve nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from swe_aci.analysis.compare import CompareError, resolve_config
from swe_aci.cli.compare import compare_command, stats_command

PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "250"}
CALC = "def add(a, b):\n    return a - b\n"
TEST_PATCH = (
    "diff --git a/tests/test_add.py b/tests/test_add.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/test_add.py\n@@ -0,0 +1,8 @@\n"
    "+import unittest\n+\n+from calc import add\n+\n+\n"
    "+class AddTest(unittest.TestCase):\n+    def test_add(self):\n"
    "+        self.assertEqual(add(2, 3), 5)\n"
)
SCRIPT = [
    "DISCUSSION\nLook at the code.\n```\nopen calc/__init__.py\n```\n",
    "DISCUSSION\nFix it.\n```\nedit 2:2\n    return a +\nend_of_edit\n```\n",
    "DISCUSSION\nFix it properly.\n```\nedit 2:2\n    return a + b\nend_of_edit\n```\n",
    "DISCUSSION\nDone.\n```\nsubmit\n```\n",
]
SRC = str(Path(__file__).resolve().parents[1] / "src")
PRICE = "model.prices={scripted: {input: 10, output: 10}}"


def task_file(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "calc").mkdir(parents=True)
    (project / "calc" / "__init__.py").write_text(CALC)
    (project / "tests").mkdir()
    (project / "tests" / "__init__.py").write_text("")
    rows = [
        {
            "instance_id": f"calc-{number}",
            "repo": "example/calc",
            "problem_statement": "add() subtracts",
            "test_patch": TEST_PATCH,
            "FAIL_TO_PASS": ["test_add (tests.test_add.AddTest)"],
            "PASS_TO_PASS": [],
            "environment": {
                "source": {"path": str(project)},
                "test_cmd": "python -m unittest -v tests.test_add",
                "log_parser": "unittest",
            },
        }
        for number in (1, 2)
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(rows))
    return path


def cli(*args: str | Path) -> Result:
    app = typer.Typer()
    app.command("compare")(compare_command)
    app.command("stats")(stats_command)
    return CliRunner(env=PLAIN).invoke(app, [str(arg) for arg in args])


def compare_args(tasks: Path, out: Path, *extra: str) -> list[str | Path]:
    args: list[str | Path] = ["compare", "--instances", tasks, "--configs", "default,shell_only"]
    args += ["--env", "local", "--output-dir", out, "--cache-dir", tasks.parent / "cache"]
    args += ["--set", "model.name=scripted", "--set", f"model.script={json.dumps(SCRIPT)}"]
    return [*args, "--set", PRICE, *extra]


def traj_costs(batch: Path) -> list[float]:
    return [
        json.loads(path.read_text())["info"]["model_stats"]["instance_cost"]
        for path in sorted(batch.glob("*/*.traj"))
    ]


def table_row(output: str, name: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith(f"│ {name} "))
    return [cell.strip() for cell in line.split("│")[1:-1]]


def test_default_against_shell_only(tmp_path: Path) -> None:
    tasks = task_file(tmp_path)
    out = tmp_path / "out"
    result = cli(*compare_args(tasks, out, "--workers", "2"))
    assert result.exit_code == 0, result.output
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["baseline"] == "default" and comparison["instances"] == 2
    assert comparison["instance_ids"] == ["calc-1", "calc-2"]
    default, shell_only = comparison["configs"]
    assert (default["name"], shell_only["name"]) == ("default", "shell_only")

    assert default["resolved_ids"] == ["calc-1", "calc-2"] and shell_only["resolved_ids"] == []
    assert (default["resolved_pct"], shell_only["resolved_pct"]) == (100.0, 0.0)
    assert (default["submitted_pct"], shell_only["submitted_pct"]) == (100.0, 0.0)
    # shell_only refuses the script's ACI commands (open, edit): three refusals end the
    # episode (exit_format) before any action runs.
    assert (default["mean_turns"], shell_only["mean_turns"]) == (4.0, 0.0)
    assert (default["edits"], default["failed_edits"], default["failed_edit_pct"]) == (4, 2, 50.0)
    # shell_only has no `edit` command: its `edit` actions were no ACI edits.
    assert (shell_only["edits"], shell_only["failed_edit_pct"]) == (0, None)
    assert shell_only["exit_statuses"] == {"exit_format": 2} and shell_only["finished"] == 2
    default_costs = traj_costs(out / "default" / "batch")
    shell_costs = traj_costs(out / "shell_only" / "batch")
    assert len(default_costs) == len(shell_costs) == 2
    assert default["mean_cost"] == pytest.approx(sum(default_costs) / 2, abs=1e-4)
    assert shell_only["mean_cost"] == pytest.approx(sum(shell_costs) / 2, abs=1e-4)
    assert default["mean_cost"] > shell_only["mean_cost"] > 0  # the demonstration costs tokens
    assert default["delta"] == {
        "resolved_pct": 0.0,
        "submitted_pct": 0.0,
        "mean_turns": 0.0,
        "mean_cost": 0.0,
        "failed_edit_pct": 0.0,
    }
    delta = shell_only["delta"]
    assert (delta["resolved_pct"], delta["submitted_pct"], delta["mean_turns"]) == (
        -100.0,
        -100.0,
        -4.0,
    )
    assert delta["failed_edit_pct"] is None
    # each figure is rounded to 4 places, so their difference is known to 1e-4
    expected = shell_only["mean_cost"] - default["mean_cost"]
    assert delta["mean_cost"] == pytest.approx(expected, abs=1.5e-4)

    assert table_row(result.output, "default")[2:5] == ["2", "100.0", "100.0"]
    assert table_row(result.output, "shell_only")[2:5] == ["2", "0.0 (-100.0)", "0.0 (-100.0)"]
    assert table_row(result.output, "shell_only")[5:] == [
        "0.0 (-4.0)",
        f"{shell_only['mean_cost']:.4f} ({delta['mean_cost']:+.4f})",
        "-",
    ]

    # Each config's outputs are those of `swe-aci batch` and `swe-aci evaluate`.
    for name, resolved in (("default", 2), ("shell_only", 0)):
        report = json.loads((out / name / "evaluation" / "report.json").read_text())
        assert report["resolved_instances"] == resolved and report["total_instances"] == 2
        preds = json.loads((out / name / "batch" / "preds.json").read_text())
        assert sorted(preds) == ["calc-1", "calc-2"]
        assert (out / name / "batch" / "run.yaml").is_file()
    assert json.loads((out / "shell_only" / "evaluation" / "report.json").read_text())[
        "empty_patch_ids"
    ] == ["calc-1", "calc-2"]
    stats = cli("stats", out / "default" / "batch")
    assert stats.exit_code == 0 and "2 (50.0%)" in stats.output

    # The same command again: nothing is run or evaluated again; the same comparison.
    again = cli(*compare_args(tasks, out))
    assert again.exit_code == 0, again.output
    assert again.output.count("(graded before)") == 4
    for name, status in (("default", "submitted"), ("shell_only", "exit_format")):
        log = (out / name / "batch" / "batch.log").read_text()
        assert log.count(f": {status}") == 2
    rerun = json.loads((out / "comparison.json").read_text())
    assert rerun["configs"] == comparison["configs"]

    # Killed while grading: the instance without its report is evaluated again, only it.
    (out / "shell_only" / "evaluation" / "calc-2" / "report.json").unlink()
    (out / "comparison.json").unlink()
    resumed = cli(*compare_args(tasks, out))
    assert resumed.exit_code == 0, resumed.output
    assert resumed.output.count("(graded before)") == 3
    assert json.loads((out / "comparison.json").read_text())["configs"] == comparison["configs"]


def test_config_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built-in names (nested ones too) keep their name; a YAML file is named by its stem."""
    builtin = tmp_path / "configs"
    (builtin / "ablations").mkdir(parents=True)
    (builtin / "default.yaml").write_text("description: d\n")
    (builtin / "ablations" / "window_30.yaml").write_text("extends: default\n")
    monkeypatch.setattr("swe_aci.configuration.builtin_config_dir", lambda: builtin)
    assert resolve_config("ablations/window_30") == (
        "ablations/window_30",
        builtin / "ablations" / "window_30.yaml",
    )
    assert resolve_config("default.yaml") == ("default", builtin / "default.yaml")
    mine = tmp_path / "mine" / "my_config.yaml"
    mine.parent.mkdir()
    mine.write_text("extends: default\n")
    assert resolve_config(str(mine)) == ("my_config", mine)
    for outside in ("../configs/default", "/default", "ablations", ""):
        with pytest.raises(CompareError, match="default, ablations/window_30"):
            resolve_config(outside)


def test_a_changed_config_is_not_mixed_with_old_results(tmp_path: Path) -> None:
    tasks = task_file(tmp_path)
    out = tmp_path / "out"
    first = cli(*compare_args(tasks, out, "--filter", "calc-1"))
    assert first.exit_code == 0, first.output
    changed = cli(
        *compare_args(tasks, out, "--filter", "calc-1", "--set", "agent.limits.max_steps=9")
    )
    assert changed.exit_code == 2
    assert "holds results of a different 'default' config" in changed.output
    assert "Traceback" not in changed.output


def test_user_errors_are_one_line(tmp_path: Path) -> None:
    tasks = task_file(tmp_path)
    out = tmp_path / "out"

    def run(configs: str, *extra: str) -> Result:
        args = compare_args(tasks, out, *extra)
        args[args.index("--configs") + 1] = configs
        return cli(*args)

    unknown = run("default,nonesuch")
    assert unknown.exit_code == 2
    assert "unknown config 'nonesuch'" in unknown.output and "shell_only" in unknown.output
    twice = run("default,default")
    assert twice.exit_code == 2 and "would share the output directory 'default'" in twice.output
    bad_yaml = tmp_path / "mine.yaml"
    bad_yaml.write_text("extends: default\nagent: [1]\n")
    invalid = run(f"default,{bad_yaml}")
    assert invalid.exit_code == 2 and "mine.yaml" in invalid.output
    none = run("default", "--filter", "no-such-id")
    assert none.exit_code == 2 and "no task selected" in none.output
    absent = [str(arg).replace("tasks.json", "absent.json") for arg in compare_args(tasks, out)]
    missing_tasks = cli(*absent)
    assert missing_tasks.exit_code == 2 and "absent.json" in missing_tasks.output
    for result in (unknown, twice, invalid, none, missing_tasks):
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert not (out / "comparison.json").exists()


@pytest.mark.slow
def test_ctrl_c_stops_then_the_same_command_resumes(tmp_path: Path) -> None:
    tasks = task_file(tmp_path)
    out = tmp_path / "out"
    slow = [SCRIPT[0], "DISCUSSION\nWait.\n```\nsleep 1\n```\n", *SCRIPT[1:]]
    args = [str(arg) for arg in compare_args(tasks, out)]
    args[args.index(f"model.script={json.dumps(SCRIPT)}")] = f"model.script={json.dumps(slow)}"
    program = (
        "import typer\n"
        "from swe_aci.cli.compare import compare_command, stats_command\n"
        "app = typer.Typer()\n"
        "app.command('compare')(compare_command)\n"
        "app.command('stats')(stats_command)\n"
        "app()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", program, *args],
        env={**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not list(out.glob("default/batch/calc-*/*.traj*")) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 130, output
    assert "interrupted; the same command resumes where it stopped" in output
    assert "Traceback" not in output and not (out / "comparison.json").exists()

    resumed = cli(*args)
    assert resumed.exit_code == 0, resumed.output
    configs = json.loads((out / "comparison.json").read_text())["configs"]
    assert [config["resolved"] for config in configs] == [2, 0]
    # shell_only refuses the ACI commands: only `sleep 1` and `submit` run
    assert [config["mean_turns"] for config in configs] == [5.0, 2.0]
