"""The query of a backend behind a vendor SDK (`openai`, `anthropic`): the call's keyword
arguments built by `request`, made by `create`, the response read by `parse`; our retries within
one deadline (the SDKs' own are off), a body that is not JSON or not of the expected shape
retried as malformed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from swe_aci.models.base import Message, ModelReply, ToolSpec
from swe_aci.models.config import APIConfig
from swe_aci.models.retry import RetryableError, call_within


class SDKModel(ABC):
    name: str
    config: APIConfig
    # the errors `parse` raises on a response of an unexpected shape
    malformed: tuple[type[Exception], ...] = (AttributeError, KeyError, TypeError)

    def query(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> ModelReply:
        request = self.request(messages, tools)
        return call_within(
            lambda seconds: self.send({**request, "timeout": seconds}, messages),
            self.config.retry,
            self.config.timeout,
            timeout,
            self.name,
        )

    def send(self, request: dict[str, Any], messages: list[Message]) -> ModelReply:
        try:
            response = self.create(request)
        except ValueError as error:  # the SDKs let json.JSONDecodeError through
            raise RetryableError(f"malformed response: not JSON ({error})") from error
        try:
            return self.parse(response, messages)
        except self.malformed as error:
            raise RetryableError(f"malformed response: {error!r}") from error

    @abstractmethod
    def request(self, messages: list[Message], tools: list[ToolSpec] | None) -> dict[str, Any]:
        """The keyword arguments of the SDK's call for this conversation."""

    @abstractmethod
    def create(self, request: dict[str, Any]) -> Any:
        """The SDK's call; its errors raised as ours (`classify_sdk_error`)."""

    @abstractmethod
    def parse(self, response: Any, messages: list[Message]) -> ModelReply:
        """Our reply from the SDK's response (its usage included)."""
