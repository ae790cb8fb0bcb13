"""Runs commands in a real sandbox and prints what they gave, as JSON: the part of a test that
must run as another user (see `unprivileged.run_probe`).

    python3 sandbox_probe.py '{"repo": "...", "config": {...}, "commands": ["...", ...]}'

prints `[[exit_code, output], ...]`, one pair per command.
"""

from __future__ import annotations

import json
import sys

from swe_aci.env import EnvConfig, Workspace, make_environment


def main() -> None:
    request = json.loads(sys.argv[1])
    env = make_environment(Workspace(EnvConfig(**request["config"]), request["repo"]))
    try:
        results = []
        for command in request["commands"]:
            result = env.run(command, timeout=request.get("timeout", 25.0))
            results.append([result.exit_code, result.output])
    finally:
        env.close()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
