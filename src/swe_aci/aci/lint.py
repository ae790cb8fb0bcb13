"""The edit guardrail's linter: flake8 run in-process on in-memory text.

flake8 is imported on first use. This module drives flake8's checker classes directly (no public
API lints text in memory), so pyproject.toml pins the flake8 major version they were written for.
If flake8 fails, `LintUnavailable` is raised: the guardrail fails closed. Its plugins and options are loaded once per selection
(`--isolated`, so no configuration file of the host or the repository changes the result).
When the selection only holds the guardrail's codes, only the checks that can produce them run
(pyflakes for F..., pycodestyle's indentation check for E11x; E999/E902 come from parsing), which
halves the time on large files compared to running every plugin.

Files of other languages tree-sitter parses (JavaScript, TypeScript, Go, Rust, Java, C, C++, Ruby,
PHP: `aci/syntax.py`) are checked for parse errors instead; Python keeps flake8.
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from swe_aci.aci import syntax
from swe_aci.aci.syntax import GrammarUnavailable, ParseError

if TYPE_CHECKING:
    from argparse import Namespace

    from flake8.plugins.finder import Checkers

INDENTATION_CODE = re.compile(r"E11\d")
PARSE_CODES = ("E999", "E902")
CACHE_SIZE = 32


class LintUnavailable(Exception):
    """flake8 could not check the text; the message names the failure in one line."""


class LintError(NamedTuple):
    line: int
    column: int
    code: str
    message: str

    def describe(self) -> str:
        """The error as the model sees it: `CODE message` (file, line and column stripped)."""
        return f"{self.code} {self.message}"

    def shifted(self, delta: int) -> LintError:
        return self._replace(line=self.line + delta)


Problem = LintError | ParseError  # what a check finds: a flake8 error or a parse error


class Linter:
    """flake8 with a fixed selection for Python files, tree-sitter for the other languages it
    parses; results are cached by checker and content hash, so linting the original of an edit is
    free when that content was linted before (the previous edit's result)."""

    def __init__(self, select: list[str]) -> None:
        self.select = tuple(select)
        self._cache: OrderedDict[str, tuple[Problem, ...]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def language(path: str) -> str | None:
        """The language whose check guards edits of `path` ("Python", "Go"...); None: unchecked."""
        return "Python" if path.endswith(".py") else syntax.language_name(path)

    def errors(self, text: str, filename: str) -> tuple[LintError, ...]:
        """flake8's selected errors of a Python text."""
        return self._cached("flake8", text, lambda: run_flake8(text, filename, self.select))

    def problems(self, text: str, filename: str) -> tuple[Problem, ...]:
        """What the guardrail finds in `text` as the file `filename`: flake8's errors for Python,
        parse errors for the other languages (see `language`). Raises LintUnavailable."""
        if filename.endswith(".py"):
            return self.errors(text, filename)
        grammars = syntax.grammars_for(filename)
        return self._cached(",".join(grammars), text, lambda: run_tree_sitter(text, filename))

    def _cached(self, checker: str, text: str, check: Callable[[], Any]) -> Any:
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16)
        key = f"{checker}:{digest.hexdigest()}"
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        found = check()
        with self._lock:
            self._cache[key] = found
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return found


def introduced_errors(
    before: Iterable[Problem],
    after: Iterable[Problem],
    start: int,
    end: int,
    replacement_lines: int,
) -> list[Problem]:
    """Errors of `after` that the edit of lines start..end (end = start-1: insertion) introduced.

    Errors before the edit are kept above it, dropped inside it, shifted by the line delta below it;
    what remains of them is not new.
    """
    delta = replacement_lines - (end - start + 1)
    previous = set()
    for error in before:
        if error.line < start:
            previous.add(error)
        elif error.line > end:
            previous.add(error.shifted(delta))
    return [error for error in after if error not in previous]


def run_tree_sitter(text: str, filename: str) -> tuple[ParseError, ...]:
    """tree-sitter's parse errors of `text`; LintUnavailable when its grammar cannot load."""
    try:
        return syntax.parse_errors(text, filename)
    except GrammarUnavailable as error:
        raise LintUnavailable(str(error)) from error


def run_flake8(text: str, filename: str, select: tuple[str, ...]) -> tuple[LintError, ...]:
    """The selected flake8 errors of `text`, sorted by position; `# noqa` comments are honoured.
    Raises LintUnavailable when flake8 itself fails (a crashing plugin, a broken install)."""
    try:
        return _flake8_errors(text, filename, select)
    except Exception as error:
        first = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
        raise LintUnavailable(f"flake8 failed: {type(error).__name__}: {first}") from error


def _flake8_errors(text: str, filename: str, select: tuple[str, ...]) -> tuple[LintError, ...]:
    from flake8.checker import FileChecker
    from flake8.processor import FileProcessor
    from flake8.violation import Violation

    checkers, options = _machinery(select)
    lines = io.StringIO(text, newline=None).readlines()

    class InMemoryChecker(FileChecker):
        def _make_processor(self) -> FileProcessor:
            return FileProcessor(self.filename, self.options, lines=lines)

    _, results, _ = InMemoryChecker(
        filename=filename, plugins=checkers, options=options
    ).run_checks()
    found = set()
    for code, line, column, message, physical_line in results:
        if not code.startswith(select):
            continue
        violation = Violation(code, filename, line, column, message, physical_line or "")
        if violation.is_inline_ignored(disable_noqa=False):
            continue
        found.add(LintError(line, column, code, message))
    return tuple(sorted(found))


@functools.cache
def _machinery(select: tuple[str, ...]) -> tuple[Checkers, Namespace]:
    from flake8.options.parse_args import parse_args

    plugins, options = parse_args(["--isolated", f"--select={','.join(select)}"])
    return _relevant_checkers(plugins.checkers, select), options


def _relevant_checkers(checkers: Checkers, select: tuple[str, ...]) -> Checkers:
    """Only the checks that can report the selected codes, when that set is known exactly."""
    from flake8.plugins.finder import Checkers, LoadedPlugin

    known = all(
        code.startswith("F") or INDENTATION_CODE.fullmatch(code) or code in PARSE_CODES
        for code in select
    )
    pycodestyle_logical = [p for p in checkers.logical_line if p.entry_name == "E"]
    if not known or len(pycodestyle_logical) != 1:
        return checkers
    tree = [p for p in checkers.tree if p.entry_name == "F"] if _any_prefix(select, "F") else []
    logical: list[Any] = []
    if any(INDENTATION_CODE.fullmatch(code) for code in select):
        import pycodestyle

        parameters = {name: True for name in _parameter_names(pycodestyle.indentation)}
        logical = [LoadedPlugin(pycodestyle_logical[0].plugin, pycodestyle.indentation, parameters)]
    return Checkers(tree=tree, logical_line=logical, physical_line=[])


def _any_prefix(select: tuple[str, ...], prefix: str) -> bool:
    return any(code.startswith(prefix) for code in select)


def _parameter_names(function: Any) -> list[str]:
    import inspect

    return list(inspect.signature(function).parameters)
