"""Reproduction tests from the issue's own examples, without the model: `>>>` sessions (the shown
output is the wrong one; the expected value comes from the prose after it), "`call` returns X ...
expected Y" sentences, comparisons in backticks (`f(x) == 5`), `# expected:` comments in a code
block, tracebacks (the call must not raise, or must raise the exception the issue expects, or
raise the one shown with the message the prose expects instead of the shown one), and a script's
line commented with a warning the issue wants gone (it must not warn).
Each is a pytest function; the pipeline keeps those that fail at the base. Also what the issue
names (paths, traceback frames), which localization puts first."""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field

from swe_aci.pipeline.imports import with_imports
from swe_aci.pipeline.skeleton import module_name, parse
from swe_aci.retrieval.documents import is_test_path

PROMPT = re.compile(r"^\s*>>> ?(.*)$")
CONTINUATION = re.compile(r"^\s*\.\.\. ?(.*)$")
IMPORT_LINE = re.compile(r"^(?:import [\w.]+|from [\w.]+ import \w)")
EXCEPTION_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt))\b:?")
EXPECTATION = re.compile(
    r"(?i)\b(?:expected|expect|should\s+(?:be|return|give|equal|yield)|must\s+(?:be|return|give)"
    r"|instead\s+of|rather\s+than|they\s+should\s+be)\b:?"
)
MESSAGE_WORDS = re.compile(r"(?i)\b(message|warning|warns?)\b")
RAISES = re.compile(r"(?i)\braises?\s+(?:an?\s+)?`?([A-Za-z_][\w.]*)`?")
EXCEPTION_NAME = re.compile(r"`?\b([A-Za-z_][\w.]*(?:Error|Exception))\b`?")
BACKTICKS = re.compile(r"`([^`\n]+)`")
OBJECT_REPR = re.compile(r"^<\w[^<>]*>$")  # `<Result ('a\n',) {}>`: what repr() of an object prints
CLAUSE_END = re.compile(r"[:;]\s")
REPR_PREFIX = "repr:"
PLAIN_LITERAL = re.compile(
    r"""^\s*(-?\d[\d_]*(?:\.\d+)?(?:e-?\d+)?|True|False|None|"[^"\n]*"|'[^'\n]*'|\[[^\]\n]*\]|\([^)\n]*\)|\{[^}\n]*\})"""
)
SENTENCE_END = re.compile(r"(?<!\d)\.(?:\s|$)|\n\s*\n")
CALL = re.compile(r"`([A-Za-z_][\w.]*\([^`\n]*\))`|(?<![\w.`])([A-Za-z_][\w.]*\([^()\n]*\))")
FENCE = re.compile(r"```[\w+-]*[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
TRACEBACK_FRAME = re.compile(r'File "([^"]+)", line \d+, in (\w+)')
PATH = re.compile(r"(?<![\w/.])((?:[\w-]+/)*[\w-]+\.py)\b")
BUILTIN_EXCEPTIONS = {name for name in dir(builtins) if name.endswith(("Error", "Exception"))}
REPORTED = re.compile(
    r"`([A-Za-z_][\w.]*\([^`\n]*\))`\s+(?:returns|gives|says|is|prints|yields|outputs)\s+"
)
BUILTIN_WARNINGS = {name for name in dir(builtins) if name.endswith("Warning")}
UNWANTED_WARNING = re.compile(
    r"(?i)\bno\s+(?:\w+\s+)?warnings?\b|\b(?:should|must)\s+not\s+(?:warn|emit)"
    r"|\bwithout\s+(?:a\s+|any\s+)?(?:\w+\s+)?warnings?\b"
)
CONTRAST = re.compile(r"^\s*,?\s*but\b")
MESSAGE_PREFIX = 12  # characters an expected message shares with the shown one, at least
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w]|\.\d)")
WARNING_COMMENT = re.compile(r"\s#.*?\b([A-Z]\w*Warning)\b")
WARNING_FILTER = re.compile(r"^warnings\.(?:simplefilter|filterwarnings|resetwarnings)\(")


