"""The openai/<model> backend against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from fake_model_server import FakeModelServer, FakeResponse, openai_completion, openai_error
from swe_aci.agent.parsing import THOUGHT_ACTION
from swe_aci.models import (
    ContextWindowExceeded,
    ModelAPIError,
    ModelAuthError,
    ModelConfigError,
    OpenAIConfig,
    Price,
    RetryConfig,
    ToolCall,
    ToolSpec,
)
from swe_aci.models.factory import make_model
from swe_aci.models.tools import RAW_ARGUMENTS_KEY, assistant_message

pytest_plugins = ["fake_model_server"]

FAST_RETRY = RetryConfig(max_attempts=3, initial_wait=0.001, max_wait=0.01, max_total_wait=1.0)
MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant.", "cache_breakpoint": True},
    {"role": "user", "content": "Fix the bug."},
]
EDIT_TOOL = ToolSpec(
    name="edit",
    description="Replace lines of the open file.",
    parameters={
        "type": "object",
        "properties": {"start": {"type": "integer"}, "text": {"type": "string"}},
        "required": ["start", "text"],
    },
)


def config_for(server: FakeModelServer, **overrides: Any) -> OpenAIConfig:
    settings: dict[str, Any] = {
        "name": "openai/fake-model",
        "base_url": server.openai_url,
        "api_key": "test-key",
        "timeout": 5.0,
        "retry": FAST_RETRY,
    }
    return OpenAIConfig(**(settings | overrides))


def test_reply_with_usage_and_cost(fake_server: FakeModelServer) -> None:
    fake_server.push(
        openai_completion(
            "DISCUSSION\nok\n```\nls\n```",
            prompt_tokens=1000,
            completion_tokens=100,
            cached_tokens=200,
        )
    )
    prices = {"fake-model": Price(input=1.0, output=2.0, cached_input=0.5)}
    reply = make_model(config_for(fake_server, prices=prices), THOUGHT_ACTION).query(MESSAGES)
    assert reply.content == "DISCUSSION\nok\n```\nls\n```"
    assert (reply.input_tokens, reply.output_tokens, reply.cached_tokens) == (1000, 100, 200)
    assert reply.cost == pytest.approx((800 * 1.0 + 200 * 0.5 + 100 * 2.0) / 1e6)
    [request] = fake_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.body["model"] == "fake-model"
    assert request.body["messages"] == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Fix the bug."},
    ]


def test_rate_limit_then_success(fake_server: FakeModelServer) -> None:
    limited = openai_error(429, "Rate limit reached", type_="rate_limit_exceeded")
    limited.headers["retry-after"] = "0"
    fake_server.push(limited, openai_completion("done"))
    assert make_model(config_for(fake_server), THOUGHT_ACTION).query(MESSAGES).content == "done"
    assert len(fake_server.requests) == 2


def test_server_errors_until_retries_run_out(fake_server: FakeModelServer) -> None:
    fake_server.push(*[openai_error(500, "internal error", type_="server_error")] * 3)
    with pytest.raises(ModelAPIError, match=r"HTTP 500.*gave up after 3 attempts") as caught:
        make_model(config_for(fake_server), THOUGHT_ACTION).query(MESSAGES)
    assert not isinstance(caught.value, ModelAuthError)
    assert len(fake_server.requests) == 3


def test_auth_error_is_not_retried(fake_server: FakeModelServer) -> None:
    fake_server.push(openai_error(401, "Incorrect API key provided", code="invalid_api_key"))
    with pytest.raises(ModelAuthError, match="Incorrect API key"):
        make_model(config_for(fake_server), THOUGHT_ACTION).query(MESSAGES)
    assert len(fake_server.requests) == 1


def test_bad_request_is_not_retried(fake_server: FakeModelServer) -> None:
    fake_server.push(openai_error(400, "temperature must be at most 2"))
    with pytest.raises(ModelAPIError, match="temperature must be at most 2"):
        make_model(config_for(fake_server), THOUGHT_ACTION).query(MESSAGES)
    assert len(fake_server.requests) == 1


@pytest.mark.parametrize(
    "error",
    [
        openai_error(400, "Please reduce the length.", code="context_length_exceeded"),
        openai_error(400, "This model's maximum context length is 4096 tokens. However, ..."),
        openai_error(400, "the request exceeds the available context size", "exceed_context"),
    ],
    ids=["openai", "vllm", "llama.cpp"],
)
def test_context_length_error(fake_server: FakeModelServer, error: FakeResponse) -> None:
    fake_server.push(error)
    with pytest.raises(ContextWindowExceeded):
        make_model(config_for(fake_server), THOUGHT_ACTION).query(MESSAGES)
    assert len(fake_server.requests) == 1


def test_slow_responses_time_out_are_retried_then_fail(fake_server: FakeModelServer) -> None:
    fake_server.push(*[FakeResponse(delay=0.5, body=openai_completion("late").body)] * 2)
    config = config_for(
        fake_server, timeout=0.1, retry=FAST_RETRY.model_copy(update={"max_attempts": 2})
    )
    with pytest.raises(ModelAPIError, match=r"timed out.*gave up after 2 attempts"):
        make_model(config, THOUGHT_ACTION).query(MESSAGES)
    assert len(fake_server.requests) == 2


def test_timeout_then_success(fake_server: FakeModelServer) -> None:
    fake_server.push(FakeResponse(delay=0.5, body={}), openai_completion("in time"))
    model = make_model(config_for(fake_server, timeout=0.1), THOUGHT_ACTION)
    assert model.query(MESSAGES).content == "in time"


@pytest.mark.parametrize("body", ["{not json", "[]", {"unexpected": "shape"}])
def test_malformed_body_is_retried(fake_server: FakeModelServer, body: Any) -> None:
    fake_server.push(FakeResponse(body=body), openai_completion("recovered"))
    assert (
        make_model(config_for(fake_server), THOUGHT_ACTION).query(MESSAGES).content == "recovered"
    )
    fake_server.push(*[FakeResponse(body=body)] * 3)
    with pytest.raises(ModelAPIError, match="malformed response"):
        make_model(config_for(fake_server), THOUGHT_ACTION).query(MESSAGES)


def test_tool_calls_round_trip(fake_server: FakeModelServer) -> None:
    fake_server.push(
        openai_completion(
            None,
            tool_calls=[
                ("call_1", "edit", {"start": 3, "text": "x = 1\n"}),
                ("call_2", "edit", "{broken"),
            ],
        )
    )
    model = make_model(config_for(fake_server), THOUGHT_ACTION)
    reply = model.query(MESSAGES, tools=[EDIT_TOOL])
    assert reply.content == ""
    assert reply.tool_calls == (
        ToolCall("call_1", "edit", {"start": 3, "text": "x = 1\n"}),
        ToolCall("call_2", "edit", {RAW_ARGUMENTS_KEY: "{broken"}),
    )
    assert fake_server.requests[0].body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "edit",
                "description": EDIT_TOOL.description,
                "parameters": EDIT_TOOL.parameters,
            },
        }
    ]
    fake_server.push(openai_completion("thanks"))
    history = [
        *MESSAGES,
        assistant_message(reply),
        {"role": "tool", "tool_call_id": "call_1", "content": "edited"},
        {"role": "tool", "tool_call_id": "call_2", "content": "bad arguments"},
    ]
    model.query(history, tools=[EDIT_TOOL])
    sent = fake_server.requests[1].body["messages"]
    assert sent[2]["tool_calls"][0] == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "edit", "arguments": '{"start": 3, "text": "x = 1\\n"}'},
    }
    assert sent[3] == {"role": "tool", "tool_call_id": "call_1", "content": "edited"}


def test_sampling_settings_are_sent(fake_server: FakeModelServer) -> None:
    fake_server.push(openai_completion("ok"))
    config = config_for(
        fake_server,
        temperature=0.2,
        top_p=0.95,
        max_output_tokens=321,
        stop=["</cmd>"],
        grammar='root ::= "x"',
        extra_body={"min_p": 0.05},
    )
    make_model(config, THOUGHT_ACTION).query(MESSAGES)
    body = fake_server.requests[0].body
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.2, 0.95, 321)
    assert (body["stop"], body["grammar"], body["min_p"]) == (["</cmd>"], 'root ::= "x"', 0.05)
    assert "tools" not in body


def test_a_grammar_is_not_sent_with_tools(fake_server: FakeModelServer) -> None:
    """Function calling and a text grammar exclude each other (llama.cpp refuses both)."""
    fake_server.push(openai_completion("ok"), openai_completion("ok"))
    model = make_model(config_for(fake_server, grammar='root ::= "x"'), THOUGHT_ACTION)
    model.query(MESSAGES, tools=[EDIT_TOOL])
    model.query(MESSAGES)
    with_tools, text_only = (request.body for request in fake_server.requests)
    assert "grammar" not in with_tools and "tools" in with_tools
    assert text_only["grammar"] == 'root ::= "x"'


def test_official_endpoint_uses_max_completion_tokens() -> None:
    config = OpenAIConfig(
        name="openai/gpt-4o", base_url="https://api.openai.com/v1", api_key="k", max_output_tokens=9
    )
    request = make_model(config, THOUGHT_ACTION).request(MESSAGES, None)  # type: ignore[attr-defined]
    assert request["max_completion_tokens"] == 9
    assert "max_tokens" not in request


def test_unknown_price_warns_once_per_model(
    fake_server: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    fake_server.push(openai_completion("a"), openai_completion("b"))
    model = make_model(config_for(fake_server, name="openai/unpriced-http-model"), THOUGHT_ACTION)
    with caplog.at_level(logging.WARNING, logger="swe_aci.models.pricing"):
        assert model.query(MESSAGES).cost == 0.0
        assert model.query(MESSAGES).cost == 0.0
    assert len([r for r in caplog.records if "unpriced-http-model" in r.getMessage()]) == 1


def test_missing_usage_is_estimated(fake_server: FakeModelServer) -> None:
    response = openai_completion("x" * 40)
    del response.body["usage"]  # type: ignore[union-attr]
    fake_server.push(response)
    reply = make_model(config_for(fake_server), THOUGHT_ACTION).query(MESSAGES)
    assert (reply.input_tokens, reply.output_tokens) == (10, 10)


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work in an empty directory with no OpenAI variables set."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_key_and_base_url_from_dotenv(fake_server: FakeModelServer, clean_env: Path) -> None:
    (clean_env / ".env").write_text(
        "# credentials\n"
        "export OPENAI_API_KEY='sk-from-dotenv'\n"
        f"OPENAI_BASE_URL={fake_server.openai_url}  # the fake server\n"
    )
    fake_server.push(openai_completion("ok"))
    make_model(OpenAIConfig(name="openai/fake-model", retry=FAST_RETRY), THOUGHT_ACTION).query(
        MESSAGES
    )
    assert fake_server.requests[0].headers["authorization"] == "Bearer sk-from-dotenv"


def test_environment_wins_over_dotenv_and_api_key_env(
    fake_server: FakeModelServer, clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (clean_env / ".env").write_text("MY_KEY=from-file\n")
    monkeypatch.setenv("MY_KEY", "from-environment")
    fake_server.push(openai_completion("ok"))
    make_model(config_for(fake_server, api_key=None, api_key_env="MY_KEY"), THOUGHT_ACTION).query(
        MESSAGES
    )
    assert fake_server.requests[0].headers["authorization"] == "Bearer from-environment"


def test_keyless_local_server(fake_server: FakeModelServer, clean_env: Path) -> None:
    fake_server.push(openai_completion("ok"))
    make_model(config_for(fake_server, api_key=None), THOUGHT_ACTION).query(MESSAGES)
    assert fake_server.requests[0].headers["authorization"] == "Bearer no-key"


def test_configuration_errors(clean_env: Path) -> None:
    with pytest.raises(ModelConfigError, match="no API key for openai/gpt-4o: set OPENAI_API_KEY"):
        make_model(OpenAIConfig(name="openai/gpt-4o"), THOUGHT_ACTION)
    with pytest.raises(ModelConfigError, match="MY_KEY, which is not set"):
        make_model(
            OpenAIConfig(name="openai/gpt-4o", base_url="http://x", api_key_env="MY_KEY"),
            THOUGHT_ACTION,
        )
    with pytest.raises(ModelConfigError, match="bad model base URL 'localhost:8000'"):
        make_model(
            OpenAIConfig(name="openai/gpt-4o", base_url="localhost:8000"),
            THOUGHT_ACTION,
        )


def test_connection_refused_is_an_api_error(clean_env: Path) -> None:
    config = OpenAIConfig(
        name="openai/m", base_url="http://127.0.0.1:9/v1", retry=FAST_RETRY, timeout=2
    )
    with pytest.raises(ModelAPIError, match=r"connection failed.*gave up after 3 attempts"):
        make_model(config, THOUGHT_ACTION).query(MESSAGES)
