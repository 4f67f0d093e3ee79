"""Device arrays with numpy's semantics, over the C++ array layer.

An arithmetic statement is one kernel, as in C++: operators and math functions build an
expression, and the expression is computed when its values are first needed (``get()``, printing,
indexing, a kernel or a reduction taking it, a further statement that names it). An expression
that is only an operand of the next operation (``2 * x`` in ``2 * x + sin(x)``) is folded into
that operation's kernel instead of being computed on its own. Before anything writes an array
(assignment into it, a kernel launch), every expression still pending is computed, so that it
sees the values it was written over.
"""

import builtins
import numbers
import operator
import struct
import sys
import weakref

import numpy as np

from . import _xgpu
from ._errors import ArrayHasOffsetError, AxisError, DTypeError, InvalidArgument, ShapeError

__all__ = ["Array", "compute_pending", "empty", "full", "zeros", "ones", "empty_like", "zeros_like", "ones_like",
           "full_like", "arange", "to_device", "maximum", "minimum", "power", "fmod", "floor_divide", "atan2",
           "arctan2", "hypot", "logical_and", "logical_or", "where", "sum", "prod", "mean", "var", "std", "min", "max",
           "amin", "amax", "argmin",
           "argmax", "any", "all", "dot", "vdot", "norm", "diff", "from_dlpack", "DeviceData"]

# Expressions not yet computed (computed before any write, see compute_pending).
_pending = []  # weak references; dead ones and computed arrays are dropped as the list is swept
_SWEEP = 4096
# Expressions of more nodes than this are computed rather than folded further (a loop of
# `x = x + 1` would otherwise grow one kernel without bound).
_MAX_NODES = 48


def _calibrate():
    """The reference counts an operand has, where it is read below, when it is a temporary.

    Each path is measured on a probe: an operator's left and right operands, a function's
    argument, a method's object and the value of an item assignment. The callers read the count
    first thing, before the operand is pushed as an argument of anything. Where a named operand
    cannot be told from a temporary (an interpreter that borrows references on its stack), the
    path folds nothing: correct, one kernel an operation.
    """

    class Probe:
        def __add__(self, other):
            return sys.getrefcount(self), sys.getrefcount(other)

        def method(self):
            return sys.getrefcount(self)

        def __setitem__(self, key, value):
            Probe.stored = sys.getrefcount(value)

    def arg(x):
        return sys.getrefcount(x)

    a, b = Probe(), Probe()
    temporary = Probe() + Probe()
    named = a + b
    pairs = {
        "self": (temporary[0], named[0]),
        "other": (temporary[1], named[1]),
        "arg": (arg(Probe()), arg(a)),
        "method": (Probe().method(), a.method()),
    }
    p = Probe()
    p[0] = Probe()
    t = Probe.stored
    p[0] = a
    pairs["setitem"] = (t, Probe.stored)
    return {path: (t if t < n else -1) for path, (t, n) in pairs.items()}


_TEMPORARY = _calibrate()
_T_SELF, _T_OTHER, _T_ARG, _T_METHOD, _T_SETITEM = (_TEMPORARY[p] for p in ("self", "other", "arg", "method", "setitem"))


def dtype_name(dtype):
    """numpy's name of a dtype-like (np.float32, "f4", float, ...): xgpu's element type names."""
    try:
        return np.dtype(dtype).name
    except TypeError as e:
        raise DTypeError(f"xgpu: {dtype!r} is not a numpy dtype") from e


def _scalar_kind(value):
    """(kind, the value's dtype, its bytes) of a Python or numpy scalar; None for anything else."""
    t = type(value)
    if t is float:
        return "f", "float64", _F64.pack(value)
    if t is int:
        if -(1 << 63) <= value < (1 << 63):
            return "i", "int64", _I64.pack(value)
        return "i", "uint64", np.uint64(value).tobytes()  # numpy refuses what uint64 cannot hold, too
    if isinstance(value, (bool, np.bool_)):
        return "b", "bool", b"\x01" if value else b"\x00"
    if isinstance(value, numbers.Integral):
        if isinstance(value, np.unsignedinteger):
            return "u", "uint64", np.uint64(value).tobytes()
        return "i", "int64", np.int64(value).tobytes()
    if isinstance(value, numbers.Real):
        return "f", "float64", np.float64(value).tobytes()
    if isinstance(value, numbers.Complex):
        return "c", "complex128", np.complex128(value).tobytes()
    return None


_F64, _I64 = struct.Struct("<d"), struct.Struct("<q")


def _is_scalar(value):
    return isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, Array)


