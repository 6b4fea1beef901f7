"""Batches handed between processes through a reused ring of shared-memory slots.

A ``DataLoader`` worker that yields a dict of tensors pays PyTorch's handoff per
tensor: a new shared-memory segment, a copy into it, a file descriptor sent over
a socket and a fresh mapping (page faults) in the main process, for every tensor
of every batch. That costs more CPU than reading and parsing the batch.

Here a worker owns one file of ``slots`` equal slots in shared memory
(``/dev/shm``), mapped once by the worker and once by the main process. It
pickles a batch with every NumPy array replaced by a reference to its place in
a free slot (:func:`prepare`), copies the arrays there in one native call with
the GIL released (:meth:`Ring.put`), and sends only the small pickle and the
slot number through the loader's queue (a :class:`PackedBatch`). Numeric
arrays come back as arrays viewing the slot, without a copy; object arrays of
``bytes`` (string features) travel as their values end to end plus offsets and
come back as object arrays again, their ``bytes`` made in one native call
rather than unpickled one by one. Any structure pickle can carry works: dicts,
tuples, namedtuples, ``SparseArray`` and ``RaggedArray`` (their arrays go
through the slot too). When the last array viewing a slot is released, the
slot is marked free and the worker reuses it. A batch that does not fit makes
the worker open a larger ring; when every slot is still held by the consumer
(a training loop that keeps batches), the batch goes the ordinary way.
Nothing is ever overwritten while the main process can still see it.

A parse can also write its numeric outputs straight into a slot: the worker
leases a free slot (:meth:`Ring.lease`, a native ``OutputArena`` over it)
for the parse call, and :func:`prepare` then refers to the arrays found in
that slot where they lie, copying only the rest of the batch after them.
Outputs that do not fit come from the parser's usual pool and are copied;
a slot is leased until the arena and its arrays are gone in the worker or,
once sent, until the main process releases it.

The file is unlinked as soon as the main process has mapped it (or, failing
that, when the worker exits), so nothing is left in ``/dev/shm`` after a crash
once the first batch has arrived; memory is returned when both sides have
dropped their mappings.
"""

from __future__ import annotations

import ctypes
import io
import mmap
import os
import pickle
import tempfile
import threading
import time
import weakref
from multiprocessing import util as mp_util
from typing import Any

import numpy as np

from tfrx import _native
from tfrx.parsing._bytes_array import BytesArray

__all__ = [
    "ALIGN",
    "NUMERIC",
    "PackedBatch",
    "Prepared",
    "Ring",
    "attached_mappings",
    "gather_pieces",
    "prepare",
    "unpack",
    "views_to_objects",
]

ALIGN = 64  # where each array starts in a slot (and in the device feeder's staging)
_PAGE = mmap.PAGESIZE
_HEADER = 4096  # int32 words: [attached, closed, state of slot 0, state of slot 1, ...]
_ATTACHED, _CLOSED, _SLOT0 = 0, 1, 2
_MAX_SLOTS = _HEADER // 4 - _SLOT0
NUMERIC = frozenset("biufc")  # the dtype kinds copied as raw bytes
_PADDING = np.zeros(ALIGN, np.uint8)  # the bytes between two arrays' aligned places
# Batches this large are copied into the slot with non-temporal stores: the main process reads
# them later from another core, so filling this core's cache with them only evicts the pipeline.
_STREAM_BYTES = 1 << 20


def gather_pieces(pieces: list[tuple[np.ndarray, int]], dst: np.ndarray) -> None:
    """Copies each C-contiguous array of ``pieces`` (``(array, at)``, at ascending places that do not
    overlap) to ``dst[at:]``, and zeros between them, in one native call (non-temporal stores for a
    large batch: its reader is another core, or a device's copy engine)."""
    datas: list = [_PADDING]
    spans: list[int] = []  # (source, start, length) triples
    cursor = 0
    for x, at in pieces:
        if at > cursor:
            spans += (0, 0, at - cursor)
        datas.append(x)
        spans += (len(datas) - 1, 0, x.nbytes)
        cursor = at + x.nbytes
    if spans:
        table = np.array(spans, np.int64).reshape(-1, 3).T.copy()
        _native.gather_spans(datas, table[0], table[1], table[2], dst, stream=cursor >= _STREAM_BYTES)


