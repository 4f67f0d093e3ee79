"""Arrays against numpy: creation, transfers, views, arithmetic with numpy's type promotion, math
functions, fused statements, assignment and printing."""

import operator

import numpy as np
import pytest

import xgpu
from support import needs_fp64, random_array

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "float32", "float64", "complex64",
          "complex128"]
SHAPES = [(0,), (1,), (1000,), (7, 13), (3, 4, 5)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_round_trip(ctx, rng, dtype, shape):
    needs_fp64(ctx, dtype)
    host = random_array(rng, shape, dtype)
    a = xgpu.to_device(ctx, host)
    assert a.shape == host.shape and a.dtype == host.dtype and a.size == host.size and a.ndim == host.ndim
    assert a.strides == np.empty(shape, dtype).strides and a.nbytes == host.nbytes
    np.testing.assert_array_equal(a.get(), host)
    np.testing.assert_array_equal(np.asarray(a), host)


def test_creation(ctx):
    np.testing.assert_array_equal(xgpu.zeros(ctx, (2, 3), np.int32).get(), np.zeros((2, 3), np.int32))
    np.testing.assert_array_equal(xgpu.ones(ctx, 4, np.float32).get(), np.ones(4, np.float32))
    np.testing.assert_array_equal(xgpu.full(ctx, (2, 2), 7, np.int16).get(), np.full((2, 2), 7, np.int16))
    assert xgpu.empty(ctx, (5,), np.uint8).shape == (5,)
    for args in [(10,), (2, 11), (1, 2, 0.25), (5, -3, -2)]:
        want = np.arange(*args)
        got = xgpu.arange(ctx, *args, dtype=np.float32 if want.dtype.kind == "f" else None)
        np.testing.assert_allclose(got.get(), want.astype(got.dtype))
    assert xgpu.arange(ctx, 3).dtype == np.int64
    like = xgpu.zeros_like(xgpu.ones(ctx, (2, 2), np.float32))
    assert like.dtype == np.float32 and like.shape == (2, 2)


def test_views(ctx, rng):
    host = random_array(rng, (6, 8), np.float32)
    a = xgpu.to_device(ctx, host)
    for key in [1, -1, (2, 3), slice(1, 5), (slice(None), slice(1, None, 3)), (Ellipsis, 2), (slice(None, None, -1), 0),
                (slice(4, 0, -2), slice(7, 1, -3))]:
        np.testing.assert_array_equal(a[key].get(), host[key], err_msg=str(key))
    np.testing.assert_array_equal(a.T.get(), host.T)
    np.testing.assert_array_equal(a.reshape(4, 12).get(), host.reshape(4, 12))
    np.testing.assert_array_equal(a.reshape(-1, 3).get(), host.reshape(-1, 3))
    np.testing.assert_array_equal(a.ravel().get(), host.ravel())
    np.testing.assert_array_equal(a[1:5:2, ::3].copy().get(), host[1:5:2, ::3])
    assert a[2:, :].strides == host[2:, :].strides
    # A view shares its elements.
    v = a[1]
    v[:] = 5
    np.testing.assert_array_equal(a.get()[1], np.full(8, 5, np.float32))
    with pytest.raises(IndexError):
        a[1, 2, 3]
    with pytest.raises(IndexError):
        a[[1, 2]]


def test_view_dtype(ctx, rng):
    host = random_array(rng, (4, 6), np.float32)
    a = xgpu.to_device(ctx, host)
    np.testing.assert_array_equal(a.view(np.int32).get(), host.view(np.int32))
    np.testing.assert_array_equal(a.view(np.complex64).get(), host.view(np.complex64))
    np.testing.assert_array_equal(a.view(np.uint8).get(), host.view(np.uint8))


def test_astype(ctx, rng):
    host = random_array(rng, 100, np.float32) * 50
    a = xgpu.to_device(ctx, host)
    for t in [np.int32, np.uint8, np.int64, np.complex64, np.bool_]:
        # A negative float to an unsigned type is undefined in C (GPUs saturate, x86 wraps): compared
        # where the value is in range.
        inside = host >= 0 if np.dtype(t).kind == "u" else np.ones(host.shape, bool)
        np.testing.assert_array_equal(a.astype(t).get()[inside], host.astype(t)[inside])


PAIRS = [("int8", "uint8"), ("int32", "float32"), ("uint32", "int32"), ("int64", "uint64"), ("float32", "float64"),
         ("bool", "int16"), ("float32", "complex64"), ("int16", "float32"), ("float64", "complex64")]


@pytest.mark.parametrize("ta,tb", PAIRS)
@pytest.mark.parametrize("op", ["+", "-", "*", "/", "==", "<", ">="])
def test_promotion(ctx, rng, ta, tb, op):
    needs_fp64(ctx, ta, tb, np.promote_types(ta, tb))
    if op in "<>=" and "complex" in ta + tb and op != "==":
        pytest.skip("complex numbers do not order")
    if op == "-" and "bool" in (ta, tb):
        pytest.skip("numpy refuses - on bool")
    ha, hb = random_array(rng, (50,), ta), random_array(rng, (50,), tb)
    if op == "/" and np.dtype(tb).kind in "biu":
        hb[hb == 0] = 1
    a, b = xgpu.to_device(ctx, ha), xgpu.to_device(ctx, hb)
    fn = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "==": operator.eq,
          "<": operator.lt, ">=": operator.ge}[op]
    got, want = fn(a, b), fn(ha, hb)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    single = want.dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(got.get(), want, rtol=1e-6 if single else 1e-13)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64", "complex64"])
