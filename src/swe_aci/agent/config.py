"""The agent's config sections: its templates, demonstrations, parser, history and limits.

The whole episode config (agent, aci, model, env) and `load_config` are in `swe_aci.episode`; the
machinery of config files in `swe_aci.configuration`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from swe_aci.agent.history import HistoryConfig
from swe_aci.agent.parsing import ParserName
from swe_aci.agent.templates import TEMPLATE_VARIABLES, TemplatesConfig
from swe_aci.agent.text_editor import TextEditorType
from swe_aci.configuration import check_templates


class RepeatsConfig(BaseModel):
    """Stuck detection: the same action `limit` times in a row tells the model once (the
    `repeated_action` template); the next time it happens the episode ends (exit_repeated)."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(4, ge=0, description="repeats in a row that count as stuck; 0 disables")
    compare: Literal["action", "action_and_observation"] = Field(
        "action_and_observation",
        description="what must be the same: the action alone, or the action and its output",
    )


class LimitsConfig(BaseModel):
    """When an episode stops on its own, and how much it may submit. 0 disables a limit.
    (The timeout of one command is `aci.command_timeout`.)"""

    model_config = ConfigDict(extra="forbid")

    per_instance_cost: float = Field(2.0, ge=0, description="USD; checked after each model call")
    max_steps: int = Field(0, ge=0, description="executed actions; exit_step_limit")
    wall_time: float = Field(0.0, ge=0, description="seconds for the episode; exit_time_limit")
    max_format_errors: int = Field(
        3, ge=1, description="malformed or refused replies in a row; exit_format"
    )
    max_submission_bytes: int = Field(
        5_000_000, ge=0, description="a larger diff is not submitted (a note says why)"
    )
    repeats: RepeatsConfig = Field(default_factory=RepeatsConfig)


class AgentConfig(BaseModel):
    """The agent loop: what the model reads, how its replies are parsed, what it remembers."""

    model_config = ConfigDict(extra="forbid")

    templates: TemplatesConfig
    demonstrations: list[str] = Field(
        default_factory=list, description="trajectory files shown as worked examples"
    )
    parser: ParserName = "thought_action"
    history: HistoryConfig = Field(default_factory=HistoryConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    review_on_submit: bool = Field(
        False,
        description="the first submit shows the diff and templates.review; a second one submits",
    )
    anthropic_text_editor: TextEditorType | None = Field(
        None,
        description="with an anthropic/ model and parser tool_calls: offer view, create, "
        "str_replace and insert as Anthropic's text editor tool of this type",
    )

    @model_validator(mode="after")
    def _templates_render(self) -> AgentConfig:
        check_templates(self.templates, "agent.templates", TEMPLATE_VARIABLES)
        if self.review_on_submit and self.templates.review is None:
            raise ValueError("agent.review_on_submit needs agent.templates.review")
        if self.anthropic_text_editor and self.parser != "tool_calls":
            raise ValueError("agent.anthropic_text_editor needs agent.parser: tool_calls")
        return self
