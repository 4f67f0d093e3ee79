/* xgpu Krylov solvers: what the solver programs (cg.kernel, pipecg.kernel, bicgstab.kernel) share,
 * filled by core/src/solver/krylov.cpp: the value type, the work-group size, the loop shape
 * (a contiguous chunk per work-item on CPUs, a grid-stride loop on GPUs, as the reductions), the
 * preconditioner's kind (0: none; 1: Jacobi, a multiplication by the inverse diagonal fused into
 * the kernels; 2: an operator the solver applies between the kernels) and the state's layout.
 *
 * The state is one buffer: KS_SLOTS values (alpha, rho, ... and the last squared residual), then
 * KF_FLAGS int32 flags (the status and the iteration it was set in). Each kernel first reads the
 * status, once per work-group so that the whole group agrees, and returns when the solve has
 * stopped: iterations queued behind convergence cost a launch each and nothing else.
 *
 * Dot products: each work-group writes its partial sums to partial[k * groups + group]; the kernel
 * that needs the totals sums all partials again in each of its work-groups (the same order in
 * every group, hence the same bits), so no launch goes to a second stage and only work-group 0
 * writes the state.
 *
 * CG's vectors and its two blocks of partial sums lie in one buffer, the workspace `ws`, at the
 * offsets (in values) that KrylovVectors names: the kernels take the workspace once and reach each
 * vector by name (core/src/solver/krylov.hpp's Workspace says why, and its Vectors has the same
 * fields in the same order). A method leaves the vectors it does not have at 0. */
typedef ${value} T;
typedef struct {
    uint64_t r, p, q, z, w, s, u;
    uint64_t sums[2];
} KrylovVectors;
#define KWG ${wg}
#define K_CHUNKED ${chunked}
#define K_PRECOND ${precond}
${slots}
#define K_FLAGS(s) ((XGPU_GLOBAL int32_t*)((s) + KS_SLOTS))
/* NaN or an infinity (v - v is NaN for both, and NaN differs from itself). */
#define K_NONFINITE(v) (((v) - (v)) != ((v) - (v)))
#define K_LEADER (XGPU_GROUP_ID(0) == 0 && lid == 0)

/* The local memory every kernel uses, its work-item index, and the early exit. */
#define K_BEGIN(s)                                   \
    XGPU_LOCAL T scratch[3 * KWG];                   \
    XGPU_LOCAL int32_t k_stop;                       \
    const uint lid = (uint)XGPU_LOCAL_ID(0);         \
    if (lid == 0) k_stop = K_FLAGS(s)[KF_STATUS];    \
    XGPU_BARRIER();                                  \
    if (k_stop) return;

/* The elements of this work-item: n elements over the launch, in chunks of `chunk` or strided. */
#if K_CHUNKED
#define K_FOR(j)                                                                  \
    const uint64_t k_first = ((uint64_t)XGPU_GROUP_ID(0) * KWG + lid) * chunk;   \
    const uint64_t k_last = k_first + chunk < n ? k_first + chunk : n;           \
    for (uint64_t j = k_first; j < k_last; ++j)
#else
#define K_FOR(j)                                                                  \
    (void)chunk;                                                                  \
    for (uint64_t j = (uint64_t)XGPU_GROUP_ID(0) * KWG + lid; j < n; j += (uint64_t)XGPU_NUM_GROUPS(0) * KWG)
#endif

/* Sums v[0 .. m) over the work-group; every work-item gets the totals back in v. */
XGPU_DEVICE_FN void k_group_sum(XGPU_LOCAL_PTR(T) scratch, const uint lid, T* v, const int m) {
    for (int k = 0; k < m; ++k) scratch[k * KWG + lid] = v[k];
    XGPU_BARRIER();
    for (uint h = KWG / 2; h > 0; h >>= 1) {
        if (lid < h)
            for (int k = 0; k < m; ++k) scratch[k * KWG + lid] += scratch[k * KWG + lid + h];
        XGPU_BARRIER();
    }
    for (int k = 0; k < m; ++k) v[k] = scratch[k * KWG];
    XGPU_BARRIER();
}

/* This work-group's partial sums of v[0 .. m) into rows 0 .. m-1 of `partial`. */
XGPU_DEVICE_FN void k_partials(XGPU_GLOBAL T* partial, XGPU_LOCAL_PTR(T) scratch, const uint lid, T* v,
                               const int m) {
    k_group_sum(scratch, lid, v, m);
    const uint64_t groups = XGPU_NUM_GROUPS(0);
    if (lid == 0)
        for (int k = 0; k < m; ++k) partial[k * groups + XGPU_GROUP_ID(0)] = v[k];
}