@pytest.mark.parametrize("scalar", [2, 2.5, True, 1j])
def test_python_scalars_are_weak(ctx, rng, dtype, scalar):
    needs_fp64(ctx, dtype, np.result_type(np.dtype(dtype), scalar))
    h = random_array(rng, (20,), dtype)
    a = xgpu.to_device(ctx, h)
    for got, want in [(a * scalar, h * scalar), (scalar + a, scalar + h)]:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.get(), want, rtol=1e-6)


def test_broadcasting(ctx, rng):
    h, r = random_array(rng, (5, 4), np.float32), random_array(rng, (4,), np.float32)
    a, b = xgpu.to_device(ctx, h), xgpu.to_device(ctx, r)
    np.testing.assert_allclose((a * b + 1).get(), h * r + 1, rtol=1e-6)
    with pytest.raises(xgpu.ShapeError):
        a + xgpu.to_device(ctx, random_array(rng, (5,), np.float32))


MATH = ["sin", "cos", "tan", "arctan", "sinh", "tanh", "exp", "expm1", "log1p", "sqrt", "cbrt", "floor", "ceil",
        "trunc", "abs", "rint", "isnan", "isfinite"]


@pytest.mark.parametrize("fn", MATH)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math(ctx, rng, fn, dtype):
    needs_fp64(ctx, dtype)
    h = random_array(rng, (300,), dtype) * 0.9
    if fn in ("sqrt", "log1p"):
        h = np.abs(h)
    got, want = getattr(xgpu, fn)(xgpu.to_device(ctx, h)), getattr(np, fn)(h)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want, rtol=2e-6 if dtype == "float32" else 1e-13, atol=1e-7)


def test_functions_of_two(ctx, rng):
    hx, hy = random_array(rng, (100,), np.float32), random_array(rng, (100,), np.float32)
    x, y = xgpu.to_device(ctx, hx), xgpu.to_device(ctx, hy)
    np.testing.assert_allclose(xgpu.maximum(x, y).get(), np.maximum(hx, hy))
    np.testing.assert_allclose(xgpu.minimum(x, 0).get(), np.minimum(hx, 0))
    np.testing.assert_allclose(xgpu.arctan2(x, y).get(), np.arctan2(hx, hy), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xgpu.hypot(x, y).get(), np.hypot(hx, hy), rtol=1e-6)
    np.testing.assert_allclose(xgpu.where(x > y, x, 2 * y).get(), np.where(hx > hy, hx, 2 * hy))
    np.testing.assert_allclose(xgpu.where(x > 0, x, 0).get(), np.where(hx > 0, hx, 0))
    np.testing.assert_array_equal(((x > 0) & (y > 0)).get(), (hx > 0) & (hy > 0))
    np.testing.assert_array_equal((~(x > 0) | (y < 0)).get(), ~(hx > 0) | (hy < 0))
    with pytest.raises(TypeError):
        x & y


