"""Applying a patch to a sandbox's repository: the one applier of evaluation, RAG and attempts.

The patch reaches the sandbox as a file, written through the environment's own bounded file
primitives (`write_file`: regular files only) into a private directory under the sandbox's /tmp;
no byte of it is ever part of a shell command, whatever its encoding (its text is written as
UTF-8 with surrogate escapes, so the bytes a diff was read from come back unchanged). The commands
are fixed text naming that file.

Without `fuzz`, `git apply` (atomic: it changes nothing when it fails), then `git apply --recount`
(which forgives wrong hunk line counts, a common slip of models). With `fuzz`, SWE-bench's order
(`GIT_APPLY_CMDS`): `git apply --verbose`, `git apply --verbose --reject`, `patch --batch
--fuzz=5 -p1 -i`; `--reject` may leave part of the patch applied and `.rej` files, so before each
later attempt the files the patch names are put back as they were before the first one (a tar
snapshot of them), as SWE-bench 5 resets its tree between attempts.
"""

from __future__ import annotations

import posixpath
import secrets
import shlex
from dataclasses import dataclass

from swe_aci.env.base import Environment
from swe_aci.env.diff import patch_paths

PATCH_TIMEOUT = 120.0
FUZZ = 5
COMPLAINT_LINES = 3
# (name, command): the name is what callers record (RAG's `apply_method`).
STRICT = (("git apply", "git apply --verbose"), ("git apply --recount", "git apply --recount"))
FUZZY = (
    ("git apply", "git apply --verbose"),
    ("git apply --reject", "git apply --verbose --reject"),
    (f"patch --fuzz={FUZZ}", f"patch --batch --fuzz={FUZZ} -p1 -i"),
)
# The files the patch names (NUL-separated in `$2/paths`, relative to the repository `$1`):
# saved before the first fuzzy attempt, put back before each later one.
SNAPSHOT = r"""
cd -- "$1" || exit 1
: > "$2/present"
while IFS= read -r -d '' path; do
    if [ -e "$path" ] || [ -L "$path" ]; then printf '%s\0' "$path" >> "$2/present"; fi
done < "$2/paths"
tar -cf "$2/snapshot.tar" --null --no-recursion -T "$2/present"
"""
RESTORE = r"""
cd -- "$1" || exit 1
while IFS= read -r -d '' path; do rm -rf -- "$path" "$path.rej" "$path.orig"; done < "$2/paths"
tar -xf "$2/snapshot.tar"
"""


@dataclass(frozen=True)
class PatchResult:
    """Whether the patch applied, by which method (a name of STRICT or FUZZY), and what the
    last command printed (its complaint when nothing applied)."""

    applied: bool
    method: str | None
    output: str

    def complaint(self) -> str:
        """The last lines of what the tools said, on one line."""
        lines = [line.strip() for line in self.output.splitlines() if line.strip()]
        return " | ".join(lines[-COMPLAINT_LINES:]) or "the patch did not apply"


def apply_patch(
    environment: Environment, patch: str, *, reverse: bool = False, fuzz: bool = False
) -> PatchResult:
    """Apply (or with `reverse`, take back) `patch` in the repository; never raises for a patch
    that does not apply."""
    work = f"/tmp/swe-aci-patch-{secrets.token_hex(8)}"
    patch_file = f"{work}/patch.diff"
    environment.write_file(patch_file, patch.encode("utf-8", "surrogateescape"))
    root = shlex.quote(environment.repo_path)
    quoted_work = shlex.quote(work)
    try:
        if fuzz:
            _write_paths(environment, work, patch)
            _script(environment, SNAPSHOT, root, quoted_work)
        output = ""
        for number, (name, command) in enumerate(FUZZY if fuzz else STRICT):
            if fuzz and number:
                _script(environment, RESTORE, root, quoted_work)
            direction = (" -R" if command.startswith("patch") else " --reverse") if reverse else ""
            result = environment.run(
                f"cd {root} && {command}{direction} {shlex.quote(patch_file)}",
                timeout=PATCH_TIMEOUT,
            )
            output = result.output
            if result.exit_code == 0 and not result.timed_out:
                return PatchResult(True, name, output)
        return PatchResult(False, None, output)
    finally:
        environment.run(f"rm -rf -- {quoted_work}", timeout=PATCH_TIMEOUT)


def _write_paths(environment: Environment, work: str, patch: str) -> None:
    """The repository-relative paths the patch names (never absolute or climbing out: neither
    git nor patch writes those), NUL-separated, for the snapshot."""
    safe = [
        path
        for path in patch_paths(patch)
        if not path.startswith("/") and ".." not in path.split("/") and "\0" not in path
    ]
    listing = b"".join(path.encode("utf-8", "surrogateescape") + b"\0" for path in safe)
    environment.write_file(posixpath.join(work, "paths"), listing)


def _script(environment: Environment, script: str, root: str, work: str) -> None:
    environment.run(f"bash -c {shlex.quote(script)} snapshot {root} {work}", timeout=PATCH_TIMEOUT)
