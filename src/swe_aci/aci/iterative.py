"""Iterative search (the paper's Table 3 ablation): `search` opens the first match in the viewer,
`next` and `prev` move through the matches one at a time, like the find bar of an editor.

Each match is shown with `search_context` lines on each side and becomes the viewer's open file
and position, so `scroll_down`, `goto` or `edit` carry on from there. The matches are found once,
when `search` runs (a file: its lines; a directory: the files `search_dir` would list, at most
`search_cap` of them, then their lines); the shown lines are read afresh at every step.
"""

from __future__ import annotations

from swe_aci.aci.config import ACIConfig
from swe_aci.aci.search import Search
from swe_aci.aci.viewer import CommandError, Viewer
from swe_aci.aci.window import FileText, centre_for_line, render_range

USAGE = "Usage: search <search_term> [<path>]"
NO_SEARCH = "No search in progress. Use the search command first."


class IterativeSearch:
    def __init__(self, viewer: Viewer, search: Search, config: ACIConfig) -> None:
        self.viewer = viewer
        self.search_dir = search
        self.context = config.search_context
        self.term = ""
        self.matches: list[tuple[str, int]] = []  # (absolute path, line), in order
        self.index = -1

    def search(self, args: tuple[str, ...]) -> str:
        if not args or not args[0]:
            raise CommandError(USAGE)
        term = args[0]
        path = self.viewer.resolve(args[1] if len(args) > 1 else ".")
        matches = self._in_file(term, path)
        if matches is None:
            count, files = self.search_dir.matching_files(term, path)
            if count > self.search_dir.cap:
                return self.search_dir.too_many_files(count, term, path)
            matches = []
            for file, _ in files:
                matches.extend(self._in_file(term, file) or [])
        if not matches:
            return f'No matches found for "{term}" in {path}'
        self.term, self.matches = term, matches
        return self._show(0)

    def next(self, args: tuple[str, ...]) -> str:
        if self.index + 1 >= len(self.matches):
            self._require_search()
            return (
                f'No more matches for "{self.term}" (this is match {len(self.matches)} of '
                f"{len(self.matches)}). Use prev to go back."
            )
        return self._show(self.index + 1)

    def prev(self, args: tuple[str, ...]) -> str:
        self._require_search()
        if self.index == 0:
            return f'This is the first match for "{self.term}". Use next to see the following ones.'
        return self._show(self.index - 1)

    def _require_search(self) -> None:
        if not self.matches:
            raise CommandError(NO_SEARCH)

    def _in_file(self, term: str, path: str) -> list[tuple[str, int]] | None:
        """The matches in the file at `path`, or None when it is a directory."""
        try:
            data = self.viewer.env.read_file(path)
        except IsADirectoryError:
            return None
        except OSError:
            data = self.viewer.read_bytes(path)  # fails again, with the viewer's error message
        text = FileText.decode(path, data)
        return [(path, number) for number, line in enumerate(text.lines, 1) if term in line]

    def _show(self, index: int) -> str:
        path, line = self.matches[index]
        text = self.viewer.read(path)
        line = min(line, text.total)
        self.index = index
        self.viewer.path = text.path
        self.viewer.centre = centre_for_line(line, self.viewer.window)
        first, last = max(1, line - self.context), min(text.total, line + self.context)
        header = f'[Match {index + 1} of {len(self.matches)} for "{self.term}"]'
        return f"{header}\n{render_range(text, first, last)}"
