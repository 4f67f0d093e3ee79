"""xgpu's C++ core (use the package xgpu)"""

# The extension's types, as nanobind's stubgen gives them, with what the package's Python modules
# add to its classes (Kernel.__call__, Program.__getattr__ and get_function, Image.get, set and
# shape). tests/python/test_typing.py checks the names against the module.

from collections.abc import Sequence
from typing import Any

from numpy.typing import NDArray



class Device:
    """
    A device of one backend, as it reports itself (ctx.device, BackendStatus.devices).
    """

    @property
    def name(self) -> str:
        """The device's name, e.g. 'NVIDIA H200'."""

    @property
    def vendor(self) -> str:
        """The vendor's name."""

    @property
    def backend(self) -> str:
        """'cuda' or 'opencl'."""

    @property
    def index(self) -> int:
        """The index within its backend's device list (XGPU_DEVICE)."""

    @property
    def type(self) -> str:
        """'GPU', 'CPU', 'accelerator' or 'other'."""

    @property
    def has_fp64(self) -> bool:
        """Whether kernels may use double precision."""

    @property
    def global_memory(self) -> int:
        """Global memory, bytes."""

    @property
    def max_allocation(self) -> int:
        """The largest single buffer, bytes."""

    @property
    def platform(self) -> str:
        """The OpenCL platform's name; 'CUDA' on CUDA."""

    @property
    def version(self) -> str:
        """The OpenCL device version, or the compute capability on CUDA."""

    @property
    def driver_version(self) -> str:
        """The driver's version."""

    @property
    def compute_units(self) -> int:
        """Compute units (multiprocessors on CUDA, cores on a CPU)."""

    @property
    def max_work_group_size(self) -> int:
        """The largest work-group (block) a kernel may have."""

    @property
    def local_memory(self) -> int:
        """Local (shared) memory per work-group, bytes."""

    @property
    def simd_width(self) -> int:
        """The warp size on CUDA; the preferred work-group multiple on OpenCL."""

    def __repr__(self) -> str: ...

class BackendStatus:
    """
    What one backend offers here, or why it cannot start (xgpu.backends()).
    """

    @property
    def name(self) -> str:
        """'cuda' or 'opencl'."""

    @property
    def available(self) -> bool:
        """Whether the backend started and has a device."""

    @property
    def reason(self) -> str:
        """Why the backend is unavailable ('' when it is available)."""

    @property
    def devices(self) -> list[Device]:
        """The backend's devices."""

    @property
    def libraries(self) -> list[str]:
        """
        The libraries behind the backend, one line each with its path: the CUDA driver and NVRTC; the OpenCL ICD loader and the drivers (ICDs) it was given.
        """

def backends() -> list[BackendStatus]:
    """
    Probes every backend compiled in (loading its driver) and returns a BackendStatus for each: its devices, or why it is unavailable.
    """

def backend_names() -> list[str]:
    """The backends compiled in, in the order XGPU_BACKEND=auto tries them."""

class Event:
    """
    A point in a queue (Queue.marker()): wait for it, or time the work between two.
    """

    def wait(self) -> None:
        """Blocks until the work before the event is done."""

    @property
    def is_complete(self) -> bool:
        """Whether the work before the event is done."""

    def elapsed_ms(self, later: Event) -> float:
        """
        Device time from this event to a later one of the same queue, in milliseconds.
        """

class Queue:
    """
    An in-order queue of a context (ctx.queue, ctx.new_queue()); queues are not ordered with one another.
    """

    def finish(self) -> None:
        """Blocks until everything enqueued so far is done."""

    def marker(self) -> Event:
        """An Event after everything enqueued so far."""

    def __eq__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

class QueueScope:
    """Makes a queue its context's current one while it lives (internal)."""

    def __init__(self, arg: Queue, /) -> None: ...

class Local:
    """A kernel argument of local (shared) memory, nbytes per work-group."""

    def __init__(self, nbytes: int) -> None:
        """Local memory of nbytes bytes per work-group."""

    @property
    def nbytes(self) -> int:
        """Bytes per work-group."""

    def __repr__(self) -> str: ...

