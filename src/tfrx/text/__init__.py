"""Text to BERT pre-training TFRecords: WordPiece tokenization, instance creation, reading back.

``tfrx.text`` is imported on its own (``import tfrx.text``); the fast mode
needs the ``text`` extra (Hugging Face ``tokenizers``, ``pysbd``).
"""

from tfrx.text._bert import BertDataResult, create_pretraining_data, read
from tfrx.text._bert_options import BertDataOptions
from tfrx.text._records import feature_spec
from tfrx.text._tokenization import BasicTokenizer, FullTokenizer, Vocab, WordpieceTokenizer, load_vocab

__all__ = [
    "create_pretraining_data",
    "read",
    "feature_spec",
    "BertDataOptions",
    "BertDataResult",
    "Vocab",
    "load_vocab",
    "FullTokenizer",
    "BasicTokenizer",
    "WordpieceTokenizer",
]
