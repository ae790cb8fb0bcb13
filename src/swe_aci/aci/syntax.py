"""The edit guardrail for languages other than Python: tree-sitter's parse errors.

A file's language comes from its name (`LANGUAGES`); its grammar from the official per-language
PyPI wheels (tree-sitter-javascript, -typescript, -go, ...), imported on first use, so importing
swe_aci loads none of them. What tree-sitter marks as wrong becomes a `ParseError`: an ERROR node
(tokens it could not fit into the grammar, reported once for the outermost node) or a MISSING node
(a token it had to assume, such as a closing `}`). Nothing is run: the text is only parsed, on the
host, in memory.

A `.h` header is C or C++: each text is parsed as C and, if that shows errors, as C++, and the
grammar with fewer errors counts.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Tree

SNIPPET_CHARS = 30  # of the offending text, quoted in a one-line error


class Grammar(NamedTuple):
    name: str  # as the model reads it: "Go files"
    module: str  # the PyPI wheel's module
    function: str  # the module's function returning the language pointer


GRAMMARS = {
    "javascript": Grammar("JavaScript", "tree_sitter_javascript", "language"),
    "typescript": Grammar("TypeScript", "tree_sitter_typescript", "language_typescript"),
    "tsx": Grammar("TSX", "tree_sitter_typescript", "language_tsx"),
    "go": Grammar("Go", "tree_sitter_go", "language"),
    "rust": Grammar("Rust", "tree_sitter_rust", "language"),
    "java": Grammar("Java", "tree_sitter_java", "language"),
    "c": Grammar("C", "tree_sitter_c", "language"),
    "cpp": Grammar("C++", "tree_sitter_cpp", "language"),
    "ruby": Grammar("Ruby", "tree_sitter_ruby", "language"),
    "php": Grammar("PHP", "tree_sitter_php", "language_php"),  # PHP inside HTML, from `<?php`
}

# File suffix (lower case) or whole file name -> the grammars that may parse it, in order.
LANGUAGES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), ("javascript",)),
    **dict.fromkeys((".ts", ".mts", ".cts"), ("typescript",)),
    ".tsx": ("tsx",),
    ".go": ("go",),
    ".rs": ("rust",),
    ".java": ("java",),
    ".c": ("c",),
    ".h": ("c", "cpp"),
    **dict.fromkeys(
        (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".inl"), ("cpp",)
    ),
    **dict.fromkeys((".rb", ".rake", ".gemspec", ".ru", "Rakefile", "Gemfile"), ("ruby",)),
    ".php": ("php",),
}


class GrammarUnavailable(Exception):
    """A grammar could not be loaded (a missing or incompatible wheel); one line."""


@dataclass(frozen=True, order=True)
class ParseError:
    """One parse error: where it starts (1-based line, byte column), what it is, and the line it
    ends on. Two errors are the same when they start at the same place with the same message:
    the end of an error that spans an edited region moves with the edit, and that alone does not
    make it a new error."""

    line: int
    column: int
    message: str
    end_line: int = field(compare=False)

    def describe(self) -> str:
        lines = f"line {self.line}"
        if self.end_line > self.line:
            lines = f"lines {self.line}-{self.end_line}"
        return f"{lines}: {self.message}"

    def shifted(self, delta: int) -> ParseError:
        return replace(self, line=self.line + delta, end_line=self.end_line + delta)


def grammars_for(path: str) -> tuple[str, ...]:
    """The grammars that check a file of this name; () when none does."""
    name = PurePosixPath(path).name
    return LANGUAGES.get(name) or LANGUAGES.get(PurePosixPath(name).suffix.lower(), ())


def language_name(path: str) -> str | None:
    """How the model is told which check ran ("Go", "C or C++"); None: no grammar."""
    names = [GRAMMARS[grammar].name for grammar in grammars_for(path)]
    return " or ".join(names) or None


class Parsed(NamedTuple):
    grammar: str
    tree: Tree
    errors: tuple[ParseError, ...]


def parse_errors(text: str, path: str) -> tuple[ParseError, ...]:
    """The parse errors of `text` as a file named `path` (sorted), with the grammar that shows the
    fewest when several may parse it. Raises GrammarUnavailable."""
    parsed = parse_tree(text, path)
    return parsed.errors if parsed is not None else ()


def parse_tree(text: str, path: str) -> Parsed | None:
    """The syntax tree of `text` as a file named `path` with its grammar and parse errors, by the
    grammar that shows the fewest when several may parse it; None when no grammar parses such a
    file (the pipeline reads a file's functions from the tree). Raises GrammarUnavailable."""
    best: Parsed | None = None
    data = text.encode("utf-8", "surrogatepass")
    for grammar in grammars_for(path):
        tree = _tree(data, grammar)
        errors = errors_in(tree)
        if best is None or len(errors) < len(best.errors):
            best = Parsed(grammar, tree, errors)
        if not best.errors:
            break
    return best


def errors_of(data: bytes, grammar: str) -> tuple[ParseError, ...]:
    return errors_in(_tree(data, grammar))


def _tree(data: bytes, grammar: str) -> Tree:
    language = _language(grammar)
    from tree_sitter import Parser

    return Parser(language).parse(data)


def errors_in(tree: Tree) -> tuple[ParseError, ...]:
    if not tree.root_node.has_error:
        return ()
    found: list[ParseError] = []
    pending = [tree.root_node]
    while pending:
        node = pending.pop()
        if node.is_error or node.is_missing:
            found.append(_error(node))
            continue
        pending.extend(child for child in node.children if child.has_error or child.is_missing)
    return tuple(sorted(found))


def _error(node: Node) -> ParseError:
    line, column = node.start_point
    end_line, end_column = node.end_point
    if end_column == 0 and end_line > line:
        end_line -= 1  # it ends with a newline: the line before is its last
    if node.is_missing:
        expected = node.type.replace("_", " ") if node.is_named else f"`{node.type}`"
        return ParseError(line + 1, column, f"missing {expected}", line + 1)
    if end_line > line:  # its text reaches lines an edit may change: not part of the message
        return ParseError(line + 1, column, "syntax error", end_line + 1)
    snippet = (node.text or b"").decode("utf-8", "replace").strip()
    if len(snippet) > SNIPPET_CHARS:
        snippet = snippet[: SNIPPET_CHARS - 3] + "..."
    message = f"syntax error at `{snippet}`" if snippet else "syntax error"
    return ParseError(line + 1, column, message, line + 1)


@functools.cache
def _language(grammar: str) -> Language:
    from tree_sitter import Language

    spec = GRAMMARS[grammar]
    try:
        module = importlib.import_module(spec.module)
        return Language(getattr(module, spec.function)())
    except (ImportError, AttributeError, ValueError, TypeError) as error:
        first = (str(error).strip().splitlines() or [""])[0][:200]
        raise GrammarUnavailable(
            f"the tree-sitter grammar for {spec.name} could not be loaded "
            f"({type(error).__name__}: {first})"
        ) from error
