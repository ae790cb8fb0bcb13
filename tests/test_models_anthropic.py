"""The anthropic/<model> backend against a fake Anthropic-compatible server on 127.0.0.1."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from fake_model_server import FakeModelServer, FakeResponse, anthropic_error, anthropic_message
from swe_aci.agent.parsing import THOUGHT_ACTION
from swe_aci.models import (
    AnthropicConfig,
    ContextWindowExceeded,
    ModelAPIError,
    ModelAuthError,
    ModelConfigError,
    Price,
    RetryConfig,
    ToolCall,
    ToolSpec,
)
from swe_aci.models.anthropic_api import DEFAULT_MAX_TOKENS
from swe_aci.models.factory import make_model
from swe_aci.models.tools import assistant_message

pytest_plugins = ["fake_model_server"]

FAST_RETRY = RetryConfig(max_attempts=3, initial_wait=0.001, max_wait=0.01, max_total_wait=1.0)
EDIT_TOOL = ToolSpec(
    name="edit",
    description="Replace lines of the open file.",
    parameters={"type": "object", "properties": {"start": {"type": "integer"}}},
)


def config_for(server: FakeModelServer, **overrides: Any) -> AnthropicConfig:
    settings: dict[str, Any] = {
        "name": "anthropic/claude-fake",
        "base_url": server.url,
        "api_key": "test-key",
        "timeout": 5.0,
        "retry": FAST_RETRY,
    }
    return AnthropicConfig(**(settings | overrides))


def test_conversation_mapping_usage_and_cost(fake_server: FakeModelServer) -> None:
    fake_server.push(
        anthropic_message("```\nls\n```", input_tokens=300, output_tokens=50, cache_read=600)
    )
    prices = {"claude-fake": Price(input=3.0, output=15.0, cached_input=0.3)}
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "demonstration"},
        {"role": "user", "content": "issue"},
        {"role": "assistant", "content": "thought\n```\nls\n```"},
        {"role": "user", "content": "observation"},
    ]
    reply = make_model(config_for(fake_server, prices=prices), THOUGHT_ACTION).query(messages)
    assert reply.content == "```\nls\n```"
    assert (reply.input_tokens, reply.cached_tokens, reply.output_tokens) == (900, 600, 50)
    assert reply.cost == pytest.approx((300 * 3.0 + 600 * 0.3 + 50 * 15.0) / 1e6)
    [request] = fake_server.requests
    assert request.path == "/v1/messages"
    assert "test-key" in (
        request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
    )
    body = request.body
    assert body["system"] == [{"type": "text", "text": "You are an agent."}]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "demonstration"},
                {"type": "text", "text": "issue"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "thought\n```\nls\n```"}]},
        {"role": "user", "content": [{"type": "text", "text": "observation"}]},
    ]
    assert (body["model"], body["max_tokens"]) == ("claude-fake", DEFAULT_MAX_TOKENS)
    assert "temperature" not in body


def test_cache_control_on_marked_messages(fake_server: FakeModelServer) -> None:
    fake_server.push(anthropic_message("ok"))
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "system prompt", "cache_breakpoint": True}
    ]
    for index in range(5):
        messages.append({"role": "user", "content": f"u{index}", "cache_breakpoint": True})
        messages.append({"role": "assistant", "content": f"a{index}"})
    make_model(config_for(fake_server), THOUGHT_ACTION).query(messages)
    body = fake_server.requests[0].body
    ephemeral = {"type": "ephemeral"}
    assert "cache_control" not in body["system"][0]  # only the last 4 marks are kept
    marked = [
        block["text"]
        for turn in body["messages"]
        for block in turn["content"]
        if block.get("cache_control") == ephemeral
    ]
    assert marked == ["u1", "u2", "u3", "u4"]


def test_tool_use_round_trip(fake_server: FakeModelServer) -> None:
    fake_server.push(anthropic_message("Editing.", tool_uses=[("toolu_1", "edit", {"start": 3})]))
    model = make_model(config_for(fake_server), THOUGHT_ACTION)
    messages = [{"role": "user", "content": "fix it"}]
    reply = model.query(messages, tools=[EDIT_TOOL])
    assert reply.content == "Editing."
    assert reply.tool_calls == (ToolCall("toolu_1", "edit", {"start": 3}),)
    assert fake_server.requests[0].body["tools"] == [
        {
            "name": "edit",
            "description": EDIT_TOOL.description,
            "input_schema": EDIT_TOOL.parameters,
        }
    ]
    fake_server.push(anthropic_message("done"))
    history = [
        *messages,
        assistant_message(reply),
        {"role": "tool", "tool_call_id": "toolu_1", "content": "edited"},
        {"role": "user", "content": "next observation"},
    ]
    model.query(history, tools=[EDIT_TOOL])
    sent = fake_server.requests[1].body["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Editing."},
            {"type": "tool_use", "id": "toolu_1", "name": "edit", "input": {"start": 3}},
        ],
    }
    assert sent[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "edited"},
            {"type": "text", "text": "next observation"},
        ],
    }


def test_sampling_settings_sent_as_the_api_version_allows(
    fake_server: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    fake_server.push(anthropic_message("ok"), anthropic_message("ok"))
    config = config_for(
        fake_server,
        name="anthropic/claude-sampling",
        temperature=0.5,
        top_p=0.9,
        max_output_tokens=77,
        stop=["</cmd>"],
        extra_body={"top_k": 5},
    )
    with caplog.at_level(logging.WARNING, logger="swe_aci.models.anthropic_api"):
        model = make_model(config, THOUGHT_ACTION)
        make_model(config, THOUGHT_ACTION)
    assert [r.getMessage() for r in caplog.records] == [
        "anthropic/claude-sampling: anthropic API version 2026-10-21 takes no temperature/top_p;"
        " not sent"
    ]
    model.query([{"role": "user", "content": "hi"}])
    body = fake_server.requests[0].body
    assert fake_server.requests[0].headers["anthropic-version"] == "2026-10-21"
    assert (body["max_tokens"], body["stop_sequences"], body["top_k"]) == (77, ["</cmd>"], 5)
    assert "temperature" not in body
    assert "top_p" not in body
    model.sampling = True  # type: ignore[attr-defined]  # as with an SDK sending 2023-06-01
    model.query([{"role": "user", "content": "hi"}])
    assert (fake_server.requests[1].body["temperature"], fake_server.requests[1].body["top_p"]) == (
        0.5,
        0.9,
    )


def test_prompt_too_long_is_context_error(fake_server: FakeModelServer) -> None:
    fake_server.push(
        anthropic_error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000")
    )
    with pytest.raises(ContextWindowExceeded):
        make_model(config_for(fake_server), THOUGHT_ACTION).query(
            [{"role": "user", "content": "x"}]
        )
    assert len(fake_server.requests) == 1


def test_overloaded_then_success(fake_server: FakeModelServer) -> None:
    fake_server.push(
        anthropic_error(529, "overloaded_error", "Overloaded"), anthropic_message("ok")
    )
    reply = make_model(config_for(fake_server), THOUGHT_ACTION).query(
        [{"role": "user", "content": "x"}]
    )
    assert reply.content == "ok"
    assert len(fake_server.requests) == 2


def test_auth_error_is_not_retried(fake_server: FakeModelServer) -> None:
    fake_server.push(anthropic_error(401, "authentication_error", "invalid x-api-key"))
    with pytest.raises(ModelAuthError, match="invalid x-api-key"):
        make_model(config_for(fake_server), THOUGHT_ACTION).query(
            [{"role": "user", "content": "x"}]
        )
    assert len(fake_server.requests) == 1


def test_malformed_body_until_retries_run_out(fake_server: FakeModelServer) -> None:
    fake_server.push(*[FakeResponse(body={"type": "message", "content": None})] * 3)
    with pytest.raises(ModelAPIError, match=r"malformed response.*gave up after 3 attempts"):
        make_model(config_for(fake_server), THOUGHT_ACTION).query(
            [{"role": "user", "content": "x"}]
        )


def test_configuration_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelConfigError, match="set ANTHROPIC_API_KEY"):
        make_model(AnthropicConfig(name="anthropic/claude-sonnet-4-5"), THOUGHT_ACTION)
    with pytest.raises(ValidationError, match="grammar"):  # a llama.cpp option
        AnthropicConfig(name="anthropic/claude-sonnet-4-5", api_key="k", grammar="x")
    (tmp_path / ".env").write_text('ANTHROPIC_API_KEY="sk-ant-from-dotenv"\n')
    assert make_model(AnthropicConfig(name="anthropic/claude-sonnet-4-5"), THOUGHT_ACTION).name == (
        "anthropic/claude-sonnet-4-5"
    )
