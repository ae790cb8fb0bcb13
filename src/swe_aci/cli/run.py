"""`swe-aci run` and `swe-aci replay`: one episode, its steps shown as they happen."""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from swe_aci.cli.common import (
    DEFAULT_OUTPUT,
    ConfigOption,
    EnvOption,
    ImageOption,
    InitCopyOption,
    ModelOption,
    SetOption,
    build_config,
    check_before_work,
    check_writable,
    default_output_dir,
    fail,
    guarded,
    read_issue,
    require_model,
    resolved_repo,
)

if TYPE_CHECKING:
    from swe_aci.env.config import Workspace
    from swe_aci.episode import EpisodeConfig
    from swe_aci.hooks.base import RunHook
    from swe_aci.hooks.single import SingleRun
    from swe_aci.trajectory.result import EpisodeResult

TRAJECTORY_SAVED = "the trajectory so far was saved"
OutputOption = Annotated[
    Path | None,
    typer.Option(
        help="Where trajectories and patches go (default: ./trajectories, or "
        "~/.local/share/swe-aci/trajectories when that would be inside the repository worked on)."
    ),
]


@contextlib.contextmanager
def finishing() -> Iterator[None]:
    """Turn the end of a run into its exit: an episode that ended on an unexpected error is a
    failed command (exit 1), a hook that failed a usage-level one (2); otherwise the exit code
    says whether a patch was produced (0), none (3), or only files the agent created that nothing
    else uses (4), which `exit_with` gives."""
    from swe_aci.hooks.base import HookError
    from swe_aci.hooks.single import EpisodeFailed

    try:
        yield
    except EpisodeFailed as error:
        fail(str(error), code=1)
    except HookError as error:
        fail(str(error))


def exit_with(run: SingleRun) -> None:
    if run.outcome.kind.value:
        raise typer.Exit(run.outcome.kind.value)


