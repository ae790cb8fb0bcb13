"""Prompt tokens llama.cpp recomputes per turn: collapsing every step vs every 5 steps, same conversations.

    python bench/prompt_cache.py RUN.traj [RUN.traj ...]
    python bench/prompt_cache.py /tmp/runs/run1/run1/run1.traj --modes normal,block --model local

For each recorded trajectory, the growing stored history is replayed: before action i the history
holds the system prompt, demonstration, issue and the first i-1 (action, observation) pairs, and
each mode builds its query from it with `process_history`, exactly as the agent would. Modes:
`normal` (last 5 observations, collapse_every=1, the paper's), `block` (collapse_every=5, as in
configs/local_agent.yaml) and `full` (nothing collapsed). The queries of one mode are sent in order to a
fresh local llama.cpp server (a new server per trajectory and mode, so no mode can reuse another's
cache, including llama.cpp's RAM prompt cache) with max_tokens=1 and no grammar; llama.cpp's
`timings` give the tokens recomputed (`prompt_n`, not served from the cache) and the prompt
processing time. Requeries after format errors are not part of the stored history and are not sent.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from swe_aci.agent.history import HistoryConfig, process_history
from swe_aci.models.base import Message
from swe_aci.models.config import LocalConfig
from swe_aci.models.local import LocalModel
from swe_aci.trajectory.store import load_trajectory

MODES = {
    "normal": HistoryConfig(n=5, collapse_every=1),
    "block": HistoryConfig(n=5, collapse_every=5),
    "full": HistoryConfig(type="full"),
}


@dataclass
class Turn:
    sent: int
    recomputed: int
    prompt_ms: float


def growing_histories(history: list[Message]) -> list[list[Message]]:
    """The stored history as it stood before each recorded action."""
    kinds = [message.get("message_type") for message in history]
    start = kinds.index("instance") + 1
    actions = [index for index, kind in enumerate(kinds) if kind == "action"]
    return [history[:start], *(history[: index + 2] for index in actions[:-1])]


def check_rebuild(trajectory: dict[str, Any], histories: list[list[Message]]) -> str:
    """How many recorded queries `process_history` rebuilds exactly (those without requeries)."""
    config = HistoryConfig(**trajectory["config"]["agent"]["history"])
    recorded = [step["query"] for step in trajectory["trajectory"] if step.get("query")]
    same = sum(
        process_history(history, config) == query
        for history, query in zip(histories, recorded, strict=False)
    )
    return f"{same} of {min(len(histories), len(recorded))} recorded queries rebuilt exactly"


def replay(model_name: str, queries: list[list[Message]]) -> list[Turn]:
    """Send the queries in order to a fresh server; llama.cpp's timings for each."""
    config = LocalConfig(name=model_name, max_output_tokens=1, grammar="")
    turns = []
    with LocalModel(config, None) as model:
        backend = model.backend
        for messages in queries:
            request = backend.request(messages, None)
            response = backend.client.chat.completions.create(**request)
            timings = (response.model_extra or {}).get("timings") or {}
            recomputed = timings["prompt_n"]
            turns.append(
                Turn(
                    sent=recomputed + timings["cache_n"],
                    recomputed=recomputed,
                    prompt_ms=round(timings["prompt_ms"], 1),
                )
            )
    return turns


def summary(turns: list[Turn]) -> dict[str, float]:
    later = turns[1:] or turns
    return {
        "turns": len(turns),
        "sent": sum(t.sent for t in turns),
        "recomputed": sum(t.recomputed for t in turns),
        "prompt_s": round(sum(t.prompt_ms for t in turns) / 1000, 1),
        "first_turn_recomputed": turns[0].recomputed,
        "later_recomputed_per_turn": round(statistics.mean(t.recomputed for t in later)),
        "later_prompt_s_per_turn": round(statistics.mean(t.prompt_ms for t in later) / 1000, 2),
        "later_sent_per_turn": round(statistics.mean(t.sent for t in later)),
    }


def print_report(results: dict[str, list[Turn]]) -> None:
    rows = {mode: summary(turns) for mode, turns in results.items()}
    print(
        f"\n{'mode':<7} {'turns':>5} {'sent':>8} {'recomputed':>10} {'pp s':>7}   after the first "
        f"turn, per turn: {'sent':>6} {'recomputed':>10} {'pp s':>6}"
    )
    for mode, row in rows.items():
        print(
            f"{mode:<7} {row['turns']:>5} {row['sent']:>8} {row['recomputed']:>10} "
            f"{row['prompt_s']:>7}   {'':>30}{row['later_sent_per_turn']:>6} "
            f"{row['later_recomputed_per_turn']:>10} {row['later_prompt_s_per_turn']:>6}"
        )
    if "normal" in rows and "block" in rows:
        normal, block = rows["normal"], rows["block"]
        for key, label in (("recomputed", "tokens recomputed"), ("prompt_s", "prompt time")):
            saving = 1 - block[key] / normal[key]
            print(f"block vs normal, {label}: {saving:.0%} less ({block[key]} vs {normal[key]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trajectories", nargs="+", type=Path)
    parser.add_argument("--modes", default="normal,block,full", help="comma-separated")
    parser.add_argument("--model", default="local", help="local model name (default: the 1.5B)")
    parser.add_argument("--max-turns", type=int, help="replay only the first turns of each")
    parser.add_argument("--json", type=Path, help="also write the per-turn figures here")
    args = parser.parse_args()
    modes = args.modes.split(",")
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown mode(s): {', '.join(sorted(unknown))}; known: {', '.join(MODES)}")
    results: dict[str, list[Turn]] = {mode: [] for mode in modes}
    for path in args.trajectories:
        trajectory = load_trajectory(path)  # queries stored as references are resolved
        histories = growing_histories(trajectory["history"])[: args.max_turns]
        print(f"{path}: {len(histories)} turns; {check_rebuild(trajectory, histories)}")
        for mode in modes:
            started = time.perf_counter()
            turns = replay(args.model, [process_history(h, MODES[mode]) for h in histories])
            results[mode] += turns
            recomputed = " ".join(str(t.recomputed) for t in turns)
            print(f"  {mode}: {time.perf_counter() - started:.0f} s; recomputed: {recomputed}")
    print_report(results)
    if args.json:
        args.json.write_text(
            json.dumps({mode: [asdict(t) for t in turns] for mode, turns in results.items()})
        )


if __name__ == "__main__":
    main()