class Array:
    """An n-dimensional array on a device (numpy's ndarray, PyOpenCL's and PyCUDA's GPUArray).

    Arrays are handles: assignment shares, ``copy()`` duplicates. Views (``a[2:10:2]``, ``a.T``,
    ``reshape``, ``view(dtype)``) share their elements with the array they come from.
    """

    __slots__ = ("_d", "_node", "_shape", "_dtype", "_nodes", "_leaf", "__weakref__")
    __array_priority__ = 100.0
    __array_ufunc__ = None  # numpy's operators defer to the reflected ones below
    __hash__ = None

    def __init__(self, desc=None, node=None, nodes=1):
        """An array of a C++ description, or a pending expression of `nodes` nodes."""
        self._d, self._node, self._nodes, self._leaf = desc, node, nodes, None
        if desc is not None:
            self._shape, self._dtype = desc.shape, desc.dtype
        else:
            self._shape, self._dtype = node.shape, node.dtype
            _pending.append(weakref.ref(self))
            if len(_pending) > _SWEEP:
                _sweep()

    # -- description -------------------------------------------------------------------------
    @property
    def shape(self):
        """The shape, a tuple of ints."""
        return self._shape

    @property
    def dtype(self):
        """The element type, a numpy dtype."""
        return np.dtype(self._dtype)

    @property
    def ndim(self):
        """The number of dimensions."""
        return len(self._shape)

    @property
    def size(self):
        """The number of elements."""
        n = 1
        for s in self._shape:
            n *= s
        return n

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d xgpu array")
        return self._shape[0]

    @property
    def itemsize(self):
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self):
        """Bytes of all the elements."""
        return self.size * self.itemsize

    @property
    def strides(self):
        """In bytes, as numpy gives them (an empty array's as numpy.empty gives them)."""
        if self.size == 0:
            return np.empty(self._shape, self.dtype).strides
        return tuple(s * self.itemsize for s in self.desc.strides)

    @property
    def context(self):
        """The Context the array lives on."""
        return self._d.context if self._d is not None else self._node.context

    @property
    def flags(self):
        """numpy's flags: ``a.flags.c_contiguous`` or ``a.flags["C_CONTIGUOUS"]``."""
        return _Flags(self.desc)

    @property
    def data(self):
        """The array's memory as one kernel parameter (PyOpenCL's ``a.data``; PyCUDA passes the
        array itself): a pointer to its first element. On OpenCL a buffer argument has no offset, so
        a view that starts inside its buffer raises ArrayHasOffsetError (as PyOpenCL); on CUDA the
        pointer carries the offset."""
        return DeviceData(self)

    @property
    def desc(self):
        """The C++ description (computes a pending expression first)."""
        if self._d is None:
            self._compute()
        return self._d

    def _compute(self):
        d = _xgpu.make_array(self._node.context, self._dtype, list(self._shape), "C")
        _xgpu.evaluate(self._node, d)
        self._d, self._node, self._nodes = d, None, 1

    def finish(self):
        """Computes the array if it is a pending expression; returns it. Does not wait."""
        if self._d is None:
            self._compute()
        return self

    # -- host transfers ----------------------------------------------------------------------
    def get(self, ary=None, queue=None):
        """The values as a numpy array (C-contiguous); into ``ary`` where given. Blocking. Read on
        ``queue`` (default: the context's current queue), which orders it after that queue's work:
        work on other queues is not waited for (PyOpenCL's ``a.get(queue)`` is taken too)."""
        if isinstance(ary, _xgpu.Queue):
            ary, queue = None, ary
        if queue is not None:
            from ._kernels import _on

            return _on(queue, lambda: self.get(ary))
        d = self.desc
        if ary is None:
            ary = np.empty(self._shape, self.dtype)
        elif ary.dtype != self.dtype:
            raise DTypeError(f"xgpu: get: the host array is of {ary.dtype}, not {self.dtype}")
        elif ary.shape != self._shape or not ary.flags.c_contiguous:
            raise ShapeError(f"xgpu: get: the host array is {ary.shape}, not C-contiguous {self._shape}")
        _xgpu.to_host(d, ary.reshape(-1) if ary.ndim else ary.reshape(1))
        return ary

    def set(self, ary, queue=None):
        """Writes host values into the array (converted to its dtype, broadcast to its shape), on
        ``queue`` (default: the context's current queue)."""
        if queue is not None:
            from ._kernels import _on

            return _on(queue, lambda: self.set(ary))
        compute_pending()
        host = np.ascontiguousarray(np.broadcast_to(np.asarray(ary), self._shape), dtype=self.dtype)
        _xgpu.from_host(self.desc, host.reshape(-1) if host.ndim else host.reshape(1))
        return self

    def __array__(self, dtype=None, copy=None):
        a = self.get()
        return a if dtype is None else a.astype(dtype, copy=False)

    # -- interchange with other GPU libraries -------------------------------------------------------
    # The values are complete when they are handed over: the context's queue is finished first,
    # so the consumer may read them on any stream without waiting for xgpu's.
    def __dlpack_device__(self):
        """(kDLCUDA, device) on CUDA, (kDLOpenCL, device) on OpenCL."""
        ctx = self.context
        return (2 if ctx.backend == "cuda" else 4, ctx.device.index)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export without a copy (CUDA; with ``copy=True`` of a fresh copy). The values are
        complete for any ``stream`` of the consumer; ``max_version`` (1, x) gives a versioned
        capsule, and a ``dl_device`` other than the array's raises BufferError. OpenCL buffers have
        no address another library could read: BufferError there, as the protocol asks."""
        ctx = self.context
        if ctx.backend != "cuda":
            raise BufferError(f"xgpu: DLPack export needs the CUDA backend: {ctx.backend} buffers have no device "
                              "address a consumer could read (copy through the host with get())")
        d = (self.copy() if copy else self).desc
        compute_pending()
        ctx.current_queue.finish()
        options = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device)) if v is not None}
        return _xgpu.dlpack_tensor(d, ctx.device.index).__dlpack__(**options)

    @property
    def __cuda_array_interface__(self):
        """Numba's and CuPy's CUDA array interface (version 3) on CUDA; absent on OpenCL."""
        ctx = self.context
        if ctx.backend != "cuda":
            raise AttributeError("__cuda_array_interface__ exists on the CUDA backend only")
        d = self.desc
        compute_pending()
        ctx.current_queue.finish()
        strides = None if d.is_c_contiguous else self.strides
        return {"shape": self._shape, "typestr": self.dtype.str, "data": (_xgpu.device_address(d), False),
                "strides": strides, "version": 3, "stream": None}

    def __repr__(self):
        return repr(self.get())

    def __str__(self):
        return str(self.get())

    def __format__(self, spec):
        return format(self.get().item() if not self._shape else self.get(), spec)

    def item(self):
        """The one element of a size-1 array, as a Python scalar (reads the device)."""
        if self.size != 1:
            raise ShapeError(f"xgpu: item: the array {self._shape} has {self.size} elements, not one")
        return self.get().reshape(-1)[0].item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError("xgpu: the truth value of an array of more than one element is ambiguous; "
                             "use xgpu.any or xgpu.all")
        return bool(self.item())

    def __index__(self):
        if self.dtype.kind not in "iub" or self.size != 1:
            raise TypeError("xgpu: only a one-element integer array can be an index")
        return int(self.item())

    # -- views, copies, writes -----------------------------------------------------------------
    def _index(self, key):
        """numpy's basic indexing: the C++ view's index (integers and slices) and the positions
        of the result where None (numpy.newaxis) inserts an axis."""
        if not isinstance(key, tuple):
            key = (key,)
        used = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
        if builtins.sum(1 for k in key if k is Ellipsis) > 1:
            raise IndexError("xgpu: an index can only have a single ellipsis ('...')")
        if builtins.any(k is Ellipsis for k in key):
            at = next(i for i, k in enumerate(key) if k is Ellipsis)
            key = key[:at] + (slice(None),) * (self.ndim - used) + key[at + 1:]
        if used > self.ndim:
            raise IndexError(f"xgpu: too many indices ({used}) for an array of shape {self._shape}")
        out, new_axes, position, axis = [], [], 0, 0
        for k in key:
            if k is None:
                new_axes.append(position)
                position += 1
            elif isinstance(k, slice):
                out.append(slice(*(None if v is None else _bound(v) for v in (k.start, k.stop, k.step))))
                position += 1
                axis += 1
            elif isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, (bool, np.bool_)):
                n = self._shape[axis]
                if not -n <= int(k) < n:
                    raise IndexError(f"xgpu: index {int(k)} is out of bounds for axis {axis} with size {n}")
                out.append(int(k))
                axis += 1
            else:
                raise IndexError(f"xgpu: arrays take integers, slices, None and '...' as indices, not "
                                 f"{type(k).__name__}")
        return out, new_axes

    def _view(self, key):
        index, new_axes = self._index(key)
        d = _xgpu.view(self.desc, index)
        for axis in new_axes:
            d = _xgpu.expand_dims(d, axis)
        return d

    def __getitem__(self, key):
        if _is_mask(key):
            return _masks.get(self, key)
        return Array(self._view(key))

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d xgpu array")
        return (self[k] for k in range(self._shape[0]))

    def __setitem__(self, key, value):
        temporary = sys.getrefcount(value) <= _T_SETITEM
        if _is_mask(key):
            return _masks.set(self, key, value)
        _write(self._view(key), value, temporary)

    def fill(self, value):
        """Sets every element to ``value`` (converted to the array's type); returns the array."""
        data = _scalar_bytes(value, self._dtype)
        compute_pending()
        _xgpu.fill(self.desc, data)
        return self

    def copy(self, order="C"):
        """A new array with the same elements, laid out in ``order`` ("C" or "F")."""
        out = Array(_xgpu.make_array(self.context, self._dtype, list(self._shape), _order(self, order)))
        if self._d is None:
            _xgpu.evaluate(self._node, out._d)
        else:
            _xgpu.assign(out._d, self._d)
        return out

    def astype(self, dtype, copy=True):
        """The elements converted to ``dtype`` (a new array; the array itself when ``copy=False`` and
        the type is the same)."""
        name = dtype_name(dtype)
        if name == self._dtype and not copy:
            return self
        out = Array(_xgpu.make_array(self.context, name, list(self._shape), "C"))
        _xgpu.assign(out._d, self.desc)
        return out

    def view(self, dtype=None):
        """The same memory as elements of ``dtype`` (no copy), or the same array as a new handle."""
        if dtype is None:
            return Array(self.desc)
        return Array(_xgpu.view_as(self.desc, dtype_name(dtype)))

    def reshape(self, *shape, order="C"):
        """numpy's reshape: a view where the layout allows, else a copy; order 'F' reads and
        writes the elements in Fortran order."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if order == "F":
            return self.transpose().reshape(tuple(reversed(shape))).transpose()
        if order != "C":
            raise ValueError(f"xgpu: reshape: order must be 'C' or 'F', not {order!r}")
        shape = [_to_int(s) for s in shape]
        if builtins.any(s < -1 for s in shape):
            raise ShapeError(f"xgpu: reshape: negative dimensions in {tuple(shape)} (only -1, once)")
        if shape.count(-1) > 1:
            raise ShapeError("xgpu: reshape: only one dimension can be -1")
        if -1 in shape:
            known = 1
            for s in shape:
                known *= s if s != -1 else 1
            if known == 0 or self.size % known:
                raise ShapeError(f"xgpu: cannot reshape an array of {self.size} elements into {tuple(shape)}")
            shape[shape.index(-1)] = self.size // known
        return Array(_xgpu.reshape(self.desc, [int(s) for s in shape]))

    def ravel(self, order="C"):
        """The elements as a 1-D array in C (or F) order: a view where the layout allows."""
        if order == "F":
            return self.transpose().reshape(-1)
        if order not in ("C", "A", "K"):
            raise ValueError(f"xgpu: ravel: order must be 'C', 'F', 'A' or 'K', not {order!r}")
        return self.reshape(-1)

    def squeeze(self, axis=None):
        """The array without its axes of length 1 (or only `axis`), as a view."""
        if axis is None:
            axes = [i for i, n in enumerate(self._shape) if n == 1]
        else:
            axes = [_axis(a, self.ndim) for a in ((axis,) if isinstance(axis, (numbers.Integral, np.integer))
                                                  else axis)]
            wrong = [a for a in axes if self._shape[a] != 1]
            if wrong:
                raise ShapeError(f"xgpu: squeeze: axis {wrong[0]} has length {self._shape[wrong[0]]}, not 1")
        d = self.desc
        return Array(_xgpu.view(d, [0 if i in axes else slice(None) for i in range(self.ndim)]))

    def transpose(self, *axes):
        """A view with the axes reversed, or permuted as ``axes`` says (numpy's transpose)."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        elif len(axes) == 1 and axes[0] is None:
            axes = ()
        axes = [_axis(a, self.ndim) for a in axes]
        if axes and sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"xgpu: transpose: the axes {tuple(axes)} are not a permutation of 0..{self.ndim - 1}")
        return Array(_xgpu.transpose(self.desc, axes))

    @property
    def T(self):
        """The transpose, a view."""
        return self.transpose()

    # The operators are defined below the class (_define_operators).

    # -- reductions as methods ---------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=None):
        """numpy's sum: over all elements (a 0-d device array) or along ``axis`` (an int or a tuple)."""
        temporary = sys.getrefcount(self) <= _T_METHOD
        _no_out(out, "sum")
        if dtype is None and initial is None:
            return _reduce("sum", self, temporary, axis, keepdims=keepdims)
        return sum(self, axis, dtype, keepdims=keepdims, initial=initial)

    def min(self, axis=None, out=None, keepdims=False, initial=None):
        """numpy's min: over all elements (a 0-d device array) or along ``axis``."""
        temporary = sys.getrefcount(self) <= _T_METHOD
        _no_out(out, "min")
        return _extremum("min", self, temporary, axis, initial, keepdims)

    def max(self, axis=None, out=None, keepdims=False, initial=None):
        """numpy's max: over all elements (a 0-d device array) or along ``axis``."""
        temporary = sys.getrefcount(self) <= _T_METHOD
        _no_out(out, "max")
        return _extremum("max", self, temporary, axis, initial, keepdims)

    def dot(self, other):
        """The dot product with another vector (no conjugation), a 0-d device array."""
        return dot(self, other)

    def conj(self):
        """The complex conjugate (the array itself for real types), fused into the statement."""
        temporary = sys.getrefcount(self) <= _T_METHOD
        return _unary("conj", self, temporary)

    conjugate = conj

    @property
    def real(self):
        """numpy's: a view of the real parts of a complex array (writes go into it), the array
        itself for a real one."""
        if self.dtype.kind != "c":
            return Array(self.desc)
        return Array(_xgpu.complex_part(self.desc, False))

    @property
    def imag(self):
        """numpy's: a view of the imaginary parts of a complex array; zeros for a real one (a new
        array, as numpy's is read-only)."""
        if self.dtype.kind != "c":
            return zeros(self.context, self._shape, self._dtype)
        return Array(_xgpu.complex_part(self.desc, True))


class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous")

    def __init__(self, d):
        self.c_contiguous, self.f_contiguous = d.is_c_contiguous, d.is_f_contiguous

    @property
    def forc(self):
        return self.c_contiguous or self.f_contiguous

    def __getitem__(self, key):
        return {"C_CONTIGUOUS": self.c_contiguous, "C": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous,
                "F": self.f_contiguous}[key]

    def __repr__(self):
        return f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}"


