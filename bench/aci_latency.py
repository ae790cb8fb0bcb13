"""ACI latency per environment backend, on a real mid-size repository (the Django sdist).

    python bench/aci_latency.py [--backends local,bwrap,docker] [--repeat 30] [--starts 3]
    python bench/aci_latency.py --big-edit 200000 [--aci edit_max_bytes=100000000]
    python bench/aci_latency.py --syntax [--repeat 30]

The Django source distribution is fetched from PyPI once (pip download) into bench/.cache,
unpacked and committed to a git repository there. For each backend that can run here, the script
times session start, the shell round trip, the viewer, an edit with linting on a ~2000-line file
(and the str_replace set's view and str_replace on it),
search_dir against plain `grep -rn` on the same tree, the iterative search, and submit, then
prints the median and the spread of every operation. Targets: ACI overhead beyond the shell round
trip under 5 ms; search_dir within 1.2x of `grep -rn`.

`--big-edit N` instead times one edit of an N-line Python file (local backend, in a fresh child
process so its peak RSS is the edit's own): the wall time and the growth of the peak RSS over
the state just before the edit (file opened). `--aci key=value` sets ACI config fields for it.

`--syntax` instead times the edit guardrail on a 2,000-line file in each language it checks
(local backend): the first check in the process (loading the grammar), one check of a text not
seen before, and an edit in the middle of the file with the guardrail on and off; the guardrail's
own overhead is their difference (target: under 20 ms). Python's row is flake8's.
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

from swe_aci.aci.config import ACIConfig
from swe_aci.aci.interface import ACI
from swe_aci.env.base import Environment, SandboxError
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.env.factory import make_environment
from swe_aci.env.local import LocalEnvironment

CACHE = Path(__file__).resolve().parent / ".cache"
EDITED_FILE = "django/db/models/fields/related.py"  # ~2000 lines
COMMON_TERM = "queryset"  # in hundreds of files: search_dir reports only the count
RARE_TERM = "bulk_update"  # in a few dozen files: search_dir lists them
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]


@dataclass
class Timing:
    backend: str
    operation: str
    samples: list[float]  # seconds

    def row(self) -> list[str]:
        ms = sorted(s * 1000 for s in self.samples)
        quartiles = statistics.quantiles(ms, n=4) if len(ms) > 1 else [ms[0]] * 3
        return [
            self.backend,
            self.operation,
            str(len(ms)),
            f"{statistics.median(ms):.2f}",
            f"{quartiles[0]:.2f}-{quartiles[2]:.2f}",
            f"{ms[0]:.2f}-{ms[-1]:.2f}",
        ]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def django_repo(version: str) -> Path:
    """bench/.cache/django-<x>: the sdist unpacked and committed (made once)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tarballs = sorted(CACHE.glob("django-*.tar.gz")) or sorted(CACHE.glob("Django-*.tar.gz"))
    if not tarballs:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             "--dest", str(CACHE), f"django=={version}"],
            check=True,
        )  # fmt: skip
        tarballs = sorted(CACHE.glob("[dD]jango-*.tar.gz"))
    tarball = tarballs[-1]
    root = CACHE / tarball.name.removesuffix(".tar.gz")
    if not (root / ".git").exists():
        if not root.exists():
            with tarfile.open(tarball) as archive:
                archive.extractall(CACHE, filter="data")
        subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=root, check=True)
        subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
        subprocess.run([*GIT, "commit", "-q", "-m", "django sdist"], cwd=root, check=True)
    return root


