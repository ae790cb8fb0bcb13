"""Tests from the issue's `>>>` sessions: the shown output is the wrong one; the expected value,
the exception it should raise, or the message it should carry instead of the shown one comes
from the prose after the session; a traceback of a call that should not raise makes the test
that it runs. Two sessions of the same statements, the second after an expectation word, are
the actual output and then the expected one (paired_session_tests)."""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field

from swe_aci.pipeline.imports import bound_names, unbound_uses
from swe_aci.pipeline.issue_literals import (
    BACKTICKS,
    EXPECTATION,
    PROMPT,
    REPR_PREFIX,
    before_next_call,
    check,
    code_blocks,
    expected_literals,
    has_prompt,
    indent,
    is_print,
    literal,
    statement_source,
)
from swe_aci.pipeline.skeleton import parse

CALL_SHAPED = re.compile(r"^[A-Za-z_][\w.]*\(.*\)$")  # `f(x)`, `datetime.time(15, 33)`
IMPORT = re.compile(r"^\s*(?:import|from)\s+[\w.]+")
CONTINUATION = re.compile(r"^\s*\.\.\. ?(.*)$")
TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
LAST_TRACEBACK_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")
EXCEPTION_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt))\b:?")
MESSAGE_WORDS = re.compile(r"(?i)\b(message|warning|warns?)\b")
# an issue asking for a clearer error, not for the error to go: "Improve error message for ...",
# "the error message is pretty hard to decipher"
BETTER_MESSAGE = re.compile(
    r"(?i)\b(?:error|exception)\s+messages?\b[^.\n]{0,120}?\b(?:unclear|confusing|cryptic|"
    r"misleading|hard\s+to|difficult\s+to|unhelpful|not\s+(?:very\s+)?helpful|improved?|better|"
    r"clearer|more\s+(?:helpful|informative|descriptive))|\b(?:improve|better|clearer|more\s+"
    r"(?:helpful|informative|descriptive))\b[^.\n]{0,40}\b(?:error|exception)\s+messages?\b"
)
RAISES = re.compile(r"(?i)\braises?\s+(?:an?\s+)?`?([A-Za-z_][\w.]*)`?")
EXCEPTION_NAME = re.compile(r"`?\b([A-Za-z_][\w.]*(?:Error|Exception))\b`?")
NAME = re.compile(r"`?\b([A-Za-z_]\w*)\b`?")
# what makes the exception named next the unwanted one: "not a `ValueError`", "instead of"
NEGATED = re.compile(r"(?i)\b(?:not|never|no|instead\s+of|rather\s+than)\s+(?:an?\s+|the\s+)?$")
BUILTIN_EXCEPTIONS = {name for name in dir(builtins) if name.endswith(("Error", "Exception"))}
# the prose before a session showing how an earlier release behaved (a regression's report)
EARLIER_RELEASE = re.compile(
    r"(?i)\b(?:previous|prior|older|earlier|last)\s+(?:version|release)s?\b|\bused\s+to\b"
)
MESSAGE_PREFIX = 12  # characters an expected message shares with the shown one, at least


@dataclass
class Statement:
    source: str
    output: list[str] = field(default_factory=list)

    @property
    def raised(self) -> str | None:
        """The exception the session shows (a traceback or an `Error: ...` line), if any."""
        shown = self._exception_line()
        return shown.group(1) if shown else None

    @property
    def message(self) -> str | None:
        """The message of the exception the session shows (`ValueError: bad b'x'` -> `bad b'x'`)."""
        shown = self._exception_line()
        if shown is None:
            return None
        return shown.string[shown.end() :].strip() or None

    def _exception_line(self) -> re.Match[str] | None:
        """The last line naming an exception by its name's ending (`...Error`), or, after a
        `Traceback` line, the last line (an exception named otherwise: `re.error: ...`)."""
        for line in reversed(self.output):
            if match := EXCEPTION_LINE.match(line):
                return match
        if self.output and any(TRACEBACK.match(line) for line in self.output):
            return LAST_TRACEBACK_LINE.match(self.output[-1])
        return None

    @property
    def sets_up(self) -> bool:
        """Whether a test runs it before the statement it checks: it raised nothing and shows
        no value (an assignment, an import, a call whose value is None: `s.set_result(None)`).
        Not an `assert` that passed: it sets nothing up, and it holds what the base does, which
        the fix may change (tomlkit: `assert type(v) is Integer  # should it not be a float?!`)."""
        tree = parse(self.source)
        if tree is not None and len(tree.body) == 1 and isinstance(tree.body[0], ast.Assert):
            return False
        return not self.raised and (self.expression is None or not self.output)

    @property
    def expression(self) -> str | None:
        tree = parse(self.source)
        if tree is not None and len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
            return self.source.strip()
        return None


