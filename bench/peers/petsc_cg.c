/* petsc-cg: PETSc's CG (KSPCG, f64) on the 2-D 5-point Poisson matrix N x N (rows in natural
 * order, 4 on the diagonal, -1 for each neighbour, Dirichlet: the matrix examples/poisson builds)
 * as an MPIAIJ matrix split by rows over the ranks, the peer of `mpiexec -n P poisson --2d N
 * --solver cg` and of `solve-bench --methods amg` on the same machine. Built where CMake finds
 * PETSc (Debian: petsc-dev).
 *
 *   mpiexec -n P petsc-cg [N] [iterations] [solves]
 *     No preconditioner: N grid side (default 1024); iterations per timed solve (default 200, the
 *     tolerance 0 so that every solve runs them all); solves: timed solves after a warm-up one
 *     (default 3). Prints the median time per iteration (wall clock around KSPSolve, the slowest
 *     rank's).
 *   mpiexec -n P petsc-cg N gamg [solves]
 *     Time to solution with PCGAMG (PETSc's smoothed aggregation, its defaults): from x = 0 and
 *     b = 1 to a relative unpreconditioned residual of 1e-8, the hierarchy built anew each solve.
 *     Prints the median solve's setup, solve and total seconds and its iterations. */
#include <petscksp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* Time to solution with GAMG: a new KSP each solve, so that each builds its hierarchy. */
static PetscErrorCode gamg(Mat a, Vec b, Vec x, PetscInt n, int solves) {
    double setup[64], total[64];
    PetscInt its[64];
    if (solves < 1 || solves > 64) solves = 3;
    for (int s = -1; s < solves; ++s) {
        KSP ksp;
        PC pc;
        PetscCall(VecSet(x, 0.0));
        PetscCall(MPI_Barrier(PETSC_COMM_WORLD));
        const double t0 = MPI_Wtime();
        PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
        PetscCall(KSPSetOperators(ksp, a, a));
        PetscCall(KSPSetType(ksp, KSPCG));
        PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
        PetscCall(KSPGetPC(ksp, &pc));
        PetscCall(PCSetType(pc, PCGAMG));
        PetscCall(KSPSetTolerances(ksp, 1e-8, 0.0, PETSC_DEFAULT, 1000));
        PetscCall(KSPSetFromOptions(ksp));
        PetscCall(KSPSetUp(ksp));
        PetscCall(PCSetUp(pc));
        const double t1 = MPI_Wtime();
        PetscCall(KSPSolve(ksp, b, x));
        double t[2] = {t1 - t0, MPI_Wtime() - t0};
        PetscCall(MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
        PetscInt it;
        PetscCall(KSPGetIterationNumber(ksp, &it));
        KSPConvergedReason reason;
        PetscCall(KSPGetConvergedReason(ksp, &reason));
        if (reason <= 0)
            PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc-cg: GAMG did not converge (%d)\n", (int)reason));
        if (s >= 0) setup[s] = t[0], total[s] = t[1], its[s] = it;
        PetscCall(KSPDestroy(&ksp));
    }
    int size, median = 0;
    PetscCall(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    for (int s = 0; s < solves; ++s) { /* the median total's solve */
        int below = 0;
        for (int k = 0; k < solves; ++k)
            below += total[k] < total[s] || (total[k] == total[s] && k < s);
        if (below == solves / 2) median = s;
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "petsc-cg: PETSc %d.%d CG + GAMG, 2-D Poisson %d^2 on %d ranks, rtol 1e-8: %d iterations, "
                          "setup %.4f s, solve %.4f s, total %.4f s (median of %d)\n",
                          PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, (int)n, size, (int)its[median], setup[median],
                          total[median] - setup[median], total[median], solves));
    return 0;
}

int main(int argc, char** argv) {
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    const int use_gamg = argc > 2 && strcmp(argv[2], "gamg") == 0;
    const PetscInt n = argc > 1 ? atoi(argv[1]) : 1024, iterations = argc > 2 && !use_gamg ? atoi(argv[2]) : 200;
    const int solves = argc > 3 ? atoi(argv[3]) : 3;
    const PetscInt rows = n * n;
    Mat a;
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, rows, rows, 5, NULL, 2, NULL, &a));
    PetscInt first, last;
    PetscCall(MatGetOwnershipRange(a, &first, &last));
    for (PetscInt i = first; i < last; ++i) {
        const PetscInt x = i % n, y = i / n;
        if (y > 0) PetscCall(MatSetValue(a, i, i - n, -1.0, INSERT_VALUES));
        if (x > 0) PetscCall(MatSetValue(a, i, i - 1, -1.0, INSERT_VALUES));
        PetscCall(MatSetValue(a, i, i, 4.0, INSERT_VALUES));
        if (x + 1 < n) PetscCall(MatSetValue(a, i, i + 1, -1.0, INSERT_VALUES));
        if (y + 1 < n) PetscCall(MatSetValue(a, i, i + n, -1.0, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY));
    Vec b, x;
    PetscCall(MatCreateVecs(a, &x, &b));
    PetscCall(VecSet(b, 1.0));
    if (use_gamg) {
        PetscCall(gamg(a, b, x, n, solves));
        PetscCall(VecDestroy(&x));
        PetscCall(VecDestroy(&b));
        PetscCall(MatDestroy(&a));
        PetscCall(PetscFinalize());
        return 0;
    }
    KSP ksp;
    PC pc;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, a, a));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCNONE));
    PetscCall(KSPSetTolerances(ksp, 0.0, 0.0, PETSC_DEFAULT, iterations));
    PetscCall(KSPSetFromOptions(ksp));
    double* ms = malloc(sizeof(double) * (size_t)(solves > 0 ? solves : 1));
    for (int s = -1; s < solves; ++s) {
        PetscCall(VecSet(x, 0.0));
        PetscCall(MPI_Barrier(PETSC_COMM_WORLD));
        const double t0 = MPI_Wtime();
        PetscCall(KSPSolve(ksp, b, x));
        double t = MPI_Wtime() - t0;
        PetscCall(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
        PetscInt its;
        PetscCall(KSPGetIterationNumber(ksp, &its));
        if (s >= 0) ms[s] = 1e3 * t / (double)(its > 0 ? its : 1);
    }
    int size;
    PetscCall(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (solves > 0) {
        qsort(ms, (size_t)solves, sizeof(double), compare);
        PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                              "petsc-cg: PETSc %d.%d KSPCG, no preconditioner, 2-D Poisson %d^2 on %d ranks: %.4f ms "
                              "per iteration (median of %d solves of %d iterations; %.4f .. %.4f)\n",
                              PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, (int)n, size, ms[solves / 2], solves,
                              (int)iterations, ms[0], ms[solves - 1]));
    }
    free(ms);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&a));
    PetscCall(PetscFinalize());
    return 0;
}