class Kernel:
    """
    A kernel of a Program. Called as PyOpenCL's, k(queue, global_size, *args) or k(queue, global_size, local_size, *args), or as PyCUDA's, k(*args, block=..., grid=...); see docs/python.md for the arguments.
    """

    @property
    def name(self) -> str:
        """The kernel's name."""

    @property
    def num_args(self) -> int:
        """The number of parameters it declares."""

    @property
    def max_group_size(self) -> int:
        """The largest work-group this kernel may be launched with on its device."""

    def _launch(self, arg0: Queue, arg1: Sequence[int], arg2: Sequence[int] | None, arg3: list[Any], /) -> None: ...

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        """Launches the kernel (PyOpenCL's or PyCUDA's form; see xgpu._kernels)."""

class Program:
    """
    Compiled source (Context.compile): its kernels by name, program.kernel('name'), program.name (PyOpenCL) or program.get_function('name') (PyCUDA).
    """

    def kernel(self, name: str) -> Kernel:
        """The kernel of that name; InvalidArgument if there is none."""

    @property
    def kernel_names(self) -> list[str]:
        """The names of the program's kernels."""

    @property
    def build_log(self) -> str:
        """The compiler's log ('' when it said nothing)."""

    @property
    def origin(self) -> str:
        """
        'compiled', 'disk_cache' or 'memory_cache': where the binary came from.
        """

    get_function = kernel

    def __getattr__(self, name: str) -> Kernel:
        """PyOpenCL's ``prg.name``: the program's kernel of that name."""

class Context:
    """A device of one backend, its queues, memory and compiled programs."""

    @staticmethod
    def from_env() -> Context:
        """
        A context on the device XGPU_BACKEND and XGPU_DEVICE select (default: CUDA when the driver has a device, else OpenCL, GPUs before CPUs). Raises BackendUnavailable naming what is missing.
        """

    @staticmethod
    def create(backend: str, device: str = '') -> Context:
        """
        A context on `backend` ('cuda', 'opencl' or 'auto') and `device` (an index, or a case-insensitive part of the device, platform or vendor name; '' for the first).
        """

    @property
    def device(self) -> Device:
        """The context's Device."""

    @property
    def backend(self) -> str:
        """'cuda' or 'opencl'."""

    @property
    def queue(self) -> Queue:
        """The default queue."""

    @property
    def current_queue(self) -> Queue:
        """The queue array operations run on now."""

    def new_queue(self) -> Queue:
        """A new queue, independent of the others."""

    def finish(self) -> None:
        """Blocks until the current queue's work is done."""

    def compile(self, source: str, options: Sequence[str] = []) -> Program:
        """
        Compiles source in xgpu's kernel dialect (the same text on both backends) and returns a Program; cached in memory and on disk. Raises CompileError with the build log.
        """

    def compile_native(self, source: str, options: Sequence[str] = []) -> Program:
        """
        Compiles CUDA C++ or OpenCL C as it stands (no dialect preamble) and returns a Program.
        """

    @property
    def preamble(self) -> str:
        """The dialect's preamble this backend puts before a source."""

    @property
    def launch_count(self) -> int:
        """Kernels launched on this context so far."""

    def __eq__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

def promote(arg0: str, arg1: str, /) -> str: ...

def promote_weak(arg0: str, arg1: str, /) -> str: ...

def true_divide_type(arg: str, /) -> str: ...

def float_type(arg: str, /) -> str: ...

def real_type(arg: str, /) -> str: ...

def sum_type(arg: str, /) -> str: ...

def norm_type(arg: str, /) -> str: ...

def can_cast_same_kind(arg0: str, arg1: str, /) -> bool: ...

class ArrayDesc:
    @property
    def shape(self) -> tuple: ...

    @property
    def strides(self) -> tuple: ...

    @property
    def offset(self) -> int: ...

    @property
    def dtype(self) -> str: ...

    @property
    def size(self) -> int: ...

    @property
    def is_c_contiguous(self) -> bool: ...

    @property
    def is_f_contiguous(self) -> bool: ...

    @property
    def context(self) -> Context: ...

    @property
    def buffer_id(self) -> int: ...

    @property
    def buffer_size(self) -> int: ...

def make_array(arg0: Context, arg1: str, arg2: Sequence[int], arg3: str, /) -> ArrayDesc: ...

