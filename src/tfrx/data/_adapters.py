"""Framework hand-offs as Dataset methods; the frameworks are imported only when called."""

from __future__ import annotations

from tfrx.data._dataset import Dataset, transformation

__all__: list[str] = []


@transformation
def to_torch(self: Dataset, **kwargs):
    """A ``torch.utils.data.IterableDataset`` over this pipeline (see :class:`tfrx.integrations.torch.TorchIterableDataset`)."""
    from tfrx.integrations.torch import TorchIterableDataset

    return TorchIterableDataset(self, **kwargs)


@transformation
def to_jax(self: Dataset, **kwargs):
    """An iterator of batches placed on JAX devices (see :func:`tfrx.integrations.jax.device_put_iterator`)."""
    from tfrx.integrations.jax import device_put_iterator

    return device_put_iterator(self, **kwargs)


@transformation
def to_keras(self: Dataset, **kwargs):
    """An object ``keras.Model.fit`` accepts with any backend (see :func:`tfrx.integrations.keras.as_keras`)."""
    from tfrx.integrations.keras import as_keras

    return as_keras(self, **kwargs)
