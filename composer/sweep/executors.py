"""Where the tasks of a sweep or a batch run: this process, local processes, or Dask.

Every executor maps a module-level function over small picklable tasks and
yields ``(task, result, exception)`` as tasks complete, in completion order:

- :class:`InlineExecutor`: one after the other in this process (tests, hooks).
- :class:`LocalExecutor`: a pool of worker processes on this machine (the
  default, one per core).  Workers start from a fork server that has imported
  mbcompose once.  If a worker process dies, the pool is restarted and the
  unfinished tasks are submitted again (at most ``MAX_RESTARTS`` times).
- :class:`DaskExecutor`: ``dask.distributed`` (the ``dask`` extra): a scheduler
  address, or a ``LocalCluster`` of worker processes.  One task per variant;
  when a worker dies, Dask reschedules its tasks on the others.

Executors are context managers (nesting: the outermost ``with`` owns the
workers); closing the generator early (e.g. on Ctrl-C) cancels the tasks not
started yet.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterable, Iterator

log = logging.getLogger(__name__)

MAX_RESTARTS = 3
PRELOAD = ["mbcompose.composer.sweep.task", "mbcompose.composer.pipeline"]

Outcome = tuple[object, object, "BaseException | None"]


def default_workers() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _Reentrant:
    """Context management that nests: resources are made on the outermost enter
    and released on the outermost exit, so callers may share one executor
    (``with ex: run_sweep(a, ex); run_sweep(b, ex)``) and ``run_sweep`` may enter it again."""

    _depth = 0

    def __enter__(self):
        if self._depth == 0:
            self._start()
        self._depth += 1
        return self

    def __exit__(self, *exc):
        self._depth -= 1
        if self._depth == 0:
            self._stop()
        return False

    def _start(self) -> None:
        pass

    def _stop(self) -> None:
        pass


class InlineExecutor(_Reentrant):
    """Run each task in this process, in order."""

    workers = 1
    kind = "inline"

    def map_unordered(self, fn: Callable, tasks: Iterable) -> Iterator[Outcome]:
        for task in tasks:
            try:
                yield task, fn(task), None
            except Exception as exc:  # reported as the task's outcome
                yield task, None, exc


class LocalExecutor(_Reentrant):
    """A process pool on this machine (see module docstring)."""

    kind = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or default_workers()
        self._pool = None

    def _new_pool(self) -> ProcessPoolExecutor:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if "forkserver" in methods:
            ctx.set_forkserver_preload(PRELOAD)
        from ..logs import current_levels, log_like_the_parent

        return ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=log_like_the_parent,
                                   initargs=(current_levels(),))

    def _start(self) -> None:
        self._pool = self._new_pool()

    def _stop(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None

    def map_unordered(self, fn: Callable, tasks: Iterable) -> Iterator[Outcome]:
        pending, restarts = list(tasks), 0
        while pending:
            futures = {self._pool.submit(fn, t): t for t in pending}
            reported: set = set()
            try:
                yield from self._drain(futures, reported)
                return
            except BrokenProcessPool:
                pending = [t for f, t in futures.items() if f not in reported]
                restarts += 1
                log.warning("a worker process died; %d tasks left, restart %d", len(pending), restarts)
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
                if restarts > MAX_RESTARTS:
                    for t in pending:
                        yield t, None, RuntimeError("worker process died (gave up after "
                                                    f"{MAX_RESTARTS} restarts)")
                    return
            finally:
                for f in futures:
                    f.cancel()

    @staticmethod
    def _drain(futures: dict, reported: set) -> Iterator[Outcome]:
        """Yield finished futures' outcomes, adding each to ``reported``;
        BrokenProcessPool propagates (the caller restarts the pool)."""
        left = set(futures)
        while left:
            done, left = wait(left, return_when=FIRST_COMPLETED)
            for f in done:
                exc = f.exception()
                if isinstance(exc, BrokenProcessPool):
                    raise exc
                reported.add(f)
                yield futures[f], (None if exc is not None else f.result()), exc


class DaskExecutor(_Reentrant):
    """dask.distributed: a scheduler address, a given Client, or a new LocalCluster."""

    kind = "dask"

    def __init__(self, scheduler: str | None = None, workers: int | None = None, client=None):
        self.scheduler = scheduler
        self.workers = workers
        self._client, self._own = client, []

    def _start(self) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            from mbcompose.parsers.errors import InputError

            raise InputError("executor kind 'dask' needs dask.distributed: pip install 'mbcompose[dask]'") \
                from None
        if self._client is None:
            if self.scheduler is not None:
                self._client = Client(self.scheduler)
            else:
                cluster = LocalCluster(n_workers=self.workers or default_workers(), threads_per_worker=1,
                                       processes=True, dashboard_address=":0")
                self._own.append(cluster)
                self._client = Client(cluster)
            self._own.insert(0, self._client)
        self.workers = len(self._client.scheduler_info().get("workers", {})) or self.workers

    def _stop(self) -> None:
        for obj in self._own:
            obj.close()
        self._own = []

    @property
    def client(self):
        return self._client

    def map_unordered(self, fn: Callable, tasks: Iterable) -> Iterator[Outcome]:
        from dask.distributed import as_completed

        futures = {}
        for t in tasks:
            futures[self._client.submit(fn, t, pure=False)] = t
        try:
            for f in as_completed(list(futures)):
                task = futures.pop(f)
                try:
                    yield task, f.result(), None
                except Exception as exc:  # e.g. KilledWorker after repeated worker deaths
                    yield task, None, exc
                f.release()
        finally:
            if futures:
                self._client.cancel(list(futures))


def make_executor(config, scheduler: str | None = None, workers: int | None = None):
    """The executor an :class:`~composer.sweep.config.ExecutorConfig` names.

    ``scheduler`` (the CLI's ``--scheduler``) selects Dask with that address;
    ``workers`` overrides the config's worker count.
    """
    kind = "dask" if scheduler else config.kind
    workers = workers or config.workers
    if kind == "dask":
        return DaskExecutor(scheduler or config.scheduler, workers)
    if kind == "inline":
        return InlineExecutor()
    return LocalExecutor(workers)
