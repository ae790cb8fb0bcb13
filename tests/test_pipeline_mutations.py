"""Template repairs (pipeline/mutations.py, fix_patterns.py): each fix pattern on a small realistic source, checked
by running the mutated module where practical, and what is never mutated."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from swe_aci.pipeline.fix_patterns import issue_names
from swe_aci.pipeline.missing_fstring import PATTERN as FSTRING
from swe_aci.pipeline.mutations import STRONG, WEAK, Mutant, mutants
from swe_aci.pipeline.structure import targets
from swe_aci.pipeline.templates import changed_label


def edits(source: str, name: str, focus: tuple[int, ...] = (), limit: int = 500) -> list[Mutant]:
    location = next(each for each in targets("m.py", source) if each.qualname == name)
    return mutants(source, location, list(focus), limit)


def only(found: list[Mutant], pattern: str, contains: str = "") -> Mutant:
    (mutant,) = [each for each in found if each.pattern == pattern and contains in each.text]
    return mutant


def load(text: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(text, "m.py", "exec"), namespace)
    return namespace


DESCRIPTOR = '''\
class cached:
    def __init__(self, func):
        self.func = func

    def __get__(self, obj, objtype=None):
        """The value, computed once per instance and kept in its __dict__."""
        value = self.func(obj) if obj is not None else self
        obj.__dict__[self.func.__name__] = value
        return value

class Square:
    side = 3

    @cached
    def area(self):
        return self.side**2
'''


def test_a_statement_reading_a_parameter_gets_a_null_check() -> None:
    with pytest.raises(AttributeError):
        load(DESCRIPTOR)["Square"].area  # noqa: B018
    found = edits(DESCRIPTOR, "cached.__get__")
    checked = [each for each in found if each.pattern == "null check"]
    assert [each.line for each in checked] == [8]  # `obj`, never `self`
    assert "        if obj is not None:\n            obj.__dict__[" in checked[0].text
    square = load(checked[0].text)["Square"]
    assert square.area is square.__dict__["area"]  # the descriptor itself
    assert square().area == 9


def test_a_bound_is_clamped_to_the_length_the_statement_reads() -> None:
    source = """\
def last(text, n=None):
    end = len(text) if n is None else n
    return [text[len(text) - i] for i in range(1, end + 1)]
"""
    with pytest.raises(IndexError):
        load(source)["last"]("ab", 5)
    found = edits(source, "last")
    clamped = only(found, "range check", "end = len(text) if n is None else min(n, len(text))\n")
    assert not any("min(n, len(text)) is" in each.text for each in found)
    assert not any("min(text," in each.text for each in found)  # not what len() measures
    last = load(clamped.text)["last"]
    assert last("ab", 5) == ["b", "a"] and last("abc", None) == ["c", "b", "a"]


def test_an_item_read_at_a_fixed_index_in_a_condition_is_guarded_against_emptiness() -> None:
    source = """\
def tokens(text):
    result = []
    for char in text:
        if char == "+" and result[-1] != "+":
            result[-1] += char
        elif char != " " and (len(result) < 5 or result[0]):
            result.append(char)
    return result
"""
    with pytest.raises(IndexError):
        load(source)["tokens"]("+a")
    found = [each for each in edits(source, "tokens") if each.pattern == "emptiness guard"]
    assert [each.line for each in found] == [4]  # line 6 tests `result` with `len(result)`
    guarded = load(found[0].text)["tokens"]
    assert 'if char == "+" and result and result[-1] != "+":' in found[0].text
    assert guarded("+a") == ["+", "a"] and guarded("a+") == ["a+"]
    tested = source.replace('char == "+" and result[-1]', "result and result[-1]")
    assert not [
        each for each in edits(tested, "tokens") if each.line == 4 and "guard" in each.pattern
    ]


def test_a_name_unpacked_is_guarded_against_emptiness_outside_generators() -> None:
    source = """\
def only(stack):
    result, = stack
    return result


def each(stack):
    first, = stack
    yield first


def pair(stack):
    first, second = stack
    return first
