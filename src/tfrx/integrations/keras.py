"""Keras 3 adapter: ``model.fit(tfrx.integrations.keras.as_keras(ds))`` (or ``ds.to_keras()``).

After ``tfrx.integrations.keras.register()``, ``model.fit(ds)`` accepts tfrx datasets
directly: it wraps Keras's data-adapter lookup (``keras.src`` internals, so
it is opt-in) to recognise them. Keras picks adapters by type only (its own
classes, or TensorFlow / torch / Grain classes by name), so without either
step it rejects a tfrx dataset; see docs/pipeline.md.

The adapter is a Keras ``DataAdapter``, which ``fit`` / ``evaluate`` /
``predict`` accept as is with the JAX, PyTorch and TensorFlow backends. Each
epoch iterates the pipeline again (seeded shuffles reshuffle). Elements must
be ``(inputs, targets)`` or ``(inputs, targets, sample_weights)`` tuples of
NumPy batches, as Keras expects from a ``tf.data`` dataset: batch in tfrx and
map dicts to tuples first. The number of steps per epoch is the dataset's
cardinality when known, otherwise the epoch ends when the data does.
"""

from __future__ import annotations

from keras.src.trainers.data_adapters import data_adapter_utils
from keras.src.trainers.data_adapters.data_adapter import DataAdapter

from tfrx.data.dataset import Dataset

__all__ = ["KerasDataAdapter", "as_keras", "register"]


class KerasDataAdapter(DataAdapter):
    """A tfrx pipeline as a Keras 3 ``DataAdapter``."""

    def __init__(self, dataset: Dataset) -> None:
        if not isinstance(dataset, Dataset):
            raise TypeError(f"expected a tfrx Dataset, got {type(dataset).__name__}")
        self.dataset = dataset
        self._epoch = 0

    def _elements(self):
        it = self.dataset.iterator(epoch=self._epoch)
        self._epoch += 1
        try:
            for element in it:
                if not isinstance(element, tuple):
                    raise TypeError(
                        "Keras expects (inputs, targets[, sample_weights]) tuples; "
                        f"the dataset yields {type(element).__name__} (map it to a tuple first)"
                    )
                yield element
        finally:
            it.close()

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
        return n if n >= 0 else None

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
            return KerasDataAdapter(x)
        return current(x, *args, **kwargs)

    setattr(get_data_adapter, "_tfrx", True)
    data_adapters.get_data_adapter = get_data_adapter
