"""Check each task of a task file by its own recipe, with nothing of swe-aci involved.

For every row: fetch the sdist through pip's index (sha256 checked), build the base exactly as the
recipe says (unpack, `revert`, `prepare`, one git commit, `exclude`), make a virtualenv with the
recipe's python, run `install` (the tree must stay clean: build products belong in `exclude`), then
run `test_cmd` twice: at the base with `test_patch` (every FAIL_TO_PASS must fail, every
PASS_TO_PASS pass) and with `patch` + `test_patch` (all must pass).

    python datasets/verify.py datasets/tasks.jsonl [--ids ID ...] [--measure]

`--measure` prints, per task, the FAIL_TO_PASS / PASS_TO_PASS lists the two runs give (what a new
row should carry) instead of checking the row's lists. Exit status 0 iff every task verified.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import date, timedelta
from html.parser import HTMLParser
from pathlib import Path

import yaml

DEFAULT_INDEX = "https://pypi.org/simple"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
PYTEST_STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")
TEST_TIMEOUT_S = 300
DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "swe-aci" / "sdists"
)


class TaskError(Exception):
    """A step of a recipe failed; the message says which."""


def load_rows(path: Path) -> list[dict]:
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if path.suffix == ".json":
        return json.loads(text)
    return yaml.safe_load(text)


def test_ids(value: list[str] | str) -> list[str]:
    return json.loads(value) if isinstance(value, str) else list(value)


# --- the sdist -------------------------------------------------------------------------------


def index_url() -> str:
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        got = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
            capture_output=True,
            text=True,
        )
        url = got.stdout.strip() if got.returncode == 0 else ""
    return (url or DEFAULT_INDEX).rstrip("/")


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def sdist_url(spec: str) -> str:
    """The URL of the `.tar.gz` sdist of `name==version` on pip's index (PEP 503 page)."""
    name, version = spec.split("==")
    page_url = f"{index_url()}/{normalize(name)}/"
    with urllib.request.urlopen(page_url, timeout=60) as response:
        anchors = _Anchors()
        anchors.feed(response.read().decode())
    for href in anchors.hrefs:
        url = urllib.request.urljoin(page_url, href)
        filename = url.split("#")[0].rsplit("/", 1)[-1]
        if not filename.endswith(".tar.gz"):
            continue
        stem = filename[: -len(".tar.gz")]
        dist, _, file_version = stem.rpartition("-")
        if normalize(dist) == normalize(name) and file_version == version:
            return url.split("#")[0]
    raise TaskError(f"no .tar.gz sdist of {spec} on {page_url}")


def fetch_sdist(spec: str, sha256: str, cache: Path) -> Path:
    cached = cache / f"{sha256}.tar.gz"
    if not cached.exists():
        cache.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(sdist_url(spec), timeout=120) as response:
            data = response.read()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise TaskError(f"sha256 of the sdist of {spec} is not {sha256}")
        partial = cached.with_suffix(".part")
        partial.write_bytes(data)
        partial.replace(cached)
    if hashlib.sha256(cached.read_bytes()).hexdigest() != sha256:
        raise TaskError(f"cached sdist {cached} does not match its sha256")
    return cached


def unpack(archive: Path, dest: Path) -> None:
    """Unpack the sdist's single top-level directory as `dest`."""
    staging = dest.parent / "unpack"
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    (top,) = list(staging.iterdir())
    top.rename(dest)
    staging.rmdir()


# --- the base and its environment -------------------------------------------------------------


def run(cmd: list[str] | str, cwd: Path, env: dict | None = None, stdin: str | None = None) -> str:
    got = subprocess.run(
        cmd,
        cwd=cwd,
        env=env,
        input=stdin,
        shell=isinstance(cmd, str),
        capture_output=True,
        text=True,
    )
    if got.returncode != 0:
        raise TaskError(
            f"`{cmd}` exited {got.returncode}:\n{got.stdout[-2000:]}{got.stderr[-2000:]}"
        )
    return got.stdout


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return run(["git", "-c", "core.hooksPath=/dev/null", *args], repo, stdin=stdin)


