// The device kernels of the DG Maxwell operator, in the xgpu dialect: one source, compiled per
// order and precision by xgpu::KernelTemplate with
//   T          float or double
//   NP, NFP    nodes per element (N+1)(N+2)/2 and per face N+1
//   EPB        elements per work-group (the work-group is EPB * NP work-items, one per node)
//   NPW, VEPB  the volume kernel's nodes per work-item and elements per work-group (its work-group
//              is VEPB * ceil(NP / NPW) work-items)
//   VB         0: the volume kernel above; B >= 1 (with NPW 1): each work-item keeps its node's
//              rows of Dr and Ds in registers and computes that node in B batches of VEPB
//              elements (a work-group takes B * VEPB consecutive elements)
//   VEW        1: the volume kernel with Dr and Ds as constants written into the source (c_dr,
//              c_ds: see constant_matrices), NPW nodes of an element a work-item (NPW = NP: one
//              element a work-item, VEPB work-items a group; NPW >= NP / 4), VB batches of
//              VEPB elements a group (0: one, staged without registers). 2: the tiled volume
//              kernel, each work-item NPW nodes of EPW elements (VEPB / EPW * ceil(NP / NPW)
//              work-items a group), VB 0. 3: on the
//              tensor cores (NVIDIA, compute capability 8.0 and later, f64, either backend), a
//              warp per 8 elements, VB batches
//   SB         0: the surface kernel reads LIFT from memory; B >= 1: each work-item keeps its
//              node's row of LIFT in registers and takes B batches of EPB elements
//   SV         1: the surface kernel reads the face fluxes back from local memory 16 bytes at a
//              time (TV: float4 or double2, TVN values); 0: one value at a time
//   MAT_LOCAL  1: Dr, Ds (or LIFT) are copied into local memory per work-group; 0: read from
//              global memory, where every work-group reads the same few kilobytes (the caches
//              hold them)
//
// Layout: a state is three blocks (Hx, Hy, Ez) of K * NP values, element-major with an element's
// nodes contiguous. Consecutive work-items take consecutive nodes of consecutive elements, so
// every load and store of a field is one contiguous run per work-group (coalesced). The operator
// matrices are stored transposed (column m of Dr is contiguous), so that at each step m of the
// matrix-vector loop the work-items of an element read NP consecutive entries, not a stride of NP.
// Each work-group first stages its elements' fields (volume) or face fluxes (surface) in local
// memory, since every node of an element reads all of them.
#include "device.hpp"

