"""`swe-aci run` and `swe-aci replay`: one episode, its steps shown as they happen."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from swe_aci.cli.common import (
    ConfigOption,
    EnvOption,
    ImageOption,
    InitCopyOption,
    ModelOption,
    SetOption,
    build_config,
    check_writable,
    fail,
    guarded,
    read_issue,
    require_model,
    resolved_repo,
)

if TYPE_CHECKING:
    from swe_aci.agent.loop import EpisodeResult, StepRecord

OBSERVATION_PREVIEW_LINES = 12
DEFAULT_OUTPUT = Path("trajectories")
# Control characters other than newline and tab: shown escaped, never sent to the terminal.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TRAJECTORY_SAVED = "the trajectory so far was saved"
OutputOption = Annotated[Path, typer.Option(help="Where trajectories and patches go.")]


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


def run(
    repo: Annotated[str | None, typer.Option(help="Local git repository or git URL.")] = None,
    issue: Annotated[str | None, typer.Option(help="Issue text, or a file holding it.")] = None,
    instance: Annotated[
        str | None,
        typer.Option(help="One task of a task file, FILE:ID (instead of --repo and --issue)."),
    ] = None,
    commit: Annotated[str | None, typer.Option(help="Commit to start from (default HEAD).")] = None,
    config: ConfigOption = None,
    model: ModelOption = None,
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
        from swe_aci.episode import RepoSource, instance_id_for, run_episode

        problem = read_issue(issue)
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )
        check_writable(output_dir)
        with resolved_repo(repo, init_copy) as location:
            require_model(episode_config)
            result = run_episode(
                episode_config,
                RepoSource(location, commit),
                problem,
                instance_id=instance_id_for(repo, problem) if instance_id is None else instance_id,
                output_dir=output_dir,
                on_step=print_step,
            )
        print_result(result)
        fail_on_unexpected_error(result)

    def run_task(spec: str) -> None:
        from swe_aci.batch.instance import run_task_episode
        from swe_aci.recipes import task_environment
        from swe_aci.tasks import load_task

        task = load_task(spec)
        episode_config = build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )
        require_model(episode_config)
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
        from swe_aci.episode import RepoSource, run_episode

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
    from swe_aci.records import instance_id_from

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
