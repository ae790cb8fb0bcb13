"""Reproduction tests from an issue's scripts: a script followed by the traceback it raises, a
script's expression commented with what it should give, a script's printed values that should
raise instead, a traceback whose message the issue asks to make clearer, and the names such a
script reads under an alias the repository imports a module as (`P`, `np`). Each generated
test is run by pytest against the buggy and the fixed module."""

from __future__ import annotations

from pathlib import Path

from issue_helpers import exit_codes
from swe_aci.pipeline.imports import import_aliases
from swe_aci.pipeline.issue_examples import issue_tests
from swe_aci.pipeline.mend import mend_test

MATCHER = """import re


def compile_pattern(pattern):
    return re.compile(pattern.replace("!(", "(?!(").replace("@(", "("))


def matches(name, pattern):
    return bool(compile_pattern(pattern).match(name))
"""
MATCHER_FIXED = MATCHER.replace('"(?!("', '"(?!"')
TRACEBACK_ISSUE = """Exception with a negated group followed by another group

```python
import matcher
matcher.matches('1_foo', '!(2)_@(foo|bar)')
```

Should result `True` but instead the call raises this exception:

```python
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "/usr/lib/python3.12/site-packages/matcher.py", line 5, in compile_pattern
re.error: missing ), unterminated subpattern at position 5
```
"""


def test_a_script_followed_by_its_traceback_must_run(tmp_path: Path) -> None:
    code = issue_tests(TRACEBACK_ISSUE, {"matches": "matcher"})
    assert "matcher.matches('1_foo', '!(2)_@(foo|bar)')" in code
    assert exit_codes(tmp_path, code, "matcher", [MATCHER, MATCHER_FIXED]) == [1, 0]


RETRY = """def on_error(max_time):
    def decorate(function):
        def wrapped():
            limit = max_time + 1
            return function(limit)
        return wrapped
    return decorate
"""
RETRY_FIXED = RETRY.replace(
    "limit = max_time + 1", "limit = (max_time() if callable(max_time) else max_time) + 1"
)
MAIN_ISSUE = """A callable `max_time` crashes:

```python
import retry

def lookup_max_time():
    return 30

@retry.on_error(max_time=lookup_max_time)
def wait_for(limit):
    return limit

if __name__ == "__main__":
    wait_for()
```

```
Traceback (most recent call last):
  File "demo.py", line 11, in <module>
    wait_for()
TypeError: unsupported operand type(s) for +: 'function' and 'int'
```
"""


def test_a_scripts_main_block_and_decorators_are_kept(tmp_path: Path) -> None:
    """The decorated function keeps its decorator, and the `__main__` block's call runs (a
    test is no `__main__`)."""
    code = issue_tests(MAIN_ISSUE, {"on_error": "retry"})
    assert "@retry.on_error(max_time=lookup_max_time)" in code and "__main__" not in code
    assert exit_codes(tmp_path, code, "retry", [RETRY, RETRY_FIXED]) == [1, 0]


INTERVALS = """class IntervalDict:
    def __init__(self, items):
        self.items = dict(items)

    def pop(self, key, default=None):
        if key in self.items:
            return self.items.pop(key)
        if default is None:
            raise KeyError(key)
        return default


def closed(lower, upper):
    return (lower, upper)
"""
INTERVALS_FIXED = (
    INTERVALS.replace("default=None", "*default")
    .replace("default is None", "not default")
    .replace("return default", "return default[0]")
)
COMMENTED_ISSUE = """IntervalDict.pop(key, None) raises KeyError instead of returning None

```python
d = P.IntervalDict([(P.closed(0, 5), 'A')])

d.pop(10)        # KeyError — correct
d.pop(10, None)  # KeyError — wrong: should return None
d.pop(10, 'x')   # 'x'     — correct
```
"""


def test_an_expression_commented_with_what_it_should_give_is_checked(tmp_path: Path) -> None:
    """The comment's expected literal is checked; the shown expression before it, which
    raises as it should, does not run; `P` is the alias the repository's own tests import
    the package under."""
    repository = ["import intervals as P\n\n\ndef test_pop():\n    assert P.closed(0, 1)\n"]
    aliases = import_aliases([*repository, COMMENTED_ISSUE])
    assert aliases == {"P": "intervals"}
    code = issue_tests(COMMENTED_ISSUE, {"IntervalDict": "intervals"}, aliases=aliases)
    assert "import intervals as P" in code and "assert (d.pop(10, None)) == None" in code
    assert "d.pop(10)\n" not in code
    assert exit_codes(tmp_path, code, "intervals", [INTERVALS, INTERVALS_FIXED]) == [1, 0]
    assert issue_tests(COMMENTED_ISSUE, {"IntervalDict": "intervals"}).count("import") == 1


