"""Reproduction tests from an example that prints and the output the issue expects it to print,
and from the actual and expected runs of the same session with another session between them:
each generated test run by pytest against the buggy and the fixed module."""

from __future__ import annotations

from pathlib import Path

from issue_helpers import exit_codes
from swe_aci.pipeline.issue_examples import issue_tests

ORDERED = """class Ordered:
    def __init__(self, key):
        self.key, self.items = key, []

    def add(self, item):
        self.items.append(item)
        self.items.sort(key=self.key)

    def update(self, items):
        self.items = list(items) + self.items
        self.items.sort(key=self.key)

    def __repr__(self):
        return f"Ordered({self.items!r}, key={self.key!r})"
"""
ORDERED_FIXED = ORDERED.replace("list(items) + self.items", "self.items + list(items)")
SCRIPT_ISSUE = """`update()` puts new items with an equal key first.

```python
from ordered import Ordered
o = Ordered(key=lambda x: x[0])
o.add(('k', 0))
o.update([('k', 1)])
print(o)
```

```
Ordered([('k', 1), ('k', 0)], key=<function <lambda> at 0x7f9b90f6e0d0>)
```

Expected (as `add()` alone gives):

```
Ordered([('k', 0), ('k', 1)], key=<function <lambda> at 0x...>)
```
"""


def test_a_script_and_the_output_expected_after_it_make_a_test(tmp_path: Path) -> None:
    """The script runs as the reporter ran it (its lambda prints as `<lambda>`), its printed
    text compared with the expected block, an address matching `0x...`."""
    code = issue_tests(SCRIPT_ISSUE, {"Ordered": "ordered"})
    assert "redirect_stdout" in code and "0x..." in code
    assert exit_codes(tmp_path, code, "ordered", [ORDERED, ORDERED_FIXED]) == [1, 0]


def test_an_output_block_no_expectation_introduces_makes_no_test() -> None:
    """ "should" further back in the prose belongs to another sentence; the paragraph right
    before the block says it is what another call gives, and an expected block that is the
    reported one expects nothing."""
    moved = SCRIPT_ISSUE.replace(
        "Expected (as `add()` alone gives):",
        "It should keep the order.\n\nWith `update([('k', 1), ('k', 2)])` instead it gives:",
    )
    assert issue_tests(moved, {"Ordered": "ordered"}) == ""
    reported = "Ordered([('k', 1), ('k', 0)], key=<function <lambda> at 0x...>)"
    same = SCRIPT_ISSUE.replace(
        "Ordered([('k', 0), ('k', 1)], key=<function <lambda> at 0x...>)", reported
    )
    assert issue_tests(same, {"Ordered": "ordered"}) == ""


TABLE = """def table(rows):
    width = len(rows[0])
    return "\\n".join(["|" + "  |" * width, "|" + " --- |" * width] + ["| " + " | ".join(r) + " |" for r in rows])
"""
TABLE_FIXED = TABLE.replace("len(rows[0])", "max(len(row) for row in rows)")
SESSION_ISSUE = """The header has one column too few when the first row is short.

```python
>>> from tables import table
>>> print(table([["Data"], ["a", "b"]]))
|  |
| --- |
| Data |
| a | b |
```

Expected: one header column per column, as with a header row:

```
|  |  |
| --- | --- |
| Data |
| a | b |
```
"""


def test_a_printing_session_and_the_output_expected_after_it_make_a_test(tmp_path: Path) -> None:
    code = issue_tests(SESSION_ISSUE, {"table": "tables"})
    assert "'| --- | --- |'" in code
    assert exit_codes(tmp_path, code, "tables", [TABLE, TABLE_FIXED]) == [1, 0]


WORDS = """def say(value):
    whole, _, part = f"{abs(value):.2f}".partition(".")
    text = f"{'zero' if whole == '0' else whole} point {part}"
    return ("minus " + text) if value <= -1 else text
"""
WORDS_FIXED = WORDS.replace("value <= -1", "value < 0")
BETWEEN_ISSUE = """A negative number above -1 loses its sign.

Current behaviour
```
>>> from words import say
>>> say(-0.12)
'zero point 12'
```

Below -1 it is correct:
```
>>> from words import say
>>> say(-1.01)
'minus 1 point 01'
```

Expected behaviour
```
>>> from words import say
>>> say(-0.12)
'minus zero point 12'
```
"""


def test_the_actual_and_expected_sessions_pair_across_a_session_between_them(
    tmp_path: Path,
) -> None:
    code = issue_tests(BETWEEN_ISSUE, {"say": "words"})
    assert "assert (say(-0.12)) == 'minus zero point 12'" in code
    assert exit_codes(tmp_path, code, "words", [WORDS, WORDS_FIXED]) == [1, 0]


SLUG = """def slug(name, keep_dots=False):
    return name.replace(".", "-")
"""
SLUG_FIXED = SLUG.replace('name.replace(".", "-")', 'name if keep_dots else name.replace(".", "-")')
REGRESSION_ISSUE = """`keep_dots` is ignored since 2.1

```python
from slugs import slug

print(slug("a.b", keep_dots=True))
```

In `v2.0.4` this printed `a.b` but in `v2.1.0` it prints `a-b`.
"""


def test_a_script_and_what_an_earlier_release_printed_make_a_test(tmp_path: Path) -> None:
    """A regression's report: the script's one printed value must be what the earlier release
    printed."""
    code = issue_tests(REGRESSION_ISSUE, {"slug": "slugs"})
    assert "redirect_stdout" in code and "['a.b']" in code
    assert exit_codes(tmp_path, code, "slugs", [SLUG, SLUG_FIXED]) == [1, 0]


def test_an_earlier_value_without_a_release_or_printed_twice_makes_no_test() -> None:
    """No release named or spoken of, the same value then and now, or a script that prints
    more than once (the one value is not all it prints): nothing to expect."""
    unnamed = REGRESSION_ISSUE.replace("In `v2.0.4` this", "This").replace(
        " but in `v2.1.0` it", " but it"
    )
    same = REGRESSION_ISSUE.replace("prints `a-b`", "prints `a.b`")
    twice = REGRESSION_ISSUE.replace(
        'print(slug("a.b", keep_dots=True))', 'print(slug("a"))\nprint(slug("a.b", keep_dots=True))'
    )
    previous = REGRESSION_ISSUE.replace("In `v2.0.4` this", "The previous version")
    for issue in (unnamed, same, twice):
        assert issue_tests(issue, {"slug": "slugs"}) == "", issue
    assert "['a.b']" in issue_tests(previous, {"slug": "slugs"})
