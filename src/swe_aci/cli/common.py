"""What every command shares: the one-line error exit, signal handling, the config flags, the checks
of user input, and one declaration of each option more than one command takes.

Only typer is imported here at module level; the layers below are imported inside the functions,
so `swe-aci --help` loads none of them.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

if TYPE_CHECKING:
    from swe_aci.env.config import EnvConfig
    from swe_aci.episode import EpisodeConfig
    from swe_aci.tasks import TaskSet

INTERRUPTING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
FILE_SUFFIX = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}")
DEFAULT_OUTPUT = Path("trajectories")  # of `run` and `replay`; see default_output_dir
EVALUATION_TIMEOUT = 1800.0  # seconds the tests of one instance may run, unless told otherwise
NO_MODEL = (
    "no model chosen: pass --model (e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5, "
    "local, human, or replay with --set model.replay_path=FILE) or set model.name in the config"
)

# Options more than one command takes, each declared once.
ConfigOption = Annotated[
    Path | None,
    typer.Option(help="Episode config: a YAML file or a built-in name (see `swe-aci configs`)."),
]
ModelOption = Annotated[str | None, typer.Option(help="Model name, e.g. openai/gpt-4o.")]
EnvOption = Annotated[str | None, typer.Option(help="Sandbox: auto, local, bwrap, docker.")]
ImageOption = Annotated[str | None, typer.Option(help="Docker image (docker sandbox).")]
InitCopyOption = Annotated[
    bool, typer.Option(help="Accept a directory without git: work on a committed copy.")
]
SetOption = Annotated[
    list[str] | None, typer.Option("--set", help="Override a config key: a.b.c=value.")
]
TaskSourceOption = Annotated[
    str,
    typer.Option(
        help="Task file (JSON, JSONL, YAML), a saved Hugging Face dataset, or a SWE-bench 5 task "
        "repository (a directory with sweb.yaml)."
    ),
]
DatasetOption = Annotated[
    str | None,
    typer.Option(help="Of a task repository: only this dataset its sweb.yaml publishes."),
]
SplitOption = Annotated[
    str | None, typer.Option(help="Of a task repository: only this split (default: all of its).")
]
FilterOption = Annotated[str | None, typer.Option(help="Only ids matching this regex.")]
SliceOption = Annotated[str | None, typer.Option(help="A:B of the selected tasks (Python slice).")]
WorkersOption = Annotated[int, typer.Option(min=1, help="Instances at once.")]
CacheOption = Annotated[
    Path | None, typer.Option(help="Recipe cache (default ~/.cache/swe-aci/recipes).")
]
EvaluationTimeoutOption = Annotated[
    float, typer.Option(min=1, help="Seconds the tests of one instance may run.")
]


class UsageError(Exception):
    """Bad input from the user; the message is shown as one line."""


def shown(text: object) -> str:
    """User-supplied text (a path, a task row's id, a value) as it is printed with rich markup:
    control characters shown as `\\x1b` etc. (never sent to the terminal) and `[...]` escaped."""
    from rich.markup import escape

    from swe_aci.episode_display import printable

    return escape(printable(str(text)))


def echo(text: str, err: bool = False) -> None:
    """typer.echo of a line that holds user-supplied text: control characters escaped."""
    from swe_aci.episode_display import printable

    typer.echo(printable(text), err=err)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line and exit non-zero: how every user error ends.

    The message is joined onto one line and escaped (`shown`): paths and values in it may hold
    `[...]` or terminal escape sequences.
    """
    from rich.console import Console

    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    Console(stderr=True).print(
        f"[bold red]error:[/] {shown(line)}", highlight=False, soft_wrap=True
    )
    raise typer.Exit(code)


def user_errors() -> tuple[type[Exception], ...]:
    """The exception types whose message is meant for the user."""
    from swe_aci.configuration import ConfigError
    from swe_aci.env.base import SandboxError
    from swe_aci.github.client import GitHubError
    from swe_aci.models.base import ModelAuthError, ModelConfigError
    from swe_aci.recipes import RecipeError
    from swe_aci.records import InstanceIdError, OutputLockError
    from swe_aci.tasks import TaskFileError
    from swe_aci.trajectory.store import TrajectoryError

    return (
        RecipeError,
        TaskFileError,
        ConfigError,
        SandboxError,
        UsageError,
        InstanceIdError,
        OutputLockError,
        ModelConfigError,
        ModelAuthError,
        TrajectoryError,
        GitHubError,
    )


def guarded(action: Callable[[], None], interrupted: str = "") -> None:
    """Run a command body, turning user errors, Ctrl-C, SIGTERM and SIGHUP into one line and an
    exit code (128 + the signal's number for a signal); `interrupted` is added to that line."""
    try:
        with signals_interrupt():
            action()
    except KeyboardInterrupt as interrupt:
        signum = getattr(interrupt, "signum", signal.SIGINT)
        name = signal.Signals(signum).name
        note = f"; {interrupted}" if interrupted else ""
        fail(f"interrupted by {name}{note}", code=128 + signum)
    except user_errors() as exc:
        fail(str(exc) or type(exc).__name__)


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP end the command as Ctrl-C does: they raise `Interrupted`, so the episode
    records its exit and the sandbox is torn down. Once one arrived, the others are ignored, so
    the teardown it started runs to its end."""
    from swe_aci.trajectory.exits import Interrupted

    def interrupt(signum: int, frame: object) -> None:
        for number in INTERRUPTING_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
        raise Interrupted(signum)

    previous = {number: signal.signal(number, interrupt) for number in INTERRUPTING_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


# The config key each dedicated flag sets, and how a message names the flag.
FLAG_NAMES = {
    "model.name": "--model",
    "env.backend": "--env",
    "env.image": "--image",
    "model.replay_path": "TRAJECTORY",
}


def build_config(config_path: Path | None, overrides: list[str], **explicit: Any) -> EpisodeConfig:
    """Load the YAML config, then the --set overrides (text, parsed as YAML), then the dedicated
    flags (which win). A flag's value goes into the config as the value it is, never through YAML
    text, so `--image null` is the image named `null`; a value the config rejects is one line
    naming the flag. An image is for the docker sandbox: `--image` with another one is an error
    rather than ignored."""
    from swe_aci.configuration import ConfigError
    from swe_aci.episode import load_config

    values = {key: value for key, value in explicit.items() if value is not None}
    try:
        config = load_config(config_path, overrides, values)
    except ConfigError as error:
        if error.key in values and error.key in FLAG_NAMES:
            flag = f"{FLAG_NAMES[error.key]} {values[error.key]}"
            raise UsageError(f"{flag}: {error.problem}") from None
        raise
    image = values.get("env.image")
    if image is not None and config.env.backend != "docker":
        raise UsageError(
            f"--image {image}: an image is used by the docker sandbox only (this "
            f"run's sandbox is {config.env.backend}); add --env docker"
        )
    return config


def require_model(config: EpisodeConfig) -> None:
    """A replay model needs the trajectory it replays."""
    if config.model.name == "replay" and not config.model.replay_path:
        fail(NO_MODEL)


def load_selection(
    instances: str,
    filter: str | None,
    slice: str | None,
    shuffle: bool = False,
    seed: int = 0,
    *,
    dataset: str | None = None,
    split: str | None = None,
) -> TaskSet:
    """The selected tasks; bad rows are reported on stderr (one line each) and left out."""
    from rich.console import Console

    from swe_aci.tasks import TaskFileError, load_tasks

    try:
        task_set = load_tasks(
            instances,
            filter=filter,
            slice=slice,
            shuffle=shuffle,
            seed=seed,
            dataset=dataset,
            split=split,
        )
    except TaskFileError as error:
        fail(str(error))
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    for problem in task_set.problems:
        console.print(f"[yellow]skipped row:[/] {shown(problem)}", markup=True, emoji=False)
    return task_set


def check_backend(env_config: EnvConfig) -> None:
    """Docker asked for but not reachable: one line now rather than one per instance."""
    from swe_aci.env.base import SandboxError

    if env_config.backend != "docker":
        return
    from swe_aci.env.docker.environment import connect

    try:
        connect()
    except SandboxError as exc:
        fail(str(exc))


def read_issue(issue: str) -> str:
    """The issue text from a file path, or the argument itself when it is not a file."""
    one_line = "\n" not in issue and len(issue) < 4096
    path = Path(issue).expanduser()
    if one_line and is_file(path):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UsageError(f"cannot read issue file {issue}: {exc.strerror}") from exc
    elif one_line and looks_like_path(issue.strip()):
        raise UsageError(f"issue file not found: {issue} (give an existing file or the issue text)")
    else:
        text = issue
    if not text.strip():
        raise UsageError("the issue is empty: give its text or a file holding it")
    return text


def looks_like_path(text: str) -> bool:
    """One word that names a file rather than describes a bug: it holds a `/` (not a URL's
    `://`), starts with `~`, or ends with a file suffix such as `.md`."""
    if not text or any(character.isspace() for character in text) or "://" in text:
        return False
    return (
        "/" in text or text.startswith("~") or FILE_SUFFIX.fullmatch(Path(text).suffix) is not None
    )


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
    from swe_aci.env.base import SandboxError
    from swe_aci.env.repo import init_copy, is_git_repository, is_remote

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


def default_output_dir(repo: str) -> Path:
    """Where outputs go without --output-dir: ./trajectories, unless that is inside the local
    repository being worked on (it would leave untracked files there); then the user's data
    directory, $XDG_DATA_HOME/swe-aci/trajectories (default ~/.local/share/...)."""
    from swe_aci.env.repo import is_remote

    if is_remote(repo):
        return DEFAULT_OUTPUT
    inside = Path(os.path.abspath(DEFAULT_OUTPUT))
    top = Path(os.path.abspath(Path(repo).expanduser()))
    if inside != top and not inside.is_relative_to(top):
        return DEFAULT_OUTPUT
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "swe-aci" / "trajectories"


def check_before_work(config: EpisodeConfig) -> None:
    """The checks of the config that need neither the model nor the sandbox, made before either
    starts (loading a local model takes a minute)."""
    from swe_aci.episode import missing_requirements

    if config.env.backend == "docker" and not config.env.image:
        fail("the docker sandbox needs an image: pass --image (or set env.image)")
    if problem := missing_requirements(config):
        fail(problem)


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
