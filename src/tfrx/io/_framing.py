"""Sizes of TFRecord framing, as TensorFlow's record_writer.cc lays a record out.

A record is a header (the payload length as a little-endian uint64, then
its masked CRC-32C as a uint32), the payload, and a footer (the payload's
masked CRC-32C as a uint32).
"""

from __future__ import annotations

__all__ = ["HEADER_BYTES", "FOOTER_BYTES", "FRAMING_BYTES"]

HEADER_BYTES = 12
FOOTER_BYTES = 4
FRAMING_BYTES = HEADER_BYTES + FOOTER_BYTES