def _shm_dir() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


# ------------------------------------------------------------------ the sending process


class _SlotPickler(pickle.Pickler):
    """Pickles an element with each NumPy array it can place in a slot reduced to where it goes.

    A numeric array in the native byte order becomes ``_slot_array(offset,
    dtype, shape)``; an object array whose items are all ``bytes`` becomes
    ``_slot_bytes(column, shape)``, its values end to end in the slot and
    their offsets, listed in ``columns`` as (offsets_at, values_at, count)
    so that the receiver makes every column's ``bytes`` in one native call
    before unpickling; other objects pickle as usual. ``reducer_override`` is
    asked only about objects other than dicts, lists, tuples, str, bytes and
    numbers, so the structure around the arrays costs nothing extra; the
    pickler's memo keeps an array met twice one array.
    """

    def __init__(self, file: io.BytesIO, views_as_objects: bool = False, ring: Ring | None = None) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.pieces: list[tuple[np.ndarray, int]] = []  # (C-contiguous array, offset after the arena's part)
        self.end = 0
        # Bytes columns in the order met: (offsets_at, values_at, count) of one placed now, or None for
        # one given as spans (a BytesArray), whose values put() packs after everything else (in `spans`).
        self.columns: list[tuple[int, int, int] | None] = []
        self.spans: tuple[list, list, list] = ([], [], [])  # datas, starts, lengths
        self._views_as_objects = views_as_objects
        # Arrays a parse wrote into a slot of `ring` (Ring.lease) stay where they are: (start, end) of
        # the slots' memory, and the one slot this element's arrays lie in (None until one is met).
        self._ring = ring if ring is not None and ring._leased else None
        self.slot: int | None = None

    def _in_slot(self, x: np.ndarray) -> int | None:
        """Where ``x`` lies in its slot of the ring, when it lies in the leased slot of this element."""
        ring = self._ring
        assert ring is not None
        address = _native.buffer_address(x) - ring._address
        if not 0 <= address < ring.slots * ring.slot_bytes:
            return None
        slot, at = divmod(address, ring.slot_bytes)
        if (self.slot is None and slot in ring._leased) or slot == self.slot:
            self.slot = slot
            return at
        return None

    def _place(self, x: np.ndarray) -> int:
        at = self.end
        self.pieces.append((x if x.flags.c_contiguous else np.ascontiguousarray(x), at))
        self.end = (at + x.nbytes + ALIGN - 1) // ALIGN * ALIGN
        return at

    def _column(self, values: np.ndarray, offsets: np.ndarray, shape: tuple) -> tuple:
        self.columns.append((self._place(offsets), self._place(values), len(offsets) - 1))
        return _slot_bytes, (len(self.columns) - 1, shape)

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is np.ndarray:
            kind = obj.dtype.kind
            if kind in NUMERIC and obj.dtype.byteorder in "=|":
                if self._ring is not None and obj.flags.c_contiguous:
                    at = self._in_slot(obj)
                    if at is not None:
                        return _arena_array, (at, obj.dtype.str, obj.shape)
                return _slot_array, (self._place(obj), obj.dtype.str, obj.shape)
            if kind == "O":
                try:
                    packed = _native.pack_bytes(obj.reshape(-1))
                except TypeError:  # an item that is not bytes: the array pickles as usual
                    return NotImplemented
                return self._column(packed.values, packed.offsets, obj.shape)
        elif self._views_as_objects and type(obj) is BytesArray:
            datas, starts, lengths = self.spans
            datas.append(obj.data)
            starts.append(_flat_int64(obj.starts))
            lengths.append(_flat_int64(obj.lengths))
            self.columns.append(None)
            return _slot_bytes, (len(self.columns) - 1, obj.shape)
        return NotImplemented


def _flat_int64(x: np.ndarray) -> np.ndarray:
    if x.ndim == 1 and x.dtype == np.int64 and x.flags.c_contiguous:  # as a parse gives them
        return x
    return np.ascontiguousarray(x.reshape(-1), np.int64)


