"""The str_replace command set: `view`, `create`, `str_replace`, `insert`, `undo_edit`.

The editor SWE-agent 1.x made its default, in the shape of Anthropic's text editor tool: files are
named by path at every command (there is no open file), shown `cat -n` style, and changed by
replacing a string that must occur exactly once. Every change goes through the editor's guarded
write (`Editor.replace_lines` / `Editor.write_checked`), so the lint guardrail, the size limit and
the line-ending rules are those of `edit`. Each file keeps the contents its last edits replaced,
for `undo_edit`.
"""

from __future__ import annotations

import shlex
from collections import defaultdict

from swe_aci.aci.config import ACIConfig
from swe_aci.aci.editor import Editor, EditRefused, EditRejected
from swe_aci.aci.search import NO_DIR, CommandTimedOut
from swe_aci.aci.viewer import NUMBER, CommandError
from swe_aci.aci.window import FileText, split_lines

SNIPPET_CONTEXT = 4  # lines shown each side of a change
UNDO_DEPTH = 10  # edits of one file that undo_edit can take back
LISTING_CAP = 200  # entries of a directory listing
REVIEW = "Review the changes and make sure they are as expected. Edit the file again if necessary."


class StrReplaceEditor:
    def __init__(self, editor: Editor, config: ACIConfig) -> None:
        self.editor = editor
        self.viewer = editor.viewer
        self.env = editor.viewer.env
        self.max_chars = config.view_max_chars
        self.timeout = config.command_timeout
        self.history: defaultdict[str, list[bytes | None]] = defaultdict(list)  # None: no file

    # -- commands ----------------------------------------------------------------------------

    def view(self, args: tuple[str, ...]) -> str:
        usage = "Usage: view <path> [<start_line> <end_line>]"
        if not args or not args[0] or len(args) == 2:
            raise CommandError(usage)
        path = self.viewer.resolve(args[0])
        data = self._read_or_directory(path)
        if data is None:
            if len(args) > 1:
                raise CommandError(f"{usage}\nError: a line range cannot be given for a directory")
            return self._listing(path)
        text = FileText.decode(path, data)
        if text.binary:
            return f"{path} is binary or not valid UTF-8 text, so its content is not shown."
        if text.total == 0:
            return f"{path} is empty."
        first, last = 1, text.total
        if len(args) == 3:
            first, last = _view_range(args[1], args[2], text.total, usage)
        return f"Here's the result of running `cat -n` on {path}:\n" + self._numbered(
            text, first, last
        )

    def create(self, args: tuple[str, ...], blocks: tuple[tuple[str, ...], ...]) -> str:
        if not args or not args[0]:
            raise CommandError("Usage: create <path>, the file's text, then end_of_file_text")
        path = self.viewer.resolve(args[0])
        if self.viewer.exists(path):
            raise CommandError(
                f"Error: {path} already exists; create does not overwrite files. Change it with "
                "str_replace or insert."
            )
        lines = split_lines(_text(blocks[0]))
        try:
            edited = self.editor.replace_lines(FileText(path, ()), 1, 0, lines)
        except EditRejected as rejected:
            raise EditRefused(
                _rejection(rejected, "The file was not created.", "file_text")
            ) from None
        self._remember(path, None)
        self.viewer.created[path] = _bytes(edited)
        if edited.total == 0:
            return f"File created successfully at: {path} (empty)."
        return (
            f"File created successfully at: {path}. Here's the result of running `cat -n` on it:\n"
            + self._numbered(edited, 1, edited.total)
        )

    def str_replace(self, args: tuple[str, ...], blocks: tuple[tuple[str, ...], ...]) -> str:
        if not args or not args[0]:
            raise CommandError(
                "Usage: str_replace <path>, old_str, end_of_old_str, new_str, end_of_new_str"
            )
        path = self.viewer.resolve(args[0])
        original = self.editor.read_text(path)
        content = _content(original)
        old, new = _text(blocks[0]), _text(blocks[1])
        if original.crlf:
            old, new = _crlf(old), _crlf(new)
        if not old:
            raise CommandError("No replacement was performed: old_str is empty.")
        starts = _occurrences(content, old)
        if not starts:
            raise CommandError(
                f"No replacement was performed: old_str did not appear verbatim in {path}."
            )
        if len(starts) > 1:
            lines = ", ".join(str(content.count("\n", 0, at) + 1) for at in starts)
            raise CommandError(
                f"No replacement was performed: old_str occurs {len(starts)} times in {path}, "
                f"starting on lines {lines}. Include more of the surrounding lines in old_str so "
                "that it occurs exactly once."
            )
        if new == old:
            raise CommandError("No replacement was performed: old_str and new_str are the same.")
        at = starts[0]
        result = content[:at] + new + content[at + len(old) :]
        first = content.count("\n", 0, at) + 1
        last = content.count("\n", 0, at + len(old) - 1) + 1
        count = last - first + 1 + len(split_lines(result)) - original.total
        try:
            edited = self.editor.write_checked(original, result, first, last, count)
        except EditRejected as rejected:
            raise EditRefused(
                _rejection(rejected, f"{path} is unchanged.", "old_str and new_str")
            ) from None
        self._remember(path, _bytes(original))
        return self._edited(edited, first, first + max(count, 1) - 1)

    def insert(self, args: tuple[str, ...], blocks: tuple[tuple[str, ...], ...]) -> str:
        usage = "Usage: insert <path> <insert_line>, the text, then end_of_new_str"
        if len(args) < 2 or not args[0]:
            raise CommandError(usage)
        path = self.viewer.resolve(args[0])
        original = self.editor.read_text(path)
        if not NUMBER.fullmatch(args[1]) or int(args[1]) > original.total:
            raise CommandError(
                f"{usage}\nError: insert_line must be a number from 0 (before the first line) to "
                f"{original.total} (after the last line)"
            )
        line = int(args[1])
        lines = split_lines(_text(blocks[0]))
        try:
            edited = self.editor.replace_lines(original, line + 1, line, lines)
        except EditRejected as rejected:
            raise EditRefused(_rejection(rejected, f"{path} is unchanged.", "new_str")) from None
        self._remember(path, _bytes(original))
        return self._edited(edited, line + 1, line + max(len(lines), 1))

    def undo_edit(self, args: tuple[str, ...]) -> str:
        if not args or not args[0]:
            raise CommandError("Usage: undo_edit <path>")
        path = self.viewer.resolve(args[0])
        if not self.history.get(path):
            raise CommandError(
                f"Error: there is no edit of {path} to undo (undo_edit takes back the edits of "
                "create, str_replace and insert)."
            )
        previous = self.history[path].pop()
        if previous is None:
            self._remove(path)
            self.viewer.created.pop(path, None)
            return f"Last edit to {path} undone: the file it created was removed."
        try:
            self.env.write_file(path, previous)
        except OSError as error:
            raise CommandError(f"Error: cannot write {path}: {error.strerror or error}") from error
        text = FileText.decode(path, previous)
        return f"Last edit to {path} undone. Here's the result of running `cat -n` on {path}:\n" + (
            self._numbered(text, 1, text.total)
        )

    # -- helpers -----------------------------------------------------------------------------

    def _edited(self, text: FileText, first: int, last: int) -> str:
        """The success message: the changed lines and a few around them, numbered."""
        start = max(1, first - SNIPPET_CONTEXT)
        end = min(text.total, last + SNIPPET_CONTEXT)
        return (
            f"The file {text.path} has been edited. Here's the result of running `cat -n` on a "
            f"snippet of {text.path}:\n{self._numbered(text, start, end)}\n{REVIEW}"
        )

    def _numbered(self, text: FileText, first: int, last: int) -> str:
        """Lines first..last as `cat -n` prints them, cut at whole lines after `view_max_chars`."""
        rows: list[str] = []
        size = 0
        for number in range(first, last + 1):
            row = f"{number:6}\t{text.lines[number - 1]}"
            size += len(row) + 1
            if size > self.max_chars and rows:
                rows.append(
                    f"<output clipped: lines {first}-{number - 1} of {text.total} shown; view "
                    f"the rest with `view {text.path} {number} {last}`>"
                )
                break
            rows.append(row)
        return "\n".join(rows)

    def _listing(self, directory: str) -> str:
        """Files and directories up to two levels below `directory`, hidden ones left out;
        at most LISTING_CAP entries cross from the sandbox."""
        quoted = shlex.quote(directory)
        script = (
            f"if [ -d {quoted} ]; then (CDPATH= cd -- {quoted} && find . -mindepth 1 -maxdepth 2 "
            "-not -path '*/.*' -printf '%P\\t%y\\n' 2>/dev/null | LC_ALL=C sort | "
            f"awk -v cap={LISTING_CAP} 'NR <= cap {{ print }} END {{ print NR }}'); "
            f"else echo {NO_DIR}; fi"
        )
        result = self.env.run(script, timeout=self.timeout)
        if result.timed_out:
            raise CommandTimedOut(result.output)
        rows = result.output.rstrip("\n").split("\n")
        if rows[-1] == NO_DIR:
            raise CommandError(f"Directory {directory} not found")
        if not rows[-1].isdigit():
            raise CommandError(f"Error: the listing failed: {result.output.strip()[:500]}")
        total = int(rows.pop())
        out = [
            f"Here's the files and directories up to 2 levels deep in {directory}, excluding "
            "hidden items:",
            f"{directory.rstrip('/')}/",
        ]
        for row in rows:
            relative, _, kind = row.rpartition("\t")
            out.append(f"{directory.rstrip('/')}/{relative}{'/' if kind == 'd' else ''}")
        if total > len(rows):
            out.append(f"({total - len(rows)} more entries not shown; view a subdirectory)")
        return "\n".join(out)

    def _read_or_directory(self, path: str) -> bytes | None:
        """The file's bytes, or None when `path` is a directory."""
        try:
            return self.env.read_file(path)
        except IsADirectoryError:
            return None
        except (FileNotFoundError, NotADirectoryError) as error:
            raise CommandError(f"The path {path} does not exist.") from error
        except OSError as error:
            raise CommandError(f"Error: cannot read {path}: {error.strerror or error}") from error

    def _remember(self, path: str, previous: bytes | None) -> None:
        edits = self.history[path]
        edits.append(previous)
        del edits[:-UNDO_DEPTH]

    def _remove(self, path: str) -> None:
        result = self.env.run(f"rm -f -- {shlex.quote(path)}", timeout=self.timeout)
        if result.timed_out or self.viewer.exists(path):
            raise CommandError(f"Error: cannot remove {path}: {result.output.strip()[:200]}")