def test_statement_is_one_kernel(ctx, rng):
    # A whole number of work-groups: one launch on every device (a CPU device takes a second
    # launch for a last, partial group).
    n = 256 * 40
    h = random_array(rng, (n,), np.float32)
    x = xgpu.to_device(ctx, h)
    (2 * x + xgpu.sin(x) * x - 1).finish()  # compiled (and tuned, where XGPU_AUTOTUNE says) here
    before = ctx.launch_count
    y = 2 * x + xgpu.sin(x) * x - 1
    assert ctx.launch_count == before  # pending until its values are needed
    y.finish()
    assert ctx.launch_count - before == 1
    np.testing.assert_allclose(y.get(), 2 * h + np.sin(h) * h - 1, rtol=1e-5, atol=1e-6)

    # Into an existing array, and in place: one kernel each, the expression never computed alone.
    out = xgpu.empty_like(x)

    def assign():
        out[:] = x * 3 + 1

    def add():
        o = out
        o += x * 2

    for statement in (assign, add):
        statement()
        before = ctx.launch_count
        statement()
        assert ctx.launch_count - before == 1
    out[:] = x * 3 + 1
    out += x * 2
    np.testing.assert_allclose(out.get(), 5 * h + 1, rtol=1e-5, atol=1e-6)

    # A named intermediate is computed once, then read.
    def statements():
        t = x * x
        u, v = t + 1, t - 1
        return (u - v).get()

    statements()
    before = ctx.launch_count
    np.testing.assert_allclose(statements(), np.full(n, 2, np.float32), atol=1e-6)
    assert ctx.launch_count - before == 4


def test_pending_sees_values_before_a_write(ctx, rng):
    h = random_array(rng, (64,), np.float64 if ctx.device.has_fp64 else np.float32)
    x = xgpu.to_device(ctx, h)
    y = x * 2  # pending
    x[:] = 0
    np.testing.assert_array_equal(y.get(), h * 2)
    z = x + 1
    x += 5
    np.testing.assert_array_equal(z.get(), np.ones_like(h))
    w = x - 1
    k = xgpu.ElementwiseKernel(ctx, f"{'double' if h.dtype == np.float64 else 'float'}* x", "x[i] = 100")
    k(x)
    np.testing.assert_array_equal(w.get(), np.full_like(h, 4))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "float32", "float64"])
