"""Sorting and what is built on it, on the device, with numpy's names and signatures: ``sort``,
``argsort``, ``Array.sort`` and ``Array.argsort`` along any axis, Thrust's ``sort_by_key``,
``searchsorted``, ``unique``, ``bincount``, ``histogram``, ``nonzero``, ``flatnonzero``,
``argwhere``, ``concatenate``, ``stack``, boolean masks (``a[mask]``, ``a[mask] = v``), and
PyOpenCL's ``copy_if``, ``remove_if`` and ``partition``. Every sort is stable (numpy's
``kind="stable"``, whatever ``kind`` asks for) and in numpy's order: NaNs last, -0.0 equal to 0.0.
"""

import numbers
import operator

import numpy as np

from . import _array as _array_module
from . import _xgpu
from ._array import Array, _axis, _fold, compute_pending, empty, full, to_device, zeros
from ._errors import DTypeError, ShapeError

__all__ = ["sort", "argsort", "sort_by_key", "searchsorted", "unique", "bincount", "histogram", "nonzero",
           "flatnonzero", "argwhere", "concatenate", "stack", "copy_if", "remove_if", "partition"]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _sortable(a, what, kind=None, order=None):
    if not isinstance(a, Array):
        raise TypeError(f"xgpu.{what}: expected an xgpu array, not {type(a).__name__}")
    if a.dtype.kind == "c":
        raise DTypeError(f"xgpu.{what}: complex keys cannot be sorted (sort a.real, a.imag or abs(a))")
    if kind not in _KINDS:
        raise ValueError(f"xgpu.{what}: kind must be one of 'quicksort', 'mergesort', 'heapsort' or 'stable', "
                         f"not {kind!r} (every xgpu sort is stable)")
    if order is not None:
        raise ValueError(f"xgpu.{what}: order= names the fields of a structured array; xgpu arrays have none")


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """numpy.sort: a sorted copy of ``a`` along ``axis`` (the last by default; None: the flattened
    array), stable."""
    _sortable(a, "sort", kind, order)
    if axis is None:
        a, axis = a.ravel(), 0
    return Array(_xgpu.sort(a.desc, _axis(axis, a.ndim)))


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """numpy.argsort(kind="stable"): the int64 indices along ``axis`` (None: of the flattened
    array) that sort ``a``; equal keys keep their order."""
    _sortable(a, "argsort", kind, order)
    if axis is None:
        a, axis = a.ravel(), 0
    return Array(_xgpu.argsort(a.desc, _axis(axis, a.ndim)))


def sort_by_key(keys, values):
    """Thrust's sort_by_key: sorts the 1-D ``keys`` in place, stably, and reorders the 1-D
    ``values`` (any dtype, the same length) with them."""
    _sortable(keys, "sort_by_key")
    if not isinstance(values, Array):
        raise TypeError(f"xgpu.sort_by_key: the values must be an xgpu array, not {type(values).__name__}")
    compute_pending()
    _xgpu.sort_by_key(keys.desc, values.desc)


def _sort_method(self, axis=-1, kind=None, order=None, *, stable=None):
    """numpy's a.sort(): sorts the elements in place along ``axis``, stably (views too)."""
    _sortable(self, "sort", kind, order)
    axis = _axis(axis, self.ndim)
    sorted_ = _xgpu.sort(self.desc, axis)
    compute_pending()  # expressions that read the old values, before they change
    _xgpu.assign(self.desc, sorted_)


def _argsort_method(self, axis=-1, kind=None, order=None, *, stable=None):
    """numpy's a.argsort(): the indices that sort the array along ``axis``."""
    return argsort(self, axis, kind, order, stable=stable)


def _array_like(context, x, what):
    """An xgpu array of `x` (an xgpu array, or anything numpy.asarray takes) on `context`."""
    if isinstance(x, Array):
        return x
    if context is None:
        raise TypeError(f"xgpu.{what}: expected an xgpu array, not {type(x).__name__}")
    host = np.asarray(x)
    if host.ndim == 0:
        return full(context, (), host.item(), host.dtype)
    return to_device(context, host)


def _node(x):
    """The expression node of an array or pending expression."""
    return _fold(x, False)[0]


