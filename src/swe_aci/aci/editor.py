"""The editor: `edit <start>:<end>` with its replacement lines, guarded by the linter; the guarded
write is shared with the str_replace command set (`aci/str_replace.py`).

The edit is applied in memory and the result checked against the original (flake8 for a .py
file, tree-sitter's parse errors for the other languages it parses: `Linter.language`); only if
the edit introduced no error is the file written. A rejected edit, or one the linter could not
check, leaves the file byte for byte as it was. Files larger than
`edit_max_bytes` are not edited at all (linting them costs seconds and hundreds of megabytes); the
observation points to the shell. Line endings follow the file: the replacement lines of a CRLF
file get CRLF, and a missing final newline stays missing unless the edit reaches the last line.
"""

from __future__ import annotations

from swe_aci.aci.config import ACIConfig
from swe_aci.aci.lint import Linter, LintUnavailable, Problem, introduced_errors
from swe_aci.aci.viewer import NUMBER, CommandError, Viewer
from swe_aci.aci.window import FileText, join_lines, render

USAGE = "Usage: edit <start_line>:<end_line>"
UPDATED = (
    "File updated. Please review the changes and make sure they are correct (correct indentation, "
    "no duplicate lines, etc). Edit the file again if necessary."
)
RULE = "-" * 49


class EditRejected(Exception):
    """The guardrail refused an edit: the lint errors it introduced, and the file before and as it
    would have been after (lines start..end of the original became `count` lines). Each command
    set words the refusal its own way; the file is unchanged."""

    def __init__(
        self,
        errors: list[Problem],
        original: FileText,
        edited: FileText,
        start: int,
        end: int,
        count: int,
    ) -> None:
        super().__init__(f"{len(errors)} new lint error(s) in {original.path}")
        self.errors, self.original, self.edited = errors, original, edited
        self.start, self.end, self.count = start, end, count


class EditRefused(CommandError):
    """A command's output when the guardrail refused its edit: the ACI runs it as any command
    error's text and marks the observation (`Observation.rejected_edit`), so nobody re-reads the
    text to learn that an edit was rejected."""