def arange(arg0: Context, arg1: str, arg2: float, arg3: float, arg4: float, /) -> ArrayDesc: ...

def view(arg0: ArrayDesc, arg1: list, /) -> ArrayDesc: ...

def reshape(arg0: ArrayDesc, arg1: Sequence[int], /) -> ArrayDesc: ...

def transpose(arg0: ArrayDesc, arg1: Sequence[int], /) -> ArrayDesc: ...

def view_as(arg0: ArrayDesc, arg1: str, /) -> ArrayDesc: ...

def may_share_memory(arg0: ArrayDesc, arg1: ArrayDesc, /) -> bool: ...

def complex_part(arg0: ArrayDesc, arg1: bool, /) -> ArrayDesc: ...

def expand_dims(arg0: ArrayDesc, arg1: int, /) -> ArrayDesc: ...

def to_host(arg0: ArrayDesc, arg1: NDArray[Any], /) -> None: ...

def from_host(arg0: ArrayDesc, arg1: NDArray[Any], /) -> None: ...

def fill(arg0: ArrayDesc, arg1: bytes, /) -> None: ...

def assign(arg0: ArrayDesc, arg1: ArrayDesc, /) -> None: ...

def dlpack_tensor(arg0: ArrayDesc, arg1: int, /) -> Any: ...

def from_dlpack(arg0: Context, arg1: NDArray[Any], /) -> ArrayDesc: ...

def device_address(arg: ArrayDesc, /) -> int: ...

class Node:
    @property
    def dtype(self) -> object: ...

    @property
    def shape(self) -> object: ...

    @property
    def context(self) -> Context: ...

    @property
    def is_array(self) -> bool: ...

def array_node(arg: ArrayDesc, /) -> Node: ...

def scalar_node(arg0: str, arg1: bytes, arg2: str, /) -> Node: ...

def op_node(fn: str, a: Node, b: Node | None = None, c: Node | None = None) -> Node: ...

def evaluate(arg0: Node, arg1: ArrayDesc, /) -> None: ...

def reduce_all(node: Node, op: str, out: str | None = None) -> ArrayDesc: ...

def scan(op: ScanOp, input: Node, out: ArrayDesc, flags: ArrayDesc | None, inclusive: bool) -> None: ...

def reduce_axis(arg0: Node, arg1: str, arg2: int, /) -> ArrayDesc: ...

def reduce_axes(node: Node, op: str, axes: Sequence[int], keepdims: bool, out: str | None = None) -> ArrayDesc: ...

def moment(node: Node, which: str, axes: Sequence[int], keepdims: bool, ddof: float) -> ArrayDesc: ...

def scan_axis(op: ScanOp, input: Node, out: ArrayDesc, axis: int, inclusive: bool) -> None: ...

def mean_type(arg: str, /) -> str: ...

def sort(a: ArrayDesc, axis: int) -> ArrayDesc: ...

def argsort(a: ArrayDesc, axis: int) -> ArrayDesc: ...

def sort_by_key(keys: ArrayDesc, values: ArrayDesc) -> None: ...

def searchsorted(a: ArrayDesc, v: ArrayDesc, right: bool) -> ArrayDesc: ...

def unique(a: ArrayDesc, index: bool, inverse: bool, counts: bool) -> tuple[ArrayDesc, ArrayDesc | None, ArrayDesc | None, ArrayDesc | None]: ...

def bincount(x: ArrayDesc, weights: ArrayDesc | None, minlength: int) -> ArrayDesc: ...

def histogram(a: ArrayDesc, edges: ArrayDesc | None, bins: int, range: tuple[float, float] | None, weights: ArrayDesc | None) -> tuple[ArrayDesc, ArrayDesc]: ...

def flatnonzero(arg: Node, /) -> ArrayDesc: ...

def compact(x: ArrayDesc | None, pred: Node, out: ArrayDesc, rejected: ArrayDesc | None, count: ArrayDesc) -> None: ...

def masked(arg0: ArrayDesc, arg1: Node, /) -> ArrayDesc: ...

def assign_masked(arg0: ArrayDesc, arg1: Node, arg2: ArrayDesc, /) -> None: ...