def searchsorted(a, v, side="left", sorter=None):
    """numpy.searchsorted: where each element of ``v`` goes in the sorted 1-D ``a`` to keep it
    sorted, before the equal ones (side="left") or after them ("right"); int64, of v's shape.
    ``sorter``: the indices that sort ``a`` (as argsort gives them)."""
    if not isinstance(a, Array):
        raise TypeError(f"xgpu.searchsorted: expected an xgpu array, not {type(a).__name__}")
    if side not in ("left", "right"):
        raise ValueError(f"xgpu.searchsorted: side must be 'left' or 'right', not {side!r}")
    if a.ndim != 1:
        raise ValueError(f"xgpu.searchsorted: the sorted array must be 1-D, not of shape {a.shape}")
    if sorter is not None:
        sorter = _array_like(a.context, sorter, "searchsorted")
        a = Array(_xgpu.take(a.desc, sorter.desc))
    v = _array_like(a.context, v, "searchsorted")
    if a.dtype.kind == "c" or v.dtype.kind == "c":
        raise DTypeError("xgpu.searchsorted: complex keys have no order here")
    return Array(_xgpu.searchsorted(a.desc, v.desc, side == "right"))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True):
    """numpy.unique of the flattened array: the sorted distinct values (the NaNs one value), and
    as asked the first index of each, the inverse (``ar.ravel() == values[inverse]``) and the
    counts, as a tuple in numpy's order."""
    if not isinstance(ar, Array):
        raise TypeError(f"xgpu.unique: expected an xgpu array, not {type(ar).__name__}")
    if axis is not None:
        raise NotImplementedError("xgpu.unique: axis= (unique rows or columns) is not supported; unique of the "
                                  "flattened array is")
    if not equal_nan:
        raise NotImplementedError("xgpu.unique: equal_nan=False is not supported (the NaNs are one value)")
    if ar.dtype.kind == "c":
        raise DTypeError("xgpu.unique: complex values have no order here")
    values, index, inverse, counts = _xgpu.unique(ar.desc, bool(return_index), bool(return_inverse),
                                                  bool(return_counts))
    out = [Array(values)] + [Array(d) for d in (index, inverse, counts) if d is not None]
    return out[0] if len(out) == 1 else tuple(out)


