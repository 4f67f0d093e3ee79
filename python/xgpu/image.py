"""Images and samplers, as PyOpenCL's: 1-, 2- and 3-D images of 1, 2 or 4 channels read in kernels
through the hardware's sampling units (CUDA texture objects, OpenCL images and samplers).

    img = xgpu.image_from_array(ctx, host_2d.astype(np.float32))     # (h, w) -> a w x h image
    smp = xgpu.Sampler(False, "clamp_to_edge", "linear")
    k(queue, grid, img.sampled(smp), out)       # XGPU_IMAGE2D_PARAM(src) in the kernel
    img.get()                                   # back to the host, (h, w) or (h, w, channels)

A kernel takes an image with the sampler it is read through (``img.sampled(sampler)``:
XGPU_IMAGE{1,2,3}D_PARAM and XGPU_SAMPLE*/XGPU_FETCH* in the dialect) or, 2-D only, as written
(``img.writable()``: XGPU_WIMAGE2D_PARAM, XGPU_WRITE2D_*). ElementwiseKernel declares them as
"image2d src" and "wimage2d dst". See docs/images.md.
"""

import numpy as np

from . import _xgpu
from ._array import Array, to_device
from ._errors import DTypeError, ShapeError

ImageFormat = _xgpu.ImageFormat
Sampler = _xgpu.Sampler
Image = _xgpu.Image

_HOST = {"uint8": np.uint8, "int8": np.int8, "uint16": np.uint16, "int16": np.int16, "uint32": np.uint32,
         "int32": np.int32, "float16": np.float16, "float32": np.float32}


def _host_shape(img):
    shape = (img.width,) if img.dims == 1 else (img.height, img.width) if img.dims == 2 else (
        img.depth, img.height, img.width)
    return shape + ((img.format.channels,) if img.format.channels > 1 else ())


def _get(self, ary=None):
    """The texels as a numpy array of shape (w), (h, w) or (d, h, w), with a last axis of the
    channels where there are several."""
    shape, dtype = _host_shape(self), np.dtype(_HOST[self.format.channel_type])
    if ary is None:
        ary = np.empty(shape, dtype)
    elif not isinstance(ary, np.ndarray) or ary.dtype != dtype:
        raise DTypeError(f"xgpu: Image.get: the host array must be a numpy array of {dtype}, not "
                         f"{getattr(ary, 'dtype', type(ary).__name__)}")
    elif ary.shape != shape or not ary.flags.c_contiguous:
        raise ShapeError(f"xgpu: Image.get: the host array must be C-contiguous of shape {shape}, not {ary.shape}"
                         f"{'' if ary.flags.c_contiguous else ' (not C-contiguous)'}")
    self.read(ary)
    return ary


def _set(self, ary):
    """Writes packed host texels (converted to the channel type)."""
    host = np.ascontiguousarray(ary, dtype=_HOST[self.format.channel_type])
    if host.size * host.itemsize != self.width * self.height * self.depth * self.format.texel_bytes:
        raise ShapeError(f"xgpu: Image.set: {host.shape} values do not fill the image {_host_shape(self)}")
    self.write(host)
    return self


Image.get = _get
Image.set = _set
Image.shape = property(lambda self: _host_shape(self), doc="The shape Image.get returns: (w), (h, w) or (d, h, w),\n"
                       "with a last axis of the channels where there are several.")


def create_image(context, format, shape, hostbuf=None):
    """An image of ``format`` and ``shape`` (width,), (width, height) or (width, height, depth),
    as PyOpenCL's Image; filled from ``hostbuf`` where given."""
    img = Image.create(context, format, list(shape))
    if hostbuf is not None:
        img.set(hostbuf)
    return img


def image_from_array(context, ary, num_channels=1, normalized=False):
    """PyOpenCL's image_from_array: an image with the shape of a C-contiguous host or device array,
    (w), (h, w) or (d, h, w), with a last axis of ``num_channels`` entries where it is over 1."""
    if not isinstance(ary, Array):
        ary = to_device(context, np.ascontiguousarray(ary))
    elif not ary.flags["C_CONTIGUOUS"]:
        ary = ary.copy()
    return Image.from_array(ary.desc, int(num_channels), bool(normalized))
