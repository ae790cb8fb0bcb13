"""Build the model a config names. SDK-backed backends are imported only when chosen."""

from __future__ import annotations

from swe_aci.models.base import Model, ModelConfigError
from swe_aci.models.config import (
    AnthropicConfig,
    HumanConfig,
    LocalConfig,
    ModelConfig,
    OpenAIConfig,
    ReplayConfig,
    ScriptedConfig,
)
from swe_aci.models.human import HumanModel
from swe_aci.models.pricing import Pricing
from swe_aci.models.replay import ReplayModel
from swe_aci.models.reply_format import ThoughtActionFormat
from swe_aci.models.scripted import ScriptedModel


def make_model(config: ModelConfig, reply_format: ThoughtActionFormat | None) -> Model:
    """The model `config` describes; ModelConfigError (one line) when it cannot be built.

    `reply_format` is the text format the agent's parser reads (None: replies are function calls);
    the models that write replies themselves or constrain them follow it.
    """
    if isinstance(config, ReplayConfig):
        if not config.replay_path:
            raise ModelConfigError("model 'replay' needs model.replay_path (a trajectory file)")
        return ReplayModel(
            config.replay_path, text_format(config, reply_format), Pricing(config.prices)
        )
    if isinstance(config, ScriptedConfig):
        if not config.script:
            raise ModelConfigError("model 'scripted' needs model.script (a list of replies)")
        return ScriptedModel(config.script, pricing=Pricing(config.prices))
    if isinstance(config, HumanConfig):
        return HumanModel(text_format(config, reply_format))
    if isinstance(config, LocalConfig):
        from swe_aci.models.local import LocalModel

        return LocalModel(config, reply_format)
    if isinstance(config, OpenAIConfig):
        from swe_aci.models.openai_compat import OpenAICompatModel

        return OpenAICompatModel(config)
    if isinstance(config, AnthropicConfig):
        from swe_aci.models.anthropic_api import AnthropicModel

        return AnthropicModel(config)
    raise TypeError(f"not a model config: {config!r}")


def text_format(
    config: ReplayConfig | HumanConfig, reply_format: ThoughtActionFormat | None
) -> ThoughtActionFormat:
    """The format a model writing its replies as text needs; function calling has none."""
    if reply_format is None:
        raise ModelConfigError(
            f"model {config.name!r} writes text replies, but the agent's parser expects function "
            "calls: use agent.parser=thought_action"
        )
    return reply_format
