"""What `run` and `replay` show while an episode runs and when it ends.

Steps (thought, action, observation preview) go to stdout; what the episode is doing right now
(waiting for the model, a rejected reply, the time a step took) goes to stderr, so it shows on a
terminal and in a log alike. Everything that came from the model or the sandbox is escaped.
"""

from __future__ import annotations

import re
import time

from rich.console import Console
from rich.markup import escape

from swe_aci.trajectory.outcome import Outcome, outcome_of
from swe_aci.trajectory.progress import ProgressEvent, ReplyRejected, TurnStarted
from swe_aci.trajectory.result import EpisodeResult, StepRecord

OBSERVATION_PREVIEW_LINES = 12
REASON_CHARACTERS = 300
# Control characters other than newline and tab: shown escaped, never sent to the terminal.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with control characters (terminal escape sequences...) shown as `\\x1b` etc."""
    return CONTROL_CHARACTERS.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def one_line(text: str, limit: int = REASON_CHARACTERS) -> str:
    line = " ".join(printable(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


class EpisodeDisplay:
    """The `on_step` and `on_progress` callbacks of one episode."""

    def __init__(self) -> None:
        self.out = Console(highlight=False, soft_wrap=True)
        self.status = Console(stderr=True, highlight=False, soft_wrap=True)
        self.turn_started: float | None = None

    def progress(self, event: ProgressEvent) -> None:
        if isinstance(event, TurnStarted):
            self.turn_started = time.monotonic()
            self.status.print(
                f"[dim]turn {event.turn}: waiting for the model ({event.tokens_sent} tokens "
                f"sent, {event.tokens_received} received so far)[/]"
            )
        elif isinstance(event, ReplyRejected):
            what = "refused command" if event.kind == "blocked" else "malformed reply"
            self.status.print(
                f"[yellow]turn {event.turn}: {what}, asking again: "
                f"{escape(one_line(event.reason))}[/]"
            )

    def step(self, step: StepRecord) -> None:
        out = self.out
        if step.thought.strip():
            out.print(f"[dim]{escape(printable(step.thought.strip()))}[/]")
        out.print(f"[bold cyan]$ {escape(printable(step.action.strip()))}[/]")
        lines = (step.observation or "").splitlines() or ["(no output)"]
        if len(lines) > OBSERVATION_PREVIEW_LINES:
            head = lines[: OBSERVATION_PREVIEW_LINES - 2]
            lines = [*head, f"... ({len(lines) - len(head) - 1} more lines)", lines[-1]]
        out.print(escape(printable("\n".join(lines))))
        out.rule(style="dim")
        if self.turn_started is not None:
            total = time.monotonic() - self.turn_started
            model = max(0.0, total - step.execution_time)
            self.status.print(
                f"[dim]step took {total:.1f} s: model {model:.1f} s, "
                f"action {step.execution_time:.1f} s[/]"
            )
            self.turn_started = None


def print_result(result: EpisodeResult) -> Outcome:
    """The outputs, the cost, and last the plain outcome; returns it (its exit code)."""
    console = Console(highlight=False, soft_wrap=True)
    outcome = outcome_of(result.exit_status, result.submission)
    patch_path = result.trajectory_path.with_suffix(".patch")
    console.print(f"[bold]exit status:[/] {escape(outcome.ended)}")
    console.print(f"[bold]trajectory:[/] {escape(str(result.trajectory_path))}")
    if result.submission.strip():
        console.print(f"[bold]patch:[/] {escape(str(patch_path))}")
    else:
        console.print("[bold]patch:[/] none (empty diff)")
    stats = result.stats
    console.print(
        f"[bold]cost:[/] ${stats.instance_cost:.4f} ({stats.api_calls} calls, "
        f"{stats.tokens_sent} tokens sent, {stats.tokens_received} received, "
        f"{result.steps} steps)"
    )
    console.print(f"[bold]result:[/] {escape(outcome.summary)}")
    return outcome
