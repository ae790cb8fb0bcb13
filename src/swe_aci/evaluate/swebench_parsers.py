"""swebench 5.0.2's own log parsers, for `--grading swebench` (a number comparable with the
leaderboard): `parse_log_pytest_options`, `parse_log_django` and `parse_log_sympy` of
`swebench/harness/log_parsers/python.py` (MIT licence), their logic unchanged, returning our
TestStatus. swebench has no plain-unittest parser; its Django parser reads unittest's verbose
output, so `unittest` rows use it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from swe_aci.evaluate.parsers import StatusMap, TestStatus

STATUS_NAMES = frozenset(status.value for status in TestStatus)
SKIP_SUMMARY_COUNT = re.compile(r"^\[\d+\]$")
OPTION = re.compile(r"(.*?)\[(.*)\]")
DJANGO_PASS_SUFFIXES = (" ... ok", " ... OK", " ...  OK")
DJANGO_INTERRUPTED_OK = (
    r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$",
    r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$",
    r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$",
)
SYMPY_FAILURE_HEADER = r"(_*) (.*)\.py:(.*) (_*)"


def parse_pytest_options(log: str) -> StatusMap:
    statuses: StatusMap = {}
    for raw in log.split("\n"):
        line = raw
        if not any(line.startswith(status.value) for status in TestStatus):
            continue
        if line.startswith(TestStatus.FAILED.value):
            line = line.replace(" - ", " ")
        words = line.split()
        if len(words) <= 1:
            continue
        if words[0] == TestStatus.SKIPPED.value and SKIP_SUMMARY_COUNT.match(words[1]):
            continue
        has_option = OPTION.search(words[1])
        if has_option:
            main, option = has_option.groups()
            if option.startswith("/") and not option.startswith("//") and "*" not in option:
                option = "/" + option.split("/")[-1]
            test_name = f"{main}[{option}]"
        else:
            test_name = words[1]
        if words[0] in STATUS_NAMES:  # swebench keeps e.g. `PASSEDx` too, which grades as nothing
            statuses[test_name] = TestStatus(words[0])
    return statuses


def parse_django(log: str) -> StatusMap:
    statuses: StatusMap = {}
    previous: str | None = None
    for raw in log.split("\n"):
        line = raw.strip()
        if "--version is equivalent to version" in line:
            statuses["--version is equivalent to version"] = TestStatus.PASSED
        if " ... " in line:
            previous = line.split(" ... ")[0]
        for suffix in DJANGO_PASS_SUFFIXES:
            if line.endswith(suffix):
                if line.strip().startswith(
                    "Applying sites.0002_alter_domain_unique...test_no_migrations"
                ):
                    line = line.split("...", 1)[-1].strip()
                statuses[line.rsplit(suffix, 1)[0]] = TestStatus.PASSED
                break
        if " ... skipped" in line:
            statuses[line.split(" ... skipped")[0]] = TestStatus.SKIPPED
        if line.endswith(" ... FAIL"):
            statuses[line.split(" ... FAIL")[0]] = TestStatus.FAILED
        if line.startswith("FAIL:"):
            statuses[line.split()[1].strip()] = TestStatus.FAILED
        if line.endswith(" ... ERROR"):
            statuses[line.split(" ... ERROR")[0]] = TestStatus.ERROR
        if line.startswith("ERROR:"):
            statuses[line.split()[1].strip()] = TestStatus.ERROR
        if line.lstrip().startswith("ok") and previous is not None:
            statuses[previous] = TestStatus.PASSED
    for pattern in DJANGO_INTERRUPTED_OK:
        for match in re.finditer(pattern, log, re.MULTILINE):
            statuses[match.group(1)] = TestStatus.PASSED
    return statuses


def parse_sympy(log: str) -> StatusMap:
    statuses: StatusMap = {}
    for match in re.findall(SYMPY_FAILURE_HEADER, log):
        statuses[f"{match[1]}.py:{match[2]}"] = TestStatus.FAILED
    for raw in log.split("\n"):
        line = raw.strip()
        if line.startswith("test_"):
            if line.endswith(" E"):
                statuses[line.split()[0]] = TestStatus.ERROR
            if line.endswith(" F"):
                statuses[line.split()[0]] = TestStatus.FAILED
            if line.endswith(" ok"):
                statuses[line.split()[0]] = TestStatus.PASSED
    return statuses


SWEBENCH_PARSERS: dict[str, Callable[[str], StatusMap]] = {
    "pytest": parse_pytest_options,
    "django": parse_django,
    "unittest": parse_django,
    "sympy": parse_sympy,
}
