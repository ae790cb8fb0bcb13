"""The batch's live panel on a terminal and its summary table."""

from __future__ import annotations

import io
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from swe_aci.batch.display import LineDisplay, LiveDisplay, display_for, headline, summary_table
from swe_aci.batch.hooks import completed_instance
from swe_aci.batch.runner import BatchState, Running
from swe_aci.trajectory.instance import InstanceResult

Terminal = Callable[..., tuple[Console, io.StringIO]]


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    """A console on a terminal of the type asked for, whatever terminal (or none) runs the tests:
    TERM set for the test, the variables that turn a terminal off removed."""

    def make(term: str = "xterm-256color") -> tuple[Console, io.StringIO]:
        monkeypatch.setenv("TERM", term)
        for variable in ("TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR", "FORCE_COLOR"):
            monkeypatch.delenv(variable, raising=False)
        buffer = io.StringIO()
        return Console(file=buffer, force_terminal=True, width=160, color_system=None), buffer

    return make


def test_live_panel_shows_progress_running_steps_counts_cost_and_eta(terminal: Terminal) -> None:
    console, buffer = terminal()
    assert isinstance(display_for(console), LiveDisplay)
    state = BatchState(total=10, skipped=2, started=time.monotonic() - 60)
    state.finished, state.cost = 4, 1.25
    state.counts = Counter({"submitted": 3, "exit_cost": 1})
    state.running = {
        "django__django-1 [x]": Running(time.monotonic() - 5, 7, "open [weird].py\nmore")
    }
    with LiveDisplay(console) as display:
        display.update(state)
        display.live.refresh()
        result = InstanceResult("a-1", "submitted", cost=0.5, steps=3)
        display.on_instance_completed(completed_instance(result, Path("out")))
    text = buffer.getvalue()
    assert "6/10 done (2 from before), 1 running, $1.25" in text
    assert "exit_cost 1, submitted 3" in text and "ETA 1:00" in text
    assert "django__django-1 [x]" in text and "open [weird].py" in text and "more" not in text
    assert "[6/10] a-1: submitted ($0.5000, 3 steps" in text


def test_summary_table_counts_and_stop_reason(terminal: Terminal) -> None:
    console, buffer = terminal()
    state = BatchState(total=5, skipped=1)
    state.finished = 2
    state.counts = Counter({"submitted": 2})
    state.stop_reason = "total cost limit $1.00 reached"
    console.print(summary_table(state))
    text = buffer.getvalue()
    assert (
        "submitted" in text
        and "3/5" in text
        and "stopped early: total cost limit $1.00 reached" in text
    )
    assert headline(state).startswith("3/5 done")


def test_plain_lines_show_started_instances_and_their_current_step() -> None:
    """On a pipe or a log (no terminal) the batch says at once what started and each step."""
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=160, color_system=None)
    state = BatchState(total=2, skipped=0)
    with LineDisplay(console) as display:
        state.running = {"a-1": Running(time.monotonic())}
        display.update(state)
        display.update(state)  # nothing new: nothing printed
        state.running["a-1"].steps, state.running["a-1"].action = 1, "open [x].py\nmore"
        state.running["b-2"] = Running(time.monotonic())
        display.update(state)
        state.running["a-1"].steps, state.running["a-1"].action = 2, "ls \x1b[31m"
        display.update(state)
    assert buffer.getvalue().splitlines() == [
        "a-1: started",
        "a-1: step 1: open [x].py",
        "b-2: started",
        "a-1: step 2: ls \\x1b[31m",
    ]


def test_a_dumb_terminal_gets_the_plain_lines(terminal: Terminal) -> None:
    """TERM=dumb is a terminal rich draws no live panel on: the batch prints plain lines there."""
    console, buffer = terminal("dumb")
    display = display_for(console)
    assert isinstance(display, LineDisplay)
    state = BatchState(total=1, skipped=0)
    with display:
        state.running = {"a-1": Running(time.monotonic())}
        display.update(state)
    assert buffer.getvalue().splitlines() == ["a-1: started"]
