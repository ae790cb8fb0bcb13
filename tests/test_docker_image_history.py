"""A task row that runs in a prebuilt image (as the official SWE-bench rows do): the agent's
repository holds nothing after the base commit, whatever the image's repository holds (SWE-bench
strips it since 4.1): no later commit, no tag, no branch, no object only those reach."""

from __future__ import annotations

import io

import pytest

from env_helpers import skip_unavailable
from swe_aci.env.config import EnvConfig
from swe_aci.env.docker.environment import BASE_IMAGE
from swe_aci.env.factory import make_environment
from swe_aci.recipes import task_workspace
from swe_aci.tasks import Task

pytestmark = pytest.mark.docker
IMAGE = "swe-aci-test/later-history:latest"
# The image's repository: the base, then the fix on main with a tag, a branch and a stash.
DOCKERFILE = f"""
FROM {BASE_IMAGE}
ENV GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a \\
    GIT_COMMITTER_EMAIL=a@example.com
RUN git init -q -b main /testbed && cd /testbed \\
 && echo 'def add(a, b):\\n    return a - b' > calc.py && git add calc.py \\
 && git commit -qm base && git tag v0.9 \\
 && echo 'def add(a, b):\\n    return a + b' > calc.py && git commit -qam 'the fix' \\
 && git tag -a v1.0 -m 'release with the fix' && git branch later \\
 && echo scratch > calc.py && git stash -q && git checkout -q main
"""


@pytest.fixture(scope="module")
def image() -> dict[str, str]:
    skip_unavailable("docker")
    import docker

    client = docker.from_env()
    client.images.build(fileobj=io.BytesIO(DOCKERFILE.encode()), tag=IMAGE, rm=True)
    shas = client.containers.run(
        IMAGE, ["git", "-C", "/testbed", "rev-parse", "main~1", "main"], remove=True
    )
    base, fix = shas.decode().split()
    return {"base": base, "fix": fix}


def test_the_sandbox_repository_has_no_history_after_the_base(image: dict[str, str]) -> None:
    task = Task(
        instance_id="later__history-1",
        repo="later/history",
        problem_statement="add subtracts",
        base_commit=image["base"],
        image=IMAGE,
        repo_dir="/testbed",
    )
    environment = make_environment(task_workspace(task, EnvConfig(backend="docker")))
    try:
        assert environment.base_commit == image["base"]
        log = environment.run("git log --all --reflog --format='%H %s'").output.strip()
        assert log == f"{image['base']} base"
        for listing in ("git tag", "git stash list", "git for-each-ref"):  # branches too
            assert environment.run(listing).output.strip() == "", listing
        missing = environment.run(f"git cat-file -t {image['fix']}")
        assert missing.exit_code != 0 and "could not get object info" in missing.output
        assert "a - b" in environment.run("cat calc.py").output
        # the agent's own git still works at the base
        assert environment.run("git status --short && git rev-parse HEAD").exit_code == 0
    finally:
        environment.close()
