"""Inputs a user gets wrong end in one line and a non-zero exit, never a traceback (issue 15):
task and prediction files nested too deeply to read, instance ids too long to name files,
`evaluate gold` beside a directory named gold. Each through the real `swe-aci` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from batch_helpers import generated_task_file, scripted_overrides

LONG_ID = "x" * 300
DEEP = "[" * 100_000 + "]" * 100_000


def swe_aci(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.update(NO_COLOR="1", COLUMNS="200", SWE_ACI_CACHE=str(cwd / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "swe_aci", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0], lines


def test_deeply_nested_task_and_prediction_files_are_one_line(tmp_path: Path) -> None:
    tasks = generated_task_file(tmp_path, 1)
    for name in ("deep.json", "deep.jsonl", "deep.yaml"):
        (tmp_path / name).write_text(DEEP if name != "deep.jsonl" else "{}\n" + DEEP + "\n")
    assert_one_line_error(
        swe_aci("evaluate", "gold", "--instances", "deep.json", cwd=tmp_path), "nested too deeply"
    )
    assert_one_line_error(
        swe_aci("evaluate", "gold", "--instances", "deep.yaml", cwd=tmp_path), "nested too deeply"
    )
    for predictions in ("deep.json", "deep.jsonl"):
        result = swe_aci("evaluate", predictions, "--instances", tasks, cwd=tmp_path)
        assert_one_line_error(result, "nested too deeply")
    # a JSONL task file: that row is reported and skipped, the others are read
    jsonl = tmp_path / "tasks-deep.jsonl"
    jsonl.write_text(tasks.read_text() + DEEP + "\n")
    result = swe_aci(
        "batch",
        "--instances",
        jsonl,
        "--env",
        "local",
        "--output-dir",
        "o",
        "--slice",
        "0:0",
        cwd=tmp_path,
    )
    assert "Traceback" not in result.stderr and "nested too deeply" in result.stderr


def test_an_instance_id_too_long_to_name_files_is_a_bad_row(tmp_path: Path) -> None:
    tasks = generated_task_file(tmp_path, 2)
    rows = [json.loads(line) for line in tasks.read_text().splitlines()]
    rows[1]["instance_id"] = LONG_ID
    tasks.write_text("".join(json.dumps(row) + "\n" for row in rows))
    settings = [arg for override in scripted_overrides() for arg in ("--set", override)]
    run = swe_aci(
        "run", "--instance", f"{tasks}:{LONG_ID}", "--env", "local", *settings, cwd=tmp_path
    )
    assert_one_line_error(run, "at most 128 characters")
    batch = swe_aci(
        "batch",
        "--instances",
        tasks,
        "--env",
        "local",
        "--output-dir",
        "out",
        *settings,
        cwd=tmp_path,
    )
    assert batch.returncode == 0, batch.stderr
    assert "Traceback" not in batch.stderr and "at most 128 characters" in batch.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert list(results) == ["demo__calc-0"]
    assert_one_line_error(
        swe_aci(
            "run",
            "--repo",
            "projects/p0",
            "--issue",
            "x",
            "--instance-id",
            LONG_ID,
            *settings,
            cwd=tmp_path,
        ),
        "at most 128",
    )


def test_evaluate_gold_is_the_keyword_even_beside_a_directory_named_gold(tmp_path: Path) -> None:
    tasks = generated_task_file(tmp_path, 1)
    (tmp_path / "gold").mkdir()
    result = swe_aci("evaluate", "gold", "--instances", tasks, "--env", "local", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "evaluation" / "report.json").read_text())["submitted_ids"]
    # the way to name a file called gold
    (tmp_path / "gold").rmdir()
    (tmp_path / "gold").write_text(json.dumps({"demo__calc-0": {"model_patch": ""}}))
    named = swe_aci(
        "evaluate",
        "./gold",
        "--instances",
        tasks,
        "--env",
        "local",
        "--output-dir",
        "e2",
        cwd=tmp_path,
    )
    assert named.returncode == 0, named.stderr
    assert json.loads((tmp_path / "e2" / "report.json").read_text())["empty_patch_ids"]


# Runs swe-aci with the swebench package refused by an import hook, as if it were not installed.
WITHOUT_SWEBENCH = """\
import runpy
import sys


