"""The wrong variable of fix_patterns.py: a variable read where another of the target, named
alike, was meant (backoff's `max_time is not None` where `max_time_value = _maybe_call(max_time)`
holds the value). "Change identifier used" is the most common single-statement bug of both
ManySStuBs4J (Karampatsis and Sutton, MSR 2020) and TSSB-3M (Richter and Wehrheim, MSR 2022);
most such mistakes pick a name that shares its words with the right one, so only those are
offered: one name's words all in the other's (`max_time`, `max_time_value`), or the other's
plural (`item`, `items`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from swe_aci.pipeline.skeleton import Location
from swe_aci.pipeline.source_edits import Change, Source, function_at, within

PATTERN = "similar name"
WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def similar_name_changes(tree: ast.Module, source: Source, location: Location) -> Iterator[Change]:
    """Each read of a variable of the target function (a parameter or a name it assigns, in it
    or a function nested in it) made another of its variables named alike that is a parameter
    or assigned on an earlier line."""
    function = function_at(tree, location)
    if function is None:
        return
    bound = _bindings(function)
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            continue
        if node.id not in bound or not within(node, location):
            continue
        start, end = source.span(node)
        for other, first_line in bound.items():
            if other != node.id and first_line < node.lineno and alike(node.id, other):
                yield Change(start, end, other, PATTERN, node.lineno)


def _bindings(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """Each variable the function binds, in it or in a function nested in it -> the first line
    binding it (a parameter's: its line in the signature, before any read in the body)."""
    bound: dict[str, int] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            name = node.arg
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            name = node.id
        else:
            continue
        if name not in {"self", "cls"}:
            bound[name] = min(bound.get(name, node.lineno), node.lineno)
    return bound


def alike(name: str, other: str) -> bool:
    """Whether two names differ as a wrong variable's usually does: all the words of one are
    words of the other, or one is the other's plural."""
    if other in (f"{name}s", f"{name}es") or name in (f"{other}s", f"{other}es"):
        return True
    words, others = _words(name), _words(other)
    return bool(words) and bool(others) and (words < others or others < words)


def _words(name: str) -> frozenset[str]:
    return frozenset(word.lower() for word in WORD.findall(name))
