"""Configuration of the agent-computer interface: which commands exist and how they behave."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from swe_aci.aci.commands import BY_NAME, DEFAULT_COMMANDS

WINDOW_COMMANDS = ("goto", "scroll_up", "scroll_down")  # they move a window of fixed size
DEFAULT_LINT_SELECT = ["F821", "F822", "F831", "E111", "E112", "E113", "E999", "E902"]


class ACIConfig(BaseModel):
    """The agent-computer interface: its commands and how they behave. The interface ablations of
    the paper (configs/ablations/) are variations of these fields."""

    model_config = ConfigDict(extra="forbid")

    commands: list[str] = Field(
        default_factory=lambda: list(DEFAULT_COMMANDS),
        description="enabled ACI commands, in the order their docs are shown; the shell is implicit",
    )
    window: int | None = Field(
        default=100,
        gt=0,
        description="lines shown by the file viewer; null shows whole files (no goto or scrolling)",
    )
    overlap: int = Field(default=2, ge=0, description="lines kept on screen when scrolling")
    search_cap: int = Field(default=50, gt=0, description="more results than this are not listed")
    search_context: int = Field(
        default=3, ge=0, description="lines shown each side of a match of the `search` command"
    )
    lint: bool = Field(
        default=True, description="reject edits that introduce flake8 errors (.py files)"
    )
    lint_select: list[str] = Field(default_factory=lambda: list(DEFAULT_LINT_SELECT))
    edit_max_bytes: int = Field(
        default=500_000,
        gt=0,
        description="larger files are not edited (the observation points to the shell)",
    )
    view_max_chars: int = Field(
        default=16_000,
        gt=0,
        description="the str_replace set's view shows at most this many characters (whole lines)",
    )
    command_timeout: float = Field(
        default=25.0, gt=0, description="seconds before a command is interrupted"
    )
    timeout_message: str = Field(
        default="EXECUTION TIMED OUT BECAUSE THE COMMAND WAS RUNNING FOR MORE THAN {timeout:g} SECONDS.",
        description="last line of a timed-out observation; {timeout} is the limit in seconds",
    )
    interactive_blocklist: list[str] = Field(
        default_factory=lambda: ["vim", "vi", "nano", "emacs", "less", "nohup", "gdb", "tail -f"],
        description="a command starting with these words is refused",
    )
    standalone_blocklist: list[str] = Field(
        default_factory=lambda: [
            "python",
            "python3",
            "ipython",
            "bash",
            "sh",
            "/bin/bash",
            "/bin/sh",
        ],
        description="a command consisting of exactly these words is refused",
    )
    blocked_message: str = Field(
        default="Interactive operation '{command}' is not supported by this environment",
        description="the refusal; {command} is the blocklist entry that matched",
    )
    unavailable_message: str = Field(
        default="The command '{command}' is not available in this interface",
        description="the refusal of an ACI command the config leaves out; {command} is its name",
    )

    @field_validator("commands")
    @classmethod
    def _known_commands(cls, value: list[str]) -> list[str]:
        unknown = [name for name in value if name not in BY_NAME]
        if unknown:
            raise ValueError(
                f"unknown ACI command(s) {', '.join(unknown)}; known: {', '.join(BY_NAME)}"
            )
        if len(set(value)) != len(value):
            raise ValueError("an ACI command is listed twice")
        typed = [BY_NAME[name].name for name in value]
        clashing = sorted({name for name in typed if typed.count(name) > 1})
        if clashing:
            raise ValueError(
                f"two enabled commands are both typed {clashing[0]!r}: "
                f"{', '.join(n for n in value if BY_NAME[n].name == clashing[0])}; enable one"
            )
        return value

    @field_validator("window")
    @classmethod
    def _moving_needs_a_window(cls, value: int | None, info: ValidationInfo) -> int | None:
        moving = [name for name in info.data.get("commands", []) if name in WINDOW_COMMANDS]
        if value is None and moving:
            raise ValueError(
                f"null (whole files) leaves nothing to move: remove {', '.join(moving)} from "
                "aci.commands"
            )
        return value

    @field_validator("overlap")
    @classmethod
    def _overlap_below_window(cls, value: int, info: ValidationInfo) -> int:
        window = info.data.get("window")
        if window is not None and value >= window:
            raise ValueError("overlap must be smaller than window")
        return value

    @field_validator("timeout_message", "blocked_message", "unavailable_message")
    @classmethod
    def _placeholders(cls, value: str, info: ValidationInfo) -> str:
        field = "timeout" if info.field_name == "timeout_message" else "command"
        try:
            value.format(**{field: 1})
        except (KeyError, IndexError, ValueError) as error:
            raise ValueError(f"may only use the placeholder {{{field}}} ({error})") from None
        return value
