"""Runs PyOpenCL's test/test_array.py (adapted in test_array.py) against xgpu through the
PyOpenCL look-alike in pyopencl_shim.py.

Tests of what xgpu does not have at all are skipped below, each with its reason (_SKIP); tests
that fail because of a documented, deliberate difference of xgpu are expected to fail (_XFAIL).
Every other failure is a gap or a bug of xgpu and is left failing.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import pyopencl_shim  # noqa: E402
import xgpu  # noqa: E402

pyopencl_shim.install()

# test function (with "[...]" : only the parametrized cases whose id contains it) -> reason
_SKIP = {
    # OpenCL runtime objects xgpu does not expose
    "test_mem_pool_with_arrays": "OpenCL allocators and memory pools (cl_tools.MemoryPool)",
    "test_arrays_with_svm_allocators": "OpenCL shared virtual memory allocators (cl_tools.SVMAllocator)",
    "test_map_to_host": "mapping an OpenCL buffer to the host (map_to_host, cl.mem_flags allocators)",
    "test_event_management": "OpenCL events attached to arrays (Array.events)",
    "test_get_async": "OpenCL events (get_async, cl.UserEvent, add_event)",
    "test_copy": "arrays bound to a queue and to a cl.Buffer (.queue, copy(queue=), .data): xgpu arrays "
                 "belong to a context",
    # element types xgpu arrays do not hold
    "test_vector_fill": "OpenCL vector types (cltypes.float4)",
    "test_custom_type_zeros": "struct dtypes (match_dtype_to_c_struct)",
    "test_custom_type_fill": "struct dtypes (match_dtype_to_c_struct)",
    "test_custom_type_take_put": "struct dtypes and integer-array indexing",
    # array functions xgpu does not have
    "test_fancy_fill": "integer-array (fancy) indexing: take/put",
    "test_fancy_indexing": "integer-array (fancy) indexing: take/put",
    "test_outoforderqueue_indexing": "integer-array (fancy) indexing: take/put",
    "test_multi_put": "multi_put",
    "test_concatenate": "concatenate",
    "test_stack": "stack (concatenate)",
    "test_random_float_in_range[ThreefryGenerator": "Threefry generator (xgpu.random has Philox only)",
    "test_random_int_in_range[ThreefryGenerator": "Threefry generator (xgpu.random has Philox only)",
    # PyOpenCL's own machinery
    "test_xdg_cache_home": "PyOpenCL's on-disk kernel cache under XDG_CACHE_HOME",
    "test_numpy_type_promotion_with_cl_arrays": "PyOpenCL's private helper pyopencl.array._get_common_dtype",
}

# test function -> (reason, the exception it fails with). "Failed" is pytest.raises' own failure:
# PyOpenCL's test expects an error where xgpu does what docs/python.md says it does.
_Failed = pytest.fail.Exception
_XFAIL = {
    "test_bitwise": ("xgpu's & | ~ are defined on bool arrays only, and there is no ^ (docs/python.md, Arrays: "
                     "'& | ~ on bool arrays')", xgpu.DTypeError),
    "test_view_and_strides": ("xgpu's get() reads a non-contiguous view (docs/python.md, Views: slices with "
                              "steps are views; get() returns an ndarray); PyOpenCL's get() raises "
                              "AssertionError there", _Failed),
    "test_assign_different_strides": ("xgpu assigns between arrays of different layouts (docs/python.md, "
                                      "Assignment); PyOpenCL raises NotImplementedError", _Failed),
    "test_slice_copy": ("xgpu's copy() copies a non-contiguous view (docs/python.md, Views: copy() copies); "
                        "PyOpenCL raises RuntimeError", _Failed),
    "test_allocation_with_various_shape_scalar_types": (
        "xgpu follows numpy: a float dimension is a TypeError (numpy.empty((5.7,))); PyOpenCL raises ValueError",
        TypeError),
    **{f"test_zero_size_array[{case}": (
        "the strides of a size-0 array: numpy's depend on how it was made (np.empty((0,)) has 0, its "
        "reshape(-1) the item size); xgpu gives the item size", AssertionError)
       for case in ("-0]", "empty_shape2", "empty_shape3", "empty_shape4")},
    "test_mix_complex": ("xgpu has no ** of complex arrays (DTypeError when the statement is written)",
                         xgpu.DTypeError),
    "test_pow_neg1_vs_inv": ("xgpu has no ** of complex arrays (DTypeError when the statement is written)",
                             xgpu.DTypeError),
}


def _match(table, item):
    name = item.name
    for key, value in table.items():
        func, _, param = key.partition("[")
        if item.originalname == func and (not param or param in name):
            return value
    return None


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if not str(item.fspath).startswith(here + os.sep):
            continue
        reason = _match(_SKIP, item)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"xgpu has no {reason}"))
        xfail = _match(_XFAIL, item)
        if xfail is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=xfail[0], raises=xfail[1]))