def concatenate(arg0: Sequence[ArrayDesc], arg1: int, /) -> ArrayDesc: ...

def stack(arg0: Sequence[ArrayDesc], arg1: int, /) -> ArrayDesc: ...

def take(arg0: ArrayDesc, arg1: ArrayDesc, /) -> ArrayDesc: ...

def declared_arguments(arg: str, /) -> list: ...

class ElementwiseKernel:
    def __init__(self, context: Context, arguments: str, operation: str, name: str = 'elementwise_kernel', preamble: str = '') -> None: ...

    @property
    def source(self) -> str: ...

class ReductionKernel:
    def __init__(self, context: Context, dtype: str, neutral: str, reduce: str, map: str, arguments: str, name: str = 'reduce_kernel', preamble: str = '') -> None: ...

class CsrMatrix:
    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def nnz(self) -> int: ...

    @property
    def dtype(self) -> str: ...

    @property
    def index_dtype(self) -> str: ...

    @property
    def context(self) -> Context: ...

    def diagonal(self) -> ArrayDesc: ...

    def spmv(self, arg0: ArrayDesc, arg1: ArrayDesc, /) -> None: ...

    def to_host(self) -> tuple: ...

def csr_matrix(context: Context, rows: int, cols: int, indptr: NDArray[Any], indices: NDArray[Any], data: NDArray[Any]) -> CsrMatrix: ...

class Stencil:
    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def dtype(self) -> str: ...

    def apply(self, arg0: ArrayDesc, arg1: ArrayDesc, /) -> None: ...

def laplacian(arg0: Context, arg1: str, arg2: Sequence[int], /) -> Stencil: ...

class Preconditioner:
    """
    A preconditioner the solvers apply on the device (no Python call per application); what __xgpu_preconditioner__() returns.
    """

    @property
    def rows(self) -> int: ...

    @property
    def kind(self) -> str: ...

    @property
    def context(self) -> Context: ...

    @property
    def dtype(self) -> str: ...

    def apply(self, arg0: ArrayDesc, arg1: ArrayDesc, /) -> None:
        """y = M x."""

def jacobi(a: object) -> Preconditioner: ...

def chebyshev(a: object, degree: int, lanczos_steps: int, safety: float, lower_ratio: float) -> Preconditioner: ...

def operator_preconditioner(a: object) -> Preconditioner: ...

class SmoothedAggregation(Preconditioner):
    @property
    def levels(self) -> int: ...

    def level(self, level: int, which: str) -> CsrMatrix: ...

    def aggregates(self, arg: int, /) -> ArrayDesc: ...

    def candidates(self, arg: int, /) -> ArrayDesc: ...

    def report(self) -> dict: ...

    def refresh(self, arg: CsrMatrix, /) -> None: ...

def smoothed_aggregation(a: CsrMatrix, options: dict, b: ArrayDesc | None) -> SmoothedAggregation: ...