class RefuseSwebench:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "swebench":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, RefuseSwebench())
sys.argv = ["swe-aci", *sys.argv[1:]]
runpy.run_module("swe_aci", run_name="__main__", alter_sys=True)
"""


def test_grading_swebench_without_the_package_is_one_line_before_any_work(tmp_path: Path) -> None:
    """The task file does not exist: the missing package is said before the tasks are read. With
    the package there (as in the dev install), the same command gets as far as the task file."""
    args = ["evaluate", "gold", "--instances", "missing.jsonl", "--grading", "swebench"]
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.update(NO_COLOR="1", COLUMNS="200", SWE_ACI_CACHE=str(tmp_path / "cache"))
    without = subprocess.run(
        [sys.executable, "-c", WITHOUT_SWEBENCH, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert_one_line_error(
        without,
        "--grading swebench needs the swebench package: pip install 'swe-aci[swebench]'",
    )
    with_package = swe_aci(*args, cwd=tmp_path)
    assert with_package.returncode == 2 and "missing.jsonl" in with_package.stderr
    assert "swebench package" not in with_package.stderr


def test_typed_flags_go_into_the_config_as_they_are_never_as_yaml(tmp_path: Path) -> None:
    """`--image on` and `--image null` are the images so named, not YAML's true and null: without
    the docker sandbox the flag is refused, naming itself; `--set` stays YAML text by design."""
    from swe_aci.cli.common import UsageError, build_config

    generated_task_file(tmp_path, 1)
    for image in ("on", "null"):
        result = swe_aci(
            "run", "--repo", "projects/p0", "--issue", "x", "--image", image, cwd=tmp_path
        )
        assert_one_line_error(result, f"--image {image}: an image is used by the docker sandbox")
        config = build_config(None, [], **{"env.backend": "docker", "env.image": image})
        assert config.env.image == image
    assert build_config(None, ["env.image=null"]).env.image is None
    assert build_config(None, [], **{"model.name": "openai/on"}).model.name == "openai/on"
    result = swe_aci("run", "--repo", "projects/p0", "--issue", "x", "--env", "on", cwd=tmp_path)
    assert_one_line_error(result, "--env on: Input should be 'auto', 'local', 'bwrap' or 'docker'")
    try:
        build_config(None, [], **{"env.backend": "local", "env.image": "on"})
    except UsageError as error:
        assert str(error).startswith("--image on: ")
    else:
        raise AssertionError("--image with the local sandbox was taken")


def test_user_supplied_strings_reach_the_terminal_escaped(tmp_path: Path) -> None:
    """A task row's id and a --config path holding terminal escape sequences are printed with
    them escaped (`\\x1b`), as `--instance-id` is; nothing raw reaches the terminal."""
    tasks = generated_task_file(tmp_path, 1)
    rows = [json.loads(line) for line in tasks.read_text().splitlines()]
    hostile = {**rows[0], "instance_id": "ctl\x1b]0;T"}
    tasks.write_text("".join(json.dumps(row) + "\n" for row in [*rows, hostile]))
    settings = [arg for override in scripted_overrides() for arg in ("--set", override)]
    batch = swe_aci(
        "batch", "--instances", tasks, "--env", "local", "--output-dir", "out", *settings,
        cwd=tmp_path,
    )  # fmt: skip
    assert batch.returncode == 0, batch.stderr
    assert "(ctl\\x1b]0;T)" in batch.stderr
    evaluate = swe_aci("evaluate", "gold", "--instances", tasks, "--env", "local", cwd=tmp_path)
    assert "(ctl\\x1b]0;T)" in evaluate.stderr
    config = swe_aci(
        "batch", "--instances", tasks, "--config", "c\x1b]0;X.yaml", "--output-dir", "o",
        cwd=tmp_path,
    )  # fmt: skip
    assert config.returncode == 2 and "Traceback" not in config.stderr
    assert config.stderr.splitlines()[-1] == "error: config file not found: c\\x1b]0;X.yaml"
    for result in (batch, evaluate, config):
        assert "\x1b" not in result.stdout + result.stderr


def test_a_deeply_nested_trajectory_is_one_line_and_the_rest_of_the_run_is_shown(
    tmp_path: Path,
) -> None:
    """One `.traj` nested 100,000 deep in a run: the inspector's run and summary pages and its
    export show the other instance and name the bad file; `stats`, `replay` and `traj-to-demo`
    end in one line (stats goes on with the rest), never a RecursionError."""
    from swe_aci.inspector.app import export, open_site

    run = tmp_path / "run"
    good = {
        "trajectory": [{"action": "submit", "observation": "diff", "thought": "t"}],
        "info": {"exit_status": "submitted", "submission": "diff --git a/x b/x\n"},
    }
    (run / "good").mkdir(parents=True)
    (run / "good" / "good.traj").write_text(json.dumps(good))
    (run / "deep").mkdir()
    deep = run / "deep" / "deep.traj"
    deep.write_text('{"trajectory": [{"action": "ls", "observation": ' + DEEP + "}]}")
    site = open_site([run])
    assert site.get("run/0/summary.html", {}).status == 200
    page = site.get("run/0/index.html", {})
    assert page.status == 200 and b"instance/good.html" in page.body
    assert b"nested too deeply" in page.body and b"unreadable" in page.body
    assert export(open_site([run], export=True), tmp_path / "export") >= 4
    assert (tmp_path / "export" / "run" / "0" / "instance" / "good.html").is_file()
    stats = swe_aci("stats", run, "--per-instance", cwd=tmp_path)
    assert stats.returncode == 0 and "Traceback" not in stats.stderr, stats.stderr
    assert "deep: trajectory" in stats.stdout and "nested too deeply" in stats.stdout
    assert "good" in stats.stdout
    demo = swe_aci("traj-to-demo", deep, tmp_path / "demo.traj", cwd=tmp_path)
    assert_one_line_error(demo, "is nested too deeply to read")
    generated_task_file(tmp_path, 1)
    replay = swe_aci("replay", deep, "--repo", "projects/p0", "--env", "local", cwd=tmp_path)
    assert_one_line_error(replay, "is nested too deeply to read")
