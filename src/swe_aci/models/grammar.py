"""GBNF grammar for the thought-action reply format, for llama.cpp's `grammar` request field.

A reply is `DISCUSSION`, free text, then exactly one bare fenced block holding the command, then at
most a newline. An `edit S:E` command must carry its body and `end_of_edit` (the agent would reject
it otherwise, wasting a turn).

A reply cut off by `max_tokens` would be invalid, so the grammar bounds the thought, and only its
total length (a bound per line cut ordinary one-paragraph thoughts mid-word, and small models then
derail). The thought is a line start followed by at most `thought_items(max_tokens)` items, each a
printable ASCII character or a line break with the next line's start: an item is at most
`MAX_ITEM_TOKENS` tokens whatever the tokenizer, so the thought never takes more than
`THOUGHT_SHARE` of `max_tokens` and the command keeps the rest.
"""

from __future__ import annotations

HEADER = "DISCUSSION\n"
FENCE = "```"
MAX_ITEM_TOKENS = 5  # "\n\n``x": at most one token per character
THOUGHT_SHARE = 0.625
MIN_THOUGHT_ITEMS = 16

_TEMPLATE = r"""root ::= "DISCUSSION\n" thought "\n```\n" command "```" "\n"?
thought ::= lstart titem{0,ITEMS}
titem ::= tchar | "\n" "\n"? lstart
lstart ::= [!-_a-~ \t] | "`" [!-_a-~ \t] | "``" [!-_a-~ \t]
tchar ::= [ -~\t]
command ::= editcmd | othercmd
editcmd ::= "edit " [0-9]+ ":" [0-9]+ "\n" cline* "end_of_edit\n"
othercmd ::= ofirst cchar* "\n" cline*
ofirst ::= [^`\ne] | "e" ([^\nd] | "d" ([^\ni] | "i" ([^\nt] | "t" [^ \n])))
cline ::= (cstart cchar*)? "\n"
cstart ::= [^`\n] | "`" [^`\n] | "``" [^`\n]
cchar ::= [^\n]
"""


def thought_items(max_tokens: int) -> int:
    """Items the thought may hold so that it stays within its share of `max_tokens`."""
    items = int(max_tokens * THOUGHT_SHARE) // MAX_ITEM_TOKENS - 1
    if items < MIN_THOUGHT_ITEMS:
        raise ValueError(f"max_tokens={max_tokens} is too small for a thought-action reply")
    return items


def thought_action_grammar(max_tokens: int) -> str:
    """The GBNF text for replies of at most `max_tokens` tokens."""
    return _TEMPLATE.replace("ITEMS", str(thought_items(max_tokens)))
