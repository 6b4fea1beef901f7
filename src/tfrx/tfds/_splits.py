"""TFDS split strings (``"train[:10%]+test"``) resolved to per-shard (file, skip, take) reads.

The grammar and the arithmetic are TFDS's own (``tensorflow_datasets/core/splits.py``
and ``subsplits_utils.py``): percent boundaries round to the closest example
(Python's ``round``, so halves go to even) unless ``rounding="pct1_dropremainder"``,
``shard`` units count whole shards, negative boundaries count from the end,
``all`` is every split, and ``even_splits`` gives the first sub-splits one
extra example each when the split does not divide evenly.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from typing import Union

_SUB_SPEC_RE = re.compile(r"^(?P<split_name>[\w-]+)(\[(?P<split_selector>[\d\w%:.-]+)\])?$")
_SLICE_RE = re.compile(r"^((?P<val>-?[\d_.]+)(?P<unit>(?:%|shard))?)?$")


@dataclasses.dataclass(frozen=True)
class ReadInstruction:
    """One ``name[from:to]`` part of a split string (``unit``: ``"abs"``, ``"%"`` or ``"shard"``)."""

    split_name: str
    from_: float | int | None = None
    to: float | int | None = None
    unit: str = "abs"
    rounding: str = "closest"

    def __post_init__(self) -> None:
        if self.unit not in ("abs", "%", "shard"):
            raise ValueError(f"split unit must be 'abs', '%' or 'shard', got {self.unit!r}")
        if self.rounding not in ("closest", "pct1_dropremainder"):
            raise ValueError(f"rounding must be 'closest' or 'pct1_dropremainder', got {self.rounding!r}")
        if self.unit == "%" and (abs(self.from_ or 0) > 100 or abs(self.to or 0) > 100):
            raise ValueError(f"percent slice boundaries must lie in [-100, 100], got {self}")

    def __add__(self, other):
        return _Plus((self, other))

    def __radd__(self, other):
        return _Plus((other, self))

    def __str__(self) -> str:
        unit = "" if self.unit == "abs" else self.unit
        if self.from_ is None and self.to is None:
            return self.split_name
        f = "" if self.from_ is None else f"{self.from_:g}{unit}"
        t = "" if self.to is None else f"{self.to:g}{unit}"
        return f"{self.split_name}[{f}:{t}]"


@dataclasses.dataclass(frozen=True)
class EvenSplit:
    """Sub-split ``index`` of ``count`` of ``split`` (what :func:`even_splits` returns)."""

    split: str
    index: int
    count: int
    drop_remainder: bool = False

    def __add__(self, other):
        return _Plus((self, other))

    def __radd__(self, other):
        return _Plus((other, self))


@dataclasses.dataclass(frozen=True)
class _Plus:
    parts: tuple

    def __add__(self, other):
        return _Plus(self.parts + (other,))

    def __radd__(self, other):
        return _Plus((other,) + self.parts)


SplitArg = Union[str, ReadInstruction, EvenSplit, _Plus]  # noqa: UP007 - a runtime alias


def even_splits(split: str, n: int, *, drop_remainder: bool = False) -> list[EvenSplit]:
    """``tfds.even_splits``: ``n`` non-overlapping sub-splits of ``split`` of (nearly) equal size.

    With 11 examples and ``n=3`` the sub-splits hold 4, 4 and 3 examples; with
    ``drop_remainder=True`` 3, 3 and 3. They combine with ``+`` and with strings.
    """
    if n <= 0:
        raise ValueError(f"even_splits: n must be positive, got {n}")
    return [EvenSplit(split, i, n, drop_remainder) for i in range(n)]


def _parse_one(spec: str) -> list[ReadInstruction] | str:
    res = _SUB_SPEC_RE.match(spec)
    err = f"unrecognized split {spec!r}; expected e.g. 'train', 'train[:10%]', 'train[1000:2000]', 'train[2shard]'"
    if not res:
        raise ValueError(err)
    name, selector = res.group("split_name"), res.group("split_selector")
    if name == "all":
        if selector:
            raise ValueError(f"split {spec!r}: 'all' cannot be sliced (TFDS does not support it either)")
        return "all"
    if selector is None:
        return [ReadInstruction(name)]
    matches = [_SLICE_RE.match(x) for x in selector.split(":")]
    slices = [m for m in matches if m is not None]
    if len(slices) != len(matches) or not any(m.group(0) for m in slices):
        raise ValueError(err)
    to: str | int | None
    if len(slices) == 1:
        (m,) = slices
        from_, to, unit = m["val"], int(m["val"]) + 1 if m["val"] else None, m["unit"] or "abs"
        if unit != "shard":
            raise ValueError(f"split {spec!r}: absolute and percent boundaries need the slice syntax [from:to]")
    elif len(slices) == 2:
        m0, m1 = slices
        from_, to, unit = m0["val"], m1["val"], m0["unit"] or m1["unit"] or "abs"
    else:
        raise ValueError(err)
    conv = float if unit == "%" else int
    return [ReadInstruction(name, None if from_ is None else conv(from_), None if to is None else conv(to), unit)]


def _pct_closest(boundary, n: int) -> int:
    return round(boundary * n / 100.0)


def _pct1(boundary, n: int) -> int:
    if n < 100:
        raise ValueError("'pct1_dropremainder' rounding on a split of fewer than 100 examples is always empty")
    return boundary * math.trunc(n / 100.0)


def _absolute(ri: ReadInstruction, lengths: Mapping[str, Sequence[int]]) -> tuple[str, int, int]:
    """``(split, start, stop)`` of one instruction, TFDS's ``_rel_to_abs_instr``."""
    if ri.split_name not in lengths:
        raise ValueError(f"unknown split {ri.split_name!r}; the dataset has {sorted(lengths)}")
    shards = list(lengths[ri.split_name])
    n = sum(shards)
    f, t = ri.from_, ri.to
    if ri.unit == "%":
        conv = _pct_closest if ri.rounding == "closest" else _pct1
        f = 0 if f is None else conv(f, n)
        t = n if t is None else conv(t, n)
    elif ri.unit == "shard":
        f = 0 if f is None else sum(shards[: int(f)])
        if t is not None and t <= 0:
            t = len(shards) + t
        t = n if t is None else sum(shards[: int(t)])
    else:
        f = 0 if f is None else f
        t = n if t is None else t
    if abs(f) > n or abs(t) > n:
        raise ValueError(
            f"requested slice [{f or ''}:{t or ''}] of split {ri.split_name!r} is incompatible with its {n} examples"
        )
    if f < 0:
        f = n + f
    if t < 0:
        t = n + t
    return ri.split_name, int(f), int(t)