class _ObjectsPickler(pickle.Pickler):
    """Pickles ``BytesArray`` s as the object arrays of ``bytes`` they stand for."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is BytesArray:
            return _same, (obj.to_numpy(),)
        return NotImplemented


def _same(x: Any) -> Any:
    return x


def views_to_objects(element: Any) -> Any:
    """``element`` with every ``BytesArray`` in it (at any depth) made the object array of ``bytes`` it stands for."""
    out = io.BytesIO()
    _ObjectsPickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(element)
    return pickle.loads(out.getvalue())


class Prepared:
    """An element ready for a slot: its pickle (arrays as references), the arrays to copy and its bytes columns.

    ``slot``: the leased slot that a parse wrote some of its arrays into (then
    the copies go after them, from byte ``start``), or None.
    """

    __slots__ = ("pickle", "pieces", "end", "size", "columns", "spans", "slot", "start")

    def __init__(
        self,
        pickled: bytes,
        pieces: list[tuple[np.ndarray, int]],
        end: int,
        columns: list[tuple[int, int, int] | None] | None = None,
        spans: tuple[list, list, list] = ([], [], []),
        slot: int | None = None,
        start: int = 0,
    ) -> None:
        self.pickle, self.pieces, self.columns, self.spans = pickled, pieces, columns or [], spans
        self.slot, self.start, self.end = slot, start, end  # the pieces from start, the spans' columns from end
        self.size = start + end + (_native.span_columns_size(spans[2]) if spans[2] else 0)


def prepare(element: Any, *, views_as_objects: bool = False, ring: Ring | None = None) -> Prepared | None:
    """``element`` pickled with its arrays as references into a slot; None when it holds no array to place.

    With ``views_as_objects``, each ``BytesArray`` comes out of the slot as the
    object array of ``bytes`` it stands for (what a parser gives by default).
    With ``ring``, arrays that a parse wrote into a slot it leased
    (:meth:`Ring.lease`) are referred to where they are, not copied.
    """
    out = io.BytesIO()
    pickler = _SlotPickler(out, views_as_objects, ring)
    pickler.dump(element)
    if not pickler.pieces and pickler.slot is None and not pickler.columns:
        return None
    start = 0
    if pickler.slot is not None:
        assert ring is not None
        start = _round_up(ring._arena_end(pickler.slot), ALIGN)
    return Prepared(out.getvalue(), pickler.pieces, pickler.end, pickler.columns, pickler.spans, pickler.slot, start)


class Ring:
    """The worker's side: ``slots`` slots of ``slot_bytes`` in one shared file."""

    def __init__(self, slot_bytes: int, slots: int = 6) -> None:
        if not 1 <= slots <= _MAX_SLOTS:
            raise ValueError(f"slots must be in [1, {_MAX_SLOTS}], got {slots}")
        self.slot_bytes = _round_up(max(int(slot_bytes), _PAGE), _PAGE)
        self.slots = slots
        fd, self.path = tempfile.mkstemp(prefix="tfrx-batches-", dir=_shm_dir())
        try:
            os.ftruncate(fd, _HEADER + slots * self.slot_bytes)
            self._mm: mmap.mmap | None = mmap.mmap(fd, _HEADER + slots * self.slot_bytes)
        except BaseException:
            os.close(fd)
            _unlink(self.path)
            raise
        os.close(fd)
        self._state: np.ndarray | None = np.frombuffer(self._mm, np.int32, count=_SLOT0 + slots)
        self._address = self._state.ctypes.data + _HEADER  # of slot 0
        self._unlinked = False
        self._next = 0
        # Slots this process uses (leased to a parse, or being filled): slot -> the lease's arena (a weak
        # reference) or None. Taken under _lock; a lease leaves when its arena is collected.
        self._leased: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._memory: list[Any] = [None] * slots  # per slot, once leased: a ctypes array over it
        # At the worker's exit (multiprocessing runs these finalizers there), in case the
        # main process never mapped the file: by then it has received every batch it will.
        mp_util.Finalize(None, _unlink, args=(self.path,), exitpriority=10)

    def pack(self, element: Any, *, wait: float = 0.02) -> PackedBatch | None:
        """``element`` with its arrays copied into a free slot; None when it holds no array to place
        or no slot is free in ``wait`` seconds.

        Raises ValueError when the arrays do not fit a slot (open a larger ring).
        """
        prepared = prepare(element)
        return None if prepared is None else self.put(prepared, wait=wait)

    def lease(self) -> Any:
        """A free slot as an ``OutputArena`` for a parse to write its numeric outputs into, or None when
        no slot is free now.

        The slot stays this process's until the arena and every array over it
        are gone, or, once :meth:`put` has sent the batch in it, until the
        main process releases it.
        """
        with self._lock:  # (a parse on another thread may lease while the ring is being closed)
            if self._mm is None or self._state is None:
                return None
            slot = self._claim()
            if slot is None:
                return None
            memory = self._memory[slot]
            if memory is None:
                memory = self._memory[slot] = (ctypes.c_char * self.slot_bytes).from_buffer(
                    self._mm, _HEADER + slot * self.slot_bytes
                )
        arena = _native.OutputArena(memory)
        self._leased[slot] = weakref.ref(arena)
        weakref.finalize(arena, self._leased.pop, slot, None)
        return arena

    def _arena_end(self, slot: int) -> int:
        arena = self._leased[slot]()
        return 0 if arena is None else arena.used

    def _claim(self) -> int | None:
        """A slot that is free on both sides, now marked this process's; call with _lock held."""
        assert self._state is not None
        for k in range(self.slots):
            slot = (self._next + k) % self.slots
            if self._state[_SLOT0 + slot] == 0 and slot not in self._leased:
                self._next = slot + 1
                self._leased[slot] = None
                return slot
        return None

    def put(self, prepared: Prepared, *, wait: float = 0.02) -> PackedBatch | None:
        """A prepared element copied into a free slot (or completed in the slot its parse leased);
        None when none is free in ``wait`` seconds.

        Raises ValueError when it does not fit a slot (open a larger ring).
        """
        if prepared.size > self.slot_bytes:
            raise ValueError(f"a batch of {prepared.size} bytes does not fit slots of {self.slot_bytes}")
        self._maybe_unlink()
        slot = prepared.slot
        if slot is not None:
            assert self._state is not None
            if slot not in self._leased or self._state[_SLOT0 + slot] != 0:
                raise ValueError(f"slot {slot} is not leased to this batch")
        else:
            slot = self._free_slot(wait)
            if slot is None:
                return None
        try:
            return self._fill(slot, prepared)
        finally:
            if prepared.slot is None:
                self._leased.pop(slot, None)

    def _fill(self, slot: int, prepared: Prepared) -> PackedBatch:
        assert self._mm is not None and self._state is not None  # _maybe_unlink checked it is open
        base = _HEADER + slot * self.slot_bytes
        start = prepared.start
        if prepared.pieces:
            x, at = prepared.pieces[-1]
            dst = np.frombuffer(self._mm, np.uint8, count=max(at + x.nbytes, 1), offset=base + start)
            gather_pieces(prepared.pieces, dst)
            del dst  # (an export of the mapping, which close() needs gone)
        columns: list[int] = []
        if prepared.columns:
            packed: list[list[int]] = []  # the spans' columns, in the order met
            if prepared.spans[0]:
                dst = np.frombuffer(self._mm, np.uint8, count=prepared.size - start, offset=base + start)
                packed = (
                    np.asarray(_native.pack_span_columns(dst, prepared.end, *prepared.spans)).reshape(-1, 3).tolist()
                )
                del dst
            made = iter(packed)
            for column in prepared.columns:
                columns += column if column is not None else next(made)
        self._state[_SLOT0 + slot] = 1
        return PackedBatch(self.path, slot, base, prepared.size, prepared.pickle, tuple(columns), start)

    def _free_slot(self, wait: float) -> int | None:
        """A free slot, claimed (in _leased until put has filled it); None after ``wait`` seconds without one."""
        deadline = None
        while True:
            with self._lock:
                slot = self._claim()
            if slot is not None:
                return slot
            now = time.monotonic()
            if deadline is None:
                deadline = now + wait
            elif now >= deadline:
                return None
            time.sleep(0.0002)

    def _maybe_unlink(self) -> None:
        if self._state is None:
            raise ValueError(f"the shared-memory ring {self.path!r} is closed")
        if not self._unlinked and self._state[_ATTACHED]:
            _unlink(self.path)
            self._unlinked = True

    def close(self) -> None:
        """No more batches from this ring: the main process lets go of it once its batches are released."""
        with self._lock:
            if self._mm is None or self._state is None:
                return
            self._state[_CLOSED] = 1
            self._maybe_unlink()  # else batches still in the queue need the name: unlinked at exit
            self._state = None
            self._memory = [None] * self.slots  # (exports of the mapping; leases still alive keep theirs)
            try:
                self._mm.close()
            except BufferError:  # an array still views it; the mapping closes when that is collected
                pass
            self._mm = None


