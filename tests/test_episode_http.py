"""Whole `swe-aci run` episodes against a fake OpenAI-compatible server speaking real HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fake_model_server import FakeModelServer, FakeResponse, openai_completion, openai_error
from test_cli import assert_one_line_error, cli

NEW_FILES_ONLY = 4  # the episodes create fixed.py, which nothing imports: `run` exits 4

pytest_plugins = ["fake_model_server"]

CREATE = "DISCUSSION\nI will add a module.\n```\ncreate fixed.py\n```"
EDIT = "DISCUSSION\nWrite it.\n```\nedit 1:1\nVALUE = 2\nend_of_edit\n```"
SUBMIT = "DISCUSSION\nDone.\n```\nsubmit\n```"


def run_against(
    server: FakeModelServer, repo: Path, out: Path, *settings: str
) -> tuple[Any, dict[str, Any]]:
    result = cli(
        "run", "--repo", repo, "--issue", "Add fixed.py holding VALUE = 2.",
        "--model", "openai/fake-model", "--env", "local", "--instance-id", "one",
        "--output-dir", out,
        "--set", f"model.base_url={server.openai_url}", "--set", "model.api_key=test-key",
        "--set", "model.retry={max_attempts: 2, initial_wait: 0.001, max_total_wait: 1}",
        "--set", "model.prices={fake-model: {input: 1000.0, output: 1000.0}}",
        "--set", "agent.demonstrations=[]", *(item for s in settings for item in ("--set", s)),
    )  # fmt: skip
    trajectory_path = out / "one" / "one.traj"
    trajectory = json.loads(trajectory_path.read_text()) if trajectory_path.exists() else {}
    return result, trajectory


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"README.md": "demo\n"})


def replies(*contents: str, prompt_tokens: int = 100) -> list[FakeResponse]:
    return [openai_completion(text, prompt_tokens=prompt_tokens) for text in contents]


def test_a_normal_episode_with_usage_and_cost(
    fake_server: FakeModelServer, repo: Path, tmp_path: Path
) -> None:
    fake_server.push(*replies(CREATE, EDIT, SUBMIT))
    result, trajectory = run_against(fake_server, repo, tmp_path)
    assert result.exit_code == NEW_FILES_ONLY, result.output
    info = trajectory["info"]
    assert info["exit_status"] == "submitted" and "+VALUE = 2" in info["submission"]
    assert info["model_stats"] == {
        "instance_cost": pytest.approx(3 * (100 + 20) * 1000 / 1e6),
        "tokens_sent": 300,
        "tokens_received": 60,
        "api_calls": 3,
    }
    assert "exit status: submitted" in result.stdout and "$0.3600" in result.stdout
    assert len(fake_server.requests) == 3


def test_server_errors_until_retries_run_out_autosubmit(
    fake_server: FakeModelServer, repo: Path, tmp_path: Path
) -> None:
    failure = openai_error(500, "The server had an error", type_="server_error")
    fake_server.push(*replies(CREATE, EDIT), failure, failure)
    result, trajectory = run_against(fake_server, repo, tmp_path)
    assert result.exit_code == NEW_FILES_ONLY, result.output
    assert trajectory["info"]["exit_status"] == "submitted (exit_api)"
    assert "+VALUE = 2" in (tmp_path / "one" / "one.patch").read_text()
    assert len(fake_server.requests) == 4  # two replies, then two attempts of the third call


def test_a_bad_key_is_one_clear_line_and_no_retry(
    fake_server: FakeModelServer, repo: Path, tmp_path: Path
) -> None:
    fake_server.push(openai_error(401, "Incorrect API key provided", type_="authentication_error"))
    result, _ = run_against(fake_server, repo, tmp_path)
    assert_one_line_error(result, "401")
    assert len(fake_server.requests) == 1


def test_a_context_length_error_ends_with_exit_context(
    fake_server: FakeModelServer, repo: Path, tmp_path: Path
) -> None:
    overflow = openai_error(
        400, "This model's maximum context length is 8192 tokens.", code="context_length_exceeded"
    )
    fake_server.push(*replies(CREATE, EDIT), overflow)
    result, trajectory = run_against(fake_server, repo, tmp_path)
    assert result.exit_code == NEW_FILES_ONLY, result.output
    assert trajectory["info"]["exit_status"] == "submitted (exit_context)"


def test_the_cost_limit_crossing_mid_episode(
    fake_server: FakeModelServer, repo: Path, tmp_path: Path
) -> None:
    # each call costs (1000 + 20) * 1000 / 1e6 = 1.02 USD; the limit is crossed by the third
    fake_server.push(*replies(CREATE, EDIT, SUBMIT, prompt_tokens=1000))
    result, trajectory = run_against(
        fake_server, repo, tmp_path, "agent.limits.per_instance_cost=2.5"
    )
    assert result.exit_code == NEW_FILES_ONLY, result.output
    assert trajectory["info"]["exit_status"] == "submitted (exit_cost)"
    assert trajectory["info"]["model_stats"]["api_calls"] == 3
    assert [step["action"].split("\n")[0] for step in trajectory["trajectory"]] == [
        "create fixed.py",
        "edit 1:1",
        "exit_cost",
    ]


def test_a_slow_reply_cannot_overrun_the_wall_time(
    fake_server: FakeModelServer, repo: Path, tmp_path: Path
) -> None:
    """The model call gets the wall time left as its timeout: a reply that takes 30 s ends a
    2-second episode at its time limit (the request's own timeout is 120 s)."""
    slow = openai_completion(EDIT)
    slow.delay = 30.0
    fake_server.push(*replies(CREATE), slow)
    started = time.monotonic()
    result, trajectory = run_against(
        fake_server, repo, tmp_path, "agent.limits.wall_time=2", "model.timeout=120"
    )
    elapsed = time.monotonic() - started
    assert trajectory["info"]["exit_status"] == "submitted (exit_time_limit)", result.output
    assert trajectory["info"]["elapsed_time"] < 3  # the episode: 2 s and the autosubmission
    assert elapsed < 20  # the command, far below the 30 s the reply would take
    assert len(fake_server.requests) == 2  # no retry past the deadline
    assert "the episode ended on the time limit (exit_time_limit)" in result.stdout


def test_a_slow_reply_cannot_overrun_the_pipelines_time_budget(
    fake_server: FakeModelServer, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """The pipeline's model calls get the budget's time left as their timeout: a repair reply
    that takes 30 s ends a 6-second pipeline on its time limit, with no candidate and no patch
    (6 s, not less: on a loaded machine a shorter budget ends before the first model call)."""
    budget = 6
    repo = make_repo({"calc.py": "def add(a, b):\n    return a - b\n"})
    slow = openai_completion("```python\ndef add(a, b):\n    return a + b\n```")
    slow.delay = 30.0
    fake_server.push(slow)
    started = time.monotonic()
    result = cli(
        "run", "--repo", repo, "--issue", "add(1, 2) returns -1 instead of 3.",
        "--config", "pipeline", "--model", "openai/fake-model", "--env", "local",
        "--instance-id", "one", "--output-dir", tmp_path,
        "--set", f"model.base_url={fake_server.openai_url}", "--set", "model.api_key=test-key",
        "--set", "model.timeout=120", "--set", f"strategy.time_budget={budget}",
        "--set", "strategy.repair.templates=0",  # `a - b` -> `a + b` is a template: no model
    )  # fmt: skip
    elapsed = time.monotonic() - started
    trajectory = json.loads((tmp_path / "one" / "one.traj").read_text())
    assert trajectory["info"]["exit_status"].endswith("exit_time_limit"), result.output
    assert trajectory["info"]["submission"] == ""
    assert elapsed < 20  # far below the 30 s the reply would take
    assert len(fake_server.requests) == 1  # no retry past the deadline
    repair_latency = [step["model_latency"] for step in trajectory["trajectory"]]
    assert max(repair_latency) <= budget + 1, repair_latency