UNPACKING = """def transform(tree, discard):
    stack = [] if discard else [tree]
    (result,) = stack
    return result
"""
UNPACKING_FIXED = UNPACKING.replace(
    "    (result,) = stack\n", "    result = stack[0] if stack else None\n"
)
QUOTED_MESSAGE_ISSUE = """transform crashes when the root is discarded

`transform()` raises `ValueError: not enough values to unpack (expected 1, got 0)` when the
root is discarded.

```python
from stack import transform
transform('root', discard=True)  # ValueError: not enough values to unpack (expected 1, got 0)
```

```
Traceback (most recent call last):
  File "repro.py", line 2, in <module>
    transform('root', discard=True)
  File "stack.py", line 3, in transform
    (result,) = stack
ValueError: not enough values to unpack (expected 1, got 0)
```
"""


def test_an_exception_message_quoted_in_a_comment_is_no_expected_value(tmp_path: Path) -> None:
    """The comment quotes what the code printed: its "expected 1" is the interpreter's words,
    and a test asserting the call returns 1 would fail on the right fix."""
    code = issue_tests(QUOTED_MESSAGE_ISSUE, {"transform": "stack"})
    assert "== 1" not in code
    assert exit_codes(tmp_path, code, "stack", [UNPACKING, UNPACKING_FIXED]) == [1, 0]


def test_an_alias_is_the_module_most_texts_import_under_it() -> None:
    texts = [
        "import numpy as np\nimport numpy as np  # again\n",
        "    >>> import numpy.ma as np\n",
        "import portion as P\n",
        "x = 'import fake as np'\nfrom a import b as c\n",
    ]
    assert import_aliases(texts) == {"np": "numpy", "P": "portion"}


def test_a_model_test_reading_an_alias_gets_the_repositorys_import() -> None:
    test = "def test_issue():\n    assert np.datetime64('2020') is not None\n"
    mended, notes = mend_test(test, "pkg.core", [], {}, [], {"np": "numpy"})
    assert mended.startswith("import numpy as np\n") and notes == ["added `import numpy as np`"]


EXPANDER = """class LimitExceeded(Exception):
    pass


def expand(pattern, limit=0):
    words = [word for word in pattern.split(",") if word]
    if limit and len(words) > limit:
        raise LimitExceeded(limit)
    return words + [""] * (pattern.count(",") + 1 - len(words))
"""
EXPANDER_FIXED = EXPANDER.replace(
    'words = [word for word in pattern.split(",") if word]', 'words = pattern.split(",")'
)
RAISED_INSTEAD_ISSUE = """The limit is not enforced on empty words

```python
import expander

print(expander.expand('a,,b', limit=2))
print(len(expander.expand(',' * 50, limit=10)))
print('done')
```

```
['a', 'b', '']
51
done
```

Both should raise `LimitExceeded` (3 > 2, 51 > 10).
"""


def test_printed_values_the_issue_says_should_raise_must_raise(tmp_path: Path) -> None:
    """Each printed call is expected to raise the repository's exception; `print('done')`,
    which calls nothing, is left out; the output block of values parses as Python and is
    still the reported output."""
    importable = {"LimitExceeded": "expander", "expand": "expander"}
    code = issue_tests(RAISED_INSTEAD_ISSUE, importable, frozenset({"LimitExceeded"}))
    assert code.count("with pytest.raises(LimitExceeded):") == 2 and "'done'" not in code
    assert exit_codes(tmp_path, code, "expander", [EXPANDER, EXPANDER_FIXED]) == [1, 0]


WRITER = """def dumps(table):
    return "".join(f"{key if set(key) else ''} = {value}\\n" for key, value in table.items())
"""
WRITER_FIXED = WRITER.replace(
    "    return",
    """    for key in table:
        if not isinstance(key, str):
            raise TypeError(f"Invalid mapping key {key!r}: a string is required")
    return""",
)
BETTER_MESSAGE_ISSUE = """Improve error message for a key that is not a string

```python
>>> import writer
>>> writer.dumps({1: 1})
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
TypeError: 'int' object is not iterable
```
"""


def test_a_traceback_whose_message_should_be_clearer_must_raise_another_message(
    tmp_path: Path,
) -> None:
    """Not "the call must run": the issue wants the error to stay, better worded, raised on
    purpose (a candidate that breaks the call differently does not pass)."""
    code = issue_tests(BETTER_MESSAGE_ISSUE, {"dumps": "writer"})
    assert "assert str(raised.value) != \"'int' object is not iterable\"" in code
    broken = "def dumps(table):\n    return len()\n"  # another message, from no raise
    assert exit_codes(tmp_path, code, "writer", [WRITER, WRITER_FIXED, broken]) == [1, 0, 1]
    plain = BETTER_MESSAGE_ISSUE.replace("Improve error message for", "A crash on")
    assert "raised" not in issue_tests(plain, {"dumps": "writer"})
