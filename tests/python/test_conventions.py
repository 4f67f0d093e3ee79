"""scipy's and PyAMG's conventions: callback= on the solvers and on ml.solve, the default context,
PyAMG's option tuples, B as (n, k), one preconditioner protocol (a preconditioner defined here,
in the test only, reaches the solver natively), and the refusals made before any work."""

import numpy as np
import pytest

import xgpu
from support import needs_fp64

sp = pytest.importorskip("scipy.sparse")


def poisson(n):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return (sp.kron(t, sp.eye(n)) + sp.kron(sp.eye(n), t)).tocsr()


@pytest.mark.parametrize("method", ["cg", "bicgstab"])
def test_callback_once_per_iteration(ctx, rng, method):
    needs_fp64(ctx, np.float64)
    a = poisson(20)
    A = xgpu.sparse.csr_matrix(ctx, a)
    b = rng.uniform(-1, 1, a.shape[0])
    seen = []
    for M in (None, "jacobi", xgpu.solvers.Jacobi(A)):
        seen.clear()
        result = getattr(xgpu.solvers, method)(A, b, rtol=1e-8, M=M, callback=lambda xk: seen.append(xk.get()))
        plain = getattr(xgpu.solvers, method)(A, b, rtol=1e-8, M=M)
        assert result.info == 0
        # scipy's count: one call per iteration, the last with the answer; the same solve as without.
        assert len(seen) == result.report.iterations == plain.report.iterations
        np.testing.assert_array_equal(seen[-1], result.x.get())
        np.testing.assert_allclose(result.x.get(), plain.x.get(), rtol=0, atol=1e-12)
        residuals = [np.linalg.norm(b - a @ x) for x in seen]
        assert residuals[-1] <= 1e-8 * np.linalg.norm(b) * 1.0001 < residuals[0]
    with pytest.raises(TypeError):
        getattr(xgpu.solvers, method)(A, b, callback=3)


def test_callback_exception_reaches_the_caller(ctx, rng):
    needs_fp64(ctx, np.float64)
    a = poisson(12)
    A = xgpu.sparse.csr_matrix(ctx, a)

    def stop(xk):
        raise RuntimeError("seen enough")

    with pytest.raises(RuntimeError, match="seen enough"):
        xgpu.solvers.cg(A, rng.uniform(-1, 1, a.shape[0]), callback=stop)
    # The context works on.
    assert xgpu.solvers.cg(A, rng.uniform(-1, 1, a.shape[0]), rtol=1e-8).info == 0


def test_default_context(rng):
    ctx = xgpu.default_context()
    assert ctx is xgpu.default_context()
    a = poisson(16)
    if not ctx.device.has_fp64:
        a = a.astype(np.float32)
    b = rng.uniform(-1, 1, a.shape[0]).astype(a.dtype)
    # Host matrices and vectors go to the default context, as CuPy's current device.
    x, info = xgpu.solvers.cg(a, b, rtol=1e-5)
    assert info == 0 and x.context == ctx
    assert np.linalg.norm(b - a @ x.get()) <= 1e-5 * np.linalg.norm(b) * 1.0001
    A = xgpu.sparse.csr_matrix(a)
    assert A.context == ctx and A.nnz == a.nnz
    ml = xgpu.amg.smoothed_aggregation_solver(a, max_coarse=20)
    assert ml.context == ctx
    x = ml.solve(b, tol=1e-5)
    assert np.linalg.norm(b - a @ x.get()) <= 1e-5 * np.linalg.norm(b) * 1.0001


