"""The models a pipeline queries: one per sampling setting (temperature, grammar, output budget,
seed offset), built on demand from the episode's model config and closed together.

The Model protocol takes no per-call sampling options, so a setting is a model of its own; local
llama.cpp models of the same file share one server, so a variant costs nothing to build. Models
without sampling options (scripted) are one model answering every setting in order.
"""

from __future__ import annotations

from typing import Any

from swe_aci.models.base import Model, ModelConfigError, ModelStats
from swe_aci.models.config import APIConfig, ModelConfig, ReplayConfig
from swe_aci.models.factory import make_model


def variant(
    config: ModelConfig,
    temperature: float,
    *,
    grammar: str | None = None,
    max_output_tokens: int | None = None,
    seed_offset: int = 0,
) -> ModelConfig:
    """`config` with these sampling settings; as it is for a model without them (scripted)."""
    if not isinstance(config, APIConfig):
        return config
    update: dict[str, Any] = {"temperature": temperature}
    if "grammar" in type(config).model_fields:
        update["grammar"] = grammar
    if max_output_tokens is not None:
        update["max_output_tokens"] = max_output_tokens
    seed = config.extra_body.get("seed")
    if isinstance(seed, int) and seed_offset:
        update["extra_body"] = {**config.extra_body, "seed": seed + seed_offset}
    return config.model_copy(update=update)


class ModelPool:
    def __init__(self, config: ModelConfig) -> None:
        if isinstance(config, ReplayConfig):
            raise ModelConfigError(
                "the pipeline strategy cannot replay a trajectory: use strategy.type=agent"
            )
        self.config = config
        self.name = config.name
        self.stats = ModelStats()
        self._models: dict[tuple[Any, ...], Model] = {}

    def get(
        self,
        temperature: float,
        *,
        grammar: str | None = None,
        max_output_tokens: int | None = None,
        seed_offset: int = 0,
    ) -> Model:
        key: tuple[Any, ...] = ()
        if isinstance(self.config, APIConfig):
            key = (temperature, grammar, max_output_tokens, seed_offset)
        if key not in self._models:
            settings = variant(
                self.config,
                temperature,
                grammar=grammar,
                max_output_tokens=max_output_tokens,
                seed_offset=seed_offset,
            )
            self._models[key] = make_model(settings, None)
        return self._models[key]

    def close(self) -> None:
        for model in self._models.values():
            if close := getattr(model, "close", None):
                close()
        self._models.clear()
