"""Localization: BM25 over the repository's files (paths and contents), then over the functions
of the best files; names the issue mentions come first. The model then chooses one of the
candidates from a numbered skeleton (file -> functions with signatures)."""

from __future__ import annotations

import re

from swe_aci.pipeline.skeleton import Location, locations
from swe_aci.retrieval.bm25 import rank
from swe_aci.retrieval.documents import Document

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def candidate_locations(
    issue: str, documents: list[Document], files: int, functions: int
) -> list[Location]:
    """The functions most likely to hold the bug, best first, at most `functions` of them."""
    best_files = [ranked.document for ranked in rank(issue, documents)[:files]]
    found = [
        location for document in best_files for location in locations(document.path, document.text)
    ]
    if not found:
        return []
    by_label = {location.label: location for location in found}
    scored = rank(issue, [Document(location.label, location.source) for location in found])
    ordered = [by_label[ranked.document.path] for ranked in scored]
    mentioned = set(IDENTIFIER.findall(issue))
    ordered.sort(key=lambda location: location.name not in mentioned)  # stable: BM25 order kept
    return ordered[:functions]


def named_in(issue: str, candidates: list[Location]) -> list[Location]:
    """The candidates whose name the issue writes as a word."""
    mentioned = set(IDENTIFIER.findall(issue))
    return [location for location in candidates if location.name in mentioned]


def choice_names(candidates: list[Location]) -> list[str]:
    """What the model answers to choose each candidate: its qualified name, or `path::name` when
    two files hold the same name."""
    counts: dict[str, int] = {}
    for location in candidates:
        counts[location.qualname] = counts.get(location.qualname, 0) + 1
    return [
        location.qualname if counts[location.qualname] == 1 else location.label
        for location in candidates
    ]


def skeleton(candidates: list[Location]) -> str:
    """The candidates grouped under their file in order of first appearance, each by the name
    that chooses it and its signature."""
    by_file: dict[str, list[str]] = {}
    for name, location in zip(choice_names(candidates), candidates, strict=True):
        arguments = location.signature.partition("(")[2]
        by_file.setdefault(location.path, []).append(f"  {name}({arguments}")
    return "\n".join("\n".join([path, *lines]) for path, lines in by_file.items())


def choice_grammar(names: list[str]) -> str:
    """GBNF for exactly one of `names` (llama.cpp constrains the reply to it)."""
    options = " | ".join(
        '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"' for name in names
    )
    return f"root ::= {options}"


def chosen_index(reply: str, names: list[str]) -> int | None:
    """The candidate the reply names (the longest name it holds as a word), else None."""
    found = [
        (len(name), -index)
        for index, name in enumerate(names)
        if re.search(rf"(?<![\w.:]){re.escape(name)}(?![\w])", reply)
    ]
    return -max(found)[1] if found else None
