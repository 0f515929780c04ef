"""fork_imap: results in the items' order, from other processes, with errors raised and no pickling of
the function."""

from __future__ import annotations

import os
import sys

import pytest

from ecoagent.parallel import available_cores, fork_imap

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork workers are a Linux path")


def test_results_come_back_in_order_from_worker_processes() -> None:
    offset = 10  # a closure over a local: forked children inherit it, nothing is pickled

    def work(x: int) -> tuple[int, int]:
        return x * x + offset, os.getpid()

    out = list(fork_imap(work, list(range(12)), workers=2))
    assert [v for v, _ in out] == [x * x + 10 for x in range(12)]
    pids = {pid for _, pid in out}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def test_one_worker_runs_here() -> None:
    out = list(fork_imap(lambda x: (x, os.getpid()), [1, 2, 3], workers=1))
    assert out == [(1, os.getpid()), (2, os.getpid()), (3, os.getpid())]
    assert list(fork_imap(lambda x: x, [], workers=4)) == []


def test_a_failure_in_a_worker_is_raised_here() -> None:
    def work(x: int) -> int:
        if x == 3:
            raise ValueError(f"bad item {x}")
        return x

    with pytest.raises(ValueError, match="bad item 3"):
        list(fork_imap(work, [0, 1, 2, 3, 4], workers=2))
    assert list(fork_imap(lambda x: x + 1, [1, 2], workers=2)) == [2, 3]  # usable again afterwards


def test_items_marked_here_run_in_this_process_beside_the_workers() -> None:
    out = list(fork_imap(lambda x: (x, os.getpid()), list(range(6)), workers=2, here=lambda x: x % 3 == 0))
    assert [x for x, _ in out] == list(range(6))
    assert [pid == os.getpid() for _, pid in out] == [True, False, False, True, False, False]
    only_here = list(fork_imap(lambda x: os.getpid(), [1, 2], workers=2, here=lambda x: True))
    assert only_here == [os.getpid()] * 2


def test_available_cores_is_the_affinity_mask() -> None:
    assert available_cores() == len(os.sched_getaffinity(0))
