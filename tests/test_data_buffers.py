"""RecycledBuffers: a buffer comes back only once nothing made from it is alive."""

import gc

import numpy as np

from tfrx.io._buffers import RecycledBuffers


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_a_buffer_is_reused_only_after_every_view_of_it_is_gone():
    pool = RecycledBuffers(keep=2)
    first = pool.take(1000)
    first[:] = 7
    address = _address(first)
    view = first[10:20]
    held = memoryview(first[500:])
    del first
    gc.collect()
    second = pool.take(1000)  # views of the first are alive: a new block
    assert _address(second) != address
    assert (view == 7).all() and bytes(held[:3]) == b"\x07\x07\x07"
    del view, held
    gc.collect()
    third = pool.take(900)  # now the first block is free again
    assert _address(third) == address and third.shape[0] >= 900
    del second, third
    gc.collect()
    assert pool.take(10_000).shape[0] >= 10_000  # too small blocks are not handed out