def from_dlpack(context, tensor):
    """A CUDA array of another library (anything with ``__dlpack__``: CuPy, PyTorch, JAX, ...) as
    an xgpu array on ``context``, without a copy: both see the same memory, and the other
    library's object is kept alive while the xgpu array is. The device's work enqueued so far
    (the other library's included) completes first. CUDA only."""
    if context.backend != "cuda":
        raise InvalidArgument(f"xgpu: from_dlpack needs the CUDA backend, not {context.backend}: OpenCL buffers "
                              "cannot hold another library's memory (copy through the host)")
    if not hasattr(tensor, "__dlpack__"):
        raise TypeError(f"xgpu: from_dlpack takes an object with __dlpack__, not {type(tensor).__name__}")
    device = tensor.__dlpack_device__() if hasattr(tensor, "__dlpack_device__") else None
    if device is not None and int(device[0]) != 2:  # kDLCUDA
        raise InvalidArgument(f"xgpu: from_dlpack takes CUDA tensors; this one is on DLPack device type "
                              f"{int(device[0])} (copy it to the GPU, or use xgpu.to_device for host arrays)")
    return Array(_xgpu.from_dlpack(context, tensor))


# Boolean masks as indices (numpy's a[mask] and a[mask] = v), served by xgpu._algorithms.
_masks = None


