"""How fast the inspector's pages are on a large generated run, over its real HTTP server.

The run: N instances (default 500) of a batch with results.json, preds.json and an evaluation
report, each with a trajectory of 20 steps of 5 KB observations, plus one instance of 150 steps
with 100 KB observations (written by the real trajectory writer, so long observations are stored
once, by reference).

Measured (median of --repeat requests, each page rendered afresh):
- the run page, against the baseline of reading and parsing the run's summary files raw
  (results.json + report.json), and against opening every trajectory (what a run page built
  from the trajectories would cost);
- the 150-step instance page on first load (a fresh server, nothing cached) and again, against
  the baseline of parsing its .traj raw; one observation loaded on demand.

    PYTHONPATH=src python3 bench/inspector.py [--instances 500] [--repeat 5]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swe_aci.inspector.runs import discover
from swe_aci.inspector.server import make_server
from swe_aci.inspector.site import Site
from swe_aci.trajectory.store import TrajectoryWriter

PATCH = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
BIG = "big__instance-150"


def observation(size: int, seed: int) -> str:
    line = f"{seed:08d} " + "x" * 71 + "\n"
    return (line * (size // len(line) + 1))[:size]


def step(number: int, text: str) -> dict[str, Any]:
    return {
        "thought": f"step {number}",
        "action": f"cat file_{number}.py",
        "observation": text,
        "response": f"step {number}\n```\ncat file_{number}.py\n```",
        "state": {"open_file": "n/a", "working_dir": "/repo"},
        "execution_time": 0.01,
        "model_latency": 0.8,
        "input_tokens": 1000,
        "output_tokens": 20,
        "cached_tokens": 0,
        "cost": 0.001,
        "query": [],
    }


def info(steps: int) -> dict[str, Any]:
    return {
        "exit_status": "submitted",
        "submission": PATCH,
        "model_stats": {"instance_cost": 0.1, "tokens_sent": 1000 * steps, "api_calls": steps},
        "model_name": "scripted",
        "elapsed_time": 10.0,
    }


def generate(root: Path, instances: int) -> Path:
    run = root / "run"
    results, preds, outcomes = {}, {}, {}
    for number in range(instances):
        instance_id = f"demo__calc-{number:04d}"
        steps = [step(i, observation(5000, i)) for i in range(20)]
        path = run / instance_id / f"{instance_id}.traj"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"trajectory": steps, "history": [], "info": info(20)}))
        results[instance_id] = {
            "instance_id": instance_id,
            "exit_status": "submitted",
            "model_patch": PATCH,
            "model_name": "scripted",
            "cost": 0.1,
            "api_calls": 20,
            "steps": 20,
            "elapsed": 10.0,
        }
        preds[instance_id] = {"instance_id": instance_id, "model_patch": PATCH}
        outcomes[instance_id] = {"outcome": "resolved" if number % 3 else "unresolved"}
    writer = TrajectoryWriter(run / BIG / f"{BIG}.traj")
    writer.start(
        {"instance_id": BIG, "problem_statement": "p"}, [{"role": "user", "content": "p"}], {}
    )
    for number in range(150):
        text = observation(100_000, number)
        messages = [
            {"role": "assistant", "content": f"step {number}"},
            {"role": "user", "content": text},
        ]
        writer.append(messages, step(number, text), {})
    writer.finish(info(150))
    (run / "results.json").write_text(json.dumps(results))
    (run / "preds.json").write_text(json.dumps(preds))
    (run / "evaluation").mkdir()
    report = {"resolved_ids": [k for k, v in outcomes.items() if v["outcome"] == "resolved"]}
    (run / "evaluation" / "report.json").write_text(json.dumps({**report, "instances": outcomes}))
    return run


def timed(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


class Served:
    def __init__(self, run: Path) -> None:
        self.server = make_server(Site(discover([run])), "127.0.0.1", 0)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def get(self, path: str) -> bytes:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.server_address[1])
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        assert response.status == 200, (path, response.status)
        connection.close()
        return body

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        run = generate(Path(temporary), args.instances)
        big = run / BIG / f"{BIG}.traj"
        served = Served(run)
        try:
            raw_summary = timed(
                lambda: (
                    json.loads((run / "results.json").read_text()),
                    json.loads((run / "evaluation" / "report.json").read_text()),
                ),
                args.repeat,
            )
            every_trajectory = timed(
                lambda: [json.loads(p.read_text()) for p in run.glob("*/*.traj")], 1
            )
            run_page = timed(lambda: served.get("/run/0/index.html"), args.repeat)
            raw_traj = timed(lambda: json.loads(big.read_text()), args.repeat)
            first_loads = []
            for _ in range(args.repeat):
                fresh = Served(run)
                first_loads.append(timed(lambda s=fresh: s.get(f"/run/0/instance/{BIG}.html"), 1))
                fresh.close()
            instance_first = statistics.median(first_loads)
            instance_again = timed(lambda: served.get(f"/run/0/instance/{BIG}.html"), args.repeat)
            one_observation = timed(
                lambda: served.get(f"/run/0/instance/{BIG}/observation/75.txt"), args.repeat
            )
            page_size = len(served.get(f"/run/0/instance/{BIG}.html"))
        finally:
            served.close()
    print(f"run of {args.instances + 1} instances; instance of 150 steps x 100 KB observations")
    print(f"{'measure':<52}{'seconds':>10}{'ratio':>10}")
    rows = [
        ("baseline: parse results.json + report.json raw", raw_summary, None),
        ("run page (HTTP, rendered)", run_page, run_page / raw_summary),
        (
            "  for scale: parse every trajectory raw",
            every_trajectory,
            every_trajectory / raw_summary,
        ),
        ("baseline: parse the 150-step .traj raw", raw_traj, None),
        ("instance page, first load (fresh server)", instance_first, instance_first / raw_traj),
        ("instance page, again", instance_again, instance_again / raw_traj),
        ("one 100 KB observation on demand", one_observation, one_observation / raw_traj),
    ]
    for name, seconds, ratio in rows:
        shown = "" if ratio is None else f"{ratio:.1f}x"
        print(f"{name:<52}{seconds:>10.3f}{shown:>10}")
    print(f"instance page size: {page_size / 1024:.0f} KB (observations: previews only)")


if __name__ == "__main__":
    main()
