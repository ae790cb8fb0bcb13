"""Benchmark the local model on this machine: one agent episode's worth of turns per model.

For each model: server start-up time and resident memory, then a cold first turn on a typical
agent prompt (system + demonstration + issue, ~6k tokens), warm turns that append one reply and
one observation (only the tail of the prompt changes, as in an episode), and the last prompt again
with the server's prompt cache off. Each turn reports wall time, prompt processing (tokens, ms,
tokens/s, tokens reused from the cache) and generation (tokens, tokens/s), read from llama.cpp's
`timings`. Requests go through the same OpenAI-compatible backend the agent uses, grammar on.

    python bench/local_model.py                          # both models, 3 warm turns
    python bench/local_model.py --models qwen2.5-coder-0.5b --turns 1 --json out.json
"""

from __future__ import annotations

import argparse
import inspect
import json
import textwrap
import time
from pathlib import Path
from typing import Any

from swe_aci.agent.parsing import THOUGHT_ACTION
from swe_aci.models.config import LocalConfig, LocalRuntimeConfig
from swe_aci.models.local import LocalModel

SYSTEM = textwrap.dedent(
    """\
    You are working on a code repository through a special interface laid on top of a Unix
    shell. Your job is to resolve a software issue in that repository.

    The interface includes a file viewer: it shows 100 lines of one file at a time, with line
    numbers, and remembers which file is open and where. Besides its own commands below, you can
    run ordinary non-interactive bash commands (ls, cat, grep, python, pytest...).

    COMMANDS:
    open <path> [<line_number>] - opens the file at path; with a line number, shows that line
    goto <line_number> - moves the window to show line_number
    scroll_down - moves the window down 98 lines
    scroll_up - moves the window up 98 lines
    create <filename> - creates and opens a new file
    edit <start_line>:<end_line>
    <replacement_text>
    end_of_edit - replaces lines start_line through end_line of the open file
    search_dir <search_term> [<dir>] - searches for search_term in all files in dir
    search_file <search_term> [<file>] - searches for search_term in file
    find_file <file_name> [<dir>] - finds all files with the given name in dir
    submit - submits your current code and terminates the session

    RESPONSE FORMAT:
    Each reply has two parts. First a DISCUSSION: a few sentences on what you know so far and
    what you will do next. Then exactly one command, in a fenced code block. For example:

    DISCUSSION
    I want to know how the project is laid out, so I will list the top-level directory.
    ```
    ls -a
    ```
    """
)

ISSUE = textwrap.dedent(
    """\
    Resolve the following issue in the repository you are working on.

    ISSUE:
    JSONEncoder ignores `sort_keys` for nested dictionaries when `indent` is set
    Encoding {"b": {"z": 1, "a": 2}, "a": 0} with sort_keys=True and indent=2 sorts the outer
    keys but the inner dictionary keeps its insertion order in our fork. Expected the inner keys
    sorted too, as with indent=None.

    Tips: reproduce the problem first, fix it, run the reproduction again, remove scratch files,
    then submit.

    (Open file: n/a)
    (Current directory: /repo)
    bash-$"""
)


def viewer(path: str, lines: list[str], first: int, window: int = 100) -> str:
    """A file window in the ACI viewer's layout."""
    shown = lines[first - 1 : first - 1 + window]
    above, below = first - 1, max(len(lines) - (first - 1 + window), 0)
    out = [f"[File: {path} ({len(lines)} lines total)]"]
    if above:
        out.append(f"({above} more lines above)")
    out += [f"{first + i}:{text}" for i, text in enumerate(shown)]
    if below:
        out.append(f"({below} more lines below)")
    return "\n".join(out)


def step(thought: str, action: str, observation: str, open_file: str) -> str:
    reply = f"DISCUSSION\n{thought}\n```\n{action}\n```"
    suffix = f"(Open file: {open_file})\n(Current directory: /repo)\nbash-$"
    return f"{reply}\n{observation}\n{suffix}"