"""
    with pytest.raises(ValueError, match="not enough values to unpack"):
        load(source)["only"]([])
    guarded = only(edits(source, "only"), "empty unpacked")
    assert "    if not stack:\n        return None\n    result, = stack\n" in guarded.text
    assert load(guarded.text)["only"]([]) is None and load(guarded.text)["only"]([7]) == 7
    for name in ("each", "pair"):  # a generator; two items, not the one an empty name lacks
        assert not [each for each in edits(source, name) if each.pattern == "empty unpacked"]


VERSION = """\
class TooManyFields(Exception):
    pass

class VersionError(ValueError):
    pass

class Version:
    def __init__(self, major, minor=0):
        self.major, self.minor = major, minor

    def bump(self):
        if self.major < 0:
            raise VersionError(self.major)
        d = {"major": self.major, "minor": self.minor + 1}
        return Version(**d)

    def __repr__(self):
        return "v" + super(Version, self).__repr__()

    def check(self):
        if self.minor > 99:
            raise TooManyFields(self.minor)
"""


def test_the_class_named_inside_its_method_becomes_type_of_self() -> None:
    found = edits(VERSION, "Version.bump") + edits(VERSION, "Version.__repr__")
    subclassed = only(found, "class of self")
    assert "return type(self)(**d)" in subclassed.text
    namespace = load(subclassed.text + "\n\nclass Tagged(Version):\n    pass\n")
    assert type(namespace["Tagged"](1).bump()) is namespace["Tagged"]
    assert not any("super(type(self)" in each.text for each in found)
    assert not any("raise type(self)(self.major)" in each.text for each in found)


def test_an_exception_class_raised_in_a_method_is_left_alone() -> None:
    assert not [each for each in edits(VERSION, "Version.check") if each.pattern == "class of self"]


def test_regex_anchors_become_backslash_a_and_z_in_raw_and_plain_literals() -> None:
    source = """\
import re

def whole(expr):
    return re.compile(r'^%s$' % expr), re.compile('^%s$' % expr)
"""
    found = edits(source, "whole")
    anchored = [each for each in found if each.pattern == "regex anchor"]
    assert len(anchored) == 4
    compiled = {regex.pattern for each in anchored for regex in load(each.text)["whole"]("ab")}
    assert compiled == {"\\Aab$", "^ab\\Z", "^ab$"}  # one backslash, raw or not
    raw_end = load(only(found, "regex anchor", "r'^%s\\Z'").text)["whole"]("ab")[0]
    assert raw_end.match("ab") and not raw_end.match("ab\n")
    assert load(source)["whole"]("ab")[0].match("ab\n")


def test_an_anchor_in_the_raw_part_of_a_concatenation_stays_a_single_backslash() -> None:
    source = "import re\n\n\ndef stem(name):\n    return re.match('^(\\\\w+)' r'\\.py$', name)\n"
    for each in edits(source, "stem"):
        if each.pattern == "regex anchor":
            assert load(each.text)["stem"]("a.py"), each.description


def test_the_same_quantifier_in_two_literals_is_also_changed_at_once() -> None:
    source = """\
def patterns(a, b):
    first = '%s%s+' % (a, b)
    second = '%s*%s%s+' % (a, b, b)
    return first, second
"""
    found = [each for each in edits(source, "patterns") if each.pattern == "regex quantifier"]
    both = [each for each in found if "and 1 more" in each.description]
    assert len(both) == 1 and "`+` -> `*`" in both[0].description
    assert load(both[0].text)["patterns"]("x", "y") == ("xy*", "x*yy*")
    singles = {load(each.text)["patterns"]("x", "y") for each in found if each not in both}
    assert singles == {("xy*", "x*yy+"), ("xy+", "x+yy+"), ("xy+", "x*yy*")}


def test_an_empty_value_is_not_yielded() -> None:
    source = """\
from itertools import islice