def test_pyamg_option_tuples(ctx, rng):
    """Each tuple builds the hierarchy of the xgpu keywords it stands for: the same levels, the
    same iterations."""
    needs_fp64(ctx, np.float64)
    a = poisson(40)
    b = rng.uniform(-1, 1, a.shape[0])
    # (PyAMG's form, xgpu's keywords, whether the cycle is the same: an omega or a degree other
    # than the default's changes the cycle, not the levels)
    pairs = [
        (dict(strength=("symmetric", {"theta": 0.12})), dict(theta=0.12), True),
        (dict(strength="symmetric"), dict(), True),
        (dict(presmoother=("jacobi", {"omega": 1.7, "iterations": 2})), dict(presmooth=2, postsmooth=2), True),
        (dict(presmoother=("jacobi", {"omega": 1.5, "iterations": 2}), postsmoother=("jacobi", {"omega": 1.5})),
         dict(presmooth=2, postsmooth=1, smoother="jacobi"), False),
        (dict(presmoother=("chebyshev", {"degree": 2})), dict(smoother="chebyshev"), True),
        (dict(presmoother=("chebyshev", {"degree": 3})), dict(smoother="chebyshev"), False),
        (dict(presmoother="l1_jacobi"), dict(smoother="l1_jacobi"), True),
        (dict(smooth=("jacobi", {"omega": 4 / 3})), dict(), True),
    ]
    for tuples, keywords, same_cycle in pairs:
        ours = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=30, **tuples)
        plain = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=30, **keywords)
        sizes = [(lv.A.shape[0], lv.A.nnz) for lv in ours.levels]
        assert sizes == [(lv.A.shape[0], lv.A.nnz) for lv in plain.levels]
        x, info = ours.solve(b, tol=1e-8, return_info=True)
        assert info == 0 and np.linalg.norm(b - a @ x.get()) <= 1e-8 * np.linalg.norm(b) * 1.0001
        iterations = ours.last_report.iterations
        plain.solve(b, tol=1e-8)
        if same_cycle:
            assert iterations == plain.last_report.iterations
    # A smoothing omega differs from the default's: the prolongator changes, the levels' sizes not.
    smoothed = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=30, smooth=("jacobi", {"omega": 1.2}))
    default = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=30)
    assert not np.allclose(smoothed.levels[0].P.get().toarray(), default.levels[0].P.get().toarray())
    for bad in (dict(strength="classical"), dict(strength=("symmetric", {"theta": 0.1, "norm": "abs"})),
                dict(presmoother="gauss_seidel"), dict(presmoother=("jacobi", {"withrho": False})),
                dict(presmoother="jacobi", postsmoother="chebyshev"), dict(smooth="energy"),
                dict(strength=("symmetric", 0.1)), dict(presmoother="jacobi", smoother="jacobi"),
                dict(strength=("symmetric", {"theta": 0.1}), theta=0.2)):
        with pytest.raises(xgpu.InvalidArgument):
            xgpu.amg.smoothed_aggregation_solver(a, context=ctx, **bad)


def test_ml_solve_callback_and_b_shape(ctx, rng):
    needs_fp64(ctx, np.float64)
    a = poisson(24)
    b = rng.uniform(-1, 1, a.shape[0])
    ml = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=30)
    assert ml.levels[0].B.shape == (a.shape[0], 1)
    assert ml.levels[1].B.shape == (ml.levels[1].A.shape[0], 1)
    for accel in ("cg", "bicgstab", None):
        seen = []
        residuals = []
        x = ml.solve(b, tol=1e-8, accel=accel, callback=lambda xk: seen.append(xk.get()), residuals=residuals)
        assert len(seen) == len(residuals) - 1 if accel is None else len(seen) == ml.last_report.iterations
        np.testing.assert_array_equal(seen[-1], x.get())
    k = 3
    B = np.stack([np.ones(a.shape[0]), np.arange(a.shape[0]) % 7 + 1.0, np.arange(a.shape[0]) / a.shape[0] + 1], 1)
    ml = xgpu.amg.smoothed_aggregation_solver(a, B, context=ctx, max_coarse=30)
    assert ml.levels[0].B.shape == (a.shape[0], k)
    np.testing.assert_array_equal(ml.levels[0].B.get(), B)