def resolve(split: SplitArg, lengths: Mapping[str, Sequence[int]]) -> list[tuple[str, int, int]]:
    """The ``(split name, start, stop)`` ranges ``split`` selects, in reading order.

    ``lengths`` maps each split name to its shard lengths. ``start >= stop``
    selects nothing (TFDS reads such a slice as empty too).
    """
    if isinstance(split, _Plus):
        return [r for part in split.parts for r in resolve(part, lengths)]
    if isinstance(split, ReadInstruction):
        return [_absolute(split, lengths)]
    if isinstance(split, EvenSplit):
        out = []
        for name, start, end in resolve(split.split, lengths):
            num = end - start
            per = num // split.count
            s, e = start + per * split.index, start + per * (split.index + 1)
            rest = num % split.count
            if rest and not split.drop_remainder:
                s += min(split.index, rest)
                e += min(split.index + 1, rest)
            out.append((name, s, e))
        return out
    if not isinstance(split, str):
        raise TypeError(
            f"split must be a string, a ReadInstruction or an even_splits() item, got {type(split).__name__}"
        )
    out = []
    for part in split.split("+"):
        parsed = _parse_one(part.strip())
        if isinstance(parsed, str):  # "all"
            out.extend((name, 0, sum(sh)) for name, sh in lengths.items())
        else:
            out.extend(_absolute(ri, lengths) for ri in parsed)
    return out


