"""Sweeps on dask.distributed: the self-collision audit and ``collide_batch`` /
``distance_batch`` over pose sets larger than memory, chunk by chunk on a cluster.

``client`` everywhere: ``"local"`` starts a LocalCluster of worker processes on this machine
(one thread each: numba's kernels already use the cores), a string is a scheduler address
(``"tcp://host:8786"``), a ``distributed.Client`` is used as is. Results equal the
single-process run exactly: every chunk is computed by the same kernel on the same inputs
and merged in chunk order. Pose sets larger than memory come as a ``dask.array`` (N, 4, 4)
or a ``numpy.memmap`` / ``.npy`` path (workers open the file themselves; chunks never
travel through the client); results are (N,) arrays, written to a ``.npy`` memmap when
``out`` is given.

dask and distributed are the optional extra ``cdcore[dask]``, imported only here.
"""
from __future__ import annotations

import contextlib
import os

import numpy as np

DEFAULT_CHUNK = 100_000  # poses per task


def _require():
    try:
        import distributed  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the extra is installed for the tests
        raise ImportError("dask sweeps need the optional extra: pip install 'cdcore[dask]' "
                          f"(dask and distributed): {exc}") from None


@contextlib.contextmanager
def connect(client, n_workers: int | None = None):
    """A ``distributed.Client`` for ``client`` ("local", an address, or a Client); a
    LocalCluster started here is closed on exit."""
    _require()
    from distributed import Client, LocalCluster
    if isinstance(client, Client):
        yield client
        return
    if client == "local":
        n = n_workers or max(1, os.cpu_count() or 1)
        # dashboard_address=None: no dashboard (distributed's stub says str)
        cluster_cm = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                  dashboard_address=None)  # pyright: ignore[reportArgumentType]
        with cluster_cm as cluster, Client(cluster) as c:
            yield c
        return
    if isinstance(client, str) and client:
        with Client(client) as c:
            yield c
        return
    raise TypeError(f"client: expected 'local', a scheduler address or a distributed.Client, got {client!r}")


def _chunk_task(plan, c):
    from .articulated.audit import run_chunk
    return run_chunk(plan, c, threads=True)


def run_chunks(client, plan, n_chunks: int, progress=None, cancel=None):
    """The audit's chunks on the cluster; (counts, witness, status) merged in chunk order."""
    from distributed import as_completed

    from .articulated.audit import AuditCancelled, merge_chunk
    L = plan.mask.shape[0]
    parts = [None] * n_chunks
    with connect(client) as cl:
        splan = cl.scatter(plan, broadcast=True, hash=False)
        futures = [cl.submit(_chunk_task, splan, c, key=f"cdcore-audit-{id(plan)}-{c}", pure=False)
                   for c in range(n_chunks)]
        index = {f.key: c for c, f in enumerate(futures)}
        done = 0
        try:
            for fut in as_completed(futures):
                parts[index[fut.key]] = fut.result()
                done += 1
                if progress is not None:
                    progress(done, n_chunks)
                if cancel is not None and cancel():
                    raise AuditCancelled(f"audit cancelled after {done} of {n_chunks} chunks")
        except BaseException:
            cl.cancel(futures)
            raise
    total = (np.zeros((L, L), np.int64), np.full((L, L), -1, np.int64), np.zeros(3, np.int64))
    for p in parts:  # chunk order: identical to the single-process merge
        merge_chunk(total, p)
    return total


# ---- pose sweeps ------------------------------------------------------------------------

def _pose_source(poses):
    """(kind, object, N): a dask array, a .npy path (memory-mapped by each worker) or an
    in-memory array."""
    if isinstance(poses, (str, os.PathLike)):
        path = os.fspath(poses)
        arr = np.load(path, mmap_mode="r")
        if arr.ndim != 3 or arr.shape[1:] != (4, 4):
            raise ValueError(f"{path}: expected an (N, 4, 4) pose array, got {arr.shape}")
        return "npy", path, arr.shape[0]
    try:
        import dask.array as da
        if isinstance(poses, da.Array):
            if poses.ndim != 3 or poses.shape[1:] != (4, 4):
                raise ValueError(f"poses_b: expected an (N, 4, 4) dask array, got {poses.shape}")
            return "dask", poses, poses.shape[0]
    except ImportError:  # pragma: no cover
        pass
    arr = np.asarray(poses)
    if arr.ndim != 3 or arr.shape[1:] != (4, 4):
        raise ValueError(f"poses_b: expected shape (N, 4, 4), got {arr.shape}")
    return "array", arr, arr.shape[0]