def timed(function: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return samples


def expect(aci: ACI, action: str, fragment: str) -> Callable[[], None]:
    """An action to time, checked once so a broken setup is not measured."""
    output = aci.execute(action).output
    if fragment not in output:
        raise RuntimeError(f"{action!r} did not print {fragment!r}: {output[:300]}")
    return lambda: aci.execute(action)


def bench_backend(
    backend: str, config: EnvConfig, repo: Path, repeat: int, starts: int
) -> list[Timing]:
    timings: list[Timing] = []

    def record(operation: str, samples: list[float]) -> None:
        timings.append(Timing(backend, operation, samples))

    environments: list[Environment] = []

    def start() -> None:
        environments.append(make_environment(Workspace(config, str(repo))))

    try:
        record("session start (clone + shell)", timed(start, starts))
        for env in environments[1:]:
            env.close()
        env = environments[0]
        aci = ACI(env)
        record("env.run('echo hi')", timed(lambda: env.run("echo hi"), repeat))
        record("execute('echo hi')", timed(expect(aci, "echo hi", "hi"), repeat))
        record(
            "open file 1000", timed(expect(aci, f"open {EDITED_FILE} 1000", "lines total"), repeat)
        )
        record("goto 1500", timed(expect(aci, "goto 1500", "1500:"), repeat))
        record("scroll_down", timed(lambda: aci.execute("scroll_down"), repeat))
        counter = iter(range(10**9))

        def edit(span: str = "1:1") -> None:
            output = aci.execute(f"edit {span}\n# bench edit {next(counter)}\nend_of_edit").output
            if not output.endswith("Edit the file again if necessary."):
                raise RuntimeError(output[:500])

        aci.execute(f"open {EDITED_FILE}")
        record("edit + lint (original not cached)", timed(lambda: edit("1:0"), 1))
        record("edit + lint (steady state)", timed(edit, repeat))
        editor = ACI(env, ACIConfig(commands=["view", "str_replace", "insert", "submit"]))
        record(
            "view file 1000 1100",
            timed(expect(editor, f"view {EDITED_FILE} 1000 1100", "cat -n"), repeat),
        )
        record("view . (2 levels)", timed(expect(editor, "view .", "2 levels deep"), repeat))
        editor.execute(f"insert {EDITED_FILE} 0\n# bench marker 0\nend_of_new_str")
        markers = iter(range(10**9))

        def str_replace() -> None:
            number = next(markers)
            output = editor.execute(
                f"str_replace {EDITED_FILE}\n# bench marker {number}\nend_of_old_str\n"
                f"# bench marker {number + 1}\nend_of_new_str"
            ).output
            if "has been edited" not in output:
                raise RuntimeError(output[:500])

        record("str_replace + lint (steady state)", timed(str_replace, repeat))
        for term in (COMMON_TERM, RARE_TERM):
            record(f"search_dir {term}", timed(expect(aci, f"search_dir {term}", term), repeat))
            root = shlex.quote(env.repo_path)
            # Output to /dev/null: GNU grep then stops reading a file at its first match, so this
            # baseline is, if anything, faster than grep -rn printing every line.
            grep_plain = f"grep -rn {term} {root} >/dev/null"
            record(f"grep -rn {term} (plain)", timed(lambda c=grep_plain: env.run(c), repeat))
            # Without an operand: an operand would itself be matched by --exclude-dir='.*'.
            grep_same = (
                f"(cd {root} && grep -rnI --exclude-dir='.*' --exclude='.*' {term} >/dev/null)"
            )
            record(f"grep -rn {term} (same files)", timed(lambda c=grep_same: env.run(c), repeat))
        record(
            "search_file (open file)", timed(expect(aci, "search_file related", "related"), repeat)
        )
        record(
            "find_file models.py", timed(expect(aci, "find_file models.py", "models.py"), repeat)
        )
        iterative = ACI(env, ACIConfig(commands=["open", "search", "next", "prev", "submit"]))
        record(
            f"search {RARE_TERM} (iterative)",
            timed(expect(iterative, f"search {RARE_TERM}", "[Match 1 of"), repeat),
        )
        record("next (iterative)", timed(expect(iterative, "next", "[Match 2 of"), repeat))
        record("submit", timed(lambda: aci.execute("submit"), max(3, repeat // 5)))
    finally:
        for env in environments:
            env.close()
    return timings


def summary(backend: str, timings: list[Timing]) -> list[str]:
    by_name = {t.operation: t for t in timings}
    lines = []
    overhead = by_name["execute('echo hi')"].median - by_name["env.run('echo hi')"].median
    viewer = max(by_name["open file 1000"].median, by_name["goto 1500"].median)
    lines.append(
        f"{backend}: ACI overhead over the shell round trip {overhead * 1000:.2f} ms; "
        f"viewer (no shell) {viewer * 1000:.2f} ms  [target < 5 ms: "
        f"{'ok' if max(overhead, viewer) < 0.005 else 'MISSED'}]"
    )
    replace = by_name["str_replace + lint (steady state)"].median
    edit = by_name["edit + lint (steady state)"].median
    lines.append(
        f"{backend}: str_replace + lint {replace * 1000:.2f} ms = {replace / edit:.2f} x edit + lint "
        "(the same guarded write)"
    )
    for term in (COMMON_TERM, RARE_TERM):
        ratio = by_name[f"search_dir {term}"].median / by_name[f"grep -rn {term} (plain)"].median
        same = (
            by_name[f"search_dir {term}"].median / by_name[f"grep -rn {term} (same files)"].median
        )
        lines.append(
            f"{backend}: search_dir {term} / grep -rn = {ratio:.2f} (same files only: {same:.2f})  "
            f"[target <= 1.2: {'ok' if ratio <= 1.2 else 'MISSED'}]"
        )
    return lines


def big_edit_child(lines: int, overrides: list[str]) -> None:
    """Runs in the child: one edit in the middle of a `lines`-line module; prints JSON."""
    fields = {key: yaml.safe_load(value) for key, _, value in (o.partition("=") for o in overrides)}
    with tempfile.TemporaryDirectory(prefix="swe-aci-bench-") as tmp:
        repo = Path(tmp) / "big"
        repo.mkdir()
        functions = lines // 4
        source = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(functions))
        (repo / "big.py").write_text(source)
        subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=repo, check=True)
        subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*GIT, "commit", "-q", "-m", "big"], cwd=repo, check=True)
        del source
        env = LocalEnvironment(str(repo))
        try:
            aci = ACI(env, ACIConfig(**fields))
            aci.execute("open big.py")
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            middle = 4 * (functions // 2) + 2
            started = time.perf_counter()
            output = aci.execute(f"edit {middle}:{middle}\n    return x - 1\nend_of_edit").output
            seconds = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        finally:
            env.close()
    outcome = "applied" if output.endswith("Edit the file again if necessary.") else output
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_rss_growth_mb": (after - before) / 1024,
                "peak_rss_mb": after / 1024,
                "outcome": outcome.splitlines()[0][:200],
            }
        )
    )


