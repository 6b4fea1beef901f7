"""Schema-less decoding of serialized Examples to dicts of NumPy arrays."""

from __future__ import annotations

from typing import NamedTuple

from tfrx import _native
from tfrx.errors import DecodeError
from tfrx.options import deprecated_alias

__all__ = [
    "decode_example",
    "decode_examples",
    "decode_sequence_example",
    "example_to_dict",
    "sequence_example_to_dict",
]


def decode_example(data, *, keep_empty: bool = False) -> dict:
    """Decodes one ``tf.train.Example`` in a single native pass: its bytes, or the message
    (tfrx's, TensorFlow's, or any with the same schema).

    Returns ``{name: value}`` with int64 features as ``np.int64`` arrays, float
    features as ``np.float32`` arrays and bytes features as lists of
    ``bytes``; an empty list of a kind is an empty array (or ``[]``). A
    Feature with no kind set (how CSV converters write a missing value) is
    left out, or maps to ``None`` with ``keep_empty=True``.

    Every valid encoding is accepted with protobuf's semantics: packed and
    unpacked values, map entries in any field order or missing key/value,
    duplicate names (the last wins), unknown fields, concatenated messages.
    Malformed input - and names that are not valid UTF-8, which protobuf
    rejects as well - raises :class:`tfrx.DecodeError` with ``offset`` set to
    the byte where decoding failed.
    """
    return _native.decode_example(_serialized(data, "Example"), keep_empty=keep_empty)


def decode_examples(records, *, keep_empty: bool = False) -> list[dict]:
    """:func:`decode_example` of each record (a RecordBatch, or a sequence of bytes)."""
    out = []
    decode = _native.decode_example
    for i, record in enumerate(records):
        try:
            out.append(decode(record, keep_empty=keep_empty))
        except DecodeError as e:
            raise DecodeError(f"record {i}: {e}", offset=e.offset, record_index=i) from None
    return out


class DecodedSequenceExample(NamedTuple):
    """A decoded SequenceExample: unpacks as ``context, feature_lists``."""

    context: dict
    feature_lists: dict


def decode_sequence_example(data, *, keep_empty: bool = False) -> DecodedSequenceExample:
    """Decodes one ``tf.train.SequenceExample`` (its bytes or the message) to a
    :class:`DecodedSequenceExample` ``(context, feature_lists)``.

    ``context`` is as :func:`decode_example` returns; ``feature_lists`` maps
    each name to a list with one value per step (an array or a list of
    bytes; ``None`` for a step whose Feature has no kind).
    """
    decoded = _native.decode_sequence_example(_serialized(data, "SequenceExample"), keep_empty=keep_empty)
    return DecodedSequenceExample(decoded.context, decoded.feature_lists)


def _serialized(message_or_bytes, expected: str):
    if type(message_or_bytes) is bytes:
        return message_or_bytes
    serialize = getattr(message_or_bytes, "SerializeToString", None)
    if serialize is None:
        return message_or_bytes
    name = message_or_bytes.DESCRIPTOR.full_name.split(".")[-1]
    if name != expected:
        other = "decode_sequence_example" if name == "SequenceExample" else "decode_example"
        raise TypeError(f"expected a {expected}, got a {name}; use tfrx.{other}")
    return serialize()


example_to_dict = deprecated_alias(decode_example, "tfrx.example_to_dict", "tfrx.decode_example")
sequence_example_to_dict = deprecated_alias(
    decode_sequence_example, "tfrx.sequence_example_to_dict", "tfrx.decode_sequence_example"
)