namespace dg {

const char* const maxwell_kernel_source = R"(
#define NFN (3 * NFP)
#define GROUP (EPB * NP)
#if MAT_LOCAL
#define MAT(local_copy, global_copy) local_copy
#else
#define MAT(local_copy, global_copy) global_copy
#endif

/* rhs = the volume terms: Hx' = -dEz/dy, Hy' = dEz/dx, Ez' = dHy/dx - dHx/dy, with
 * d/dx = rx d/dr + sx d/ds and d/dy = ry d/dr + sy d/ds (vgeo: rx, sx, ry, sy per element).
 * Every form takes Ez' as Dr P + Ds Q with P = rx Hy - ry Hx and Q = sx Hy - sy Hx (the factors
 * are constant on a straight-sided element): four products of a matrix and a vector an element,
 * not six; forms 0, 2, 3 and 4 and the rows-in-registers kernel stage P, Q and Ez where they
 * staged Hx, Hy and Ez, form 1 forms P and Q in registers from its staged Hx and Hy.
 * Form 0: each work-item computes NPW nodes of one element, n = t, t + TPE, ... (TPE work-items per
 * element): a field value read from local memory then serves NPW nodes, so a step of the loop
 * over m costs 3 + 2 NPW loads for 4 NPW multiply-adds instead of 5 loads for 4. */
#define TPE ((NP + NPW - 1) / NPW)
#define VGROUP (VEPB * TPE)
#if VEW == 1
/* One element per work-item, the matrices as constants. A work-group stages its VEPB elements'
 * fields in local memory (coalesced), then each work-item copies its element's values of one or
 * two fields into registers and, node by node, multiplies them by the constant rows of Dr and Ds
 * (c_dr, c_ds, written into the source): with the loops unrolled the compiler folds every matrix
 * entry into the multiply-add that uses it (an immediate operand in single precision), so a step
 * costs no load at all. Ez' is taken as Dr (rx Hy - ry Hx) + Ds (sx Hy - sy Hx) (the factors are
 * constant on an element), so an element costs 4 NP^2 multiply-adds (not 6) against 3 NP local
 * loads. The results go back into the work-item's own slots of local memory (its values are in registers by then)
 * and leave coalesced. Local rows are NPP = NP | 1 apart: an odd stride, so the work-items of a
 * SIMD group reading the same node of different elements hit different banks. */
#define NPP (NP | 1)
/* Parts: with NPW < NP an element's nodes are split among PARTS work-items, part p computing
 * nodes p NPW .. (p + 1) NPW - 1; work-item l is part l / VEPB of element slot l % VEPB, so that
 * with VEPB a multiple of the SIMD width each part is its own warps (no divergence) and the
 * work-group has PARTS times the work-items (more in flight where the mesh gives few elements a
 * compute unit). Every part reads all of its element's values, so the results are written back
 * into local memory only after a barrier (parts of one element read what another overwrites). */
#define PARTS ((NP + NPW - 1) / NPW)
#define VG1 (VEPB * PARTS)
/* The two combinations of the element whose staged values start at b, into registers ca and cb. */
#define VOL1_CURL(b)                                                                             \
    T ca[NP], cb[NP];                                                                            \
    _Pragma("unroll") for (int32_t j = 0; j < NP; ++j) {                                         \
        const T x = s_hx[(b) + j], y = s_hy[(b) + j];                                            \
        ca[j] = rx * y - ry * x;                                                                 \
        cb[j] = sx * y - sy * x;                                                                 \
    }
/* Ez' of nodes LO..HI-1 as Dr (rx Hy - ry Hx) + Ds (sx Hy - sy Hx), from those two combinations
   (ca, cb) in registers, into s_hx: rx, sx, ry, sy are constant on an element, so the curl needs
   two products of a matrix and a vector instead of four. */
#define VOL1_A(LO, HI)                                                                           \
    _Pragma("unroll") for (int32_t i = (LO); i < (HI); ++i) {                                    \
        T dr_c = (T)0, ds_c = (T)0;                                                              \
        _Pragma("unroll") for (int32_t j = 0; j < NP; ++j) {                                     \
            dr_c += c_dr[i * NP + j] * ca[j];                                                    \
            ds_c += c_ds[i * NP + j] * cb[j];                                                    \
        }                                                                                        \
        s_hx[b + i] = dr_c + ds_c; /* Ez' */                                                     \
    }
/* Hx' and Hy' of nodes LO..HI-1, from ez in registers, into s_hy and s_ez. */
#define VOL1_B(LO, HI)                                                                           \
    _Pragma("unroll") for (int32_t i = (LO); i < (HI); ++i) {                                    \
        T dr_ez = (T)0, ds_ez = (T)0;                                                            \
        _Pragma("unroll") for (int32_t j = 0; j < NP; ++j) {                                     \
            dr_ez += c_dr[i * NP + j] * ez[j];                                                   \
            ds_ez += c_ds[i * NP + j] * ez[j];                                                   \
        }                                                                                        \
        s_hy[b + i] = -(ry * dr_ez + sy * ds_ez); /* Hx' */                                      \
        s_ez[b + i] = rx * dr_ez + sx * ds_ez;    /* Hy' */                                      \
    }
/* Part P's nodes (bounds known to the compiler, so that the loops unroll and fold the entries). */
#define VOL1_LO(P) ((P) * NPW)
#define VOL1_HI(P) ((P) * NPW + NPW < NP ? (P) * NPW + NPW : NP)
#if PARTS > 4
#error "form 1 takes at most 4 parts an element: NPW >= NP / 4"
#endif
/* Parts past PARTS have empty loops (LO >= NP), so their branches compile to nothing. */
#define VOL1_PARTS(PHASE)                                                                        \
    if (PARTS == 1 || part == 0) { PHASE(VOL1_LO(0), VOL1_HI(0)) }                               \
    else if (part == 1) { PHASE(VOL1_LO(1), VOL1_HI(1)) }                                        \
    else if (part == 2) { PHASE(VOL1_LO(2), VOL1_HI(2)) }                                        \
    else { PHASE(VOL1_LO(3), VOL1_HI(3)) }
XGPU_KERNEL void dg_volume(const int32_t K, const int32_t KNP, XGPU_GLOBAL const T* XGPU_RESTRICT drT,
                           XGPU_GLOBAL const T* XGPU_RESTRICT dsT, XGPU_GLOBAL const T* XGPU_RESTRICT vgeo,
                           XGPU_GLOBAL const T* XGPU_RESTRICT q, XGPU_GLOBAL T* XGPU_RESTRICT rhs) {
    XGPU_LOCAL T s_hx[VEPB * NPP], s_hy[VEPB * NPP], s_ez[VEPB * NPP];
    const int32_t l = (int32_t)XGPU_LOCAL_ID(0);
    (void)drT; /* the tables c_dr, c_ds instead */
    (void)dsT;
#if VB
    /* VB batches of VEPB elements a group: each work-item loads its share of the next batch's
       fields into registers (PF1 values a field) before it computes the current batch, so that
       those loads are in flight while the multiply-adds run; they reach local memory after the
       current batch has left (each work-item rewrites the slots it wrote out). */
#define PF1 ((VEPB * NP + VG1 - 1) / VG1)
    T pf[3][PF1];
#define LOAD1(kb)                                                                                \
    {                                                                                            \
        const int32_t in_ = (K - (kb) < VEPB ? K - (kb) : VEPB) * NP;                            \
        _Pragma("unroll") for (int32_t p = 0; p < PF1; ++p) {                                    \
            const int32_t i = l + p * VG1;                                                       \
            const int inside_ = i < in_;                                                         \
            pf[0][p] = inside_ ? q[(kb) * NP + i] : (T)0;                                        \
            pf[1][p] = inside_ ? q[KNP + (kb) * NP + i] : (T)0;                                  \
            pf[2][p] = inside_ ? q[2 * KNP + (kb) * NP + i] : (T)0;                              \
        }                                                                                        \
    }
    LOAD1((int32_t)XGPU_GROUP_ID(0) * VB * VEPB)
    for (int32_t batch = 0; batch < VB; ++batch) {
        const int32_t k0 = ((int32_t)XGPU_GROUP_ID(0) * VB + batch) * VEPB;
        if (k0 >= K) break; /* the same for the whole work-group */
#pragma unroll
        for (int32_t p = 0; p < PF1; ++p) {
            const int32_t i = l + p * VG1;
            if (i < VEPB * NP) {
                const int32_t s = i + (i / NP) * (NPP - NP);
                s_hx[s] = pf[0][p];
                s_hy[s] = pf[1][p];
                s_ez[s] = pf[2][p];
            }
        }
        XGPU_BARRIER();
        if (batch + 1 < VB && k0 + VEPB < K) LOAD1(k0 + VEPB)
#else
    {
        const int32_t k0 = (int32_t)XGPU_GROUP_ID(0) * VEPB;
#endif
#if PARTS == 1
    const int32_t k = k0 + l, part = 0;
#else
    const int32_t k = k0 + l % VEPB, part = l / VEPB;
#endif
    const int32_t first = k0 * NP, count = (K - k0 < VEPB ? K - k0 : VEPB) * NP;
#if !VB
    for (int32_t i = l; i < count; i += VG1) {
        const int32_t s = i + (i / NP) * (NPP - NP);
        s_hx[s] = q[first + i];
        s_hy[s] = q[KNP + first + i];
        s_ez[s] = q[2 * KNP + first + i];
    }
    XGPU_BARRIER();
#endif
#if PARTS == 1
    if (k < K) {
        const T rx = vgeo[4 * k], sx = vgeo[4 * k + 1], ry = vgeo[4 * k + 2], sy = vgeo[4 * k + 3];
        const int32_t b = l * NPP;
        {
            VOL1_CURL(b)
            VOL1_PARTS(VOL1_A)
        }
        {
            T ez[NP];
#pragma unroll
            for (int32_t j = 0; j < NP; ++j)
                ez[j] = s_ez[b + j];
            VOL1_PARTS(VOL1_B)
        }
    }
#else
    /* Every work-item reaches the barriers; those past the mesh compute nothing. */
    const int inside = k < K;
    const int32_t kk = inside ? k : K - 1, b = (l % VEPB) * NPP;
    const T rx = vgeo[4 * kk], sx = vgeo[4 * kk + 1], ry = vgeo[4 * kk + 2], sy = vgeo[4 * kk + 3];
    {
        VOL1_CURL(b)
        XGPU_BARRIER(); /* every part has its values of hx before s_hx is overwritten */
        if (inside) {
            VOL1_PARTS(VOL1_A)
        }
    }
    {
        T ez[NP];
#pragma unroll
        for (int32_t j = 0; j < NP; ++j)
            ez[j] = s_ez[b + j];
        XGPU_BARRIER(); /* likewise for ez and s_ez */
        if (inside) {
            VOL1_PARTS(VOL1_B)
        }
    }
#endif
    XGPU_BARRIER();
    for (int32_t i = l; i < count; i += VG1) {
        const int32_t s = i + (i / NP) * (NPP - NP);
        rhs[first + i] = s_hy[s];
        rhs[KNP + first + i] = s_ez[s];
        rhs[2 * KNP + first + i] = s_hx[s];
    }
    } /* the loop over batches (VB), or the one batch's block */
}
#undef LOAD1
#undef PF1
#undef VOL1_PARTS
#undef VOL1_HI
#undef VOL1_LO
#undef VOL1_B
#undef VOL1_A
#undef VOL1_CURL
#undef VG1
#undef PARTS
#elif VEW == 2
/* Tiled, as matrix products of Dr and Ds (NP x NP) and the group's staged P, Q and Ez (NP x
 * VEPB each): each work-item computes NPW nodes of EPW elements, Dr P, Ds Q, Dr Ez and Ds Ez (4 NPW EPW
 * sums in registers). A step j of the loop loads NPW entries of each matrix (the same for all
 * work-items of a node group: the caches broadcast them) and 3 EPW field values from local memory
 * for 4 NPW EPW multiply-adds. Work-item l takes element slots EPW (l % EG) + u and nodes
 * NPW (l / EG) + t, so a SIMD group spans many elements and few node groups. P, Q and Ez are
 * staged node-major (row j holds node j of every element, EP = VEPB + 2 apart against bank
 * conflicts), the results element-major (NPP apart) in the same local memory, then leave
 * coalesced. */
#define NPP (NP | 1)
#define EG (VEPB / EPW)
#define NG ((NP + NPW - 1) / NPW)
#define EP (VEPB + 2)
#define SN (NP * EP > VEPB * NPP ? NP * EP : VEPB * NPP)
XGPU_KERNEL void dg_volume(const int32_t K, const int32_t KNP, XGPU_GLOBAL const T* XGPU_RESTRICT drT,
                           XGPU_GLOBAL const T* XGPU_RESTRICT dsT, XGPU_GLOBAL const T* XGPU_RESTRICT vgeo,
                           XGPU_GLOBAL const T* XGPU_RESTRICT q, XGPU_GLOBAL T* XGPU_RESTRICT rhs) {
    XGPU_LOCAL T s_u[3 * SN];
    const int32_t l = (int32_t)XGPU_LOCAL_ID(0), eg = l % EG, ng = l / EG;
    const int32_t k0 = (int32_t)XGPU_GROUP_ID(0) * VEPB, ne = K - k0 < VEPB ? K - k0 : VEPB;
    const int32_t first = k0 * NP, count = ne * NP;
    for (int32_t g = l; g < VEPB * NP; g += EG * NG) {
        const int32_t e = g / NP, j = g - e * NP, s = j * EP + e;
        if (g < count) {
            const T x = q[first + g], y = q[KNP + first + g];
            s_u[s] = vgeo[4 * (k0 + e)] * y - vgeo[4 * (k0 + e) + 2] * x;
            s_u[SN + s] = vgeo[4 * (k0 + e) + 1] * y - vgeo[4 * (k0 + e) + 3] * x;
            s_u[2 * SN + s] = q[2 * KNP + first + g];
        } else { /* the last group's missing elements: zeros */
            s_u[s] = s_u[SN + s] = s_u[2 * SN + s] = (T)0;
        }
    }
    XGPU_BARRIER();
    T dr_p[NPW * EPW], ds_q[NPW * EPW], dr_ez[NPW * EPW], ds_ez[NPW * EPW];
    int32_t col[NPW];
#pragma unroll
    for (int32_t t = 0; t < NPW; ++t) {
        const int32_t n = ng * NPW + t;
        col[t] = n < NP ? n : NP - 1; /* spare nodes of the last node group: any column */
    }
#pragma unroll
    for (int32_t c = 0; c < NPW * EPW; ++c)
        dr_p[c] = ds_q[c] = dr_ez[c] = ds_ez[c] = (T)0;
#pragma unroll
    for (int32_t j = 0; j < NP; ++j) {
        T a[NPW], d[NPW], pu[EPW], qu[EPW], ez[EPW];
#pragma unroll
        for (int32_t t = 0; t < NPW; ++t) {
            a[t] = drT[j * NP + col[t]];
            d[t] = dsT[j * NP + col[t]];
        }
#pragma unroll
        for (int32_t u = 0; u < EPW; ++u) {
            const int32_t s = j * EP + eg * EPW + u;
            pu[u] = s_u[s];
            qu[u] = s_u[SN + s];
            ez[u] = s_u[2 * SN + s];
        }
#pragma unroll
        for (int32_t t = 0; t < NPW; ++t)
#pragma unroll
            for (int32_t u = 0; u < EPW; ++u) {
                const int32_t c = t * EPW + u;
                dr_p[c] += a[t] * pu[u];
                ds_q[c] += d[t] * qu[u];
                dr_ez[c] += a[t] * ez[u];
                ds_ez[c] += d[t] * ez[u];
            }
    }
    XGPU_BARRIER(); /* every work-item is done reading the staged fields */
#pragma unroll
    for (int32_t u = 0; u < EPW; ++u) {
        const int32_t e = eg * EPW + u, k = k0 + e;
        if (e < ne) {
            const T rx = vgeo[4 * k], sx = vgeo[4 * k + 1], ry = vgeo[4 * k + 2], sy = vgeo[4 * k + 3];
#pragma unroll
            for (int32_t t = 0; t < NPW; ++t) {
                const int32_t n = ng * NPW + t, c = t * EPW + u, s = e * NPP + n;
                if (n < NP) {
                    s_u[s] = -(ry * dr_ez[c] + sy * ds_ez[c]);
                    s_u[SN + s] = rx * dr_ez[c] + sx * ds_ez[c];
                    s_u[2 * SN + s] = dr_p[c] + ds_q[c];
                }
            }
        }
    }
    XGPU_BARRIER();
    for (int32_t g = l; g < count; g += EG * NG) {
        const int32_t e = g / NP, s = g + e * (NPP - NP);
        rhs[first + g] = s_u[s];
        rhs[KNP + first + g] = s_u[SN + s];
        rhs[2 * KNP + first + g] = s_u[2 * SN + s];
    }
}
#elif VEW == 3 || VEW == 4
/* On the tensor cores (XGPU_HAS_MMA_F64: NVIDIA, compute capability 8.0 and later, f64; inline
 * PTX on either backend): each warp takes 8 elements
 * a batch (a work-group VEPB elements, VEPB / 8 warps, over VB batches) and computes Dr P, Ds Q,
 * Dr Ez and Ds Ez, where P = rx Hy - ry Hx and Q = sx Hy - sy Hx (so that Ez' = Dr P + Ds Q: four
 * products, not six, the factors being constant on an element; the warp stages its elements'
 * factors in local memory, one coalesced load a batch), as matrix products whose B operand holds
 * the 8 elements' staged values: two
 * node tiles of 8 rows at a time (16 x 8 products), steps of 8 columns where the device has the
 * m16n8k8 product (sm_90, XGPU_HAS_MMA_F64_M16; a last step of 4 where KS is odd), else 8 x 8 x 4
 * products tile by tile. drT holds Dr and Ds in the lanes' order of the 8 x 4 A operand,
 * zero-padded to whole tiles (DeviceMaxwell's fragments, made on the host): lane l's value of
 * tile (nt, ks) of matrix w at ((nt KS + ks) 2 + w) 32 + l, one coalesced load; the larger
 * products' A operands are two or four of these. The fields are staged per warp in local memory,
 * element-major, rows US apart (US = 4 mod 16: the B loads of a half-warp hit 16 different banks),
 * the padding nodes zero, and B is read from there at each step (registers held across the
 * steps cost more than the loads: fewer warps in flight). Each warp works alone (warp barriers
 * only) and loads its next batch's fields into registers (PF values a field a lane) before it
 * computes the current one, so that with VB > 1 one batch's loads are in flight while the tensor
 * cores work on the previous. Where NT is odd the last pair computes its first tile twice and
 * stores it once. */
#define NT ((NP + 7) / 8)
#define KS ((NP + 3) / 4)
#if VEW == 4
/* Form 4: the same in single precision on the TF32 tensor cores (XGPU_HAS_MMA_TF32), each
 * product as three: A = Ah + Al and B = Bh + Bl split into TF32 parts (10-bit mantissas), and
 * A B ~ Al Bh + Ah Bl + Ah Bh (Al Bl dropped, 2^-22 relative), about single precision's own
 * rounding. drT holds the fragments' bits: the Ah parts as above, then the Al parts. Rows of
 * floats US = 4 mod 32 apart (conflict-free B loads). */
#define US (((4 * KS + 27) / 32) * 32 + 4)
#define AFRAGS (NT * KS * 2 * 32)
#else
#define US (((4 * KS + 11) / 16) * 16 + 4)
#endif
#define WARPS (VEPB / 8)
#define PF ((8 * NP + 31) / 32)
#if VEW == 4
#define FRAG uint32_t
#else
#define FRAG T
#endif
XGPU_KERNEL void dg_volume(const int32_t K, const int32_t KNP, XGPU_GLOBAL const FRAG* XGPU_RESTRICT drT,
                           XGPU_GLOBAL const T* XGPU_RESTRICT dsT, XGPU_GLOBAL const T* XGPU_RESTRICT vgeo,
                           XGPU_GLOBAL const T* XGPU_RESTRICT q, XGPU_GLOBAL T* XGPU_RESTRICT rhs) {
    XGPU_LOCAL T s_u[WARPS * 24 * US], s_g[WARPS * 32];
    const int32_t l = (int32_t)XGPU_LOCAL_ID(0), w = l / 32, lane = l % 32, g = lane / 4, t = lane % 4;
    XGPU_LOCAL_PTR(T) u = s_u + w * 24 * US;
    XGPU_LOCAL_PTR(T) gw = s_g + w * 32; /* the batch's 8 elements' rx, sx, ry, sy */
    (void)dsT;
    for (int32_t i = lane; i < 24 * US; i += 32)
        u[i] = (T)0;
    /* The first element of this warp's batch b. */
#define K0(b) (((int32_t)XGPU_GROUP_ID(0) * VB + (b)) * VEPB + 8 * w)
    /* This lane's p-th values of the three fields of the batch starting at element kb, into pf;
       zero past the batch or past the mesh (in: the batch's values inside the mesh). */
#define LOAD_BATCH_VALUE(kb, in, p)                                                              \
    {                                                                                            \
        const int32_t i = lane + 32 * (p);                                                       \
        const int inside = i < 8 * NP && i < (in);                                               \
        pf[0][p] = inside ? q[(kb) * NP + i] : (T)0;                                             \
        pf[1][p] = inside ? q[KNP + (kb) * NP + i] : (T)0;                                       \
        pf[2][p] = inside ? q[2 * KNP + (kb) * NP + i] : (T)0;                                   \
    }
    /* Lane l's geometric factor of the batch starting at element kb: factor l % 4 of its element
       l / 4. */
#define LOAD_BATCH_GEO(kb) pg = (kb) + lane / 4 < K ? vgeo[4 * (kb) + lane] : (T)0;
    T pf[3][PF], pg;
    {
        const int32_t k0 = K0(0), in = (K - k0) * NP;
#pragma unroll
        for (int32_t p = 0; p < PF; ++p) LOAD_BATCH_VALUE(k0, in, p)
        LOAD_BATCH_GEO(k0)
    }
    for (int32_t batch = 0; batch < VB; ++batch) {
        const int32_t k0 = K0(batch);
        if (k0 >= K) break; /* the same for the whole warp */
        const int32_t ne = K - k0 < 8 ? K - k0 : 8;
        XGPU_WARP_SYNC(); /* the previous batch's reads of u and gw are done */
        gw[lane] = pg;
        XGPU_WARP_SYNC();
        /* Staged: rx Hy - ry Hx and sx Hy - sy Hx (B of Dr and of Ds for Ez', the factors being
           constant on an element), and Ez. */
#pragma unroll
        for (int32_t p = 0; p < PF; ++p) {
            const int32_t i = lane + 32 * p;
            if (i < 8 * NP) {
                const int32_t e = i / NP, s = e * US + (i - e * NP);
                const T x = pf[0][p], y = pf[1][p];
                u[s] = gw[4 * e] * y - gw[4 * e + 2] * x;
                u[8 * US + s] = gw[4 * e + 1] * y - gw[4 * e + 3] * x;
                u[16 * US + s] = pf[2][p];
            }
        }
        XGPU_WARP_SYNC();
        if (batch + 1 < VB) { /* the next batch's fields, in flight while this one computes */
            const int32_t k1 = K0(batch + 1), in = (K - k1) * NP;
#pragma unroll
            for (int32_t p = 0; p < PF; ++p) LOAD_BATCH_VALUE(k1, in, p)
            LOAD_BATCH_GEO(k1)
        }
        T rx[2], sx[2], ry[2], sy[2];
#pragma unroll
        for (int32_t i = 0; i < 2; ++i) {
            const int32_t e = 2 * t + i;
            rx[i] = gw[4 * e];
            sx[i] = gw[4 * e + 1];
            ry[i] = gw[4 * e + 2];
            sy[i] = gw[4 * e + 3];
        }
/* B of column step ks for staged array f (0: rx Hy - ry Hx, 1: sx Hy - sy Hx, 2: Ez); A of tile nt,
   step ks, matrix m (0: Dr, 1: Ds). */
#define B_OF(f, ks) u[(f) * 8 * US + g * US + 4 * (ks) + t]
#define A_OF(nt, ks, m) drT[(((nt) * KS + (ks)) * 2 + (m)) * 32 + lane]
        /* c[m][0..1]: tile nt0's rows g, c[m][2..3]: tile nt0 + 1's (the 16 x 8 products' order);
           c[0] = Dr (rx Hy - ry Hx), c[1] = Ds (sx Hy - sy Hx), c[2] = Dr Ez, c[3] = Ds Ez: for
           matrix m, B is staged field m and field 2. */
#pragma unroll 1
        for (int32_t nt0 = 0; nt0 < NT; nt0 += 2) {
            T c[4][4];
#pragma unroll
            for (int32_t m = 0; m < 4; ++m)
                c[m][0] = c[m][1] = c[m][2] = c[m][3] = (T)0;
            const int32_t nt1 = nt0 + 1 < NT ? nt0 + 1 : nt0;
#if VEW == 4
#define AL_OF(nt, ks, m) drT[AFRAGS + (((nt) * KS + (ks)) * 2 + (m)) * 32 + lane]
/* b's TF32 parts. */
#define SPLIT(b, hi, lo)                                                                         \
    {                                                                                            \
        const float b_ = (b);                                                                    \
        hi = xgpu_tf32(b_);                                                                      \
        lo = xgpu_tf32(b_ - xgpu_tf32_value(hi));                                                \
    }
#pragma unroll
            for (int32_t ks = 0; ks + 1 < KS; ks += 2) {
                uint32_t bh[3][2], bl[3][2];
#pragma unroll
                for (int32_t f = 0; f < 3; ++f) {
                    SPLIT(B_OF(f, ks), bh[f][0], bl[f][0])
                    SPLIT(B_OF(f, ks + 1), bh[f][1], bl[f][1])
                }
#pragma unroll
                for (int32_t m = 0; m < 2; ++m) {
                    const uint32_t a0 = A_OF(nt0, ks, m), a1 = A_OF(nt1, ks, m), a2 = A_OF(nt0, ks + 1, m),
                                   a3 = A_OF(nt1, ks + 1, m);
                    const uint32_t l0 = AL_OF(nt0, ks, m), l1 = AL_OF(nt1, ks, m), l2 = AL_OF(nt0, ks + 1, m),
                                   l3 = AL_OF(nt1, ks + 1, m);
#pragma unroll
                    for (int32_t h = 0; h < 2; ++h) {
                        const int32_t f = h ? 2 : m;
                        xgpu_mma_m16n8k8_tf32(c[2 * h + m], l0, l1, l2, l3, bh[f][0], bh[f][1]);
                        xgpu_mma_m16n8k8_tf32(c[2 * h + m], a0, a1, a2, a3, bl[f][0], bl[f][1]);
                        xgpu_mma_m16n8k8_tf32(c[2 * h + m], a0, a1, a2, a3, bh[f][0], bh[f][1]);
                    }
                }
            }
#if KS % 2
            {
                uint32_t bh[3], bl[3];
#pragma unroll
                for (int32_t f = 0; f < 3; ++f)
                    SPLIT(B_OF(f, KS - 1), bh[f], bl[f])
#pragma unroll
                for (int32_t m = 0; m < 2; ++m) {
                    const uint32_t a0 = A_OF(nt0, KS - 1, m), a1 = A_OF(nt1, KS - 1, m);
                    const uint32_t l0 = AL_OF(nt0, KS - 1, m), l1 = AL_OF(nt1, KS - 1, m);
#pragma unroll
                    for (int32_t h = 0; h < 2; ++h) {
                        const int32_t f = h ? 2 : m;
                        xgpu_mma_m16n8k4_tf32(c[2 * h + m], l0, l1, bh[f]);
                        xgpu_mma_m16n8k4_tf32(c[2 * h + m], a0, a1, bl[f]);
                        xgpu_mma_m16n8k4_tf32(c[2 * h + m], a0, a1, bh[f]);
                    }
                }
            }
#endif
#undef SPLIT
#undef AL_OF
#elif defined(XGPU_HAS_MMA_F64_M16)
#pragma unroll
            for (int32_t ks = 0; ks + 1 < KS; ks += 2)
#pragma unroll
                for (int32_t m = 0; m < 2; ++m) {
                    const T a0 = A_OF(nt0, ks, m), a1 = A_OF(nt1, ks, m), a2 = A_OF(nt0, ks + 1, m),
                            a3 = A_OF(nt1, ks + 1, m);
#pragma unroll
                    for (int32_t h = 0; h < 2; ++h) {
                        const int32_t f = h ? 2 : m;
                        xgpu_mma_m16n8k8_f64(c[2 * h + m], a0, a1, a2, a3, B_OF(f, ks), B_OF(f, ks + 1));
                    }
                }
#if KS % 2
#pragma unroll
            for (int32_t m = 0; m < 2; ++m) {
                const T a0 = A_OF(nt0, KS - 1, m), a1 = A_OF(nt1, KS - 1, m);
#pragma unroll
                for (int32_t h = 0; h < 2; ++h)
                    xgpu_mma_m16n8k4_f64(c[2 * h + m], a0, a1, B_OF(h ? 2 : m, KS - 1));
            }
#endif
#else
#pragma unroll
            for (int32_t ks = 0; ks < KS; ++ks)
#pragma unroll
                for (int32_t m = 0; m < 2; ++m) {
                    const T a0 = A_OF(nt0, ks, m), a1 = A_OF(nt1, ks, m);
#pragma unroll
                    for (int32_t h = 0; h < 2; ++h) {
                        const T b = B_OF(h ? 2 : m, ks);
                        xgpu_mma_m8n8k4_f64(c[2 * h + m], a0, b);
                        xgpu_mma_m8n8k4_f64(c[2 * h + m] + 2, a1, b);
                    }
                }
#endif
#pragma unroll
            for (int32_t h = 0; h < 2; ++h) {
                const int32_t n = (nt0 + h) * 8 + g;
#pragma unroll
                for (int32_t i = 0; i < 2; ++i) {
                    const int32_t e = 2 * t + i, j = 2 * h + i;
                    if (nt0 + h < NT && n < NP && e < ne) {
                        const int32_t gi = (k0 + e) * NP + n;
                        rhs[gi] = -(ry[i] * c[2][j] + sy[i] * c[3][j]);
                        rhs[KNP + gi] = rx[i] * c[2][j] + sx[i] * c[3][j];
                        rhs[2 * KNP + gi] = c[0][j] + c[1][j];
                    }
                }
            }
        }
#undef A_OF
#undef B_OF
    }
#undef LOAD_BATCH_VALUE
#undef LOAD_BATCH_GEO
#undef K0
}
#undef FRAG
#elif VB
/* Rows in registers: work-item l is node n of element slot e; Dr and Ds's rows n (2 NP values)
 * are loaded once into registers, then for each batch of VEPB elements the fields are staged in
 * local memory and each step m of the loop costs 3 local loads (the same address for all of an
 * element's work-items) for 4 multiply-adds, no matrix load. */
XGPU_KERNEL void dg_volume(const int32_t K, const int32_t KNP, XGPU_GLOBAL const T* XGPU_RESTRICT drT,
                           XGPU_GLOBAL const T* XGPU_RESTRICT dsT, XGPU_GLOBAL const T* XGPU_RESTRICT vgeo,
                           XGPU_GLOBAL const T* XGPU_RESTRICT q, XGPU_GLOBAL T* XGPU_RESTRICT rhs) {
    XGPU_LOCAL T s_p[VEPB * NP], s_q[VEPB * NP], s_ez[VEPB * NP];
    const int32_t l = (int32_t)XGPU_LOCAL_ID(0), e = l / NP, n = l - e * NP;
    T a[NP], d[NP];
#pragma unroll
    for (int32_t m = 0; m < NP; ++m) {
        a[m] = drT[m * NP + n];
        d[m] = dsT[m * NP + n];
    }
    for (int32_t batch = 0; batch < VB; ++batch) {
        const int32_t k0 = ((int32_t)XGPU_GROUP_ID(0) * VB + batch) * VEPB;
        if (k0 >= K) break; /* the same for the whole work-group */
        if (batch > 0) XGPU_BARRIER(); /* the previous batch's reads are done */
        const int32_t first = k0 * NP, count = (K - k0 < VEPB ? K - k0 : VEPB) * NP, k = k0 + e;
        T rx = (T)0, sx = (T)0, ry = (T)0, sy = (T)0;
        if (l < count) { /* l < count: k < K */
            rx = vgeo[4 * k];
            sx = vgeo[4 * k + 1];
            ry = vgeo[4 * k + 2];
            sy = vgeo[4 * k + 3];
            const T x = q[first + l], y = q[KNP + first + l];
            s_p[l] = rx * y - ry * x;
            s_q[l] = sx * y - sy * x;
            s_ez[l] = q[2 * KNP + first + l];
        }
        XGPU_BARRIER();
        if (k < K) {
            const int32_t b = e * NP;
            T dr_p = (T)0, ds_q = (T)0, dr_ez = (T)0, ds_ez = (T)0;
#pragma unroll
            for (int32_t m = 0; m < NP; ++m) {
                const T pm = s_p[b + m], qm = s_q[b + m], ez = s_ez[b + m];
                dr_p += a[m] * pm;
                ds_q += d[m] * qm;
                dr_ez += a[m] * ez;
                ds_ez += d[m] * ez;
            }
            const int32_t g = k * NP + n;
            rhs[g] = -(ry * dr_ez + sy * ds_ez);
            rhs[KNP + g] = rx * dr_ez + sx * ds_ez;
            rhs[2 * KNP + g] = dr_p + ds_q;
        }
    }
}
#else
XGPU_KERNEL void dg_volume(const int32_t K, const int32_t KNP, XGPU_GLOBAL const T* XGPU_RESTRICT drT,
                           XGPU_GLOBAL const T* XGPU_RESTRICT dsT, XGPU_GLOBAL const T* XGPU_RESTRICT vgeo,
                           XGPU_GLOBAL const T* XGPU_RESTRICT q, XGPU_GLOBAL T* XGPU_RESTRICT rhs) {
    XGPU_LOCAL T s_p[VEPB * NP], s_q[VEPB * NP], s_ez[VEPB * NP];
    const int32_t l = (int32_t)XGPU_LOCAL_ID(0), e = l / TPE, t = l - e * TPE;
    const int32_t k0 = (int32_t)XGPU_GROUP_ID(0) * VEPB, k = k0 + e;
#if MAT_LOCAL
    XGPU_LOCAL T s_dr[NP * NP], s_ds[NP * NP];
    for (int32_t i = l; i < NP * NP; i += VGROUP) {
        s_dr[i] = drT[i];
        s_ds[i] = dsT[i];
    }
#endif
    {
        const int32_t first = k0 * NP, count = (K - k0 < VEPB ? K - k0 : VEPB) * NP;
        for (int32_t i = l; i < count; i += VGROUP) {
            const int32_t ki = 4 * (k0 + i / NP);
            const T x = q[first + i], y = q[KNP + first + i];
            s_p[i] = vgeo[ki] * y - vgeo[ki + 2] * x;
            s_q[i] = vgeo[ki + 1] * y - vgeo[ki + 3] * x;
            s_ez[i] = q[2 * KNP + first + i];
        }
    }
    XGPU_BARRIER();
    if (k >= K) return;
    const int32_t b = e * NP;
    T dr_p[NPW], ds_q[NPW], dr_ez[NPW], ds_ez[NPW];
#pragma unroll
    for (int32_t j = 0; j < NPW; ++j)
        dr_p[j] = ds_q[j] = dr_ez[j] = ds_ez[j] = (T)0;
    for (int32_t m = 0; m < NP; ++m) {
        const T pm = s_p[b + m], qm = s_q[b + m], ez = s_ez[b + m];
#pragma unroll
        for (int32_t j = 0; j < NPW; ++j) {
            const int32_t n = t + j * TPE, c = n < NP ? n : NP - 1; /* the last item's spare nodes: any column */
            const T a = MAT(s_dr, drT)[m * NP + c], d = MAT(s_ds, dsT)[m * NP + c];
            dr_p[j] += a * pm;
            ds_q[j] += d * qm;
            dr_ez[j] += a * ez;
            ds_ez[j] += d * ez;
        }
    }
    const T rx = vgeo[4 * k], sx = vgeo[4 * k + 1], ry = vgeo[4 * k + 2], sy = vgeo[4 * k + 3];
#pragma unroll
    for (int32_t j = 0; j < NPW; ++j) {
        const int32_t n = t + j * TPE, g = k * NP + n;
        if (n < NP) {
            rhs[g] = -(ry * dr_ez[j] + sy * ds_ez[j]);
            rhs[KNP + g] = rx * dr_ez[j] + sx * ds_ez[j];
            rhs[2 * KNP + g] = dr_p[j] + ds_q[j];
        }
    }
}

#endif

/* rhs += LIFT (Fscale/2 * upwind flux). Face node j of element k compares q at vmapM (its own
 * node) and vmapP (the neighbour's; the same node on the wall, where the mirror state
 * Ez+ = -Ez-, H+ = H- applies). sgeo: nx, ny, Fscale / 2 per element face. dg_face_flux
 * writes the scaled upwind flux of element k's face node j (its map entries m and p) into the
 * local arrays of slot e. */
/* SV 1: the face fluxes are read back 16 bytes at a time (TVN = 4 floats or 2 doubles, type TV),
 * each element's row of NFNS = NFN rounded up to whole vectors; 0: one value at a time. */
#if SV
#define NFNS ((NFN + TVN - 1) / TVN * TVN)
#if TVN == 4
#define TV_AT(v, c) ((c) == 0 ? (v).x : (c) == 1 ? (v).y : (c) == 2 ? (v).z : (v).w)
#else
#define TV_AT(v, c) ((c) == 0 ? (v).x : (v).y)
#endif
#else
#define NFNS NFN
#endif

XGPU_DEVICE_FN void dg_face_flux(const int32_t k, const int32_t e, const int32_t j, const int32_t m, const int32_t p,
                                 const int32_t KNP, XGPU_GLOBAL const T* XGPU_RESTRICT sgeo,
                                 XGPU_GLOBAL const T* XGPU_RESTRICT q, XGPU_LOCAL_PTR(T) f_hx, XGPU_LOCAL_PTR(T) f_hy,
                                 XGPU_LOCAL_PTR(T) f_ez) {
    const int32_t f = 3 * k + j / NFP;
    T dhx = 0, dhy = 0, dez = 2 * q[2 * KNP + m];
    if (m != p) {
        dhx = q[m] - q[p];
        dhy = q[KNP + m] - q[KNP + p];
        dez = q[2 * KNP + m] - q[2 * KNP + p];
    }
    const T nx = sgeo[3 * f], ny = sgeo[3 * f + 1], fs = sgeo[3 * f + 2];
    const T ndh = nx * dhx + ny * dhy;
    f_hx[e * NFNS + j] = fs * (ny * dez + ndh * nx - dhx);
    f_hy[e * NFNS + j] = fs * (-nx * dez + ndh * ny - dhy);
    f_ez[e * NFNS + j] = fs * (-nx * dhy + ny * dhx - dez);
}

/* The face nodes a work-item takes, j = n + t NP below NFN for t < FPT (one at N >= 4), and the
 * map entries of element k's: im[t], ip[t] (for the surface kernel with several batches a
 * work-group, which loads them a batch ahead). */
#define FPT ((NFN + NP - 1) / NP)
XGPU_DEVICE_FN void dg_face_indices(const int32_t k, const int32_t n, XGPU_GLOBAL const int32_t* XGPU_RESTRICT vmapM,
                                    XGPU_GLOBAL const int32_t* XGPU_RESTRICT vmapP, int32_t* im, int32_t* ip) {
#pragma unroll
    for (int32_t t = 0; t < FPT; ++t) {
        const int32_t j = n + t * NP;
        im[t] = ip[t] = 0;
        if (j < NFN) {
            im[t] = vmapM[k * NFN + j];
            ip[t] = vmapP[k * NFN + j];
        }
    }
}

XGPU_KERNEL void dg_surface(const int32_t K, const int32_t KNP, XGPU_GLOBAL const T* XGPU_RESTRICT liftT,
                            XGPU_GLOBAL const T* XGPU_RESTRICT sgeo, XGPU_GLOBAL const int32_t* XGPU_RESTRICT vmapM,
                            XGPU_GLOBAL const int32_t* XGPU_RESTRICT vmapP, XGPU_GLOBAL const T* XGPU_RESTRICT q,
                            XGPU_GLOBAL T* XGPU_RESTRICT rhs) {
#if SV
    XGPU_LOCAL TV v_hx[EPB * NFNS / TVN], v_hy[EPB * NFNS / TVN], v_ez[EPB * NFNS / TVN];
    XGPU_LOCAL_PTR(T) f_hx = (XGPU_LOCAL_PTR(T))v_hx;
    XGPU_LOCAL_PTR(T) f_hy = (XGPU_LOCAL_PTR(T))v_hy;
    XGPU_LOCAL_PTR(T) f_ez = (XGPU_LOCAL_PTR(T))v_ez;
#else
    XGPU_LOCAL T f_hx[EPB * NFN], f_hy[EPB * NFN], f_ez[EPB * NFN];
#endif
    const int32_t l = (int32_t)XGPU_LOCAL_ID(0), e = l / NP, n = l - e * NP;
#if SB
    /* Lift rows in registers: work-item l is node n of element slot e and keeps row n of LIFT (NFN
     * values) in registers, then takes SB batches of EPB elements (a work-group: SB * EPB consecutive
     * elements); a step of the lift costs 3 local loads (the same address for an element's
     * work-items) for 3 multiply-adds, no matrix load. */
    T lr[NFN];
#pragma unroll
    for (int32_t j = 0; j < NFN; ++j)
        lr[j] = liftT[j * NP + n];
#define LIFT_AT(j) lr[j]
#define BATCHES SB
#else
#if MAT_LOCAL
    XGPU_LOCAL T s_lift[NFN * NP];
    for (int32_t i = l; i < NFN * NP; i += GROUP)
        s_lift[i] = liftT[i];
#endif
#define LIFT_AT(j) MAT(s_lift, liftT)[(j) * NP + n]
#define BATCHES 1
#endif
#if BATCHES > 1
    /* The first batch's map entries; each later batch's are loaded while the one before it
     * lifts, so that a batch's gathers wait for one load, not two in a row. (With one batch the
     * entries are loaded after rhs, which ran faster on the H200 than loading them first.) */
    int32_t im[FPT], ip[FPT];
    {
        const int32_t k = (int32_t)XGPU_GROUP_ID(0) * BATCHES * EPB + e;
        if (k < K) dg_face_indices(k, n, vmapM, vmapP, im, ip);
    }
#endif
    for (int32_t batch = 0; batch < BATCHES; ++batch) {
        const int32_t k0 = ((int32_t)XGPU_GROUP_ID(0) * BATCHES + batch) * EPB;
        if (k0 >= K) break; /* the same for the whole work-group */
        if (batch > 0) XGPU_BARRIER(); /* the previous batch's reads are done */
        const int32_t k = k0 + e, g = k * NP + n;
        /* rhs is loaded first, so that its latency overlaps the flux's gathers. */
        T r_hx = 0, r_hy = 0, r_ez = 0;
        if (k < K) {
            r_hx = rhs[g];
            r_hy = rhs[KNP + g];
            r_ez = rhs[2 * KNP + g];
#if BATCHES > 1
#pragma unroll
            for (int32_t t = 0; t < FPT; ++t)
                if (n + t * NP < NFN) dg_face_flux(k, e, n + t * NP, im[t], ip[t], KNP, sgeo, q, f_hx, f_hy, f_ez);
#else
            for (int32_t j = n; j < NFN; j += NP)
                dg_face_flux(k, e, j, vmapM[k * NFN + j], vmapP[k * NFN + j], KNP, sgeo, q, f_hx, f_hy, f_ez);
#endif
        }
        XGPU_BARRIER();
#if BATCHES > 1
        if (batch + 1 < BATCHES && k + EPB < K) dg_face_indices(k + EPB, n, vmapM, vmapP, im, ip);
#endif
        if (k < K) {
            T a_hx = 0, a_hy = 0, a_ez = 0;
#if SV
#pragma unroll
            for (int32_t v = 0; v < NFNS / TVN; ++v) {
                const int32_t i = e * (NFNS / TVN) + v;
                const TV x = v_hx[i], y = v_hy[i], z = v_ez[i];
#pragma unroll
                for (int32_t c = 0; c < TVN; ++c)
                    if (v * TVN + c < NFN) {
                        const T L = LIFT_AT(v * TVN + c);
                        a_hx += L * TV_AT(x, c);
                        a_hy += L * TV_AT(y, c);
                        a_ez += L * TV_AT(z, c);
                    }
            }
#else
#pragma unroll
            for (int32_t j = 0; j < NFN; ++j) {
                const T L = LIFT_AT(j);
                a_hx += L * f_hx[e * NFN + j];
                a_hy += L * f_hy[e * NFN + j];
                a_ez += L * f_ez[e * NFN + j];
            }
#endif
            rhs[g] = r_hx + a_hx;
            rhs[KNP + g] = r_hy + a_hy;
            rhs[2 * KNP + g] = r_ez + a_ez;
        }
    }
#undef LIFT_AT
#undef BATCHES
}

/* One stage of the low-storage RK: res = a res + dt rhs; q += b res (all three fields at once). */
XGPU_KERNEL void dg_update(const int32_t n, const T a, const T b, const T dt, XGPU_GLOBAL T* XGPU_RESTRICT q,
                           XGPU_GLOBAL T* XGPU_RESTRICT res, XGPU_GLOBAL const T* XGPU_RESTRICT rhs) {
    const int32_t i = (int32_t)XGPU_GLOBAL_ID(0);
    if (i < n) {
        const T r = a * res[i] + dt * rhs[i];
        res[i] = r;
        q[i] += b * r;
    }
}
)";

} // namespace dg
