"""How an episode ends: the exit statuses, the exception that ends a step, the rule for which
errors end the episode (recorded, with autosubmission) and which escape it (the user must fix
them), and the interrupt a termination signal raises."""

from __future__ import annotations

import signal
import traceback
from typing import Any

from swe_aci.models.base import (
    ContextWindowExceeded,
    ModelAPIError,
    ModelAuthError,
    ModelConfigError,
    RepliesExhausted,
)

SUBMITTED = "submitted"
INTERRUPTED = "exit_interrupted"  # Ctrl-C, SIGTERM or SIGHUP; recorded without autosubmission
EXIT_REASONS = {
    INTERRUPTED: "interrupt",
    "exit_cost": "cost limit",
    "exit_context": "context window",
    "exit_format": "format error",
    "exit_api": "model API error",
    "exit_error": "unexpected error",
    "exit_step_limit": "step limit",
    "exit_time_limit": "time limit",
    "exit_repeated": "repeated action",
}


class Interrupted(KeyboardInterrupt):
    """Raised by a signal handler (SIGTERM, SIGHUP) to end an episode as Ctrl-C does."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_name(interrupt: KeyboardInterrupt) -> str:
    """The signal that interrupted an episode: SIGTERM or SIGHUP (`Interrupted`), else SIGINT."""
    signum = interrupt.signum if isinstance(interrupt, Interrupted) else signal.SIGINT
    return signal.Signals(signum).name


class EpisodeExit(Exception):
    """Ends the episode from deep inside a step with `status` (an EXIT_REASONS key)."""

    def __init__(
        self,
        status: str,
        *,
        response: str = "",
        error: str | None = None,
        trace: str | None = None,
    ) -> None:
        super().__init__(status)
        self.status = status
        self.response = response
        self.error = error
        self.trace = trace

    def record(self, info: dict[str, Any]) -> None:
        """Put the error and its traceback, when set, in the trajectory's info (where
        `EpisodeResult.from_info` reads them back)."""
        if self.error:
            info["error"] = self.error
        if self.trace:
            info["traceback"] = self.trace


# Model errors the user must fix (config, key): they escape the episode instead of ending it.
ESCAPING_ERRORS = (ModelConfigError, ModelAuthError)


def exit_for(error: Exception) -> EpisodeExit:
    """How an error raised during a step ends the episode (not for ESCAPING_ERRORS)."""
    if isinstance(error, EpisodeExit):
        return error
    if isinstance(error, ContextWindowExceeded):
        return EpisodeExit("exit_context", error=str(error))
    if isinstance(error, RepliesExhausted) and error.recorded_exit in EXIT_REASONS:
        return EpisodeExit(error.recorded_exit)  # a replay ends as its recording did
    if isinstance(error, ModelAPIError):
        return EpisodeExit("exit_api", error=str(error))
    trace = "".join(traceback.format_exception(error))
    return EpisodeExit("exit_error", error=f"{type(error).__name__}: {error}", trace=trace)