def chunks(items, size):
    it = iter(items)
    for _ in range(len(items) // size + 1):
        yield list(islice(it, size))
"""
    assert list(load(source)["chunks"]([1, 2, 3, 4], 2)) == [[1, 2], [3, 4], []]
    guarded = only(edits(source, "chunks"), "empty value")
    guard = "        value = list(islice(it, size))\n        if value:\n            yield value\n"
    assert guard in guarded.text
    chunks = load(guarded.text)["chunks"]
    assert list(chunks([1, 2, 3, 4], 2)) == [[1, 2], [3, 4]]
    assert list(chunks([1, 2, 3], 2)) == [[1, 2], [3]]


def test_a_condition_is_strengthened_by_the_comparison_its_branch_makes() -> None:
    source = """\
class Amount:
    def __init__(self, sign):
        self._sign = sign

    def format(self, result):
        text = str(result)
        if self._sign:
            sign = "+" if result >= 0 else "-"
            text = sign + text
        return text
"""
    assert load(source)["Amount"](True).format(-3) == "--3"
    strengthened = only(edits(source, "Amount.format"), "condition strengthened")
    assert "        if self._sign and result >= 0:\n" in strengthened.text
    amount = load(strengthened.text)["Amount"]
    runs = ((True, -3), (True, 3), (False, 3))
    assert [amount(sign).format(result) for sign, result in runs] == ["-3", "+3", "3"]


def test_comparison_off_by_one_and_negation_but_no_deletion() -> None:
    source = """\
def tail(items, n, reset):
    if n > len(items):
        return list(items)
    if reset:
        items.clear()
    return items[len(items) - n - 1 :]
"""
    found = edits(source, "tail")
    swapped = only(found, "comparison")
    assert load(swapped.text)["tail"]([1, 2], 2, False) == [1, 2]
    assert load(only(found, "off by one").text)["tail"]([1, 2, 3], 2, False) == [2, 3]
    negated = only(found, "condition negated", "if not (reset):")
    kept = [1, 2, 3]
    load(negated.text)["tail"](kept, 1, True)
    assert kept == [1, 2, 3], negated.description
    # deleting a statement is no template (the most often wrong of the plausible patches)
    statements = len(ast.parse(source).body[0].body)
    assert all(len(ast.parse(each.text).body[0].body) == statements for each in found)
    assert all("items.clear()" in each.text for each in found)


def test_docstrings_decorators_and_other_functions_are_never_mutated() -> None:
    source = '''\
import functools
import re

def before(x):
    return x + 1

@functools.lru_cache(maxsize=8)
def word(text, n=None):
    """^[a-z]+ words, at most n - 1 of them$"""
    if text is not None and n > 1:
        return re.findall(r"^\\w+$", text)[: n - 1]
    return None

def after(x):
    return x - 1
'''
    found = edits(source, "word")
    assert len(found) > 10
    lines = source.splitlines()  # up to the docstring, and the function after
    for each in found:
        new = each.text.splitlines()
        assert new[:9] == lines[:9] and new[-2:] == lines[-2:], each.description


DRAIN = """\
def drain(queue, log):
    try:
        log.append(queue.pop())
    except IndexError:
        pass
    if not queue: log.append(None)

def report(code, verbose, log):
    if verbose:
        print("ok" if code == 0 else "failed")
        log.write("ok" if code == 0 else "failed")
"""


@pytest.mark.parametrize(("source", "name"), [(VERSION, "Version.bump"), (DRAIN, "drain")])
def test_every_mutant_parses_and_differs_from_the_original_and_the_others(
    source: str, name: str
) -> None:
    # drain: line 6 is a one-line `if`; report: twice the same strengthening
    found = edits(source, name)
    dumps = [ast.dump(ast.parse(each.text)) for each in found]
    assert len(found) >= 3 and len(set(dumps)) == len(dumps)
    assert ast.dump(ast.parse(source)) not in dumps
    report = [each.description for each in edits(DRAIN, "report")]
    assert report.count("condition strengthened, line 9: `verbose` -> `verbose and code == 0`") == 1


def test_the_limit_keeps_the_first_mutants() -> None:
    found = edits(VERSION, "Version.bump")
    assert edits(VERSION, "Version.bump", limit=4) == found[:4]
    assert edits(VERSION, "Version.bump", limit=0) == []
    assert mutants("def broken(:\n", targets("m.py", VERSION)[0], [], 10) == []


def test_edits_on_the_focus_lines_come_first() -> None:
    source = """\
def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x
"""

    def order(focus: tuple[int, ...]) -> list[tuple[str, int]]:
        return [(each.pattern, each.line) for each in edits(source, "clamp", focus)]

    assert [line for pattern, line in order(()) if pattern == "comparison"] == [2, 4]
    focused = order((4, 5))
    assert [line for pattern, line in focused if pattern == "comparison"] == [4, 2]
    assert focused.index(("comparison", 4)) < focused.index(("condition negated", 4))  # tiers


def test_a_character_class_of_a_module_constant_is_repeated() -> None:
    source = (
        'import re\n\nNOT_ALLOWED = re.compile(r"[^a-z0-9]")\n\n\n'
        "def slugify(text):\n    return NOT_ALLOWED.sub('-', text.lower()).strip('-')\n"
    )
    repeated = only(edits(source, "NOT_ALLOWED"), "regex quantifier")
    assert repeated.description == "regex quantifier, line 3: `]` -> `]+`"
    assert load(repeated.text)["slugify"]("Hello,  World!") == "hello-world"
    assert load(source)["slugify"]("Hello,  World!") == "hello---world"


def test_the_strong_and_the_weak_patterns_split_the_catalogue() -> None:
    source = "def leap(year):\n    return year % 4 == 0 and year % 100 != 0\n"
    location = next(each for each in targets("m.py", source) if each.qualname == "leap")
    strong = {each.pattern for each in mutants(source, location, [], 500, tiers=STRONG)}
    weak = {each.pattern for each in mutants(source, location, [], 500, tiers=WEAK)}
    every = {each.pattern for each in mutants(source, location, [], 500)}
    assert "comparison" in strong and not strong & weak and strong | weak == every
    assert {"boolean operator", "operand dropped", "integer"} <= weak


PLATFORMS = '''\
import sysconfig

DEFAULT = "generic"


def platforms():
    """The platform tags, most specific first."""
    version = sysconfig.get_config_var("PYEMSCRIPTEN_ABI_VERSION")
    if version:
        yield f"pyemscripten_{version}_wasm32"
    yield "Emscripten"
'''
PLATFORMS_ISSUE = """The interpreter publishes `PYEMSCRIPTEN_PLATFORM_VERSION` (e.g. `"2026_0"`); packaging
reads another name. On `Emscripten` (`sysconfig.get_platform()` is "emscripten-5.0.3-wasm32"),
`DEFAULT` and `PYEMSCRIPTEN_ABI_VERSION` are both mentioned here too."""


def test_a_literal_naming_something_else_is_renamed_to_what_the_issue_quotes() -> None:
    names = issue_names(PLATFORMS_ISSUE)
    assert "PYEMSCRIPTEN_PLATFORM_VERSION" in names and "2026_0" not in names
    location = next(each for each in targets("m.py", PLATFORMS) if each.qualname == "platforms")
    found = mutants(PLATFORMS, location, [], 500, issue=PLATFORMS_ISSUE)
    renamed = [each for each in found if each.pattern == "literal named by the issue"]
    # one rename: not to a name the file holds (`DEFAULT`, the literal itself), not across a
    # case (`Emscripten`, "emscripten-5.0.3-wasm32"), not the f-string, not the docstring
    assert [each.description for each in renamed] == [
        "literal named by the issue, line 8: `PYEMSCRIPTEN_ABI_VERSION` -> "
        "`PYEMSCRIPTEN_PLATFORM_VERSION`"
    ]
    namespace = load(renamed[0].text)
    namespace["sysconfig"].get_config_var = {"PYEMSCRIPTEN_PLATFORM_VERSION": "2026_0"}.get
    assert list(namespace["platforms"]()) == ["pyemscripten_2026_0_wasm32", "Emscripten"]
    assert not [each for each in edits(PLATFORMS, "platforms") if "PLATFORM_VERSION" in each.text]


SAVER = '''"""Files."""

import os


class Saver:
    def __init__(self, dest_path, suffix=".part"):
        """Saves atomically."""
        self.dest_path = dest_path
        self.suffix = suffix
        self.part_path = dest_path + ".part"


def find_files(directory, pattern):
    depth = len(directory.split(os.path.sep))
    return [(depth, name) for name in os.listdir(directory) if name.endswith(pattern)]


def unrelated(directory):
    return directory.split("/")
'''
SAVER_ISSUE = """Saver and find_files fail when given a pathlib.Path:

    >>> Saver(pathlib.Path('/tmp/out.bin'))
    TypeError: unsupported operand type(s) for +: 'PosixPath' and 'str'
"""


def test_path_arguments_the_issue_names_are_converted_together(tmp_path: Path) -> None:
    location = next(each for each in targets("m.py", SAVER) if each.qualname == "Saver.__init__")
    found = [each for each in mutants(SAVER, location, [], 500, issue=SAVER_ISSUE)
             if each.pattern == "path-like argument"]  # fmt: skip
    described = [each.description for each in found]
    assert described == [
        "path-like argument, line 9: `` -> `dest_path = os.fspath(dest_path)`",
        "path-like argument, line 9 and 1 more: `` -> `dest_path = os.fspath(dest_path)`",
        "path-like argument, line 15: `` -> `directory = os.fspath(directory)`",
    ]  # `suffix` is no str-only use, `unrelated` is not named, the docstring stays first
    labels = [changed_label(SAVER, each.text, location) for each in found]
    assert labels == ["m.py::Saver.__init__", "m.py::Saver.__init__ + m.py::find_files",
                      "m.py::find_files"]  # fmt: skip
    together = load(found[1].text)
    (tmp_path / "a.py").write_text("")
    saver = together["Saver"](tmp_path / "out.bin")
    assert saver.part_path == f"{tmp_path}/out.bin.part"
    assert together["find_files"](tmp_path, ".py")[0][1] == "a.py"
    # without the issue's word for paths, or without `import os` in the module: nothing
    assert not [each for each in mutants(SAVER, location, [], 500, issue="Saver fails.")
                if each.pattern == "path-like argument"]  # fmt: skip
    no_os = SAVER.replace("import os\n", "from os import path\n")
    assert not [each for each in mutants(no_os, location, [], 500, issue=SAVER_ISSUE)
                if each.pattern == "path-like argument"]  # fmt: skip


ISODATE = """class Parser:
    def parse_isodate(self, datestr):
        datestr = datestr.encode("ascii")
        if len(datestr) != 10:
            raise ValueError("String contains unknown ISO " +
                             "components: {}".format(datestr))
        return datestr

    def parse_time(self, timestr):
        timestr = timestr.encode("ascii")
        raise ValueError(f"bad time {timestr}")
"""


def test_bytes_shown_in_a_message_are_decoded_and_quoted_as_text() -> None:
    issue = "ValueError: String contains unknown ISO components: b'2014-0423'"
    assert raised_messages("Parser.parse_isodate", issue, "2014-0423") == [
        "String contains unknown ISO components: 2014-0423",
        "String contains unknown ISO components: '2014-0423'",
    ]
    assert raised_messages("Parser.parse_time", issue, "12:30") == [
        "bad time 12:30",
        "bad time '12:30'",
    ]  # in an f-string
    # an issue showing no bytes literal calls for none
    assert raised_messages("Parser.parse_isodate", "a bad message", "2014-0423") == []


def raised_messages(method: str, issue: str, argument: str) -> list[str]:
    """The message each "bytes shown as text" edit of `method` of ISODATE raises."""
    messages = []
    for mutant in edits_with(ISODATE, method, issue):
        if mutant.pattern == "bytes shown as text":
            with pytest.raises(ValueError) as raised:
                getattr(load(mutant.text)["Parser"](), method.split(".")[1])(argument)
            messages.append(str(raised.value))
    return messages


def edits_with(source: str, name: str, issue: str) -> list[Mutant]:
    location = next(each for each in targets("m.py", source) if each.qualname == name)
    return mutants(source, location, [], 500, issue=issue)


BINDER = '''\
LABEL = "schema"


def bind(field_name, field_class):
    """A field is an instance, {field_name} says which."""
    if isinstance(field_class, type):
        message = (
            'Field for "{field_name}" must be an instance. '
            "Declare it as one: "
            'fields.{field_class.__name__}()'
        )
        raise TypeError(message)
    template = "{field_name} is bound to {LABEL}"
    return "{field_name} bound".format(field_name=field_name) + template
'''


def test_a_string_with_the_placeholders_the_issue_shows_becomes_an_f_string() -> None:
    """Every literal whose placeholders the issue shows and the function binds gets its `f`,
    together; not the docstring, a literal `.format` fills, or one reading a name the function
    does not bind (`LABEL`)."""
    issue = 'TypeError: Field for "{field_name}" must be ... fields.{field_class.__name__}()'
    found = [each for each in edits_with(BINDER, "bind", issue) if each.pattern == FSTRING]
    assert len(found) == 3  # each of the two literals alone, and both at once
    both = next(each for each in found if "and 1 more" in each.description)
    with pytest.raises(TypeError) as raised:
        load(both.text)["bind"]("name", int)
    assert (
        str(raised.value) == 'Field for "name" must be an instance. Declare it as one: fields.int()'
    )
    assert load(both.text)["bind"]("name", 1) == "name bound{field_name} is bound to {LABEL}"
    # an issue that shows none of the placeholders calls for none
    assert not [
        each for each in edits_with(BINDER, "bind", "a bad message") if each.pattern == FSTRING
    ]


def test_a_value_tested_for_truth_is_tested_for_none() -> None:
    """hpack's perfect match of a header whose value is empty: `if perfect:` took `b""` for no
    match."""
    source = """\
def encode(match, fallback):
    index, perfect = match
    if perfect:
        return ("indexed", index)
    while not fallback.ready and -index:
        return ("literal", index)
    return ("none", index)
"""

    class Fallback:
        ready = False

    assert load(source)["encode"]((2, b""), Fallback()) == ("literal", 2)
    found = [each for each in edits(source, "encode") if each.pattern == "none test"]
    assert [each.description.split(": ", 1)[1] for each in found] == [
        "`perfect` -> `perfect is not None`",
        "`not fallback.ready` -> `fallback.ready is None`",
    ]
    assert load(found[0].text)["encode"]((2, b""), Fallback()) == ("indexed", 2)
    assert load(found[0].text)["encode"]((2, None), Fallback()) == ("literal", 2)


def test_a_variable_read_is_made_another_named_alike() -> None:
    """backoff's retry loop: `max_time` (the callable) read where `max_time_value` (what it
    returned) was meant."""
    source = """\
