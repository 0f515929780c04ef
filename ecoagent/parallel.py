"""Pure-Python work spread over the machine's cores by forked worker processes, results in order.

The simulation replays 10,000 steps per run in a Python loop (one policy call per step), so it holds the
GIL and uses one core however many there are. Its runs are independent and seeded, so they can go to
worker processes; forked ones inherit the policies, candidate lists and embeddings already built in the
parent, so nothing large is pickled on the way in, only each run's result on the way out.

Fork is only used where it is the platform's own (Linux): elsewhere, with one worker or one item, the
items run here in order. Workers must not use torch or log (a forked child of a threaded process can
find a lock held by a thread that did not follow it); the simulation does neither.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_WORK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None  # set in the parent, read in a forked child


def available_cores() -> int:
    """Cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def _call(index: int) -> Any:
    assert _WORK is not None  # set before the fork
    fn, items = _WORK
    return fn(items[index])


def fork_imap(
    fn: Callable[[Any], T],
    items: Sequence[Any],
    workers: int | None = None,
    here: Callable[[Any], bool] | None = None,
) -> Iterator[T]:
    """``fn(item)`` for each item, yielded in the items' order, on up to ``workers`` forked processes.

    Args:
        fn: any callable (a closure is fine: children inherit it, it is never pickled); its result is
            pickled back to the parent.
        items: the work; each item is passed to ``fn`` in a worker.
        workers: processes (default: ``available_cores()``); 1 runs everything in this process.
        here: items it is true for run in this process, while the workers take the others: work that
            needs a library a forked child cannot use (polars' and torch's thread pools were started in
            the parent and do not exist in the child, where their first parallel call waits forever).

    Raises:
        whatever ``fn`` raised, for the first item that failed; ``BrokenProcessPool`` when a worker died
        (killed for memory, say) instead of waiting for it forever.
    """
    workers = available_cores() if workers is None else workers
    away = [i for i, item in enumerate(items) if here is None or not here(item)]
    workers = min(workers, len(away))
    if workers < 1 or (workers == 1 and len(away) == len(items)) or "fork" not in mp.get_all_start_methods():
        for item in items:
            yield fn(item)
        return
    global _WORK
    if _WORK is not None:
        raise RuntimeError("fork_imap does not nest")
    _WORK = (fn, items)
    try:
        with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
            futures = {i: pool.submit(_call, i) for i in away}  # every worker is forked here, at once
            _WORK = None
            done = {i: fn(item) for i, item in enumerate(items) if i not in futures}
            for i in range(len(items)):
                yield done.pop(i) if i in done else futures[i].result()
    finally:
        _WORK = None