def test_a_new_preconditioner_through_the_protocol(ctx, rng):
    """A preconditioner defined here only: its __xgpu_preconditioner__ gives a native one, which
    the solver applies with no Python call, with Jacobi's iterations."""
    needs_fp64(ctx, np.float64)
    a = poisson(20)
    A = xgpu.sparse.csr_matrix(ctx, a)
    b = rng.uniform(-1, 1, a.shape[0])

    class InverseDiagonal:
        def __init__(self, matrix):
            self.native = xgpu.sparse.csr_matrix(ctx, sp.diags(1 / matrix.diagonal())).__xgpu_preconditioner__()

        def __xgpu_preconditioner__(self):
            return self.native

        def matvec(self, x):
            raise AssertionError("a native preconditioner is never called from Python")

        shape = a.shape

    ours = xgpu.solvers.cg(A, b, rtol=1e-9, M=InverseDiagonal(a))
    jacobi = xgpu.solvers.cg(A, b, rtol=1e-9, M="jacobi")
    assert ours.info == 0 and abs(ours.report.iterations - jacobi.report.iterations) <= 1

    class Broken:
        def __xgpu_preconditioner__(self):
            return "not one"

    with pytest.raises(xgpu.DTypeError, match="not a native preconditioner"):
        xgpu.solvers.cg(A, b, M=Broken())


def test_jacobi_and_chebyshev(ctx, rng):
    needs_fp64(ctx, np.float64)
    a = poisson(24)
    A = xgpu.sparse.csr_matrix(ctx, a)
    b = rng.uniform(-1, 1, a.shape[0])
    x = rng.uniform(-1, 1, a.shape[0])
    J = xgpu.solvers.Jacobi(A)
    assert J.shape == a.shape and J.dtype == np.float64
    np.testing.assert_allclose(J.matvec(xgpu.to_device(ctx, x)).get(), x / a.diagonal(), rtol=1e-15)
    C = xgpu.solvers.Chebyshev(A, degree=4)
    # A polynomial in A: symmetric, and it commutes with A.
    y = rng.uniform(-1, 1, a.shape[0])
    cx, cy = C.matvec(xgpu.to_device(ctx, x)).get(), C.matvec(xgpu.to_device(ctx, y)).get()
    assert abs(y @ cx - x @ cy) <= 1e-12 * abs(y @ cx)
    np.testing.assert_allclose(C.matvec(xgpu.to_device(ctx, a @ x)).get(), a @ cx, rtol=0, atol=1e-11)
    plain = xgpu.solvers.cg(A, b, rtol=1e-8)
    for M in (J, C, xgpu.solvers.Chebyshev(a, degree=3, context=ctx), xgpu.solvers.Chebyshev(
            xgpu.sparse.Laplacian(ctx, 24, 24))):
        r = xgpu.solvers.cg(A, b, rtol=1e-8, M=M)
        assert r.info == 0 and np.linalg.norm(b - a @ r.x.get()) <= 1e-8 * np.linalg.norm(b) * 1.0001
    assert xgpu.solvers.cg(A, b, rtol=1e-8, M=C).report.iterations < plain.report.iterations
    with pytest.raises(xgpu.InvalidArgument):
        xgpu.solvers.Chebyshev(A, degree=0)
    with pytest.raises(xgpu.DTypeError):
        xgpu.solvers.Jacobi(np.eye(3))


def test_preconditioner_of_another_context(ctx, rng):
    """A hierarchy (or Jacobi) built on one context, the system on another: refused before any work."""
    needs_fp64(ctx, np.float64)
    other = xgpu.Context.create(ctx.backend)
    a = poisson(16)
    A = xgpu.sparse.csr_matrix(ctx, a)
    b = rng.uniform(-1, 1, a.shape[0])
    for M in (xgpu.amg.smoothed_aggregation_solver(a, context=other, max_coarse=20),
              xgpu.solvers.Jacobi(a, context=other), xgpu.solvers.Chebyshev(a, context=other)):
        before, before_other = ctx.launch_count, other.launch_count
        with pytest.raises(xgpu.InvalidArgument, match="another context"):
            xgpu.solvers.cg(A, b, M=M)
        assert (ctx.launch_count, other.launch_count) == (before, before_other)
    with pytest.raises(xgpu.InvalidArgument, match="another context"):
        xgpu.solvers.cg(A, xgpu.to_device(other, b))
