"""Reproduction tests from an issue's scripts: a script followed by the traceback it raises, a
script's expression commented with what it should give, a script's printed values that should
raise instead, a traceback whose message the issue asks to make clearer, and the names such a
script reads under an alias the repository imports a module as (`P`, `np`). Each generated
test is run by pytest against the buggy and the fixed module."""

from __future__ import annotations

from pathlib import Path

from issue_helpers import exit_codes
from swe_aci.pipeline.imports import import_aliases, missing_imports
from swe_aci.pipeline.issue_examples import importable_names, issue_tests, source_trees
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
    assert aliases == {"P": "import intervals as P"}
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


CLOCK = "def frozen():\n    return 7\n"
CALENDAR = """HOURS_PER_DAY = 24


def days(hours):
    return hours // HOURS_PER_DAY
"""
CALENDAR_FIXED = CALENDAR.replace("hours // HOURS_PER_DAY", "hours / HOURS_PER_DAY")
OWN_TEST_ISSUE = """days() truncates

This test fails:

```python
def test_days():
    assert days(frozen() * 6) == 42 / HOURS_PER_DAY

@pytest.mark.parametrize("hours", [1, 2])
def test_days_of(hours):
    assert days(hours) == hours / 24

def test_days_fixture(tmp_path):
    assert days(1) == 1 / 24

test_days()
```
"""


def test_the_issues_own_test_function_is_a_test(tmp_path: Path) -> None:
    """Its body runs with the imports it leaves out: the repository's constant, and a name
    the repository's tests import from another package; a decorated test or one taking a
    fixture is not taken (what the decorator or fixture gives would be missing)."""
    aliases = import_aliases(["from clock import frozen\n"])
    importable = importable_names(source_trees({"calendar_.py": CALENDAR}))
    assert importable == {"days": "calendar_", "HOURS_PER_DAY": "calendar_"}
    code = issue_tests(OWN_TEST_ISSUE, importable, aliases=aliases)
    assert code.count("def test_issue_example_") == 1 and "test_days()" not in code
    assert "from clock import frozen" in code and "from calendar_ import HOURS_PER_DAY" in code
    (tmp_path / "clock.py").write_text(CLOCK)
    assert exit_codes(tmp_path, code, "calendar_", [CALENDAR, CALENDAR_FIXED]) == [1, 0]


def test_an_alias_is_the_import_most_texts_bind_it_with() -> None:
    texts = [
        "import numpy as np\nimport numpy as np  # again\n",
        "    >>> import numpy.ma as np\n",
        "import portion as P\nfrom freezegun import freeze_time\n",
        "x = 'import fake as np'\nfrom a import b as c\nfrom . import local\n",
    ]
    assert import_aliases(texts) == {
        "np": "import numpy as np",
        "P": "import portion as P",
        "freeze_time": "from freezegun import freeze_time",
    }


def test_a_name_a_test_imports_from_a_module_does_not_shadow_a_standard_module() -> None:
    aliases = import_aliases(["from datetime import datetime\n", "from clock import frozen\n"])
    code = "assert datetime.date(2020, 1, 1) < frozen()\n"
    assert missing_imports(code, {}, aliases=aliases) == [
        "import datetime",
        "from clock import frozen",
    ]


def test_a_model_test_reading_an_alias_gets_the_repositorys_import() -> None:
    test = "def test_issue():\n    assert np.datetime64('2020') is not None\n"
    mended, notes = mend_test(test, "pkg.core", [], {}, [], {"np": "import numpy as np"})
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


DIRS = """import os


def site_dir(name):
    dirs = [d for d in os.environ.get("XDG_DATA_DIRS", "/usr/share").split(os.pathsep) if d.strip()]
    return os.path.join(dirs[0], name)
"""
DIRS_FIXED = DIRS.replace(
    "return os.path.join(dirs[0], name)", 'return os.path.join((dirs or ["/usr/share"])[0], name)'
)
SHELL_ISSUE = """site_dir crashes when XDG_DATA_DIRS holds only separators

```
$ XDG_DATA_DIRS=':' python -c 'import dirs; print(dirs.site_dir("foo"))'
Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File ".../dirs.py", line 6, in site_dir
IndexError: list index out of range
$ XDG_DATA_DIRS=' ' python -c 'import dirs; print(dirs.site_dir("foo"))'
/usr/share/foo
$ echo ':' | python -c 'import dirs, sys; print(dirs.site_dir(sys.stdin.read()))'
Traceback (most recent call last):
IndexError: list index out of range
```
"""


def test_a_shell_lines_python_code_shown_crashing_runs_with_its_variables(tmp_path: Path) -> None:
    """The line whose output is a value and the piped one give no test; the variable is put
    back after the test (the reproduction shares its process with the regression tests)."""
    code = issue_tests(SHELL_ISSUE, {"site_dir": "dirs"})
    assert code.count("def test_issue_example_") == 1
    assert "mock.patch.dict(os.environ, {'XDG_DATA_DIRS': ':'})" in code
    assert exit_codes(tmp_path, code, "dirs", [DIRS, DIRS_FIXED]) == [1, 0]
    expecting = SHELL_ISSUE + "\nIt should raise `ValueError` naming the variable.\n"
    assert issue_tests(expecting, {"site_dir": "dirs"}) == ""
