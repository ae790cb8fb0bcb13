"""Build the model a config names. SDK-backed backends are imported only when chosen."""

from __future__ import annotations

from swe_aci.models.base import Model, ModelConfigError
from swe_aci.models.config import ModelConfig
from swe_aci.models.human import HumanModel
from swe_aci.models.pricing import Pricing
from swe_aci.models.replay import ReplayModel
from swe_aci.models.scripted import ScriptedModel

KNOWN_NAMES = "replay, scripted, human, openai/<model>, anthropic/<model>, local"


def make_model(config: ModelConfig) -> Model:
    """The model for `config.name`; ModelConfigError (one line) when it cannot be built."""
    name = config.name
    pricing = Pricing(config.prices)
    if name == "replay":
        if not config.replay_path:
            raise ModelConfigError("model 'replay' needs model.replay_path (a trajectory file)")
        return ReplayModel(config.replay_path, pricing=pricing)
    if name == "scripted":
        if not config.script:
            raise ModelConfigError("model 'scripted' needs model.script (a list of replies)")
        return ScriptedModel(config.script, pricing=pricing)
    if name == "human":
        return HumanModel()
    provider, _, model = name.partition("/")
    if provider == "local":
        from swe_aci.models.local import LocalModel

        return LocalModel(config)
    if provider == "openai" and model:
        from swe_aci.models.openai_compat import OpenAICompatModel

        return OpenAICompatModel(config, pricing=pricing)
    if provider == "anthropic" and model:
        from swe_aci.models.anthropic_api import AnthropicModel

        return AnthropicModel(config, pricing=pricing)
    raise ModelConfigError(f"unknown model {name!r}: expected one of {KNOWN_NAMES}")
