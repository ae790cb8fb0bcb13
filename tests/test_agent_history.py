"""History processors: last-n observations (paper-era-behaviour 5) and the cache-friendly mode."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from swe_aci.agent.history import HistoryConfig, process_history
from swe_aci.models.base import Message


def conversation(steps: int) -> list[Message]:
    """system, demo, instance, then `steps` action/observation pairs (3-line suffix each)."""
    history: list[Message] = [
        {"role": "system", "content": "sys\nprompt", "message_type": "system_prompt"},
        {"role": "user", "content": "demo", "is_demo": True, "message_type": "demonstration"},
        {"role": "user", "content": "issue\ntext", "message_type": "instance"},
    ]
    for step in range(1, steps + 1):
        history.append({"role": "assistant", "content": f"act {step}", "message_type": "action"})
        history.append(
            {
                "role": "user",
                "content": f"out {step}\nline\n(Open file: n/a)\n(Current directory: /r)\nbash-$",
                "message_type": "observation",
            }
        )
    return history


def observations(query: list[Message]) -> list[str]:
    return [m["content"] for m in query[3:] if m["role"] == "user"]


def test_last_five_after_step_seven() -> None:
    history = conversation(7)
    query = process_history(history, HistoryConfig(n=5))
    # instance kept, observations of steps 1-2 elided, 3-7 kept
    assert query[2]["content"] == "issue\ntext"
    assert observations(query)[:2] == ["Old output omitted (5 lines)"] * 2
    assert [o.split("\n")[0] for o in observations(query)[2:]] == [f"out {s}" for s in range(3, 8)]
    # assistant turns, system and demonstration are never elided; roles and positions kept
    assert [m["content"] for m in query if m["role"] == "assistant"] == [
        f"act {s}" for s in range(1, 8)
    ]
    assert query[:2] == [
        {"role": "system", "content": "sys\nprompt"},
        {"role": "user", "content": "demo"},
    ]
    assert [m["role"] for m in query] == [m["role"] for m in history]


def test_nothing_elided_until_more_than_n_observations() -> None:
    history = conversation(5)
    assert all("omitted" not in o for o in observations(process_history(history, HistoryConfig())))
    assert "omitted" in observations(process_history(conversation(6), HistoryConfig()))[0]


def test_stored_history_is_never_modified_and_bookkeeping_keys_dropped() -> None:
    history = conversation(9)
    before = [dict(m) for m in history]
    query = process_history(history, HistoryConfig(n=2))
    assert history == before
    assert all(set(m) <= {"role", "content"} for m in query)


def test_full_history_keeps_everything() -> None:
    history = conversation(12)
    query = process_history(history, HistoryConfig(type="full"))
    assert [m["content"] for m in query] == [m["content"] for m in history]


def test_placeholder_counts_lines_of_the_whole_message() -> None:
    history = conversation(2)
    history[4]["content"] = (
        "Your command ran successfully and did not produce any output.\n(a)\n(b)\nbash-$"
    )
    query = process_history(history, HistoryConfig(n=1))
    assert query[4]["content"] == "Old output omitted (4 lines)"


@pytest.mark.parametrize(("n", "k"), [(5, 3), (2, 4), (1, 2)])
def test_cache_friendly_mode_keeps_prefix_identical_within_a_block(n: int, k: int) -> None:
    config = HistoryConfig(n=n, collapse_every=k)
    queries = [process_history(conversation(steps), config) for steps in range(0, 30)]
    changes = 0
    for steps, (previous, current) in enumerate(itertools.pairwise(queries)):
        if current[: len(previous)] != previous:
            changes += 1
            # only when the count of instance + observations reaches a multiple of k
            assert (steps + 2) % k == 0
    # the prefix changes at most once every k steps
    assert changes <= 30 // k
    for steps, query in enumerate(queries):
        kept = sum(1 for o in observations(query) if "omitted" not in o)
        if steps >= n + k:
            assert n <= kept <= n + k - 1
    # with k = 1 the prefix would change at nearly every step
    plain = [process_history(conversation(s), HistoryConfig(n=n)) for s in range(0, 30)]
    plain_changes = sum(1 for a, b in itertools.pairwise(plain) if b[: len(a)] != a)
    assert plain_changes > changes


def test_cache_breakpoints_on_instance_and_last_observations() -> None:
    history = conversation(6)
    query = process_history(history, HistoryConfig(cache_breakpoints=2))
    marked = [i for i, m in enumerate(query) if m.get("cache_breakpoint")]
    assert marked == [2, len(query) - 3, len(query) - 1]
    assert history[2].get("cache_breakpoint") is None
    unmarked = process_history(history, HistoryConfig())
    assert not any(m.get("cache_breakpoint") for m in unmarked)


def test_history_config_rejects_bad_values() -> None:
    with pytest.raises(ValidationError):
        HistoryConfig(n=0)
    with pytest.raises(ValidationError):
        HistoryConfig(cache_breakpoints=4)
    with pytest.raises(ValidationError):
        HistoryConfig(type="full", collapse_every=3)
