"""Reproduction tests built from the issue's own text, without a model."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from issue_helpers import exit_codes
from swe_aci.evaluate.parsers import TestStatus
from swe_aci.pipeline.issue_examples import (
    exception_names,
    importable_names,
    issue_tests,
    mentions,
    reproduction_imports,
    source_trees,
)
from swe_aci.pipeline.reproduction import accepted_issue_tests, keep_tests
from swe_aci.pipeline.sandbox import TestRun


def test_a_session_and_a_sentence_give_a_test_each() -> None:
    issue = (
        ">>> from tempconv import fahrenheit_to_celsius\n>>> fahrenheit_to_celsius(212)\n"
        "194.22222222222223\n\nI expected 100.0. Freezing is wrong too: "
        "fahrenheit_to_celsius(32) should be 0.0.\n"
    )
    code = issue_tests(issue, {"fahrenheit_to_celsius": "tempconv"})
    assert "assert (fahrenheit_to_celsius(212)) == pytest.approx(100.0)" in code
    assert (
        "from tempconv import fahrenheit_to_celsius\n    assert (fahrenheit_to_celsius(32))" in code
    )
    compile(code, "t.py", "exec")


def test_several_outputs_pair_with_as_many_expected_values_and_one_with_each_wrong_one() -> None:
    issue = (
        "```python\n>>> from m import f\n>>> f(1)\n[[1], []]\n>>> f(3)\n[[3], []]\n```\n\n"
        "Expected `[[1]]` and `[[3]]` here too.\n"
    )
    code = issue_tests(issue, {})
    assert "assert (f(1)) == [[1]]" in code and "assert (f(3)) == [[3]]" in code
    one = ">>> g = G()\n>>> g.get()\n[1, 2]\n>>> g.copy().get()\n[2]\n\nExpected `[1, 2]` in both cases.\n"
    code = issue_tests(one, {})
    assert "assert (g.copy().get()) == [1, 2]" in code and "assert (g.get())" not in code
    assert "    g = G()\n" in code


def test_a_reported_output_contrasted_by_but_with_one_other_value_expects_that_value() -> None:
    issue = (
        "`median([1, 2, 3, 4])` gives 3, but the median of an even count is the mean of the two\n"
        "middle values, 2.5 here. Odd counts are fine.\n"
    )
    code = issue_tests(issue, {"median": "numstat.center"})
    assert "from numstat.center import median" in code
    assert "assert (median([1, 2, 3, 4])) == pytest.approx(2.5)" in code
    two_values = "`f(4)` returns 3, but 1 or 2 would do.\n"
    assert issue_tests(two_values, {"f": "m"}) == ""
    no_but = "`f(4)` returns 3, and 2.5 is in the docs.\n"
    assert issue_tests(no_but, {"f": "m"}) == ""


def test_an_expected_object_repr_is_compared_with_the_results_repr(tmp_path: Path) -> None:
    issue = (
        "```python\n>>> parse('{}', 'a\\n')\n<Result ('a',) {}>\n```\n\n"
        "Expected `<Result ('a\\n',) {}>`: the whole string matches `{}`.\n"
    )
    code = issue_tests(issue, {"parse": "textparse"})
    assert "assert repr(parse('{}', 'a\\n')) == \"<Result ('a\\\\n',) {}>\"" in code
    assert "== {}" not in code  # the `{}` after the colon explains, it is not expected
    module = (
        "class Result:\n    def __init__(self, text):\n        self.fixed = (text,)\n"
        "    def __repr__(self):\n        return '<Result %r {}>' % (self.fixed,)\n"
        "def parse(pattern, text):\n    return Result(text.STRIP)\n"
    )
    versions = [module.replace("STRIP", strip) for strip in ("rstrip()", "__str__()")]
    assert exit_codes(tmp_path, code, "textparse", versions) == [1, 0]  # the bug, then the fix
    addressed = ">>> make()\n<Foo object at 0x7f00>\n\nExpected `<Foo object at 0x7f01>`.\n"
    assert issue_tests(addressed, {"make": "foo"}) == ""


def test_a_bare_call_in_prose_names_the_function_the_issue_calls_elsewhere() -> None:
    issue = (
        '```python\ndoc.append(tomlkit.key(["my_key"]), "value")\n```\n\n'
        "Expected: `key()` of a one-element list gives the same key, so both contain "
        '`"my_key"`.\n\nAlso `now()` returns `None`, expected `1`.\n'
    )
    code = issue_tests(issue, {"key": "tomlkit.api", "now": "clock"})
    assert "key()" not in code
    assert "assert (now()) == 1" in code  # called nowhere with arguments: a real call


def test_tracebacks_and_expected_exceptions() -> None:
    crash = (
        ">>> from m import r\n>>> list(r(0))\nTraceback (most recent call last):\n  ...\n"
        "IndexError: out of range\n\nExpected: an empty list.\n"
    )
    assert "    from m import r\n    list(r(0))\n" in issue_tests(crash, {})
    raises = (
        ">>> from p.version import Version\n>>> Version(None)\nTypeError: not iterable\n\n"
        "Expected: any value that is not a version raises `p.version.InvalidVersion`.\n"
    )
    code = issue_tests(raises, {})
    assert "import p.version\n" in code and "with pytest.raises(p.version.InvalidVersion):" in code
    message = (
        ">>> f('x')\nTraceback (most recent call last):\nValueError: b'x'\n\n"
        "Expected the message to show the string.\n"
    )
    assert issue_tests(message, {}) == ""  # what it expects is not a value the text gives


SIGNER_BASE = """class BadData(Exception):
    pass
