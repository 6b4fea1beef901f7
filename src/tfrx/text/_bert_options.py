"""The options of BERT pre-training data creation, with the reference's names and defaults."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

__all__ = ["BertDataOptions"]


@dataclass(frozen=True)
class BertDataOptions:
    """Flags of ``create_pretraining_data`` (google-research/bert, TF Model Garden) plus Cerebras' variants.

    Reference flags: ``max_seq_length``, ``max_predictions_per_seq``,
    ``masked_lm_prob``, ``short_seq_prob``, ``dupe_factor``, ``random_seed``,
    ``do_lower_case``, ``do_whole_word_mask``.

    Cerebras Model Zoo variants: ``inverted_mask`` (``input_mask`` is 1 on
    padding, 0 on tokens), ``mlm_only`` (single-segment sequences, no
    ``segment_ids`` / ``next_sentence_labels``), ``disable_masking`` (the
    original tokens are written and no ``masked_lm_*`` features: masking is
    left to the training input pipeline), ``min_short_seq_length`` (the
    shortest target length a short-sequence draw may give; the reference
    draws from 2).
    """

    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    dupe_factor: int = 10
    random_seed: int = 12345
    do_lower_case: bool = True
    do_whole_word_mask: bool = False
    inverted_mask: bool = False
    mlm_only: bool = False
    disable_masking: bool = False
    min_short_seq_length: int = 2

    def __post_init__(self) -> None:
        def bad(name, want):
            raise ValueError(f"{name} must be {want}, got {getattr(self, name)!r}")

        if not isinstance(self.max_seq_length, int) or self.max_seq_length < 5:
            bad("max_seq_length", "an integer >= 5 ([CLS] A [SEP] B [SEP] needs 5 positions)")
        if not isinstance(self.max_predictions_per_seq, int) or self.max_predictions_per_seq < 1:
            bad("max_predictions_per_seq", "a positive integer")
        if not 0.0 <= float(self.masked_lm_prob) <= 1.0:
            bad("masked_lm_prob", "in [0, 1]")
        if not 0.0 <= float(self.short_seq_prob) <= 1.0:
            bad("short_seq_prob", "in [0, 1]")
        if not isinstance(self.dupe_factor, int) or self.dupe_factor < 1:
            bad("dupe_factor", "a positive integer")
        if not isinstance(self.random_seed, int):
            bad("random_seed", "an integer")
        if not isinstance(self.min_short_seq_length, int) or not 2 <= self.min_short_seq_length <= self.max_num_tokens:
            bad("min_short_seq_length", f"an integer in [2, max_seq_length - 3 = {self.max_num_tokens}]")

    @property
    def max_num_tokens(self) -> int:
        """Room for word pieces: ``max_seq_length`` less ``[CLS]`` and the ``[SEP]`` s."""
        return self.max_seq_length - (2 if self.mlm_only else 3)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]
