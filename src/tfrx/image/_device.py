"""JPEG decoding and the ImageNet training crop for whole batches on a GPU (``device="cuda"``).

``decode_jpeg(contents, device=...)`` and ``decode_random_crop_and_resize(
contents, size, device=...)`` (through ``tfrx.image``'s functions of those
names) send a whole batch of encoded images to the device's JPEG decoder in
one call, then crop, resize (bilinear, ``tf.image.resize``'s half-pixel
geometry), flip and normalise the whole batch in a few batched tensor ops:
the crops are gathered into one padded batch and resampled by one
``grid_sample`` whose sampling grid carries each image's crop window and
flip, and the normalisation is one multiply-add. The output is a torch
tensor on the device (it exports DLPack, so ``jax.dlpack.from_dlpack`` and
``cupy.from_dlpack`` take it without a copy).

The crops and flips are drawn on the CPU by tfrx's seeded sampler, the very
draws of the CPU path (:func:`sample_crops`), so switching the device
changes the speed, not the statistics. The decoder, by preference (see
docs/image.md): NVIDIA nvImageCodec's batched decoder (the hardware JPEG
engine where the GPU has one), else torchvision's batched
``decode_jpeg(list, device="cuda")`` (nvJPEG). ``device="cpu"`` runs the
same code on the CPU with torchvision's CPU decoder, or tfrx's own
``decode_jpeg`` where torchvision is missing: a stand-in for tests and
machines without a GPU. Each dependency is optional (``pip install
'tfrx[gpu]'``); a missing one is an ImportError naming the extra.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, NamedTuple

import numpy as np

from tfrx.image._boxes import _check_ranges
from tfrx.image._common import _as_bytes, _optional
from tfrx.image._crop_resize import _check_channels, _check_size, _draw_crops, _items, _stats
from tfrx.image._crop_resize import decode_random_crop_and_resize as _cpu_decode_random_crop_and_resize
from tfrx.image._jpeg import decode_jpeg as _cpu_decode_jpeg
from tfrx.options import renamed_arguments

__all__ = [
    "CropSample",
    "decode_jpeg",
    "decode_jpeg_on",
    "decode_random_crop_and_resize",
    "device_jpeg_backend",
    "sample_crops",
]

_EXTRA = "pip install 'tfrx[gpu]' (PyTorch, torchvision and NVIDIA nvImageCodec)"


def _torch() -> Any:
    torch = _optional("torch")
    if torch is None:
        raise ImportError(f"decoding images on a device needs PyTorch: {_EXTRA}")
    return torch


@functools.cache  # (looked up once: a failed import is retried on every call otherwise)
def _nvimgcodec() -> Any:
    try:
        from nvidia import nvimgcodec
    except ImportError:
        return None
    return nvimgcodec


@functools.cache
def _torchvision_io() -> Any:
    try:
        import torchvision.io as io

        io.decode_jpeg  # noqa: B018  (present since torchvision 0.8; its batched form since 0.19)
    except Exception:  # noqa: BLE001  (a torchvision whose extension does not load is as good as none)
        return None
    return io


def _device(device: Any) -> Any:
    torch = _torch()
    dev = torch.device(device)
    if dev.type not in ("cuda", "cpu"):
        raise ValueError(f"device must be 'cuda', 'cuda:N' or 'cpu', got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            f"device={str(device)!r} needs a CUDA GPU, and torch.cuda.is_available() is False; "
            "pass device=None for the CPU decoders (NumPy arrays), or device='cpu' for this path on the CPU"
        )
    return dev


def device_jpeg_backend(device: Any = "cuda") -> str:
    """The JPEG decoder ``device`` would use: ``"nvimgcodec"``, ``"torchvision"``, or on the CPU
    ``"torchvision"`` / ``"tfrx"``; raises ImportError naming the extra when a GPU has none."""
    kind = _device(device).type
    if kind == "cuda":
        if _nvimgcodec() is not None:
            return "nvimgcodec"
        if _torchvision_io() is not None:
            return "torchvision"
        raise ImportError(f"decoding JPEG on the GPU needs nvImageCodec or torchvision: {_EXTRA}")
    return "torchvision" if _torchvision_io() is not None else "tfrx"


# ------------------------------------------------------------------ decoders: a batch in, (C, H, W) uint8 tensors out

_decoders: dict[tuple[str, int | None], Any] = {}
_lock = threading.Lock()


def _nvimgcodec_decoder(dev: Any) -> Any:
    key = ("nvimgcodec", dev.index)
    with _lock:
        decoder = _decoders.get(key)
        if decoder is None:
            torch = _torch()
            index = dev.index if dev.index is not None else torch.cuda.current_device()
            decoder = _decoders[key] = _nvimgcodec().Decoder(device_id=index)
    return decoder


def _decode_nvimgcodec(datas: list[Any], channels: int, dev: Any) -> list[Any]:
    torch = _torch()
    nvimgcodec = _nvimgcodec()
    spec = {0: nvimgcodec.ColorSpec.UNCHANGED, 1: nvimgcodec.ColorSpec.GRAY, 3: nvimgcodec.ColorSpec.RGB}[channels]
    params = nvimgcodec.DecodeParams(color_spec=spec, allow_any_depth=False)
    stream = torch.cuda.current_stream(dev).cuda_stream
    images = _nvimgcodec_decoder(dev).decode([bytes(d) for d in datas], params=params, cuda_stream=stream)
    out = []
    for i, image in enumerate(images):
        if image is None:
            raise ValueError(f"nvImageCodec could not decode image {i} of the batch (not a JPEG it supports?)")
        hwc = torch.as_tensor(image, device=dev)  # (H, W, C) through __cuda_array_interface__, no copy
        out.append(hwc.permute(2, 0, 1) if hwc.ndim == 3 else hwc.unsqueeze(0))
    return out


def _decode_torchvision(io: Any, datas: list[Any], channels: int, dev: Any) -> list[Any]:
    torch = _torch()
    mode = {0: io.ImageReadMode.UNCHANGED, 1: io.ImageReadMode.GRAY, 3: io.ImageReadMode.RGB}[channels]
    encoded = [torch.frombuffer(bytearray(d), dtype=torch.uint8) for d in datas]
    if dev.type == "cuda":
        return list(io.decode_jpeg(encoded, mode=mode, device=dev))  # one batched nvJPEG call
    return [io.decode_jpeg(e, mode=mode) for e in encoded]


def _decode_tfrx(datas: list[Any], channels: int) -> list[Any]:
    torch = _torch()
    decoded = _cpu_decode_jpeg(list(datas), channels)  # one call: the batch on tfrx's threads
    images = list(decoded) if isinstance(decoded, np.ndarray) else decoded
    return [torch.from_numpy(np.ascontiguousarray(img)).permute(2, 0, 1) for img in images]


def _decode(datas: list[Any], channels: int, dev: Any) -> list[Any]:
    """The batch decoded on ``dev``: one (C, H, W) uint8 tensor per image."""
    backend = device_jpeg_backend(dev)
    if backend == "nvimgcodec":
        try:
            return _decode_nvimgcodec(datas, channels, dev)
        except TypeError:  # an nvImageCodec whose Python API differs from the one this was written for
            io = _torchvision_io()
            if io is None:
                raise
            return _decode_torchvision(io, datas, channels, dev)
    if backend == "torchvision":
        return _decode_torchvision(_torchvision_io(), datas, channels, dev)
    return _decode_tfrx(datas, channels)


def decode_jpeg_on(contents: Any, channels: int, device: Any) -> Any:
    """``decode_jpeg`` on ``device``: (h, w, c) uint8 tensors; a batch stacked when all shapes agree."""
    if channels not in (0, 1, 3):
        raise ValueError(f"decode_jpeg: channels must be 0, 1 or 3, got {channels!r}")
    dev = _device(device)
    items, single = _items(contents)
    images = [img.permute(1, 2, 0) for img in _decode([_as_bytes(c) for c in items], channels, dev)]
    if single:
        return images[0]
    if images and all(img.shape == images[0].shape for img in images):
        return _torch().stack(images)
    return images


# ------------------------------------------------------------------ the crop: sampled on the CPU, applied on the device


class CropSample(NamedTuple):
    """The crops and flips drawn for a batch: ``boxes`` (n, 4) ``[y, x, height, width]``, ``flips`` (n,)
    bool, and each image's ``heights`` / ``widths``."""

    boxes: np.ndarray
    flips: np.ndarray
    heights: np.ndarray
    widths: np.ndarray