"""
SIGNER = """from errors import BadData


class BadSignature(BadData):
    pass


class BadTimeSignature(BadSignature):
    pass


class Signer:
    pass


def unsign(value):
    return 10 ** int(value)
"""
SIGNER_FIXED = SIGNER.replace(
    "    return 10 ** int(value)",
    "    try:\n        return 10 ** int(value)\n    except ValueError as error:\n"
    "        raise BadTimeSignature(str(error)) from error",
)
REJECTED = """Unsigning a malformed value crashes:

```python
>>> from signer import unsign
>>> unsign("x1")
Traceback (most recent call last):
  ...
ValueError: invalid literal for int() with base 10: 'x1'
```

Expected: it is rejected with the library's own `BadTimeSignature`, not a `ValueError`.
"""


def test_the_exception_expected_is_the_repositorys_own_not_the_one_the_prose_rejects(
    tmp_path: Path,
) -> None:
    """An exception class of the repository is expected by its name, whatever it ends with
    (derived from `Exception` through classes of other modules); the built-in one the prose
    says "not" to is not the one expected."""
    tree = {"errors.py": SIGNER_BASE, "signer.py": SIGNER, "tests/test_signer.py": ""}
    modules = source_trees(tree)
    assert exception_names(modules) == {"BadData", "BadSignature", "BadTimeSignature"}
    code = issue_tests(REJECTED, importable_names(modules), exception_names(modules))
    assert "from signer import BadTimeSignature" in code
    assert "with pytest.raises(BadTimeSignature):" in code and "ValueError" not in code
    (tmp_path / "errors.py").write_text(SIGNER_BASE)
    assert exit_codes(tmp_path, code, "signer", [SIGNER, SIGNER_FIXED]) == [1, 0]


BYTES_MESSAGE = """parse_date's error message shows the input as a bytes literal:

```python
>>> from dates import parse_date
>>> parse_date('2014-0423')
Traceback (most recent call last):
  ...
ValueError: String contains unknown ISO components: b'2014-0423'
```