def retry(call, max_time, clock):
    def attempt():
        max_time_value = max_time() if callable(max_time) else max_time
        elapsed = clock()
        items = []
        if max_time is not None and elapsed >= max_time_value:
            return "gave up"
        for item in [elapsed]:
            items.append(item)
        return call(elapsed, max_time)

    return attempt()
"""

    def shown(elapsed: int, limit: object) -> str:
        return f"{elapsed} {limit}"

    with pytest.raises(TypeError):  # `9 >= None`: no limit returned, yet `max_time` is set
        load(source)["retry"](shown, lambda: None, lambda: 9)
    found = [each for each in edits(source, "retry") if each.pattern == "similar name"]
    described = {each.description.split(": ", 1)[1] for each in found}
    assert "`max_time` -> `max_time_value`" in described
    assert "`item` -> `items`" in described
    # never a name assigned on the read's own line or later, never an unrelated one
    assert "`max_time` -> `elapsed`" not in described
    assert not [each for each in found if "max_time_value = max_time_value" in each.text]
    both = [each for each in found if "and 1 more" in each.description]
    fixed = [each for each in both if "max_time_value is not None" in each.text]
    assert len(fixed) == 1
    retry = load(fixed[0].text)["retry"]
    assert retry(shown, lambda: None, lambda: 9) == "9 None"
    assert retry(shown, lambda: 5, lambda: 9) == "gave up"
    assert retry(shown, lambda: 50, lambda: 9) == "9 50"


def test_a_default_or_a_choice_made_on_truth_is_made_on_none() -> None:
    """pyotp's `initial_count if initial_count else self.initial_count` took a given 0 for none
    given; `count or 10` the same."""
    source = """\
