"""``decode_jpeg`` / ``decode_random_crop_and_resize`` with ``device=``: whole batches decoded and cropped as tensors.

The device path runs here with ``device="cpu"`` (torchvision's CPU decoder,
or tfrx's own where torchvision is missing) and is compared with the CPU
path: the same crops and flips for a seed, the same pixels to float32
rounding of the resize. The ``cuda``-marked tests run it on a GPU.
"""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrx.image as im
from tfrx.image import _device, _random

torch = pytest.importorskip("torch")
pytest.importorskip("PIL")  # (tfrx.image.encode_jpeg makes the test images)
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)")

SIZES = [(120, 160), (200, 90), (64, 64), (300, 20), (17, 33)]


def _jpegs(sizes=SIZES, seed=0, gray=False, subsampled=False):
    rng = np.random.default_rng(seed)
    out = []
    for h, w in sizes:
        yy, xx = np.mgrid[0:h, 0:w]
        smooth = np.stack([(yy * 255 // max(h - 1, 1)), (xx * 255 // max(w - 1, 1)), (yy + xx) % 256], -1)
        noise = rng.integers(0, 40, (h, w, 3))
        pixels = np.clip(smooth + noise, 0, 255).astype(np.uint8)
        # 4:4:4 unless `subsampled`: a partial decode (the CPU path) upsamples 4:2:0 chroma at a crop's
        # edges from the window alone, a whole decode (the device path) from the pixels beyond it too
        image = np.ascontiguousarray(pixels[:, :, :1]) if gray else pixels
        out.append(im.encode_jpeg(image, quality=92, chroma_downsampling=subsampled))
    return out


def _fresh(seed):
    _random._generators.pop(seed, None)  # a seed's generator continues from call to call, as TensorFlow's


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(1, 2**31),
    area=st.sampled_from([(0.05, 1.0), (0.3, 0.6), (0.9, 1.0)]),
    aspect=st.sampled_from([(0.75, 1.33), (0.5, 2.0)]),
)
def test_the_device_path_draws_the_cpu_paths_crops(seed, area, aspect):
    jpegs = _jpegs()
    args = {"seed": seed, "area_range": area, "aspect_ratio_range": aspect}
    _fresh(seed)
    cpu = im.decode_random_crop_and_resize(jpegs, (24, 28), dct_scaling=False, **args)
    _fresh(seed)
    sample = im.sample_crops(jpegs, **args)
    np.testing.assert_array_equal(sample.heights, [h for h, _ in SIZES])
    # the CPU path given those windows and flips makes exactly its random output: the draws are the same
    again = im.decode_crop_and_resize(jpegs, sample.boxes, (24, 28), flip=sample.flips, dct_scaling=False)
    np.testing.assert_array_equal(again, cpu)


@pytest.mark.parametrize("seed", [1, 7, 12345])
def test_device_path_equals_the_cpu_fused_path(seed):
    jpegs = _jpegs(seed=seed)
    stats = {"mean": [123.7, 116.3, 103.5], "std": [58.4, 57.1, 57.4]}
    _fresh(seed)
    cpu = im.decode_random_crop_and_resize(jpegs, (32, 40), seed=seed, dct_scaling=False, **stats)
    _fresh(seed)
    dev = im.decode_random_crop_and_resize(jpegs, (32, 40), seed=seed, device="cpu", **stats)
    assert isinstance(dev, torch.Tensor) and dev.dtype == torch.float32 and tuple(dev.shape) == cpu.shape
    np.testing.assert_allclose(dev.numpy(), cpu, atol=1e-4 * 255 / 57)  # float32 rounding of the resize
    _fresh(seed)
    nchw = im.decode_random_crop_and_resize(jpegs, (32, 40), seed=seed, device="cpu", layout="NCHW", **stats)
    np.testing.assert_array_equal(nchw.permute(0, 2, 3, 1).numpy(), dev.numpy())


def test_subsampled_chroma_differs_only_at_crop_edges_by_a_few_levels():
    jpegs = _jpegs(subsampled=True)
    _fresh(9)
    cpu = im.decode_random_crop_and_resize(jpegs, (32, 40), seed=9, dct_scaling=False)
    _fresh(9)
    dev = im.decode_random_crop_and_resize(jpegs, (32, 40), seed=9, device="cpu").numpy()
    diff = np.abs(dev - cpu)
    assert diff.mean() < 0.5 and diff.max() < 16
    inner = diff[:, 2:-2, 2:-2]  # away from the crops' edges the two decodes agree
    assert inner.max() < 2e-3


def test_upscaled_crops_clamp_at_the_crop_edge_as_tensorflow():
    # crops smaller than the output: samples outside the crop clamp to its edge (never the pixels beyond it)
    jpegs = _jpegs([(40, 50), (30, 30)])
    sample = im.sample_crops(jpegs, seed=3, area_range=(0.05, 0.1))
    cpu = im.decode_crop_and_resize(jpegs, sample.boxes, (64, 64), flip=sample.flips, dct_scaling=False)
    images = _device._decode(jpegs, 3, torch.device("cpu"))
    dev = _device.crop_resize_batch(images, sample, (64, 64), None, None, "NHWC")
    np.testing.assert_allclose(dev.numpy(), cpu, atol=2e-3)


def test_gray_single_and_empty():
    jpegs = _jpegs(gray=True)
    _fresh(4)
    cpu = im.decode_random_crop_and_resize(jpegs[0], (20, 20), seed=4, channels=1, dct_scaling=False)
    _fresh(4)
    dev = im.decode_random_crop_and_resize(jpegs[0], (20, 20), seed=4, channels=1, device="cpu")
    assert tuple(dev.shape) == cpu.shape == (20, 20, 1)
    np.testing.assert_allclose(dev.numpy(), cpu, atol=2e-3)
    empty = im.decode_random_crop_and_resize([], (20, 20), device="cpu")
    assert tuple(empty.shape) == (0, 20, 20, 3)


def test_decode_jpeg_on_a_device_matches_the_cpu_decoder():
    jpegs = _jpegs()
    cpu = im.decode_jpeg(jpegs)
    dev = im.decode_jpeg(jpegs, device="cpu")
    assert isinstance(dev, list) and len(dev) == len(cpu)  # shapes differ: a list, as on the CPU
    for d, c in zip(dev, cpu):
        assert d.dtype == torch.uint8 and tuple(d.shape) == c.shape
        assert np.abs(d.numpy().astype(int) - c.astype(int)).max() <= (
            0 if im.device_jpeg_backend("cpu") == "tfrx" else 8
        )
    same = im.decode_jpeg(jpegs[:1] * 3, device="cpu")
    assert isinstance(same, torch.Tensor) and tuple(same.shape) == (3, 120, 160, 3)
    one = im.decode_jpeg(jpegs[0], device="cpu")
    assert tuple(one.shape) == (120, 160, 3)
    with pytest.raises(ValueError, match="ratio=1"):
        im.decode_jpeg(jpegs[0], ratio=2, device="cpu")


def test_the_output_exports_dlpack():
    out = im.decode_random_crop_and_resize(_jpegs(), (16, 16), seed=2, device="cpu")
    viewed = np.from_dlpack(out)  # (JAX's and CuPy's from_dlpack take it the same way on a GPU)
    assert viewed.shape == tuple(out.shape) and np.shares_memory(viewed, out.numpy())


def test_missing_dependencies_name_the_extra(monkeypatch):
    monkeypatch.setattr(_device, "_optional", lambda name: None)
    with pytest.raises(ImportError, match=r"tfrx\[gpu\]"):
        im.decode_jpeg(_jpegs()[0], device="cpu")
    monkeypatch.undo()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(_device, "_nvimgcodec", lambda: None)
    monkeypatch.setattr(_device, "_torchvision_io", lambda: None)
    with pytest.raises(ImportError, match=r"nvImageCodec or torchvision: pip install 'tfrx\[gpu\]'"):
        im.device_jpeg_backend("cuda")


def test_bad_device_and_layout():
    with pytest.raises(ValueError, match="device must be"):
        im.decode_random_crop_and_resize(_jpegs()[:1], (8, 8), device="mps")
    with pytest.raises(ValueError, match="layout"):
        im.decode_random_crop_and_resize(_jpegs()[:1], (8, 8), device="cpu", layout="HWC")
    with pytest.raises(ValueError, match="layout"):
        im.decode_random_crop_and_resize(_jpegs()[:1], (8, 8), layout="NCHW")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error of a machine without CUDA")
def test_cuda_without_a_gpu_says_so():
    with pytest.raises(RuntimeError, match="torch.cuda.is_available"):
        im.decode_random_crop_and_resize(_jpegs()[:1], (8, 8), device="cuda")


def test_the_cpu_path_imports_no_torch():
    code = (
        "import sys, numpy as np, tfrx.image as im\n"
        "im.decode_jpeg(im.encode_jpeg(np.zeros((8, 8, 3), np.uint8)))\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ a real GPU


@pytest.mark.cuda
@cuda
def test_cuda_crop_matches_the_cpu_path():
    jpegs = _jpegs() * 8
    _fresh(11)
    cpu = im.decode_random_crop_and_resize(jpegs, (224, 224), seed=11, dct_scaling=False)
    _fresh(11)
    dev = im.decode_random_crop_and_resize(jpegs, (224, 224), seed=11, device="cuda")
    assert dev.is_cuda and tuple(dev.shape) == cpu.shape
    diff = np.abs(dev.cpu().numpy() - cpu)
    assert diff.mean() < 2.0 and diff.max() < 40  # the GPU's IDCT and upsampling differ from libjpeg-turbo's


@pytest.mark.cuda
@cuda
def test_cuda_decode_jpeg_batch():
    jpegs = _jpegs()
    cpu = im.decode_jpeg(jpegs)
    dev = im.decode_jpeg(jpegs, device="cuda")
    for d, c in zip(dev, cpu):
        assert d.is_cuda and tuple(d.shape) == c.shape
        assert np.abs(d.cpu().numpy().astype(int) - c.astype(int)).mean() < 2.0