def test_floor_division(ctx, rng, dtype):
    needs_fp64(ctx, dtype)
    t = np.dtype(dtype)
    if t.kind == "f":
        ha = np.concatenate([rng.uniform(-50, 50, 200), [1, -1, 0, -0.0, 7, np.inf, 3]]).astype(t)
        hb = np.concatenate([rng.uniform(-5, 5, 200), [0.1, 0.1, 3, 3, 0, 2, -np.inf]]).astype(t)
    else:
        info = np.iinfo(t)
        ha = np.concatenate([rng.integers(info.min, info.max, 200, endpoint=True), [info.min, 7, -7, 0]]).astype(t)
        hb = np.concatenate([rng.integers(-9 if info.min else 0, 9, 200, endpoint=True),
                             [-1 if info.min else 1, 0, 2, 3]]).astype(t)
    a, b = xgpu.to_device(ctx, ha), xgpu.to_device(ctx, hb)
    with np.errstate(all="ignore"):
        want = ha // hb
    np.testing.assert_array_equal((a // b).get(), want)
    np.testing.assert_array_equal(xgpu.floor_divide(a, b).get(), want)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((a // 3).get(), ha // t.type(3))
    c = a.copy()
    c //= b
    np.testing.assert_array_equal(c.get(), want)


def test_bool_arithmetic_numpy_refuses(ctx):
    b = xgpu.to_device(ctx, np.array([True, False]))
    with pytest.raises(xgpu.DTypeError):
        b - b
    with pytest.raises(xgpu.DTypeError):
        -b
    with pytest.raises(xgpu.DTypeError):
        b - True
    np.testing.assert_array_equal((b + b).get(), [True, False])  # numpy's too: logical or
    np.testing.assert_array_equal((b - 1).get(), [0, -1])
    hb, hc = np.array([True, False, True]), np.array([True, True, False])
    c, d = xgpu.to_device(ctx, hb), xgpu.to_device(ctx, hc)
    with np.errstate(all="ignore"):
        for op in (operator.floordiv, operator.mod, operator.pow):
            got, want = op(c, d), op(hb, hc)
            assert got.dtype == want.dtype  # int8, as numpy computes these of two bools
            np.testing.assert_array_equal(got.get(), want)
    with pytest.raises(xgpu.DTypeError):
        xgpu.max(xgpu.zeros(ctx, 3, np.complex64))
    np.testing.assert_array_equal(xgpu.diff(c).get(), np.diff(hb))  # != for bools, as numpy


def test_explicit_operator_calls_are_not_temporaries(ctx):
    """A named expression passed to an operator's method by hand is still computed before a write."""
    a = xgpu.to_device(ctx, np.arange(4, dtype=np.float32))
    x = a * 2
    y = x.__add__(1)
    z = xgpu.Array.__neg__(x)
    a[:] = 100
    np.testing.assert_array_equal(x.get(), [0, 2, 4, 6])
    np.testing.assert_array_equal(y.get(), [1, 3, 5, 7])
    np.testing.assert_array_equal(z.get(), [0, -2, -4, -6])


def test_python_ints_out_of_range(ctx):
    """Comparisons with an int the array's type cannot hold are exact; arithmetic raises as numpy 2."""
    h8 = np.array([0, 2, 250], np.uint8)
    u8 = xgpu.to_device(ctx, h8)
    for value in (-1, 256, 255, 0):
        for op in (operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge):
            np.testing.assert_array_equal(op(u8, value).get(), op(h8.astype(np.int64), value))
    i64 = xgpu.to_device(ctx, np.array([1, -5, 2**62]))
    assert (i64 < 2**63).get().all() and not (i64 == 2**63 + 5).get().any()
    with pytest.raises(OverflowError):
        u8 + 1000
    with pytest.raises(OverflowError):
        u8 - (-1)
    i32 = xgpu.to_device(ctx, np.array([1, 2], np.int32))
    with pytest.raises(OverflowError):
        i32 += 2**40
    np.testing.assert_array_equal(i32.get(), [1, 2])
    np.testing.assert_array_equal((u8 + 255).get(), h8 + np.uint8(255))  # in range: wraps as numpy


def test_real_imag_iteration_and_large_arange(ctx, rng):
    needs_fp64(ctx, np.complex128)
    h = random_array(rng, (3, 4), np.complex128)
    c = xgpu.to_device(ctx, h)
    np.testing.assert_array_equal(c.real.get(), h.real)
    np.testing.assert_array_equal(c[:, ::2].imag.get(), h[:, ::2].imag)
    c.real[:] = 0  # views, as numpy's: writes go into the complex array
    c[1].imag[1:3] = 5
    h.real[:] = 0
    h[1].imag[1:3] = 5
    np.testing.assert_array_equal(c.get(), h)
    f = xgpu.to_device(ctx, np.arange(3.0))
    f.real[0] = 7
    assert f.get()[0] == 7 and not f.imag.get().any()
    # Iteration and membership; an index out of range is an IndexError.
    assert [row.get().tolist() for row in c] == [list(r) for r in h]
    assert 2.0 in f and 9.0 not in f
    with pytest.raises(IndexError):
        f[3]
    with pytest.raises(IndexError):
        c[0, -5]
    h10 = np.arange(10)
    a10 = xgpu.to_device(ctx, h10)
    for key in (slice(1, 2**70), slice(-2**70, 3), slice(2**63, None), slice(None, None, 2**70),
                slice(None, None, -2**70)):
        np.testing.assert_array_equal(a10[key].get(), h10[key])
    # Integer bounds beyond 2^53 stay exact.
    np.testing.assert_array_equal(xgpu.arange(ctx, 2**53, 2**53 + 5).get(), np.arange(2**53, 2**53 + 5))
    np.testing.assert_array_equal(xgpu.arange(ctx, 2**62, 2**62 - 9, -3).get(), np.arange(2**62, 2**62 - 9, -3))


def test_assignment(ctx, rng):
    h = random_array(rng, (10, 10), np.int32)
    a = xgpu.to_device(ctx, h)
    a[2:4] = 7
    h[2:4] = 7
    a[:, 1] = xgpu.arange(ctx, 10, dtype=np.int32)
    h[:, 1] = np.arange(10)
    a[5] = np.arange(10) * 3
    h[5] = np.arange(10) * 3
    b = xgpu.to_device(ctx, h[0].copy())
    a[0] = b * b
    h[0] = h[0] * h[0]
    np.testing.assert_array_equal(a.get(), h)
    a[...] = 1
    np.testing.assert_array_equal(a.get(), np.ones_like(h))
    a += 2
    a *= a
    np.testing.assert_array_equal(a.get(), np.full_like(h, 9))
    with pytest.raises(xgpu.DTypeError):
        a /= 2  # float64 result into int32, as numpy refuses


def test_printing(ctx):
    h = np.array([[1.5, 2.0], [3.0, -4.25]], np.float32)
    a = xgpu.to_device(ctx, h)
    assert repr(a) == repr(h) and str(a) == str(h)
    assert f"{xgpu.sum(a):.2f}" == "2.25"
    assert float(xgpu.sum(a)) == 2.25 and int(xgpu.max(a)) == 3


def test_host_and_device_do_not_mix_silently(ctx):
    a = xgpu.zeros(ctx, 3, np.float32)
    with pytest.raises(TypeError):
        a + np.ones(3, np.float32)
    with pytest.raises(ValueError):
        bool(a)
    with pytest.raises(xgpu.DTypeError):
        xgpu.to_device(ctx, np.array(["a", "b"]))


def test_numpy_details(ctx, rng):
    """Behaviours PyOpenCL's test_array.py checks that xgpu once got wrong."""
    h = random_array(rng, (2, 12), np.float32)
    z = xgpu.to_device(ctx, h)
    # A reshape of a strided view is a view where numpy's is one.
    v = z[..., 6:12].reshape((2, 2, 3))
    v.fill(1)
    h[..., 6:12] = 1
    np.testing.assert_array_equal(z.get(), h)
    # set() and assignment of read-only (broadcast) host values of the array's own type.
    z.set(np.float32(2))
    z[0] = np.arange(12, dtype=np.float32)
    np.testing.assert_array_equal(z.get(), np.vstack([np.arange(12), np.full(12, 2)]).astype(np.float32))
    # numpy scalars combine as numpy combines them; float dimensions are refused as numpy does.
    i = xgpu.arange(ctx, 5, dtype=np.int32)
    for s in (np.float32(40), np.complex64(2j), np.int8(3), np.float64(0.5)):
        assert (i / s).dtype == (np.arange(5, dtype=np.int32) / s).dtype
    with pytest.raises(TypeError):
        xgpu.empty(ctx, (2, 5.7))
    # An operation the types lack is refused when written, and leaves nothing pending behind.
    c = xgpu.zeros(ctx, 3, np.complex64)
    with pytest.raises(xgpu.DTypeError, match="pow"):
        c ** c
    xgpu.zeros(ctx, 3, np.float32).fill(1)
    # flags, newaxis, squeeze, ravel in F order, diff, reductions with dtype= and initial=.
    assert z.flags.c_contiguous and z.flags["C_CONTIGUOUS"] and not z.T.flags.c_contiguous
    np.testing.assert_array_equal(z[:, None, 3].get(), z.get()[:, None, 3])
    np.testing.assert_array_equal(z[None].get(), z.get()[None])
    assert z[None, :, None].squeeze().shape == (2, 12) and z[None].squeeze(0).shape == (2, 12)
    np.testing.assert_array_equal(z.ravel("F").get(), z.get().ravel("F"))
    np.testing.assert_array_equal(z.reshape(4, 6, order="F").get(), z.get().reshape(4, 6, order="F"))
    np.testing.assert_array_equal(xgpu.diff(z, 2).get(), np.diff(z.get(), 2))
    assert xgpu.sum(i, dtype=np.float32).dtype == np.float32 and int(xgpu.sum(i, initial=10)) == 20
    assert int(xgpu.max(xgpu.zeros(ctx, 0, np.int32), initial=-7)) == -7 and int(i.max(initial=9)) == 9
    assert xgpu.dot(i, i, dtype=np.float64).dtype == np.float64 and xgpu.cumsum(i, dtype=np.int32).dtype == np.int32
