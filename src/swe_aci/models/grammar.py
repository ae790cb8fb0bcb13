"""GBNF grammar for the thought-action reply format, for llama.cpp's `grammar` request field.

A reply is `DISCUSSION`, a few lines of free text, then exactly one bare fenced block holding the
command, then at most a newline. A reply cut off by `max_tokens` would be invalid, so the grammar
bounds the thought: printable ASCII (each character is at least one token's worth of text, so a
character bound is a token bound), at most `thought_token_budget(max_tokens)` characters with the
header and the opening fence, which leaves the rest of `max_tokens` to the command. The command is
unbounded: it may be a long `edit` block."""

from __future__ import annotations

HEADER = "DISCUSSION\n"
FENCE = "```"
LINE_CHARS = 200
MIN_LINE_CHARS = 16
THOUGHT_SHARE = 0.5

_TEMPLATE = r"""root ::= "DISCUSSION\n" thought "```\n" command "```" "\n"?
thought ::= tbody "\n" tline{0,MORE}
tline ::= tbody? "\n"
tbody ::= tstart tchar{0,REST1} | "`" tstart tchar{0,REST2} | "``" tstart tchar{0,REST3}
tstart ::= [!-_a-~ \t]
tchar ::= [ -~\t]
command ::= cstart cchar* "\n" cline*
cline ::= (cstart cchar*)? "\n"
cstart ::= [^`\n] | "`" [^`\n] | "``" [^`\n]
cchar ::= [^\n]
"""


def thought_token_budget(max_tokens: int) -> int:
    """Characters (hence at most that many tokens) the thought may take, header included."""
    return int(max_tokens * THOUGHT_SHARE)


def thought_shape(max_tokens: int) -> tuple[int, int]:
    """(lines, characters per line) of the longest thought that fits the thought budget."""
    budget = thought_token_budget(max_tokens) - len(HEADER) - len(FENCE) - 1
    line_chars = min(LINE_CHARS, budget - 1)
    if line_chars < MIN_LINE_CHARS:
        raise ValueError(f"max_tokens={max_tokens} is too small for a thought-action reply")
    return budget // (line_chars + 1), line_chars


def thought_action_grammar(max_tokens: int) -> str:
    """The GBNF text for replies of at most `max_tokens` tokens."""
    lines, line_chars = thought_shape(max_tokens)
    text = _TEMPLATE.replace("MORE", str(lines - 1))
    # A thought line never opens with a fence: 0-2 backticks, then another character, then more.
    for ticks in range(3):
        text = text.replace(f"REST{ticks + 1}", str(line_chars - 1 - ticks))
    return text