def _poses_chunk(kind, src, lo, hi):
    if kind == "npy":
        return np.ascontiguousarray(np.load(src, mmap_mode="r")[lo:hi], dtype=np.float64)
    if kind == "dask":
        return np.ascontiguousarray(src[lo:hi].compute(scheduler="synchronous"), dtype=np.float64)
    return np.ascontiguousarray(src[lo:hi], dtype=np.float64)


def _pose_task(fn, bvh_a, bvh_b, kind, src, lo, hi, kwargs):
    pb = _poses_chunk(kind, src, lo, hi)
    r = fn(bvh_a, bvh_b, pb, **kwargs)
    if fn.__name__ == "collide_batch":
        return r.hits
    return r.distances if hasattr(r, "distances") else r.distance


def _sweep(fn, bvh_a, bvh_b, poses_b, client, chunk, out, progress, kwargs):
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f"chunk: expected a positive integer, got {chunk!r}")
    kind, src, N = _pose_source(poses_b)
    N = int(N)  # a dask array's length is known here (``_pose_source`` checks it)
    tmp = ""
    dtype = np.bool_ if fn.__name__ == "collide_batch" else np.float64
    if out is not None:
        from .bench.output import output_path_problem
        problem = output_path_problem(out)
        if problem:
            raise ValueError(f"out: {problem}")
        tmp = f"{os.fspath(out)}.part"
        result = np.lib.format.open_memmap(tmp, mode="w+", dtype=dtype, shape=(N,))
    else:
        result = np.empty(N, dtype=dtype)
    bounds = [(lo, min(N, lo + chunk)) for lo in range(0, N, chunk)]
    try:
        if client is None:
            for k, (lo, hi) in enumerate(bounds):
                result[lo:hi] = _pose_task(fn, bvh_a, bvh_b, kind, src, lo, hi, kwargs)
                if progress is not None:
                    progress(k + 1, len(bounds))
        else:
            from distributed import as_completed
            with connect(client) as cl:
                sa, sb = cl.scatter([bvh_a, bvh_b], broadcast=True, hash=False)  # pyright: ignore  (sync Client: a list)
                futures, where = [], {}
                for lo, hi in bounds:
                    if kind == "array":  # in memory: ship the chunk itself
                        f = cl.submit(_pose_task, fn, sa, sb, kind, src[lo:hi], 0, hi - lo, kwargs, pure=False)
                    else:  # a file or a dask array: the worker reads its own chunk
                        f = cl.submit(_pose_task, fn, sa, sb, kind, src, lo, hi, kwargs, pure=False)
                    futures.append(f)
                    where[f.key] = (lo, hi)
                for done, f in enumerate(as_completed(futures), 1):  # pyright: ignore
                    lo, hi = where[f.key]
                    result[lo:hi] = f.result()
                    if progress is not None:
                        progress(done, len(bounds))
    except BaseException:
        if out is not None:
            del result
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    if out is not None:
        result.flush()  # pyright: ignore[reportAttributeAccessIssue]  (a memmap)
        del result
        os.replace(tmp, os.fspath(out))
        return np.load(os.fspath(out), mmap_mode="r")
    return result


def collide_sweep(bvh_a, bvh_b, poses_b, client=None, chunk: int = DEFAULT_CHUNK, out=None, progress=None,
                  **kwargs) -> np.ndarray:
    """``collide_batch(bvh_a, bvh_b, poses_b)`` chunk by chunk: (N,) bool hits.

    ``poses_b``: (N, 4, 4) array, ``.npy`` path (memory-mapped, read by the workers) or
    ``dask.array``; ``client``: None (this process), "local", an address or a Client;
    ``out``: a ``.npy`` path for the result (written atomically, returned memory-mapped);
    ``kwargs`` go to ``collide_batch`` (``pose_a``, ``test``, ``realign``). The hits equal
    one ``collide_batch`` call over all poses."""
    from .collide import collide_batch
    return _sweep(collide_batch, bvh_a, bvh_b, poses_b, client, chunk, out, progress, kwargs)


def distance_sweep(bvh_a, bvh_b, poses_b, client=None, chunk: int = DEFAULT_CHUNK, out=None, progress=None,
                   **kwargs) -> np.ndarray:
    """``distance_batch`` chunk by chunk: (N,) float64 distances (as ``collide_sweep``)."""
    from .distance import distance_batch
    return _sweep(distance_batch, bvh_a, bvh_b, poses_b, client, chunk, out, progress, kwargs)


__all__ = ["connect", "run_chunks", "collide_sweep", "distance_sweep", "DEFAULT_CHUNK"]
