"""The repository in a container: a host working copy copied in, or the image's own reset."""

from __future__ import annotations

import shutil
import tarfile
from collections.abc import Callable

from swe_aci.env.base import SandboxError
from swe_aci.env.cleanup import make_root
from swe_aci.env.diff import SUBMISSION_ATTRIBUTES
from swe_aci.env.docker.archive import ArchiveFiles
from swe_aci.env.repo import prepare_working_copy, repo_name
from swe_aci.env.shell import shell_quote

# Our own git calls must not stop at "dubious ownership" when the image's user does not own
# the repository; the agent's shell is left as the image has it.
GIT_FUNCTION = "git() { command git -c safe.directory='*' \"$@\"; }"
# What the agent must not see of an image's repository (as SWE-bench since 4.1): every ref but
# the detached HEAD at the base (branches, tags, remotes, stash), the reflogs, and the objects
# only they reach, the fix's commit among them. Only run when there is something to strip.
STRIP_HISTORY = (
    'if [ -n "$(git for-each-ref --count=1)" ] || '
    '[ -n "$(git rev-list -n 1 --all --reflog --not "$sha")" ]; then\n'
    "  git for-each-ref --format='delete %(refname)' | git update-ref --stdin || exit 6\n"
    "  rm -f .git/ORIG_HEAD .git/FETCH_HEAD .git/MERGE_HEAD\n"
    "  git reflog expire --expire=now --all && git repack -a -d -q && "
    "git prune --expire=now || exit 6\n"
    "fi"
)
# Runs a helper command in the container for at most the seconds given: (exit code, out, err).
HelperRun = Callable[[list[str], float], tuple[int, str, str]]


def copy_repo_in(archive: ArchiveFiles, source: str, commit: str | None, directory: str) -> str:
    """A host working copy of `source` at `commit` (its sha returned) put into `directory` of
    the container, owned by the container's user."""
    staging = make_root("docker-")
    try:
        working_copy = staging / repo_name(source)
        sha = prepare_working_copy(source, working_copy, commit)
        tarball = staging / "repo.tar"
        with tarfile.open(tarball, "w") as tar:
            tar.add(working_copy, arcname=working_copy.name, filter=_anonymous)
        with open(tarball, "rb") as data:
            archive.put(directory, data)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return sha


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Host owners mean nothing in the container: put_archive's copyUIDGID sets its user."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def reset_repo_in_image(run: HelperRun, repo: str, commit: str | None, timeout: float) -> str:
    """The image's repository at `repo` reset to `commit` (its sha returned), with its history
    after the base stripped; `run` runs a helper command in the container for at most
    `timeout` seconds."""
    script = (
        f"{GIT_FUNCTION}\n"
        # The agent's own git commands must work too, whoever owns the repository.
        "git config --global --add safe.directory '*' 2>/dev/null\n"
        'cd "$1" || exit 3\n'
        'sha=$(git rev-parse --verify --quiet "$2^{commit}") || exit 4\n'
        # Untracked files go, ignored ones stay: an image's build products (compiled
        # extensions, egg-info) are ignored files the package needs.
        'git checkout -q -f --detach "$sha" && git reset -q --hard "$sha" && git clean -fdq\n'
        "[ $? = 0 ] || exit 5\n"
        f"{STRIP_HISTORY}\n"
        # The attributes the submission is taken with (env/diff.py).
        f"mkdir -p .git/info && printf %s {shell_quote(SUBMISSION_ATTRIBUTES)} "
        "> .git/info/attributes || exit 5\n"
        'printf %s "$sha"\n'
    )
    command = ["bash", "-c", script, "reset", repo, commit or "HEAD"]
    try:
        code, out, err = run(command, timeout)
    except TimeoutError:
        raise SandboxError(f"resetting {repo} took over {timeout:g} seconds") from None
    if code == 3:
        raise SandboxError(f"the image has no repository at {repo}")
    if code == 4:
        raise SandboxError(f"unknown commit {commit or 'HEAD'!r} in {repo}")
    if code == 6:
        raise SandboxError(f"could not strip the history after the base in {repo}")
    if code != 0:
        raise SandboxError(f"could not reset {repo}: {(err or out).strip()[-300:]}")
    return out.strip()
