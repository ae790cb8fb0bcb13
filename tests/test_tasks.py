"""Task files: formats, SWE-bench rows, bad rows reported and skipped, selection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from swe_aci.tasks import Task, TaskFileError, load_task, load_tasks


def row(instance_id: str, **extra: object) -> dict[str, object]:
    return {"instance_id": instance_id, "repo": "o/r", "problem_statement": "p", **extra}


SWE_BENCH_ROW = {
    "repo": "astropy/astropy",
    "instance_id": "astropy__astropy-12907",
    "base_commit": "d16bfe05a744909de4b27f5875fe0d4ed41ce607",
    "patch": "diff --git a/x b/x\n",
    "test_patch": "diff --git a/t b/t\n",
    "problem_statement": "Modeling's separability_matrix ...",
    "hints_text": "",
    "created_at": "2022-03-03T15:14:54Z",
    "version": "4.3",
    "FAIL_TO_PASS": '["astropy/modeling/tests/test_separable.py::test_separable[compound_model6]"]',
    "PASS_TO_PASS": '["astropy/modeling/tests/test_separable.py::test_coord_matrix"]',
    "environment_setup_commit": "298ccb478e6bf092953bca67a3d29dc6c35f6752",
}


def test_swe_bench_row_with_json_string_test_lists(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([SWE_BENCH_ROW]))
    task_set = load_tasks(path)
    (task,) = task_set.tasks
    assert task.FAIL_TO_PASS == [
        "astropy/modeling/tests/test_separable.py::test_separable[compound_model6]"
    ]
    assert task.PASS_TO_PASS == ["astropy/modeling/tests/test_separable.py::test_coord_matrix"]
    assert task.image is None and task.environment is None and task.repo_dir == "/testbed"
    assert task_set.problems == []
    assert len(task_set.source_hash) == 64


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".yml", ""])
def test_every_format_loads_the_same_rows(tmp_path: Path, suffix: str) -> None:
    rows = [row("a-1"), row("b-2", FAIL_TO_PASS=["t1"], version=3.0)]
    path = tmp_path / f"tasks{suffix}"
    if suffix == ".jsonl" or suffix == "":
        path.write_text("".join(json.dumps(item) + "\n" for item in rows))
    elif suffix == ".json":
        path.write_text(json.dumps(rows))
    else:
        path.write_text(yaml.safe_dump(rows))
    task_set = load_tasks(path)
    assert [task.instance_id for task in task_set.tasks] == ["a-1", "b-2"]
    assert task_set.tasks[1].FAIL_TO_PASS == ["t1"]


def test_bad_rows_are_reported_with_place_and_id_and_the_rest_load(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    lines = [
        json.dumps(row("good-1")),
        json.dumps({"instance_id": "no-statement", "repo": "o/r"}),
        "{not json",
        json.dumps(row("bad id!")),
        json.dumps(row("typed", FAIL_TO_PASS=5)),
        json.dumps(row("good-1")),
        json.dumps(["a", "list"]),
        json.dumps(row("..")),
        json.dumps(row("both", image="x", environment={"source": {"path": "."}})),
        json.dumps(row("good-2", environment={"source": {"pypi_sdist": "x==1"}})),
        json.dumps(row("good-3")),
    ]
    path.write_text("\n".join(lines) + "\n")
    task_set = load_tasks(path)
    assert [task.instance_id for task in task_set.tasks] == ["good-1", "good-3"]
    problems = {problem.location: problem for problem in task_set.problems}
    assert problems["line 2"].instance_id == "no-statement"
    assert "missing key problem_statement" in problems["line 2"].message
    assert "invalid JSON" in problems["line 3"].message
    assert problems["line 4"].instance_id == "bad id!"
    assert "FAIL_TO_PASS" in problems["line 5"].message
    assert problems["line 6"].message == "duplicate instance_id"
    assert "must be an object" in problems["line 7"].message
    assert "cannot be . or .." in problems["line 8"].message
    assert "not both" in problems["line 9"].message
    assert "sha256" in problems["line 10"].message
    assert str(problems["line 2"]).startswith(f"{path}, line 2 (no-statement): ")
    for problem in task_set.problems:
        assert "\n" not in str(problem)


def test_json_list_problems_are_located_by_index(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([row("a"), {"instance_id": "b"}]))
    (problem,) = load_tasks(path).problems
    assert (problem.location, problem.instance_id) == ("index 1", "b")


def test_recipe_is_validated_and_a_relative_path_is_the_task_files(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    recipe = {
        "python": "3.9",
        "source": {"path": "src"},
        "revert": ["test_patch", "patch"],
        "install": ["pip install -e ."],
        "exclude": ["*.so"],
        "test_cmd": "pytest -q",
        "log_parser": "pytest",
    }
    path = tmp_path / "tasks.yaml"
    path.write_text(yaml.safe_dump([row("r-1", environment=recipe)]))
    (task,) = load_tasks(path).tasks
    assert task.environment is not None
    assert task.environment.source.path == str(tmp_path / "src")
    assert task.environment.revert == ["test_patch", "patch"]
    for bad in (
        {"source": {"path": "x"}, "unknown_key": 1},
        {"source": {"path": "x", "git": "y"}},
        {"source": {"pypi_sdist": "Django==4.1.3", "sha256": "abc"}},
        {"source": {"pypi_sdist": "Django", "sha256": "a" * 64}},
        {"source": {"path": "x"}, "log_parser": "nose"},
        {"source": {"path": "x"}, "revert": ["hints_text"]},
        {"python": "three", "source": {"path": "x"}},
    ):
        path.write_text(yaml.safe_dump([row("r-1", environment=bad)]))
        task_set = load_tasks(path)
        assert task_set.tasks == [] and len(task_set.problems) == 1, bad


def test_selection_shuffle_then_filter_then_slice(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([row(f"django__django-{n}") for n in range(10)] + [row("other-1")]))
    ids = [task.instance_id for task in load_tasks(path, filter="django", slice="2:5").tasks]
    assert ids == ["django__django-2", "django__django-3", "django__django-4"]
    assert len(load_tasks(path, slice="3").tasks) == 3
    shuffled = [task.instance_id for task in load_tasks(path, shuffle=True, seed=1).tasks]
    again = [task.instance_id for task in load_tasks(path, shuffle=True, seed=1).tasks]
    assert shuffled == again and sorted(shuffled) == sorted(
        t.instance_id for t in load_tasks(path).tasks
    )
    assert shuffled != [t.instance_id for t in load_tasks(path).tasks]


@pytest.mark.parametrize(
    ("content", "options", "fragment"),
    [
        (None, {}, "task file not found"),
        ("{}", {}, "expected a list"),
        ("[1,", {}, "invalid JSON"),
        ("[]", {"filter": "("}, "bad --filter"),
        ("[]", {"slice": "a:b"}, "bad --slice"),
    ],
)
def test_unusable_file_or_option_is_one_line(
    tmp_path: Path, content: str | None, options: dict[str, str], fragment: str
) -> None:
    path = tmp_path / "tasks.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(TaskFileError, match=fragment) as error:
        load_tasks(path, **options)  # type: ignore[arg-type]
    assert "\n" not in str(error.value)


def test_keys_swe_aci_does_not_read_are_accepted_and_dropped() -> None:
    task = Task.model_validate({**SWE_BENCH_ROW, "difficulty": "15 min", "version": 3.0})
    dumped = task.model_dump()
    for key in ("hints_text", "created_at", "environment_setup_commit", "difficulty"):
        assert key not in dumped
    assert task.version == "3.0"  # read: SWE-bench 5's grading names it (a number saved as text)


def test_a_saved_hugging_face_dataset_loads_like_a_file(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = [SWE_BENCH_ROW, {**SWE_BENCH_ROW, "instance_id": "bad id!"}]
    saved = tmp_path / "SWE-bench_Lite"
    datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)}).save_to_disk(str(saved))
    task_set = load_tasks(saved)
    assert [task.instance_id for task in task_set.tasks] == ["astropy__astropy-12907"]
    assert task_set.tasks[0].FAIL_TO_PASS[0].endswith("test_separable[compound_model6]")
    (problem,) = task_set.problems
    assert (problem.location, problem.instance_id) == ("index 1", "bad id!")
    assert len(task_set.source_hash) == 64


def test_one_task_by_file_and_id(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(row("a-1")) + "\n" + json.dumps({"instance_id": "b-2"}) + "\n")
    assert load_task(f"{path}:a-1").instance_id == "a-1"
    with pytest.raises(TaskFileError, match=r"line 2 \(b-2\): missing key"):
        load_task(f"{path}:b-2")
    with pytest.raises(TaskFileError, match="no task 'c-3'"):
        load_task(f"{path}:c-3")
    with pytest.raises(TaskFileError, match="expected FILE:ID"):
        load_task(str(path))
