"""JPEG: simplejpeg (libjpeg-turbo, TensorFlow's default DCT) with a Pillow fallback, and encode_jpeg."""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from tfrx.errors import DecodeError
from tfrx.options import renamed_arguments
from tfrx.image._common import _as_bytes, _batched, _describe, _optional, _pil, _traced
from tfrx.image._partial import decode_window, jpeg_header, partial_jpeg_backend

_DCT_METHODS = {"": True, "INTEGER_FAST": True, "INTEGER_ACCURATE": False}


def _check_decode_args(channels: int, ratio: int, dct_method: str, what: str) -> bool:
    """Validates tf.io.decode_jpeg's arguments; returns whether the fast IDCT is asked for."""
    if channels not in (0, 1, 3):
        raise ValueError(f"{what}: channels must be 0, 1 or 3, got {channels!r}")
    if ratio not in (1, 2, 4, 8):
        raise ValueError(f"{what}: ratio must be 1, 2, 4 or 8, got {ratio!r}")
    if dct_method not in _DCT_METHODS:
        raise ValueError(f"{what}: dct_method must be '', 'INTEGER_FAST' or 'INTEGER_ACCURATE', got {dct_method!r}")
    return _DCT_METHODS[dct_method]


def _decode_jpeg_one(
    contents: Any, channels: int, ratio: int, fancy_upscaling: bool, try_recover_truncated: bool, fast_dct: bool
) -> np.ndarray:
    data = _as_bytes(contents)
    if bytes(data[:3]) != b"\xff\xd8\xff":
        raise DecodeError(f"not a JPEG image ({_describe(data)}): the JPEG SOI marker FF D8 FF is missing")
    sj = _optional("simplejpeg")
    if sj is not None:
        options: dict[str, Any] = {
            "fastdct": fast_dct,
            "fastupsample": not fancy_upscaling,
            "strict": not try_recover_truncated,
        }
        try:
            # The header first: TurboJPEG would convert CMYK to RGB by a rule other than TensorFlow's.
            height, width, colorspace, _ = sj.decode_jpeg_header(data)
            if ratio > 1:
                options.update(min_height=-(-height // ratio), min_width=-(-width // ratio), min_factor=ratio)
            if colorspace in ("CMYK", "YCCK"):
                return _decode_cmyk(data, channels, ratio, fancy_upscaling, try_recover_truncated, fast_dct, options)
            gray = channels == 1 or (channels == 0 and colorspace == "Gray")
            out = sj.decode_jpeg(data, colorspace="GRAY" if gray else "RGB", **options)
            return out if out.ndim == 3 else out[..., None]
        except ValueError as e:
            raise DecodeError(f"invalid JPEG ({len(data)} bytes): {e}") from None
    return _decode_jpeg_pillow(data, channels, ratio, try_recover_truncated)


def _decode_cmyk(
    data: Any,
    channels: int,
    ratio: int,
    fancy_upscaling: bool,
    try_recover_truncated: bool,
    fast_dct: bool,
    options: dict[str, Any],
) -> np.ndarray:
    """A CMYK / YCCK JPEG as TensorFlow's decode_jpeg gives it: libjpeg's CMYK samples, then TensorFlow's RGB rule."""
    if channels == 1:
        # TensorFlow asks libjpeg for grayscale output, which libjpeg cannot make from CMYK.
        raise DecodeError(
            f"invalid JPEG ({len(data)} bytes): a CMYK/YCCK JPEG cannot be decoded to 1 channel "
            "(libjpeg: unsupported color conversion request; TensorFlow fails too); decode it with channels=3"
        )
    if partial_jpeg_backend() is not None:  # libjpeg-turbo itself, converted by TensorFlow's steps natively
        return decode_window(
            data,
            None,
            channels=3,
            scale=(1, ratio),
            fancy_upscaling=fancy_upscaling,
            fast_dct=fast_dct,
            try_recover_truncated=try_recover_truncated,
            what="decode_jpeg",
        )
    sj = _optional("simplejpeg")
    cmyk = np.asarray(sj.decode_jpeg(data, colorspace="CMYK", **options))
    return cmyk_to_rgb(cmyk, adobe=saw_adobe_marker(data))


def cmyk_to_rgb(cmyk: np.ndarray, *, adobe: bool) -> np.ndarray:
    """TensorFlow's CMYK -> RGB (``jpeg_mem.cc``): integer products truncated by 255.

    libjpeg returns the samples as stored; files with an Adobe APP14 marker
    store inverted CMYK, so their channel is ``k * c / 255``, others
    ``(255 - k) * (255 - c) / 255``.
    """
    c = cmyk[..., :3].astype(np.int32)
    k = cmyk[..., 3:4].astype(np.int32)
    rgb = (k * c) // 255 if adobe else ((255 - k) * (255 - c)) // 255
    return rgb.astype(np.uint8)


def saw_adobe_marker(data: Any) -> bool:
    """Whether libjpeg would see an Adobe APP14 marker (``saw_Adobe_marker``) before the first scan.

    libjpeg takes an APP14 segment as Adobe's when it holds at least 12 data
    bytes starting with ``Adobe``.
    """
    buf = bytes(data)
    i = 2
    while i + 4 <= len(buf):
        if buf[i] != 0xFF:
            return False
        marker = buf[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xDA, 0xD9):  # start of scan / end of image: markers after it are not read as APP14
            return False
        length = int.from_bytes(buf[i + 2 : i + 4], "big")
        if marker == 0xEE and length - 2 >= 12 and buf[i + 4 : i + 9] == b"Adobe":
            return True
        i += 2 + length
    return False


def _decode_jpeg_pillow(data: bytes | memoryview, channels: int, ratio: int, try_recover_truncated: bool) -> np.ndarray:
    Image = _pil()
    from PIL import ImageFile

    try:
        with Image.open(io.BytesIO(data), formats=["JPEG"]) as im:
            if ratio > 1:
                im.draft(im.mode, (-(-im.width // ratio), -(-im.height // ratio)))
            if try_recover_truncated:
                previous, ImageFile.LOAD_TRUNCATED_IMAGES = ImageFile.LOAD_TRUNCATED_IMAGES, True
            try:
                im.load()
            finally:
                if try_recover_truncated:
                    ImageFile.LOAD_TRUNCATED_IMAGES = previous
            if im.mode == "CMYK":
                if channels == 1:
                    raise DecodeError("a CMYK/YCCK JPEG cannot be decoded to 1 channel (TensorFlow fails too)")
                # Pillow inverts the samples of Adobe files; TensorFlow's rule wants them as stored.
                adobe = saw_adobe_marker(data)
                raw = np.asarray(im)
                return cmyk_to_rgb(255 - raw if adobe else raw, adobe=adobe)
            mode = "L" if channels == 1 or (channels == 0 and im.mode == "L") else "RGB"
            arr = np.asarray(im.convert(mode) if im.mode != mode else im)
    except DecodeError:
        raise
    except Exception as e:
        raise DecodeError(f"invalid JPEG ({len(data)} bytes): {e}") from None
    return arr[..., None] if arr.ndim == 2 else arr


@renamed_arguments(num_threads="num_parallel_calls")
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
) -> Any:
    """``tf.io.decode_jpeg``: (h, w, c) uint8.

    ``channels``: 0 keeps the JPEG's (1 for grayscale, 3 otherwise), 1 gray
    (libjpeg's luma), 3 RGB. ``ratio`` (1, 2, 4, 8) downscales inside the
    decoder. ``dct_method``: ``""`` / ``"INTEGER_FAST"`` (TensorFlow's default,
    the fast integer IDCT) or ``"INTEGER_ACCURATE"``. ``acceptable_fraction``
    is accepted for signature compatibility; a truncated image either raises or,
    with ``try_recover_truncated=True``, returns what libjpeg recovered.
    """
    fast = _check_decode_args(channels, ratio, dct_method, "decode_jpeg")
    if _traced(contents):
        return contents.__tfrx_trace__(
            "decode_jpeg",
            channels=channels,
            ratio=ratio,
            fancy_upscaling=fancy_upscaling,
            try_recover_truncated=try_recover_truncated,
            dct_method=dct_method,
        )
    return _batched(
        lambda c: _decode_jpeg_one(c, channels, ratio, fancy_upscaling, try_recover_truncated, fast),
        contents,
        num_parallel_calls,
    )


def encode_jpeg(
    image: np.ndarray, quality: int = 95, *, chroma_downsampling: bool = True, progressive: bool = False
) -> bytes:
    """Encode an (h, w, 1|3) uint8 image as JPEG: ``tf.io.encode_jpeg``'s bytes at its settings.

    TensorFlow writes through libjpeg-turbo: quality 95, 4:2:0 chroma, the
    accurate integer DCT, standard Huffman tables and a JFIF header of 300
    dots per inch. Pillow's libjpeg-turbo writes the same bytes given the same
    settings, so it is used; without Pillow, simplejpeg writes a valid JPEG
    whose pixels differ slightly from TensorFlow's (docs/porting.md).
    """
    img = np.ascontiguousarray(np.asarray(image))
    if img.dtype != np.uint8 or img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] not in (1, 3)):
        raise ValueError(f"encode_jpeg: expected an (h, w, 1|3) uint8 image, got {img.dtype} {img.shape}")
    gray = img.ndim == 2 or img.shape[2] == 1
    if not 0 <= quality <= 100:
        raise ValueError(f"encode_jpeg: quality must be in [0, 100], got {quality}")
    if _optional("PIL") is not None or _optional("simplejpeg") is None:
        Image = _pil()
        out = io.BytesIO()
        pil = Image.fromarray(img.reshape(img.shape[:2]) if gray else img)
        # Pillow's subsampling 2 (4:2:0) would also halve a grayscale image's only component; libjpeg's
        # default, which TensorFlow keeps for grayscale, is 1x1.
        subsampling = 2 if chroma_downsampling and not gray else 0
        pil.save(out, format="JPEG", quality=quality, subsampling=subsampling, progressive=progressive, dpi=(300, 300))
        return out.getvalue()
    sj = _optional("simplejpeg")
    if progressive:
        raise NotImplementedError("encode_jpeg(progressive=True) needs Pillow (pip install pillow)")
    return sj.encode_jpeg(
        img.reshape(img.shape[0], img.shape[1], 1) if gray else img,
        quality=quality,
        colorspace="GRAY" if gray else "RGB",
        colorsubsampling="Gray" if gray else ("420" if chroma_downsampling else "444"),
    )


def decode_and_crop_jpeg(
    contents: Any,
    crop_window: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1.0,
    dct_method: str = "",
) -> np.ndarray:
    """``tf.io.decode_and_crop_jpeg``: the ``crop_window`` ``[y, x, height, width]`` of the decoded image.

    With libjpeg-turbo available (``partial_jpeg_backend()``; Pillow's wheels
    carry it) only the window's rows and iMCU columns are decoded, by
    TensorFlow's own steps, so the result equals TensorFlow's bit for bit,
    including the chroma it upsamples at the window's edges as if they were
    the image's. The window is in pixels of the output at ``ratio``. A window
    outside the image raises ``ValueError`` (TensorFlow: "Invalid JPEG data
    or crop window"), corrupt data ``DecodeError``.

    Without libjpeg-turbo the whole image is decoded and cropped: bit-exact
    for grayscale and 4:4:4 JPEGs, ``channels=1`` or ``fancy_upscaling=False``;
    other subsampled colour JPEGs raise ``NotImplementedError``.
    """
    window = [int(v) for v in np.asarray(crop_window).reshape(-1)]
    if len(window) != 4:
        raise ValueError(f"decode_and_crop_jpeg: crop_window must be [y, x, height, width], got {window}")
    fast = _check_decode_args(channels, ratio, dct_method, "decode_and_crop_jpeg")
    data = _as_bytes(contents)
    if bytes(data[:3]) != b"\xff\xd8\xff":
        raise DecodeError(f"not a JPEG image ({_describe(data)}): the JPEG SOI marker FF D8 FF is missing")
    if partial_jpeg_backend() is not None:
        return decode_window(
            data,
            window,
            channels=channels,
            scale=(1, ratio),
            fancy_upscaling=fancy_upscaling,
            fast_dct=fast,
            try_recover_truncated=try_recover_truncated,
        )
    return _decode_then_crop(
        data, window, channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method
    )


def _decode_then_crop(
    data: Any,
    window: list[int],
    channels: int,
    ratio: int,
    fancy_upscaling: bool,
    try_recover_truncated: bool,
    acceptable_fraction: float,
    dct_method: str,
) -> np.ndarray:
    """decode_and_crop_jpeg without libjpeg-turbo: a whole decode, refused where it would differ from TensorFlow's."""
    if channels != 1 and fancy_upscaling:
        sj = _optional("simplejpeg")
        subsampling = colorspace = None
        if sj is not None:
            try:
                _, _, colorspace, subsampling = sj.decode_jpeg_header(data)
            except ValueError as e:
                raise DecodeError(f"invalid JPEG ({len(data)} bytes): {e}") from None
        if colorspace != "Gray" and subsampling != "444":
            raise NotImplementedError(
                f"decode_and_crop_jpeg: TensorFlow's partial decode of a {subsampling or 'chroma-subsampled'} colour JPEG "
                "upsamples chroma at the crop's edges differently from a full decode, and no libjpeg-turbo was found to "
                "decode the window as TensorFlow does (install Pillow's wheel or libjpeg-turbo, or set TFRX_LIBJPEG); "
                "pass fancy_upscaling=False or channels=1 (both bit-exact with TensorFlow), or use "
                "decode_jpeg(contents)[y:y+h, x:x+w] for the full decode's pixels"
            )
    image = decode_jpeg(data, channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method)
    y, x, h, w = window
    if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > image.shape[0] or x + w > image.shape[1]:
        raise ValueError(
            f"decode_and_crop_jpeg: crop window {window} is not inside the image of size {list(image.shape[:2])}"
        )
    return image[y : y + h, x : x + w].copy()


_COMPONENTS = {"Gray": 1, "CMYK": 4, "YCCK": 4}


def extract_jpeg_shape(contents: Any, output_type: Any = np.int32) -> np.ndarray:
    """``tf.io.extract_jpeg_shape``: ``[height, width, components]`` from the header alone, no pixels decoded."""
    data = _as_bytes(contents)
    if bytes(data[:3]) != b"\xff\xd8\xff":
        raise DecodeError(f"not a JPEG image ({_describe(data)}): the JPEG SOI marker FF D8 FF is missing")
    dtype = np.dtype(output_type)
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError(f"extract_jpeg_shape: output_type must be int32 or int64, got {dtype.name}")
    if partial_jpeg_backend() is not None:
        h = jpeg_header(data)
        return np.array([h.height, h.width, h.components], dtype)
    sj = _optional("simplejpeg")
    if sj is not None:
        try:
            height, width, colorspace, _ = sj.decode_jpeg_header(data)
        except ValueError as e:
            raise DecodeError(f"invalid JPEG ({len(data)} bytes): {e}") from None
        return np.array([height, width, _COMPONENTS.get(colorspace, 3)], dtype)
    Image = _pil()
    try:
        with Image.open(io.BytesIO(data), formats=["JPEG"]) as im:
            return np.array([im.height, im.width, len(im.getbands())], dtype)
    except Exception as e:
        raise DecodeError(f"invalid JPEG ({len(data)} bytes): {e}") from None
