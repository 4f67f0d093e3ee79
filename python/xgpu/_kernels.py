"""Kernels from source (PyOpenCL's Program and Kernel, PyCUDA's SourceModule) and from argument
declarations (ElementwiseKernel, ReductionKernel as PyOpenCL's)."""

import numbers
import operator

import numpy as np

from . import _xgpu
from ._array import Array, DeviceData, _bound, compute_pending, dtype_name
from ._errors import DTypeError, InvalidArgument


class Grid:
    """A launch's work-items per dimension (``global_size``, up to 3 dimensions) and its
    work-group size (``local_size``; None: the backend chooses)."""

    def __init__(self, global_size, local_size=None):
        self.global_size = _sizes(global_size, "global")
        self.local_size = None if local_size is None else _sizes(local_size, "local")

    def __repr__(self):
        return f"xgpu.Grid({self.global_size}, {self.local_size})"


def _sizes(s, what):
    if isinstance(s, (numbers.Integral, np.integer)):
        s = (s,)
    s = [int(v) for v in s]
    if not 1 <= len(s) <= 3 or any(v < 0 for v in s):
        raise InvalidArgument(f"xgpu: the {what} size {tuple(s)} must be 1 to 3 counts >= 0")
    return s


def _kernel_argument(a, i):
    if isinstance(a, DeviceData):
        return (a._desc,)  # one parameter: the pointer to the first element
    if isinstance(a, Array):
        d = a.desc
        if not (d.is_c_contiguous or d.is_f_contiguous):
            raise InvalidArgument(f"xgpu: kernel argument {i} is a strided view, which a kernel taking a pointer and "
                                  "an offset cannot walk; pass a contiguous array (a.copy())")
        return d
    if isinstance(a, np.generic):
        if a.dtype.kind not in "biufc":
            raise DTypeError(f"xgpu: kernel argument {i}: a numpy scalar of type {a.dtype} cannot be passed")
        return a.tobytes()
    if isinstance(a, (_xgpu.Local, _xgpu.SampledImage, _xgpu.WritableImage)):
        return a
    if isinstance(a, (bool, numbers.Number)):
        raise DTypeError(f"xgpu: kernel argument {i} is a Python {type(a).__name__}: its width in the kernel is "
                         "not known; pass a numpy scalar (numpy.int32, numpy.float32, ...) of the parameter's type")
    raise DTypeError(f"xgpu: kernel argument {i}: {type(a).__name__} is not an xgpu array, a numpy scalar, "
                     "xgpu.Local or an image (image.sampled(sampler), image.writable())")


def _kernel_call(self, *args, **kwargs):
    """Launches the kernel, checked before anything is enqueued. Three forms:

    - ``k(queue, grid, *args)``: on ``queue`` over ``grid`` (an xgpu.Grid, or the global size as
      an int or a tuple);
    - PyOpenCL's ``k(queue, global_size, local_size, *args)``, the local size None or a tuple;
    - PyCUDA's ``k(*args, block=(x, y, z), grid=(x, y[, z]), stream=queue)``: ``grid`` counts
      work-groups of ``block`` work-items, on ``stream`` or the context's current queue.

    Arguments: xgpu arrays (two parameters each in the first two forms: the pointer and the element
    offset, ``global T* p, long p_offset`` in OpenCL C, ``T* p, long long p_offset`` in CUDA; one
    pointer each in PyCUDA's form), ``a.data`` (one pointer, as PyOpenCL's), numpy scalars (passed
    with their dtype's width) and xgpu.Local (local memory)."""
    if "block" in kwargs:
        block = kwargs.pop("block")
        blocks = kwargs.pop("grid", (1, 1))
        queue = kwargs.pop("stream", None)
        if kwargs.pop("shared", 0):
            raise InvalidArgument("xgpu: dynamic shared memory (shared=) is passed as an xgpu.Local argument")
        if kwargs:
            raise InvalidArgument(f"xgpu: unknown launch options {sorted(kwargs)} (block, grid, stream)")
        block = _sizes(block, "block")
        blocks = _sizes(blocks, "grid")
        if len(blocks) > len(block):
            block = block + [1] * (len(blocks) - len(block))
        blocks = blocks + [1] * (len(block) - len(blocks))
        grid = Grid([g * b for g, b in zip(blocks, block)], block)
        args = [a.data if isinstance(a, Array) else a for a in args]
        if queue is None:
            ctx = next((a.array.context for a in args if isinstance(a, DeviceData)), None)
            if ctx is None:
                raise InvalidArgument("xgpu: a launch with block= and no array argument needs stream= (a queue)")
            queue = ctx.current_queue
    else:
        if kwargs:
            raise InvalidArgument(f"xgpu: unknown launch options {sorted(kwargs)}")
        if len(args) < 2:
            raise InvalidArgument("xgpu: a kernel is called as k(queue, grid, *args), k(queue, global_size, "
                                  "local_size, *args) or k(*args, block=..., grid=...)")
        queue, grid, *args = args
        if args and (args[0] is None or isinstance(args[0], (tuple, list))):  # PyOpenCL's local size
            if isinstance(grid, Grid):
                raise InvalidArgument("xgpu: an xgpu.Grid holds the local size: no local size after it")
            grid = Grid(grid, args[0])
            args = args[1:]
    if not isinstance(grid, Grid):
        grid = Grid(grid)
    packed = [_kernel_argument(a, i) for i, a in enumerate(args)]
    compute_pending()
    self._launch(queue, grid.global_size, grid.local_size, packed)


