"""What a batch shows while it runs: a rich live panel on a terminal; otherwise plain lines as
instances start, take a step and finish; and the summary table at the end."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from swe_aci.batch.runner import BatchState
from swe_aci.episode_display import printable
from swe_aci.hooks.base import InstanceCompleted
from swe_aci.trajectory.instance import InstanceResult

MAX_RUNNING_ROWS = 12


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def headline(state: BatchState) -> str:
    counts = ", ".join(f"{status} {count}" for status, count in sorted(state.counts.items()))
    return (
        f"{state.done}/{state.total} done ({state.skipped} from before), "
        f"{len(state.running)} running, ${state.cost:.2f}, "
        f"elapsed {duration(time.monotonic() - state.started)}, ETA {duration(state.eta())}"
        + (f" | {counts}" if counts else "")
    )


def display_for(console: Console) -> LiveDisplay | LineDisplay:
    """The live panel on a terminal that can redraw one; plain lines on a pipe, a log, or a dumb
    terminal (TERM=dumb: Emacs shells, some CI systems), where rich draws no live panel."""
    if console.is_terminal and not console.is_dumb_terminal:
        return LiveDisplay(console)
    return LineDisplay(console)


class LiveDisplay:
    """A live panel: progress, the running instances with their step, counts, cost, ETA."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.state: BatchState | None = None
        self.live = Live(console=console, refresh_per_second=4, transient=True)

    def __enter__(self) -> LiveDisplay:
        self.live.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.live.__exit__(*exc_info)

    def update(self, state: BatchState) -> None:
        self.state = state
        table = Table(box=None, show_header=True, header_style="bold", expand=False)
        table.add_column("running")
        table.add_column("step", justify="right")
        table.add_column("time", justify="right")
        table.add_column("last action", overflow="ellipsis", no_wrap=True, max_width=60)
        now = time.monotonic()
        for instance_id, running in list(state.running.items())[:MAX_RUNNING_ROWS]:
            action = running.action.strip().splitlines()[0] if running.action.strip() else ""
            table.add_row(
                escape(instance_id),
                str(running.steps),
                duration(now - running.started),
                escape(printable(action)),
            )
        status = Text(headline(state), style="bold")
        if state.stop_reason:
            status.append(f"\nstopping: {state.stop_reason}", style="yellow")
        self.live.update(Group(status, table))

    def on_instance_completed(self, completed: InstanceCompleted[InstanceResult]) -> None:
        if self.state is not None:
            self.console.print(finished_line(self.state, completed.record), highlight=False)


class LineDisplay:
    """Plain output for logs and pipes: a line when an instance starts, at each of its steps, and
    when it finishes."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.state: BatchState | None = None
        self.shown: dict[str, int] = {}  # the step last shown of each running instance

    def __enter__(self) -> LineDisplay:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        return None

    def update(self, state: BatchState) -> None:
        self.state = state
        for instance_id, running in list(state.running.items()):
            shown = self.shown.get(instance_id)
            if shown is None:
                self.print(f"{instance_id}: started")
                self.shown[instance_id] = shown = 0
            if running.steps != shown:
                action = running.action.strip().splitlines()[0] if running.action.strip() else ""
                self.print(f"{instance_id}: step {running.steps}: {printable(action)[:100]}")
                self.shown[instance_id] = running.steps
        for instance_id in set(self.shown) - set(state.running):
            del self.shown[instance_id]

    def print(self, line: str) -> None:
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def on_instance_completed(self, completed: InstanceCompleted[InstanceResult]) -> None:
        if self.state is not None:
            line = finished_line(self.state, completed.record)
            self.console.print(line, highlight=False, markup=False)


def finished_line(state: BatchState, result: InstanceResult) -> str:
    error = f" - {result.error}" if result.error else ""
    return (
        f"[{state.done}/{state.total}] {result.instance_id}: {result.exit_status} "
        f"(${result.cost:.4f}, {result.steps} steps, {result.elapsed:.1f} s){error}"
    )


def summary_table(state: BatchState) -> Group:
    """The counts per exit status, then cost, time and why the batch stopped early (if it did)."""
    table = Table(title="batch summary")
    table.add_column("exit status")
    table.add_column("instances", justify="right")
    for status, count in sorted(state.counts.items(), key=lambda item: -item[1]):
        table.add_row(escape(status), str(count))
    table.add_row("[dim]done before (skipped)[/]", str(state.skipped))
    table.add_row("[bold]total done[/]", f"{state.done}/{state.total}")
    footer = Text(f"cost ${state.cost:.2f}, elapsed {duration(time.monotonic() - state.started)}")
    if state.stop_reason:
        footer.append(f"\nstopped early: {state.stop_reason}", style="yellow")
    return Group(table, footer)
