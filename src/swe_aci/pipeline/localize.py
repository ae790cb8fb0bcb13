"""Localization: BM25 over the repository's files (paths and contents, compound identifiers
counted by their words too), then over the functions and other targets (structure.py:
candidates.py for Python, declarations.py for the languages tree-sitter parses) of the best
files; what holds the issue's inline code and what the issue names come first. The model then
chooses one of the candidates from a numbered skeleton (file -> functions with signatures)."""

from __future__ import annotations

import re

from swe_aci.aci.syntax import LANGUAGES
from swe_aci.pipeline.code_spans import SpanScores, span_scores
from swe_aci.pipeline.issue_examples import mentions
from swe_aci.pipeline.skeleton import Location
from swe_aci.pipeline.structure import targets
from swe_aci.retrieval.bm25 import IDENTIFIER, rank
from swe_aci.retrieval.documents import Document

DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)")  # `Version.replace`
# a path of a file of the languages tree-sitter parses, absolute ones (a stack trace's) included
SOURCE_PATH = re.compile(
    r"(?<![\w.])(/?(?:[\w.-]+/)*[\w-]+(?:"
    + "|".join(re.escape(ending) for ending in sorted(LANGUAGES, key=len, reverse=True))
    + r"))(?!\w)"
)


def candidate_locations(
    issue: str, documents: list[Document], files: int, functions: int
) -> tuple[list[Location], SpanScores]:
    """The functions, methods, module-level assignments and class attributes most likely to
    hold the bug, best first, at most `functions` of them, and the weights of the issue's code
    over them. Files the issue names (a path, a traceback frame) come first, then BM25's best;
    within them, what holds the most of the issue's code (code_spans.py), then what a
    traceback frame names, then what the issue writes dotted (`Class.method`,
    `package.function`), then any other name the issue writes, then BM25's order."""
    named = mentions(issue)
    ranked = [ranked.document for ranked in rank(issue, documents, word_parts=True)]
    paths = (*named.paths, *SOURCE_PATH.findall(issue))
    ranked.sort(key=lambda document: not mentioned_path(document.path, paths))
    best_files = ranked[:files]
    found = [
        location for document in best_files for location in targets(document.path, document.text)
    ]
    ordered, spans = ordered_locations(issue, found)
    return ordered[:functions], spans


def ordered_locations(issue: str, found: list[Location]) -> tuple[list[Location], SpanScores]:
    """`found` in the localizer's order (candidate_locations) and the weights of the issue's
    code over them."""
    if not found:
        return [], SpanScores({})
    spans = span_scores(issue, found)
    by_label = {location.label: location for location in found}
    scored = rank(
        issue,
        [Document(location.label, location.source) for location in found],
        word_parts=True,
    )
    ordered = [by_label[ranked.document.path] for ranked in scored]
    words = set(IDENTIFIER.findall(issue))
    dotted = dotted_mentions(issue)
    frames = set(mentions(issue).names)
    weight = {location.label: spans.of(location) for location in ordered}
    # stable sorts: BM25's order kept within each rank
    ordered.sort(
        key=lambda location: (
            -weight[location.label],
            location.name not in frames,
            not written_dotted(location, dotted),
            location.name not in words,
        )
    )
    return ordered, spans


def dotted_mentions(issue: str) -> set[tuple[str, str]]:
    """Each `a.b.c` the issue writes, as every (part before, rest) split: ("", "a.b.c"),
    ("a", "b.c") and ("b", "c")."""
    return {
        (parts[start - 1] if start else "", ".".join(parts[start:]))
        for chain in DOTTED.findall(issue)
        for parts in [chain.split(".")]
        for start in range(len(parts))
    }


def written_dotted(location: Location, dotted: set[tuple[str, str]]) -> bool:
    """Whether the issue writes a method as `Class.method` (or `module.Class.method`), or a
    module's function or assignment after its module or package (`tomlkit.key` for
    tomlkit/api.py's `key`)."""
    if "." in location.qualname:
        return any(rest == location.qualname for _, rest in dotted)
    modules = {part.rsplit(".", 1)[0] for part in location.path.split("/")}
    return any(rest == location.qualname and prefix in modules for prefix, rest in dotted)


def mentioned_path(path: str, paths: tuple[str, ...]) -> bool:
    """Whether the issue's `paths` (absolute ones from a traceback included) name `path`."""
    return any(
        mentioned == path or mentioned.endswith("/" + path) or path.endswith("/" + mentioned)
        for mentioned in paths
    )


def issue_choice(
    issue: str, candidates: list[Location], spans: SpanScores
) -> tuple[Location, str] | None:
    """The candidate the issue itself picks, and why: the only one whose name it writes, or
    among those the only one it writes dotted (`Version.replace` beside a `parse` it also
    names); None when the model has to choose. A class written dotted is not picked: the
    issue's `module.Class` may mean its constructor or a method as much as its class body.
    Where another candidate holds more of the issue's code (`spans`) than the one it names,
    that one is picked: the issue names the entry point it called (`parse.parse`), its code
    (`^`, `<`) the function that handles it (`Parser._handle_field`)."""
    picked = named_choice(issue, candidates)
    if picked is None:
        return None
    held = max(candidates, key=spans.of)
    if spans.of(held) > spans.of(picked[0]):
        written = ", ".join(f"`{span}`" for span in spans.held(held))
        return held, f"it holds the issue's code {written}, more than {picked[0].qualname} does"
    return picked


def named_choice(issue: str, candidates: list[Location]) -> tuple[Location, str] | None:
    """The candidate the issue's names pick (issue_choice), if any."""
    mentioned = set(IDENTIFIER.findall(issue))
    named = [location for location in candidates if location.name in mentioned]
    if len(named) == 1 and named[0].kind != "class":
        return named[0], "the issue names one candidate"
    dotted = dotted_mentions(issue)
    written = [
        location
        for location in named
        if location.kind != "class" and written_dotted(location, dotted)
    ]
    if len(written) == 1:
        return written[0], "the issue writes one candidate dotted"
    return None


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