def uri(initial_count, default, count=None):
    first = initial_count if initial_count else default
    return first, count or 10
"""
    assert load(source)["uri"](0, 7, 0) == (7, 10)
    found = [each for each in edits(source, "uri") if each.pattern == "none test"]
    assert [each.description.split(": ", 1)[1] for each in found] == [
        "`initial_count` -> `initial_count is not None`",
        "`count or 10` -> `(count if count is not None else 10)`",
    ]
    assert load(found[0].text)["uri"](0, 7, 0) == (0, 10)
    assert load(found[1].text)["uri"](0, 7, 0) == (7, 0)
    assert load(found[1].text)["uri"](0, 7) == (7, 10)


def test_a_pattern_given_to_re_is_a_regex_and_a_match_of_its_start_can_match_the_whole() -> None:
    """json-pointer's `_RE_ARRAY_INDEX.match(part)` took `01` for an index; inflect's
    `re.compile(r"^(.*)'s?$")` (no class, no escape: read as a regex since `re` is given it)
    matched a lone apostrophe."""
    source = """\
import re

_RE_ARRAY_INDEX = re.compile("0|[1-9][0-9]*")


def index(part, word):
    if not _RE_ARRAY_INDEX.match(part):
        raise ValueError(part)
    return int(part), re.compile(r"^(.*)'s?$").match(word) is not None
