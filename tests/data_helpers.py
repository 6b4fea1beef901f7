"""Helpers shared by the tfrx.data tests: comparing elements and small TFRecord files."""

from __future__ import annotations

import numpy as np


def to_py(x):
    """Elements as plain Python values, for equality checks (NumPy, tuples, dicts, bytes)."""
    if isinstance(x, dict):
        return {k: to_py(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return [to_py(v) for v in x]
    if isinstance(x, np.ndarray):
        return to_py(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    if hasattr(x, "numpy"):
        return to_py(x.numpy())
    return x


def write_fake_files(tmp_path, sizes, prefix="part"):
    """TFRecord files whose records are ``b"<file>-<record>"``; returns their paths."""
    import tfrx

    paths = []
    for f, n in enumerate(sizes):
        p = tmp_path / f"{prefix}-{f:03d}.tfrecord"
        with tfrx.TFRecordWriter(str(p)) as w:
            for r in range(n):
                w.write(f"{f}-{r}".encode())
        paths.append(str(p))
    return paths


def id_files(tmp_path, per_file=(40, 40, 40), prefix="ids"):
    """Files of Examples numbered by file (``id`` = 1000 * file + record): ``x`` five float32 copies of the
    id, ``s`` a string list of ``id % 3`` values, ``name`` a string; returns their paths."""
    import tfrx

    paths = []
    for f, count in enumerate(per_file):
        p = str(tmp_path / f"{prefix}-{f}.tfrecord")
        ids = np.arange(f * 1000, f * 1000 + count)
        cols = {
            "x": np.repeat(ids[:, None], 5, axis=1).astype(np.float32),
            "id": ids,
            "s": [[b"v%d" % i] * (i % 3) for i in ids],
            "name": [b"n%d" % i for i in ids],
        }
        with tfrx.TFRecordWriter(p) as w:
            w.write_many(tfrx.encode_examples(cols))
        paths.append(p)
    return paths


class OpenedFiles:
    """Records the files every ``tfrx.RecordReader`` made by the pipeline opens (through ``open_reader``)."""

    def __init__(self, monkeypatch) -> None:
        import tfrx.data._files as files_mod

        self.opened: list = []
        real = files_mod.open_reader

        def spy(path, **kwargs):
            reader = real(path, **kwargs)
            self.opened.extend([path] if isinstance(path, str) else list(path))
            return reader

        monkeypatch.setattr(files_mod, "open_reader", spy)


def sized_files(directory, sizes_per_file):
    """Files whose records are ``b"<file>-<record>-"`` padded to the given sizes; (paths, all records)."""
    import tfrx

    paths, records = [], []
    for f, sizes in enumerate(sizes_per_file):
        recs = [f"{f}-{r}-".encode().ljust(n, b"x") for r, n in enumerate(sizes)]
        p = str(directory / f"s-{f}.tfrecord")
        with tfrx.TFRecordWriter(p) as w:
            w.write_many(recs)
        paths.append(p)
        records += recs
    return paths, records


def interrupted_and_resumed(make_loader, taken: int):
    """A loader stopped after ``taken`` elements and one resumed from the state it saved there.

    ``make_loader()`` makes a fresh ``StatefulDataLoader``. Returns the first
    ``taken`` elements, the rest of the interrupted loader's epoch, and what
    the resumed loader gives (which must equal the rest).
    """
    loader = make_loader()
    it = iter(loader)
    first = [next(it) for _ in range(taken)]
    state = loader.state_dict()
    rest = list(it)
    resumed = make_loader()
    resumed.load_state_dict(state)
    return first, rest, list(resumed)


def working_threads() -> int:
    """Threads alive other than the pipeline's idle ones, which wait for the next iterator to run on them
    (``tfrx.data._prefetch._THREADS``): what an abandoned iterator's threads must come back to."""
    import threading

    from tfrx.data._prefetch import _THREADS

    return threading.active_count() - len(_THREADS._idle)
