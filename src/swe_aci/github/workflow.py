"""`run --issue URL`: the issue read, the repository cloned (or the user's clone used), and after
the episode the pull request opened. The token comes from GITHUB_TOKEN and goes only into the API
client's header and git's environment."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from swe_aci.github.client import GitHubClient, GitHubError
from swe_aci.github.config import GitHubConfig
from swe_aci.github.git import Git, clone, resolve_commit
from swe_aci.github.issue import Issue, IssueRef, api_url_for, fetch_issue
from swe_aci.github.pull_request import PullRequest, open_pull_request

TOKEN_VARIABLE = "GITHUB_TOKEN"


@dataclass
class IssueWorkspace:
    """A GitHub issue and a local clone of its repository at the commit the episode starts at."""

    issue: Issue
    location: str  # a local git repository
    base_commit: str
    client: GitHubClient
    git: Git
    config: GitHubConfig

    def open_pull_request(self, patch: str, trajectory_path: Path) -> PullRequest:
        return open_pull_request(
            self.client,
            self.git,
            self.issue,
            source=self.location,
            base_commit=self.base_commit,
            patch=patch,
            trajectory_path=trajectory_path,
            fork_wait=self.config.fork_wait,
        )


@contextlib.contextmanager
def issue_workspace(
    ref: IssueRef,
    config: GitHubConfig,
    *,
    clone_from: str | None,
    local_repository: str | None,
    commit: str | None,
    with_comments: bool,
    need_token: bool,
) -> Iterator[IssueWorkspace]:
    """Read the issue and yield it with a local repository: `local_repository` (the user's clone,
    only read) or a clone of `clone_from` (default: the repository's clone URL) in a temporary
    directory, removed afterwards."""
    token = os.environ.get(TOKEN_VARIABLE) or None
    if need_token and token is None:
        raise GitHubError(f"--open-pr needs a GitHub token: set {TOKEN_VARIABLE}")
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(GitHubClient(api_url_for(ref, config), token, config))
        git = Git(token)
        stack.callback(git.close)
        issue = fetch_issue(client, ref, with_comments)
        location = local_repository
        if location is None:
            url = clone_from
            if url is None:
                url = client.get(ref.repo_path, f"repository {ref.full_name}")["clone_url"]
            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="swe-aci-clone-"))
            location = str(Path(scratch) / ref.name)
            clone(git, url, Path(location))
        base = resolve_commit(git, location, commit)
        yield IssueWorkspace(issue, location, base, client, git, config)
