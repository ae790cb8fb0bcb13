"""The paper's figures of a run as PNG files (matplotlib, Agg backend: no display needed):
turns histogram, action categories by turn (stacked bars), edit-recovery curve, cost
distribution. One series per group (all, or resolved and unresolved when a report was given);
matplotlib is imported only here, and only when a figure is drawn (the `plots` extra)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

from swe_aci.analysis.paper import CATEGORY_ORDER, RECOVERY_K, GroupStats, PaperStats

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOT_NAMES = ("turns", "categories_by_turn", "edit_recovery", "cost")
MISSING = "plots need matplotlib: pip install 'swe-aci[plots]'"


class PlotsUnavailable(Exception):
    """matplotlib is not installed (one line for the user)."""


def new_figure(title: str) -> tuple[Figure, Axes]:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotsUnavailable(MISSING) from None
    figure = Figure(figsize=(6.4, 3.6), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    axes.set_title(title)
    return figure, axes


def shown_groups(stats: PaperStats) -> list[GroupStats]:
    """Resolved and unresolved when the run was evaluated, else all instances."""
    split = [group for group in stats.groups if group.name != "all"]
    return split if stats.evaluated else stats.groups[:1]


def turns_figure(stats: PaperStats) -> Figure:
    figure, axes = new_figure("turns per instance")
    groups = shown_groups(stats)
    longest = max((max(group.turns, default=0) for group in groups), default=0)
    bins = list(range(0, longest + 2))
    for group in groups:
        axes.hist(group.turns, bins=bins, alpha=0.6, label=group.name)
    axes.set_xlabel("turns")
    axes.set_ylabel("instances")
    axes.legend()
    return figure


def categories_figure(stats: PaperStats) -> Figure:
    figure, axes = new_figure("action categories by turn")
    turns = list(range(1, len(stats.categories_by_turn) + 1))
    bottom = [0] * len(turns)
    for name in CATEGORY_ORDER:
        heights = [turn.get(name, 0) for turn in stats.categories_by_turn]
        axes.bar(turns, heights, bottom=bottom, label=name)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    axes.set_xlabel("turn")
    axes.set_ylabel("actions")
    axes.legend(fontsize="small")
    return figure


def recovery_figure(stats: PaperStats) -> Figure:
    figure, axes = new_figure("P(edit eventually succeeds | k consecutive failed edits)")
    for group in shown_groups(stats):
        ks = [k for k in RECOVERY_K if group.edit_recovery.get(k) is not None]
        values = [100 * (group.edit_recovery[k] or 0.0) for k in ks]
        axes.plot(ks, values, marker="o", label=group.name)
    axes.set_xticks(list(RECOVERY_K))
    axes.set_xlabel("k consecutive failed edits")
    axes.set_ylabel("% recovered")
    axes.set_ylim(0, 105)
    axes.legend()
    return figure


def cost_figure(stats: PaperStats) -> Figure:
    figure, axes = new_figure("cost per instance")
    for group in shown_groups(stats):
        axes.hist(group.costs, bins=20, alpha=0.6, label=group.name)
    axes.set_xlabel("cost ($)")
    axes.set_ylabel("instances")
    axes.legend()
    return figure


def figures(stats: PaperStats) -> dict[str, Figure]:
    """Every figure by name (PLOT_NAMES); raises PlotsUnavailable without matplotlib."""
    return {
        "turns": turns_figure(stats),
        "categories_by_turn": categories_figure(stats),
        "edit_recovery": recovery_figure(stats),
        "cost": cost_figure(stats),
    }


def png_bytes(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def write_plots(stats: PaperStats, directory: Path) -> list[Path]:
    """`<directory>/<name>.png` for every figure; the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, figure in figures(stats).items():
        path = directory / f"{name}.png"
        path.write_bytes(png_bytes(figure))
        written.append(path)
    return written
