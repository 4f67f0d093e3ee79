"""xgpu.amg (PyAMG's names) and the solvers' M= forms: every preconditioner scipy's M takes, applied
on the device; the hierarchy against PyAMG's where PyAMG is installed; refusals before any work."""

import numpy as np
import pytest

import xgpu
from support import needs_fp64

sp = pytest.importorskip("scipy.sparse")


def poisson(n):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return (sp.kron(t, sp.eye(n)) + sp.kron(sp.eye(n), t)).tocsr()


def host_residual(a, x, b):
    return np.linalg.norm(b - a @ x) / np.linalg.norm(b)


def test_smoothed_aggregation_solver(ctx, rng):
    needs_fp64(ctx, np.float64)
    a = poisson(90 + int(rng.integers(0, 20)))
    ml = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=60)
    assert len(ml.levels) >= 3
    assert 1.1 <= ml.operator_complexity() <= 1.6 and 1.0 < ml.grid_complexity() <= 1.3
    text = str(ml)
    assert "Number of Levels:" in text and "Operator Complexity:" in text
    # Each level's operator is R A P of the level above, and R = P^T.
    for fine, coarse in zip(ml.levels, ml.levels[1:]):
        A, P, R = fine.A.get(), fine.P.get(), fine.R.get()
        assert abs(R - P.T).max() == 0
        assert abs(coarse.A.get() - R @ A @ P).max() <= 1e-12 * abs(A).max()
    b = rng.uniform(-1, 1, a.shape[0])
    residuals = []
    x = ml.solve(b, tol=1e-8, residuals=residuals)
    assert isinstance(x, xgpu.Array) and residuals
    assert host_residual(a, x.get(), b) <= 1e-8 * 1.0001
    assert ml.last_report.iterations <= 20
    x = ml.solve(b, tol=1e-8, accel="bicgstab")
    assert host_residual(a, x.get(), b) <= 1e-8 * 1.0001
    # refresh: new values on the pattern, the solve still converges.
    ml.refresh(xgpu.sparse.csr_matrix(ctx, 2 * a + sp.eye(a.shape[0])))
    x = ml.solve(b, tol=1e-8)
    assert host_residual(2 * a + sp.eye(a.shape[0]), x.get(), b) <= 1e-8 * 1.0001


def test_near_null_space_and_chebyshev(ctx, rng):
    """B= (PyAMG's name): D A D with a random positive diagonal D has the near-null-space vector
    D^-1 1, which the constant misses; the Chebyshev smoother; B's refusals."""
    needs_fp64(ctx, np.float64)
    a = poisson(60 + int(rng.integers(0, 10)))
    d = rng.uniform(0.1, 10, a.shape[0])
    scaled = (sp.diags(d) @ a @ sp.diags(d)).tocsr()
    b = rng.uniform(-1, 1, a.shape[0])
    its = {}
    for name, B in (("constant", None), ("ndarray", 1 / d), ("column", (1 / d)[:, None]),
                    ("device", xgpu.to_device(ctx, 1 / d))):
        ml = xgpu.amg.smoothed_aggregation_solver(scaled, B, context=ctx, max_coarse=50)
        x = ml.solve(b, tol=1e-8, maxiter=300)
        assert host_residual(scaled, x.get(), b) <= 1e-8 * 1.0001
        its[name] = ml.last_report.iterations
    assert its["ndarray"] == its["column"] == its["device"] <= 20
    assert its["ndarray"] < its["constant"]
    ml = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=50, smoother="chebyshev")
    x = ml.solve(b, tol=1e-8)
    assert host_residual(a, x.get(), b) <= 1e-8 * 1.0001 and ml.last_report.iterations <= 20
    with pytest.raises(xgpu.ShapeError):
        xgpu.amg.smoothed_aggregation_solver(a, np.ones((a.shape[0], 33)), context=ctx)
    with pytest.raises(xgpu.ShapeError):
        xgpu.amg.smoothed_aggregation_solver(a, np.ones((a.shape[0] - 1, 2)), context=ctx)
    with pytest.raises(xgpu.ShapeError):
        xgpu.amg.smoothed_aggregation_solver(a, np.ones(a.shape[0] - 1), context=ctx)
    with pytest.raises(xgpu.DTypeError):
        xgpu.amg.smoothed_aggregation_solver(a, np.array(["x"] * a.shape[0]), context=ctx)
    zero = np.ones(a.shape[0])
    zero[3] = 0
    with pytest.raises(ValueError, match="zero entry"):
        xgpu.amg.smoothed_aggregation_solver(a, zero, context=ctx)
    with pytest.raises(ValueError, match="no smoother 'gauss_seidel'"):
        xgpu.amg.smoothed_aggregation_solver(a, context=ctx, smoother="gauss_seidel")


