"""Search: `search_file` (in-process, on the text the viewer reads), `search_dir` and `find_file`
(one grep / find in the environment's shell, which only needs bash, grep and findutils).

Terms are literal strings (grep -F). More than `search_cap` results are not listed: one line says
how many matched and asks for a narrower search.
"""

from __future__ import annotations

import posixpath
import shlex

from swe_aci.aci.config import ACIConfig
from swe_aci.aci.viewer import CommandError, Viewer

NO_DIR = "__SWE_ACI_NO_DIR__"


class CommandTimedOut(Exception):
    """A command's shell work ran past the timeout; args[0] is the partial output."""


class Search:
    def __init__(self, viewer: Viewer, config: ACIConfig) -> None:
        self.viewer = viewer
        self.env = viewer.env
        self.cap = config.search_cap
        self.timeout = config.command_timeout

    def search_file(self, args: tuple[str, ...]) -> str:
        usage = "Usage: search_file <search_term> [<file>]"
        if not args or not args[0]:
            raise CommandError(usage)
        term = args[0]
        if len(args) > 1 and args[1]:
            path = self.viewer.resolve(args[1])
            try:
                text = self.viewer.read(path)
            except CommandError as error:
                raise CommandError(
                    f"{usage}\nError: File name {path} not found. Please provide a valid file name."
                ) from error
        else:
            text = self.viewer.current()
        if text.binary:
            raise CommandError(
                f"Error: {text.path} is binary or not valid UTF-8 text; search_file only "
                "searches text files."
            )
        matches = [(n, line) for n, line in enumerate(text.lines, 1) if term in line]
        if not matches:
            return f'No matches found for "{term}" in {text.path}'
        if len(matches) > self.cap:
            return (
                f'More than {len(matches)} lines matched for "{term}" in {text.path}. '
                "Please narrow your search."
            )
        return "\n".join(
            [
                f'Found {len(matches)} matches for "{term}" in {text.path}:',
                *(f"Line {n}:{line}" for n, line in matches),
                f'End of matches for "{term}" in {text.path}',
            ]
        )

    def search_dir(self, args: tuple[str, ...]) -> str:
        if not args or not args[0]:
            raise CommandError("Usage: search_dir <search_term> [<dir>]")
        term = args[0]
        directory = self.viewer.resolve(args[1] if len(args) == 2 else ".")
        count, hits = self.matching_files(term, directory)
        if count == 0:
            return f'No matches found for "{term}" in {directory}'
        if count > self.cap:
            return self.too_many_files(count, term, directory)
        return "\n".join(
            [
                f'Found {sum(m for _, m in hits)} matches for "{term}" in {directory}:',
                *(f"{path} ({m} matches)" for path, m in hits),
                f'End of matches for "{term}" in {directory}',
            ]
        )

    def matching_files(self, term: str, directory: str) -> tuple[int, list[tuple[str, int]]]:
        """How many files under `directory` hold `term` (hidden and binary files skipped), and
        when that is at most the cap, each one's absolute path and matching-line count, sorted."""
        # grep without a file operand searches the working directory: an operand would itself be
        # subject to --exclude-dir (so "." or a path below a hidden directory would find nothing).
        lister = (
            f"(CDPATH= cd -- {shlex.quote(directory)} && grep -rIcF --exclude-dir='.*' "
            f"--exclude='.*' -e {shlex.quote(term)} 2>/dev/null) | grep -v ':0$'"
        )
        count, rows = self._capped(directory, lister)
        hits = []
        for row in rows:
            relative, _, matches = row.rpartition(":")
            hits.append((posixpath.join(directory, relative), int(matches)))
        return count, sorted(hits)

    @staticmethod
    def too_many_files(count: int, term: str, directory: str) -> str:
        return (
            f'More than {count} files matched for "{term}" in {directory}. '
            "Please narrow your search."
        )

    def find_file(self, args: tuple[str, ...]) -> str:
        if not args or not args[0]:
            raise CommandError("Usage: find_file <file_name> [<dir>]")
        name = args[0]
        directory = self.viewer.resolve(args[1] if len(args) == 2 else ".")
        lister = f"find {shlex.quote(directory)} -type f -name {shlex.quote(name)} 2>/dev/null"
        count, rows = self._capped(directory, lister)
        if count == 0:
            return f'No matches found for "{name}" in {directory}'
        if count > self.cap:
            return (
                f'More than {count} files matched for "{name}" in {directory}. '
                "Please narrow your search."
            )
        return "\n".join([f'Found {count} matches for "{name}" in {directory}:', *sorted(rows)])

    def _capped(self, directory: str, lister: str) -> tuple[int, list[str]]:
        """Run `lister` in the shell: the number of lines it prints, and the lines themselves
        when there are at most `cap` of them (so a huge result never crosses the output cap)."""
        script = (
            f"if [ -d {shlex.quote(directory)} ]; then\n"
            f"mapfile -t __swe_aci_rows < <({lister})\n"
            'printf "%s\\n" "${#__swe_aci_rows[@]}"\n'
            f"if (( ${{#__swe_aci_rows[@]}} <= {self.cap} )); then "
            'printf "%s\\n" "${__swe_aci_rows[@]}"; fi\n'
            "unset __swe_aci_rows\n"
            f"else echo {NO_DIR}; fi"
        )
        result = self.env.run(script, timeout=self.timeout)
        if result.timed_out:
            raise CommandTimedOut(result.output)
        lines = result.output.split("\n")
        if lines[0] == NO_DIR:
            raise CommandError(f"Directory {directory} not found")
        if not lines[0].isdigit():
            raise CommandError(f"Error: the search failed: {result.output.strip()[:500]}")
        count = int(lines[0])
        return count, [line for line in lines[1 : count + 1] if line] if count <= self.cap else []
