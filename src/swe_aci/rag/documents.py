"""The repository's files at the base commit, read from inside the task's environment.

Only regular files of the base tree count (no symlinks, no submodules), each at most
`max_file_bytes`, and only text: a file with a NUL byte in its first 8 KiB is binary.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex
from dataclasses import dataclass

from swe_aci.env.base import Environment, SandboxError

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


def read_document(env: Environment, path: str) -> Document | None:
    """The file's text, or None when it is binary or cannot be read."""
    try:
        data = env.read_file(posixpath.join(env.repo_path, path))
    except OSError:
        return None
    if b"\0" in data[:BINARY_PROBE_BYTES]:
        return None
    return Document(path, data.decode("utf-8", errors="replace"))


def source_documents(
    env: Environment,
    extensions: list[str],
    max_file_bytes: int,
    include_tests: bool,
) -> list[Document]:
    """The text source files BM25 searches, in path order."""
    wanted = {extension.lower() for extension in extensions}
    documents = []
    for entry in sorted(list_tree(env), key=lambda entry: entry.path):
        if entry.size > max_file_bytes or posixpath.splitext(entry.path)[1].lower() not in wanted:
            continue
        if not include_tests and is_test_path(entry.path):
            continue
        document = read_document(env, entry.path)
        if document is not None:
            documents.append(document)
    return documents


def patched_files(patch: str) -> list[str]:
    """The existing files a unified diff changes, in order (new files have no base version).

    A file header is a `--- ` line directly followed by a `+++ ` line; a removed line that starts
    with `-- ` inside a hunk is not one.
    """
    lines = patch.splitlines()
    files: list[str] = []
    for line, following in itertools.pairwise(lines):
        if not (line.startswith("--- ") and following.startswith("+++ ")):
            continue
        name = line[4:].split("\t")[0].strip()
        if name == "/dev/null":
            continue
        path = name[2:] if name.startswith(("a/", "b/")) else name
        if path not in files:
            files.append(path)
    return files


def oracle_documents(env: Environment, patch: str, max_file_bytes: int) -> list[Document]:
    """The files the gold patch touches, as they are at the base commit."""
    sizes = {entry.path: entry.size for entry in list_tree(env)}
    documents = []
    for path in patched_files(patch):
        if path not in sizes or sizes[path] > max_file_bytes:
            continue
        document = read_document(env, path)
        if document is not None:
            documents.append(document)
    return documents
