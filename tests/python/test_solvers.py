"""The Krylov solvers against scipy.sparse.linalg: iterations within 2 of scipy's (GMRES: its
Arnoldi steps), solutions within the tolerance, every kind of operator, and the report."""

import inspect
import pathlib

import numpy as np
import pytest

import xgpu
from support import needs_fp64

sp = pytest.importorskip("scipy.sparse")
sio = pytest.importorskip("scipy.io")
MATRICES = pathlib.Path(__file__).resolve().parents[1] / "data" / "matrices"
sla = pytest.importorskip("scipy.sparse.linalg")
# scipy named the relative tolerance `tol` before 1.12.
_RTOL = "rtol" if "rtol" in inspect.signature(sla.cg).parameters else "tol"


def poisson(n):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return (sp.kron(t, sp.eye(n)) + sp.kron(sp.eye(n), t)).tocsr()


def scipy_solve(method, a, b, rtol, **kw):
    count = [0]
    x, info = getattr(sla, method)(a, b, **{_RTOL: rtol}, atol=0.0, callback=lambda xk: count.__setitem__(0, count[0] + 1), **kw)
    return x, info, count[0]


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-8), ("float32", 1e-4)])
def test_cg_against_scipy(ctx, rng, dtype, rtol):
    needs_fp64(ctx, dtype)
    a = poisson(24).astype(dtype)
    b = rng.uniform(-1, 1, a.shape[0]).astype(dtype)
    result = xgpu.solvers.cg(xgpu.sparse.csr_matrix(ctx, a), xgpu.to_device(ctx, b), rtol=rtol)
    x, info = result
    report = result.report
    _, scipy_info, scipy_iterations = scipy_solve("cg", a.astype(np.float64), b.astype(np.float64), rtol)
    assert info == 0 and scipy_info == 0 and report.converged
    if dtype == "float64":
        assert abs(report.status_iteration - scipy_iterations) <= 2
    assert np.linalg.norm(b - a @ x.get()) <= rtol * np.linalg.norm(b) * 1.0001


def test_cg_operators_agree(ctx, rng):
    """A matrix, the matrix-free Laplacian and a Python LinearOperator give the same iterations."""
    needs_fp64(ctx, np.float64)
    n = 20
    a = poisson(n)
    hb = rng.uniform(-1, 1, n * n)
    b = xgpu.to_device(ctx, hb)
    runs = [xgpu.solvers.cg(op, b, rtol=1e-9) for op in
            (xgpu.sparse.csr_matrix(ctx, a), xgpu.sparse.Laplacian(ctx, n, n), sla.aslinearoperator(a))]
    for r in runs:
        assert r.info == 0 and r.report.converged
        np.testing.assert_allclose(r.x.get(), runs[0].x.get(), rtol=1e-7, atol=1e-9)
    assert len({r.report.status_iteration for r in runs}) == 1
    # A Python operator that returns device arrays, and a preconditioner as an operator.
    A = xgpu.sparse.csr_matrix(ctx, a)

    class Device:
        shape = a.shape

        def matvec(self, x):
            return A @ x

    class Jacobi:
        shape = a.shape

        def matvec(self, x):
            return x / 4.0

    r = xgpu.solvers.cg(Device(), b, rtol=1e-9, M=Jacobi())
    assert r.info == 0
    np.testing.assert_allclose(r.x.get(), runs[0].x.get(), rtol=1e-7, atol=1e-9)


def test_bicgstab_against_scipy(ctx, rng):
    needs_fp64(ctx, np.float64)
    n = 400
    a = (sp.random(n, n, 4 / n, random_state=rng) + sp.diags(rng.uniform(4, 6, n))).tocsr()
    b = rng.uniform(-1, 1, n)
    result = xgpu.solvers.bicgstab(xgpu.sparse.csr_matrix(ctx, a), xgpu.to_device(ctx, b), rtol=1e-8)
    x, info = result
    _, scipy_info, scipy_iterations = scipy_solve("bicgstab", a, b, 1e-8)
    assert info == 0 and scipy_info == 0
    assert abs(result.report.status_iteration - scipy_iterations) <= 2
    assert np.linalg.norm(b - a @ x.get()) <= 1e-8 * np.linalg.norm(b) * 1.0001
    r = xgpu.solvers.bicgstab(xgpu.sparse.csr_matrix(ctx, a), xgpu.to_device(ctx, b), rtol=1e-8, M="jacobi")
    assert r.info == 0


def convection_diffusion(n, c):
    """The 5-point operator on an n x n grid with central convection of strength c along x:
    nonsymmetric, positive real part."""
    lap = poisson(n)
    d = sp.diags([-1.0, 1.0], [-1, 1], shape=(n, n))
    return (lap + c * sp.kron(sp.eye(n), d)).tocsr()


def scipy_gmres_steps(a, b, rtol, restart, M=None):
    """scipy's GMRES on the host: (x, info, Arnoldi steps)."""
    count = [0]
    x, info = sla.gmres(a, b, **{_RTOL: rtol}, atol=0.0, restart=restart, maxiter=1000, M=M,
                        callback=lambda r: count.__setitem__(0, count[0] + 1), callback_type="pr_norm")
    return x, info, count[0]


