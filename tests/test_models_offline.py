"""Models that need no server: scripted, replay, human, the factory, pricing, retry policy."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from swe_aci.agent.parsing import THOUGHT_ACTION
from swe_aci.models import (
    AnthropicConfig,
    ContextWindowExceeded,
    HumanConfig,
    LocalConfig,
    ModelAPIError,
    ModelAuthError,
    ModelConfig,
    ModelConfigError,
    ModelReply,
    ModelStats,
    OpenAIConfig,
    Price,
    ReplayConfig,
    RetryConfig,
    ScriptedConfig,
)
from swe_aci.models.factory import make_model
from swe_aci.models.human import HumanModel
from swe_aci.models.pricing import Pricing
from swe_aci.models.replay import ReplayModel
from swe_aci.models.retry import RetryableError, classify_status, with_retries

CONVERSATION = [
    {"role": "system", "content": "s" * 40},
    {"role": "user", "content": "u" * 80, "cache_breakpoint": True},
]


def test_scripted_replies_in_order_with_estimated_usage() -> None:
    model = make_model(ScriptedConfig(script=["first", "second reply"]), THOUGHT_ACTION)
    first = model.query(CONVERSATION)
    assert (first.content, first.input_tokens, first.output_tokens) == ("first", 30, 2)
    assert model.query(CONVERSATION).content == "second reply"
    with pytest.raises(ModelAPIError, match="no more replies"):
        model.query(CONVERSATION)


def test_scripted_cost_comes_from_configured_price() -> None:
    config = ScriptedConfig(script=["x" * 400], prices={"scripted": Price(input=1e6, output=2e6)})
    reply = make_model(config, THOUGHT_ACTION).query(CONVERSATION)
    assert reply.cost == pytest.approx(30 * 1.0 + 100 * 2.0)


def test_stats_accumulate_replies() -> None:
    stats = ModelStats()
    stats.add(ModelReply("a", input_tokens=10, output_tokens=2, cost=0.5))
    stats.add(ModelReply("b", input_tokens=5, output_tokens=1, cost=0.25))
    assert stats.to_dict() == {
        "instance_cost": 0.75,
        "tokens_sent": 15,
        "tokens_received": 3,
        "api_calls": 2,
    }


PAPER_ERA_TRAJ = {
    "environment": "swe_main",
    "trajectory": [
        {
            "action": "ls -F\n",
            "observation": "setup.py\nsrc/\n",
            "response": "DISCUSSION\nLet's look around.\n```\nls -F\n```",
            "state": '{"open_file": "n/a", "working_dir": "/marshmallow-code__marshmallow"}\n',
            "thought": "DISCUSSION\nLet's look around.\n",
        },
        {
            "action": "open src/fields.py 1474\n",
            "observation": "[File: ...]",
            "state": '{"open_file": "n/a", "working_dir": "/marshmallow-code__marshmallow"}\n',
            "thought": "Open the serializer.",
        },
        {
            "action": "submit\n",
            "observation": None,
            "response": "Everything is fixed, submitting.",
            "state": {"open_file": "/src/fields.py", "working_dir": "/repo"},
            "thought": "Everything is fixed, submitting.",
            "execution_time": 0.2,
        },
    ],
    "history": [],
    "info": {"exit_status": "submitted", "submission": "\ndiff --git ..."},
}


def test_replay_of_paper_era_traj(tmp_path: Path) -> None:
    path = tmp_path / "marshmallow.traj"
    path.write_text(json.dumps(PAPER_ERA_TRAJ))
    model = make_model(ReplayConfig(replay_path=str(path)), THOUGHT_ACTION)
    replies = [model.query(CONVERSATION).content for _ in range(3)]
    assert replies == [
        "DISCUSSION\nLet's look around.\n```\nls -F\n```",
        "Open the serializer.\n```\nopen src/fields.py 1474\n```\n",
        # a function-calling era response holds no fenced action: rebuilt from thought + action
        "Everything is fixed, submitting.\n```\nsubmit\n```\n",
    ]
    with pytest.raises(ModelAPIError, match="replay model has no more replies"):
        model.query(CONVERSATION)


def test_replay_of_our_own_format(tmp_path: Path) -> None:
    path = tmp_path / "ours.traj.json"
    steps = [
        {"thought": "t", "action": "ls", "response": "t\n```\nls\n```\n", "observation": "a"},
        {"thought": "", "action": "submit", "response": "```\nsubmit\n```\n", "observation": ""},
    ]
    path.write_text(json.dumps({"trajectory": steps, "info": {"exit_status": "submitted"}}))
    model = ReplayModel(path, THOUGHT_ACTION)
    assert [model.query([]).content for _ in steps] == [step["response"] for step in steps]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (None, "not found"),
        ("not json {", "is not a JSON trajectory"),
        ('{"trajectory": []}', "has no steps"),
        ("[1, 2]", "has no steps"),
        ('{"trajectory": [{"observation": "x"}]}', "step 0 has neither"),
    ],
)
def test_replay_rejects_bad_files(tmp_path: Path, content: str | None, match: str) -> None:
    path = tmp_path / "bad.traj"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ModelConfigError, match=match):
        make_model(ReplayConfig(replay_path=str(path)), THOUGHT_ACTION)


def test_human_wraps_typed_action_and_shows_observation() -> None:
    typed = io.StringIO("ls -la\n.\nedit 1:2\n    x = 1\n\nend_of_edit\n```\nsubmit\n```\n")
    shown = io.StringIO()
    model = HumanModel(THOUGHT_ACTION, stdin=typed, stdout=shown)
    first = model.query([{"role": "user", "content": "OBSERVATION-TEXT"}])
    assert first.content.endswith("```\nls -la\n```\n")
    assert "OBSERVATION-TEXT" in shown.getvalue()
    edit = model.query([])
    assert edit.content.endswith("```\nedit 1:2\n    x = 1\n\nend_of_edit\n```\n")
    assert model.query([]).content == "```\nsubmit\n```"  # already fenced: taken as is
    with pytest.raises(ModelAPIError, match="human input ended"):
        model.query([])


def test_factory_names() -> None:
    assert make_model(HumanConfig(), THOUGHT_ACTION).name == "human"
    with pytest.raises(ModelConfigError, match="replay_path"):
        make_model(ReplayConfig(), THOUGHT_ACTION)
    with pytest.raises(ModelConfigError, match=r"model\.script"):
        make_model(ScriptedConfig(), THOUGHT_ACTION)


def test_text_models_refuse_a_parser_expecting_function_calls(tmp_path: Path) -> None:
    with pytest.raises(
        ModelConfigError, match=r"writes text replies.*agent\.parser=thought_action"
    ):
        make_model(HumanConfig(), None)
    path = tmp_path / "ours.traj"
    path.write_text(json.dumps(PAPER_ERA_TRAJ))
    with pytest.raises(ModelConfigError, match="writes text replies"):
        make_model(ReplayConfig(replay_path=str(path)), None)


SECTION = TypeAdapter(ModelConfig)


@pytest.mark.parametrize(
    ("name", "backend"),
    [
        ("replay", ReplayConfig),
        ("scripted", ScriptedConfig),
        ("human", HumanConfig),
        ("openai/gpt-4o", OpenAIConfig),
        ("anthropic/claude-sonnet-4-5", AnthropicConfig),
        ("local", LocalConfig),
        ("local/qwen2.5-coder-0.5b", LocalConfig),
    ],
)
def test_the_name_selects_the_backend_section(name: str, backend: type) -> None:
    assert type(SECTION.validate_python({"name": name})) is backend


@pytest.mark.parametrize(
    ("section", "key", "message"),
    [
        ({"name": "gpt-4"}, "name", "unknown model 'gpt-4': expected one of replay, scripted"),
        ({"name": "openai/"}, "name", "unknown model 'openai/'"),
        ({"name": "human/x"}, "name", "unknown model 'human/x'"),
        (
            {"name": "anthropic/claude", "grammar": "x"},
            "grammar",
            "not an option of model 'anthropic/claude' (it is one of openai, local models)",
        ),
        (
            {"name": "openai/gpt-4o", "local": {"ctx_size": 9}},
            "local",
            "not an option of model 'openai/gpt-4o' (it is one of local models)",
        ),
        ({"name": "scripted", "replay_path": "x"}, "replay_path", "(it is one of replay models)"),
        ({"name": "local", "base_url": "http://x"}, "base_url", "it is one of openai, anthropic"),
        ({"name": "human", "temperature": 0.5}, "temperature", "not an option of model 'human'"),
        ({"script": ["x"]}, "script", "not an option of model 'replay'"),  # replay by default
        ({"name": "replay", "typo": 1}, "typo", "not an option of model 'replay'"),
    ],
)
def test_an_option_of_another_backend_is_an_error_naming_the_key(
    section: dict[str, Any], key: str, message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        SECTION.validate_python(section)
    (error,) = caught.value.errors()
    assert error["loc"] == (key,)  # where the user wrote it, not under the union's tag
    assert message in error["msg"]


def test_nested_errors_keep_their_path() -> None:
    with pytest.raises(ValidationError) as caught:
        SECTION.validate_python({"name": "local", "local": {"ctx_size": 0}})
    assert caught.value.errors()[0]["loc"] == ("local", "ctx_size")
    with pytest.raises(ValidationError) as caught:
        SECTION.validate_python({"name": "openai/x", "retry": {"tries": 3}})
    assert [(e["type"], e["loc"]) for e in caught.value.errors()] == [
        ("extra_forbidden", ("retry", "tries"))
    ]
    with pytest.raises(ValidationError, match="expected a mapping with a model name"):
        SECTION.validate_python("openai/gpt-4o")
    with pytest.raises(ValidationError, match="does not select the openai backend"):
        OpenAIConfig(name="anthropic/claude")


def test_a_backend_keeps_its_own_defaults() -> None:
    local = SECTION.validate_python({"name": "local"})
    assert (local.max_output_tokens, local.timeout) == (4096, 1800.0)
    hosted = SECTION.validate_python({"name": "openai/gpt-4o"})
    assert (hosted.max_output_tokens, hosted.timeout) == (None, 120.0)


def test_pricing_lookup_and_overrides() -> None:
    pricing = Pricing({"my-model": Price(input=1.0, output=2.0)})
    assert pricing.lookup("openai/gpt-4o-2024-08-06") == pricing.lookup("gpt-4o")
    assert pricing.lookup("anthropic/my-model") == Price(input=1.0, output=2.0)
    assert pricing.cost("my-model", 1_000_000, 500_000) == pytest.approx(2.0)
    gpt4o = pricing.cost("openai/gpt-4o", 1_000_000, 0, cached_tokens=400_000)
    assert gpt4o == pytest.approx(0.6 * 2.5 + 0.4 * 1.25)


def test_unknown_price_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    pricing = Pricing()
    with caplog.at_level(logging.WARNING):
        assert pricing.cost("openai/unpriced-offline-model", 100, 10) == 0.0
        assert pricing.cost("openai/unpriced-offline-model", 100, 10) == 0.0
        assert pricing.cost("scripted", 100, 10, warn_unknown=False) == 0.0
    assert [record.getMessage() for record in caplog.records] == [
        "no price known for model 'openai/unpriced-offline-model': its cost counts as 0"
        " (set model.prices to fix)"
    ]


@pytest.mark.parametrize(
    ("status", "message", "code", "expected"),
    [
        (400, "anything", "context_length_exceeded", ContextWindowExceeded),
        (400, "This model's maximum context length is 8192 tokens.", None, ContextWindowExceeded),
        (400, "prompt is too long: 210000 tokens > 200000 maximum", None, ContextWindowExceeded),
        (400, "the request exceeds the available context size", None, ContextWindowExceeded),
        (400, "invalid value for temperature", None, ModelAPIError),
        (401, "invalid x-api-key", None, ModelAuthError),
        (403, "forbidden", None, ModelAuthError),
        (404, "model not found", None, ModelAPIError),
        (429, "rate limited", None, RetryableError),
        (500, "boom", None, RetryableError),
        (529, "overloaded", None, RetryableError),
    ],
)
def test_classify_status(status: int, message: str, code: str | None, expected: type) -> None:
    error = classify_status(status, message, code)
    assert type(error) is expected
    assert str(status) in str(error)


def test_retry_backoff_is_bounded_by_total_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("swe_aci.models.retry.random.random", lambda: 1.0)  # no jitter
    waits: list[float] = []
    calls = 0

    def failing() -> str:
        nonlocal calls
        calls += 1
        raise RetryableError("HTTP 503: busy")

    config = RetryConfig(max_attempts=10, initial_wait=1.0, max_wait=3.0, max_total_wait=6.0)
    with pytest.raises(ModelAPIError, match=r"gave up after 4 attempts and 6\.0s"):
        with_retries(failing, config, "test", sleep=waits.append)
    assert waits == [1.0, 2.0, 3.0]
    assert calls == 4


def test_retry_honours_retry_after_and_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("swe_aci.models.retry.random.random", lambda: 0.0)
    waits: list[float] = []
    outcomes: list[Exception | str] = [RetryableError("HTTP 429", retry_after=7.0), "ok"]

    def flaky() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    config = RetryConfig(initial_wait=1.0, max_wait=5.0)
    assert with_retries(flaky, config, "test", sleep=waits.append) == "ok"
    assert waits == [5.0]  # Retry-After honoured, capped by max_wait


def test_importing_the_package_loads_no_sdk() -> None:
    code = (
        "import sys, swe_aci, swe_aci.models, swe_aci.models.factory;"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'anthropic', 'httpx',"
        " 'httpx2'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
