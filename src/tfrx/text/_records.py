"""The record layout of BERT pre-training data: the feature spec and instances -> serialized Examples."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["feature_spec", "instances_to_columns", "encode_columns"]


def feature_spec(
    *,
    max_seq_length: int = 128,
    max_predictions_per_seq: int = 20,
    mlm_only: bool = False,
    disable_masking: bool = False,
) -> dict:
    """The parse spec of the records (``tfrx.FixedLenFeature`` per feature), as BERT's input function declares it.

    ``input_ids``, ``input_mask``, ``segment_ids``: int64[max_seq_length];
    ``masked_lm_positions``, ``masked_lm_ids``: int64[max_predictions_per_seq];
    ``masked_lm_weights``: float32[max_predictions_per_seq];
    ``next_sentence_labels``: int64[1]. ``mlm_only`` drops ``segment_ids`` and
    ``next_sentence_labels``; ``disable_masking`` drops the ``masked_lm_*``
    features.
    """
    from tfrx.dtypes import float32, int64
    from tfrx.parsing import FixedLenFeature

    spec = {
        "input_ids": FixedLenFeature([max_seq_length], int64),
        "input_mask": FixedLenFeature([max_seq_length], int64),
    }
    if not mlm_only:
        spec["segment_ids"] = FixedLenFeature([max_seq_length], int64)
    if not disable_masking:
        spec["masked_lm_positions"] = FixedLenFeature([max_predictions_per_seq], int64)
        spec["masked_lm_ids"] = FixedLenFeature([max_predictions_per_seq], int64)
        spec["masked_lm_weights"] = FixedLenFeature([max_predictions_per_seq], float32)
    if not mlm_only:
        spec["next_sentence_labels"] = FixedLenFeature([1], int64)
    return spec


def instances_to_columns(instances: Sequence, options) -> dict[str, np.ndarray]:
    """Padded columns of :class:`tfrx.text._exact.Instance` s (zeros after the tokens and predictions)."""
    n = len(instances)
    seq, preds = options.max_seq_length, options.max_predictions_per_seq
    ids = np.zeros((n, seq), np.int64)
    lengths = np.zeros(n, np.int64)
    num_a = np.zeros(n, np.int64)
    nsp = np.zeros((n, 1), np.int64)
    positions = np.zeros((n, preds), np.int64)
    labels = np.zeros((n, preds), np.int64)
    npred = np.zeros(n, np.int64)
    for r, inst in enumerate(instances):
        k = len(inst.input_ids)
        ids[r, :k] = inst.input_ids
        lengths[r] = k
        num_a[r] = inst.num_a
        nsp[r, 0] = inst.is_random_next
        m = len(inst.masked_lm_positions)
        if m:
            positions[r, :m] = inst.masked_lm_positions
            labels[r, :m] = inst.masked_lm_ids
        npred[r] = m
    return assemble_columns(ids, lengths, num_a, nsp, positions, labels, npred, options)


def assemble_columns(ids, lengths, num_a, nsp, positions, labels, npred, options) -> dict[str, np.ndarray]:
    """The feature columns from per-instance arrays (shared by the exact and fast modes)."""
    pos = np.arange(options.max_seq_length)
    real = pos < lengths[:, None]
    mask = (~real if options.inverted_mask else real).astype(np.int64)
    cols = {"input_ids": ids, "input_mask": mask}
    if not options.mlm_only:
        cols["segment_ids"] = ((pos >= num_a[:, None]) & real).astype(np.int64)
    if not options.disable_masking:
        cols["masked_lm_positions"] = positions
        cols["masked_lm_ids"] = labels
        cols["masked_lm_weights"] = (np.arange(options.max_predictions_per_seq) < npred[:, None]).astype(np.float32)
    if not options.mlm_only:
        cols["next_sentence_labels"] = nsp
    return cols


def encode_columns(columns: dict[str, np.ndarray]):
    """One :class:`tfrx.RecordBatch` of serialized ``tf.train.Example`` s."""
    from tfrx.codec import encode_examples

    return encode_examples(
        columns, kinds={k: ("float" if v.dtype.kind == "f" else "int64") for k, v in columns.items()}, as_batch=True
    )
