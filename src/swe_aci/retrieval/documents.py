"""The repository's files at the base commit, read from inside the task's environment.

Only regular files of the base tree count (no symlinks, no submodules), each at most
`max_file_bytes`, and only text: a file with a NUL byte in its first 8 KiB is binary.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from swe_aci.env.base import Environment, SandboxError
from swe_aci.env.diff import file_headers

LISTING_FILE = ".git/swe-aci-rag-listing"
BINARY_PROBE_BYTES = 8192
REGULAR_FILE_MODES = {"100644", "100755"}
TEST_WORDS = {"test", "tests", "testing"}


@dataclass(frozen=True)
class Document:
    """One file of the repository: its path relative to the root and its text."""

    path: str
    text: str


@dataclass(frozen=True)
class TreeEntry:
    path: str
    size: int


def list_tree(env: Environment) -> list[TreeEntry]:
    """The regular files of the base commit with their sizes (via a file: the listing of a large
    repository is longer than one command's output may be)."""
    listing = posixpath.join(env.repo_path, LISTING_FILE)
    command = f"git ls-tree -r -z -l {shlex.quote(env.base_commit)} > {shlex.quote(listing)}"
    result = env.run(command, timeout=120)
    if result.exit_code != 0:
        raise SandboxError(f"cannot list the repository's files: {result.output.strip()[:200]}")
    raw = env.read_file(listing)
    env.run(f"rm -f {shlex.quote(listing)}", timeout=30)
    return parse_ls_tree(raw)


def parse_ls_tree(raw: bytes) -> list[TreeEntry]:
    """Entries of `git ls-tree -r -z -l`: `<mode> <type> <object> <size>\\t<path>\\0`."""
    entries = []
    for record in raw.split(b"\0"):
        header, tab, path = record.partition(b"\t")
        fields = header.split()
        if not tab or len(fields) != 4 or fields[1] != b"blob":
            continue
        if fields[0].decode() not in REGULAR_FILE_MODES or not fields[3].isdigit():
            continue
        entries.append(TreeEntry(path.decode("utf-8", errors="surrogateescape"), int(fields[3])))
    return entries


def is_test_path(path: str) -> bool:
    """SWE-bench's rule: a path whose words (split on / _ . and spaces) include test(s)/testing."""
    return bool(TEST_WORDS & set(re.split(r"[ _/.]", path.lower())))


def patched_files(patch: str) -> list[str]:
    """The existing files a unified diff changes, in order (new files have no base version)."""
    return list(dict.fromkeys(header.old for header in file_headers(patch) if header.old))


class BaseTree:
    """The files of the repository's base commit, read on demand from the environment."""

    def __init__(self, env: Environment, max_file_bytes: int) -> None:
        self.env = env
        self.max_file_bytes = max_file_bytes
        self.sizes = {entry.path: entry.size for entry in list_tree(env)}

    def read(self, path: str) -> Document | None:
        """The file's text; None when it is not a regular file of the base tree, is larger than
        the limit, is binary (a NUL byte near its start) or cannot be read."""
        size = self.sizes.get(path)
        if size is None or size > self.max_file_bytes:
            return None
        try:
            data = self.env.read_file(posixpath.join(self.env.repo_path, path))
        except OSError:
            return None
        if b"\0" in data[:BINARY_PROBE_BYTES]:
            return None
        return Document(path, data.decode("utf-8", errors="replace"))

    def read_all(self, paths: list[str]) -> list[Document]:
        return [document for path in paths if (document := self.read(path)) is not None]

    def sources(self, extensions: list[str], include_tests: bool) -> list[Document]:
        """The text source files BM25 searches, in path order."""
        wanted = {extension.lower() for extension in extensions}
        paths = [
            path
            for path in sorted(self.sizes)
            if posixpath.splitext(path)[1].lower() in wanted
            and (include_tests or not is_test_path(path))
        ]
        return self.read_all(paths)

    def readmes(self) -> list[Document]:
        """The README files at the repository's root, which SWE-bench's prompts always show."""
        return self.read_all(
            [
                path
                for path in sorted(self.sizes)
                if "/" not in path and path.lower().startswith("readme")
            ]
        )

    def oracle(self, patch: str) -> list[Document]:
        """The files the gold patch changes, as they are at the base commit."""
        return self.read_all(patched_files(patch))
