"""The grammar a search/replace reply is constrained by: old lines only from the lines shown,
copied exactly; and a reply it allows is one the block reader applies."""

from __future__ import annotations

import pytest

from swe_aci.pipeline.block_grammar import MAX_OLD_LINES, blocks_grammar, literal, shown_runs
from swe_aci.pipeline.blocks import block_edit
from test_models_local import gbnf_regex

TEXT = (
    'def f(n):\n    """Doc.\n\n    More.\n    """\n    total = 0\n'
    '    for i in range(n - 1):\n        total += i  # "sum"\n\n    return total\n'
)
OTHER = "LIMIT = 3\n"


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.splitlines())


def test_a_literal_escapes_what_gbnf_would_read_otherwise() -> None:
    assert literal('a"b\\c\td\n\x0c é') == '"a\\"b\\\\c\\td\\n\\x0c é"'


def test_old_lines_come_from_runs_of_the_lines_shown_broken_by_a_folded_docstring() -> None:
    hidden = frozenset({2, 3, 4, 5})
    assert shown_runs(TEXT, ((1, 3), (6, 10), (12, 14)), hidden) == [
        ["def f(n):"],
        [
            "    total = 0",
            "    for i in range(n - 1):",
            '        total += i  # "sum"',
            "",
            "    return total",
        ],
    ]


def test_each_block_names_a_file_shown_and_takes_consecutive_old_lines_of_that_file() -> None:
    grammar = blocks_grammar(
        {"a.py": TEXT, "b.py": OTHER, "c.py": "unshown\n"},
        {"a.py": ((6, 8),), "b.py": ((1, 1),)},
        {"a.py": frozenset({2, 3, 4, 5})},
    )
    found = rules(grammar)
    assert found["root"] == "block block?"
    assert found["o0-0-0"] == '"    total = 0\\n"'
    assert found["o0-0-2"] == '"        total += i  # \\"sum\\"\\n"'
    assert found["o0-0-0-3"] == "o0-0-0 o0-0-1-2?"
    assert found["o0-0-1-2"] == "o0-0-1 o0-0-2-1?"
    assert found["old0"] == "o0-0-0-3 | o0-0-1-2 | o0-0-2-1"
    assert found["old1"] == "o1-0-0-1"
    assert found["block"] == (
        '("a.py" "\\n<<<<<<< SEARCH\\n" old0 "=======\\n" new{0,16} ">>>>>>> REPLACE\\n")'
        ' | ("b.py" "\\n<<<<<<< SEARCH\\n" old1 "=======\\n" new{0,16} ">>>>>>> REPLACE\\n")'
    )
    assert "unshown" not in grammar


SHOWN = {"a.py": ((6, 10),)}
ALLOWED = (
    "a.py\n<<<<<<< SEARCH\n    for i in range(n - 1):\n=======\n"
    "    for i in range(n):\n>>>>>>> REPLACE\n"
)


@pytest.mark.parametrize(
    "reply",
    [
        ALLOWED.replace("a.py", "b.py"),  # a file not shown
        ALLOWED.replace("    for i", "for i", 1),  # the old line's indentation lost
        ALLOWED.replace("    for i", "7 |     for i", 1),  # its number copied
        ALLOWED.replace("n - 1", "n-1", 1),  # retyped
        ALLOWED.replace("    for i in range(n - 1):\n", "    if n:\n", 1),  # a line not shown
        ALLOWED.replace("SEARCH\n    for i in range(n - 1):\n", "SEARCH\n", 1),  # no old line
        "```\n" + ALLOWED + "```\n",
        ALLOWED * 3,
        ALLOWED.replace("=======\n", "=======\n=======\n"),  # a marker among the new lines
        ALLOWED.replace(">>>>>>> REPLACE\n", ""),  # cut off
        ALLOWED.replace("SEARCH\n", 'SEARCH\n        total += i  # "sum"\n', 1),  # not in order
        ALLOWED.replace("1):\n", '1):\n        total += i  # "sum"\n    return total\n', 1),
    ],
)
def test_the_grammar_refuses_what_the_block_reader_would_drop(reply: str) -> None:
    assert not gbnf_regex(blocks_grammar({"a.py": TEXT}, SHOWN, {})).fullmatch(reply)


def test_a_reply_the_grammar_allows_is_applied_as_a_block() -> None:
    grammar = gbnf_regex(blocks_grammar({"a.py": TEXT}, SHOWN, {}))
    twice = ALLOWED + ALLOWED.replace("    for i in range(n - 1):\n", "\n    return total\n")
    longest = ALLOWED.replace(
        "SEARCH\n    for i in range(n - 1):\n",
        'SEARCH\n    total = 0\n    for i in range(n - 1):\n        total += i  # "sum"\n\n',
    )
    for reply in (ALLOWED, twice, longest):
        assert grammar.fullmatch(reply)
    many = "".join(f"    x{number} = {number}\n" for number in range(MAX_OLD_LINES + 1))
    bounded = gbnf_regex(blocks_grammar({"m.py": many}, {"m.py": ((1, MAX_OLD_LINES + 1),)}, {}))
    block = "m.py\n<<<<<<< SEARCH\n{}=======\n>>>>>>> REPLACE\n"
    assert bounded.fullmatch(block.format("".join(many.splitlines(True)[1:])))
    assert not bounded.fullmatch(block.format(many))
    edit = block_edit({"a.py": TEXT}, ALLOWED, "a.py", None, SHOWN)
    assert "    for i in range(n):\n" in edit.texts["a.py"]


@pytest.mark.slow
def test_the_local_model_answers_a_block_the_reader_applies() -> None:
    """llama.cpp itself, constrained by the grammar: the reply is blocks whose old lines are
    lines of the file (whatever the 0.5B model makes of the fix)."""
    pytest.importorskip("xllamacpp")
    from swe_aci.models.config import LocalConfig
    from swe_aci.models.local import LocalModel
    from swe_aci.pipeline.repair import Dropped

    grammar = blocks_grammar({"a.py": TEXT}, SHOWN, {})
    prompt = (
        "f(n) should sum 0..n-1 but misses the last number.\n\n"
        "a.py, lines 6-10:\n```python\n  6 |     total = 0\n  7 |     for i in range(n - 1):\n"
        '  8 |         total += i  # "sum"\n  9 |\n 10 |     return total\n```\n\n'
        "Fix it with one search/replace block:\na.py\n<<<<<<< SEARCH\nthe old lines\n=======\n"
        "the new lines\n>>>>>>> REPLACE"
    )
    config = LocalConfig(name="local/qwen2.5-coder-0.5b", grammar=grammar, max_output_tokens=200)
    with LocalModel(config, None) as model:
        reply = model.query([{"role": "user", "content": prompt}]).content
    assert gbnf_regex(grammar).fullmatch(reply), reply
    try:
        block_edit({"a.py": TEXT}, reply, "a.py", None, SHOWN)
    except Dropped as dropped:
        assert "do not match" not in str(dropped) and "no search/replace" not in str(dropped)
