"""The editor: `edit <start>:<end>` with its replacement lines, guarded by the linter.

The edit is applied in memory; for a .py file the result is linted and compared with the lint of
the original, and only if the edit introduced no error is the file written. A rejected edit, or
one the linter could not check, leaves the file byte for byte as it was. Files larger than
`edit_max_bytes` are not edited at all (linting them costs seconds and hundreds of megabytes); the
observation points to the shell. Line endings follow the file: the replacement lines of a CRLF
file get CRLF, and a missing final newline stays missing unless the edit reaches the last line.
"""

from __future__ import annotations

from swe_aci.aci.config import ACIConfig
from swe_aci.aci.lint import Linter, LintError, LintUnavailable, introduced_errors
from swe_aci.aci.viewer import NUMBER, CommandError, Viewer
from swe_aci.aci.window import FileText, join_lines, render

USAGE = "Usage: edit <start_line>:<end_line>"
UPDATED = (
    "File updated. Please review the changes and make sure they are correct (correct indentation, "
    "no duplicate lines, etc). Edit the file again if necessary."
)
RULE = "-" * 49
# How a rejected edit's observation starts (ours and the paper's): what analyses count.
REJECTED_EDIT = "Your proposed edit has introduced new syntax error(s)"


class Editor:
    def __init__(self, viewer: Viewer, config: ACIConfig) -> None:
        self.viewer = viewer
        self.lint = config.lint
        self.linter = Linter(config.lint_select)
        self.max_bytes = config.edit_max_bytes

    def edit(self, args: tuple[str, ...], body: tuple[str, ...] | None) -> str:
        if self.viewer.path is None:
            raise CommandError("No file open. Use the `open` command first.")
        start, end = self._range(args[0] if args else "")
        original = self._read(self.viewer.path)
        if start > original.total + 1:
            raise CommandError(
                f"{USAGE}\nError: start_line must be less than or equal to {original.total + 1} "
                f"(the file has {original.total} lines)"
            )
        end = min(end, original.total)
        replacement = list(body or ())
        if original.crlf:
            replacement = [line if line.endswith("\r") else line + "\r" for line in replacement]
        head, tail = list(original.lines[: start - 1]), original.lines[end:]
        if original.crlf and not original.final_newline and start == original.total + 1:
            head[-1] += "\r"  # appending after an unterminated last line: it gets CR LF too
        lines = [*head, *replacement, *tail]
        edited = FileText(original.path, tuple(lines))
        content = join_lines(lines)
        if self.lint and original.path.endswith(".py"):
            try:
                errors = self._new_errors(original, content, start, end, len(replacement))
            except LintUnavailable as error:
                raise CommandError(
                    "Your edit has NOT been applied: the syntax check of Python files could not "
                    f"run ({error}). The file is unchanged."
                ) from error
            if errors:
                return _rejection(errors, original, edited, start, end, len(replacement))
        if not original.final_newline and tail:
            content = content[:-1]  # the edit did not reach the last line: keep it unterminated
        try:
            self.viewer.env.write_file(original.path, content.encode("utf-8"))
        except OSError as error:
            raise CommandError(
                f"Error: cannot write {original.path}: {error.strerror or error}"
            ) from error
        return self.viewer.show(edited, start - 1) + "\n" + UPDATED

    def _read(self, path: str) -> FileText:
        """The open file as text, refused when it is binary or larger than the editor handles
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
        self, original: FileText, content: str, start: int, end: int, count: int
    ) -> list[LintError]:
        before = self.linter.errors(join_original(original), original.path)
        after = self.linter.errors(content, original.path)
        return introduced_errors(before, after, start, end, count)


def join_original(text: FileText) -> str:
    """The original text as flake8 sees it (a final newline makes no difference to the checks)."""
    return join_lines(text.lines)


def _rejection(
    errors: list[LintError], original: FileText, edited: FileText, start: int, end: int, count: int
) -> str:
    """The paper-era rejection message, with its views focused on the edit (~5 lines around)."""
    applied = render(edited, start - 1 + count // 2, count + 10)
    before = render(original, start - 1 + (end - start + 2) // 2, end - start + 11)
    return "\n".join(
        [
            f"{REJECTED_EDIT}. Please read this error message carefully and then retry editing "
            "the file.",
            "",
            "ERRORS:",
            *(f"- {error.describe()}" for error in errors),
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


def is_rejected_edit(action: str, observation: str) -> bool:
    """Whether a step was an `edit` the lint guardrail rejected (the interface must have had the
    `edit` command: in the shell-only baseline an action named `edit` is no such thing)."""
    words = action.split(maxsplit=1)
    return bool(words) and words[0] == "edit" and observation.lstrip().startswith(REJECTED_EDIT)
