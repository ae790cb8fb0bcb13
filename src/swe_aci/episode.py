"""One episode end to end: sandbox, interface, model, agent loop. Shared by `run` and `replay`."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from swe_aci.agent.config import EpisodeConfig
from swe_aci.agent.loop import Agent, EpisodeResult, StepRecord
from swe_aci.env.base import SandboxError
from swe_aci.env.repo import init_copy, is_git_repository, is_remote, repo_name


class UsageError(Exception):
    """Bad input from the user; the message is shown as one line."""


@dataclass(frozen=True)
class RepoSource:
    """Where the repository comes from: a local git repo or URL (`location`), at `commit`."""

    location: str
    commit: str | None = None


def instance_id_for(source: str, problem_statement: str) -> str:
    """A readable, stable id: the repository name plus a short hash of the issue text."""
    digest = hashlib.sha1(problem_statement.encode()).hexdigest()[:8]
    return f"{repo_name(source)}-{digest}"


def read_issue(issue: str) -> str:
    """The issue text from a file path, or the argument itself when it is not a file."""
    one_line = "\n" not in issue and len(issue) < 4096
    path = Path(issue).expanduser()
    if one_line and is_file(path):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UsageError(f"cannot read issue file {issue}: {exc.strerror}") from exc
    elif one_line and " " not in issue.strip() and path.suffix in {".md", ".txt", ".rst"}:
        raise UsageError(f"issue file not found: {issue}")
    else:
        text = issue
    if not text.strip():
        raise UsageError("the issue is empty: give its text or a file holding it")
    return text


def is_file(path: Path) -> bool:
    """Path.is_file, but False for text that cannot be a path (a component over 255 bytes)."""
    try:
        return path.is_file()
    except OSError:
        return False


@contextmanager
def resolved_repo(location: str, init_if_plain: bool) -> Iterator[str]:
    """Yield a git repository location for `location`.

    A plain directory (no git) is only used through a committed copy in a temporary directory, and
    only when the user asked for it: their own tree is never touched.
    """
    if is_remote(location):
        yield location
        return
    path = Path(location).expanduser()
    if not path.exists():
        raise UsageError(f"repository path does not exist: {location}")
    if not path.is_dir():
        raise UsageError(f"repository path is not a directory: {location}")
    if is_git_repository(path):
        yield str(path.resolve())
        return
    if not init_if_plain:
        raise UsageError(
            f"{location} is not the top of a git repository; pass --init-copy to work on a "
            "committed copy of it (the directory itself is never modified)"
        )
    with tempfile.TemporaryDirectory(prefix="swe-aci-src-") as scratch:
        copy = Path(scratch) / path.resolve().name
        try:
            init_copy(path, copy)
        except (OSError, SandboxError) as exc:
            raise UsageError(f"cannot make a git copy of {location}: {exc}") from exc
        yield str(copy)


def check_writable(directory: Path) -> None:
    """Fail early, before any work, if outputs could not be written.

    Directories made for the test are removed again, so a run that then fails on other bad
    input leaves nothing behind; the episode creates them for real when it writes.
    """
    created: list[Path] = []
    try:
        absolute = Path(os.path.abspath(directory))
        created = [path for path in (absolute, *absolute.parents) if not path.exists()]
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise UsageError(f"output directory {directory} is not writable: {exc.strerror}") from exc
    finally:
        for path in created:  # deepest first
            with contextlib.suppress(OSError):
                path.rmdir()


def run_episode(
    config: EpisodeConfig,
    source: RepoSource,
    problem_statement: str,
    *,
    instance_id: str,
    output_dir: Path,
    on_step: Callable[[StepRecord], None] | None = None,
    hidden_patch: str | None = None,
) -> EpisodeResult:
    """Create the sandbox, run the agent on the issue, and always tear the sandbox down."""
    from swe_aci.aci import ACI
    from swe_aci.agent.parsing import reply_format
    from swe_aci.env.factory import make_environment
    from swe_aci.models.factory import make_model

    model = make_model(config.model, reply_format(config.agent.parser))
    with contextlib.ExitStack() as cleanup:
        if close_model := getattr(model, "close", None):
            cleanup.callback(close_model)
        environment = make_environment(config.env, source.location, source.commit)
        cleanup.callback(environment.close)
        aci = ACI(environment, config.aci, hidden_patch=hidden_patch)
        agent = Agent(
            config.agent,
            model,
            aci,
            output_dir=output_dir,
            instance_id=instance_id,
            on_step=on_step,
        )
        return agent.run(problem_statement)
