"""GBNF grammar for a thought-action reply format, for llama.cpp's `grammar` request field.

Built from the format's header and fence (reply_format.py), so it always enforces the format the
parser reads. A reply is the header line, free text, then exactly one bare fenced block holding
the command, then at most a newline. No line of the thought or the command starts with the fence.
An `edit S:E` command must carry its body and `end_of_edit` (the agent would reject it otherwise,
wasting a turn).

A reply cut off by `max_tokens` would be invalid, so the grammar bounds the thought, and only its
total length (a bound per line cut ordinary one-paragraph thoughts mid-word, and small models then
derail). The thought is a line start followed by at most `thought_items(...)` items, each a
printable ASCII character or a line break with the next line's start: an item is at most
`2 + len(fence)` characters, so at most that many tokens whatever the tokenizer, and the thought
never takes more than `THOUGHT_SHARE` of `max_tokens`; the command keeps the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable

THOUGHT_SHARE = 0.625
MIN_THOUGHT_ITEMS = 16
PRINTABLE = (" ", "~")  # the thought is printable ASCII (and tabs)

_TEMPLATE = r"""root ::= HEADER thought OPEN command CLOSE "\n"?
thought ::= lstart titem{0,ITEMS}
titem ::= tchar | "\n" "\n"? lstart
lstart ::= LSTART
tchar ::= [ -~\t]
command ::= editcmd | othercmd
editcmd ::= "edit " [0-9]+ ":" [0-9]+ "\n" cline* "end_of_edit\n"
othercmd ::= ofirst cchar* "\n" cline*
ofirst ::= [^FIRST\ne] | "e" ([^\nd] | "d" ([^\ni] | "i" ([^\nt] | "t" [^ \n])))
cline ::= (cstart cchar*)? "\n"
cstart ::= CSTART
cchar ::= [^\n]
"""


def max_item_tokens(fence: str) -> int:
    """The longest thought item: two line breaks and a line start one character short of the
    fence plus the character that breaks it (`"\\n\\n``x"` for a ``` fence)."""
    return 2 + len(fence)


def thought_items(max_tokens: int, fence: str) -> int:
    """Items the thought may hold so that it stays within its share of `max_tokens`."""
    items = int(max_tokens * THOUGHT_SHARE) // max_item_tokens(fence) - 1
    if items < MIN_THOUGHT_ITEMS:
        raise ValueError(f"max_tokens={max_tokens} is too small for a thought-action reply")
    return items


def thought_action_grammar(max_tokens: int, header: str, fence: str) -> str:
    """The GBNF text for replies of at most `max_tokens` tokens."""
    replacements = {
        "HEADER": literal(header + "\n"),
        "OPEN": literal("\n" + fence + "\n"),
        "CLOSE": literal(fence),
        "ITEMS": str(thought_items(max_tokens, fence)),
        "LSTART": not_starting_with(fence, printable_except),
        "FIRST": class_char(fence[0]),
        "CSTART": not_starting_with(fence, lambda char: f"[^{class_char(char)}\\n]"),
    }
    return _PLACEHOLDER.sub(lambda match: replacements[match.group(0)], _TEMPLATE)


_PLACEHOLDER = re.compile(r"\b(HEADER|OPEN|CLOSE|ITEMS|LSTART|FIRST|CSTART)\b")


def not_starting_with(fence: str, other_than: Callable[[str], str]) -> str:
    """Alternatives matching a line start that is not the fence: a proper prefix of the fence,
    then a character other than the fence's next one (`other_than(char)` is that class)."""
    return " | ".join(
        (f"{literal(fence[:index])} " if index else "") + other_than(fence[index])
        for index in range(len(fence))
    )


def printable_except(char: str) -> str:
    """A class of printable ASCII, space and tab, without `char`."""
    low, high = ord(PRINTABLE[0]) + 1, ord(PRINTABLE[1])  # space is listed on its own
    code = ord(char)
    ranges = [(low, code - 1), (code + 1, high)] if low <= code <= high else [(low, high)]
    parts = "".join(
        class_char(chr(start)) + (f"-{class_char(chr(end))}" if end > start else "")
        for start, end in ranges
        if end >= start
    )
    space = "" if char == " " else " "
    return f"[{parts}{space}\\t]"


def class_char(char: str) -> str:
    """`char` as written inside a GBNF character class (escaped when it is special there)."""
    return f"\\x{ord(char):02X}" if char in '\\]^-["' else char


def literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