@dataclass
class Statement:
    source: str
    output: list[str] = field(default_factory=list)

    @property
    def raised(self) -> str | None:
        """The exception the session shows (a traceback or an `Error: ...` line), if any."""
        for line in reversed(self.output):
            if match := EXCEPTION_LINE.match(line):
                return match.group(1)
        return None

    @property
    def message(self) -> str | None:
        """The message of the exception the session shows (`ValueError: bad b'x'` -> `bad b'x'`)."""
        for line in reversed(self.output):
            if match := EXCEPTION_LINE.match(line):
                return line[match.end() :].strip() or None
        return None

    @property
    def expression(self) -> str | None:
        tree = parse(self.source)
        if tree is not None and len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
            return self.source.strip()
        return None


@dataclass(frozen=True)
class Mentions:
    """Paths and function names the issue gives (traceback frames first)."""

    paths: tuple[str, ...]
    names: tuple[str, ...]


def literal(text: str) -> str | None:
    """`text` when it is a Python literal (its canonical repr), else None."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return repr(value)


def sessions(issue: str) -> list[tuple[list[Statement], str]]:
    """Each `>>>` session with the prose after it (up to the next session)."""
    found: list[tuple[list[Statement], int, int]] = []
    lines = issue.splitlines()
    current: list[Statement] = []
    start = end = 0
    in_output = False
    for number, line in enumerate(lines):
        prompt = PROMPT.match(line)
        continuation = CONTINUATION.match(line)
        if prompt:
            if not current:
                start = number
            current.append(Statement(prompt.group(1)))
            in_output = False
            end = number
        elif current and continuation and not in_output:
            if continuation.group(1).strip():
                current[-1].source += "\n" + continuation.group(1)
            end = number
        elif current and line.strip() and not line.strip().startswith("```"):
            current[-1].output.append(line.strip())
            in_output = True
            end = number
        elif current:
            found.append((current, start, end))
            current, in_output = [], False
    if current:
        found.append((current, start, end))
    result = []
    for index, (statements, _start, last) in enumerate(found):
        following = found[index + 1][1] if index + 1 < len(found) else len(lines)
        result.append((statements, "\n".join(lines[last + 1 : following])))
    return result


def expected_literals(prose: str) -> list[str]:
    """The literals stated as expected in `prose`, in order."""
    values: list[str] = []
    for match in EXPECTATION.finditer(prose):
        rest = prose[match.end() :]
        stop = SENTENCE_END.search(rest)
        sentence = first_clause(rest[: stop.start() if stop else len(rest)])
        spans = [value for span in BACKTICKS.findall(sentence) if (value := expected_value(span))]
        values.extend(spans or plain_literals(sentence))
    return values


def first_clause(sentence: str) -> str:
    """`sentence` up to the colon or semicolon after its first backticked span: in "Expected
    `X`: the whole string matches `{}`" the `{}` explains, it is not expected."""
    first = BACKTICKS.search(sentence)
    end = CLAUSE_END.search(sentence, first.end()) if first else None
    return sentence[: end.start()] if end else sentence


def expected_value(span: str) -> str | None:
    """A backticked expected value: a literal (its canonical repr), or an object's repr as
    printed (`<Result ('a',) {}>`, compared with repr() of the result; not one that shows an
    address, `<Foo object at 0x...>`, which no run repeats), else None."""
    if OBJECT_REPR.match(span.strip()) and " at 0x" not in span:
        return REPR_PREFIX + span.strip()
    return literal(span)


def shown_as(output: list[str], expected: str) -> bool:
    """Whether a session's shown output already is the expected value."""
    text = " ".join(output)
    if expected.startswith(REPR_PREFIX):
        return text.strip() == expected.removeprefix(REPR_PREFIX)
    return literal(text) == expected


