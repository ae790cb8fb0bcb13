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
from swe_aci.models.config import (
    AnthropicConfig,
    HumanConfig,
    LocalConfig,
    ModelConfig,
    OpenAIConfig,
    Price,
    ReplayConfig,
    RetryConfig,
    ScriptedConfig,
)
from swe_aci.models.factory import make_model
from swe_aci.models.reply_format import FormatError, ThoughtActionFormat

__all__ = [
    "AnthropicConfig",
    "ContextWindowExceeded",
    "FormatError",
    "HumanConfig",
    "LocalConfig",
    "Message",
    "Model",
    "ModelAPIError",
    "ModelAuthError",
    "ModelConfig",
    "ModelConfigError",
    "ModelError",
    "ModelReply",
    "ModelStats",
    "OpenAIConfig",
    "Price",
    "ReplayConfig",
    "RepliesExhausted",
    "RetryConfig",
    "ScriptedConfig",
    "ThoughtActionFormat",
    "ToolCall",
    "ToolSpec",
    "make_model",
]