@pytest.mark.parametrize("restart", [5, 20])
def test_gmres_against_scipy(ctx, rng, restart):
    needs_fp64(ctx, np.float64)
    n = int(rng.integers(18, 26))
    random = (sp.random(300, 300, 4 / 300, random_state=rng) + sp.diags(rng.uniform(4, 6, 300))).tocsr()
    # A matrix of tests/data made nonsymmetric by an upwind term along its off-diagonal.
    grid = sp.csr_matrix(sio.mmread(str(MATRICES / "gr_30_30.mtx")), dtype=np.float64)
    upwind = (grid + 0.5 * sp.diags(np.ones(899), -1)).tocsr()
    for a in (convection_diffusion(n, 0.6), random, upwind):
        b = rng.uniform(-1, 1, a.shape[0])
        steps = []
        x, info = xgpu.solvers.gmres(xgpu.sparse.csr_matrix(ctx, a), xgpu.to_device(ctx, b), rtol=1e-8,
                                     restart=restart, callback=steps.append)
        _, scipy_info, scipy_steps = scipy_gmres_steps(a, b, 1e-8, restart)
        assert info == 0 and scipy_info == 0
        assert np.linalg.norm(b - a @ x.get()) <= 1e-8 * np.linalg.norm(b) * 1.0001
        # The same Arnoldi process: the same steps, up to rounding near the tolerance.
        assert abs(len(steps) - scipy_steps) <= 2 + scipy_steps // 50
        assert all(later <= earlier * (1 + 1e-9) for earlier, later in zip(steps, steps[1:]))  # it never rises
        # Jacobi (right-preconditioned here, left in scipy: the counts need not agree) and FGMRES.
        for kw in ({"M": "jacobi"}, {"M": xgpu.solvers.Jacobi(xgpu.sparse.csr_matrix(ctx, a)), "flexible": True}):
            r = xgpu.solvers.gmres(xgpu.sparse.csr_matrix(ctx, a), xgpu.to_device(ctx, b), rtol=1e-8,
                                   restart=restart, **kw)
            assert r.info == 0
            assert np.linalg.norm(b - a @ r[0].get()) <= 1e-8 * np.linalg.norm(b) * 1.0001


def test_gmres_conventions(ctx, rng):
    needs_fp64(ctx, np.float64)
    a = convection_diffusion(12, 0.4)
    b = rng.uniform(-1, 1, 144)
    # callback_type "x": the iterate at each restart; maxiter counts restart cycles, as scipy's.
    seen = []
    r = xgpu.solvers.gmres(a, b, restart=4, maxiter=3, rtol=1e-12, callback=lambda xk: seen.append(xk.get()),
                           callback_type="x")
    assert r.info == 12 and r.report.iterations == 12
    assert len(seen) == 3
    assert np.allclose(seen[-1], r[0].get())
    # A solve that stops mid-cycle shows the callback the x it returns.
    seen = []
    r = xgpu.solvers.gmres(a, b, restart=200, rtol=1e-8, callback=lambda xk: seen.append(xk.get()),
                           callback_type="x")
    assert r.info == 0 and r.report.iterations < 144
    assert len(seen) == 1 and np.array_equal(seen[0], r[0].get())
    # "legacy": maxiter counts steps.
    r = xgpu.solvers.gmres(a, b, restart=4, maxiter=6, rtol=1e-12, callback=lambda rel: None,
                           callback_type="legacy")
    assert r.report.iterations == 6
    with pytest.raises(ValueError):
        xgpu.solvers.gmres(a, b, callback_type="residual")
    with pytest.raises(ValueError):
        xgpu.solvers.gmres(a, b, restart=0)
    with pytest.raises(ValueError):
        xgpu.solvers.gmres(a, b, maxiter=0)
    with pytest.raises(TypeError):
        xgpu.solvers.gmres(a, b, callback=3)


def test_the_limit_and_the_report(ctx, rng):
    needs_fp64(ctx, np.float64)
    a = xgpu.sparse.csr_matrix(ctx, poisson(30))
    b = xgpu.to_device(ctx, rng.uniform(-1, 1, 900))
    x0 = xgpu.zeros(ctx, 900)
    r = xgpu.solvers.cg(a, b, x0, rtol=1e-12, maxiter=5)
    assert r.info == r.report.iterations > 0 and r.report.status == "max_iterations" and not r.report.converged
    assert x0.get().max() == 0  # x0 is left as it is
    # The automatic variant: classic CG, or the pipelined one where the device favours it (GPUs).
    assert r.report.residual > 0 and r.report.method in ("cg", "pipelined cg") and r.report.ms_per_iteration >= 0


def test_misuse(ctx, rng):
    a = xgpu.sparse.csr_matrix(ctx, sp.eye(10, dtype=np.float32))
    with pytest.raises(xgpu.ShapeError):
        xgpu.solvers.cg(a, xgpu.zeros(ctx, 11, np.float32))
    with pytest.raises(TypeError):
        xgpu.solvers.cg(a, xgpu.zeros(ctx, 10, np.int32))
    with pytest.raises(TypeError):
        xgpu.solvers.cg(object(), xgpu.zeros(ctx, 10, np.float32))
    with pytest.raises(ValueError):
        xgpu.solvers.cg(a, xgpu.zeros(ctx, 10, np.float32), M="ilu")

    class Broken:
        shape = (10, 10)

        def matvec(self, x):
            raise RuntimeError("broken operator")

    with pytest.raises(RuntimeError, match="broken operator"):
        xgpu.solvers.cg(Broken(), xgpu.to_device(ctx, np.ones(10, np.float32)))
