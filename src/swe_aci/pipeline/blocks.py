"""Edits of a few lines: the model is shown the numbered region around the lines that match the
issue and answers search/replace blocks (the exact old lines, the new lines). A block applies
where its old lines stand exactly once in the file (or, failing that, once when indentation is
ignored, without the lines its two sides share, or as the part of one line: `placement`, each
recorded); each applied block leaves the file parsing (structure.py: Python's `ast`, tree-sitter
for the other languages) and passes the lint guardrail (Python), or is dropped with the
reason."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from swe_aci.aci.lint import Linter, introduced_errors
from swe_aci.pipeline import structure
from swe_aci.pipeline.repair import Dropped, Edit
from swe_aci.pipeline.skeleton import parse

# `12 | x`, `line 12: x`, and `3-7 | ...` (a folded docstring's lines)
NUMBERED = re.compile(r"^\s*(?:line\s+)?\d+(?:-\d+)? ?[|:] ?", re.IGNORECASE)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@functools.cache
def block_pattern(language: str | None) -> re.Pattern[str]:
    """A search/replace block, after an optional path line naming a file of `language`."""
    endings = sorted(structure.suffixes(language or structure.PYTHON), key=len, reverse=True)
    path_end = "|".join(map(re.escape, endings))
    return re.compile(
        rf"(?:^(?P<path>[^\n<>=`]*(?:{path_end}))[ \t]*\n(?:```[\w]*\n)?)?"
        r"^<{5,9}[^\n]*\n(?P<old>.*?)^={5,9}(?P<inline>[ \t]+\S[^\n]*)?[ \t]*\n"
        r"(?P<new>.*?)^>{5,9}[^\n]*$",
        re.DOTALL | re.MULTILINE,
    )


@dataclass(frozen=True)
class Block:
    path: str
    old: str
    new: str


def numbered(text: str, start: int, end: int, folded: frozenset[int] = frozenset()) -> str:
    """Lines start..end (1-based, inclusive) of `text`, each as `<number> | <line>`; a run of
    three or more lines of `folded` (docstrings) as one `<first>-<last> | ...` line (the
    docstring's indentation kept)."""
    lines = text.splitlines()
    last = min(end, len(lines))
    shown: list[tuple[str, str]] = []
    number = max(start, 1)
    while number <= last:
        run = number
        while number in folded and run + 1 <= last and run + 1 in folded:
            run += 1
        if run - number >= 2:
            line = lines[number - 1]
            shown.append((f"{number}-{run}", line[: len(line) - len(line.lstrip())] + "..."))
            number = run + 1
        else:
            shown.append((str(number), lines[number - 1]))
            number += 1
    width = max((len(label) for label, _ in shown), default=0)
    return "\n".join(f"{label:>{width}} | {line}" for label, line in shown)


def region(
    text: str,
    start: int,
    end: int,
    issue: str,
    size: int,
    prose: frozenset[int] = frozenset(),
    focus: int | None = None,
) -> tuple[int, int]:
    """The window of `size` lines of code within start..end (the lines of `prose`, docstrings
    and comments, are not counted, neither in its size nor in its score) holding most of the
    issue's words, and the line `focus` (where the reproduction fails) when it is in the span;
    the whole span when it is short enough. A long function's docstring repeats the issue's
    words and would be shown instead of its code."""
    code = [n for n in range(start, end + 1) if n not in prose] or list(range(start, end + 1))
    if len(code) <= size:
        return start, end
    words = set(WORD.findall(issue))
    lines = text.splitlines()
    scores = [len(words & set(WORD.findall(lines[n - 1]))) for n in code]
    first, last = 0, len(code) - size  # the window's first index into `code`
    if focus is not None and focus in code:
        at = code.index(focus)
        first, last = max(0, at - size + 1), min(last, at)
    best, best_score = first, -1
    for offset in range(first, last + 1):
        window = sum(scores[offset : offset + size])
        if window > best_score:
            best, best_score = offset, window
    return code[best], code[best + size - 1]


def docstring_lines(text: str) -> frozenset[int]:
    """The line numbers of the Python docstrings of `text`."""
    found: set[int] = set()
    tree = parse(text)
    for node in ast.walk(tree) if tree is not None else ():
        documented = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        if isinstance(node, documented) and ast.get_docstring(node, clean=False) is not None:
            first = node.body[0]
            found.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return frozenset(found)


def comment_lines(text: str) -> frozenset[int]:
    """The line numbers of `text` that hold a comment alone."""
    return frozenset(
        number
        for number, line in enumerate(text.splitlines(), start=1)
        if line.lstrip().startswith(("#", "//", "/*", "* "))
    )


def parse_blocks(reply: str, default_path: str) -> list[Block]:
    """The search/replace blocks of a reply; a block without a path line edits `default_path`.
    Line-number prefixes copied from the numbered region are stripped; the markers' words are
    not checked (a small model writes `<<<<<<< HEAD` as often as `<<<<<<< SEARCH`, and the
    first new line on the `=======` line itself)."""
    blocks = []
    for match in block_pattern(structure.language(default_path)).finditer(reply):
        inline = match.group("inline")  # `=======    x = 1`: the first new line after the marker
        new = f"{inline}\n{match.group('new')}" if inline else match.group("new")
        old, new = strip_numbers(match.group("old")), strip_numbers(new)
        if old.strip() or new.strip():
            path = (match.group("path") or "").strip().strip("`*# ") or default_path
            blocks.append(Block(path, old, new))
    return blocks


def strip_numbers(text: str) -> str:
    lines = text.splitlines(keepends=True)
    if lines and all(NUMBERED.match(line) for line in lines if line.strip()):
        return "".join(NUMBERED.sub("", line, count=1) for line in lines)
    return text


Span = tuple[int, int]  # first and last line (1-based, inclusive)


@dataclass(frozen=True)
class Match:
    """Where a block's old lines stand: the index of the first line, how many, whether they
    matched with their indentation, and the note saying how they matched ("" when exactly and
    once)."""

    index: int
    count: int
    exact: bool
    how: str


def find(text: str, old: str, shown: tuple[Span, ...] = ()) -> Match | None:
    """Where `old`'s lines stand in `text`: exactly once, or once within the lines `shown` to
    the model (a function's lines often repeat in a sibling, e.g. `wcswidth` and `wcstwidth`);
    else the same ignoring indentation; else None."""
    lines = text.splitlines(keepends=True)
    wanted = old.splitlines()
    while wanted and not wanted[-1].strip():
        wanted.pop()
    while wanted and not wanted[0].strip():
        wanted.pop(0)
    if not wanted:
        return None
    count = len(wanted)
    for exact, same in (
        (True, lambda a, b: a.rstrip() == b.rstrip()),
        (False, lambda a, b: a.strip() == b.strip()),
    ):
        hits = [
            index
            for index in range(len(lines) - count + 1)
            if all(same(lines[index + k].rstrip("\n"), wanted[k]) for k in range(count))
        ]
        inside = [
            index
            for index in hits
            if any(first <= index + 1 and index + count <= last for first, last in shown)
        ]
        notes = [] if exact else ["ignoring indentation"]
        if len(hits) == 1:
            return Match(hits[0], count, exact, ", ".join(notes))
        if len(inside) == 1:
            notes.append(f"the one of {len(hits)} places within the lines shown")
            return Match(inside[0], count, exact, ", ".join(notes))
    return None


def reindented(new: str, old: str, found_first_line: str) -> str:
    """`new` shifted by the indentation the file has and `old` lacked (or had too much of)."""
    first_old = next((line for line in old.splitlines() if line.strip()), "")
    delta = indentation(found_first_line) - indentation(first_old)
    result = []
    for line in new.splitlines():
        if not line.strip():
            result.append("")
        elif delta >= 0:
            result.append(" " * delta + line)
        else:
            result.append(line[min(-delta, indentation(line)) :])
    return "\n".join(result) + "\n"


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def placement(text: str, block: Block, shown: tuple[Span, ...]) -> tuple[int, int, str, str] | None:
    """Where `block` goes in `text`: the index of the first line it replaces, how many, the
    new lines and how its old lines matched (find), tried as written, then without the lines
    its old and new sides share (a small model copies the whole region shown, folded
    docstring included, to change one line of it); else, when its old text is one line's part
    (`obj.f(x)` of `y = obj.f(x)`), that line, changed within it by a one-line replacement or
    replaced by the new lines; None when it goes nowhere."""
    lines = text.splitlines(keepends=True)
    tries = [(block, "")]
    core = trimmed(block)
    if core is not None:
        tries.append((core, "the lines it does not change left out"))
    for each, note in tries:
        found = find(text, each.old, shown)
        if found is None:
            continue
        new = each.new if found.exact else reindented(each.new, each.old, lines[found.index])
        if new and not new.endswith("\n"):
            new += "\n"
        how = ", ".join(part for part in (note, found.how) if part)
        return found.index, found.count, new, how
    for each, _note in tries:
        index = fragment_line(lines, each.old, shown)
        if index is None:
            continue
        fragment, replacement = each.old.strip(), each.new.strip("\n")
        part = f"its old text is part of line {index + 1}"
        if "\n" not in replacement:
            changed = lines[index].replace(fragment, replacement.strip(), 1)
            return index, 1, changed, f"{part}: changed within it"
        return index, 1, reindented(each.new, each.old, lines[index]), f"{part}: the line replaced"
    return None


def trimmed(block: Block) -> Block | None:
    """`block` without the leading and trailing lines its old and new sides share; None when
    they share none, or nothing of the old side is left to find."""
    old, new = block.old.splitlines(), block.new.splitlines()
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    kept_old, kept_new = old[start : len(old) - end], new[start : len(new) - end]
    if not (start or end) or not any(line.strip() for line in kept_old):
        return None
    return Block(
        block.path,
        "".join(f"{line}\n" for line in kept_old),
        "".join(f"{line}\n" for line in kept_new),
    )


def fragment_line(lines: list[str], old: str, shown: tuple[Span, ...]) -> int | None:
    """The one line (in the file, or within the lines `shown`) that holds `old`, a single line,
    as a part of it: two names at least (`x` alone says nothing of where it goes)."""
    wanted = [line for line in old.splitlines() if line.strip()]
    if len(wanted) != 1 or len(WORD.findall(wanted[0])) < 2:
        return None
    fragment = wanted[0].strip()
    hits = [index for index, line in enumerate(lines) if fragment in line]
    if len(hits) == 1:
        return hits[0]
    inside = [index for index in hits if any(a <= index + 1 <= b for a, b in shown)]
    return inside[0] if len(inside) == 1 else None


def edit_problem(
    text: str, candidate: str, path: str, replaced: Span, lines: int, linter: Linter | None
) -> str | None:
    """Why `candidate`, the file `text` once its lines `replaced` became `lines` lines, is no
    edit to keep: it no longer parses, or it adds a lint error (Python); None when it is fine."""
    first, last = replaced
    problem = structure.syntax_problem(text, candidate, path, first, last, lines)
    if problem is not None:
        return problem
    if linter is None or structure.language(path) != structure.PYTHON:
        return None
    errors = introduced_errors(
        linter.errors(text, path), linter.errors(candidate, path), first, last, lines
    )
    return f"lint: {errors[0].describe()} (line {errors[0].line})" if errors else None


def apply_blocks(
    texts: dict[str, str],
    blocks: list[Block],
    linter: Linter | None,
    shown: Mapping[str, tuple[Span, ...]] | None = None,
) -> tuple[dict[str, str], list[str]]:
    """The files after every block that applies, and a note per block (applied, matched
    ignoring indentation, dropped and why). Dropped when none applies. `shown`: the lines of
    each file the model was shown (where a block's old lines stand in several places)."""
    current = dict(texts)
    notes = []
    for number, block in enumerate(blocks, start=1):
        if block in blocks[: number - 1]:
            notes.append(f"block {number}: a repeat of block {blocks.index(block) + 1}, skipped")
            continue
        if block.path not in current and len(texts) == 1:
            # a path line naming no file shown (a small model copies or garbles the example): one
            # file was shown, it is that
            block = replace(block, path=next(iter(texts)))
            notes.append(f"block {number}: its path line read as {block.path}, the file shown")
        elif block.path not in current:
            notes.append(f"block {number}: dropped: {block.path} is not a file shown")
            continue
        text = current[block.path]
        placed = placement(text, block, (shown or {}).get(block.path, ()))
        if placed is None:
            notes.append(f"block {number}: dropped: its old lines do not match the file")
            continue
        index, count, new, how = placed
        lines = text.splitlines(keepends=True)
        candidate = "".join([*lines[:index], new, *lines[index + count :]])
        if candidate == text:
            notes.append(f"block {number}: dropped: its new lines are the old ones")
            continue
        replaced = (index + 1, index + count)
        problem = edit_problem(text, candidate, block.path, replaced, new.count("\n"), linter)
        level = reindented(new, new, lines[index]) if new.strip() and index < len(lines) else new
        if problem is not None and level != new:
            # a small model often writes the new lines a space or two off the old lines' level
            shifted = "".join([*lines[:index], level, *lines[index + count :]])
            if not edit_problem(text, shifted, block.path, replaced, level.count("\n"), linter):
                candidate, problem = shifted, None
                how = ", ".join(
                    part for part in (how, "its new lines shifted to the old lines' level") if part
                )
        if problem is not None:
            notes.append(f"block {number}: dropped: {problem}")
            continue
        current[block.path] = candidate
        where = f"lines {index + 1}-{index + count}"
        notes.append(f"block {number}: applied at {where}" + (f" ({how})" if how else ""))
    if current == texts:
        reasons = "; ".join(notes) if notes else "the reply holds no search/replace block"
        raise Dropped(reasons)
    return current, notes


def block_edit(
    texts: dict[str, str],
    reply: str,
    default_path: str,
    linter: Linter | None,
    shown: Mapping[str, tuple[Span, ...]] | None = None,
) -> Edit:
    """The checked edit the reply's blocks make to `texts` (the files of which `shown` lines
    were shown)."""
    blocks = parse_blocks(reply, default_path)
    if not blocks:
        raise Dropped("the reply holds no search/replace block")
    new, notes = apply_blocks(texts, blocks, linter, shown)
    changed = {path: text for path, text in new.items() if text != texts[path]}
    if all(
        structure.canonical(text, path) == structure.canonical(texts[path], path)
        for path, text in changed.items()
    ):
        raise Dropped("the blocks change no code (only comments or formatting)")
    canonical = "\n".join(
        f"{path}\n{structure.canonical(text, path)}" for path, text in sorted(changed.items())
    )
    written = sum(block.new.count("\n") for block in dict.fromkeys(blocks))
    return Edit(changed, canonical, written, source="block", notes=tuple(notes))