Expected the message to show the string the caller passed, quoted as a normal string:
`String contains unknown ISO components: '2014-0423'`.
"""
BYTES_BUG = (
    "def parse_date(text):\n"
    "    raise ValueError('String contains unknown ISO components: {}'.format(text.encode()))\n"
)


def test_an_error_message_the_prose_expects_instead_of_the_shown_one(tmp_path: Path) -> None:
    code = issue_tests(BYTES_MESSAGE, {})
    assert (
        "    with pytest.raises(ValueError) as raised:\n        parse_date('2014-0423')\n" in code
    )
    fixed = BYTES_BUG.replace("{}'.format(text.encode())", "{!r}'.format(text)")
    silent = "def parse_date(text):\n    return None\n"
    assert exit_codes(tmp_path, code, "dates", [BYTES_BUG, fixed, silent]) == [1, 0, 1]
    # a span that does not open as the shown message is no expected message
    unrelated = BYTES_MESSAGE.replace("`String contains unknown ISO components: '2014-0423'`",
                                      "`'2014-0423'` in the message")  # fmt: skip
    assert issue_tests(unrelated, {}) == ""


WRAPPER = """class Integer(int):
    def __truediv__(self, other):
        return Integer(int(self) // other)
"""
WRAPPER_FIXED = WRAPPER.replace("return Integer(int(self) // other)", "return int(self) / other")
PASSING_ASSERT_ISSUE = """Dividing an Integer gives an Integer

```python
>>> from wrapper import Integer
>>> v = Integer(1) / 2
>>> assert type(v) is Integer  # should it not be a float?!
>>> assert v == 0.5
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
AssertionError
```
"""


def test_an_assert_that_passed_in_the_session_is_not_part_of_the_test(tmp_path: Path) -> None:
    """It shows what the base does, which the fix changes; only the failing one is checked."""
    code = issue_tests(PASSING_ASSERT_ISSUE, {"Integer": "wrapper"})
    assert "assert v == 0.5" in code and "type(v)" not in code
    assert exit_codes(tmp_path, code, "wrapper", [WRAPPER, WRAPPER_FIXED]) == [1, 0]


def test_comparisons_in_backticks_are_tests() -> None:
    issue = (
        "wcswidth() raises IndexError when n exceeds the string.\n\n"
        "Expected: an `n` larger than the string measures the whole string, so "
        "`wcswidth('hello', 10) == 5` (and `wcswidth('\\u30B3\\u30F3', n=999) == 4`). "
        "The workaround `len(spec) == 1` and `x == 1` are not calls of the library.\n"
    )
    code = issue_tests(issue, {"wcswidth": "wcwidth._wcswidth"})
    assert "from wcwidth._wcswidth import wcswidth\n    assert (wcswidth('hello', 10)) == 5" in code
    assert "assert (wcswidth('\\u30B3\\u30F3', n=999)) == 4" in code
    assert "len(spec)" not in code and "x == 1" not in code


def test_expected_comments_in_a_script() -> None:
    issue = "```python\nfrom m import tags\nprint(tags())\n# actual: ['a']\n# expected: ['b', 'a']\n```\n"
    assert "assert (tags()) == ['b', 'a']" in issue_tests(issue, {})


def test_only_the_accepted_tests_are_kept() -> None:
    code = "import pytest\n\n\ndef test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2\n"
    kept = keep_tests(code, ["test_b"])
    assert "def test_b" in kept and "def test_a" not in kept and "import pytest" in kept


def test_the_issues_traceback_frames_and_paths_are_mentions() -> None:
    issue = (
        'Traceback (most recent call last):\n  File "/site/pkg/api.py", line 3, in run\n'
        '  File "/site/pkg/core.py", line 9, in parse_value\nValueError\n\nSee pkg/extra.py too.'
    )
    found = mentions(issue)
    assert found.paths[:2] == ("/site/pkg/core.py", "/site/pkg/api.py")
    assert "pkg/extra.py" in found.paths and found.names == ("parse_value", "run")


def test_a_session_that_leaves_out_the_import_gets_it_from_the_repository() -> None:
    issue = ">>> fahrenheit_to_celsius(212)\n194.22222222222223\n\nI expected 100.0.\n"
    code = issue_tests(issue, {"fahrenheit_to_celsius": "tempconv", "other": "tempconv"})
    assert (
        "    from tempconv import fahrenheit_to_celsius\n"
        "    assert (fahrenheit_to_celsius(212)) == pytest.approx(100.0)"
    ) in code
    assert "import other" not in code
    bound = (
        ">>> from tempconv import fahrenheit_to_celsius as f\n>>> f(212)\n194.2\n\nExpected 100.0\n"
    )
    assert "from tempconv import f\n" not in issue_tests(bound, {"f": "tempconv"})


def outside_ci(environ: Mapping[str, str]) -> dict[str, str]:
    """pytest does not cut the summary when `CI` or `BUILD_NUMBER` is set."""
    return {name: value for name, value in environ.items() if name not in ("CI", "BUILD_NUMBER")}


def test_a_name_error_is_seen_though_pytest_cuts_the_summary_line(tmp_path: Path) -> None:
    """pytest cuts `FAILED ...::test - NameError: ...` to the terminal's width (except where it
    believes it runs on CI): the failure's own `E` lines say it was a NameError, so the test is
    dropped as broken."""
    test = tmp_path / "test_swe_aci_issue_with_a_long_name.py"
    test.write_text("def test_issue_example_1():\n    assert parse('{}', 'a') == {}\n")
    finished = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", test.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**outside_ci(os.environ), "COLUMNS": "80"},
    )  # fmt: skip
    summary = next(line for line in finished.stdout.splitlines() if line.startswith("FAILED "))
    assert "NameError" not in summary  # cut
    run = TestRun({f"{test.name}::test_issue_example_1": TestStatus.FAILED}, finished.stdout, False)
    accepted, dropped = accepted_issue_tests(run, run, "parse() drops the newline")
    assert accepted == [] and "name error" in dropped["test_issue_example_1"]


@pytest.mark.parametrize(
    ("issue", "module", "name", "expected"),
    [
        (
            ">>> import pathlib\n>>> from boltons.fileutils import AtomicSaver\n"
            ">>> import pathlib\n>>> from boltons import (\n",
            "boltons.fileutils",
            "AtomicSaver.__init__",
            ["import pathlib", "from boltons.fileutils import AtomicSaver"],
        ),
        (
            "```python\nimport tomlkit as tk\nd = tk.parse('x=-3')\n```\n",
            "tomlkit.parser",
            "Parser._parse_number",
            ["import tomlkit as tk"],
        ),
        (
            "```python\nimport datetime as dt\nhumanize.naturaldate(dt.date.today())\n```",
            "humanize.time",
            "naturaldate",
            ["import datetime as dt", "import humanize"],
        ),
        (
            "Version.replace() returns a Version, with semver 3.0.1",
            "semver.version",
            "Version.replace",
            ["from semver.version import Version"],
        ),
    ],
)
def test_a_model_written_test_imports_what_the_issues_code_imports(
    issue: str, module: str, name: str, expected: list[str]
) -> None:
    assert reproduction_imports(issue, module, name) == expected


WARNING_ISSUE = """\
Accessing `Lazy.value` through the class emits a DeprecationWarning.

