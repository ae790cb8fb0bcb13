"""A GBNF grammar for the search/replace blocks of one sample (llama.cpp constrains the reply to
it, as it does the localizer's answer): each block names one of the files shown, its old lines
are lines shown of that file, copied exactly (their indentation too, without their numbers),
and its new lines are free. A small model otherwise echoes the numbered region until its output
budget ends, or retypes an old line from memory, and the block is dropped. Nothing of the reply
is trusted more for it: the edit goes through the same checks (blocks.py)."""

from __future__ import annotations

from collections.abc import Mapping

from swe_aci.pipeline.blocks import Span

MAX_OLD_LINES = 8  # old lines of a block: a fix of a few lines is anchored by a few
MAX_NEW_LINES = 16
MAX_BLOCKS = 2


ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def literal(text: str) -> str:
    """`text` as a GBNF string literal (a backslash, a quote and control characters escaped)."""
    escaped = "".join(
        ESCAPES.get(char, f"\\x{ord(char):02x}" if ord(char) < 0x20 else char) for char in text
    )
    return f'"{escaped}"'


def shown_runs(text: str, spans: tuple[Span, ...], hidden: frozenset[int]) -> list[list[str]]:
    """The runs of consecutive lines of `text` in `spans` (a line of `hidden`, a folded
    docstring the model sees as `...`, ends a run), each line without its line break."""
    lines = text.splitlines()
    runs: list[list[str]] = []
    for first, last in spans:
        run: list[str] = []
        for number in range(first, min(last, len(lines)) + 1):
            if number in hidden:
                runs.append(run)
                run = []
            else:
                run.append(lines[number - 1].rstrip())
        runs.append(run)
    return [run for run in runs if run]


def blocks_grammar(
    texts: Mapping[str, str],
    spans: Mapping[str, tuple[Span, ...]],
    hidden: Mapping[str, frozenset[int]],
) -> str:
    """GBNF: one to MAX_BLOCKS blocks, each `path`, `<<<<<<< SEARCH`, one to MAX_OLD_LINES
    consecutive lines shown of that path, `=======`, up to MAX_NEW_LINES lines (none starting
    with a marker's `>` or `=`), `>>>>>>> REPLACE`. Rule `o<file>-<run>-<line>-<k>`: one to k
    lines from that line on."""
    rules = [f"root ::= block{' block?' * (MAX_BLOCKS - 1)}"]
    alternatives = []
    for file, (path, shown) in enumerate(sorted(spans.items())):
        starts = []
        for number, run in enumerate(shown_runs(texts[path], shown, hidden.get(path, frozenset()))):
            prefix = f"o{file}-{number}"
            for index, line in enumerate(run):
                rules.append(f"{prefix}-{index} ::= {literal(line + chr(10))}")
                longest = min(MAX_OLD_LINES, len(run) - index)
                for left in range(1, longest + 1):
                    rest = f" {prefix}-{index + 1}-{left - 1}?" if left > 1 else ""
                    rules.append(f"{prefix}-{index}-{left} ::= {prefix}-{index}{rest}")
                starts.append(f"{prefix}-{index}-{longest}")
        if not starts:
            continue
        rules.append(f"old{file} ::= " + " | ".join(starts))
        alternatives.append(
            f'{literal(path)} "\\n<<<<<<< SEARCH\\n" old{file} "=======\\n"'
            f' new{{0,{MAX_NEW_LINES}}} ">>>>>>> REPLACE\\n"'
        )
    rules.append("block ::= " + " | ".join(f"({alternative})" for alternative in alternatives))
    rules.append('new ::= ([^>=\\n] [^\\n]*)? "\\n"')
    return "\n".join(rules) + "\n"
