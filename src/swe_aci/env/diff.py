"""Taking the submission: every backend runs the same git steps, each its own way.

The steps use a private index (never the repository's), so taking a diff changes nothing the
agent can see:

1. `read-tree <base>` then `add -A`: the working tree against the base commit;
2. with a hidden patch (tests the harness added), `apply --cached -R` it; if it does not reverse
   cleanly (the agent edited the same lines), its files are reset to the base instead;
3. files whose old or new version exceeds the size cap, then binary files, are reset to the
   base and reported in `Submission.excluded`;
4. `diff --cached <base>`.

A `GitRunner` runs one git command in a fresh process (never the agent's shell, whose functions,
aliases, traps and options the agent controls) with the options of `GIT_HARDENING`. Where it runs
is the backend's business: on the host against a private git directory the agent cannot write
(local, bwrap), or inside the container (docker).
"""

from __future__ import annotations

import time
from typing import Protocol

from swe_aci.env.base import Exclusion, SandboxError, Submission

# Defence in depth for the commands below: nothing from a configuration file may run a program.
GIT_HARDENING = [
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.attributesFile=/dev/null",
    "-c", "core.pager=cat",
    "-c", "diff.external=",
    "-c", "core.bigFileThreshold=1m",
    "--literal-pathspecs",
]  # fmt: skip
DIFF_OPTIONS = ["--cached", "--no-ext-diff", "--no-textconv", "--no-renames"]
ZERO_SHA = "0" * 40


class GitRunner(Protocol):
    def __call__(
        self, args: list[str], stdin: bytes | None, timeout: float
    ) -> tuple[int, bytes, bytes]:
        """Run `git <GIT_HARDENING> <args>` with the private index; (exit code, stdout, stderr).
        Raises TimeoutError when it does not finish within `timeout` seconds."""
        ...


def take_submission(
    git: GitRunner,
    base_commit: str,
    *,
    max_file_bytes: int,
    timeout: float,
) -> Submission:
    deadline = time.monotonic() + timeout

    def attempt(args: list[str], stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SandboxError(f"taking the submission took longer than {timeout:g} seconds")
        try:
            return git(args, stdin, remaining)
        except TimeoutError:
            raise SandboxError(
                f"taking the submission took longer than {timeout:g} seconds (git {args[0]})"
            ) from None

    def call(args: list[str], stdin: bytes | None = None) -> bytes:
        code, out, err = attempt(args, stdin)
        if code != 0:
            lines = err.decode("utf-8", errors="replace").strip().splitlines()
            detail = lines[-1] if lines else f"exit code {code}"
            raise SandboxError(f"git {args[0]} failed while taking the submission: {detail}")
        return out

    def reset(paths: list[str]) -> None:
        if paths:
            listing = b"".join(path.encode("utf-8", "surrogateescape") + b"\0" for path in paths)
            call(
                ["reset", "-q", base_commit, "--pathspec-from-file=-", "--pathspec-file-nul"],
                listing,
            )

    call(["read-tree", base_commit])
    call(["add", "-A"])
    excluded: list[Exclusion] = []
    large = _large_files(call, base_commit, max_file_bytes)
    reset([exclusion.path for exclusion in large])
    excluded += large
    binary = [
        Exclusion(path, "binary file")
        for path in _numstat_binaries(call(["diff", *DIFF_OPTIONS, "--numstat", "-z", base_commit]))
    ]
    reset([exclusion.path for exclusion in binary])
    excluded += binary
    patch_bytes = call(["diff", *DIFF_OPTIONS, base_commit, "--"])
    return Submission(
        patch=patch_bytes.decode("utf-8", errors="replace"),
        excluded=tuple(sorted(excluded, key=lambda exclusion: exclusion.path)),
    )


def _large_files(call: _Call, base_commit: str, limit: int) -> list[Exclusion]:
    """Changed files whose old or new blob is larger than `limit` bytes."""
    raw = call(["diff", *DIFF_OPTIONS, "--raw", "-z", "--no-abbrev", base_commit])
    fields = raw.split(b"\0")
    changes: list[tuple[str, list[str]]] = []
    for header, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = header.decode("ascii", errors="replace").split()
        if len(parts) < 4:
            continue
        shas = [sha for sha in parts[2:4] if sha != ZERO_SHA]
        changes.append((path.decode("utf-8", "surrogateescape"), shas))
    wanted = sorted({sha for _, shas in changes for sha in shas})
    if not wanted:
        return []
    sizes: dict[str, int] = {}
    answer = call(["cat-file", "--batch-check"], "".join(f"{sha}\n" for sha in wanted).encode())
    for line in answer.decode("ascii", errors="replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    excluded = []
    for path, shas in changes:
        size = max((sizes.get(sha, 0) for sha in shas), default=0)
        if size > limit:
            excluded.append(Exclusion(path, f"{size} bytes, over the {limit}-byte limit per file"))
    return excluded


class _Call(Protocol):
    def __call__(self, args: list[str], stdin: bytes | None = None) -> bytes: ...


def _numstat_binaries(numstat: bytes) -> list[str]:
    """Paths `git diff --numstat -z` marks as binary (`-<TAB>-<TAB>path`)."""
    return [
        entry[4:].decode("utf-8", "surrogateescape")
        for entry in numstat.split(b"\0")
        if entry.startswith(b"-\t-\t")
    ]
