/* xgpu scans, in the dialect: the work-group parts of a reduce-then-scan over tiles of
 * XGPU_SCAN_WG * XGPU_SCAN_K elements, work-item l owning the run of K elements from l * K
 * (kernels/scan.kernel is the kernel around them, filled by core/src/array/scan.cpp). The generator defines first:
 *   XGPU_SCAN_T            the scan's type
 *   XGPU_SCAN_WG, _K       work-group size, and elements per work-item
 *   XGPU_SCAN_SEGMENTED    1 where flags start new segments: values then combine as the pairs
 *                          (f, a) . (g, b) = (f | g, g ? b : op(a, b)), which is associative
 *   xgpu_scan_op(a, b), xgpu_scan_neutral()   the user's operator and neutral element
 * The operator is applied in the order of the elements (it need not commute), and never to the
 * neutral element where a value exists, so that a neutral element that is only nearly one (0.0
 * for -0.0) leaves no trace. Flags live beside values: `pf` for run totals, `lf` for a tile in
 * local memory; without segments they are never read. */
#define XGPU_SCAN_TILE (XGPU_SCAN_WG * XGPU_SCAN_K)
/* Where a staged tile keeps its element k: a spare slot after each run of K, so that the work-items
 * of a warp, each at the same place in its own run, fall in different banks of local memory. */
#define XGPU_SCAN_AT(k) ((k) + (k) / XGPU_SCAN_K)
#define XGPU_SCAN_STAGE_SIZE (XGPU_SCAN_TILE + XGPU_SCAN_WG)

/* Scans the run totals part[0 .. WG-1] (with their flags pf) inclusively, in place: Hillis-Steele,
 * log2(WG) steps. Opens with the barrier that makes every work-item's part[l] visible. */
XGPU_DEVICE_FN void xgpu_scan_group(XGPU_LOCAL_PTR(XGPU_SCAN_T) part, XGPU_LOCAL_PTR(uint8_t) pf, const uint32_t l) {
    XGPU_LOCAL_BARRIER();
    for (uint32_t d = 1; d < XGPU_SCAN_WG; d <<= 1) {
        XGPU_SCAN_T v = part[l];
#if XGPU_SCAN_SEGMENTED
        uint8_t s = pf[l];
        if (l >= d) {
            if (!s) v = xgpu_scan_op(part[l - d], v);
            s |= pf[l - d];
        }
#else
        if (l >= d) v = xgpu_scan_op(part[l - d], v);
#endif
        XGPU_LOCAL_BARRIER();
        part[l] = v;
#if XGPU_SCAN_SEGMENTED
        pf[l] = s;
#endif
        XGPU_LOCAL_BARRIER();
    }
#if !XGPU_SCAN_SEGMENTED
    (void)pf;
#endif
}

/* After xgpu_scan_group: the value of everything before work-item l's run (the carry from earlier
 * tiles where `has_carry`, then this tile's earlier runs, from their last segment start) into
 * *p. Returns 0 where nothing comes before the run (l = 0 in the first tile). */
XGPU_DEVICE_FN int xgpu_scan_prefix(XGPU_LOCAL_PTR(XGPU_SCAN_T) part, XGPU_LOCAL_PTR(uint8_t) pf, const uint32_t l,
                                    const int has_carry, const XGPU_SCAN_T carry, XGPU_SCAN_T* p) {
#if !XGPU_SCAN_SEGMENTED
    (void)pf;
#endif
    *p = carry;
    if (l == 0) return has_carry;
    const XGPU_SCAN_T q = part[l - 1];
#if XGPU_SCAN_SEGMENTED
    *p = (has_carry && !pf[l - 1]) ? xgpu_scan_op(carry, q) : q;
#else
    *p = has_carry ? xgpu_scan_op(carry, q) : q;
#endif
    return 1;
}

/* For a tile staged in local memory (loc, lf; `cnt` elements): each work-item scans its run in
 * place and leaves the run's total in part[l] (flag in pf[l]). Runs past `cnt` are empty and
 * total the neutral element (only later runs, as empty, see it). */
XGPU_DEVICE_FN void xgpu_scan_runs(XGPU_LOCAL_PTR(XGPU_SCAN_T) loc, XGPU_LOCAL_PTR(uint8_t) lf,
                                   XGPU_LOCAL_PTR(XGPU_SCAN_T) part, XGPU_LOCAL_PTR(uint8_t) pf, const uint32_t l,
                                   const uint32_t cnt) {
    XGPU_SCAN_T acc = xgpu_scan_neutral();
    uint8_t have = 0;
#if XGPU_SCAN_SEGMENTED
    uint8_t f = 0;
#endif
    for (uint32_t j = 0; j < XGPU_SCAN_K; ++j) {
        const uint32_t k = l * XGPU_SCAN_K + j;
        if (k >= cnt) break;
        const XGPU_SCAN_T v = loc[XGPU_SCAN_AT(k)];
#if XGPU_SCAN_SEGMENTED
        const uint8_t s = lf[XGPU_SCAN_AT(k)];
        acc = (have && !s) ? xgpu_scan_op(acc, v) : v;
        f |= s;
#else
        acc = have ? xgpu_scan_op(acc, v) : v;
#endif
        have = 1;
        loc[XGPU_SCAN_AT(k)] = acc;
    }
    part[l] = acc;
#if XGPU_SCAN_SEGMENTED
    pf[l] = f;
#else
    (void)pf;
    (void)lf;
#endif
}

/* For a staged tile: completes work-item l's run with the prefix p, up to the run's first
 * segment start. The caller puts a barrier after it. */
XGPU_DEVICE_FN void xgpu_scan_complete(XGPU_LOCAL_PTR(XGPU_SCAN_T) loc, XGPU_LOCAL_PTR(uint8_t) lf, const uint32_t l,
                                       const uint32_t cnt, const XGPU_SCAN_T p) {
#if !XGPU_SCAN_SEGMENTED
    (void)lf;
#endif
    for (uint32_t j = 0; j < XGPU_SCAN_K; ++j) {
        const uint32_t k = l * XGPU_SCAN_K + j;
        if (k >= cnt) break;
#if XGPU_SCAN_SEGMENTED
        if (lf[XGPU_SCAN_AT(k)]) break;
#endif
        loc[XGPU_SCAN_AT(k)] = xgpu_scan_op(p, loc[XGPU_SCAN_AT(k)]);
    }
}

/* For a complete staged tile: the exclusive value at element k, the neutral element at the
 * first element of the array and of each segment, else the inclusive value before it. */
XGPU_DEVICE_FN XGPU_SCAN_T xgpu_scan_prev(XGPU_LOCAL_PTR(XGPU_SCAN_T) loc, XGPU_LOCAL_PTR(uint8_t) lf, const uint32_t k,
                                          const int has_carry, const XGPU_SCAN_T carry) {
#if XGPU_SCAN_SEGMENTED
    if (lf[XGPU_SCAN_AT(k)]) return xgpu_scan_neutral();
#else
    (void)lf;
#endif
    if (k == 0) return has_carry ? carry : xgpu_scan_neutral();
    return loc[XGPU_SCAN_AT(k - 1)];
}