@dataclass
class Session:
    """A `>>>` session, the prose after it (up to the next session), and the setup it needs:
    the definitions of the issue's scripts before it (a code block without `>>>`: imports,
    assignments, functions, classes) when the session reads a name they bind and it does not
    (`soup = BeautifulSoup(...)` in the block above `>>> sv.select('[href^=""]', soup)`)."""

    statements: list[Statement]
    prose: str
    setup: list[str] = field(default_factory=list)


def sessions(issue: str) -> list[Session]:
    """Each `>>>` session of the issue, in order."""
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
    for index, (statements, start, last) in enumerate(found):
        following = found[index + 1][1] if index + 1 < len(found) else len(lines)
        prose = "\n".join(lines[last + 1 : following])
        before = "\n".join(lines[:start])
        result.append(Session(statements, prose, setup_for(statements, before)))
    return result


DEFINITIONS = (
    ast.Import,
    ast.ImportFrom,
    ast.Assign,
    ast.AnnAssign,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def setup_for(statements: list[Statement], before: str) -> list[str]:
    """The definitions of the scripts in `before` when the statements read a name they bind
    (their other statements, calls and prints, are the reporter's demonstration, left out)."""
    tree = parse("\n".join(s.source for s in statements))
    if tree is None:
        return []
    definitions: list[tuple[str, ast.stmt]] = []
    for block in code_blocks(before):
        script = None if has_prompt(block) else parse(block)
        if script is not None:
            definitions.extend((block, n) for n in script.body if isinstance(n, DEFINITIONS))
    bound = bound_names(ast.Module(body=[node for _, node in definitions], type_ignores=[]))
    if not set(unbound_uses(tree)) & (bound - set(dir(builtins))):
        return []
    return [statement_source(block, node) for block, node in definitions]


def comparable(output: list[str], expected: str) -> bool:
    """Whether a value shown as `output` can be the `expected` one: not a string where the
    session shows an object (`datetime.time(15, 33, 42, 123456)`), which the prose's quoted
    input (`'15:33:42.1234557'`) would otherwise be taken to be."""
    if expected.startswith(REPR_PREFIX) or not isinstance(ast.literal_eval(expected), str):
        return True
    shown = " ".join(output).strip()
    return not (CALL_SHAPED.match(shown) or (shown.startswith("<") and shown.endswith(">")))


def typed_as_shown(output: list[str], expected: str) -> str:
    """`expected` as the type the session shows: a number expected where the session shows a
    string (`e.encode(...).hex()` shows `'4180'`, "Expected: `81`") is that string, `'81'`."""
    if expected.startswith(REPR_PREFIX):
        return expected
    value = ast.literal_eval(expected)
    shown = literal(" ".join(output))
    if type(value) in (int, float) and shown is not None and shown.startswith(("'", '"')):
        return repr(str(value))
    return expected


def shown_as(output: list[str], expected: str) -> bool:
    """Whether a session's shown output already is the expected value."""
    text = " ".join(output)
    if expected.startswith(REPR_PREFIX):
        return text.strip() == expected.removeprefix(REPR_PREFIX)
    return literal(text) == expected


def expected_exception(prose: str, exceptions: frozenset[str]) -> str | None:
    """The exception the prose says should be raised (`raises X`, `Expected a ValueError`, an
    exception class of the repository, `exceptions`, named after an expectation word), not one
    it says should not be ("rejected with `BadTimeSignature`, not a `ValueError`")."""
    for match in EXPECTATION.finditer(prose):
        rest = prose[match.end() : match.end() + 200]
        named = sorted(
            [
                *EXCEPTION_NAME.finditer(rest),
                *(name for name in NAME.finditer(rest) if name.group(1) in exceptions),
            ],
            key=lambda found: found.start(),
        )
        for found in [*RAISES.finditer(rest), *named]:
            if not NEGATED.search(rest[: found.start()]):
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
    """The statement must raise what the session shows with the message `message`."""
    return [*raising_shown(statements, statement), f"assert str(raised.value) == {message!r}"]


def changed_message_test(statements: list[Statement], statement: Statement) -> list[str]:
    """The statement must still raise what the session shows, with a message other than the
    one shown, from a `raise` statement: the issue asks for a clearer message and does not
    write it, and a library words an error it raises on purpose (a call broken by a candidate
    raises a `TypeError` of its own too, from the call)."""
    return [
        *raising_shown(statements, statement),
        f"assert str(raised.value) != {statement.message!r}",
        'assert str(raised.traceback[-1].statement).lstrip().startswith("raise")',
    ]


def raising_shown(statements: list[Statement], statement: Statement) -> list[str]:
    """The session's statements up to `statement` that set up, then `statement` in
    `pytest.raises(...) as raised` of the exception it shows (a built-in or dotted one, else
    any)."""
    name = statement.raised or "Exception"
    if "." not in name and name not in BUILTIN_EXCEPTIONS:
        name = "Exception"
    index = statements.index(statement)
    setup = [s.source for s in statements[:index] if s.sets_up]
    return [
        *imports_for(name),
        *setup,
        f"with pytest.raises({name}) as raised:",
        indent(statement.source),
    ]


def imports_for(name: str) -> list[str]:
    """The import a dotted exception name needs (`packaging.version.InvalidVersion`)."""
    module = name.rpartition(".")[0]
    return [f"import {module}"] if module else []


def session_tests(
    session: Session, exceptions: frozenset[str], better_message: bool = False
) -> list[list[str]]:
    """Test bodies (lines) from one session; `exceptions`: the repository's exception classes
    (the test imports the one it expects: `with_imports`); `better_message`: the issue asks for
    a clearer error message (`BETTER_MESSAGE`), so a traceback it shows is to stay, with another
    message. The exception expected is looked for in all the prose after the session, the
    literals only up to its next call (literals after a call belong to it)."""
    statements, prose = session.statements, session.prose
    shown = [s for s in statements if s.expression and s.output and not s.raised]
    raising = [s for s in statements if s.raised]
    expected = expected_literals(before_next_call(prose))
    named = expected_exception(prose, exceptions)
    importable = BUILTIN_EXCEPTIONS | exceptions
    # a bare name the test could not import: no exception to expect, and no call that must run
    exception = named if named and ("." in named or named in importable) else None
    checks: list[tuple[Statement, str]] = []
    if exception and (raiser := named_raiser(statements, prose)):
        checks.append((raiser, f"raises at:{exception}"))
    elif exception:
        for statement in [*shown, *raising]:
            if not statement.source.lstrip().startswith("try"):
                checks.append((statement, f"raises:{exception}"))
            else:
                checks.append((statement, "runs"))
    elif expected and shown:
        pairs: list[tuple[Statement, str]] = []
        if len(expected) == 1:
            pairs = [(s, expected[0]) for s in shown if not shown_as(s.output, expected[0])]
        elif len(expected) == len(shown):
            pairs = list(zip(shown, expected, strict=True))
        checks.extend(
            (s, typed_as_shown(s.output, value))
            for s, value in pairs
            if comparable(s.output, value)
        )
    messages = [
        (s, wanted)
        for s in raising
        if s.message and (wanted := expected_message(s.message, before_next_call(prose)))
    ]
    if not checks and messages:
        return [[*session.setup, *message_test(statements, s, wanted)] for s, wanted in messages]
    if not checks and raising and better_message:
        return [
            [*session.setup, *changed_message_test(statements, s)] for s in raising if s.message
        ]
    if not checks and raising and not MESSAGE_WORDS.search(prose) and not named:
        checks.extend((s, "runs") for s in raising)
    if not checks and raising and exception:
        checks.extend((s, "runs") for s in raising if s.source.lstrip().startswith("try"))
    bodies = []
    for statement, wanted in checks:
        index = statements.index(statement)
        earlier = [s.source for s in statements[:index] if s.sets_up]
        body = [*session.setup, *earlier]
        if wanted == "runs":
            body.append(statement.source)
        elif wanted.startswith("raises at:"):
            name = wanted.removeprefix("raises at:")
            body = [*imports_for(name), *body, f"with pytest.raises({name}):"]
            body.append(indent(statement.source))
        elif wanted.startswith("raises:"):
            # the statements before it raise inside too: a fix may reject the bad input where
            # it is first given rather than where the session shows the crash
            name = wanted.removeprefix("raises:")
            imports = [source for source in earlier if IMPORT.match(source)]
            inside = [source for source in earlier if source not in imports]
            body = [*imports_for(name), *session.setup, *imports, f"with pytest.raises({name}):"]
            body.extend(indent(source) for source in [*inside, statement.source])
        else:
            body.append(check(statement.expression or statement.source, wanted))
        bodies.append(body)
    return bodies


def named_raiser(statements: list[Statement], prose: str) -> Statement | None:
    """The statement the expectation names as the one to raise: the first whose code holds a
    call the prose writes in backticks after its expectation word ("rejected with a `ValueError`
    where it is created (`tenacity.wait_chain()` ... raise)" names `fn = tenacity.wait_chain()`)."""
    start = EXPECTATION.search(prose)
    if start is None:
        return None
    calls = [span for span in BACKTICKS.findall(prose[start.end() :]) if CALL_SHAPED.match(span)]
    for statement in statements:
        code = re.sub(r"\s+", "", statement.source)
        if not statement.source.lstrip().startswith("try") and any(
            re.sub(r"\s+", "", call) in code for call in calls
        ):
            return statement
    return None


def paired_session_tests(found: list[Session]) -> list[list[str]]:
    """Test bodies from two sessions that run the same statements, the second right after an
    expectation word ("Expected, with every uppercase counterpart:") or words naming the
    release before ("a change in behavior from the previous version:", munch): the first (the
    nearest before it; num2words shows another call in between, "Below -1 it is correct")
    shows what the code gives, the second what it should; each statement whose output differs
    is checked against the second's."""
    bodies = []
    for index in range(1, len(found)):
        second = found[index]
        sources = [statement.source for statement in second.statements]
        first = next(
            (
                session
                for session in reversed(found[:index])
                if [statement.source for statement in session.statements] == sources
            ),
            None,
        )
        between = found[index - 1].prose
        if first is None or not (EXPECTATION.search(between) or EARLIER_RELEASE.search(between)):
            continue
        actual, wanted = first.statements, second.statements
        for number, (shown, expected) in enumerate(zip(actual, wanted, strict=True)):
            if not expected.output or shown.output == expected.output or expected.raised:
                continue
            assertion = output_check(expected)
            if assertion is not None:
                setup = [s.source for s in wanted[:number] if s.sets_up]
                bodies.append([*second.setup, *setup, assertion])
    return bodies


def output_check(statement: Statement) -> str | None:
    """The assertion that `statement` shows its output: what a `print(x)` prints is `str(x)`;
    an expression's value is a literal, else compared by its repr."""
    expression = statement.expression
    if expression is None:
        return None
    shown = "\n".join(statement.output)
    call = ast.parse(expression).body[0]
    assert isinstance(call, ast.Expr)
    value = call.value
    if (
        is_print(value)
        and len(value.args) == 1
        and not value.keywords
        and not isinstance(value.args[0], ast.Starred)
    ):
        argument = ast.get_source_segment(expression, value.args[0])
        return f"assert str({argument}) == {shown!r}"
    return check(expression, literal(shown) or REPR_PREFIX + shown)
