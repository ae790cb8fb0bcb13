"""Language models behind one protocol: `query(messages, tools) -> ModelReply`.

Importing this package loads no SDK; the HTTP backends import `openai` / `anthropic` lazily.
"""

from swe_aci.models.base import (
    ContextWindowExceeded,
    Message,
    Model,
    ModelAPIError,
    ModelAuthError,
    ModelConfigError,
    ModelError,
    ModelReply,
    ModelStats,
    RepliesExhausted,
    ToolCall,
    ToolSpec,
)
from swe_aci.models.config import ModelConfig, Price, RetryConfig
from swe_aci.models.factory import make_model

__all__ = [
    "ContextWindowExceeded",
    "Message",
    "Model",
    "ModelAPIError",
    "ModelAuthError",
    "ModelConfig",
    "ModelConfigError",
    "ModelError",
    "ModelReply",
    "ModelStats",
    "Price",
    "RepliesExhausted",
    "RetryConfig",
    "ToolCall",
    "ToolSpec",
    "make_model",
]
