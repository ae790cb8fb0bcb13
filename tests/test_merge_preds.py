"""`swe-aci merge-preds`: runs and shards merged into one preds.json; identical duplicates are
fine, conflicting ids are refused in one line naming them unless --prefer or --winner decides;
the output is written atomically and nothing is written on a refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from swe_aci.cli import app
from swe_aci.records import Prediction

PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}


def merge(*args: str | Path) -> Result:
    return CliRunner(env=PLAIN).invoke(app, ["merge-preds", *map(str, args)])


def pred(instance_id: str, patch: str, model: str = "m") -> dict[str, str]:
    return Prediction(
        instance_id=instance_id, model_name_or_path=model, model_patch=patch
    ).to_json()


def batch_run(directory: Path, *rows: dict[str, str]) -> Path:
    """A batch output directory: preds.json plus each instance's <id>/<id>.pred."""
    directory.mkdir(parents=True)
    (directory / "preds.json").write_text(json.dumps({row["instance_id"]: row for row in rows}))
    for row in rows:
        (directory / row["instance_id"]).mkdir()
        (directory / row["instance_id"] / f"{row['instance_id']}.pred").write_text(json.dumps(row))
    return directory


def trajectories(directory: Path, *rows: dict[str, str]) -> Path:
    """`run`'s output directory: only <id>/<id>.pred files."""
    for row in rows:
        (directory / row["instance_id"]).mkdir(parents=True)
        (directory / row["instance_id"] / f"{row['instance_id']}.pred").write_text(json.dumps(row))
    return directory


def one_line_error(result: Result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_shards_of_every_kind_merge(tmp_path: Path) -> None:
    shard_a = batch_run(tmp_path / "a", pred("x-1", "p1"), pred("x-2", "p2"))
    shard_b = trajectories(tmp_path / "b", pred("x-3", "p3"))
    listed = tmp_path / "c.jsonl"
    listed.write_text(json.dumps(pred("x-4", "")) + "\n" + json.dumps(pred("x-2", "p2")) + "\n")
    out = tmp_path / "out" / "preds.json"
    result = merge(shard_a, shard_b, listed, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert "merged 4 predictions from 3 inputs" in result.stdout
    assert "(1 identical duplicates)" in result.stdout
    merged = json.loads(out.read_text())
    assert list(merged) == ["x-1", "x-2", "x-3", "x-4"]
    assert merged["x-3"] == pred("x-3", "p3")
    assert merged["x-4"]["model_patch"] == ""
    assert [p.name for p in out.parent.iterdir()] == ["preds.json"]  # no temporary left


def test_a_conflict_is_refused_naming_the_ids(tmp_path: Path) -> None:
    first = batch_run(tmp_path / "a", pred("x-1", "p1"), pred("x-2", "p2"), pred("x-3", "p3"))
    second = batch_run(tmp_path / "b", pred("x-1", "other"), pred("x-2", "p2"), pred("x-3", "q"))
    out = tmp_path / "preds.json"
    line = one_line_error(merge(first, second, "-o", out))
    assert "2 instance ids have different patches: x-1 (" in line
    assert "x-3 (" in line and "x-2" not in line
    assert "--prefer first|last or --winner PATH" in line
    assert not out.exists()


@pytest.mark.parametrize(("rule", "expected"), [("first", "p1"), ("last", "other")])
def test_prefer_decides(tmp_path: Path, rule: str, expected: str) -> None:
    first = batch_run(tmp_path / "a", pred("x-1", "p1"))
    second = trajectories(tmp_path / "b", pred("x-1", "other"))
    out = tmp_path / "preds.json"
    result = merge(first, second, "-o", out, "--prefer", rule)
    assert result.exit_code == 0, result.stderr
    assert f"1 conflicts decided by --prefer {rule}" in result.stdout
    assert json.loads(out.read_text())["x-1"]["model_patch"] == expected


def test_winner_decides_its_conflicts_only(tmp_path: Path) -> None:
    a = batch_run(tmp_path / "a", pred("x-1", "a1"), pred("x-2", "a2"))
    b = batch_run(tmp_path / "b", pred("x-1", "b1"))
    c = batch_run(tmp_path / "c", pred("x-1", "c1"))
    out = tmp_path / "preds.json"
    result = merge(a, b, c, "-o", out, "--winner", b)
    assert result.exit_code == 0, result.stderr
    assert json.loads(out.read_text())["x-1"]["model_patch"] == "b1"
    d = batch_run(tmp_path / "d", pred("x-2", "d2"))
    line = one_line_error(merge(a, b, d, "-o", out, "--winner", b))
    assert "1 instance ids have different patches: x-2" in line
    line = one_line_error(merge(a, c, "-o", out, "--winner", b))
    assert "is not one of the inputs" in line


def test_bad_inputs_end_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "preds.json"
    assert "no such file or directory" in one_line_error(merge(tmp_path / "absent", "-o", out))
    (tmp_path / "empty").mkdir()
    assert "holds no preds.json" in one_line_error(merge(tmp_path / "empty", "-o", out))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert "broken.json" in one_line_error(merge(broken, "-o", out))
    run = batch_run(tmp_path / "a", pred("x-1", "p"))
    both = one_line_error(merge(run, "-o", out, "--prefer", "last", "--winner", run))
    assert "not both" in both
    assert not out.exists()


def test_an_existing_output_is_replaced_whole_and_may_be_an_input(tmp_path: Path) -> None:
    out = tmp_path / "preds.json"
    out.write_text(json.dumps({"x-1": pred("x-1", "p1")}))
    shard = trajectories(tmp_path / "b", pred("x-2", "p2"))
    result = merge(out, shard, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert sorted(json.loads(out.read_text())) == ["x-1", "x-2"]