def sample_crops(  # noqa: PLR0913  sample_distorted_bounding_box's arguments
    contents: Any,
    *,
    bounding_boxes: Any = None,
    min_object_covered: float = 0.1,
    aspect_ratio_range: Any = (0.75, 1.33),
    area_range: Any = (0.05, 1.0),
    max_attempts: int = 100,
    random_flip: bool = True,
    seed: int | None = None,
) -> CropSample:
    """The crops and flips ``decode_random_crop_and_resize`` draws for these images and ``seed``, on
    every device: the same draws, in the same order, as the CPU path."""
    what = "decode_random_crop_and_resize"
    area, aspect = _check_ranges(area_range, aspect_ratio_range, max_attempts)
    items, _ = _items(contents)
    headers, boxes, flips = _draw_crops(
        items, bounding_boxes, min_object_covered, area, aspect, max_attempts, random_flip, seed, what
    )
    return CropSample(
        np.array(boxes, np.int64).reshape(-1, 4),
        np.array(flips, bool),
        np.array([h.height for h in headers], np.int64),
        np.array([h.width for h in headers], np.int64),
    )


def _sample_grid(torch: Any, boxes: Any, flips: Any, out_h: int, out_w: int, pad_h: int, pad_w: int) -> Any:
    """The ``grid_sample`` grid (n, out_h, out_w, 2) of each crop's bilinear resize, flips folded in.

    ``tf.image.resize``'s half-pixel geometry: output pixel ``o`` samples the
    crop at ``(o + 0.5) * size / out - 0.5``, clamped to the crop (TensorFlow
    clamps its neighbours the same way), so the padding is never read; with
    ``align_corners=True`` pixel ``i`` of the padded batch is ``2 i / (size - 1) - 1``.
    """
    dev = boxes.device
    h = boxes[:, 2:3].to(torch.float32)
    w = boxes[:, 3:4].to(torch.float32)
    rows = torch.arange(out_h, device=dev, dtype=torch.float32)[None, :]
    cols = torch.arange(out_w, device=dev, dtype=torch.float32)[None, :]
    ys = torch.minimum(((rows + 0.5) * (h / out_h) - 0.5).clamp_min(0), h - 1)  # (n, out_h)
    xs = torch.minimum(((cols + 0.5) * (w / out_w) - 0.5).clamp_min(0), w - 1)  # (n, out_w)
    xs = torch.where(flips[:, None], xs.flip(1), xs)
    gy = ys * (2.0 / max(pad_h - 1, 1)) - (1.0 if pad_h > 1 else 0.0)
    gx = xs * (2.0 / max(pad_w - 1, 1)) - (1.0 if pad_w > 1 else 0.0)
    n = boxes.shape[0]
    return torch.stack((gx[:, None, :].expand(n, out_h, out_w), gy[:, :, None].expand(n, out_h, out_w)), dim=-1)