def _is_mask(key):
    return (type(key) is Array and key._dtype == "bool") or (isinstance(key, np.ndarray) and key.dtype == np.bool_)


def _axis(axis, ndim):
    """numpy's normalisation of an axis (negative from the end); out of range raises AxisError."""
    if not isinstance(axis, (numbers.Integral, np.integer)) or isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"xgpu: an axis must be an integer, not {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise AxisError(f"xgpu: axis {axis} is out of bounds for an array of dimension {ndim}")
    return int(axis) % ndim


def _to_int(v):
    if isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    raise IndexError(f"xgpu: slice bounds must be integers, not {type(v).__name__}")


def _bound(v):
    """A slice bound clamped to 64 bits, which numpy's rules clamp further to the axis."""
    return builtins.min(builtins.max(_to_int(v), -(1 << 63)), (1 << 63) - 1)


def _order(a, order):
    if order in ("C", "F"):
        return order
    if order in ("K", "A"):
        return "K" if a._d is not None else "C"
    raise ValueError(f"xgpu: order must be 'C', 'F', 'A' or 'K', not {order!r}")


def compute_pending(keep=None):
    """Computes every pending expression (before anything writes an array they may read), but
    `keep`, the expression about to be computed into the array written. A temporary folded into
    another expression is gone by now (the references are weak); one still alive, though folded,
    is computed too, since someone may still read it."""
    refs = _pending[:]
    _pending.clear()
    for k, r in enumerate(refs):
        a = r()
        if a is keep and a is not None:
            _pending.append(r)
        elif a is not None and a._d is None:
            try:
                a._compute()
            except BaseException:
                _pending.extend(refs[k + 1:])  # the others stay pending; this one raised its error once
                raise


def _sweep():
    """Drops the references to arrays that are gone or computed."""
    global _SWEEP
    _pending[:] = [r for r in _pending if (a := r()) is not None and a._d is None]
    _SWEEP = builtins.max(4096, 2 * len(_pending))


def _fold(x, temporary):
    """The node of array operand `x` and its size: a pending temporary is folded into the new
    expression; a named pending expression is computed first, so that it is computed once."""
    if x._d is None:
        if temporary and x._nodes < _MAX_NODES:
            return x._node, x._nodes  # its tree lives on in the new expression
        x._compute()
    leaf = x._leaf  # the array as an expression's operand, made once: its description never changes
    if leaf is None:
        leaf = x._leaf = _xgpu.array_node(x._d)
    return leaf, 1


def _operand(x, temporary, against, compare=False):
    """The node of an operand: an array, or a Python or numpy scalar (None for anything else). A
    Python scalar is weak, as in numpy: it takes the array's type `against` where that holds its
    kind; a numpy scalar combines as the installed numpy combines it with an array (numpy 1: by
    its value; numpy 2: by its type), where the result is a type xgpu arrays hold. A Python int
    that the integer type `against` cannot hold raises OverflowError as numpy 2 does, but in a
    comparison (`compare`), which it takes in its own type, so that `uint8_array < -1` is False."""
    if type(x) is Array:
        return _fold(x, temporary)
    kind = _scalar_kind(x)
    if kind is None:
        if isinstance(x, np.ndarray):
            raise TypeError("xgpu: a numpy array and an xgpu array do not combine: move it with xgpu.to_device "
                            "or read the other with get()")
        return None, 0
    k, value_type, value = kind
    as_type = _weak(against, k)
    if type(x) is int and as_type in _INT_RANGES:
        lo, hi = _INT_RANGES[as_type]
        if not lo <= x <= hi:
            if not compare:
                raise OverflowError(f"xgpu: Python integer {x} out of bounds for {as_type}")
            as_type = value_type
    if isinstance(x, np.generic) and k != "b":
        t = np.result_type(np.empty(0, against), x).name
        if t in _DTYPES:
            as_type = t
    key = (as_type, value, value_type)
    node = _scalars.get(key)
    if node is None:
        if len(_scalars) > 1024:
            _scalars.clear()
        node = _scalars[key] = _xgpu.scalar_node(as_type, value, value_type)
    return node, 1