def big_edit(lines: int, overrides: list[str]) -> None:
    command = [sys.executable, __file__, "--big-edit-child", str(lines)]
    for override in overrides:
        command += ["--aci", override]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    figures = json.loads(result.stdout.splitlines()[-1])
    print(
        f"edit of a {lines}-line .py file ({', '.join(overrides) or 'default ACI config'}): "
        f"{figures['seconds'] * 1000:.0f} ms, peak RSS +{figures['peak_rss_growth_mb']:.0f} MB "
        f"(process peak {figures['peak_rss_mb']:.0f} MB); {figures['outcome']}"
    )


# A 2,000-line file per language: a header, then a 5-line function repeated (C++: 6 lines).
SYNTAX_FILES: dict[str, tuple[str, str, str]] = {
    "bench.py": ("", "def f{n}(x):\n    y = x + {n}\n    return y * 2\n\n\n", ""),
    "bench.js": ("", "function f{n}(x) {{\n  const y = x + {n};\n  return y * 2;\n}}\n\n", ""),
    "bench.ts": (
        "",
        "export function f{n}(x: number): number {{\n  const y: number = x + {n};\n"
        "  return y * 2;\n}}\n\n",
        "",
    ),
    "bench.tsx": (
        "",
        "export function C{n}({{ x }}: {{ x: number }}) {{\n  const y = x + {n};\n"
        '  return <div className="c">{{y}}</div>;\n}}\n\n',
        "",
    ),
    "bench.go": (
        "package bench\n\n",
        "func F{n}(x int) int {{\n\ty := x + {n}\n\treturn y * 2\n}}\n\n",
        "",
    ),
    "bench.rs": ("", "pub fn f{n}(x: i64) -> i64 {{\n    let y = x + {n};\n    y * 2\n}}\n\n", ""),
    "Bench.java": (
        "class Bench {{\n",
        "    static int f{n}(int x) {{\n        int y = x + {n};\n        return y * 2;\n    }}\n\n",
        "}}\n",
    ),
    "bench.c": ("", "int f{n}(int x) {{\n    int y = x + {n};\n    return y * 2;\n}}\n\n", ""),
    "bench.cpp": (
        "",
        "template <typename T>\nT f{n}(T x) {{\n    auto y = x + {n};\n    return y * 2;\n}}\n\n",
        "",
    ),
    "bench.rb": ("", "def f{n}(x)\n  y = x + {n}\n  y * 2\nend\n\n", ""),
    "bench.php": (
        "<?php\n\n",
        "function f{n}($x) {{\n    $y = $x + {n};\n    return $y * 2;\n}}\n\n",
        "",
    ),
}