def test_several_near_null_space_vectors(ctx, rng):
    """B with k columns (PyAMG's B for, e.g., rigid body modes): each aggregate takes k columns of
    P, whose tentative part is an orthonormal basis of B on the aggregate; the solve converges."""
    needs_fp64(ctx, np.float64)
    n = 50 + int(rng.integers(0, 10))
    a = poisson(n)
    i = np.arange(a.shape[0])
    B = np.stack([np.ones(a.shape[0]), (i % n) / n, (i // n) / n], axis=1)
    ml = xgpu.amg.smoothed_aggregation_solver(a, B, context=ctx, max_coarse=50)
    assert len(ml.levels) >= 2
    for fine, coarse in zip(ml.levels, ml.levels[1:]):
        assert fine.P.shape[1] % 3 == 0
        assert fine.B.shape == (fine.A.shape[0], 3) and coarse.B.shape == (fine.P.shape[1], 3)
    assert np.array_equal(ml.levels[0].B.get(), B)
    # The coarse B is each aggregate's R, upper triangular.
    R = ml.levels[1].B.get().reshape(-1, 3, 3)
    assert np.all(np.tril(R, -1) == 0)
    b = rng.uniform(-1, 1, a.shape[0])
    x = ml.solve(b, tol=1e-8, maxiter=200)
    assert host_residual(a, x.get(), b) <= 1e-8 * 1.0001
    assert ml.last_report.iterations <= 25
    # From the device as well, the same hierarchy.
    again = xgpu.amg.smoothed_aggregation_solver(a, xgpu.to_device(ctx, B), context=ctx, max_coarse=50)
    assert abs(again.levels[0].P.get() - ml.levels[0].P.get()).max() == 0


def test_solve_as_pyamg(ctx, rng):
    """solve() with PyAMG's arguments: a (n, 1) right-hand side, V-cycles alone (accel=None),
    return_info, residual norms; the user's A solved (not the float32 hierarchy's rounded copy);
    refresh refuses another pattern and keeps the hierarchy."""
    needs_fp64(ctx, np.float64)
    a = poisson(40 + int(rng.integers(0, 10)))
    n = a.shape[0]
    ml = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=50)
    b = rng.uniform(-1, 1, (n, 1))
    residuals = []
    x = ml.solve(b, tol=1e-8, residuals=residuals)
    assert x.shape == (n, 1) and host_residual(a, x.get()[:, 0], b[:, 0]) <= 1e-8 * 1.0001
    assert residuals[0] == pytest.approx(np.linalg.norm(b)) and residuals[-1] <= 1e-8 * 1.0001 * residuals[0]
    residuals = []
    x, info = ml.solve(b[:, 0], tol=1e-6, accel=None, residuals=residuals, return_info=True)
    assert info == 0 and ml.last_report is None and x.shape == (n,)
    assert len(residuals) <= 60 and residuals[-1] <= 1e-6 * residuals[0]
    assert residuals[-1] == pytest.approx(np.linalg.norm(b[:, 0] - a @ x.get()))
    x, info = ml.solve(b[:, 0], tol=1e-12, accel=None, maxiter=3, return_info=True)
    assert info == 3
    with pytest.raises(ValueError, match="cycle 'W'"):
        ml.solve(b, cycle="W")
    # A badly scaled matrix in a float32 hierarchy: the residual is the user's matrix's.
    d = sp.diags(rng.uniform(0.5, 20, n))
    scaled = (d @ a @ d).tocsr()
    low = xgpu.amg.smoothed_aggregation_solver(scaled, 1 / d.diagonal(), context=ctx, single_precision=True)
    x = low.solve(b[:, 0], tol=1e-8, maxiter=200)
    assert host_residual(scaled, x.get(), b[:, 0]) <= 1e-8 * 1.0001
    moved = a.tolil()
    moved[0, 2], moved[0, 1] = moved[0, 1], 0  # the same entry count, one in another column
    moved = moved.tocsr()
    moved.eliminate_zeros()
    assert moved.nnz == a.nnz
    with pytest.raises(xgpu.InvalidArgument, match="sparsity pattern"):
        ml.refresh(moved)
    assert host_residual(a, ml.solve(b[:, 0], tol=1e-8).get(), b[:, 0]) <= 1e-8 * 1.0001


def test_against_pyamg(ctx, rng):
    """Sizes within a band of PyAMG's standard aggregation: ours aggregates a distance-2
    independent set, whose aggregates are up to a third larger."""
    needs_fp64(ctx, np.float64)
    pyamg = pytest.importorskip("pyamg")
    a = poisson(128)
    ours = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=100)
    theirs = pyamg.smoothed_aggregation_solver(a, strength=("symmetric", {"theta": 0.08}), max_coarse=100)
    assert abs(ours.operator_complexity() - theirs.operator_complexity()) <= 0.1
    n1, m1 = ours.levels[1].A.shape[0], theirs.levels[1].A.shape[0]
    assert 0.7 * m1 <= n1 <= 1.1 * m1


def test_theta_decay(ctx, rng):
    """theta * theta_decay**l on level l: 1.0 keeps theta on every level (PyAMG's rule), the
    default halves it; the finest level's aggregates are the same either way."""
    needs_fp64(ctx, np.float64)
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(24, 24))
    i = sp.eye(24)
    a = (sp.kron(sp.kron(t, i), i) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(i, i), t)).tocsr()
    kept = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=50, theta_decay=1.0)
    halved = xgpu.amg.smoothed_aggregation_solver(a, context=ctx, max_coarse=50)
    assert kept.levels[1].A.shape == halved.levels[1].A.shape
    assert kept.levels[2].A.shape != halved.levels[2].A.shape
    b = rng.uniform(-1, 1, a.shape[0])
    for ml in (kept, halved):
        residuals = []
        x = ml.solve(b, tol=1e-8, accel="cg", residuals=residuals)
        assert np.linalg.norm(b - a @ x.get()) <= 1e-7 * np.linalg.norm(b)
    for bad in (0.0, -0.5, 1.5, float("nan")):
        with pytest.raises(xgpu.InvalidArgument, match="theta_decay"):
            xgpu.amg.smoothed_aggregation_solver(a, context=ctx, theta_decay=bad)


