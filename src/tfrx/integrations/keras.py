"""Keras 3 adapter: ``model.fit(ds)`` on a tfrx dataset, as on a ``tf.data`` one.

Keras picks adapters by type only (its own classes, or TensorFlow / torch /
Grain classes by name), so this module wraps Keras's data-adapter lookup
(``keras.src`` internals) to recognise tfrx datasets: importing
``tfrx.keras`` (which ``ds.to_keras()`` and ``tfrx.tf.keras`` do) registers
it, and ``register()`` is kept for code that calls it. ``as_keras(ds)`` /
``ds.to_keras()`` give the adapter itself; see docs/pipeline.md.

The adapter is a Keras ``DataAdapter``, which ``fit`` / ``evaluate`` /
``predict`` accept as is with the JAX, PyTorch and TensorFlow backends. Each
epoch iterates the pipeline again (seeded shuffles reshuffle). Elements must
be ``(inputs, targets)`` or ``(inputs, targets, sample_weights)`` tuples of
NumPy batches, as Keras expects from a ``tf.data`` dataset: batch in tfrx and
map dicts to tuples first. The number of steps per epoch is the dataset's
cardinality when known, otherwise the epoch ends when the data does.
"""

from __future__ import annotations

import warnings
import weakref

from keras.src.trainers.data_adapters import data_adapter_utils
from keras.src.trainers.data_adapters.data_adapter import DataAdapter

from tfrx.data._dataset import Dataset

__all__ = ["KerasDataAdapter", "as_keras", "register"]


# Batches per complete pass, learned from a pass over a dataset of unknown cardinality.
_batches_per_pass: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_RAN_OUT = "Your input ran out of data"  # Keras's warning at the end of an input of unknown length


class KerasDataAdapter(DataAdapter):
    """A tfrx pipeline as a Keras 3 ``DataAdapter``.

    ``quiet_end`` (set by ``model.fit(ds)`` when no ``steps_per_epoch`` is
    given) keeps Keras's "ran out of data" warning for the natural end of a
    pass of unknown length, which is no error there.
    """

    def __init__(self, dataset: Dataset, *, quiet_end: bool = False) -> None:
        if not isinstance(dataset, Dataset):
            raise TypeError(f"expected a tfrx Dataset, got {type(dataset).__name__}")
        self.dataset = dataset
        self._epoch = 0
        self._quiet_end = quiet_end
        self._quieting: list | None = None

    def _elements(self):
        it = self.dataset.iterator(epoch=self._epoch)
        self._epoch += 1
        count = 0
        try:
            for element in it:
                if not isinstance(element, tuple):
                    raise TypeError(
                        "Keras expects (inputs, targets[, sample_weights]) tuples; "
                        f"the dataset yields {type(element).__name__} (map it to a tuple first)"
                    )
                count += 1
                yield element
        finally:
            it.close()
        _batches_per_pass[self.dataset] = count
        if self._quiet_end and self.num_batches is not None and self._quieting is None:
            # Keras warns right after this generator ends and then calls on_epoch_end, which lifts this filter.
            warnings.filterwarnings("ignore", message=_RAN_OUT)
            self._quieting = warnings.filters[0]

    def on_epoch_end(self):
        if self._quieting is not None:
            # An "ignore" filter leaves nothing in warning registries, so taking it out needs no reset.
            if self._quieting in warnings.filters:
                warnings.filters.remove(self._quieting)
            self._quieting = None

    def get_numpy_iterator(self):
        return self._elements()

    def get_jax_iterator(self):
        return data_adapter_utils.get_jax_iterator(self._elements())

    def get_torch_dataloader(self):
        return data_adapter_utils.get_torch_dataloader(self._elements())

    def get_tf_dataset(self):
        import tensorflow as tf

        first = next(iter(self.dataset))
        signature = data_adapter_utils.get_tensor_spec([first])
        return tf.data.Dataset.from_generator(self._elements, output_signature=signature)

    @property
    def num_batches(self):
        n = self.dataset.cardinality()
        if n >= 0:
            return n
        return None if n == -1 else _batches_per_pass.get(self.dataset)

    @property
    def batch_size(self):
        return None

    @property
    def has_partial_batch(self):
        return None

    @property
    def partial_batch_size(self):
        return None


def as_keras(dataset: Dataset) -> KerasDataAdapter:
    """An object ``keras.Model.fit`` accepts, iterating ``dataset`` once per epoch."""
    return KerasDataAdapter(dataset)


def register() -> None:
    """Lets ``fit`` / ``evaluate`` / ``predict`` take tfrx datasets directly (idempotent)."""
    from keras.src.trainers import data_adapters

    current = data_adapters.get_data_adapter
    if getattr(current, "_tfrx", False):
        return

    def get_data_adapter(x, *args, **kwargs):
        if isinstance(x, Dataset):
            if kwargs.get("y") is not None or (args and args[0] is not None):
                raise ValueError("pass the targets inside the tfrx dataset, as (inputs, targets) tuples, not as y=")
            return KerasDataAdapter(x, quiet_end=kwargs.get("steps_per_epoch") is None)
        return current(x, *args, **kwargs)

    setattr(get_data_adapter, "_tfrx", True)
    data_adapters.get_data_adapter = get_data_adapter


register()
