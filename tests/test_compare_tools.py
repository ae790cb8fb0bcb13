"""`swe-aci compare --configs default,tools/str_replace` end to end with the scripted model: on two
generated tasks (fast), and on the bundled task set (slow: its environments are built)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_compare import PRICE, cli, task_file

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "datasets" / "tasks.jsonl"


def act(command: str) -> str:
    return f"DISCUSSION\nNext.\n```\n{command}\n```\n"


# One script for both configs: under default, the str_replace commands are refused (they are the
# other set's) and the model's next reply, the sed, makes the fix; under tools/str_replace the
# guardrail rejects the first str_replace, the second makes the fix and the sed changes nothing.
# The first submit of tools/str_replace is answered by the review, the second submits.
BROKEN, FIX = (
    act(
        f"str_replace calc/__init__.py\n    return a - b\nend_of_old_str\n    {new}\nend_of_new_str"
    )
    for new in ("return a +", "return a + b")
)
SED = act("sed -i 's/a - b/a + b/' calc/__init__.py")
SCRIPT = [BROKEN, FIX, SED, act("submit"), act("submit")]


def compare(tasks: Path, out: Path, script: list[str], *extra: str) -> tuple[int, str]:
    """Both configs on `tasks`: outputs under `out`, the environment cache beside it."""
    result = cli(
        "compare", "--instances", tasks, "--configs", "default,tools/str_replace",
        "--output-dir", out, "--cache-dir", out.parent / "cache",
        "--set", "model.name=scripted", "--set", f"model.script={json.dumps(script)}",
        "--set", PRICE, *extra,
    )  # fmt: skip
    return result.exit_code, result.output


def test_the_paper_interface_against_the_str_replace_set(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, output = compare(task_file(tmp_path), out, SCRIPT, "--env", "local")
    assert code == 0, output
    comparison = json.loads((out / "comparison.json").read_text())
    default, tools = comparison["configs"]
    assert (default["name"], tools["name"]) == ("default", "tools/str_replace")
    assert default["resolved_ids"] == tools["resolved_ids"] == ["calc-1", "calc-2"]
    assert (default["mean_turns"], tools["mean_turns"]) == (2.0, 5.0)  # the review is a turn
    assert tools["delta"]["mean_turns"] == 3.0
    assert (default["edits"], tools["edits"], tools["failed_edits"]) == (0, 4, 2)
    assert tools["failed_edit_pct"] == 50.0
    for instance in ("calc-1", "calc-2"):
        trajectory = out / "tools/str_replace/batch" / instance / f"{instance}.traj"
        steps = json.loads(trajectory.read_text())["trajectory"]
        assert steps[0]["observation"].startswith("Your edit was NOT applied")
        assert "has been edited" in steps[1]["observation"]
        assert steps[3]["observation"].startswith("Nothing has been submitted yet")
        default_steps = json.loads(
            (out / "default/batch" / instance / f"{instance}.traj").read_text()
        )["trajectory"]
        assert [step["action"].split()[0] for step in default_steps] == ["sed", "submit"]


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_compare_runs_on_the_bundled_task_set(tmp_path: Path) -> None:
    """Every bundled task through both configs (nothing is fixed: the script looks around and
    submits), evaluated; each str_replace episode reviews before it submits."""
    script = [act("view ."), act("ls"), act("submit"), act("submit")]
    out = tmp_path / "out"
    code, output = compare(BUNDLED, out, script, "--env", "bwrap", "--workers", "2")
    assert code == 0, output
    ids = sorted(json.loads(line)["instance_id"] for line in BUNDLED.read_text().splitlines())
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["instances"] == len(ids) == 12
    default, tools = comparison["configs"]
    assert default["finished"] == tools["finished"] == 12
    assert tools["exit_statuses"] == {"submitted": 12}
    assert default["resolved_ids"] == tools["resolved_ids"] == []
    for instance in ids:
        info = json.loads(
            (out / "tools/str_replace/batch" / instance / f"{instance}.traj").read_text()
        )
        assert info["info"]["review"] == {"step": 3}
