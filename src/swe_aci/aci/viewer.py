"""The file viewer: `open`, `goto`, `scroll_down`, `scroll_up`, `create`.

Files are read through the environment at every command (the shell may have changed them);
nothing here starts a process.
"""

from __future__ import annotations

import posixpath
import re

from swe_aci.aci.config import ACIConfig
from swe_aci.aci.window import FileText, centre_for_line, constrain, render
from swe_aci.env.base import Environment

NO_FILE_OPEN = "No file open. Use the open command first."
NUMBER = re.compile(r"[0-9]+")


class CommandError(Exception):
    """A command refused to run; its message (a line or two) is the whole output."""


class Viewer:
    """The open file and the window position (its centre line, as in the paper-era viewer)."""

    def __init__(self, env: Environment, config: ACIConfig) -> None:
        self.env = env
        self.window = config.window  # None: whole files
        self.step = (config.window or 0) - config.overlap
        self.path: str | None = None
        self.centre = (config.window or 0) // 2
        self.created: dict[str, bytes] = {}  # files the create commands made, and their content

    # -- helpers shared with the editor and search -----------------------------------------

    def resolve(self, path: str) -> str:
        """An absolute, normalised path; relative paths are taken from the shell's directory."""
        return posixpath.normpath(posixpath.join(self.env.cwd, path))

    def read(self, path: str) -> FileText:
        return FileText.decode(path, self.read_bytes(path))

    def read_bytes(self, path: str) -> bytes:
        try:
            return self.env.read_file(path)
        except (FileNotFoundError, NotADirectoryError) as error:
            raise CommandError(f"File {path} not found") from error
        except IsADirectoryError as error:
            raise CommandError(
                f"Error: {path} is a directory. You can only open files. "
                "Use cd or ls to navigate directories."
            ) from error
        except OSError as error:
            raise CommandError(f"Error: cannot read {path}: {error.strerror or error}") from error

    def current(self) -> FileText:
        if self.path is None:
            raise CommandError(NO_FILE_OPEN)
        return self.read(self.path)

    def show(self, text: FileText, centre: int) -> str:
        """Move the window to `centre` (constrained to the file) and render it."""
        self.centre = constrain(centre, text.total, self.window)
        return render(text, self.centre, self.window)

    # -- commands ----------------------------------------------------------------------------

    def open(self, args: tuple[str, ...]) -> str:
        if not args or not args[0]:
            raise CommandError("Usage: open <file>")
        line = args[1] if len(args) > 1 else None
        if line is not None and not NUMBER.fullmatch(line):
            raise CommandError(
                "Usage: open <file> [<line_number>]\nError: <line_number> must be a number"
            )
        text = self.read(self.resolve(args[0]))
        warnings: list[str] = []
        centre = (self.window or 0) // 2
        if line is not None:
            number = int(line)
            if number > text.total:
                warnings = [
                    f"Warning: <line_number> ({number}) is greater than the number of lines "
                    f"in the file ({text.total})",
                    f"Warning: Setting <line_number> to {text.total}",
                ]
                centre = text.total
            elif number < 1:
                warnings = [
                    f"Warning: <line_number> ({number}) is less than 1",
                    "Warning: Setting <line_number> to 1",
                ]
                centre = 1
            else:
                centre = centre_for_line(number, self.window)
        self.path = text.path
        return "\n".join([*warnings, self.show(text, centre)])

    def goto(self, args: tuple[str, ...]) -> str:
        text = self.current()
        if not args or not args[0]:
            raise CommandError("Usage: goto <line>")
        if not NUMBER.fullmatch(args[0]):
            raise CommandError("Usage: goto <line>\nError: <line> must be a number")
        number = int(args[0])
        if number > text.total:
            raise CommandError(f"Error: <line> must be less than or equal to {text.total}")
        return self.show(text, centre_for_line(number, self.window))

    def scroll_down(self, args: tuple[str, ...]) -> str:
        return self._scroll(self.step, "(Reached the end of the file)")

    def scroll_up(self, args: tuple[str, ...]) -> str:
        return self._scroll(-self.step, "(Reached the start of the file)")

    def _scroll(self, lines: int, notice: str) -> str:
        text = self.current()
        before = constrain(self.centre, text.total, self.window)
        after = constrain(before + lines, text.total, self.window)
        if after == before:
            self.centre = before
            return notice
        return self.show(text, after)

    def create(self, args: tuple[str, ...]) -> str:
        if not args or not args[0]:
            raise CommandError("Usage: create <filename>")
        path = self.resolve(args[0])
        if self.exists(path):
            return f"Error: File '{path}' already exists.\n" + self._open_or_error(path)
        try:
            self.env.write_file(path, b"\n")
        except OSError as error:
            raise CommandError(f"Error: cannot create {path}: {error.strerror or error}") from error
        self.created[path] = b"\n"
        return self.open((path,))

    def exists(self, path: str) -> bool:
        """Whether anything is at `path` in the sandbox (an unreadable file counts)."""
        try:
            self.env.read_file(path)
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError:
            return True
        return True

    def _open_or_error(self, path: str) -> str:
        try:
            return self.open((path,))
        except CommandError as error:
            return str(error)