```python
import warnings
from lazyattr import Lazy

warnings.simplefilter("always", DeprecationWarning)

class Foo:
    value = Lazy(lambda self: 1)

Foo.value   # DeprecationWarning: no instance to cache 'value' on
```

Expected: no warning when the descriptor is read from the class.
"""
LAZY = """\
import warnings


class Lazy:
    def __init__(self, compute):
        self.compute = compute

    def __get__(self, obj, objtype=None):
        if OBJ_CHECK:
            warnings.warn("no instance to cache 'value' on", DeprecationWarning, 2)
            return self
        return self.compute(obj)
"""


def test_a_script_line_commented_with_an_unwanted_warning_must_not_warn(tmp_path: Path) -> None:
    code = issue_tests(WARNING_ISSUE, {"Lazy": "lazyattr"})
    assert 'warnings.simplefilter("error", DeprecationWarning)' in code
    assert 'simplefilter("always"' not in code  # the script's own filter would let it through
    assert "# DeprecationWarning" not in code
    versions = [LAZY.replace("OBJ_CHECK", check) for check in ("obj is None", "False")]
    assert exit_codes(tmp_path, code, "lazyattr", versions) == [1, 0]  # it warns, then not
    wanted = WARNING_ISSUE.replace("Expected: no warning", "Expected: a clearer message")
    assert issue_tests(wanted, {"Lazy": "lazyattr"}) == ""  # the issue wants the warning


PAIRED = (
    "The table misses uppercase letters:\n\n```python\n>>> from table import PAIRS, pairs\n"
    ">>> print(PAIRS)\n[('ё', 'e')]\n>>> pairs()\n[('ё', 'e')]\n```\n\n"
    "Expected, with the uppercase forms:\n\n```python\n>>> from table import PAIRS, pairs\n"
    ">>> print(PAIRS)\n[('Ё', 'E'), ('ё', 'e')]\n>>> pairs()\n[('Ё', 'E'), ('ё', 'e')]\n```\n"
)
TABLE_BUGGY = "PAIRS = [('ё', 'e')]\n\n\ndef pairs():\n    return list(PAIRS)\n"
TABLE_FIXED = "PAIRS = [('Ё', 'E'), ('ё', 'e')]\n\n\ndef pairs():\n    return list(PAIRS)\n"


def test_two_sessions_of_the_same_statements_are_the_actual_then_the_expected_output(
    tmp_path: Path,
) -> None:
    """The first session shows what the code prints, the second (after "Expected") what it
    should: what `print(x)` shows is checked as str(x), an expression's value as a literal."""
    test = issue_tests(PAIRED, {})
    assert "assert str(PAIRS) == \"[('Ё', 'E'), ('ё', 'e')]\"" in test
    assert "assert (pairs()) == [('Ё', 'E'), ('ё', 'e')]" in test
    assert exit_codes(tmp_path, test, "table", [TABLE_BUGGY, TABLE_FIXED]) == [1, 0]


