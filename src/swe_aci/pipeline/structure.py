"""What the pipeline knows of a source file, whatever its language: which language it is, its
targets (Python: `ast`, candidates.py; the languages tree-sitter parses: declarations.py),
whether an edit breaks its syntax, its canonical form (two edits that differ only in comments or
formatting are the same) and the fence its code is shown in. The one place the pipeline
dispatches on a file's language.

A repository's language is the one most of its non-test source files are in (Python on a tie);
the pipeline localizes over that language's files only.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable

from swe_aci.aci import syntax
from swe_aci.aci.lint import introduced_errors
from swe_aci.pipeline import candidates, declarations
from swe_aci.pipeline.skeleton import Location, parse
from swe_aci.retrieval.documents import is_test_path

PYTHON = "Python"
# tree-sitter's grammars grouped as a repository mixes them: .js with .ts, .c with .h and .cpp
FAMILIES = {"javascript": "JavaScript", "typescript": "JavaScript", "tsx": "JavaScript", "cpp": "C"}


def language(path: str) -> str | None:
    """The language the pipeline reads `path` as ("Python", "Go", "JavaScript" for JavaScript
    and TypeScript, "C" for C and C++...); None: a file it does not read."""
    if path.endswith(".py"):
        return PYTHON
    grammars = syntax.grammars_for(path)
    if not grammars:
        return None
    return FAMILIES.get(grammars[0], syntax.GRAMMARS[grammars[0]].name)


def repository_language(paths: Iterable[str]) -> str:
    """The language of most of the non-test source files among `paths`; Python on a tie."""
    counts = Counter(
        found for path in paths if not is_test_path(path) and (found := language(path))
    )
    if not counts or counts[PYTHON] >= max(counts.values()):
        return PYTHON
    return counts.most_common(1)[0][0]


def targets(path: str, text: str) -> list[Location]:
    """The file's functions and methods, then its other targets (constants, class fields,
    types), in file order within each kind."""
    if language(path) == PYTHON:
        return candidates.targets(path, text)
    return declarations.targets(path, text)


def syntax_problem(
    before: str, after: str, path: str, start: int, end: int, replacement: int
) -> str | None:
    """Why `after`, the file once lines start..end of `before` became `replacement` lines, no
    longer parses; None when it does. Python: any syntax error; other languages: a parse error
    the edit added (a file already broken is judged by what the edit changes, as the ACI's
    guardrail judges it)."""
    if language(path) == PYTHON:
        return None if parse(after) is not None else "the file no longer parses"
    added = introduced_errors(
        syntax.parse_errors(before, path), syntax.parse_errors(after, path), start, end, replacement
    )
    return f"the file no longer parses ({added[0].describe()})" if added else None


def canonical(text: str, path: str) -> str:
    """The file's code without its comments and formatting: Python's AST; elsewhere the tokens
    tree-sitter reads, comments left out."""
    if language(path) == PYTHON:
        return ast.dump(ast.parse(text))
    parsed = syntax.parse_tree(text, path)
    if parsed is None:
        return text
    tokens: list[str] = []
    pending = [parsed.tree.root_node]
    while pending:
        node = pending.pop()
        if "comment" in node.type:
            continue
        if node.child_count == 0:
            tokens.append((node.text or b"").decode("utf-8", "replace"))
        pending.extend(reversed(node.children))
    return " ".join(tokens)


def fence(path: str) -> str:
    """The name a Markdown fence gives the file's code (`python`, `go`, `typescript`...)."""
    if language(path) == PYTHON:
        return "python"
    grammars = syntax.grammars_for(path)
    return grammars[0] if grammars else ""


def suffixes(language_name: str) -> tuple[str, ...]:
    """The file names' endings of a language (`.go`; `.js`, `.ts`, `.tsx`... for JavaScript)."""
    if language_name == PYTHON:
        return (".py",)
    return tuple(
        ending
        for ending in syntax.LANGUAGES
        if language(f"file{ending}" if ending.startswith(".") else ending) == language_name
    )