def syntax_source(name: str, lines: int = 2000) -> str:
    header, function, footer = SYNTAX_FILES[name]
    per = function.count("\n")
    body = "".join(function.format(n=n) for n in range(lines // per))
    return header.format() + body + footer.format()


def syntax_timings(
    guarded: ACI, unguarded: ACI, name: str, source: str, repeat: int
) -> list[float]:
    """Seconds: the first check, a check of new text, an edit with and without the guardrail.
    Every edit writes a new number into a line in the middle (as in real use, the original is
    the previous edit's result, already checked)."""
    from swe_aci.aci.lint import Linter

    linter = Linter(ACIConfig().lint_select)
    first = timed(lambda: linter.problems(source, name), 1)[0]
    variants = iter(range(1, 10**9))
    check = timed(lambda: linter.problems(source + "\n" * next(variants), name), repeat)
    lines = source.split("\n")
    middle = next(i for i in range(len(lines) // 2, len(lines)) if " + " in lines[i])
    prefix = lines[middle].rpartition(" + ")[0]
    suffix = ";" if lines[middle].endswith(";") else ""
    numbers = iter(range(10**6, 10**9))
    edits = []
    for aci in (guarded, unguarded):
        aci.execute(f"open {name}")

        def edit(aci: ACI = aci) -> None:
            line = f"{prefix} + {next(numbers)}{suffix}"
            output = aci.execute(f"edit {middle + 1}:{middle + 1}\n{line}\nend_of_edit").output
            if not output.endswith("Edit the file again if necessary."):
                raise RuntimeError(output[:500])

        edits.append(statistics.median(timed(edit, repeat)))
    return [first, statistics.median(check), *edits]


def bench_syntax(repeat: int) -> None:
    """The guardrail's time per language on a 2,000-line file; prints a table and the verdict."""
    from swe_aci.aci.lint import Linter

    table = Table(title="edit guardrail on a 2,000-line file (ms, median)")
    for column in ("file", "language", "lines", "first check", "check", "edit", "edit, no guard",
                   "overhead"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("file", "language") else "right")
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="swe-aci-bench-") as tmp:
        repo = Path(tmp) / "langs"
        repo.mkdir()
        sources = {name: syntax_source(name) for name in SYNTAX_FILES}
        for name, source in sources.items():
            (repo / name).write_text(source)
        subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=repo, check=True)
        subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*GIT, "commit", "-q", "-m", "langs"], cwd=repo, check=True)
        env = LocalEnvironment(str(repo))
        try:
            guarded, unguarded = ACI(env), ACI(env, ACIConfig(lint=False))
            for name, source in sources.items():
                first, check, edit, bare = syntax_timings(guarded, unguarded, name, source, repeat)
                if not name.endswith(".py"):  # flake8's row is for comparison
                    worst = max(worst, edit - bare)
                table.add_row(
                    name,
                    Linter.language(name) or "",
                    str(len(source.splitlines())),
                    *(f"{seconds * 1000:.2f}" for seconds in (first, check, edit, bare)),
                    f"{(edit - bare) * 1000:.2f}",
                )
        finally:
            env.close()
    console = Console(width=max(shutil.get_terminal_size().columns, 110))
    console.print(table)
    console.print(
        f"worst tree-sitter guardrail overhead per edit: {worst * 1000:.2f} ms  "
        f"[target < 20 ms: {'ok' if worst < 0.020 else 'MISSED'}]",
        markup=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="local,bwrap,docker")
    parser.add_argument("--repeat", type=int, default=30, help="samples per operation")
    parser.add_argument("--starts", type=int, default=3, help="session starts to time")
    parser.add_argument("--image", default="swe-aci/base:bookworm", help="docker image")
    parser.add_argument("--django", default="5.1.*", help="Django version to fetch")
    parser.add_argument("--big-edit", type=int, metavar="LINES", help="time one big edit only")
    parser.add_argument("--big-edit-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--aci", action="append", default=[], help="ACI field=value (big edit)")
    parser.add_argument("--syntax", action="store_true", help="time the guardrail per language")
    args = parser.parse_args()
    if args.syntax:
        bench_syntax(args.repeat)
        return
    if args.big_edit_child:
        big_edit_child(args.big_edit_child, args.aci)
        return
    if args.big_edit:
        big_edit(args.big_edit, args.aci)
        return
    console = Console(width=max(shutil.get_terminal_size().columns, 110))
    repo = django_repo(args.django)
    files = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True).stdout
    console.print(f"repository: {repo} ({len(files.splitlines())} files)")
    table = Table(title="ACI latency (ms)")
    for column in ("backend", "operation", "n", "median", "IQR", "min-max"):
        left = column in ("backend", "operation")
        table.add_column(column, justify="left" if left else "right", no_wrap=True)
    notes: list[str] = []
    for backend in args.backends.split(","):
        config = EnvConfig(backend=backend, image=args.image)
        try:
            timings = bench_backend(backend, config, repo, args.repeat, args.starts)
        except SandboxError as error:
            notes.append(f"{backend}: skipped ({error})")
            continue
        for timing in timings:
            table.add_row(*timing.row())
        table.add_section()
        notes.extend(summary(backend, timings))
    console.print(table)
    for note in notes:
        console.print(note, markup=False)


if __name__ == "__main__":
    main()
