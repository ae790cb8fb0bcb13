"""Record the bundled trajectories by playing hand-written replies through the real interface.

    python scripts/record_examples.py [OUTPUT ...]

writes examples/demo/demo.traj (the demonstration shown to models by configs/default.yaml),
examples/demo/demo_<ablation>.traj (the same fix through the interface of
configs/ablations/<ablation>.yaml, for the ablations that change the commands) and
examples/wordcount.traj (played back by examples/run_example.sh), examples/wordcount_str_replace.traj
(the same fix through configs/tools/str_replace.yaml); with OUTPUT names (e.g.
`demo/demo_no_edit.traj`) only those. Each episode runs in the bwrap
sandbox, so the paths it shows are stable (`/units`, `/wordcount`) rather than temporary ones.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import yaml

from swe_aci.agent.demonstrations import demonstration_from
from swe_aci.cli.common import read_issue, resolved_repo
from swe_aci.env.config import Workspace
from swe_aci.episode import load_config, run_episode
from swe_aci.trajectory.store import load_trajectory

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
ABLATION_DEMOS = ("no_search", "iterative_search", "no_edit")
RECORDINGS = [
    # (project, issue, replies, output trajectory, config: None is the default)
    ("demo/units", "demo/units.issue.md", "demo/units.replies.yaml", "demo/demo.traj", None),
    ("wordcount", "wordcount.issue.md", "wordcount.replies.yaml", "wordcount.traj", None),
    (
        "wordcount",
        "wordcount.issue.md",
        "wordcount.str_replace.replies.yaml",
        "wordcount_str_replace.traj",
        ROOT / "configs" / "tools" / "str_replace.yaml",
    ),
    *(
        (
            "demo/units",
            "demo/units.issue.md",
            f"demo/units.{name}.replies.yaml",
            f"demo/demo_{name}.traj",
            ROOT / "configs" / "ablations" / f"{name}.yaml",
        )
        for name in ABLATION_DEMOS
    ),
]


def record(project: str, issue: str, replies: str, output: str, config_path: Path | None) -> None:
    script = yaml.safe_load((EXAMPLES / replies).read_text())
    config = load_config(
        config_path, ["agent.demonstrations=[]", "model.name=scripted", "env.backend=bwrap"]
    )
    config.model.script = script
    problem = read_issue(str(EXAMPLES / issue))
    instance_id = Path(output).stem
    with (
        tempfile.TemporaryDirectory() as scratch,
        resolved_repo(str(EXAMPLES / project), True) as repo,
    ):
        result = run_episode(
            config,
            Workspace(config.env, repo),
            problem,
            instance_id=instance_id,
            output_dir=Path(scratch),
        )
        if result.exit_status != "submitted":
            sys.exit(f"{project}: the recording ended with {result.exit_status}, not submitted")
        trajectory = demonstration_from(load_trajectory(result.trajectory_path))
    target = EXAMPLES / output
    target.write_text(json.dumps(trajectory, indent=2, ensure_ascii=False) + "\n")
    print(f"recorded {target.relative_to(ROOT)}: {len(trajectory['trajectory'])} steps")


def main() -> None:
    wanted = set(sys.argv[1:])
    for recording in RECORDINGS:
        if not wanted or recording[3] in wanted:
            record(*recording)


if __name__ == "__main__":
    main()
