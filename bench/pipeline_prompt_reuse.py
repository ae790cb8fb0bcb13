"""Prompt tokens llama.cpp recomputes over a pipeline run: the slot's last prompt alone vs the
host-memory prompt cache looked up on every request (`model.local.prompt_cache_mib`).

    python bench/pipeline_prompt_reuse.py RUN.traj [RUN.traj ...] [--cache-mib 0,1024]

The pipeline's model calls (localize, reproduce, repair: rewrites and blocks of several targets)
are recorded in its trajectory, each step's `query` the messages sent. They are sent again in
their order, each trajectory to a fresh server per setting, with max_tokens=1 and no grammar;
llama.cpp's `timings` give the tokens recomputed (`prompt_n`, not served from a cache) and the
prompt processing time. With `prompt_cache_mib: 0` a prompt reuses only what it shares with the
one just before it; with a cache, also what it shares with any prompt computed earlier (a
rewrite of target A after a blocks prompt of target B).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from swe_aci.models.base import Message
from swe_aci.models.config import LocalConfig, LocalRuntimeConfig
from swe_aci.models.local import LocalModel
from swe_aci.trajectory.store import load_trajectory


def model_queries(trajectory: dict) -> list[list[Message]]:
    return [step["query"] for step in trajectory["trajectory"] if step.get("query")]


def replay(model_name: str, cache_mib: int, queries: list[list[Message]]) -> tuple[int, int, float]:
    """Tokens sent, tokens recomputed and prompt seconds of `queries` sent in order."""
    runtime = LocalRuntimeConfig(prompt_cache_mib=cache_mib)
    config = LocalConfig(name=model_name, max_output_tokens=1, grammar="", local=runtime)
    sent = recomputed = 0
    prompt_ms = 0.0
    with LocalModel(config, None) as model:
        backend = model.backend
        for messages in queries:
            response = backend.client.chat.completions.create(**backend.request(messages, None))
            timings = (response.model_extra or {}).get("timings") or {}
            recomputed += timings["prompt_n"]
            sent += timings["prompt_n"] + timings["cache_n"]
            prompt_ms += timings["prompt_ms"]
    return sent, recomputed, prompt_ms / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trajectories", nargs="+", type=Path)
    parser.add_argument("--cache-mib", default="0,1024", help="settings compared, comma-separated")
    parser.add_argument("--model", default="local", help="local model name (default: the 1.5B)")
    args = parser.parse_args()
    settings = [int(each) for each in args.cache_mib.split(",")]
    totals = {setting: [0, 0, 0.0] for setting in settings}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for path in args.trajectories:
        queries = model_queries(load_trajectory(path))
        for setting in settings:
            started = time.perf_counter()
            sent, recomputed, seconds = replay(args.model, setting, queries)
            for index, value in enumerate((sent, recomputed, seconds)):
                totals[setting][index] += value
            print(
                f"{path.name}: cache {setting} MiB: {len(queries)} prompts, {sent} tokens, "
                f"{recomputed} recomputed, {seconds:.1f} s of prompt processing "
                f"({time.perf_counter() - started:.0f} s in all)"
            )
    baseline = totals[settings[0]]
    print(f"\n{'cache MiB':>9} {'tokens':>8} {'recomputed':>10} {'prompt s':>9} {'vs first':>9}")
    for setting, (sent, recomputed, seconds) in totals.items():
        ratio = seconds / baseline[2] if baseline[2] else 0.0
        print(f"{setting:>9} {sent:>8} {recomputed:>10} {seconds:>9.1f} {ratio:>9.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