def test_two_sessions_with_no_expectation_between_them_make_no_pair() -> None:
    """Two runs of the same statements on two versions ("on 1.2 it prints ..., on 1.3 ...")
    say nothing of which output is wanted."""
    assert issue_tests(PAIRED.replace("Expected, with", "On 1.3, with"), {}) == ""


SELECT = """def select(selector, items):
    return [item for item in items if item.startswith(selector[1:])]
"""
SELECT_FIXED = SELECT.replace(
    "    return [", "    if not selector[1:]:\n        return []\n    return ["
)
EMPTY_PREFIX = """An empty prefix selects every item instead of none.

```python
from selecting import select
items = ["foo", ""]
print("set up")
```

With the release:

```python
>>> select('^', items)
['foo', '']
```

Expected: `[]`, as the standard says.
"""


def test_a_session_gets_the_definitions_of_the_script_before_it(tmp_path: Path) -> None:
    """The session reads `items`, which only the script above it binds: the test starts with
    the script's imports and assignments, not its demonstration (`print`)."""
    code = issue_tests(EMPTY_PREFIX, {"select": "selecting"})
    assert "    items = ['foo', '']" in code or '    items = ["foo", ""]' in code
    assert "print(" not in code
    assert exit_codes(tmp_path, code, "selecting", [SELECT, SELECT_FIXED]) == [1, 0]
    own = EMPTY_PREFIX.replace(
        ">>> select('^', items)", ">>> from selecting import select\n>>> select('^', ['foo', ''])"
    )
    assert "items =" not in issue_tests(own, {"select": "selecting"})


CHAIN = """class Chain:
    def __init__(self, *steps):
        self.steps = steps

    def rewind(self):
        self.position = 0

    def next(self):
        position = self.position
        return self.steps[position - 1]
"""
CHAIN_CHECKED_AT_CREATION = CHAIN.replace(
    "        self.steps = steps",
    "        if not steps:\n            raise ValueError('no steps')\n        self.steps = steps",
)
CHAIN_CHECKED_AT_USE = CHAIN.replace(
    "        return self.steps[position - 1]",
    "        if not self.steps:\n            raise ValueError('no steps')\n"
    "        return self.steps[position - 1]",
)
EMPTY_CHAIN = """A chain without steps fails only when it is used:

```pycon
>>> from chain import Chain
>>> c = Chain()
>>> c.rewind()
>>> c.next()
Traceback (most recent call last):
  ...
IndexError: tuple index out of range
```

The same `IndexError` comes out of `Runner(wait=Chain())` as soon as it has to wait.

Expected: a `Chain()` without steps is rejected with a clear `ValueError` where it is created,
instead of an `IndexError` from inside a running loop.
"""


def test_an_expected_exception_is_raised_where_the_prose_says(tmp_path: Path) -> None:
    """The expectation comes after a call the prose writes (`Runner(...)`). It names the call
    that must raise (`Chain()`, "where it is created"): a fix that raises only when the chain is
    used fails. Where the prose names none, the exception may come from any statement of the
    session, and both fixes pass. The release fails either way; a call that shows no value
    (`c.rewind()`) runs before the one checked."""
    versions = [CHAIN, CHAIN_CHECKED_AT_CREATION, CHAIN_CHECKED_AT_USE]
    code = issue_tests(EMPTY_CHAIN, {"Chain": "chain"})
    assert (
        "from chain import Chain\n    with pytest.raises(ValueError):\n        c = Chain()\n"
        in code
    )
    assert "rewind" not in code
    assert exit_codes(tmp_path, code, "chain", versions) == [1, 0, 1]
    unnamed = EMPTY_CHAIN.replace("a `Chain()` without steps", "a chain without steps")
    code = issue_tests(unnamed, {"Chain": "chain"})
    assert (
        "from chain import Chain\n    with pytest.raises(ValueError):\n"
        "        c = Chain()\n        c.rewind()\n        c.next()"
    ) in code
    assert exit_codes(tmp_path, code, "chain", versions) == [1, 0, 0]