def apply_patch(repo: Path, patch: str, reverse: bool = False) -> None:
    git(repo, "apply", "--whitespace=nowarn", *(["-R"] if reverse else []), "-", stdin=patch)


def build_base(row: dict, archive: Path, repo: Path) -> None:
    recipe = row["environment"]
    unpack(archive, repo)
    git(repo, "init", "-q")
    for name in recipe.get("revert", []):
        apply_patch(repo, row[name], reverse=True)
    for cmd in recipe.get("prepare", []):
        run(cmd, repo)
    (repo / ".git/info/exclude").write_text("".join(f"{g}\n" for g in recipe.get("exclude", [])))
    git(repo, "add", "-A")
    git(
        repo,
        "-c",
        "user.name=swe-aci",
        "-c",
        "user.email=swe-aci@localhost",
        "commit",
        "-qm",
        "base",
    )


def interpreter(version: str) -> str:
    pyenv = sorted(Path("/root/.pyenv/versions").glob(f"{version}.*/bin/python{version}"))
    if pyenv:
        return str(pyenv[-1])
    found = shutil.which(f"python{version}")
    if not found:
        raise TaskError(f"no python {version} on this machine")
    return found


def make_venv(python: str, venv: Path) -> dict:
    run([python, "-m", "venv", str(venv)], venv.parent)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    if CA_BUNDLE.exists():
        env.setdefault("PIP_CERT", str(CA_BUNDLE))
    return env


# --- the test runs ----------------------------------------------------------------------------


def parse_pytest(log: str) -> dict[str, str]:
    """Test id -> status from `pytest -rA`'s summary, read as SWE-bench's parser reads it."""
    statuses: dict[str, str] = {}
    for line in log.splitlines():
        if not line.startswith(PYTEST_STATUSES):
            continue
        if line.startswith("FAILED"):
            line = line.replace(" - ", " ")
        words = line.split()
        if len(words) > 1:
            statuses[words[1]] = words[0]
    return statuses