def crop_resize_batch(
    images: list[Any], sample: CropSample, size: tuple[int, int], mean: Any, std: Any, layout: str
) -> Any:
    """Each decoded (C, H, W) image's crop resized to ``size``, flipped and normalised, as one batch."""
    torch = _torch()
    out_h, out_w = size
    dev = images[0].device
    n, channels = len(images), images[0].shape[0]
    boxes = sample.boxes
    pad_h, pad_w = int(boxes[:, 2].max()), int(boxes[:, 3].max())
    crops = torch.zeros((n, channels, pad_h, pad_w), dtype=torch.uint8, device=dev)
    for i, (image, (y, x, h, w)) in enumerate(zip(images, boxes.tolist())):
        crops[i, :, :h, :w] = image[:, y : y + h, x : x + w]  # (device copies into the padded batch)
    box_t = torch.as_tensor(boxes, device=dev)
    flip_t = torch.as_tensor(sample.flips, device=dev)
    grid = _sample_grid(torch, box_t, flip_t, out_h, out_w, pad_h, pad_w)
    out = torch.nn.functional.grid_sample(
        crops.to(torch.float32), grid, mode="bilinear", padding_mode="border", align_corners=True
    )  # (n, c, out_h, out_w)
    if mean is not None:
        scale = torch.tensor([1.0 / s for s in std], dtype=torch.float32, device=dev).view(1, -1, 1, 1)
        shift = torch.tensor([-m / s for m, s in zip(mean, std)], dtype=torch.float32, device=dev).view(1, -1, 1, 1)
        out = torch.addcmul(shift, out, scale)  # (x - mean) / std in one pass
    if layout == "NHWC":
        out = out.permute(0, 2, 3, 1).contiguous()
    return out


# ------------------------------------------------------------------ the public functions: the CPU path unless a device


