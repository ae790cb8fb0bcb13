"""The RAG baseline as `strategy.type: rag`: scripted replies become predictions (or empty ones
with the outcome recorded in the one step of the trajectory), through `run_episode`, `swe-aci
batch` (with --evaluate, resumed after a kill) and its `swe-aci rag` alias; the run opens in the
inspector. Slow tests go through the recipe builder and the evaluation harness."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batch_helpers import GOLD_PATCH, generated_task_file
from conftest import commit_tree
from env_helpers import BACKENDS, DOCKER_IMAGE, skip_unavailable
from fake_model_server import FakeModelServer, openai_completion, openai_error
from inspector_helpers import request, serving
from swe_aci.cli import app
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.episode import EpisodeConfig, load_config, run_episode
from swe_aci.models.base import ModelConfigError
from swe_aci.tasks import Task, load_tasks
from swe_aci.trajectory.result import EpisodeResult
from swe_aci.trajectory.store import load_trajectory

pytest_plugins = ["fake_model_server"]
SRC = str(Path(__file__).resolve().parents[1] / "src")

BUGGY = "def greet(name):\n    return 'Hello ' + nam\n"
FIX = (
    "--- a/pkg/greet.py\n+++ b/pkg/greet.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
    "-    return 'Hello ' + nam\n+    return 'Hello ' + name\n"
)
ISSUE = "greet raises NameError: name 'nam' is not defined"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWE_ACI_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def greet_tasks(make_repo: Callable[..., Path], tmp_path: Path) -> Path:
    repo = make_repo({"pkg/greet.py": BUGGY, "pkg/colors.py": "RED = 1\n", "README.md": "hi\n"})
    rows = [
        {
            "instance_id": f"greet-{number}",
            "repo": "me/greet",
            "problem_statement": ISSUE,
            "patch": FIX,
            "environment": {"source": {"path": str(repo)}},
        }
        for number in (1, 2)
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(rows))
    return path


def config_with(*replies: str, extra: tuple[str, ...] = ()) -> EpisodeConfig:
    script = json.dumps(list(replies))
    return load_config(
        "baselines/rag",
        ["model.name=scripted", f"model.script={script}", "env.backend=local", *extra],
    )


def run_rag(config: EpisodeConfig, task: Task, out: Path, **extra: object) -> EpisodeResult:
    """One episode of the task's repository (at its source, without building the recipe's
    virtualenv, which these tests do not need; the slow tests build it)."""
    assert task.environment is not None and task.environment.source.path is not None
    return run_episode(
        config,
        Workspace(config.env, task.environment.source.path),
        task.problem_statement,
        instance_id=task.instance_id,
        output_dir=out,
        gold_patch=task.patch,
        **extra,
    )


def the_step(out: Path, instance_id: str) -> dict:
    trajectory = load_trajectory(out / instance_id / f"{instance_id}.traj")
    assert len(trajectory["trajectory"]) == 1
    return trajectory["trajectory"][0]


def prediction(out: Path, instance_id: str) -> dict:
    return json.loads((out / instance_id / f"{instance_id}.pred").read_text())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_valid_diff_becomes_a_prediction_and_no_diff_an_empty_one(
    greet_tasks: Path, tmp_path: Path, backend: str
) -> None:
    skip_unavailable(backend)
    tasks = load_tasks(greet_tasks).tasks
    sandbox = (f"env.backend={backend}", f"env.image={DOCKER_IMAGE}")
    out = tmp_path / "out"
    seen: list[str] = []
    replies = (f"Here it is.\n```diff\n{FIX}```", "I cannot tell.")
    results = [
        run_rag(
            config_with(reply, extra=sandbox),
            task,
            out,
            on_step=lambda s: seen.append(s.observation),
        )
        for reply, task in zip(replies, tasks, strict=True)
    ]
    assert seen == ["applied", "no_diff: the reply holds no unified diff"]
    assert [result.exit_status for result in results] == ["submitted", "exit_format"]
    assert results[0].steps == 1
    first = prediction(out, "greet-1")
    assert (first["instance_id"], first["model_name_or_path"]) == ("greet-1", "scripted")
    assert "+    return 'Hello ' + name\n" in first["model_patch"]
    assert prediction(out, "greet-2")["model_patch"] == ""
    step = the_step(out, "greet-1")
    details = step["pipeline"]
    assert details["status"] == "applied" and details["apply_method"] == "git apply"
    assert details["retrieved"][0]["path"] == "pkg/greet.py"
    assert details["included"][:2] == ["README.md", "pkg/greet.py"]  # the README comes first
    assert 0 < details["prompt_tokens"] <= 27000
    assert step["input_tokens"] > 0 and step["state"] == {"stage": "rag"}
    assert [message["role"] for message in step["query"]] == ["system", "user"]
    assert ISSUE in step["query"][1]["content"]
    assert step["response"].startswith("Here it is.")
    empty = the_step(out, "greet-2")["pipeline"]
    assert (empty["status"], empty["reason"]) == ("no_diff", "the reply holds no unified diff")


def test_oracle_shows_the_gold_files_and_a_bad_diff_is_recorded(
    greet_tasks: Path, tmp_path: Path
) -> None:
    task = load_tasks(greet_tasks).tasks[0]
    bad = "<patch>\n--- a/pkg/greet.py\n+++ b/pkg/greet.py\n@@ -1 +1 @@\n-nothing\n+x\n</patch>"
    out = tmp_path / "out"
    result = run_rag(config_with(bad, extra=("strategy.retrieval=oracle",)), task, out)
    assert result.submission == "" and prediction(out, "greet-1")["model_patch"] == ""
    details = the_step(out, "greet-1")["pipeline"]
    assert details["included"] == ["README.md", "pkg/greet.py"]
    assert details["status"] == "patch_failed"
    assert details["reason"].startswith("git apply failed: ")


def test_oracle_without_a_gold_patch_is_recorded(greet_tasks: Path, tmp_path: Path) -> None:
    task = load_tasks(greet_tasks).tasks[0].model_copy(update={"patch": None})
    config = config_with("unused", extra=("strategy.retrieval=oracle",))
    result = run_rag(config, task, tmp_path / "out")
    assert result.exit_status == "exit_error"
    assert result.error == "oracle retrieval needs the row's gold patch"
    assert the_step(tmp_path / "out", "greet-1")["pipeline"]["status"] == "no_gold_patch"


def test_one_query_over_http_and_a_failing_api_recorded(
    greet_tasks: Path, tmp_path: Path, fake_server: FakeModelServer
) -> None:
    fake_server.push(openai_completion(f"<patch>\n{FIX}</patch>", prompt_tokens=900))
    fake_server.push(*[openai_error(500, "overloaded", type_="server_error")] * 2)
    settings = [
        "model.name=openai/fake-model",
        f"model.base_url={fake_server.openai_url}",
        "model.api_key=test-key",
        "model.retry.max_attempts=2",
        "model.retry.initial_wait=0.001",
        "model.retry.max_wait=0.01",
        "env.backend=local",
    ]
    config = load_config("baselines/rag", settings)
    out = tmp_path / "out"
    answered, failed = (run_rag(config, task, out) for task in load_tasks(greet_tasks).tasks)
    sent = fake_server.requests[0].body["messages"]
    assert [message["role"] for message in sent] == ["system", "user"]
    assert ISSUE in sent[1]["content"]
    assert "[start of pkg/greet.py]" in sent[1]["content"]
    step = the_step(out, "greet-1")
    assert (step["pipeline"]["status"], step["input_tokens"]) == ("applied", 900)
    assert step["cost"] == 0.0  # fake-model has no price
    assert answered.exit_status == "submitted"
    assert failed.exit_status == "exit_api" and failed.submission == ""
    assert the_step(out, "greet-2")["pipeline"]["status"] == "model_error"


def test_models_that_write_agent_replies_are_refused(greet_tasks: Path, tmp_path: Path) -> None:
    config = load_config(
        "baselines/rag", ["model.name=replay", "model.replay_path=run.traj", "env.backend=local"]
    )
    task = load_tasks(greet_tasks).tasks[0]
    with pytest.raises(ModelConfigError, match="model 'replay' cannot answer the RAG prompt"):
        run_rag(config, task, tmp_path / "out")


def cli(*arguments: str) -> object:
    return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, list(arguments))


@pytest.mark.parametrize(
    ("arguments", "message", "code"),
    [
        (["--instances", "nope.json"], "task file not found: nope.json", 2),
        (["--retrieval", "dense"], "retrieval", 2),
        (["--context-tokens", "0"], "context_tokens", 2),
        (["--set", "model.script=[]"], "model 'scripted' needs model.script", 1),  # the batch's
    ],
)
def test_user_errors_of_the_alias_are_one_line(
    arguments: list[str], message: str, code: int, tmp_path: Path
) -> None:
    commit_tree(tmp_path / "repo", {"a.py": "x = 1\n"})
    rows = tmp_path / "tasks.json"
    row = {"instance_id": "a", "repo": "x/y", "problem_statement": "p"}
    rows.write_text(json.dumps([{**row, "environment": {"source": {"path": "repo"}}}]))
    base = ["--instances", str(rows), "--model", "scripted", "--output-dir", str(tmp_path / "o")]
    result = cli("rag", *base, "--set", "model.script=[x]", *arguments)
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def rag_batch(task_file: Path, out: Path, *extra: str, replies: list[str]) -> list[str]:
    arguments = ["batch", "--config", "baselines/rag", "--instances", str(task_file)]
    arguments += ["--model", "scripted", "--env", "local", "--output-dir", str(out)]
    arguments += ["--cache-dir", str(task_file.parent / "cache")]
    return [*arguments, "--set", f"model.script={json.dumps(replies)}", *extra]


def test_batch_runs_the_rag_config_grades_it_and_the_inspector_opens_it(tmp_path: Path) -> None:
    test_cmd = f"{sys.executable} -m pytest -rA -p no:cacheprovider"
    task_file = generated_task_file(tmp_path, 2, test_cmd=test_cmd)
    out = tmp_path / "out"
    replies = [f"<patch>\n{GOLD_PATCH}</patch>"]  # each episode's model starts the script
    result = cli(*rag_batch(task_file, out, "--evaluate", "--workers", "2", replies=replies))
    assert result.exit_code == 0, result.output
    preds = json.loads((out / "preds.json").read_text())
    assert all("a + b" in prediction["model_patch"] for prediction in preds.values())
    report = json.loads((out / "evaluation" / "report.json").read_text())
    assert report["resolved_ids"] == ["demo__calc-0", "demo__calc-1"]
    with serving([out]) as address:
        status, _, page = request(address, "/run/0/instance/demo__calc-0.html")
    assert status == 200
    assert "rag bm25" in page.decode("utf-8")


@pytest.mark.slow
def test_a_killed_rag_batch_resumes(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 8)
    out = tmp_path / "out"
    arguments = rag_batch(task_file, out, replies=[f"<patch>\n{GOLD_PATCH}</patch>"])

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "swe_aci", *arguments],
            env={**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )

    process = start()
    deadline = time.monotonic() + 120
    while not (out / "results.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = set(json.loads((out / "results.json").read_text()))
    assert finished and len(finished) < 8
    process = start()
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output
    log = (out / "batch.log").read_text()
    for instance_id in finished:  # resumed: what had finished is not run again
        assert log.count(f"{instance_id}: started") == 1, log
    preds = json.loads((out / "preds.json").read_text())
    assert sorted(preds) == [f"demo__calc-{n}" for n in range(8)]
    assert all("a + b" in prediction["model_patch"] for prediction in preds.values())


@pytest.mark.slow
def test_the_alias_builds_the_environment_and_writes_predictions(
    greet_tasks: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    arguments = ["--instances", str(greet_tasks), "--model", "scripted", "--env", "local"]
    arguments += ["--output-dir", str(out), "--context-tokens", "13000", "--filter", "greet-1"]
    script = json.dumps([f"<patch>\n{FIX}</patch>"])
    result = cli("rag", *arguments, "--set", f"model.script={script}")
    assert result.exit_code == 0, result.output
    assert "greet-1: submitted" in result.output
    preds = json.loads((out / "preds.json").read_text())
    assert "+    return 'Hello ' + name" in preds["greet-1"]["model_patch"]
    trajectory = load_trajectory(out / "greet-1" / "greet-1.traj")
    assert trajectory["config"]["strategy"]["context_tokens"] == 13000


@pytest.mark.slow
def test_a_rag_prediction_resolves_a_humanevalfix_task(tmp_path: Path) -> None:
    """Task file -> RAG prediction -> evaluation harness: pass@1 of one task with its gold fix."""
    from swe_aci.evaluate.harness import evaluate_instance
    from swe_aci.evaluate.options import GradingOptions
    from swe_aci.tasks.humaneval import humanevalfix_task, write_tasks
    from test_humaneval import FIX_ROWS

    task_file = write_tasks([humanevalfix_task(FIX_ROWS[0])], tmp_path / "tasks")
    task = load_tasks(task_file).tasks[0]
    config = config_with(f"<patch>\n{task.patch}</patch>")
    out = tmp_path / "out"
    from swe_aci.recipes import task_workspace

    result = run_episode(
        config,
        task_workspace(task, config.env),
        task.problem_statement,
        instance_id=task.instance_id,
        output_dir=out,
    )
    patch = result.submission
    details = the_step(out, task.instance_id)["pipeline"]
    assert details["included"] == ["solution.py"]  # the test file is never retrieved
    report = evaluate_instance(
        task, patch, EnvConfig(backend="local"), tmp_path / "eval", GradingOptions(60)
    )
    assert report.outcome == "resolved", report.message
    unfixed = evaluate_instance(
        task, "", EnvConfig(backend="local"), tmp_path / "eval0", GradingOptions(60)
    )
    assert unfixed.outcome != "resolved"


@pytest.mark.slow
def test_a_rag_batch_on_ray(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    task_file = generated_task_file(tmp_path, 2)
    out = tmp_path / "out"
    arguments = rag_batch(task_file, out, replies=[f"<patch>\n{GOLD_PATCH}</patch>"])
    result = subprocess.run(
        [sys.executable, "-m", "swe_aci", *arguments, "--executor", "ray", "--workers", "2"],
        env={**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    preds = json.loads((out / "preds.json").read_text())
    assert sorted(preds) == ["demo__calc-0", "demo__calc-1"]
    assert all("a + b" in prediction["model_patch"] for prediction in preds.values())
    assert the_step(out, "demo__calc-0")["pipeline"]["status"] == "applied"


def test_compare_runs_the_rag_config_beside_the_agent(tmp_path: Path) -> None:
    test_cmd = f"{sys.executable} -m pytest -rA -p no:cacheprovider"
    task_file = generated_task_file(tmp_path, 1, test_cmd=test_cmd)
    out = tmp_path / "cmp"
    script = json.dumps([f"<patch>\n{GOLD_PATCH}</patch>"])
    result = cli(
        "compare", "--configs", "default,baselines/rag", "--instances", str(task_file),
        "--env", "local", "--model", "scripted", "--set", f"model.script={script}",
        "--output-dir", str(out), "--cache-dir", str(tmp_path / "cache"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    configs = json.loads((out / "comparison.json").read_text())["configs"]
    assert [config["resolved"] for config in configs] == [0, 1]