def file_instructions(start: int, stop: int, files: Sequence[str], shard_lengths: Sequence[int]):
    """``[(file, skip, take)]`` reading examples ``[start, stop)`` of a split, as TFDS's ``get_file_instructions``.

    ``take`` is always a count here. TFDS's quirk for reversed slices is kept so
    both select the same examples: when ``stop == start - 1`` inside one shard
    TFDS computes ``take=-1``, which means "to the end of the shard"; a slice
    reversed by more fails in TFDS when read, and raises ``ValueError`` here.
    """
    out, index_start, index_end = [], 0, 0
    for path, length in zip(files, shard_lengths):
        if not length:
            continue
        index_end += length
        if start < index_end and stop > index_start:
            skip = start - index_start if start > index_start else 0
            take = stop - index_start - skip if stop < index_end else -1
            if take == 0:
                continue
            if take < -1:
                raise ValueError(f"split slice [{start}:{stop}] ends before it starts; TFDS cannot read it either")
            out.append((path, skip, length - skip if take == -1 else take))
        index_start += length
    return out


# TFDS's default ReadConfig: interleave_cycle_length=16 (1 for datasets with disable_shuffling), block_length 16.
DEFAULT_CYCLE_LENGTH = 16
DEFAULT_BLOCK_LENGTH = 16


def interleave_order(takes: Sequence[int], cycle_length: int, block_length: int):
    """The order ``tf.data.Dataset.interleave`` reads files holding ``takes`` examples in, as indices.

    Index ``j`` counts the examples of all files one after the other (file by
    file). ``cycle_length`` files are open at once and ``block_length``
    consecutive examples are taken from each in turn; a file that ends is
    replaced by the next one in the same slot, which is read when the cycle
    comes back to it (tf.data's rule, also that of its deterministic parallel
    interleave, which TFDS uses). ``cycle_length=1`` is file order.
    """
    import heapq

    import numpy as np

    if cycle_length < 1 or block_length < 1:
        raise ValueError(
            f"interleave_cycle_length and interleave_block_length must be positive, got {cycle_length}, {block_length}"
        )
    t = np.asarray([int(x) for x in takes], dtype=np.int64)
    total = int(t.sum()) if len(t) else 0
    if cycle_length == 1 or len(t) <= 1:
        return np.arange(total, dtype=np.int64)
    # tf.data visits the slots round after round. A file opened in round r (in the
    # visit that finds its slot empty) is read in rounds r, r+1, ... and its slot
    # finds it ended in round r + take // block_length; the next file opens there in
    # the round after. Files are handed out in visiting order: (round, slot).
    first_round = np.empty(len(t), np.int64)
    slot_of = np.empty(len(t), np.int64)
    free = [(0, s) for s in range(min(cycle_length, len(t)))]
    for f, take in enumerate(t.tolist()):
        r, slot = heapq.heappop(free)
        first_round[f], slot_of[f] = r, slot
        heapq.heappush(free, (r + take // block_length + 1, slot))
    # Every block of every file, ordered by the (round, slot) visit that reads it.
    blocks = -(-t // block_length)
    owner = np.repeat(np.arange(len(t)), blocks)
    j = np.arange(len(owner)) - np.repeat(np.cumsum(blocks) - blocks, blocks)
    key = (first_round[owner] + j) * cycle_length + slot_of[owner]
    order = np.argsort(key, kind="stable")
    starts = np.cumsum(t) - t
    block_start = (starts[owner] + j * block_length)[order]
    block_len = np.minimum(block_length, t[owner] - j * block_length)[order]
    offsets = np.arange(total) - np.repeat(np.cumsum(block_len) - block_len, block_len)
    return np.repeat(block_start, block_len) + offsets
