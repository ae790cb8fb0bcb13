"""Localization: BM25 over the repository's files (paths and contents), then over the functions
and other targets (structure.py: candidates.py for Python, declarations.py for the languages
tree-sitter parses) of the best files; what the issue names comes first. The model then chooses one of the
candidates from a numbered skeleton (file -> functions with signatures)."""

from __future__ import annotations

import re

from swe_aci.aci.syntax import LANGUAGES
from swe_aci.pipeline.issue_examples import mentions
from swe_aci.pipeline.skeleton import Location
from swe_aci.pipeline.structure import targets
from swe_aci.retrieval.bm25 import rank
from swe_aci.retrieval.documents import Document

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a path of a file of the languages tree-sitter parses, absolute ones (a stack trace's) included
SOURCE_PATH = re.compile(
    r"(?<![\w.])(/?(?:[\w.-]+/)*[\w-]+(?:"
    + "|".join(re.escape(ending) for ending in sorted(LANGUAGES, key=len, reverse=True))
    + r"))(?!\w)"
)


def candidate_locations(
    issue: str, documents: list[Document], files: int, functions: int
) -> list[Location]:
    """The functions, methods, module-level assignments and class attributes most likely to
    hold the bug, best first, at most `functions` of them. Files the issue names (a path, a
    traceback frame) come first, then BM25's best; within them, what a traceback frame names,
    then what the issue names, then BM25's order."""
    named = mentions(issue)
    ranked = [ranked.document for ranked in rank(issue, documents)]
    paths = (*named.paths, *SOURCE_PATH.findall(issue))
    ranked.sort(key=lambda document: not mentioned_path(document.path, paths))
    best_files = ranked[:files]
    found = [
        location for document in best_files for location in targets(document.path, document.text)
    ]
    if not found:
        return []
    by_label = {location.label: location for location in found}
    scored = rank(issue, [Document(location.label, location.source) for location in found])
    ordered = [by_label[ranked.document.path] for ranked in scored]
    words = set(IDENTIFIER.findall(issue))
    frames = set(named.names)
    # stable sorts: BM25's order kept within each rank
    ordered.sort(key=lambda location: (location.name not in frames, location.name not in words))
    return ordered[:functions]


def mentioned_path(path: str, paths: tuple[str, ...]) -> bool:
    """Whether the issue's `paths` (absolute ones from a traceback included) name `path`."""
    return any(
        mentioned == path or mentioned.endswith("/" + path) or path.endswith("/" + mentioned)
        for mentioned in paths
    )


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
        if location.kind == "function":
            line = f"  {name}({location.signature.partition('(')[2]}"
        else:  # an assignment or a class's attributes: the name and the code's start
            line = f"  {name} ({location.kind}): {location.signature}"
        by_file.setdefault(location.path, []).append(line)
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