"""
    assert load(source)["index"]("01", "'") == (1, True)
    found = edits(source, "index")
    anchored = only(found, "regex anchor", "_RE_ARRAY_INDEX.fullmatch(part)")
    with pytest.raises(ValueError):
        load(anchored.text)["index"]("01", "'")
    plural = only(found, "regex quantifier", "(.+)")
    assert load(plural.text)["index"]("1", "'") == (1, False)
    assert load(plural.text)["index"]("1", "cat's") == (1, True)
    # a method named `match` of anything else is left alone
    other = "def pick(menu):\n    return menu.match(1)\n"
    assert not [each for each in edits(other, "pick") if "fullmatch" in each.text]


def test_a_branch_popping_from_a_sequence_is_guarded_against_its_emptiness() -> None:
    """typeguard's protocol check: `if subject_type == "instance": subject_args.pop(0)` raised
    IndexError for a method with no positional parameter."""
    source = """\
def compatible(protocol_args, subject_args, subject_type):
    if subject_type == "instance" or not protocol_args:
        subject_args.pop(0)
    if subject_args:
        first = subject_args[0]
    return len(subject_args) >= len(protocol_args)
"""
    with pytest.raises(IndexError):
        load(source)["compatible"](["x"], [], "instance")
    found = [each for each in edits(source, "compatible") if each.pattern == "emptiness guard"]
    # the second branch tests `subject_args` already
    assert [each.description.split(": ", 1)[1] for each in found] == [
        '`subject_type == "instance" or not protocol_args` -> '
        '`(subject_type == "instance" or not protocol_args) and subject_args`'
    ]
    guarded = load(found[0].text)["compatible"]
    assert guarded(["x"], [], "instance") is False
    assert guarded([], ["self", "x"], "instance") is True


def test_an_item_read_at_a_computed_index_in_a_condition_is_guarded_by_the_length() -> None:
    """toml's `item == '\\r' and sl[i + 1] == '\\n'` raised IndexError on a document ending in a
    carriage return."""
    source = """\
def lines(sl):
    for i, item in enumerate(sl):
        if item == '\\r' and sl[i + 1] == '\\n':
            sl[i] = ' '
        while len(sl) > i and sl[i] == ' ':
            i += 1
    return ''.join(sl)
"""
    with pytest.raises(IndexError):
        load(source)["lines"](list("a\r"))
    found = [each for each in edits(source, "lines") if each.pattern == "index guard"]
    # the `while` reads `len(sl)` already
    assert [each.description for each in found] == [
        "index guard, line 3: `` -> `len(sl) > i + 1 and`"
    ]
    guarded = load(found[0].text)["lines"]
    assert guarded(list("a\r")) == "a\r"
    assert guarded(list("a\r\nb")) == "a \nb"