def _program_getattr(self, name):
    """PyOpenCL's ``prg.name``: the program's kernel of that name."""
    if name.startswith("_") or name not in self.kernel_names:
        raise AttributeError(f"xgpu.Program has no attribute or kernel '{name}'")
    return self.kernel(name)


_xgpu.Program.__getattr__ = _program_getattr
_xgpu.Program.get_function = _xgpu.Program.kernel  # PyCUDA's SourceModule.get_function
_xgpu.Kernel.__call__ = _kernel_call


def _on(queue, work):
    """work() with its array operations on `queue` (the context's current queue where None)."""
    if queue is None:
        return work()
    scope = _xgpu.QueueScope(queue)
    try:
        return work()
    finally:
        del scope


class _Declarations:
    """A user kernel's declared parameters, and the conversion of arguments to them."""

    def __init__(self, arguments):
        self.params = _xgpu.declared_arguments(arguments)

    def bind(self, args):
        if len(args) != len(self.params):
            raise InvalidArgument(f"xgpu: the kernel takes {len(self.params)} arguments "
                                  f"({', '.join(p[0] for p in self.params)}), not {len(args)}")
        out = []
        for (name, is_array, dtype), a in zip(self.params, args):
            if is_array:
                if not isinstance(a, Array):
                    raise DTypeError(f"xgpu: argument '{name}' is an array; got {type(a).__name__}")
                if dtype is not None and a._dtype != dtype:
                    raise DTypeError(f"xgpu: argument '{name}' is declared an array of {dtype}; got one of {a._dtype}")
                out.append(a.desc)
            elif dtype is None:
                if not isinstance(a, (_xgpu.SampledImage, _xgpu.WritableImage)):
                    raise DTypeError(f"xgpu: argument '{name}' is an image: pass image.sampled(sampler) or "
                                     f"image.writable(), not {type(a).__name__}")
                out.append(a)
            else:
                if isinstance(a, Array):
                    raise DTypeError(f"xgpu: argument '{name}' is a scalar of type {dtype}; got an array")
                if isinstance(a, (numbers.Integral, np.integer)) and not isinstance(a, (bool, np.bool_)) and \
                        np.dtype(dtype).kind in "iu":
                    info = np.iinfo(dtype)
                    if not info.min <= int(a) <= info.max:
                        raise OverflowError(f"xgpu: argument '{name}' of type {dtype}: {int(a)} is out of its range")
                try:
                    value = np.array(a).astype(np.dtype(dtype), casting="same_kind")
                except TypeError as e:
                    raise DTypeError(f"xgpu: argument '{name}' of type {dtype}: {a!r} ({type(a).__name__}) "
                                     "cannot be converted") from e
                out.append((value.tobytes(), dtype))
        return out


class ElementwiseKernel:
    """PyOpenCL's and PyCUDA's ElementwiseKernel: ``operation`` on index ``i`` over the
    arguments declared in ``arguments`` ("float a, const float* x, float* y")::

        lin = xgpu.ElementwiseKernel(ctx, "float a, const float* x, float* y", "y[i] = a * x[i]")
        lin(2.0, x, y)                       # over the size of the first array
        lin(2.0, x, y, range=slice(0, 100, 2))

    Scalars are converted to their declared types; arrays must have the declared element type.
    """

    def __init__(self, context, arguments, operation, name="elementwise_kernel", preamble=""):
        self.context = context
        self._decl = _Declarations(arguments)
        self._k = _xgpu.ElementwiseKernel(context, arguments, operation, name, preamble)

    @property
    def source(self):
        """The generated kernel's source, as the compiler sees it after the dialect's preamble."""
        return self._k.source

    def __call__(self, *args, range=None, queue=None):
        bound = self._decl.bind(args)
        if range is not None:
            if not isinstance(range, slice):
                raise InvalidArgument(f"xgpu: ElementwiseKernel: range must be a slice, not {type(range).__name__}")
            range = slice(*(None if v is None else _bound(v) for v in (range.start, range.stop, range.step)))
        compute_pending()
        _on(queue, lambda: self._k._launch(bound, range))


