"""Concurrent readahead of remote objects for :class:`tfrx.RecordReader`.

An object store answers one request at a time slowly (tens of milliseconds
before the first byte) but many at once quickly, so a reader of remote
shards fetches ahead: the objects are cut into blocks of ``block_size``
bytes, and up to ``window`` blocks are requested concurrently on a small
thread pool, in reading order, across the end of one object into the next
ones (a shard's first block is requested while the one before it is still
being read). The reader consumes the blocks strictly in order, so records
come out in the same order and with the same positions as without
readahead; memory stays within ``window`` blocks.

``window`` blocks are held (in flight or waiting for the reader), at most
``concurrency`` requests run at once. An object's first block is requested
together with its size (a HEAD request, free after a glob), not after it:
it asks for ``block_size`` bytes from the start offset and takes what the
object holds, so a scan pays one round trip before its first bytes, not two.

A block that fails after the filesystem's own retries raises ``OSError``
naming the object and the byte offset when the reader reaches it (records
before it are delivered first); reading it again requests it again.
``close()`` cancels what has not started and lets the pool's threads end
once their current request returns.
"""

from __future__ import annotations

import io
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from tfrx.io._paths import url_to_fs

__all__ = ["RemoteBlocks", "DEFAULT_READAHEAD", "DEFAULT_CONCURRENCY", "MAX_THREADS"]

DEFAULT_READAHEAD = 32 << 20
# Requests in flight by default: with 4 MiB blocks, 8 cover a 100 MB/s link at 300 ms per request.
DEFAULT_CONCURRENCY = 8
MAX_THREADS = 64