def _text(block: tuple[str, ...]) -> str:
    """A block's value: its lines joined by newlines (end with an empty line for a final one)."""
    return "\n".join(block)


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _content(text: FileText) -> str:
    """The text of the file again (its lines keep their CR; the final newline as it was)."""
    return "\n".join(text.lines) + ("\n" if text.final_newline and text.lines else "")


def _bytes(text: FileText) -> bytes:
    return _content(text).encode("utf-8")


def _occurrences(content: str, old: str) -> list[int]:
    """Where `old` starts in `content`, overlapping occurrences included."""
    found, at = [], content.find(old)
    while at != -1:
        found.append(at)
        at = content.find(old, at + 1)
    return found


def _view_range(start: str, end: str, total: int, usage: str) -> tuple[int, int]:
    if not NUMBER.fullmatch(start) or not (NUMBER.fullmatch(end) or end == "-1"):
        raise CommandError(
            f"{usage}\nError: start_line and end_line must be numbers (end -1: the last line)"
        )
    first, last = int(start), total if end == "-1" else int(end)
    if not 1 <= first <= total:
        raise CommandError(
            f"{usage}\nError: start_line {first} is outside the file's lines 1-{total}"
        )
    if last < first or last > total:
        raise CommandError(
            f"{usage}\nError: end_line must be from start_line ({first}) to the last line "
            f"({total}), or -1"
        )
    return first, last


def _rejection(rejected: EditRejected, unchanged: str, argument: str) -> str:
    """The guardrail's refusal in this set's layout: the new errors, the change as it would have
    looked, and what to do."""
    start = max(1, rejected.start - SNIPPET_CONTEXT)
    end = min(rejected.edited.total, rejected.start + max(rejected.count, 1) - 1 + SNIPPET_CONTEXT)
    rows = "\n".join(
        f"{number:6}\t{rejected.edited.lines[number - 1]}" for number in range(start, end + 1)
    )
    return "\n".join(
        [
            "Your edit was NOT applied: it introduces new syntax error(s).",
            "",
            "ERRORS:",
            *(f"- {error.describe()}" for error in rejected.errors),
            "",
            f"This is how {rejected.original.path} would have looked (`cat -n` of a snippet):",
            rows,
            "",
            f"{unchanged} Correct {argument} and try again: the same command would fail the "
            "same way.",
        ]
    )