_INT_RANGES = {t: (int(np.iinfo(t).min), int(np.iinfo(t).max))
               for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")}
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}

# Scalar nodes by (type, bytes, the value's type): a constant of a loop is made once.
_scalars = {}


_weak_types = {}


def _weak(against, kind):
    """numpy's type for an array of `against` and a Python scalar of `kind` (cached)."""
    t = _weak_types.get((against, kind))
    if t is None:
        t = _weak_types[(against, kind)] = _xgpu.promote_weak(against, kind)
    return t


def _binary_node(fn, a, b, temp_a, temp_b):
    against = a._dtype if type(a) is Array else b._dtype
    compare = fn in _COMPARISONS
    na, ca = _operand(a, temp_a, against, compare)
    if na is None:
        return None, 0
    nb, cb = _operand(b, temp_b, against, compare)
    if nb is None:
        return None, 0
    return _op_node(fn, na, nb), ca + cb + 1


def _binary(fn, a, b, temp_a, temp_b):
    node, count = _binary_node(fn, a, b, temp_a, temp_b)
    return NotImplemented if node is None else Array(node=node, nodes=count)


def _op_node(fn, *nodes):
    """An operation's node; an operation its operands' types lack is a DTypeError, raised here."""
    try:
        return _xgpu.op_node(fn, *nodes)
    except ShapeError:
        raise
    except InvalidArgument as e:
        raise DTypeError(str(e)) from None


def _unary(fn, a, temporary):
    node, count = _fold(a, temporary)
    return Array(node=_op_node(fn, node), nodes=count + 1)


def _check_bool(fn, *xs):
    for x in xs:
        dt = x._dtype if isinstance(x, Array) else np.asarray(x).dtype.name
        if dt != "bool":
            raise DTypeError(f"xgpu: {fn} is defined for bool arrays only, not {dt}")


def _define_operators():
    def binary(fn, check=None):
        def op(self, other):
            if check:
                _check_bool(check, self, other)
            temp_self, temp_other = sys.getrefcount(self) <= _T_SELF, sys.getrefcount(other) <= _T_OTHER
            return _binary(fn, self, other, temp_self, temp_other)

        def rop(self, other):
            if check:
                _check_bool(check, self, other)
            temporary = sys.getrefcount(self) <= _T_SELF
            return _binary(fn, other, self, False, temporary)

        def iop(self, other):
            temporary = sys.getrefcount(other) <= _T_OTHER
            return _inplace(fn, self, other, temporary)

        return op, rop, iop

    for name, fn in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("mod", "mod"),
                     ("pow", "pow"), ("floordiv", "floor_divide")):
        op, rop, iop = binary(fn)
        setattr(Array, f"__{name}__", op)
        setattr(Array, f"__r{name}__", rop)
        setattr(Array, f"__i{name}__", iop)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(Array, f"__{name}__", binary(name)[0])
    for name, fn in (("and", "and"), ("or", "or")):
        op, rop, _ = binary(fn, check="&" if name == "and" else "|")
        setattr(Array, f"__{name}__", op)
        setattr(Array, f"__r{name}__", rop)

    def unary(fn, check=None):
        def op(self):
            if check:
                _check_bool(check, self)
            temporary = sys.getrefcount(self) <= _T_SELF
            return _unary(fn, self, temporary)

        return op

    Array.__neg__ = unary("neg")
    Array.__pos__ = unary("pos")
    Array.__abs__ = unary("abs")
    Array.__invert__ = unary("not", check="~")


def _inplace(fn, a, other, temp_other):
    """a op= other: one kernel into a's elements, in a's type (numpy's same-kind casting)."""
    node, _ = _binary_node(fn, a, other, False, temp_other)
    if node is None:
        return NotImplemented
    if not _xgpu.can_cast_same_kind(node.dtype, a._dtype):
        raise DTypeError(f"xgpu: the result of type {node.dtype} cannot be stored in an array of {a._dtype}")
    compute_pending(keep=other if temp_other else None)
    _xgpu.evaluate(node, a.desc)
    return a


def _scalar_bytes(value, dtype):
    """A scalar stored into an array of `dtype` as numpy stores it (a float into an integer array
    truncates), but a Python int out of the type's range or a complex into a real array raises."""
    if type(value) is int and dtype in _INT_RANGES:
        lo, hi = _INT_RANGES[dtype]
        if not lo <= value <= hi:
            raise OverflowError(f"xgpu: Python integer {value} out of bounds for {dtype}")
    if isinstance(value, (complex, np.complexfloating)) and not np.dtype(dtype).kind == "c":
        raise DTypeError(f"xgpu: a complex value cannot be stored in an array of {dtype}")
    return np.array(value).astype(np.dtype(dtype), casting="unsafe").tobytes()


def _write(target, value, temporary):
    """target[...] = value: an array, a pending expression, a scalar or host values."""
    if isinstance(value, Array):
        if value._d is None and temporary:
            compute_pending(keep=value)  # computed straight into the target, not on its own
            _xgpu.evaluate(value._node, target)
            return
        src = value.desc
        compute_pending()
        _xgpu.assign(target, src)
    elif _is_scalar(value):
        data = _scalar_bytes(value, target.dtype)
        compute_pending()
        _xgpu.fill(target, data)
    else:
        compute_pending()
        host = np.ascontiguousarray(np.broadcast_to(np.asarray(value), target.shape), dtype=np.dtype(target.dtype))
        _xgpu.from_host(target, host.reshape(-1) if host.ndim else host.reshape(1))


_define_operators()


# -- creation ------------------------------------------------------------------------------------
def _shape(shape):
    if isinstance(shape, (numbers.Integral, np.integer)):
        shape = (shape,)
    shape = tuple(operator.index(s) for s in shape)  # as numpy: a float dimension is a TypeError
    if builtins.any(s < 0 for s in shape):
        raise ShapeError(f"xgpu: negative dimensions are not allowed: {shape}")
    return shape


def empty(context, shape, dtype=np.float64, order="C"):
    """A new array of ``shape`` and ``dtype``, its values undefined."""
    name = dtype_name(dtype)
    if name not in _DTYPES:
        raise DTypeError(f"xgpu: arrays cannot hold elements of type {name}")
    return Array(_xgpu.make_array(context, name, list(_shape(shape)), order))