@renamed_arguments(num_threads="num_parallel_calls")  # the old keyword, as on the CPU decode_jpeg it hands over to
def decode_jpeg(
    contents: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1.0,
    dct_method: str = "",
    *,
    num_parallel_calls: int | None = None,
    device: Any = None,
) -> Any:
    """``tf.io.decode_jpeg``: (h, w, c) uint8.

    ``channels``: 0 keeps the JPEG's (1 for grayscale, 3 otherwise), 1 gray
    (libjpeg's luma), 3 RGB. ``ratio`` (1, 2, 4, 8) downscales inside the
    decoder. ``dct_method``: ``""`` / ``"INTEGER_FAST"`` (TensorFlow's default,
    the fast integer IDCT) or ``"INTEGER_ACCURATE"``. ``acceptable_fraction``
    is accepted for signature compatibility; a truncated image either raises or,
    with ``try_recover_truncated=True``, returns what libjpeg recovered.

    ``device``: None (the default) decodes on the CPU into NumPy arrays, as
    above. ``"cuda"`` (or ``"cuda:N"``) decodes the whole batch on the GPU in
    one call (nvImageCodec, else torchvision's batched nvJPEG) into torch
    tensors there; ``"cpu"`` runs that path on the CPU. It takes ``channels``
    only (``ratio=1``, the decoder's own IDCT; ``pip install 'tfrx[gpu]'``).
    """
    if device is None:
        return _cpu_decode_jpeg(
            contents,
            channels,
            ratio,
            fancy_upscaling,
            try_recover_truncated,
            acceptable_fraction,
            dct_method,
            num_parallel_calls=num_parallel_calls,
        )
    if ratio != 1 or try_recover_truncated:
        raise ValueError(f"decode_jpeg(device={str(device)!r}) takes ratio=1 and try_recover_truncated=False only")
    return decode_jpeg_on(contents, channels, device)


def decode_random_crop_and_resize(  # noqa: PLR0913  sample_distorted_bounding_box's and decode_jpeg's arguments, fused
    contents: Any,
    size: Any,
    *,
    bounding_boxes: Any = None,
    min_object_covered: float = 0.1,
    aspect_ratio_range: Any = (0.75, 1.33),
    area_range: Any = (0.05, 1.0),
    max_attempts: int = 100,
    random_flip: bool = True,
    seed: int | None = None,
    channels: int = 3,
    dct_scaling: bool = True,
    mean: Any = None,
    std: Any = None,
    num_parallel_calls: int | None = None,
    device: Any = None,
    layout: str = "NHWC",
) -> Any:
    """The Inception/ResNet training crop, fused: sample, decode only the crop, resize, flip.

    Per image: a crop drawn by ``sample_distorted_bounding_box`` (same
    arguments and defaults, the whole image as the box unless
    ``bounding_boxes`` gives one list of boxes per image), decoded and resized
    as ``decode_crop_and_resize`` does, mirrored with probability 1/2 when
    ``random_flip``. Returns float32 (h, w, c) for one image, (n, h, w, c)
    for a batch, with values in [0, 255], or ``(x - mean) / std`` with
    ``mean`` / ``std`` given per channel on that scale. Draws
    are made in order in the calling thread, so a ``seed`` gives the same
    crops and flips whatever ``num_parallel_calls`` is.

    ``device``: None (the default) runs on the CPU (NumPy out). ``"cuda"``
    decodes the whole batch on the GPU in one call and crops, resizes, flips
    and normalises it in batched tensor ops there: a torch tensor on the GPU,
    (n, h, w, c), or (n, c, h, w) with ``layout="NCHW"``. The crops and
    flips are the CPU path's draws for the same ``seed``; the GPU decodes
    whole images (``dct_scaling`` and ``num_parallel_calls`` apply to the CPU
    only). ``"cpu"`` runs the device path on the CPU.
    """
    if device is None:
        if layout != "NHWC":
            raise ValueError("decode_random_crop_and_resize: layout applies with a device; the CPU path gives NHWC")
        return _cpu_decode_random_crop_and_resize(
            contents,
            size,
            bounding_boxes=bounding_boxes,
            min_object_covered=min_object_covered,
            aspect_ratio_range=aspect_ratio_range,
            area_range=area_range,
            max_attempts=max_attempts,
            random_flip=random_flip,
            seed=seed,
            channels=channels,
            dct_scaling=dct_scaling,
            mean=mean,
            std=std,
            num_parallel_calls=num_parallel_calls,
        )
    what = "decode_random_crop_and_resize"
    out_h, out_w = _check_size(size, what)
    channels = _check_channels(channels, what)
    if layout not in ("NHWC", "NCHW"):
        raise ValueError(f"{what}: layout must be 'NHWC' or 'NCHW', got {layout!r}")
    dev = _device(device)
    items, single = _items(contents)
    stats = _stats(mean, std, channels, what)
    sample = sample_crops(
        items,
        bounding_boxes=bounding_boxes,
        min_object_covered=min_object_covered,
        aspect_ratio_range=aspect_ratio_range,
        area_range=area_range,
        max_attempts=max_attempts,
        random_flip=random_flip,
        seed=seed,
    )
    if not items:
        torch = _torch()
        shape = (0, out_h, out_w, channels) if layout == "NHWC" else (0, channels, out_h, out_w)
        return torch.empty(shape, dtype=torch.float32, device=dev)
    images = _decode([_as_bytes(c) for c in items], channels, dev)
    out = crop_resize_batch(images, sample, (out_h, out_w), stats[0], stats[1], layout)
    return out[0] if single else out
