"""What a repair may change beyond functions and methods: module-level assignments (constants,
lookup tables) and the class-level statements of a class (its attributes), ranked with the
functions; and the targets a repair sample is asked about: one location, or two at once (an
edit spanning both)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from swe_aci.pipeline.skeleton import Location, locations, parse

SIGNATURE_CHARS = 60


def targets(path: str, text: str) -> list[Location]:
    """Every function and method of `text`, then its module-level assignments and the
    class-level statements of each class that has any, in file order within each kind."""
    tree = parse(text)
    if tree is None:
        return []
    lines = text.splitlines(keepends=True)
    found = locations(path, text)
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            names = assigned_names(node)
            if names and not all(name.startswith("__") for name in names):
                found.append(span(path, lines, ",".join(names), node, node, "assignment"))
        elif isinstance(node, ast.ClassDef):
            own = [
                statement
                for statement in node.body
                if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign)
            ]
            if own:
                found.append(span(path, lines, node.name, node, own[-1], "class"))
    return found


def assigned_names(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> list[str]:
    nodes = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [name.id for target in nodes for name in ast.walk(target) if isinstance(name, ast.Name)]


def span(
    path: str, lines: list[str], name: str, first: ast.stmt, last: ast.stmt, kind: str
) -> Location:
    start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))])
    end = last.end_lineno or last.lineno
    source = "".join(lines[start - 1 : end])
    head = " ".join(source.split())
    summary = head if len(head) <= SIGNATURE_CHARS else head[: SIGNATURE_CHARS - 3] + "..."
    return Location(path, name, summary, start, end, first.col_offset, source, kind)


@dataclass(frozen=True)
class Target:
    """What one repair sample is asked to change: one location, or two (an edit spanning both,
    always by blocks)."""

    locations: tuple[Location, ...]

    @property
    def first(self) -> Location:
        return self.locations[0]

    @property
    def label(self) -> str:
        return " + ".join(location.label for location in self.locations)

    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys(location.path for location in self.locations))

    def rewrites(self, max_lines: int) -> bool:
        """Whether a whole-function rewrite is asked: one Python function of at most
        `max_lines` (the functions of other languages are edited by blocks)."""
        location = self.first
        return (
            len(self.locations) == 1
            and location.kind == "function"
            and location.path.endswith(".py")
            and location.end - location.start + 1 <= max_lines
        )


def search_order(candidates: list[Location], locations_tried: int) -> list[Target]:
    """The targets in the order they are tried: the best `locations_tried` candidates one by
    one, then (when more than one is tried) the first two together."""
    order = [Target((location,)) for location in candidates[:locations_tried]]
    if len(order) > 1:
        order.append(Target((candidates[0], candidates[1])))
    return order