def plain_literals(text: str) -> list[str]:
    """The literals `text` starts with, separated by commas, `and`, `or` or `/`."""
    values = []
    while (found := PLAIN_LITERAL.match(text)) and (value := literal(found.group(1))):
        values.append(value)
        text = re.sub(r"^\s*(?:,|/|\band\b|\bor\b)?", "", text[found.end() :], count=1)
    return values


def before_next_call(prose: str) -> str:
    """The prose up to the first call it writes: literals after a call belong to that call."""
    first = CALL.search(prose)
    return prose[: first.start()] if first else prose


def expected_exception(prose: str) -> str | None:
    """The exception the prose says should be raised (`raises X`, `Expected a ValueError`)."""
    for match in EXPECTATION.finditer(prose):
        rest = prose[match.end() : match.end() + 200]
        if found := RAISES.search(rest) or EXCEPTION_NAME.search(rest):
            return found.group(1)
    return None


def expected_message(shown: str, prose: str) -> str | None:
    """The message the prose expects instead of the one `shown`: the first backticked span
    after an expectation word that differs from it but opens as it does (the same first
    MESSAGE_PREFIX characters, or half of a shorter one): "Expected ... as a normal string: `String contains
    unknown ISO components: '2014-0423'`" against `... components: b'2014-0423'`."""
    start = EXPECTATION.search(prose)
    if start is None:
        return None
    for span in BACKTICKS.findall(prose[start.end() :]):
        common = next(
            (i for i, (a, b) in enumerate(zip(span, shown, strict=False)) if a != b),
            min(len(span), len(shown)),
        )
        if span != shown and common >= min(MESSAGE_PREFIX, max(3, len(shown) // 2)):
            return span
    return None


def message_test(statements: list[Statement], statement: Statement, message: str) -> list[str]:
    """The statement must raise what the session shows (a built-in or dotted exception, else
    any) with the message `message`."""
    name = statement.raised or "Exception"
    if "." not in name and name not in BUILTIN_EXCEPTIONS:
        name = "Exception"
    index = statements.index(statement)
    setup = [s.source for s in statements[:index] if not s.raised and s.expression is None]
    return [
        *imports_for(name),
        *setup,
        f"with pytest.raises({name}) as raised:",
        indent(statement.source),
        f"assert str(raised.value) == {message!r}",
    ]


def imports_for(name: str) -> list[str]:
    """The import a dotted exception name needs (`packaging.version.InvalidVersion`)."""
    module = name.rpartition(".")[0]
    return [f"import {module}"] if module else []


def check(expression: str, expected: str) -> str:
    if expected.startswith(REPR_PREFIX):
        return f"assert repr({expression}) == {expected.removeprefix(REPR_PREFIX)!r}"
    value = ast.literal_eval(expected)
    if isinstance(value, float):
        return f"assert ({expression}) == pytest.approx({expected})"
    return f"assert ({expression}) == {expected}"


def session_tests(statements: list[Statement], prose: str) -> list[list[str]]:
    """Test bodies (lines) from one session."""
    shown = [s for s in statements if s.expression and s.output and not s.raised]
    raising = [s for s in statements if s.raised]
    expected = expected_literals(before_next_call(prose))
    exception = expected_exception(before_next_call(prose))
    checks: list[tuple[Statement, str]] = []
    if exception is not None and "." not in exception and exception not in BUILTIN_EXCEPTIONS:
        exception = None  # a bare name the test could not import
    if exception:
        for statement in [*shown, *raising]:
            if not statement.source.lstrip().startswith("try"):
                checks.append((statement, f"raises:{exception}"))
            else:
                checks.append((statement, "runs"))
    elif expected and shown:
        if len(expected) == 1:
            targets = [s for s in shown if not shown_as(s.output, expected[0])]
            checks.extend((s, expected[0]) for s in targets)
        elif len(expected) == len(shown):
            checks.extend(zip(shown, expected, strict=True))
    messages = [
        (s, wanted)
        for s in raising
        if s.message and (wanted := expected_message(s.message, before_next_call(prose)))
    ]
    if not checks and messages:
        return [message_test(statements, s, wanted) for s, wanted in messages]
    if not checks and raising and not MESSAGE_WORDS.search(prose) and not exception:
        checks.extend((s, "runs") for s in raising)
    if not checks and raising and exception:
        checks.extend((s, "runs") for s in raising if s.source.lstrip().startswith("try"))
    bodies = []
    for statement, wanted in checks:
        index = statements.index(statement)
        setup = [s.source for s in statements[:index] if not s.raised and s.expression is None]
        body = [*setup]
        if wanted == "runs":
            body.append(statement.source)
        elif wanted.startswith("raises:"):
            name = wanted.removeprefix("raises:")
            body = [*imports_for(name), *body, f"with pytest.raises({name}):"]
            body.append(indent(statement.source))
        else:
            body.append(check(statement.expression or statement.source, wanted))
        bodies.append(body)
    return bodies


def issue_imports(issue: str) -> list[str]:
    """The import statements of the issue's code (`>>>` lines and code blocks), each once, in
    order: what a test of its example has to import, as the issue's reporter did."""
    found: list[str] = []
    for line in issue.splitlines():
        prompt = PROMPT.match(line)
        statement = (prompt.group(1) if prompt else line).strip()
        if not IMPORT_LINE.match(statement) or statement in found:
            continue
        try:
            ast.parse(statement)
        except SyntaxError:
            continue
        found.append(statement)
    return found


def reproduction_imports(issue: str, module: str, name: str) -> list[str]:
    """The imports a model-written test starts with: the issue's own, then, when none of them
    imports the package of `module`, that package (the issue writes `pkg.f(...)`) or the
    chosen function `name` from `module`."""
    own = issue_imports(issue)
    package = module.split(".")[0]
    if any(re.search(rf"\b{re.escape(package)}\b", line) for line in own):
        return own
    if re.search(rf"(?<![\w.]){re.escape(package)}\.\w", issue):
        return [*own, f"import {package}"]
    return [*own, f"from {module} import {name.split('.')[0]}"]


def indent(source: str) -> str:
    return "\n".join("    " + line for line in source.splitlines())


def outside_code(issue: str) -> str:
    """The issue's prose: without its code blocks and `>>>` lines."""
    return FENCE.sub(
        "\n\n", "\n".join(line for line in issue.splitlines() if not PROMPT.match(line))
    )


def comparison_tests(issue: str, importable: dict[str, str]) -> list[list[str]]:
    """Tests from comparisons the prose writes in backticks, `f(x) == 5`: a call of the
    repository's code on the left, a literal on the right."""
    bodies = []
    for span in BACKTICKS.findall(outside_code(issue)):
        tree = parse(span)
        if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
            continue
        compare = tree.body[0].value
        if not (
            isinstance(compare, ast.Compare)
            and len(compare.ops) == 1
            and isinstance(compare.ops[0], ast.Eq)
            and (value := literal(ast.unparse(compare.comparators[0])))
        ):
            continue
        calls = [node for node in ast.walk(compare.left) if isinstance(node, ast.Call)]
        roots = {
            node.id for call in calls for node in ast.walk(call.func) if isinstance(node, ast.Name)
        }
        if roots & importable.keys():
            bodies.append([check(ast.get_source_segment(span, compare.left) or "", value)])
    return bodies


def inline_tests(issue: str, importable: dict[str, str]) -> list[list[str]]:
    """Tests from sentences outside sessions: calls the issue writes (`f(x)` returns ...) and the
    literals it expects after them, paired in order. `importable` maps a top-level function or
    class name to its module."""
    prose = outside_code(issue)
    bodies = []
    for paragraph in re.split(r"\n\s*\n", prose):
        calls = []
        for match in CALL.finditer(paragraph):
            call = match.group(1) or match.group(2)
            tree = parse(call)
            root = call_root(call)
            expression = tree is not None and isinstance(tree.body[0], ast.Expr)
            fresh = root in importable and call not in calls and not names_function(call, issue)
            if expression and fresh:
                calls.append(call)
        if not calls:
            continue
        pairs = segment_pairs(paragraph, calls)
        if pairs is None:
            expected = expected_literals(paragraph)
            if len(expected) != len(calls):
                continue
            pairs = list(zip(calls, expected, strict=True))
        bodies.extend(call_test(call, value, importable) for call, value in pairs)
    return bodies


def call_root(call: str) -> str:
    """The name a call starts from: `f` of `f(x)`, `Version` of `Version.parse("1")`."""
    return call.split("(")[0].split(".")[0]


def call_test(call: str, value: str, importable: dict[str, str]) -> list[str]:
    """A test body: the call's root imported from its module, the call checked against `value`."""
    root = call_root(call)
    return [f"from {importable[root]} import {root}", check(call, value)]


def names_function(call: str, issue: str) -> bool:
    """Whether prose's `f()` names the function rather than calls it: the issue calls `f` with
    arguments elsewhere ("`key()` of a one-element list" beside `tomlkit.key(["my_key"])`)."""
    if not call.endswith("()"):
        return False
    function = call.split("(")[0].rsplit(".", 1)[-1]
    return re.search(rf"(?<!\w){re.escape(function)}\((?!\))", issue) is not None


def segment_pairs(paragraph: str, calls: list[str]) -> list[tuple[str, str]] | None:
    """Each call with the one literal expected between it and the next call; None unless every
    call has exactly one."""
    positions = [paragraph.find(call) for call in calls]
    pairs = []
    for index, call in enumerate(calls):
        end = positions[index + 1] if index + 1 < len(calls) else len(paragraph)
        expected = expected_literals(paragraph[positions[index] + len(call) : end])
        if len(expected) != 1:
            return None
        pairs.append((call, expected[0]))
    return pairs


def reported_outputs(issue: str) -> list[tuple[str, str]]:
    """What the issue reports a call gives at the base, the bug itself: (`call`, its value's
    literal) of each "`is_leap_year(2000)` returns False" (says, gives, is, prints)."""
    return [(call, value) for call, value, _ in reported_with_rest(issue)]


def reported_with_rest(issue: str) -> list[tuple[str, str, str]]:
    """(`call`, the literal reported for it, the text after that literal) of each reported
    output."""
    found = []
    for match in REPORTED.finditer(issue):
        rest = issue[match.end() :]
        found_text = re.match(r"`([^`\n]+)`", rest) or PLAIN_LITERAL.match(rest)
        value = literal(found_text.group(1)) if found_text else None
        if found_text and value is not None:
            found.append((match.group(1), value, rest[found_text.end() :]))
    return found


def contrast_tests(issue: str, importable: dict[str, str]) -> list[list[str]]:
    """Tests from a reported output contrasted with the one other value its sentence gives:
    "`median([1, 2, 3, 4])` gives 3, but the median of an even count is ..., 2.5 here" (the
    call must give 2.5). Only where the clause after "but" holds exactly one literal (a
    backticked one, else a number) other than the reported value."""
    bodies = []
    for call, reported, rest in reported_with_rest(outside_code(issue)):
        contrast = CONTRAST.match(rest)
        if contrast is None or call_root(call) not in importable:
            continue
        clause = rest[contrast.end() :]
        stop = SENTENCE_END.search(clause)
        clause = clause[: stop.start() if stop else len(clause)]
        spans = [value for span in BACKTICKS.findall(clause) if (value := expected_value(span))]
        numbers = [value for number in NUMBER.findall(clause) if (value := literal(number))]
        values = set(spans or numbers) - {reported}
        if len(values) == 1:
            bodies.append(call_test(call, values.pop(), importable))
    return bodies


def scripts(issue: str) -> list[list[str]]:
    """The lines of each code block of the issue that is a script (it parses, no `>>>`)."""
    return [
        block.rstrip().splitlines()
        for block in FENCE.findall(issue)
        if not PROMPT.search(block) and parse(block) is not None
    ]


def expected_comment_tests(issue: str) -> list[list[str]]:
    """A code block whose `print(x)` is followed by `# expected: <literal>`."""
    bodies = []
    for lines in scripts(issue):
        for number, line in enumerate(lines):
            match = re.match(r"\s*#\s*expected\s*:\s*(.+)$", line, re.IGNORECASE)
            printed = [
                (index, found.group(1))
                for index in range(number - 1, -1, -1)
                if (found := re.match(r"print\((.*)\)\s*$", lines[index]))
            ]
            if match and printed and (value := literal(match.group(1))):
                index, expression = printed[0]
                code = [item for item in lines[:index] if not item.lstrip().startswith("#")]
                bodies.append([*code, check(expression, value)])
    return bodies


def unwanted_warning_tests(issue: str) -> list[list[str]]:
    """A script whose line is commented with the built-in warning it emits
    (`create_autospec(Foo)   # DeprecationWarning: ...`), in an issue that wants none ("no
    warning", "should not warn"): the script up to that line must run with that warning an
    error. Its own top-level `warnings.simplefilter(...)` lines are left out (they would let
    the warning through)."""
    if not UNWANTED_WARNING.search(issue):
        return []
    bodies = []
    for lines in scripts(issue):
        for number, line in enumerate(lines):
            match = WARNING_COMMENT.search(line)
            if match is None or match.group(1) not in BUILTIN_WARNINGS:
                continue
            code = [
                item
                for item in [*lines[:number], line[: match.start()].rstrip()]
                if not WARNING_FILTER.match(item)
            ]
            if parse("\n".join(code)) is None:
                continue
            bodies.append([
                "import warnings",
                "with warnings.catch_warnings():",
                f'    warnings.simplefilter("error", {match.group(1)})',
                *(f"    {item}" if item.strip() else "" for item in code),
            ])  # fmt: skip
            break
    return bodies


def issue_tests(issue: str, importable: dict[str, str]) -> str:
    """A pytest module of every test the issue's examples give ("" when none)."""
    bodies = [
        *(
            body
            for statements, prose in sessions(issue)
            for body in session_tests(statements, prose)
        ),
        *inline_tests(issue, importable),
        *contrast_tests(issue, importable),
        *comparison_tests(issue, importable),
        *expected_comment_tests(issue),
        *unwanted_warning_tests(issue),
    ]
    functions = []
    seen: set[str] = set()
    for body in bodies:
        code = "\n".join(body)
        if code in seen or parse(code) is None:
            continue
        code = with_imports(code, importable, provided=frozenset({"pytest"}))
        seen.add(code)
        functions.append(f"def test_issue_example_{len(functions) + 1}():\n{indent(code)}\n")
    if not functions:
        return ""
    return "import pytest\n\n\n" + "\n\n".join(functions)


def mentions(issue: str) -> Mentions:
    """Paths (traceback frames first, then `.py` paths written in the text) and the functions
    of traceback frames, innermost first."""
    frames = TRACEBACK_FRAME.findall(issue)
    paths = [path for path, _ in reversed(frames)] + PATH.findall(issue)
    names = [name for _, name in reversed(frames) if name != "<module>"]
    return Mentions(tuple(dict.fromkeys(paths)), tuple(dict.fromkeys(names)))


def importable_names(tree: dict[str, str]) -> dict[str, str]:
    """Each top-level function and class name of the source files -> the module defining it
    (the first one): what a test built from the issue's sentences may import."""
    names: dict[str, str] = {}
    for path, text in sorted(tree.items()):
        if is_test_path(path) or not path.endswith(".py") or not (module := module_name(path)):
            continue
        parsed = parse(text)
        for node in parsed.body if parsed is not None else []:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.setdefault(node.name, module)
    return names