/* The totals of rows 0 .. m-1 of `partial` (`groups` partials each) in v, in every work-item. */
XGPU_DEVICE_FN void k_totals(XGPU_GLOBAL const T* partial, const uint64_t groups, XGPU_LOCAL_PTR(T) scratch,
                             const uint lid, T* v, const int m) {
    for (int k = 0; k < m; ++k) {
        v[k] = (T)0;
        for (uint64_t g = lid; g < groups; g += KWG) v[k] += partial[k * groups + g];
    }
    k_group_sum(scratch, lid, v, m);
}

/* The totals of rows 0 .. m-1 (any m) of `partial` into out[0 .. m), written by work-item 0; three
 * rows a pass. */
XGPU_DEVICE_FN void k_row_totals(XGPU_GLOBAL const T* partial, const uint64_t groups, XGPU_LOCAL_PTR(T) scratch,
                                 const uint lid, XGPU_GLOBAL T* out, const int m) {
    for (int k = 0; k < m; k += 3) {
        const int c = m - k < 3 ? m - k : 3;
        T v[3];
        k_totals(partial + (uint64_t)k * groups, groups, scratch, lid, v, c);
        if (lid == 0)
            for (int q = 0; q < c; ++q) out[k + q] = v[q];
    }
}

/* Partial sums of a.b into `partial`: three arrays, each a buffer and an offset in values. */
XGPU_KERNEL void xgpu_krylov_dot(const uint64_t n, const uint64_t chunk, XGPU_GLOBAL T* s, XGPU_GLOBAL T* partial,
                                 const int64_t partial_o, XGPU_GLOBAL const T* a_base, const int64_t a_o,
                                 XGPU_GLOBAL const T* b_base, const int64_t b_o) {
    K_BEGIN(s)
    XGPU_GLOBAL const T* a = a_base + a_o;
    XGPU_GLOBAL const T* b = b_base + b_o;
    T v[1] = {(T)0};
    K_FOR(j) v[0] += a[j] * b[j];
    k_partials(partial + partial_o, scratch, lid, v, 1);
}

/* For a solve over several processes, one work-group each: the totals of rows 0 .. m-1 (any m) of
 * the partial sums at base + o into `out`, then (once the host has summed them over the processes)
 * those rows made [in[k], 0, .., 0], so that every kernel that sums them reads the global sums
 * (s, the state, as every single-group launch of a solve takes it, unread). */
XGPU_KERNEL void xgpu_krylov_totals(XGPU_GLOBAL const T* s, XGPU_GLOBAL const T* base, const int64_t o,
                                    const uint64_t groups, const int32_t m, XGPU_GLOBAL T* out) {
    XGPU_LOCAL T scratch[3 * KWG];
    const uint lid = (uint)XGPU_LOCAL_ID(0);
    k_row_totals(base + o, groups, scratch, lid, out, m);
}
XGPU_KERNEL void xgpu_krylov_spread(XGPU_GLOBAL const T* s, XGPU_GLOBAL T* base, const int64_t o,
                                    const uint64_t groups, const int32_t m, XGPU_GLOBAL const T* in) {
    const uint lid = (uint)XGPU_LOCAL_ID(0);
    for (int k = 0; k < m; ++k)
        for (uint64_t g = lid; g < groups; g += KWG) base[o + (uint64_t)k * groups + g] = g == 0 ? in[k] : (T)0;
}

/* One work-group: the totals of rows 0 .. m-1 of `partial` into the state's slots slot0..slot2. */
XGPU_KERNEL void xgpu_krylov_gather(XGPU_GLOBAL T* s, XGPU_GLOBAL const T* partial, const uint64_t groups,
                                    const int32_t m, const int32_t slot0, const int32_t slot1, const int32_t slot2) {
    XGPU_LOCAL T scratch[3 * KWG];
    const uint lid = (uint)XGPU_LOCAL_ID(0);
    T v[3];
    k_totals(partial, groups, scratch, lid, v, m);
    if (lid == 0) {
        s[slot0] = v[0];
        if (m > 1) s[slot1] = v[1];
        if (m > 2) s[slot2] = v[2];
    }
}
