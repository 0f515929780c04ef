"""Interleaved timing: every function is timed on every query, and a slower one shows up slower."""

from __future__ import annotations

import time

from rated.evaluation.latency import time_interleaved


def test_time_interleaved_times_each_function_on_each_query() -> None:
    calls: list[tuple[str, int]] = []

    def fast(i: int, q: str) -> None:
        calls.append(("fast", i))

    def slow(i: int, q: str) -> None:
        calls.append(("slow", i))
        time.sleep(0.002)

    rows = time_interleaved([fast, slow], ["a", "b", "c", "d", "e", "f"])
    assert [r["n"] for r in rows] == [6, 6]
    assert rows[1]["median_ms"] > rows[0]["median_ms"] and rows[1]["mean_ms"] >= 2.0
    timed = calls[2 * 5 :]  # after the warm-up calls
    assert sorted(timed) == sorted([(n, i) for n in ("fast", "slow") for i in range(6)])
    assert timed[0][0] == "fast" and timed[2][0] == "slow"  # the first function rotates per query