def full(context, shape, fill_value, dtype=None, order="C"):
    """A new array of ``shape`` with every element ``fill_value`` (numpy's full)."""
    if dtype is None:
        dtype = np.array(fill_value).dtype
    return empty(context, shape, dtype, order).fill(fill_value)


def zeros(context, shape, dtype=np.float64, order="C"):
    """A new array of ``shape`` filled with zeros."""
    return full(context, shape, 0, dtype, order)


def ones(context, shape, dtype=np.float64, order="C"):
    """A new array of ``shape`` filled with ones."""
    return full(context, shape, 1, dtype, order)


def empty_like(a, dtype=None):
    """An uninitialised array of ``a``'s shape and context (and dtype, unless given)."""
    return empty(a.context, a.shape, a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None):
    """Zeros of ``a``'s shape and context (and dtype, unless given)."""
    return zeros(a.context, a.shape, a.dtype if dtype is None else dtype)


def ones_like(a, dtype=None):
    """Ones of ``a``'s shape and context (and dtype, unless given)."""
    return ones(a.context, a.shape, a.dtype if dtype is None else dtype)


def full_like(a, fill_value, dtype=None):
    """``fill_value`` in every element, of ``a``'s shape and context (and dtype, unless given)."""
    return full(a.context, a.shape, fill_value, a.dtype if dtype is None else dtype)