def offline_prefix() -> list[str]:
    """Run tests in a network namespace of their own when the machine lets us."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn"]
    return []


def run_tests(row: dict, repo: Path, env: dict) -> tuple[dict[str, str], float, str]:
    started = time.monotonic()
    got = subprocess.run(
        [*offline_prefix(), "bash", "-c", row["environment"]["test_cmd"]],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TEST_TIMEOUT_S,
    )
    log = got.stdout + got.stderr
    return parse_pytest(log), time.monotonic() - started, log


def reset(repo: Path) -> None:
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "clean", "-qfd")


@dataclass
class Outcome:
    instance_id: str
    problems: list[str] = field(default_factory=list)
    f2p: list[str] = field(default_factory=list)
    p2p: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


def passed(status: str | None) -> bool:
    return status in ("PASSED", "XFAIL")


ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
RECENT_DAYS = 366


def dated(test_id: str, today: date) -> bool:
    """Whether the id holds a date of the year before `today` (or later): a parametrization made
    from the clock, such as `test_to_string[case7-2026-12-06]`, names another test tomorrow."""
    for match in ISO_DATE.finditer(test_id):
        try:
            day = date(*(int(part) for part in match.groups()))
        except ValueError:
            continue
        if day >= today - timedelta(days=RECENT_DAYS):
            return True
    return False


def verify(row: dict, cache: Path, work: Path, measure: bool) -> Outcome:
    outcome = Outcome(row["instance_id"])
    recipe = row["environment"]
    if recipe.get("log_parser", "pytest") != "pytest":
        raise TaskError("only the pytest log parser is checked here")
    source = recipe["source"]
    archive = fetch_sdist(source["pypi_sdist"], source["sha256"], cache)
    repo = work / "repo"
    build_base(row, archive, repo)
    env = make_venv(interpreter(recipe["python"]), work / "venv")
    for cmd in recipe.get("install", []):
        run(["bash", "-c", cmd], repo, env)
    dirty = git(repo, "status", "--porcelain", "--untracked-files=all")
    if dirty:
        outcome.problems.append(f"install left files outside `exclude`:\n{dirty}")

    apply_patch(repo, row["test_patch"])
    before, seconds, before_log = run_tests(row, repo, env)
    outcome.seconds.append(seconds)
    reset(repo)
    apply_patch(repo, row["patch"])
    apply_patch(repo, row["test_patch"])
    after, seconds, after_log = run_tests(row, repo, env)
    outcome.seconds.append(seconds)

    if measure:
        lasting = {t: s for t, s in after.items() if not dated(t, date.today())}
        outcome.f2p = sorted(
            t for t, s in lasting.items() if passed(s) and not passed(before.get(t))
        )
        outcome.p2p = sorted(t for t, s in lasting.items() if passed(s) and passed(before.get(t)))
        return outcome
    outcome.f2p, outcome.p2p = test_ids(row["FAIL_TO_PASS"]), test_ids(row["PASS_TO_PASS"])
    if not outcome.f2p:
        outcome.problems.append("FAIL_TO_PASS is empty")
    for test in outcome.f2p:
        if passed(before.get(test)):
            outcome.problems.append(f"FAIL_TO_PASS {test} passes at the base")
        if not passed(after.get(test)):
            outcome.problems.append(f"FAIL_TO_PASS {test} is {after.get(test)} with the gold patch")
    for test in outcome.p2p:
        if not passed(before.get(test)):
            outcome.problems.append(f"PASS_TO_PASS {test} is {before.get(test)} at the base")
        if not passed(after.get(test)):
            outcome.problems.append(f"PASS_TO_PASS {test} is {after.get(test)} with the gold patch")
    if outcome.problems:
        outcome.problems.append(f"log at the base:\n{before_log[-3000:]}")
        outcome.problems.append(f"log with the gold patch:\n{after_log[-3000:]}")
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--ids", nargs="*", help="only these instance ids")
    parser.add_argument("--measure", action="store_true", help="print measured test lists")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()

    try:
        rows = load_rows(args.tasks)
    except (OSError, ValueError, yaml.YAMLError) as error:
        print(f"error: cannot read {args.tasks}: {error}", file=sys.stderr)
        return 2
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        print(f"error: {args.tasks} is not a list of task rows", file=sys.stderr)
        return 2
    if args.ids:
        rows = [row for row in rows if row.get("instance_id") in args.ids]
    failed = 0
    for index, row in enumerate(rows):
        instance_id = str(row.get("instance_id", f"row {index}"))
        with tempfile.TemporaryDirectory(prefix="swe-aci-verify-") as tmp:
            try:
                outcome = verify(row, args.cache_dir, Path(tmp), args.measure)
            except (TaskError, subprocess.TimeoutExpired, urllib.error.URLError) as error:
                outcome = Outcome(instance_id, problems=[str(error)])
            except KeyError as error:
                outcome = Outcome(instance_id, problems=[f"the row has no key {error}"])
        runs = " / ".join(f"{s:.1f}s" for s in outcome.seconds)
        verdict = "FAIL" if outcome.problems else ("measured" if args.measure else "ok")
        print(
            f"{verdict:8} {outcome.instance_id}  F2P={len(outcome.f2p)} P2P={len(outcome.p2p)}"
            f"  test runs (base, gold): {runs}",
            flush=True,
        )
        if args.measure and not outcome.problems:
            print(json.dumps({"FAIL_TO_PASS": outcome.f2p, "PASS_TO_PASS": outcome.p2p}))
        for problem in outcome.problems:
            print("    " + problem.replace("\n", "\n    "))
        failed += bool(outcome.problems)
    print(f"{len(rows) - failed}/{len(rows)} tasks verified")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