class PackedBatch:
    """A batch in a slot, as the loader's queue carries it: unpickles into the batch, its arrays viewing the slot."""

    __slots__ = ("path", "slot", "base", "size", "pickle", "columns", "copied_at")

    def __init__(
        self,
        path: str,
        slot: int,
        base: int,
        size: int,
        pickled: bytes,
        columns: tuple[int, ...] = (),
        copied_at: int = 0,
    ) -> None:
        self.path, self.slot, self.base, self.size, self.pickle = path, slot, base, size, pickled
        self.columns, self.copied_at = columns, copied_at

    def __reduce__(self):
        return unpack, (self.path, self.slot, self.base, self.size, self.pickle, self.columns, self.copied_at)


# ------------------------------------------------------------------ the receiving process

# path -> (mmap, header view); entries of rings the worker has closed are dropped on the next unpack.
_attached: dict[str, tuple[mmap.mmap, np.ndarray]] = {}


def _attach(path: str) -> tuple[mmap.mmap, np.ndarray]:
    entry = _attached.get(path)
    if entry is None:
        for other, (_, header) in list(_attached.items()):
            if header[_CLOSED]:
                del _attached[other]  # its mapping lives on while its batches do
        with open(path, "r+b") as f:
            mm = mmap.mmap(f.fileno(), 0)
        header = np.frombuffer(mm, np.int32, count=_HEADER // 4)
        header[_ATTACHED] = 1
        entry = _attached[path] = (mm, header)
    return entry


def attached_mappings() -> dict[str, mmap.mmap]:
    """The rings this process has mapped and whose workers still use them: ``{path: mapping}`` (a device
    feeder registers them as pinned memory, so batches go to the device straight from their slots)."""
    return {path: mm for path, (mm, header) in _attached.items() if not header[_CLOSED]}


def _release(header: np.ndarray, slot: int) -> None:
    header[_SLOT0 + slot] = 0


# On the thread unpacking a slot: .owner, a ctypes array over the slot; .columns, its bytes columns, made;
# .copied_at, where the arrays copied into the slot start (after those a parse wrote there).
_loading = threading.local()


def _slot_array(at: int, dtype: str, shape: tuple) -> np.ndarray:
    return np.ndarray(shape, dtype, buffer=_loading.owner, offset=_loading.copied_at + at)


def _arena_array(at: int, dtype: str, shape: tuple) -> np.ndarray:
    return np.ndarray(shape, dtype, buffer=_loading.owner, offset=at)


def _slot_bytes(column: int, shape: tuple) -> np.ndarray:
    values: np.ndarray = _loading.columns[column]
    return values if len(shape) == 1 else values.reshape(shape)


def unpack(
    path: str, slot: int, base: int, size: int, pickled: bytes, columns: tuple[int, ...] = (), copied_at: int = 0
) -> Any:
    """The batch, its numeric arrays viewing its slot; the slot is freed when the last of them is released."""
    mm, header = _attach(path)
    owner = (ctypes.c_char * max(size, 1)).from_buffer(mm, base)
    weakref.finalize(owner, _release, header, slot)
    made: Any = ()
    if columns:
        table = np.array(columns, np.int64).reshape(-1, 3).T.copy()
        table[:2] += copied_at
        made = _native.bytes_columns(owner, table[0], table[1], table[2])
    outer = getattr(_loading, "owner", None), getattr(_loading, "columns", ()), getattr(_loading, "copied_at", 0)
    _loading.owner, _loading.columns, _loading.copied_at = owner, made, copied_at
    try:
        return pickle.loads(pickled)
    finally:
        _loading.owner, _loading.columns, _loading.copied_at = outer