def _fetch(fs, path: str, start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of an object."""
    if end <= start:
        return b""
    data = fs.cat_file(path, start=start, end=end)
    if len(data) != end - start:
        raise OSError(f"asked for {end - start} bytes at byte {start}, the store sent {len(data)}")
    return data


def _fetch_head(fs, path: str, start: int, end: int) -> bytes:
    """Up to ``end - start`` bytes at ``start``, before the object's size is known (fewer when it is smaller)."""
    return fs.cat_file(path, start=start, end=end)


def _size(fs, path: str) -> int:
    size = fs.size(path)  # a HEAD request, or the listing a glob left in the filesystem's cache
    if size is None:
        raise OSError("the store does not report the object's size")
    return int(size)


class RemoteBlocks:
    """Blocks of ``urls[first:]`` fetched ahead of the reader; ``stream(k)`` reads object ``k``.

    ``first_offset`` is where reading starts in ``urls[first]``. Streams must
    be taken in file order; taking file ``k`` drops whatever is left of the
    files before it. Sizes of the next ``window`` objects are looked up
    ahead (they cost no memory), so blocks are always requested in reading
    order: the current object's first, then the next objects'.
    """

    def __init__(
        self,
        urls,
        first: int,
        first_offset: int,
        *,
        block_size: int,
        window: int,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        self._urls = list(urls)
        self._first = first
        self._first_offset = int(first_offset)
        self._block = max(int(block_size), 1)
        self._window = max(int(window), 1)
        threads = max(1, min(self._window, int(concurrency), MAX_THREADS))
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tfrx-readahead")
        self._early: set[int] = set()  # objects whose first block was asked for before their size was known
        self._lock = threading.RLock()  # planning runs on the reader's thread and in size callbacks
        self._futures: dict[tuple[int, int], Future] = {}
        self._size_futures: dict[int, Future] = {}
        self._sizes: dict[int, int] = {}
        self._fs: dict[int, tuple] = {}
        self._current = first  # the file being read; the ones before it are done
        self._next_block = 0  # the next block of the current file the reader needs
        self._closed = False

    # -------------------------------------------------------------- planning
    def base(self, k: int) -> int:
        return self._first_offset if k == self._first else 0

    def _locate(self, k: int):
        if k not in self._fs:
            self._fs[k] = url_to_fs(self._urls[k])
        return self._fs[k]

    def _submit(self, k: int, j: int) -> Future:
        fs, path = self._locate(k)
        start = self.base(k) + j * self._block
        end = max(min(start + self._block, self._sizes[k]), start)
        fut = self._pool.submit(_fetch, fs, path, start, end)
        self._futures[(k, j)] = fut
        return fut

    def _submit_first(self, k: int) -> None:
        """Requests object ``k``'s first block while its size is still being looked up."""
        if (k, 0) in self._futures or len(self._futures) >= self._window:
            return
        fs, path = self._locate(k)
        start = self.base(k)
        self._futures[(k, 0)] = self._pool.submit(_fetch_head, fs, path, start, start + self._block)
        self._early.add(k)

    def _blocks_of(self, k: int) -> int:
        return max(1, -(-(self._sizes[k] - self.base(k)) // self._block))

    def _size_known(self, k: int) -> bool:
        """Whether object ``k``'s size is known; if not, looks up the sizes of it and the objects after it."""
        if k in self._sizes:
            return True
        fut = self._size_futures.get(k)
        if fut is not None and fut.done() and not fut.cancelled() and fut.exception() is None:
            self._sizes[k] = fut.result()
            return True
        for i in range(k, min(k + self._window, len(self._urls))):
            if i not in self._sizes and i not in self._size_futures:
                fs, path = self._locate(i)
                f = self._size_futures[i] = self._pool.submit(_size, fs, path)
                f.add_done_callback(self._size_arrived)
        return False

    def _size_arrived(self, fut: Future) -> None:
        try:
            self._top_up()
        except Exception:  # the reader reports failures when it reaches the object
            pass

    def _top_up(self) -> None:
        """Requests the next blocks in reading order until ``window`` are in flight or waiting."""
        with self._lock:
            k = self._current
            while len(self._futures) < self._window and k < len(self._urls) and not self._closed:
                if not self._size_known(k):
                    if k == self._current and self._next_block == 0:
                        self._submit_first(k)
                    return
                first = self._next_block if k == self._current else 0
                for j in range(first, self._blocks_of(k)):
                    if len(self._futures) >= self._window:
                        return
                    if (k, j) not in self._futures:
                        self._submit(k, j)
                k += 1

    # -------------------------------------------------------------- reading
    def stream(self, k: int) -> BlockStream:
        """The stream of object ``k`` from its start offset; drops what is left of earlier objects."""
        with self._lock:
            if self._closed:
                raise ValueError("readahead is closed")
            if k < self._current:
                raise ValueError(f"object {k} was already read (reading object {self._current})")
            for key in [key for key in self._futures if key[0] < k]:
                self._futures.pop(key).cancel()
                self._early.discard(key[0])
            if k != self._current:
                self._current, self._next_block = k, 0
        return BlockStream(self, k)

    def _wait_size(self, k: int) -> int:
        with self._lock:
            known = self._size_known(k)
            fut = None if known else self._size_futures[k]
        if fut is not None:
            try:
                size = fut.result()
            except Exception:
                with self._lock:
                    self._size_futures.pop(k, None)  # looked up again next time
                raise
            with self._lock:
                self._sizes[k] = size
        return self._sizes[k]

    def take(self, k: int, j: int) -> tuple[bytes, bool]:
        """Block ``j`` of object ``k`` (waiting for it if needed), and whether it is the object's last."""
        if self._closed:
            raise ValueError("readahead is closed")
        try:
            if k not in self._sizes:
                with self._lock:
                    self._current = k
                    self._top_up()  # the first block goes out with the size lookup, not after it
            size = self._wait_size(k)
            with self._lock:
                self._current, self._next_block = k, j + 1
                fut = self._futures.pop((k, j), None)
                early = j == 0 and k in self._early
                self._early.discard(k)
                if fut is None or fut.cancelled():
                    fut, early = self._submit(k, j), False
                    self._futures.pop((k, j))
                self._top_up()
            data = self._result(fut, k, j, size) if early else fut.result()
        except FileNotFoundError:
            self._next_block = j
            raise FileNotFoundError(f"no such object: {self._urls[k]!r}") from None
        except Exception as e:
            self._next_block = j  # asked again, the block is requested again
            at = self.base(k) + j * self._block
            raise OSError(f"reading {self._urls[k]!r} at byte {at} failed after the filesystem's retries: {e}") from e
        return data, self.base(k) + (j + 1) * self._block >= size

    def _result(self, fut: Future, k: int, j: int, size: int) -> bytes:
        """A first block asked for before the size was known: checked against the size now known (a
        request past the end of an empty object fails: asked again exactly)."""
        start = self.base(k)
        want = max(min(start + self._block, size) - start, 0)
        try:
            data = fut.result()
        except FileNotFoundError:
            raise
        except Exception:
            if want:
                raise
            data = b""
        if len(data) != want:
            raise OSError(f"asked for {want} bytes at byte {start}, the store sent {len(data)}")
        return data

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for fut in [*self._futures.values(), *self._size_futures.values()]:
                fut.cancel()
            self._futures.clear()
            self._size_futures.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class BlockStream(io.RawIOBase):
    """Object ``k`` of a :class:`RemoteBlocks`, read sequentially from its start offset."""

    def __init__(self, blocks: RemoteBlocks, k: int) -> None:
        self._blocks = blocks
        self._k = k
        self._j = 0
        self._data = memoryview(b"")
        self._pos = 0
        self._eof = False
        self.name = str(blocks._urls[k])

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        while self._pos >= len(self._data):
            if self._eof or not len(view):
                return 0
            data, last = self._blocks.take(self._k, self._j)
            self._data, self._pos = memoryview(data), 0
            self._eof = last
            self._j += 1
        n = min(len(view), len(self._data) - self._pos)
        view[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            out = bytearray()
            chunk = bytearray(1 << 20)
            while n := self.readinto(chunk):
                out += chunk[:n]
            return bytes(out)
        buf = bytearray(size)
        n = self.readinto(buf)
        return bytes(buf[:n])
