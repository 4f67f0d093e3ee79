# Types of xgpu's images (image.py): the classes are the extension's.
from typing import Sequence

import numpy.typing as npt

from . import _xgpu
from ._xgpu import Image as Image, ImageFormat as ImageFormat, Sampler as Sampler

def create_image(context: _xgpu.Context, format: ImageFormat, shape: Sequence[int],
                 hostbuf: npt.ArrayLike | None = None) -> Image: ...
def image_from_array(context: _xgpu.Context, ary: npt.ArrayLike, num_channels: int = 1,
                     normalized: bool = False) -> Image: ...