def agent_prompt() -> tuple[list[dict[str, str]], list[str]]:
    """(messages of a first turn, observations for later turns), from real stdlib source."""
    import json.decoder
    import json.encoder

    encoder = inspect.getsource(json.encoder).splitlines()
    decoder = inspect.getsource(json.decoder).splitlines()
    path_e, path_d = "/demo/json/encoder.py", "/demo/json/decoder.py"
    demo_steps = [
        step("First I'll find the decoder.", "find_file decoder.py", f"Found 1 matches:\n{path_d}", "n/a"),
        step("Let me open it at the scanner.", f"open {path_d} 300", viewer(path_d, decoder, 254), path_d),
        step("The object parser is above; let me look.", "goto 150", viewer(path_d, decoder, 135), path_d),
        step("Where is the error raised?", "scroll_up", viewer(path_d, decoder, 37), path_d),
        step("I will fix the error message on line 160.", "edit 160:160\n            pass\nend_of_edit",
             "File updated. Please review the changes.", path_d),
        step("Now let me view the encoder for comparison.", f"open {path_e} 200", viewer(path_e, encoder, 185), path_e),
        step("The change is done; submitting.", "submit", "", "n/a"),
    ]  # fmt: skip
    demo = "Here is a demonstration of how to solve a task:\n\n" + "\n".join(demo_steps)
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": demo},
        {"role": "user", "content": ISSUE},
    ]
    observations = [
        viewer(path_e, encoder, 1),
        viewer(path_e, encoder, 99),
        viewer(path_e, encoder, 300),
        viewer(path_d, decoder, 1),
    ]
    return messages, observations


def turn(model: LocalModel, messages: list[dict[str, str]], cache: bool) -> dict[str, Any]:
    """One request through the agent's backend; llama.cpp's timings plus the wall time."""
    backend = model.backend
    request = backend.request(messages, None)
    request["extra_body"] = {**request.get("extra_body", {}), "cache_prompt": cache}
    started = time.perf_counter()
    response = backend.client.chat.completions.create(**request)
    wall = time.perf_counter() - started
    timings = (response.model_extra or {}).get("timings", {})
    return {
        "wall_s": round(wall, 2),
        "prompt_tokens": timings.get("prompt_n", 0) + timings.get("cache_n", 0),
        "cached_tokens": timings.get("cache_n", 0),
        "processed_tokens": timings.get("prompt_n", 0),
        "prompt_ms": round(timings.get("prompt_ms", 0.0)),
        "prompt_tok_s": round(timings.get("prompt_per_second", 0.0), 1),
        "generated_tokens": timings.get("predicted_n", 0),
        "generation_tok_s": round(timings.get("predicted_per_second", 0.0), 1),
        "finish_reason": response.choices[0].finish_reason,
        "reply": response.choices[0].message.content or "",
    }


def rss_mib(pid: int) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {key: round(int(fields[key].split()[0]) / 1024) for key in ("VmRSS", "VmHWM")}


def bench_model(name: str, turns: int, max_tokens: int, ctx: int) -> dict[str, Any]:
    runtime = LocalRuntimeConfig(ctx_size=ctx)
    config = LocalConfig(name=f"local/{name}", max_output_tokens=max_tokens, local=runtime)
    started = time.perf_counter()
    with LocalModel(config, THOUGHT_ACTION) as model:
        startup = time.perf_counter() - started
        assert model.server is not None and model.server.process is not None
        messages, observations = agent_prompt()
        results = [{"turn": "1 (cold)", **turn(model, messages, cache=True)}]
        for index in range(turns):
            reply = results[-1]["reply"]
            observation = observations[index % len(observations)]
            suffix = "(Open file: /demo/json/encoder.py)\n(Current directory: /repo)\nbash-$"
            messages = [
                *messages,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"{observation}\n{suffix}"},
            ]
            results.append({"turn": f"{index + 2} (warm)", **turn(model, messages, cache=True)})
        results.append({"turn": f"{turns + 1} (no cache)", **turn(model, messages, cache=False)})
        memory = rss_mib(model.server.process.pid)
    return {"model": name, "ctx": ctx, "startup_s": round(startup, 2), **memory, "turns": results}


def print_report(report: dict[str, Any]) -> None:
    print(
        f"\n{report['model']}: start {report['startup_s']} s, ctx {report['ctx']}, "
        f"RSS {report['VmRSS']} MiB (peak {report['VmHWM']} MiB)"
    )
    header = "turn            wall_s  prompt  cached  pp_ms   pp_tok/s  gen  gen_tok/s  finish"
    print(header)
    for row in report["turns"]:
        print(
            f"{row['turn']:<15} {row['wall_s']:>6}  {row['prompt_tokens']:>6}  "
            f"{row['cached_tokens']:>6}  {row['prompt_ms']:>6}  {row['prompt_tok_s']:>8}  "
            f"{row['generated_tokens']:>3}  {row['generation_tok_s']:>9}  {row['finish_reason']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
    parser.add_argument("--turns", type=int, default=3, help="warm turns after the cold one")
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--ctx", type=int, default=LocalRuntimeConfig().ctx_size)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    reports = [bench_model(name, args.turns, args.max_tokens, args.ctx) for name in args.models]
    for report in reports:
        print_report(report)
    if args.json:
        args.json.write_text(json.dumps(reports, indent=2))


if __name__ == "__main__":
    main()