class Editor:
    """`edit`, and the guarded writes every editing command shares (`replace_lines`,
    `write_checked`)."""

    def __init__(self, viewer: Viewer, config: ACIConfig) -> None:
        self.viewer = viewer
        self.lint = config.lint
        self.linter = Linter(config.lint_select)
        self.max_bytes = config.edit_max_bytes

    def edit(self, args: tuple[str, ...], body: tuple[str, ...]) -> str:
        if self.viewer.path is None:
            raise CommandError("No file open. Use the `open` command first.")
        start, end = self._range(args[0] if args else "")
        original = self.read_text(self.viewer.path)
        if start > original.total + 1:
            raise CommandError(
                f"{USAGE}\nError: start_line must be less than or equal to {original.total + 1} "
                f"(the file has {original.total} lines)"
            )
        try:
            edited = self.replace_lines(original, start, min(end, original.total), body)
        except EditRejected as rejected:
            raise EditRefused(_rejection(rejected)) from None
        return self.viewer.show(edited, start - 1) + "\n" + UPDATED

    def replace_lines(
        self, original: FileText, start: int, end: int, body: tuple[str, ...] | list[str]
    ) -> FileText:
        """Lines start..end (1-based, inclusive; end = start - 1 inserts before start) of
        `original` replaced by `body`, linted and written; the edited text. Line endings follow
        the file: CRLF files get CRLF lines, and a missing final newline stays missing unless the
        edit reaches the last line. Raises EditRejected or CommandError (file unchanged)."""
        replacement = list(body)
        if original.crlf:
            replacement = [line if line.endswith("\r") else line + "\r" for line in replacement]
        head, tail = list(original.lines[: start - 1]), original.lines[end:]
        if original.crlf and not original.final_newline and start == original.total + 1:
            head[-1] += "\r"  # appending after an unterminated last line: it gets CR LF too
        content = join_lines([*head, *replacement, *tail])
        if not original.final_newline and tail:
            content = content[:-1]  # the edit did not reach the last line: keep it unterminated
        return self.write_checked(original, content, start, end, len(replacement))

    def write_checked(
        self, original: FileText, content: str, start: int, end: int, count: int
    ) -> FileText:
        """Write `content` over `original` unless, for a file the linter checks under `aci.lint`,
        the change (lines start..end became `count` lines) introduced an error: EditRejected.
        If the linter cannot run or the write fails: CommandError. Either way the file is
        unchanged. Returns the edited text."""
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as error:
            raise CommandError(
                f"Error: the new text is not valid Unicode ({error.reason}); nothing was written."
            ) from error
        edited = FileText.decode(original.path, data)
        language = self.linter.language(original.path) if self.lint else None
        if language is not None:
            try:
                errors = self._new_errors(original, edited, start, end, count)
            except LintUnavailable as error:
                raise CommandError(
                    f"Your edit has NOT been applied: the syntax check of {language} files could "
                    f"not run ({error}). The file is unchanged."
                ) from error
            if errors:
                raise EditRejected(errors, original, edited, start, end, count)
        try:
            self.viewer.env.write_file(original.path, data)
        except OSError as error:
            raise CommandError(
                f"Error: cannot write {original.path}: {error.strerror or error}"
            ) from error
        return edited

    def read_text(self, path: str) -> FileText:
        """A file as text, refused when it is binary or larger than the editor handles
        (checked before it is split into lines)."""
        data = self.viewer.read_bytes(path)
        if len(data) > self.max_bytes:
            raise CommandError(
                f"Error: {path} is {len(data)} bytes, more than the edit command handles "
                f"({self.max_bytes} bytes). Change it with shell commands instead (e.g. sed -i)."
            )
        text = FileText.decode(path, data)
        if text.binary:
            raise CommandError(
                f"Error: {path} is binary or not valid UTF-8 text; it cannot be edited."
            )
        return text

    @staticmethod
    def _range(spec: str) -> tuple[int, int]:
        """`start:end` as in the paper-era command, plus the range checks it lacked."""
        start_text, end_text = (spec + ":").split(":")[:2]
        if not start_text or not end_text:
            raise CommandError(USAGE)
        if not NUMBER.fullmatch(start_text):
            raise CommandError(f"{USAGE}\nError: start_line must be a number")
        if not NUMBER.fullmatch(end_text):
            raise CommandError(f"{USAGE}\nError: end_line must be a number")
        start, end = int(start_text), int(end_text)
        if start < 1:
            raise CommandError(f"{USAGE}\nError: start_line must be at least 1")
        if end < start - 1:
            raise CommandError(
                f"{USAGE}\nError: end_line must be at least start_line - 1 "
                f"(use edit {start}:{start - 1} to insert before line {start})"
            )
        return start, end

    def _new_errors(
        self, original: FileText, edited: FileText, start: int, end: int, count: int
    ) -> list[Problem]:
        before = self.linter.problems(join_original(original), original.path)
        after = self.linter.problems(join_original(edited), original.path)
        return introduced_errors(before, after, start, end, count)


def join_original(text: FileText) -> str:
    """The original text as flake8 sees it (a final newline makes no difference to the checks)."""
    return join_lines(text.lines)


def _rejection(rejected: EditRejected) -> str:
    """The paper-era rejection message, with its views focused on the edit (~5 lines around)."""
    start, end, count = rejected.start, rejected.end, rejected.count
    applied = render(rejected.edited, start - 1 + count // 2, count + 10)
    before = render(rejected.original, start - 1 + (end - start + 2) // 2, end - start + 11)
    return "\n".join(
        [
            "Your proposed edit has introduced new syntax error(s). Please read this error "
            "message carefully and then retry editing the file.",
            "",
            "ERRORS:",
            *(f"- {error.describe()}" for error in rejected.errors),
            "",
            "This is how your edit would have looked if applied",
            RULE,
            applied,
            RULE,
            "",
            "This is the original code before your edit",
            RULE,
            before,
            RULE,
            "Your changes have NOT been applied. Please fix your edit command and try again.",
            "You either need to 1) Specify the correct start/end line arguments or 2) Correct "
            "your edit code.",
            "DO NOT re-run the same failed edit command. Running it again will lead to the same "
            "error.",
        ]
    )