def _count(value, what):
    if not isinstance(value, (numbers.Integral, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"xgpu.{what} must be an integer, not {type(value).__name__}")
    return operator.index(value)


def bincount(x, weights=None, minlength=0):
    """numpy.bincount of non-negative integers (1-D): each value's count (int64), or with
    ``weights`` the sum of its weights (float64, summed in a fixed order)."""
    if not isinstance(x, Array):
        raise TypeError(f"xgpu.bincount: expected an xgpu array, not {type(x).__name__}")
    if x.dtype.kind not in "biu":
        raise TypeError(f"xgpu.bincount: cannot count {x.dtype} values (integers only, as numpy's 'safe' cast)")
    minlength = _count(minlength, "bincount: minlength")
    if minlength < 0:
        raise ValueError("xgpu.bincount: minlength must not be negative")
    if weights is not None:
        weights = _array_like(x.context, weights, "bincount")
    return Array(_xgpu.bincount(x.desc, None if weights is None else weights.desc, minlength))


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 (numpy's name)
    """numpy.histogram: (counts, edges); ``bins`` equal bins over ``range`` (default: the values'
    min and max), or explicit increasing edges (an array); ``weights`` summed per bin instead of
    counts; ``density``: counts / (total * bin width)."""
    if not isinstance(a, Array):
        raise TypeError(f"xgpu.histogram: expected an xgpu array, not {type(a).__name__}")
    if weights is not None:
        weights = _array_like(a.context, weights, "histogram")
    if isinstance(bins, str):
        raise NotImplementedError(f"xgpu.histogram: bins={bins!r} (numpy's estimators) is not supported")
    if isinstance(bins, (numbers.Integral, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        if bins < 1:
            raise ValueError("xgpu.histogram: `bins` must be positive, when an integer")
        # numpy's edges, computed by the installed numpy itself (its linspace's arithmetic and
        # type rules differ between numpy 1 and 2), then counted as explicit edges: the bin whose
        # edges hold each value, as numpy's uniform bins give it.
        if range is not None:
            lo, hi = (float(v) for v in range)
            if not lo <= hi:
                raise ValueError("xgpu.histogram: max must be larger than min in range parameter")
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ValueError(f"xgpu.histogram: supplied range of [{lo}, {hi}] is not finite")
        elif a.size == 0:
            lo, hi = 0, 1
        else:
            lo, hi = a.min().get()[()], a.max().get()[()]
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ValueError(f"xgpu.histogram: autodetected range of [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        bin_type = np.result_type(lo, hi, np.empty(0, a.dtype))
        if np.issubdtype(bin_type, np.integer):
            bin_type = np.result_type(bin_type, float)
        host_edges = np.linspace(lo, hi, int(bins) + 1, endpoint=True, dtype=bin_type)
        edges = to_device(a.context, host_edges)
        counts, _ = _xgpu.histogram(a.desc, edges.desc, 0, None, None if weights is None else weights.desc)
    else:
        edges = _array_like(a.context, bins, "histogram")
        if edges.ndim != 1:
            raise ValueError("xgpu.histogram: `bins` must be 1d, when an array")
        # Decreasing edges are refused on the device (InvalidArgument, a ValueError).
        counts, _ = _xgpu.histogram(a.desc, edges.desc, 0, None, None if weights is None else weights.desc)
    counts = Array(counts)
    if density:
        widths = (edges[1:] - edges[:-1]).astype(np.float64)
        counts = counts / widths / counts.sum()
    return counts, edges


def flatnonzero(a):
    """numpy.flatnonzero: the int64 indices of the flattened array's nonzero elements."""
    if not isinstance(a, Array):
        raise TypeError(f"xgpu.flatnonzero: expected an xgpu array, not {type(a).__name__}")
    return Array(_xgpu.flatnonzero(_node(a)))


def nonzero(a):
    """numpy.nonzero: a tuple of int64 index arrays, one per dimension."""
    if not isinstance(a, Array):
        raise TypeError(f"xgpu.nonzero: expected an xgpu array, not {type(a).__name__}")
    if a.ndim == 0:
        raise ValueError("xgpu.nonzero: a 0-d array has no index (numpy refuses it too; use atleast_1d)")
    flat = flatnonzero(a)
    out, stride = [], a.size
    for n in a.shape:
        stride //= max(n, 1)
        out.append(((flat // stride) % max(n, 1)).finish())
    return tuple(out)


def argwhere(a):
    """numpy.argwhere: the indices of the nonzero elements, (count, ndim) int64."""
    if not isinstance(a, Array):
        raise TypeError(f"xgpu.argwhere: expected an xgpu array, not {type(a).__name__}")
    if a.ndim == 0:
        return zeros(a.context, (int(bool(a.item())), 0), np.int64)
    return stack(nonzero(a), axis=1)


def concatenate(arrays, axis=0):
    """numpy.concatenate along an existing axis (None: of the flattened arrays), in the arrays'
    promoted type."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("xgpu.concatenate: needs at least one array to concatenate")
    for x in arrays:
        if not isinstance(x, Array):
            raise TypeError(f"xgpu.concatenate: expected xgpu arrays, not {type(x).__name__}")
    if axis is None:
        arrays, axis = [x.ravel() for x in arrays], 0
    if arrays[0].ndim == 0:
        raise ValueError("xgpu.concatenate: zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, arrays[0].ndim)
    return Array(_xgpu.concatenate([x.desc for x in arrays], axis))


def stack(arrays, axis=0):
    """numpy.stack: the arrays (of one shape) along a new axis."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("xgpu.stack: needs at least one array to stack")
    for x in arrays:
        if not isinstance(x, Array):
            raise TypeError(f"xgpu.stack: expected xgpu arrays, not {type(x).__name__}")
    axis = _axis(axis, arrays[0].ndim + 1)
    return Array(_xgpu.stack([x.desc for x in arrays], axis))


def _predicate(ary, predicate, what):
    """A predicate as a node of ary's shape: an xgpu bool (or numeric) array or expression, or
    PyOpenCL's C expression of ``ary[i]`` (a string)."""
    if isinstance(predicate, str):
        from ._kernels import ElementwiseKernel

        mask = empty(ary.context, ary.shape, np.uint8)
        decl = f"const {_C_TYPES[ary.dtype.name]}* ary, uint8_t* predicate_holds"
        ElementwiseKernel(ary.context, decl, f"predicate_holds[i] = ({predicate}) ? 1 : 0", "predicate")(
            ary.ravel(), mask.ravel())
        return _node(mask)
    if not isinstance(predicate, Array):
        raise TypeError(f"xgpu.{what}: the predicate must be an xgpu array, an expression or a C expression "
                        f"string, not {type(predicate).__name__}")
    return _node(predicate)


_C_TYPES = {"bool": "bool", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t",
            "int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t", "float32": "float",
            "float64": "double", "complex64": "xgpu_cfloat", "complex128": "xgpu_cdouble"}


def _compact(ary, predicate, what, rejected):
    if not isinstance(ary, Array):
        raise TypeError(f"xgpu.{what}: expected an xgpu array, not {type(ary).__name__}")
    node = _predicate(ary, predicate, what)
    out = empty(ary.context, (ary.size,), ary.dtype)
    rest = empty(ary.context, (ary.size,), ary.dtype) if rejected else None
    count = empty(ary.context, (), np.int64)
    _xgpu.compact(ary.desc, node, out.desc, None if rest is None else rest.desc, count.desc)
    return out, rest, count


def copy_if(ary, predicate, extra_args=(), preamble="", queue=None, wait_for=None):
    """PyOpenCL's copy_if: ``(out, count, event)``, out of ary's size holding the elements where
    the predicate holds (in order) in its first ``count`` (a 0-d device array). The predicate is
    an xgpu expression (``ary > 0``) or PyOpenCL's C expression of ``ary[i]``."""
    _no_extras(extra_args, preamble, "copy_if")
    out, _, count = _compact(ary, predicate, "copy_if", False)
    return out, count, ary.context.queue.marker()


def remove_if(ary, predicate, extra_args=(), preamble="", queue=None, wait_for=None):
    """PyOpenCL's remove_if: ``(out, count, event)``, the elements where the predicate does not
    hold, in order, in out's first ``count``."""
    _no_extras(extra_args, preamble, "remove_if")
    if isinstance(predicate, str):
        predicate = f"!({predicate})"
    elif isinstance(predicate, Array):
        predicate = predicate == 0
    out, _, count = _compact(ary, predicate, "remove_if", False)
    return out, count, ary.context.queue.marker()


def partition(ary, predicate, extra_args=(), preamble="", queue=None, wait_for=None):
    """PyOpenCL's partition: ``(out_true, out_false, count_true, event)``: the elements where the
    predicate holds and where it does not, each in order (out_false's first size - count)."""
    _no_extras(extra_args, preamble, "partition")
    out, rest, count = _compact(ary, predicate, "partition", True)
    return out, rest, count, ary.context.queue.marker()


def _no_extras(extra_args, preamble, what):
    if extra_args or preamble:
        raise NotImplementedError(f"xgpu.{what}: extra_args and preamble are not supported; compute the "
                                  "predicate as an xgpu expression instead")


def _mask_of(self, key):
    """A boolean index (an xgpu or numpy bool array) as an xgpu array of the array's leading shape."""
    mask = key if isinstance(key, Array) else to_device(self.context, key)
    if mask.ndim == 0 or mask.ndim > self.ndim or mask.shape != self.shape[:mask.ndim]:
        raise IndexError(f"xgpu: a boolean index of shape {mask.shape} does not match the indexed array's "
                         f"shape {self.shape}")
    return mask


def _masked_get(self, key):
    """numpy's a[mask]: the elements (or, for a mask of the leading dimensions, the sub-arrays)
    where the mask holds, in C order."""
    mask = _mask_of(self, key)
    if mask.ndim == self.ndim:
        return Array(_xgpu.masked(self.desc, _node(mask)))
    # A mask of the leading dimensions: whole sub-arrays, taken by their flat indices.
    rest = self.shape[mask.ndim:]
    inner = 1
    for n in rest:
        inner *= n
    rows = flatnonzero(mask)
    offsets = to_device(self.context, np.arange(inner, dtype=np.int64))
    flat = (rows.reshape(-1, 1) * inner + offsets.reshape(1, -1)).finish()
    picked = Array(_xgpu.take(self.ravel().desc, flat.ravel().desc))
    return picked.reshape((rows.size, *rest))


def _masked_set(self, key, value):
    """numpy's a[mask] = value: a scalar, one value per element where the mask holds, or for a
    mask of the leading dimensions the sub-arrays (count, *rest) or one sub-array broadcast over
    them (numpy's broadcasting to the selection's shape)."""
    mask = _mask_of(self, key)
    rest = self.shape[mask.ndim:]
    if rest:
        # The mask over every element: each selected sub-array's elements, in C order.
        spread = mask.reshape(mask.shape + (1,) * len(rest)) & full(self.context, self.shape, True, np.bool_)
        is_scalar = not isinstance(value, Array) and np.ndim(value) == 0
        if not is_scalar:
            count = int(_array_module.sum(mask.astype(np.int64)).get())
            target = (count, *rest)
            shape = value.shape if isinstance(value, Array) else np.shape(value)
            try:
                np.broadcast_shapes(shape, target)
            except ValueError:
                raise ShapeError(f"xgpu: {shape} values cannot be assigned to the {target} elements the boolean "
                                 "index selects") from None
            if tuple(shape) != target:
                if isinstance(value, Array):
                    value = (value.astype(self.dtype, copy=False) + zeros(self.context, target, self.dtype)).finish()
                else:
                    value = np.broadcast_to(np.asarray(value, dtype=self.dtype), target)
        mask = spread.finish()
    compute_pending()
    if isinstance(value, Array):
        values = value.astype(self.dtype, copy=False).ravel()
    else:
        host = np.asarray(value, dtype=self.dtype)
        values = to_device(self.context, np.ascontiguousarray(host).reshape(-1))
    _xgpu.assign_masked(self.desc, _node(mask), values.desc)


class _Masks:
    get = staticmethod(_masked_get)
    set = staticmethod(_masked_set)


_array_module._masks = _Masks
Array.sort = _sort_method
Array.argsort = _argsort_method
Array.sort.__name__, Array.argsort.__name__ = "sort", "argsort"
Array.nonzero = nonzero