def run(
    repo: Annotated[str | None, typer.Option(help="Local git repository or git URL.")] = None,
    issue: Annotated[
        str | None,
        typer.Option(help="Issue text, a file holding it, or a GitHub issue URL."),
    ] = None,
    instance: Annotated[
        str | None,
        typer.Option(help="One task of a task file, FILE:ID (instead of --repo and --issue)."),
    ] = None,
    commit: Annotated[str | None, typer.Option(help="Commit to start from (default HEAD).")] = None,
    config: ConfigOption = None,
    model: ModelOption = None,
    env: EnvOption = None,
    image: ImageOption = None,
    output_dir: OutputOption = None,
    instance_id: Annotated[str | None, typer.Option(help="Name of this run's outputs.")] = None,
    init_copy: InitCopyOption = False,
    set_: SetOption = None,
    issue_comments: Annotated[
        bool, typer.Option(help="With a GitHub issue URL: give the agent its comments too.")
    ] = False,
    open_pr: Annotated[
        bool,
        typer.Option(help="With a GitHub issue URL: push the patch and open a pull request."),
    ] = False,
    apply: Annotated[
        bool, typer.Option(help="Apply the patch to the local --repo clone's working tree.")
    ] = False,
) -> None:
    """Run the agent on one issue of one repository, or on one task of a task file.

    Exit code: 0 a patch was produced, 3 no patch, 4 a patch that only adds files nothing else
    uses (a reproduction script), 1 an unexpected error, 2 a usage error.
    """

    def body() -> None:
        from swe_aci.github.issue import parse_issue_url
        from swe_aci.hooks.single import run_single

        if instance is not None:
            if repo is not None or issue is not None or commit is not None:
                fail("--instance names the repository and the issue: drop --repo/--issue/--commit")
            source = task_start
        else:
            issue_ref = parse_issue_url(issue) if issue is not None else None
            if issue_ref is None and (open_pr or issue_comments):
                flag = "--open-pr" if open_pr else "--issue-comments"
                fail(f"{flag} needs a GitHub issue URL as --issue")
            if apply and (repo is None or is_remote_location(repo)):
                fail("--apply needs --repo naming a local clone to apply the patch to")
            if issue_ref is None and (repo is None or issue is None):
                fail("give --repo and --issue, or one task of a task file with --instance FILE:ID")
            source = repo_start if issue_ref is None else github_start
        with source() as start, finishing():
            outcome = run_single(
                start.config,
                start.workspace,
                start.problem,
                instance_id=start.instance_id,
                output_dir=start.output_dir,
                hooks=start.hooks,
            )
        exit_with(outcome)

    def episode_config() -> EpisodeConfig:
        return build_config(
            config, set_ or [], **{"model.name": model, "env.backend": env, "env.image": image}
        )

    @contextlib.contextmanager
    def task_start() -> Iterator[Start]:
        from swe_aci.recipes import task_workspace
        from swe_aci.tasks import load_task

        assert instance is not None
        task = load_task(instance)
        start_config = episode_config()
        require_model(start_config)
        if instance_id is not None:
            task = task.model_copy(update={"instance_id": instance_id})
        outputs = output_dir or DEFAULT_OUTPUT
        check_writable(outputs)
        workspace = task_workspace(
            task, start_config.env, log=lambda line: typer.echo(line, err=True)
        )
        yield Start(start_config, workspace, task.problem_statement, task.instance_id, outputs)

    @contextlib.contextmanager
    def repo_start() -> Iterator[Start]:
        from swe_aci.env.config import Workspace
        from swe_aci.episode import instance_id_for
        from swe_aci.hooks.repository import ApplyPatch

        assert repo is not None and issue is not None
        problem = read_issue(issue)
        start_config = episode_config()
        check_before_work(start_config)
        outputs = output_dir or default_output_dir(repo)
        check_writable(outputs)
        with resolved_repo(repo, init_copy) as location:
            require_model(start_config)
            yield Start(
                start_config,
                Workspace(start_config.env, location, commit),
                problem,
                instance_id_for(repo, problem) if instance_id is None else instance_id,
                outputs,
                [ApplyPatch(repo, typer.echo)] if apply else [],
            )

    @contextlib.contextmanager
    def github_start() -> Iterator[Start]:
        from swe_aci.env.config import Workspace
        from swe_aci.github.issue import parse_issue_url
        from swe_aci.github.workflow import issue_workspace
        from swe_aci.hooks.repository import ApplyPatch, OpenPullRequest

        issue_ref = parse_issue_url(issue) if issue is not None else None
        assert issue_ref is not None
        start_config = episode_config()
        check_before_work(start_config)
        require_model(start_config)
        local = repo is not None and not is_remote_location(repo)
        outputs = output_dir or (default_output_dir(repo) if local and repo else DEFAULT_OUTPUT)
        check_writable(outputs)
        with (
            resolved_repo(repo, init_copy) if local else contextlib.nullcontext(None) as location,
            issue_workspace(
                issue_ref,
                start_config.github,
                clone_from=repo,
                local_repository=location,
                commit=commit,
                with_comments=issue_comments,
                need_token=open_pr,
            ) as workspace,
        ):
            hooks: list[RunHook[EpisodeResult]] = []
            if apply:
                hooks.append(ApplyPatch(repo or workspace.location, typer.echo))
            if open_pr:
                hooks.append(OpenPullRequest(workspace, typer.echo))
            yield Start(
                start_config,
                Workspace(start_config.env, workspace.location, workspace.base_commit),
                workspace.issue.problem_statement(),
                instance_id or issue_ref.instance_id,
                outputs,
                hooks,
            )

    guarded(body, interrupted=TRAJECTORY_SAVED)


@dataclass
class Start:
    """What a run starts from, whichever way it was named: the config, the sandbox's workspace,
    the problem, the outputs' name and place, and the hooks after the episode."""

    config: EpisodeConfig
    workspace: Workspace
    problem: str
    instance_id: str
    output_dir: Path
    hooks: list[RunHook[EpisodeResult]] = field(default_factory=list)


def is_remote_location(location: str) -> bool:
    from swe_aci.env.repo import is_remote

    return is_remote(location)


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
        from swe_aci.env.config import Workspace
        from swe_aci.hooks.single import run_single
        from swe_aci.trajectory.exits import INTERRUPTED
        from swe_aci.trajectory.store import load_trajectory, recorded_problem_statement

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
        with resolved_repo(repo, init_copy) as location, finishing():
            result = run_single(
                episode_config,
                Workspace(episode_config.env, location, commit),
                recorded_problem_statement(recorded) or f"(replay of {trajectory.name})",
                instance_id=instance_id,
                output_dir=outputs,
            ).result
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
