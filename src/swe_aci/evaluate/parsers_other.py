"""Log parsers for the test runners of other languages: a runner's output -> {test id: status}.

The runners SWE-bench Multilingual's rows use, each parsed from the output its usual
invocation prints (the statuses are TestStatus names; `parsers.py` registers these):

- `go_test`: `go test -v` (`--- PASS: TestX (0.00s)`, subtests `TestX/case`); without `-v` only
  failures are listed. Also when a test's output ran into the line (no newline before `---`).
- `cargo`: `cargo test` (`test path::name ... ok`), doc tests (`src/lib.rs - f (line 3)`) and
  `should_panic` tests included, `ignored` is SKIPPED.
- `jest`: `jest --verbose` (`✓ title (3 ms)`, `✕`, `○ skipped`, `✎ todo`); the id is the test's
  title, as SWE-bench's parser has it.
- `mocha`: mocha's default `spec` reporter (`✔ title`, `1) title`, `- pending`); the id is the
  suite titles and the test's, joined by spaces (mocha's `fullTitle()`).
- `node_test`: `node --test` in either of its reporters, TAP (the default when the output is
  not a terminal) or spec (`✔ title (0.5ms)`, `▶ suite`); nested tests are `suite > test`.
- `tap`: any TAP producer (`ok 1 - title`, `not ok`, `# SKIP` / `# TODO`).
- `junit_xml`: JUnit XML reports printed into the log (Maven Surefire's
  `target/surefire-reports/TEST-*.xml`, Gradle's, the JUnit console launcher's, phpunit
  `--log-junit`): `classname.name` ids.
- `phpunit`: `phpunit --testdox` (`Suite (Class)` headers, PHPUnit 9's `Suite`; `✔ name`, `✘`,
  `↩` skipped, `∅` incomplete); ids `Suite > name`, as SWE-bench's parser has them (it knows
  only PHPUnit 10's headers: under PHPUnit 9 its ids are `None > name`).
- `rspec`: `rspec --format documentation` (groups by indentation; `(FAILED - 1)`,
  `(PENDING: ...)`) or `--format json`; ids are RSpec's full descriptions.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable

PASSED, FAILED, ERROR, SKIPPED = "PASSED", "FAILED", "ERROR", "SKIPPED"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
Statuses = dict[str, str]


def _lines(log: str) -> list[str]:
    return ANSI.sub("", log).replace("\r\n", "\n").split("\n")


# -- go test -------------------------------------------------------------------------------------

GO_RESULT = re.compile(r"--- (PASS|FAIL|SKIP): (\S+) \([^)]*\)")
GO_STATUSES = {"PASS": PASSED, "FAIL": FAILED, "SKIP": SKIPPED}


def parse_go_test(log: str) -> Statuses:
    statuses: Statuses = {}
    for line in _lines(log):
        for status, name in GO_RESULT.findall(line):
            statuses[name] = GO_STATUSES[status]
    return statuses


# -- cargo test ----------------------------------------------------------------------------------

CARGO_RESULT = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)(?:,.*)?$")
CARGO_STATUSES = {"ok": PASSED, "FAILED": FAILED, "ignored": SKIPPED}


def parse_cargo(log: str) -> Statuses:
    statuses: Statuses = {}
    for line in _lines(log):
        match = CARGO_RESULT.match(line.strip())
        if match:
            name = match.group(1).removesuffix(" - should panic")
            statuses[name] = CARGO_STATUSES[match.group(2)]
    return statuses


# -- jest --verbose ------------------------------------------------------------------------------

JEST_RESULT = re.compile(r"^(✓|✕|○|✎)\s(?:(?:skipped|todo)\s)?(.+?)(?:\s\(\d+(?:\.\d+)?\s*m?s\))?$")
JEST_STATUSES = {"✓": PASSED, "✕": FAILED, "○": SKIPPED, "✎": SKIPPED}


def parse_jest(log: str) -> Statuses:
    statuses: Statuses = {}
    for line in _lines(log):
        match = JEST_RESULT.match(line.strip())
        if match:
            statuses[match.group(2).strip()] = JEST_STATUSES[match.group(1)]
    return statuses


# -- mocha (spec reporter) -----------------------------------------------------------------------

MOCHA_PASSED = re.compile(r"^[✔✓]\s(.+?)(?:\s\(\d+ms\))?$")
MOCHA_FAILED = re.compile(r"^\d+\)\s(.+)$")
MOCHA_PENDING = re.compile(r"^-\s(.+)$")
MOCHA_SUMMARY = re.compile(r"^\s*\d+ (passing|failing|pending)\b")


def parse_mocha(log: str) -> Statuses:
    """Tests are indented (two spaces at least), suites are the unmarked lines, nested by
    indentation. A run's summary (`N passing`) is followed by the failures' details, which are
    skipped up to the next run (after two blank lines)."""
    statuses: Statuses = {}
    suites: list[tuple[int, str]] = []
    in_summary, blanks = False, 0
    for line in _lines(log):
        text = line.strip()
        if not text:
            blanks += 1
            continue
        after_blanks, blanks = blanks, 0
        if MOCHA_SUMMARY.match(line):
            in_summary, suites = True, []
            continue
        indent = len(line) - len(line.lstrip())
        if in_summary and after_blanks < 2:
            continue
        in_summary = False
        if indent < 2:
            continue
        while suites and suites[-1][0] >= indent:
            suites.pop()
        for pattern, status in (
            (MOCHA_PASSED, PASSED),
            (MOCHA_FAILED, FAILED),
            (MOCHA_PENDING, SKIPPED),
        ):
            match = pattern.match(text)
            if match:
                statuses[" ".join([*(title for _, title in suites), match.group(1)])] = status
                break
        else:
            suites.append((indent, text))
    return statuses


# -- TAP, and node --test ------------------------------------------------------------------------

TAP_RESULT = re.compile(r"^(\s*)(ok|not ok)\s+\d+(?:\s+-)?\s*(.*?)\s*$")
TAP_SUBTEST = re.compile(r"^(\s*)# Subtest: (.+)$")
TAP_DIRECTIVE = re.compile(r"\s+#\s*(SKIP|TODO)\b.*$", re.IGNORECASE)


def parse_tap(log: str) -> Statuses:
    """`ok N - title` lines; an indented block is the subtests of the next line one level up,
    announced by `# Subtest: title` (node's TAP): those are `parent > child`."""
    statuses: Statuses = {}
    pending: dict[int, str] = {}  # indentation -> the title of the subtest announced there
    for line in _lines(log):
        subtest = TAP_SUBTEST.match(line)
        if subtest:
            pending[len(subtest.group(1))] = subtest.group(2).strip()
            continue
        match = TAP_RESULT.match(line)
        if not match:
            continue
        indent = len(match.group(1))
        title, directive = match.group(3), TAP_DIRECTIVE.search(match.group(3))
        if directive:
            title = title[: directive.start()]
        parents = [pending[level] for level in sorted(pending) if level < indent]
        name = " > ".join([*parents, title])
        if directive:
            statuses[name] = SKIPPED
        else:
            statuses[name] = PASSED if match.group(2) == "ok" else FAILED
        for level in [level for level in pending if level >= indent]:
            del pending[level]
    return statuses


NODE_SPEC_RESULT = re.compile(r"^(\s*)(✔|✖|﹣|▶)\s(.+?)(\s\(\d+(?:\.\d+)?m?s\))?(\s#.*)?$")
NODE_SPEC_END = re.compile(r"^\u2139 tests \d+")  # the totals: INFORMATION SOURCE, "tests N"


def parse_node_test(log: str) -> Statuses:
    """node --test: TAP when the log has TAP result lines, else the spec reporter's lines."""
    if any(TAP_RESULT.match(line) for line in _lines(log)):
        return parse_tap(log)
    statuses: Statuses = {}
    suites: list[tuple[int, str]] = []
    for line in _lines(log):
        if NODE_SPEC_END.match(line):
            break  # the failing tests are listed again after the totals
        match = NODE_SPEC_RESULT.match(line)
        if not match:
            continue
        indent, mark, title, duration, directive = match.groups()
        while suites and suites[-1][0] >= len(indent):
            suites.pop()
        if mark == "▶":
            if duration is None:  # a suite opens (node 18 also closes one with ▶ and a time)
                suites.append((len(indent), title))
            continue
        name = " > ".join([*(suite for _, suite in suites), title])
        todo = (directive or "").strip().upper().startswith(("# SKIP", "# TODO"))
        statuses[name] = SKIPPED if mark == "﹣" or todo else PASSED if mark == "✔" else FAILED
    return statuses


# -- JUnit XML (Maven Surefire, Gradle, the JUnit console, phpunit --log-junit) -----------------

JUNIT_TAG = re.compile(r"<(/?)(testcase|failure|error|skipped)\b([^>]*?)(/?)>")
JUNIT_ATTRIBUTE = re.compile(r"([\w:.-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
JUNIT_OUTCOME = {"failure": FAILED, "error": ERROR, "skipped": SKIPPED}


def parse_junit_xml(log: str) -> Statuses:
    """Every `<testcase>` of the reports in the log, read tag by tag (reports printed one after
    the other, or cut off, still parse); its outcome is its failure, error or skipped child."""
    statuses: Statuses = {}
    current: str | None = None
    for closing, tag, attributes, empty in JUNIT_TAG.findall(log):
        if tag == "testcase":
            if closing:
                current = None
                continue
            found = {
                key: html.unescape(double or single)
                for key, double, single in JUNIT_ATTRIBUTE.findall(attributes)
            }
            name = found.get("name", "").removesuffix("()")
            test_id = f"{found['classname']}.{name}" if found.get("classname") else name
            statuses[test_id] = PASSED
            current = None if empty else test_id
        elif (
            current is not None
            and not closing
            and (statuses[current] == PASSED or JUNIT_OUTCOME[tag] == ERROR)
        ):
            statuses[current] = JUNIT_OUTCOME[tag]
    return statuses


# -- phpunit --testdox ---------------------------------------------------------------------------

PHPUNIT_SUITE = re.compile(r"^(\w.*?)(?: \(.+\))?$")  # `Calc (Tests\Calc)`; PHPUnit 9: `Calc`
PHPUNIT_RESULT = re.compile(r"^\s*([✔✘↩∅☢])\s*(.*?)(?:\s+\d+(?:\.\d+)?\s*ms)?$")
PHPUNIT_STATUSES = {"✔": PASSED, "✘": FAILED, "↩": SKIPPED, "∅": SKIPPED, "☢": PASSED}


def parse_phpunit(log: str) -> Statuses:
    statuses: Statuses = {}
    suite = None
    for line in _lines(log):
        header = PHPUNIT_SUITE.match(line)
        if header:
            suite = header.group(1)
            continue
        match = PHPUNIT_RESULT.match(line)
        if match:
            statuses[f"{suite} > {match.group(2)}"] = PHPUNIT_STATUSES[match.group(1)]
    return statuses


# -- rspec ---------------------------------------------------------------------------------------

RSPEC_FAILED = re.compile(r"^(.*?) \(FAILED - \d+\)$")
RSPEC_PENDING = re.compile(r"^(.*?) \(PENDING: .*\)$")
RSPEC_END = re.compile(r"^(Finished in |Failures:|Pending: )")
RSPEC_JSON_STATUSES = {"passed": PASSED, "failed": FAILED, "pending": SKIPPED}


def parse_rspec(log: str) -> Statuses:
    """`--format json` when the log holds its report, else `--format documentation`: groups
    and examples nested by two-space indentation, examples being the innermost lines."""
    for line in _lines(log):
        if line.startswith('{"version":') and '"examples":' in line:
            return _rspec_json(line)
    statuses: Statuses = {}
    groups: list[tuple[int, str]] = []
    unmarked: tuple[int, str] | None = None  # a group, or an example that passed: the next says
    for line in [*_lines(log), ""]:
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        if unmarked is not None and (not text or indent <= unmarked[0] or RSPEC_END.match(line)):
            statuses[" ".join([*(title for _, title in groups), unmarked[1]])] = PASSED
            unmarked = None
        if RSPEC_END.match(line):
            break
        if not text:
            continue
        if unmarked is not None:
            groups.append(unmarked)
            unmarked = None
        while groups and groups[-1][0] >= indent:
            groups.pop()
        marked = RSPEC_FAILED.match(text) or RSPEC_PENDING.match(text)
        if marked is None:
            unmarked = (indent, text)
            continue
        status = FAILED if marked.re is RSPEC_FAILED else SKIPPED
        statuses[" ".join([*(title for _, title in groups), marked.group(1)])] = status
    return statuses


def _rspec_json(line: str) -> Statuses:
    try:
        report = json.loads(line)
    except json.JSONDecodeError:
        return {}
    return {
        example["full_description"]: RSPEC_JSON_STATUSES.get(example.get("status"), FAILED)
        for example in report.get("examples", [])
        if isinstance(example, dict) and "full_description" in example
    }


OTHER_PARSERS: dict[str, Callable[[str], Statuses]] = {
    "go_test": parse_go_test,
    "cargo": parse_cargo,
    "jest": parse_jest,
    "mocha": parse_mocha,
    "node_test": parse_node_test,
    "tap": parse_tap,
    "junit_xml": parse_junit_xml,
    "phpunit": parse_phpunit,
    "rspec": parse_rspec,
}