class SolverReport:
    @property
    def method(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def converged(self) -> bool: ...

    @property
    def iterations(self) -> int: ...

    @property
    def status_iteration(self) -> int: ...

    @property
    def rhs_norm(self) -> float: ...

    @property
    def residual(self) -> float: ...

    @property
    def relative_residual(self) -> float: ...

    @property
    def history(self) -> list[tuple[int, float]]: ...

    @property
    def seconds(self) -> float: ...

    @property
    def ms_per_iteration(self) -> float: ...

    @property
    def gbps(self) -> float: ...

    @property
    def launches_per_iteration(self) -> float: ...

    @property
    def operator_form(self) -> str: ...

    def __repr__(self) -> str: ...

def solve(method: str, a: object, m: object | None, b: ArrayDesc, x: ArrayDesc, rtol: float, atol: float, maxiter: int, variant: str, check_interval: int, callback: object | None, restart: int = 30, progress: object | None = None) -> SolverReport: ...

def philox_uniform(dst: ArrayDesc, seed: int, counter: int, lo: float, hi: float) -> int: ...

def philox_normal(dst: ArrayDesc, seed: int, counter: int, mean: float, stddev: float) -> int: ...

def philox_integers(dst: ArrayDesc, seed: int, counter: int, lo: int, range: int) -> int: ...

class ScanOp:
    def __init__(self, arg0: Context, arg1: str, arg2: str, arg3: str, arg4: str, /) -> None: ...

    @property
    def dtype(self) -> str: ...

    @property
    def context(self) -> Context: ...

def sum_op(arg0: Context, arg1: str, /) -> ScanOp: ...

def prod_op(arg0: Context, arg1: str, /) -> ScanOp: ...

class ImageFormat:
    """A texel's layout: channel type, 1, 2 or 4 channels, normalized or not."""

    def __init__(self, channel_type: str, channels: int = 1, normalized: bool = False) -> None:
        """
        A format of `channels` channels of `channel_type` ('uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float16', 'float32'), read as floats in [0, 1] or [-1, 1] when `normalized`.
        """

    @property
    def channel_type(self) -> str:
        """The channel type's name, e.g. 'float32'."""

    @property
    def channels(self) -> int:
        """Channels per texel: 1, 2 or 4."""

    @property
    def normalized(self) -> bool:
        """Whether integer channels read as normalized floats."""

    @property
    def texel_bytes(self) -> int:
        """Bytes per texel."""

    def __repr__(self) -> str: ...

class Sampler:
    """
    How a kernel reads an image: coordinates, addressing and filtering, as PyOpenCL's Sampler.
    """

    def __init__(self, normalized_coords: bool = False, addressing_mode: str = 'clamp_to_edge', filter_mode: str = 'nearest') -> None:
        """
        A sampler: coordinates in [0, 1) when `normalized_coords`, else in texels; `addressing_mode` 'clamp_to_edge', 'clamp_to_border' ('clamp'), 'repeat' or 'mirrored_repeat'; `filter_mode` 'nearest' or 'linear'.
        """

    @property
    def normalized_coords(self) -> bool:
        """Whether coordinates are normalized."""

    @property
    def filter_mode(self) -> str:
        """'nearest' or 'linear'."""

    @property
    def addressing_mode(self) -> str:
        """What a read outside the image gives."""

    def __repr__(self) -> str: ...

class SampledImage:
    """An image with its sampler, as a kernel argument (Image.sampled)."""

class WritableImage:
    """A 2-D image a kernel writes, as a kernel argument (Image.writable)."""

class Image:
    """
    A 1-, 2- or 3-D image on the device (create_image, image_from_array); see docs/images.md.
    """

    @staticmethod
    def create(context: Context, format: ImageFormat, shape: Sequence[int]) -> Image:
        """
        A new image of `format` and `shape` ((width,), (width, height) or (width, height, depth)).
        """

    @staticmethod
    def from_array(array: ArrayDesc, channels: int, normalized: bool) -> Image:
        """
        An image with an array's values (image_from_array is the friendlier form).
        """

    @staticmethod
    def supported(context: Context, format: ImageFormat, dims: int, writable: bool = False) -> bool:
        """
        Whether the device has images of `format` in `dims` dimensions (written by kernels, if `writable`).
        """

    @property
    def dims(self) -> int:
        """1, 2 or 3."""

    @property
    def width(self) -> int:
        """Texels along x."""

    @property
    def height(self) -> int:
        """Texels along y (1 for a 1-D image)."""

    @property
    def depth(self) -> int:
        """Texels along z (1 below 3-D)."""

    @property
    def format(self) -> ImageFormat:
        """The ImageFormat."""

    @property
    def context(self) -> Context:
        """The Context the image lives on."""

    def write(self, arg: NDArray[Any], /) -> None:
        """
        Writes packed host texels of the channel type (Image.set converts first).
        """

    def read(self, arg: NDArray[Any], /) -> None:
        """
        Reads the texels into a packed host array of the channel type (Image.get allocates it).
        """

    def sampled(self, sampler: Sampler) -> SampledImage:
        """The image read through `sampler`, as a kernel argument."""

    def writable(self) -> WritableImage:
        """The 2-D image as a kernel argument to write."""

    def get(self, ary: NDArray[Any] | None = None) -> NDArray[Any]:
        """The texels as a numpy array (see Image.shape)."""

    def set(self, ary: NDArray[Any]) -> Image:
        """Writes packed host texels (converted to the channel type)."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape Image.get returns."""
