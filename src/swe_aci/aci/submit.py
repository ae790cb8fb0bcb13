"""The submission: `git add -A`, the staged diff against the base commit, minus the hidden patch.

A hidden patch (the oracle tests the harness added to the working tree) must not be part of what
the model submits. It is reverse-applied to a private copy of the index, never to the working tree
or the real index, so asking for the submission changes nothing the model can see. If it does not
reverse cleanly (the model edited the same lines), the files it touches are left out of the diff:
the evaluation replaces them with the oracle versions anyway.

The copy keeps the index's mtime (`cp -p`): git spots a same-size edit made within the same second
as the checkout only through that mtime ("racy git"), and a fresh mtime would hide the edit.
"""

from __future__ import annotations

import shlex

from swe_aci.env.base import Environment, SandboxError

INDEX = "swe-aci-submit.index"
HIDDEN = "swe-aci-hidden.patch"
DIFF = "swe-aci-submit.diff"


def submission(env: Environment, hidden_patch: str | None, timeout: float) -> str:
    if not hidden_patch or not hidden_patch.strip():
        return env.diff()
    git_dir = f"{env.repo_path.rstrip('/')}/.git"
    patch = hidden_patch if hidden_patch.endswith("\n") else hidden_patch + "\n"
    env.write_file(f"{git_dir}/{HIDDEN}", patch.encode("utf-8", "surrogateescape"))
    excluded = " ".join(shlex.quote(f":(exclude,literal){path}") for path in patch_paths(patch))
    script = f"""(
set -e
cd -- {shlex.quote(env.repo_path)}
export GIT_INDEX_FILE={shlex.quote(f"{git_dir}/{INDEX}")}
cp -p .git/index "$GIT_INDEX_FILE" 2>/dev/null || rm -f "$GIT_INDEX_FILE"
git add -A
if git apply --cached -R .git/{HIDDEN} 2>/dev/null; then
  git diff --cached {shlex.quote(env.base_commit)} -- > .git/{DIFF}
else
  git diff --cached {shlex.quote(env.base_commit)} -- . {excluded} > .git/{DIFF}
fi
)"""
    try:
        result = env.run(script, timeout=max(timeout, 120.0))
        if result.timed_out or result.exit_code != 0:
            raise SandboxError(f"taking the submission diff failed: {result.output.strip()[-300:]}")
        return env.read_file(f"{git_dir}/{DIFF}").decode("utf-8", errors="replace")
    finally:
        env.run(
            f"rm -f -- {shlex.quote(f'{git_dir}/{INDEX}')} {shlex.quote(f'{git_dir}/{HIDDEN}')} "
            f"{shlex.quote(f'{git_dir}/{DIFF}')}"
        )


def patch_paths(patch: str) -> list[str]:
    """The paths a unified diff touches (old and new names)."""
    paths: list[str] = []
    for line in patch.splitlines():
        if line.startswith(("--- ", "+++ ")):
            name = line[4:].split("\t", 1)[0]
            if name.startswith('"') and name.endswith('"'):
                name = name[1:-1]
            if name == "/dev/null":
                continue
            if name.startswith(("a/", "b/")):
                name = name[2:]
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            name = line.split(" ", 2)[2]
        else:
            continue
        if name and name not in paths:
            paths.append(name)
    return paths
