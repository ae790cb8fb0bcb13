"""From a finished episode to a pull request: the body that says what the agent did, the branch
pushed to the repository or the user's fork, the pull request opened (or the open one reused)."""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_aci.github.client import GitHubClient, GitHubError, GitHubNotFound
from swe_aci.github.git import Git, commit_patch, push_branch
from swe_aci.github.issue import Issue
from swe_aci.trajectory.store import load_trajectory

MAX_STEPS_SHOWN = 40
MAX_ACTION_CHARS = 120
MAX_BODY_CHARS = 60_000  # GitHub refuses bodies over 65,536 characters
CHANGED_FILE = re.compile(r"^diff --git a/(.+?) b/(.+)$", re.MULTILINE)


@dataclass(frozen=True)
class PullRequest:
    url: str
    head: str
    reused: bool  # an open pull request of that branch existed: the push updated it


def changed_files(patch: str) -> list[str]:
    return sorted({match[2] for match in CHANGED_FILE.finditer(patch)})


def plain(text: str, limit: int) -> str:
    """One line of untrusted text, safe inside a fenced block: no backticks, no control bytes."""
    line = " ".join(text.replace("`", "'").split())
    line = "".join(character for character in line if character.isprintable())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def pull_request_body(issue: Issue, trajectory_path: Path, patch: str) -> str:
    """What the agent did, from its trajectory: its steps, the files changed, exit status, cost.

    The issue is referenced, not closed: an agent's patch is unreviewed, so merging it should not
    close the issue by itself; a reviewer who agrees adds "Fixes #N".
    """
    trajectory = load_trajectory(trajectory_path)
    info: dict[str, Any] = trajectory["info"]
    stats: dict[str, Any] = info.get("model_stats") or {}
    steps = trajectory["trajectory"]
    shown = [
        f"{number:>3}. {plain(str(step.get('action') or ''), MAX_ACTION_CHARS)}"
        for number, step in enumerate(steps[:MAX_STEPS_SHOWN], 1)
    ]
    if len(steps) > MAX_STEPS_SHOWN:
        shown.append(f"     ... {len(steps) - MAX_STEPS_SHOWN} more steps")
    files = ", ".join(f"`{plain(name, 200)}`" for name in changed_files(patch)) or "(none)"
    body = "\n".join(
        [
            f"Proposed by swe-aci, an automated agent, for #{issue.ref.number} "
            f"({plain(issue.title, 200)}). The issue is not closed automatically when this is "
            f'merged: add "Fixes #{issue.ref.number}" if it resolves it.',
            "",
            f"**Files changed:** {files}",
            f"**Exit status:** `{plain(str(info.get('exit_status')), 80)}`",
            f"**Model:** `{plain(str(info.get('model_name') or ''), 80)}`",
            f"**Cost:** ${float(stats.get('instance_cost', 0.0)):.4f} "
            f"({int(stats.get('api_calls', 0))} model calls, "
            f"{int(stats.get('tokens_sent', 0))} tokens sent, "
            f"{int(stats.get('tokens_received', 0))} received)",
            "",
            f"**What the agent did** ({len(steps)} steps):",
            "",
            "```text",
            *shown,
            "```",
        ]
    )
    return body[:MAX_BODY_CHARS]


def push_target(
    client: GitHubClient, issue: Issue, repository: dict[str, Any], fork_wait: float
) -> tuple[str, str]:
    """(clone URL to push to, owner of the head branch): the repository when the token's user
    may push to it, else that user's fork (POST /forks returns the existing one if any)."""
    ref = issue.ref
    if (repository.get("permissions") or {}).get("push"):
        return repository["clone_url"], ref.owner
    fork = client.post(f"{ref.repo_path}/forks", f"a fork of {ref.full_name}", {})
    login = fork["owner"]["login"]  # the token's user: GitHub forks into the caller's account
    fork_path = f"/repos/{login}/{fork['name']}"
    deadline = time.monotonic() + fork_wait
    while True:  # GitHub creates forks asynchronously
        try:
            ready = client.get(fork_path, f"the fork {fork['full_name']}")
            return ready["clone_url"], login
        except GitHubNotFound:
            if time.monotonic() > deadline:
                raise GitHubError(
                    client.redact(
                        f"the fork {fork['full_name']} did not appear within {fork_wait:.0f} s"
                    )
                ) from None
            client.sleep(2.0)


def open_pull_request(
    client: GitHubClient,
    git: Git,
    issue: Issue,
    *,
    source: str,
    base_commit: str,
    patch: str,
    trajectory_path: Path,
    fork_wait: float,
) -> PullRequest:
    """Commit the patch on `swe-aci/issue-N` at the episode's base commit, push it, and open the
    pull request against the repository's default branch."""
    ref = issue.ref
    body = pull_request_body(issue, trajectory_path, patch)
    repository = client.get(ref.repo_path, f"repository {ref.full_name}")
    push_url, head_owner = push_target(client, issue, repository, fork_wait)
    head = f"{head_owner}:{ref.branch}"
    with tempfile.TemporaryDirectory(prefix="swe-aci-pr-") as scratch:
        work = Path(scratch) / "work"
        commit_patch(git, source, base_commit, ref.branch, patch, work)
        push_branch(git, work, push_url, ref.branch)
    existing = client.get(f"{ref.repo_path}/pulls", "open pull requests", head=head, state="open")
    if existing:
        return PullRequest(existing[0]["html_url"], head, reused=True)
    created = client.post(
        f"{ref.repo_path}/pulls",
        f"a pull request on {ref.full_name}",
        {
            "title": f"swe-aci: {plain(issue.title, 200)}"[:250],
            "head": head,
            "base": repository["default_branch"],
            "body": body,
            "maintainer_can_modify": True,
        },
    )
    return PullRequest(created["html_url"], head, reused=False)