class ReductionKernel:
    """PyOpenCL's ReductionKernel: ``map_expr`` over index ``i`` and the arguments, combined by
    ``reduce_expr`` (an associative and commutative expression of ``a`` and ``b``) from
    ``neutral``, into a 0-d device array of ``dtype_out``::

        dot = xgpu.ReductionKernel(ctx, np.float64, "0", "a + b", "x[i] * y[i]",
                                   "const double* x, const double* y")
        d = dot(x, y).get()
    """

    def __init__(self, context, dtype_out, neutral, reduce_expr, map_expr, arguments, name="reduce_kernel",
                 preamble=""):
        self.context = context
        self.dtype_out = np.dtype(dtype_out)
        self._decl = _Declarations(arguments)
        self._k = _xgpu.ReductionKernel(context, dtype_name(dtype_out), neutral, reduce_expr, map_expr, arguments,
                                        name, preamble)

    def __call__(self, *args, range=None, queue=None):
        """Over the size of the first array argument, or over i = 0 .. range - 1 (an int)."""
        bound = self._decl.bind(args)
        n = -1 if range is None else operator.index(range)
        if range is not None and n < 0:
            raise InvalidArgument(f"xgpu: ReductionKernel: range={range} must be a count >= 0")
        compute_pending()
        return Array(_on(queue, lambda: self._k._run(n, bound)))


class ScanKernel:
    """A scan (prefix sum) with any associative operator ``scan_expr`` over ``a`` and ``b`` and its
    ``neutral`` element, in ``dtype``::

        running_max = xgpu.ScanKernel(ctx, np.int32, "a > b ? a : b", "-2147483647")
        y = running_max.inclusive(x)         # y[i] = max(x[0..i])
        running_max.exclusive(x, out=y)      # y[i] = max(x[0..i-1]), y[0] = neutral
        running_max.inclusive(x, flags=f)    # segmented: a nonzero flag starts a new segment

    The input may be an expression (computed inside the scan's kernel); scans run over the
    elements in C order and the output may be the input.
    """

    def __init__(self, context, dtype, scan_expr, neutral, preamble=""):
        self.context = context
        self.dtype = np.dtype(dtype)
        self._op = _xgpu.ScanOp(context, dtype_name(dtype), scan_expr, str(neutral), preamble)

    def _run(self, x, out, flags, inclusive, temporary):
        from ._array import _fold, empty

        if not isinstance(x, Array):
            raise DTypeError(f"xgpu: a scan takes an xgpu array, not {type(x).__name__}")
        if out is None:
            out = empty(self.context, x.shape, self.dtype)
        elif out.dtype != self.dtype:
            raise DTypeError(f"xgpu: the scan's output is {out.dtype}, not {self.dtype}")
        node, _ = _fold(x, temporary)
        f = None if flags is None else flags.desc
        compute_pending()
        _xgpu.scan(self._op, node, out.desc, f, inclusive)
        return out

    def inclusive(self, x, out=None, flags=None):
        """The inclusive scan of ``x`` (into ``out`` if given; segments start where ``flags`` is
        nonzero); returns the result array."""
        return self._run(x, out, flags, True, False)

    def exclusive(self, x, out=None, flags=None):
        """The exclusive scan of ``x`` (into ``out`` if given; segments start where ``flags`` is
        nonzero); returns the result array."""
        return self._run(x, out, flags, False, False)


class InclusiveScanKernel(ScanKernel):
    """PyOpenCL's InclusiveScanKernel: ``knl(x)`` or ``knl(x, out)``."""

    def __init__(self, context, dtype, scan_expr, neutral=None, preamble=""):
        if neutral is None:
            raise InvalidArgument("xgpu: InclusiveScanKernel needs the neutral element of its operator")
        super().__init__(context, dtype, scan_expr, neutral, preamble)

    def __call__(self, x, out=None, flags=None):
        return self.inclusive(x, out, flags)


class ExclusiveScanKernel(ScanKernel):
    """PyOpenCL's ExclusiveScanKernel: ``knl(x)`` or ``knl(x, out)``."""

    def __call__(self, x, out=None, flags=None):
        return self.exclusive(x, out, flags)


def _running(op, x, axis, dtype, what):
    from ._array import _axis, _fold, empty

    if not isinstance(x, Array):
        raise DTypeError(f"xgpu.{what}: expected an xgpu array, not {type(x).__name__}")
    dtype = _xgpu.sum_type(x._dtype) if dtype is None else dtype_name(dtype)
    node, _ = _fold(x, False)
    compute_pending()
    make = _xgpu.sum_op if op == "sum" else _xgpu.prod_op
    if axis is None:
        out = empty(x.context, (x.size,), dtype)
        _xgpu.scan(make(x.context, dtype), node, out.desc, None, True)
    else:
        out = empty(x.context, x.shape, dtype)
        _xgpu.scan_axis(make(x.context, dtype), node, out.desc, _axis(axis, x.ndim), True)
    return out


def cumsum(x, axis=None, dtype=None):
    """numpy.cumsum: the running sum in C order as a 1-D array, or along ``axis`` of x's shape
    (bool and signed integers to int64, unsigned to uint64, floats keep their type; or ``dtype``)."""
    return _running("sum", x, axis, dtype, "cumsum")


def cumprod(x, axis=None, dtype=None):
    """numpy.cumprod: the running product, as cumsum."""
    return _running("prod", x, axis, dtype, "cumprod")