def test_a_quoted_input_is_not_the_value_expected_of_an_object() -> None:
    """The session shows an object; the only literal of the prose is the input it quotes: no
    test compares the object with that string (it could never pass)."""
    issue = (
        ">>> from dates import parse\n>>> parse('2020-01-02T')\ndatetime.date(2020, 1, 1)\n\n"
        "Expected: `'2020-01-02T'` parses to the second of January.\n"
    )
    assert issue_tests(issue, {}) == ""
    text = ">>> from names import title\n>>> title('ab')\n'ab'\n\nExpected: `'Ab'`.\n"
    assert "assert (title('ab')) == 'Ab'" in issue_tests(text, {})


MARKS = """def render(text, strong="**"):
    mark = strong[0] + strong[1:]
    return text.replace("<b>", mark).replace("</b>", mark) + "\\n\\n"
"""
MARKS_FIXED = MARKS.replace("strong[0] + strong[1:]", "strong")
INDENTED_SCRIPT = """IndexError on an empty strong mark

- marks 1.0
- Test script

    ```python
    from marks import render
    result = render("A <b>B</b>", strong="")
    print(result)
    # expected output: A B
    ```
"""


def test_a_script_in_a_list_item_and_its_expected_output_comment_make_a_test(
    tmp_path: Path,
) -> None:
    """The script is indented under a list item; its `# expected output:` is what `print`
    shows, not a literal: the test compares `str(result)`, the ends' whitespace aside."""
    code = issue_tests(INDENTED_SCRIPT, {"render": "marks"})
    assert "    assert str(result).strip() == 'A B'" in code
    assert exit_codes(tmp_path, code, "marks", [MARKS, MARKS_FIXED]) == [1, 0]


ENCODER = """def encode(value):
    return b"A\\x80".hex() if value == b"" else value.hex()
"""
ENCODER_FIXED = ENCODER.replace('b"A\\x80".hex()', '"81"')
STRING_SHOWN_ISSUE = """The encoder misses the perfect match of an empty value

```python
>>> from codec import encode
>>> encode(b'')
'4180'   # indexed literal, 2 bytes
```

Expected: `81` (indexed representation, 1 byte).
"""


def test_a_number_expected_where_the_session_shows_a_string_is_that_string(
    tmp_path: Path,
) -> None:
    code = issue_tests(STRING_SHOWN_ISSUE, {"encode": "codec"})
    assert "assert (encode(b'')) == '81'" in code
    assert exit_codes(tmp_path, code, "codec", [ENCODER, ENCODER_FIXED]) == [1, 0]


LOOKUP = """class Lookup(dict):
    def get(self, key, default=None):
        return super().get(key)
"""
LOOKUP_FIXED = LOOKUP.replace("super().get(key)", "super().get(key, default)")
REGRESSION_ISSUE = """Lookup.get now returns None instead of the default

```
>>> from lookup import Lookup
>>> d = Lookup({'a': 1})
>>> d.get('b', 'test')
>>> d.get('a')
1
```
(lookup 2.4.0)

This is a devastating change in behavior from the previous version:
```
>>> from lookup import Lookup
>>> d = Lookup({'a': 1})
>>> d.get('b', 'test')
'test'
>>> d.get('a')
1
```
(lookup 2.3.2)
"""


def test_a_session_of_the_previous_release_shows_what_is_expected(tmp_path: Path) -> None:
    code = issue_tests(REGRESSION_ISSUE, {"Lookup": "lookup"})
    assert "assert (d.get('b', 'test')) == 'test'" in code and "d.get('a')) ==" not in code
    assert exit_codes(tmp_path, code, "lookup", [LOOKUP, LOOKUP_FIXED]) == [1, 0]
