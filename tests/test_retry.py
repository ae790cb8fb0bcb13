"""The one retry loop (`swe_aci/retry.py`) under the model backends and the GitHub client."""

from __future__ import annotations

import pytest

from swe_aci.retry import retrying


class Flaky:
    """Raises `failures` times, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError(f"failure {self.calls}")
        return "answer"


def test_a_transient_failure_is_retried_after_the_wait_asked() -> None:
    slept: list[float] = []
    call = Flaky(2)
    result = retrying(call, lambda error, attempt: attempt * 1.5, attempts=3, sleep=slept.append)
    assert (result, call.calls, slept) == ("answer", 3, [1.5, 3.0])


def test_the_last_error_is_raised_once_the_attempts_are_spent() -> None:
    slept: list[float] = []
    call = Flaky(5)
    with pytest.raises(ConnectionError, match="failure 3"):
        retrying(call, lambda error, attempt: 0.5, attempts=3, sleep=slept.append)
    assert (call.calls, slept) == (3, [0.5, 0.5])


def test_a_final_failure_is_not_retried() -> None:
    call = Flaky(5)
    with pytest.raises(ConnectionError, match="failure 1"):
        retrying(call, lambda error, attempt: None, attempts=3, sleep=pytest.fail)
    assert call.calls == 1
