"""Sorting on the device with numpy's names and signatures: ``sort``, ``argsort``, ``Array.sort``
and ``Array.argsort`` along any axis, and Thrust's ``sort_by_key``. Every sort is stable (numpy's
``kind="stable"``, whatever ``kind`` asks for) and in numpy's order: NaNs last, -0.0 equal to 0.0.
"""

from . import _xgpu
from ._array import Array, _axis, compute_pending
from ._errors import DTypeError

__all__ = ["sort", "argsort", "sort_by_key"]

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


Array.sort = _sort_method
Array.argsort = _argsort_method
Array.sort.__name__, Array.argsort.__name__ = "sort", "argsort"
