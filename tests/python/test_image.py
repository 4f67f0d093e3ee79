"""Images and samplers against host references: transfers, sampling with each addressing mode,
linear filtering, writable images, and images in ElementwiseKernel."""

import numpy as np
import pytest

import xgpu

SHIFT = """
XGPU_KERNEL void shift(XGPU_IMAGE2D_PARAM(src), XGPU_WIMAGE2D_PARAM(dst), const float dx) {
    const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);
    const float u = ((float)x + 0.5f + dx) / XGPU_IMAGE_WIDTH(src), v = ((float)y + 0.5f) / XGPU_IMAGE_HEIGHT(src);
    XGPU_WRITE2D_F(dst, x, y, XGPU_SAMPLE2D_F(src, u, v));
}
"""


def needs_images(ctx, fmt, dims, writable=False):
    if not xgpu.Image.supported(ctx, fmt, dims, writable):
        pytest.skip(f"{ctx.device.name} has no {dims}-D images of {fmt}")


def test_round_trip(ctx, rng):
    for fmt, shape in [(xgpu.ImageFormat("float32", 1), (7, 5)), (xgpu.ImageFormat("uint8", 4), (3, 6, 4)),
                       (xgpu.ImageFormat("int16", 2), (9, 2)), (xgpu.ImageFormat("float32", 1), (4, 3, 2))]:
        dims = len(shape) - (1 if fmt.channels > 1 else 0)
        needs_images(ctx, fmt, dims)
        host = (rng.uniform(0, 100, shape)).astype({"float32": np.float32, "uint8": np.uint8,
                                                   "int16": np.int16}[fmt.channel_type])
        img = xgpu.image_from_array(ctx, host, num_channels=fmt.channels)
        assert img.dims == dims and img.shape == host.shape and img.format.channels == fmt.channels
        np.testing.assert_array_equal(img.get(), host)
        np.testing.assert_array_equal(xgpu.create_image(ctx, fmt, host.shape[dims - 1::-1] if fmt.channels == 1
                                                        else host.shape[dims - 1::-1], host).get(), host)


def test_sampling_and_writing(ctx, rng):
    fmt = xgpu.ImageFormat("uint8", 4, normalized=True)
    needs_images(ctx, fmt, 2, writable=True)
    host = rng.integers(0, 256, (8, 16, 4)).astype(np.uint8)
    src = xgpu.image_from_array(ctx, host, num_channels=4, normalized=True)
    dst = xgpu.create_image(ctx, fmt, (16, 8))
    k = ctx.compile(SHIFT).kernel("shift")
    k(ctx.queue, (16, 8), src.sampled(xgpu.Sampler(True, "repeat", "nearest")), dst.writable(), np.float32(1))
    np.testing.assert_array_equal(dst.get(), np.roll(host, -1, axis=1))  # wraps at the edge
    k(ctx.queue, (16, 8), src.sampled(xgpu.Sampler(True, "clamp_to_edge", "nearest")), dst.writable(), np.float32(1))
    want = np.concatenate([host[:, 1:], host[:, -1:]], axis=1)
    np.testing.assert_array_equal(dst.get(), want)


def test_linear_filtering_in_an_elementwise_kernel(ctx, rng):
    fmt = xgpu.ImageFormat("float32", 1)
    needs_images(ctx, fmt, 1)
    host = rng.uniform(-1, 1, 32).astype(np.float32)
    img = xgpu.image_from_array(ctx, host)
    out = xgpu.empty(ctx, 31, np.float32)
    mid = xgpu.ElementwiseKernel(ctx, "image1d src, float* out", "out[i] = XGPU_SAMPLE1D_F(src, (float)i + 1.0f).x")
    mid(img.sampled(xgpu.Sampler(False, "clamp_to_edge", "linear")), out)
    # Unnormalised coordinate i + 1 is halfway between the centres of texels i and i + 1.
    np.testing.assert_allclose(out.get(), (host[:-1] + host[1:]) / 2, atol=1e-2)
    with pytest.raises(xgpu.DTypeError):
        mid(xgpu.zeros(ctx, 32, np.float32), out)


def test_misuse(ctx):
    with pytest.raises(TypeError):
        xgpu.ImageFormat("float64", 1)
    with pytest.raises(ValueError):
        xgpu.Sampler(False, "wrap-around", "nearest")
    with pytest.raises(xgpu.InvalidArgument):
        xgpu.Sampler(False, "repeat", "nearest")  # repeat needs normalised coordinates
    with pytest.raises(TypeError):
        xgpu.image_from_array(ctx, np.zeros((4, 4), np.float64))
    img = xgpu.image_from_array(ctx, np.ones((3, 4), np.float32))
    with pytest.raises(xgpu.ShapeError):
        img.get(np.zeros((4, 3), np.float32).T)  # a copy would be filled, not this array
    with pytest.raises(xgpu.DTypeError):
        img.get(np.zeros((3, 4), np.int32))
    np.testing.assert_array_equal(img.get(np.zeros((3, 4), np.float32)), np.ones((3, 4)))