def arange(context, start, stop=None, step=1, dtype=None):
    """numpy.arange on the device: int64 for integer bounds, float64 otherwise, unless ``dtype``."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = np.result_type(np.asarray(start), np.asarray(stop), np.asarray(step))
        dtype = np.int64 if dtype.kind in "iub" else np.float64
    bounds = (start, stop, step)
    if builtins.all(isinstance(v, (numbers.Integral, np.integer)) for v in bounds) and \
            builtins.max(builtins.abs(int(v)) for v in bounds) > 2**53:
        # Beyond what a double holds exactly: start + step * k in 64-bit integers.
        n = len(range(int(start), int(stop), int(step)))
        index = Array(_xgpu.arange(context, "uint64" if np.dtype(dtype).kind == "u" else "int64", 0.0, float(n), 1.0))
        out = empty(context, (n,), dtype)
        _write(out.desc, index * int(step) + int(start), True)
        return out
    return Array(_xgpu.arange(context, dtype_name(dtype), float(start), float(stop), float(step)))


def to_device(context, ary, dtype=None):
    """A host array (anything numpy.asarray takes) on the device, C-contiguous."""
    host = np.asarray(ary, dtype=dtype)
    if host.dtype.kind not in "biufc" or host.dtype.name not in _DTYPES:
        raise DTypeError(f"xgpu: arrays cannot hold elements of type {host.dtype}")
    host = np.ascontiguousarray(host)
    out = empty(context, host.shape, host.dtype)
    _xgpu.from_host(out.desc, host.reshape(-1) if host.ndim else host.reshape(1))
    return out


_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
           "complex64", "complex128"}


# -- math functions (numpy's names, and the C names of PyOpenCL's clmath and PyCUDA's cumath) -------
def _unary_fn(fn):
    def f(x):
        if not isinstance(x, Array):
            raise TypeError(f"xgpu.{f.__name__}: expected an xgpu array, got {type(x).__name__}")
        temporary = sys.getrefcount(x) <= _T_ARG
        return _unary(fn, x, temporary)

    f.__name__ = fn
    f.__doc__ = f"Element-wise {fn}, fused into the statement's kernel."
    return f


_UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp", "exp2",
          "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "erf", "erfc", "fabs", "rint", "round", "floor",
          "ceil", "trunc", "abs", "real", "imag", "conj", "isnan", "isinf", "isfinite"]
_functions = {fn: _unary_fn(fn) for fn in _UNARY}
_functions.update(arcsin=_functions["asin"], arccos=_functions["acos"], arctan=_functions["atan"],
                  arcsinh=_functions["asinh"], arccosh=_functions["acosh"], arctanh=_functions["atanh"],
                  absolute=_functions["abs"], conjugate=_functions["conj"], logical_not=_unary_fn("not"))
globals().update(_functions)
__all__ += list(_functions)


def _binary_fn(fn, name):
    def f(a, b):
        if not isinstance(a, Array) and not isinstance(b, Array):
            if _is_scalar(a) and _is_scalar(b):
                return getattr(np, name)(a, b)  # two host scalars: numpy's answer, on the host
            raise TypeError(f"xgpu.{name}: expected at least one xgpu array")
        temp_a, temp_b = sys.getrefcount(a) <= _T_ARG, sys.getrefcount(b) <= _T_ARG
        out = _binary(fn, a, b, temp_a, temp_b)
        if out is NotImplemented:
            raise TypeError(f"xgpu.{name}: cannot combine {type(a).__name__} and {type(b).__name__}")
        return out

    f.__name__ = name
    f.__doc__ = f"Element-wise {name}, fused into the statement's kernel."
    return f


maximum = _binary_fn("maximum", "maximum")
minimum = _binary_fn("minimum", "minimum")
power = _binary_fn("pow", "power")
fmod = _binary_fn("fmod", "fmod")
floor_divide = _binary_fn("floor_divide", "floor_divide")
atan2 = arctan2 = _binary_fn("atan2", "arctan2")
hypot = _binary_fn("hypot", "hypot")
logical_and = _binary_fn("and", "logical_and")
logical_or = _binary_fn("or", "logical_or")


def where(condition, a, b):
    """``a`` where ``condition`` is true, else ``b`` (arrays or scalars), in one kernel."""
    temps = (sys.getrefcount(condition) <= _T_ARG, sys.getrefcount(a) <= _T_ARG, sys.getrefcount(b) <= _T_ARG)
    if not builtins.any(isinstance(x, Array) for x in (condition, a, b)):
        if builtins.all(_is_scalar(x) for x in (condition, a, b)):
            return np.where(condition, a, b)[()]  # host scalars: numpy's answer, on the host
        raise TypeError("xgpu.where: expected at least one xgpu array")
    values = [x for x in (a, b) if isinstance(x, Array)]
    if len(values) == 2:
        against = _xgpu.promote(a._dtype, b._dtype)
    elif values:
        against = values[0]._dtype
    else:
        against = np.result_type(a, b).name
    nodes = [_operand(x, t, at) for x, t, at in zip((condition, a, b), temps, ("bool", against, against))]
    if builtins.any(n is None for n, _ in nodes):
        raise TypeError("xgpu.where: the condition and values must be xgpu arrays or scalars")
    return Array(node=_op_node("where", *(n for n, _ in nodes)), nodes=builtins.sum(c for _, c in nodes) + 1)


# -- reductions ----------------------------------------------------------------------------------



def _widened(node, dtype):
    """The node in `dtype` where that holds its values (numpy's dtype= of sum and dot: the
    accumulator's type): the operand plus a zero of `dtype`, one operation more in the kernel."""
    if dtype is None or _xgpu.promote(node.dtype, dtype) != dtype or node.dtype == dtype:
        return node
    zero = _xgpu.scalar_node(dtype, np.zeros((), dtype).tobytes(), dtype)
    return _op_node("add", node, zero)


def _axes(axis, ndim):
    """numpy's axis argument of the reductions: None (every axis), an int or a tuple of ints, each
    normalised (AxisError out of range; a repeat is a ValueError), sorted."""
    if axis is None:
        return list(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = [_axis(a, ndim) for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"xgpu: duplicate value in 'axis': {axis}")
    return sorted(out)


def _no_out(out, what):
    if out is not None:
        raise NotImplementedError(f"xgpu: {what}: out= is not supported; assign the result instead")


def _reduce(op, x, temporary, axis=None, out=None, widen=None, keepdims=False):
    if not isinstance(x, Array):
        raise TypeError(f"xgpu: a reduction takes an xgpu array, not {type(x).__name__}")
    node = _widened(_fold(x, temporary)[0], widen)
    if axis is None and not keepdims:
        return Array(_xgpu.reduce_all(node, op, out))
    return Array(_xgpu.reduce_axes(node, op, _axes(axis, len(x.shape)), bool(keepdims), out))


def _with_initial(result, initial, combine):
    """numpy's initial=: included in the reduction (an empty array's result)."""
    if initial is None:
        return result
    return combine(result, initial)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):  # noqa: A001 (numpy's name)
    """The sum as a 0-d device array (or along ``axis``, an int or a tuple); integers accumulate in
    64 bits as numpy's; ``dtype``: the result's type, and the accumulator's where it is wider than
    the elements' (float32 summed in float64); ``initial``: a value added in."""
    temporary = sys.getrefcount(a) <= _T_ARG
    _no_out(out, "sum")
    out = None if dtype is None else dtype_name(dtype)
    result = _reduce("sum", a, temporary, axis, out, widen=out, keepdims=keepdims)
    return _with_initial(result, initial, lambda r, i: (r + i).astype(r.dtype))


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """numpy.prod: the product as a 0-d device array or along ``axis``; integers in 64 bits as
    numpy's; ``dtype`` as sum's."""
    temporary = sys.getrefcount(a) <= _T_ARG
    _no_out(out, "prod")
    out = None if dtype is None else dtype_name(dtype)
    result = _reduce("prod", a, temporary, axis, out, widen=out, keepdims=keepdims)
    return _with_initial(result, initial, lambda r, i: (r * i).astype(r.dtype))


def _extremum(op, a, temporary, axis, initial, keepdims=False):
    if isinstance(a, Array) and a.dtype.kind == "c":
        raise DTypeError(f"xgpu: {op} of a complex array is not supported (numpy orders complex numbers "
                         "lexicographically; compare abs(a), a.real or a.imag instead)")
    if initial is not None and isinstance(a, Array) and a.size == 0 and axis is None and not keepdims:
        return full(a.context, (), initial, a.dtype)
    combine = maximum if op == "max" else minimum
    return _with_initial(_reduce(op, a, temporary, axis, keepdims=keepdims), initial,
                         lambda r, i: combine(r, i).astype(r.dtype))


def min(a, axis=None, out=None, keepdims=False, initial=None):  # noqa: A001
    """numpy's min (amin): over all elements (a 0-d device array) or along ``axis``."""
    temporary = sys.getrefcount(a) <= _T_ARG
    _no_out(out, "min")
    return _extremum("min", a, temporary, axis, initial, keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=None):  # noqa: A001
    """numpy's max (amax): over all elements (a 0-d device array) or along ``axis``."""
    temporary = sys.getrefcount(a) <= _T_ARG
    _no_out(out, "max")
    return _extremum("max", a, temporary, axis, initial, keepdims)


def _moment(which, a, temporary, axis, dtype, ddof, keepdims):
    if not isinstance(a, Array):
        raise TypeError(f"xgpu: {which} takes an xgpu array, not {type(a).__name__}")
    node = _widened(_fold(a, temporary)[0], None if dtype is None else dtype_name(dtype))
    return Array(_xgpu.moment(node, which, _axes(axis, a.ndim), bool(keepdims), float(ddof)))


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """numpy.mean: float64 for integers and bool, else the elements' type; over everything or along
    ``axis`` (an int or a tuple)."""
    temporary = sys.getrefcount(a) <= _T_ARG
    _no_out(out, "mean")
    return _moment("mean", a, temporary, axis, dtype, 0, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """numpy.var: the mean squared deviation from the mean (two passes), divided by the count less
    ``ddof``; real for complex arrays."""
    temporary = sys.getrefcount(a) <= _T_ARG
    _no_out(out, "var")
    return _moment("var", a, temporary, axis, dtype, ddof, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """numpy.std: the square root of var."""
    temporary = sys.getrefcount(a) <= _T_ARG
    _no_out(out, "std")
    return _moment("std", a, temporary, axis, dtype, ddof, keepdims)


def diff(a, n=1, axis=-1):
    """numpy.diff: the n-th difference along ``axis`` (one kernel per order)."""
    if not isinstance(a, Array):
        raise TypeError(f"xgpu.diff: expected an xgpu array, not {type(a).__name__}")
    if a.ndim == 0:
        raise ValueError("xgpu.diff: a 0-d array has no axis to difference")
    if n < 0:
        raise ValueError(f"xgpu.diff: order {n} must be >= 0")
    axis = _axis(axis, a.ndim)
    for _ in range(n):
        head = tuple(slice(None) if k != axis else slice(1, None) for k in range(a.ndim))
        tail = tuple(slice(None) if k != axis else slice(None, -1) for k in range(a.ndim))
        a = (a[head] != a[tail] if a._dtype == "bool" else a[head] - a[tail]).finish()  # numpy's, for bools
    return a


amin, amax = min, max


def _axis_reduction(op, threshold, doc):
    """A reduction over the whole array or along an axis, as a function (threshold _T_ARG) or a
    method (_T_METHOD): argmin and argmax take one axis, any and all a tuple too."""

    def reduction(a, axis=None, out=None, keepdims=False):
        temporary = sys.getrefcount(a) <= threshold
        _no_out(out, op)
        if op in ("argmin", "argmax") and isinstance(a, Array):
            if isinstance(axis, tuple):
                raise TypeError(f"xgpu: {op} takes one axis (an int) or None, not a tuple")
            if axis is None and keepdims:
                return _reduce(op, a, temporary).reshape((1,) * a.ndim)
        return _reduce(op, a, temporary, axis, keepdims=keepdims)

    reduction.__name__, reduction.__doc__ = op, doc
    return reduction


_WHOLE = {"argmin": "numpy.argmin: the first minimum's index in the flattened array (a 0-d int64 device "
                    "array), or its place along ``axis``.",
          "argmax": "numpy.argmax: the first maximum's index in the flattened array (a 0-d int64 device "
                    "array), or its place along ``axis``.",
          "any": "Whether any element is nonzero (a 0-d bool device array), or along ``axis``.",
          "all": "Whether every element is nonzero (a 0-d bool device array), or along ``axis``."}
argmin, argmax, any, all = (_axis_reduction(op, _T_ARG, doc) for op, doc in _WHOLE.items())  # noqa: A001
for _op, _doc in _WHOLE.items():
    setattr(Array, _op, _axis_reduction(_op, _T_METHOD, _doc))
del _op, _doc


def _moment_method(which):
    def method(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        temporary = sys.getrefcount(self) <= _T_METHOD
        _no_out(out, which)
        return _moment(which, self, temporary, axis, dtype, ddof, keepdims)

    method.__name__, method.__doc__ = which, f"numpy's a.{which}() (see xgpu.{which})."
    return method


def _mean_method(self, axis=None, dtype=None, out=None, keepdims=False):
    """numpy's a.mean() (see xgpu.mean)."""
    temporary = sys.getrefcount(self) <= _T_METHOD
    _no_out(out, "mean")
    return _moment("mean", self, temporary, axis, dtype, 0, keepdims)


def _prod_method(self, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """numpy's a.prod() (see xgpu.prod)."""
    return prod(self, axis, dtype, out, keepdims, initial)


Array.mean, Array.prod = _mean_method, _prod_method
Array.mean.__name__, Array.prod.__name__ = "mean", "prod"
Array.var, Array.std = _moment_method("var"), _moment_method("std")


def dot(x, y, dtype=None):
    """numpy.dot of two 1-D arrays: sum(x * y) in one pass, in their promoted type (or ``dtype``,
    which the products and the sum are computed in where it is wider)."""
    tx, ty = sys.getrefcount(x) <= _T_ARG, sys.getrefcount(y) <= _T_ARG
    if not (isinstance(x, Array) and isinstance(y, Array)):
        raise TypeError("xgpu.dot: expected two xgpu arrays")
    if len(x.shape) != 1 or x.shape != y.shape:
        raise ShapeError(f"xgpu: dot: shapes {x.shape} and {y.shape} are not two 1-D arrays of one length")
    dtype = None if dtype is None else dtype_name(dtype)
    prod = _op_node("mul", _widened(_fold(x, tx)[0], dtype), _widened(_fold(y, ty)[0], dtype))
    return Array(_xgpu.reduce_all(prod, "sum", prod.dtype if dtype is None else dtype))


def vdot(x, y, dtype=None):
    """numpy.vdot: the first argument conjugated."""
    if not isinstance(x, Array):
        raise TypeError("xgpu.vdot: expected two xgpu arrays")
    return dot(_unary("conj", x, False), y, dtype)


def norm(x, ord=None):
    """numpy.linalg.norm: of a vector, ord 2 (default), 1 or inf; of a matrix, the Frobenius norm
    (ord None or 'fro'), 1 (the largest column sum of magnitudes) or inf (the largest row sum)."""
    temporary = sys.getrefcount(x) <= _T_ARG
    if not isinstance(x, Array):
        raise TypeError(f"xgpu: norm takes an xgpu array, not {type(x).__name__}")
    if x.ndim == 2 and ord in (1, np.inf):
        sums = _reduce("sum", abs(x), True, 0 if ord == 1 else 1)
        return sums.max()
    if x.ndim == 2 and ord not in (None, "fro"):
        raise ValueError(f"xgpu: norm of a matrix: ord must be None, 'fro', 1 or inf, not {ord!r}")
    if x.ndim > 2 and ord is not None:
        raise ValueError(f"xgpu: norm of a {x.ndim}-D array takes no ord (numpy: ord needs 1-D or 2-D)")
    op = {None: "norm2", "fro": "norm2", 2: "norm2", 1: "norm1", np.inf: "norm_inf"}.get(ord)
    if op is None or (ord == "fro" and x.ndim != 2):
        raise ValueError(f"xgpu: norm of a vector: ord must be 1, 2 or inf, not {ord!r}")
    return _reduce(op, x, temporary)


class DeviceData:
    """An array's memory as one kernel parameter (``Array.data``): the pointer to its first
    element. ``offset`` and ``size`` are in bytes; ``int_ptr`` is the device address where the
    backend has one (CUDA)."""

    __slots__ = ("array", "_desc")

    def __init__(self, array):
        d = array.desc
        if d.offset and array.context.backend != "cuda":
            raise ArrayHasOffsetError()
        self.array, self._desc = array, d

    @property
    def offset(self):
        """Bytes from the buffer's start to the first element."""
        return self._desc.offset * self.array.itemsize

    @property
    def size(self):
        """Bytes of the array's elements."""
        return self.array.nbytes

    @property
    def int_ptr(self):
        """The device address of the first element (CUDA only)."""
        if self.array.context.backend != "cuda":
            raise InvalidArgument(f"xgpu: {self.array.context.backend} buffers have no device address")
        return int(_xgpu.device_address(self._desc))

    def __repr__(self):
        return f"<xgpu.DeviceData of {self.size} bytes at offset {self.offset}>"

