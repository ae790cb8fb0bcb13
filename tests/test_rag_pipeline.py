"""The RAG baseline over task files: scripted replies become predictions (or empty ones with a
recorded reason); slow tests go through the recipe builder and the evaluation harness."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from conftest import commit_tree
from env_helpers import BACKENDS, DOCKER_IMAGE, skip_unavailable
from fake_model_server import FakeModelServer, openai_completion, openai_error
from swe_aci.cli.rag import rag_command
from swe_aci.env.base import Environment
from swe_aci.env.config import EnvConfig
from swe_aci.env.factory import make_environment
from swe_aci.models.base import ModelConfigError
from swe_aci.rag.config import RagConfig, load_rag_config
from swe_aci.rag.run import make_rag_model, run_rag
from swe_aci.records import predictions_json
from swe_aci.tasks import Task, load_tasks

pytest_plugins = ["fake_model_server"]

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


def repository_at_source(task: Task, env_config: EnvConfig) -> Environment:
    """The task's git repository in a local sandbox, without building the recipe's virtualenv
    (which these tests do not need); the slow tests build it."""
    assert task.environment is not None and task.environment.source.path is not None
    return make_environment(env_config, task.environment.source.path)


def config_with(*replies: str, extra: tuple[str, ...] = ()) -> RagConfig:
    script = json.dumps(list(replies))
    return load_rag_config(
        None, ["model.name=scripted", f"model.script={script}", "env.backend=local", *extra]
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_valid_diff_becomes_a_prediction_and_no_diff_an_empty_one(
    greet_tasks: Path, tmp_path: Path, backend: str
) -> None:
    skip_unavailable(backend)
    tasks = load_tasks(greet_tasks).tasks
    sandbox = (f"env.backend={backend}", f"env.image={DOCKER_IMAGE}")
    config = config_with(f"Here it is.\n```diff\n{FIX}```", "I cannot tell.", extra=sandbox)
    out = tmp_path / "out"
    seen: list[str] = []
    predictions = run_rag(
        tasks,
        config,
        make_rag_model(config),
        out,
        open_env=repository_at_source,
        on_record=lambda record: seen.append(record.status),
    )
    assert seen == ["applied", "no_diff"]
    assert json.loads((out / "preds.json").read_text()) == predictions_json(predictions)
    assert predictions["greet-1"].instance_id == "greet-1"
    assert predictions["greet-1"].model_name_or_path == "scripted__rag-bm25-27000"
    assert "+    return 'Hello ' + name\n" in predictions["greet-1"].model_patch
    assert predictions["greet-2"].model_patch == ""
    record = json.loads((out / "records" / "greet-1.json").read_text())
    assert record["status"] == "applied"
    assert record["apply_method"] == "git apply"
    assert record["retrieved"][0]["path"] == "pkg/greet.py"
    assert record["included"][:2] == ["README.md", "pkg/greet.py"]  # the README comes first
    assert 0 < record["prompt_tokens"] <= 27000
    assert record["input_tokens"] > 0
    assert ISSUE in record["messages"][1]["content"]
    empty = json.loads((out / "records" / "greet-2.json").read_text())
    assert (empty["status"], empty["reason"]) == ("no_diff", "the reply holds no unified diff")


def test_oracle_shows_the_gold_files_and_a_bad_diff_is_recorded(
    greet_tasks: Path, tmp_path: Path
) -> None:
    tasks = load_tasks(greet_tasks).tasks[:1]
    bad = "<patch>\n--- a/pkg/greet.py\n+++ b/pkg/greet.py\n@@ -1 +1 @@\n-nothing\n+x\n</patch>"
    config = config_with(bad, extra=("retrieval=oracle",))
    out = tmp_path / "out"
    model = make_rag_model(config)
    predictions = run_rag(tasks, config, model, out, open_env=repository_at_source)
    assert predictions["greet-1"].model_patch == ""
    assert predictions["greet-1"].model_name_or_path == "scripted__rag-oracle"
    record = json.loads((out / "records" / "greet-1.json").read_text())
    assert record["included"] == ["README.md", "pkg/greet.py"]
    assert record["status"] == "patch_failed"
    assert record["reason"].startswith("git apply --check failed: ")


def test_oracle_without_a_gold_patch_is_recorded(greet_tasks: Path, tmp_path: Path) -> None:
    task = load_tasks(greet_tasks).tasks[0].model_copy(update={"patch": None})
    config = config_with("unused", extra=("retrieval=oracle",))
    model = make_rag_model(config)
    run_rag([task], config, model, tmp_path / "out", open_env=repository_at_source)
    record = json.loads((tmp_path / "out" / "records" / "greet-1.json").read_text())
    assert record["status"] == "no_gold_patch"


def test_an_environment_that_cannot_be_built_is_recorded(tmp_path: Path) -> None:
    rows = tmp_path / "tasks.json"
    row = {"instance_id": "gone", "repo": "x/y", "problem_statement": "p"}
    rows.write_text(json.dumps([{**row, "environment": {"source": {"path": "missing"}}}]))
    config = config_with("unused")
    model = make_rag_model(config)
    predictions = run_rag(load_tasks(rows).tasks, config, model, tmp_path / "out")
    assert predictions["gone"].model_patch == ""
    record = json.loads((tmp_path / "out" / "records" / "gone.json").read_text())
    assert record["status"] == "environment_error"


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
    config = load_rag_config(None, settings)
    out = tmp_path / "out"
    tasks = load_tasks(greet_tasks).tasks
    run_rag(tasks, config, make_rag_model(config), out, open_env=repository_at_source)
    sent = fake_server.requests[0].body["messages"]
    assert [message["role"] for message in sent] == ["system", "user"]
    assert ISSUE in sent[1]["content"]
    assert "[start of pkg/greet.py]" in sent[1]["content"]
    answered = json.loads((out / "records" / "greet-1.json").read_text())
    assert (answered["status"], answered["input_tokens"]) == ("applied", 900)
    assert answered["cost"] == 0.0  # fake-model has no price
    failed = json.loads((out / "records" / "greet-2.json").read_text())
    assert failed["status"] == "model_error"
    assert json.loads((out / "preds.json").read_text())["greet-2"]["model_patch"] == ""


def test_models_that_write_agent_replies_are_refused() -> None:
    config = load_rag_config(None, ["model.name=replay", "model.replay_path=run.traj"])
    with pytest.raises(ModelConfigError, match="model 'replay' cannot answer the RAG prompt"):
        make_rag_model(config)


def command() -> typer.Typer:
    app = typer.Typer()
    app.command("rag")(rag_command)
    return app


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--instances", "nope.json"], "task file not found: nope.json"),
        (["--retrieval", "dense"], "retrieval"),
        (["--context-tokens", "0"], "context_tokens"),
        (["--set", "model.script=[]"], "model 'scripted' needs model.script"),
        (["--filter", "nothing-matches"], "no tasks to run"),
    ],
)
def test_user_errors_are_one_line(arguments: list[str], message: str, tmp_path: Path) -> None:
    commit_tree(tmp_path / "repo", {"a.py": "x = 1\n"})
    rows = tmp_path / "tasks.json"
    row = {"instance_id": "a", "repo": "x/y", "problem_statement": "p"}
    rows.write_text(json.dumps([{**row, "environment": {"source": {"path": "repo"}}}]))
    base = ["--instances", str(rows), "--model", "scripted", "--output-dir", str(tmp_path / "o")]
    result = CliRunner().invoke(command(), [*base, "--set", "model.script=[x]", *arguments])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_the_command_builds_the_environment_and_writes_predictions(
    greet_tasks: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    arguments = ["--instances", str(greet_tasks), "--model", "scripted", "--env", "local"]
    arguments += ["--output-dir", str(out), "--context-tokens", "13000", "--filter", "greet-1"]
    script = json.dumps([f"<patch>\n{FIX}</patch>"])
    result = CliRunner().invoke(command(), [*arguments, "--set", f"model.script={script}"])
    assert result.exit_code == 0, result.output
    assert "greet-1: applied" in result.output
    assert "1 of 1 predictions hold a patch that applies (cost $0.0000)" in result.output
    preds = json.loads((out / "preds.json").read_text())
    assert preds["greet-1"]["model_name_or_path"] == "scripted__rag-bm25-13000"
    assert "+    return 'Hello ' + name" in preds["greet-1"]["model_patch"]


@pytest.mark.slow
def test_a_rag_prediction_resolves_a_humanevalfix_task(tmp_path: Path) -> None:
    """Task file -> RAG prediction -> evaluation harness: pass@1 of one task with its gold fix."""
    from swe_aci.evaluate.harness import evaluate_instance
    from swe_aci.tasks.humaneval import humanevalfix_task, write_tasks
    from test_humaneval import FIX_ROWS

    task_file = write_tasks([humanevalfix_task(FIX_ROWS[0])], tmp_path / "tasks")
    task = load_tasks(task_file).tasks[0]
    config = config_with(f"<patch>\n{task.patch}</patch>")
    predictions = run_rag([task], config, make_rag_model(config), tmp_path / "out")
    patch = predictions[task.instance_id].model_patch
    record = json.loads((tmp_path / "out" / "records" / f"{task.instance_id}.json").read_text())
    assert record["included"] == ["solution.py"]  # the test file is never retrieved
    report = evaluate_instance(task, patch, EnvConfig(backend="local"), tmp_path / "eval", 60)
    assert report.outcome == "resolved", report.message
    unfixed = evaluate_instance(task, "", EnvConfig(backend="local"), tmp_path / "eval0", 60)
    assert unfixed.outcome != "resolved"
