"""Inputs shared by tests/test_tf_namespace.py and tests/golden/make_tf_namespace_golden.py."""

from __future__ import annotations

import base64
import hashlib

import numpy as np

# A 32x24 RGB JPEG (quality 90, 4:2:0) of colour gradients.
JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAYACADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD4B0TwJ9393+legaJ4E+7+7/SvStE8Cfd/d/pXf6J4E+7+7/St8JXPL4e4q294810TwJ9393+ld/ofgT7v7v8ASvStE8Cfd/d/pXf6J4E+7+7/AEr7HCVz+meHuKtveOL0PwJ9393+ld/ongT7v7v9KKK/MMJNn+YHD2Y4jT3j0DRPAn3f3f6V29j4Ri0+386ZdqjoAOWPoPeiiu/Oczr5Vk+Kx+Htz04Skr6q6Wl9vzP6g4Yx1edSEXLdo//Z"
)


# (name, array) pairs for serialize_tensor.
def tensor_cases() -> list[tuple[str, np.ndarray | np.generic]]:
    strings = np.empty(3, dtype=object)
    strings[:] = [b"", b"a\x00b", "ünï".encode()]
    return [
        ("float32_scalar", np.float32(1.5)),
        ("int64_matrix", np.arange(-3, 3, dtype=np.int64).reshape(2, 3)),
        ("bool_vector", np.array([True, False, True])),
        ("uint8_image", np.arange(24, dtype=np.uint8).reshape(2, 4, 3)),
        ("float64_empty", np.zeros((0, 2), np.float64)),
        ("int32_3d", np.arange(8, dtype=np.int32).reshape(2, 2, 2) * -7),
        ("float16", np.array([0.5, -2.0, 65504.0], np.float16)),
        ("uint16", np.array([0, 65535], np.uint16)),
        ("int8", np.array([-128, 127], np.int8)),
        ("string_vector", strings),
        ("string_scalar", np.array(b"hello", dtype=object)),
    ]


def image(shape: tuple[int, ...]) -> np.ndarray:
    return (np.arange(int(np.prod(shape))) % 251).astype(np.uint8).reshape(shape)


CROP_OR_PAD = [
    ((5, 7, 1), 3, 4),
    ((5, 7, 1), 8, 9),
    ((5, 7, 2), 2, 10),
    ((4, 6, 3), 4, 6),
    ((2, 5, 6, 1), 3, 3),
    ((6, 3, 1), 1, 8),
]
CENTRAL = [((10, 7, 1), 0.5), ((9, 9, 3), 0.33), ((11, 6, 1), 0.9), ((2, 8, 5, 1), 0.75), ((7, 7, 1), 1.0)]
# (crop_window, channels, fancy_upscaling): the cases decode_and_crop_jpeg keeps bit-exact.
JPEG_WINDOWS = [
    ([0, 0, 24, 32], 3, False),
    ([3, 5, 10, 12], 3, False),
    ([1, 7, 9, 17], 0, False),
    ([8, 8, 16, 24], 1, True),
    ([23, 31, 1, 1], 1, True),
    ([1, 7, 9, 17], 3, False),
]


def digest(array) -> str:
    """dtype, shape and a hash of the bytes: compact golden values for arrays."""
    array = np.ascontiguousarray(array)
    return f"{array.dtype}{list(array.shape)}:{hashlib.sha256(array.tobytes()).hexdigest()[:32]}"