def test_m_forms(ctx, rng):
    """M= as scipy takes it: each form gives the iterations of the same preconditioner applied
    through a Python operator (with no Python call for the native forms)."""
    needs_fp64(ctx, np.float64)
    a = poisson(30)
    A = xgpu.sparse.csr_matrix(ctx, a)
    b = rng.uniform(-1, 1, a.shape[0])
    d = sp.diags(1 / a.diagonal())
    calls = [0]

    class Python:
        shape = a.shape

        def matvec(self, x):
            calls[0] += 1
            return d @ x.get()

    reference = xgpu.solvers.cg(A, b, rtol=1e-9, M=Python())
    assert reference.info == 0 and calls[0] > 0
    for M in ("jacobi", d, d.toarray(), xgpu.sparse.csr_matrix(ctx, d)):
        r = xgpu.solvers.cg(A, b, rtol=1e-9, M=M)
        assert r.info == 0 and abs(r.report.iterations - reference.report.iterations) <= 1
    # A Laplacian as M (a poor preconditioner, but an operator the library applies itself).
    lap = xgpu.sparse.Laplacian(ctx, 30, 30)
    r = xgpu.solvers.bicgstab(A, b, rtol=1e-6, M=lap, maxiter=2000)
    assert r.report.iterations > 0
    # The hierarchy and its aspreconditioner(), natively.
    ml = xgpu.amg.smoothed_aggregation_solver(A, max_coarse=50)
    for M in (ml, ml.aspreconditioner()):
        calls[0] = 0
        r = xgpu.solvers.cg(A, b, rtol=1e-8, M=M)
        assert r.info == 0 and r.report.iterations <= 20
        assert host_residual(a, r.x.get(), b) <= 1e-8 * 1.0001


def test_refusals(ctx, rng):
    needs_fp64(ctx, np.float64)
    a = poisson(12)
    A = xgpu.sparse.csr_matrix(ctx, a)
    b = rng.uniform(-1, 1, a.shape[0])
    with pytest.raises(xgpu.ShapeError):
        xgpu.solvers.cg(A, b, M=xgpu.sparse.csr_matrix(ctx, sp.eye(5)))
    with pytest.raises(xgpu.ShapeError):
        xgpu.solvers.cg(A, b, M=sp.eye(7))
    with pytest.raises(xgpu.DTypeError) as e:
        xgpu.solvers.cg(A, b, M=xgpu.sparse.csr_matrix(ctx, sp.eye(a.shape[0], dtype=np.float32)))
    assert isinstance(e.value, TypeError)
    with pytest.raises(xgpu.DTypeError):
        xgpu.solvers.cg(A, xgpu.zeros(ctx, a.shape[0], np.int32))
    with pytest.raises(xgpu.DTypeError):
        xgpu.solvers.cg(A, "not a vector")
    with pytest.raises(xgpu.DTypeError):
        xgpu.solvers.cg(A, b, M=object())
    with pytest.raises(xgpu.InvalidArgument) as e:
        xgpu.solvers.cg(A, b, M="ilu")
    assert isinstance(e.value, ValueError)
    # Matrices multigrid refuses, before any work.
    bad = a.tolil()
    bad[3, 3] = 0
    with pytest.raises(xgpu.InvalidArgument, match="diagonal"):
        xgpu.amg.smoothed_aggregation_solver(bad.tocsr(), context=ctx)
    bad = a.copy()
    bad.data[5] = np.nan
    with pytest.raises(xgpu.InvalidArgument, match="NaN"):
        xgpu.amg.smoothed_aggregation_solver(bad, context=ctx)
    with pytest.raises(xgpu.ShapeError):
        xgpu.amg.smoothed_aggregation_solver(sp.random(5, 6, 0.5, format="csr"), context=ctx)
    with pytest.raises(TypeError):
        xgpu.amg.smoothed_aggregation_solver(np.eye(4))
    with pytest.raises(xgpu.DTypeError):
        xgpu.amg.smoothed_aggregation_solver(xgpu.sparse.csr_matrix(ctx, a.astype(np.complex128)))
    ml = xgpu.amg.smoothed_aggregation_solver(A)
    with pytest.raises(xgpu.InvalidArgument, match="pattern"):
        ml.refresh(xgpu.sparse.csr_matrix(ctx, poisson(11)))
