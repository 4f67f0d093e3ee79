#include "device.hpp"

#include <xgpu/tune.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace dg {

namespace {

// `params` with the volume kernel's NPW, VEPB, VB, VEW and EPW set to these values.
xgpu::KernelTemplate::Parameters granular(xgpu::KernelTemplate::Parameters params, const VolumeShape& g) {
    for (auto& [name, value] : params) {
        if (name == "NPW") value = g.npw;
        if (name == "VEPB") value = g.vepb;
        if (name == "VB") value = g.vb;
        if (name == "VEW") value = g.vew;
        if (name == "EPW") value = g.epw;
    }
    return params;
}

// Forms 3 and 4's local row of an element: at least the padded columns 4 ceil(NP / 4), and 4
// mod 16 (doubles, form 3) or 4 mod 32 (floats, form 4).
std::size_t mma_row(int np, int form) {
    const std::size_t cols = 4 * std::size_t((np + 3) / 4);
    return form == 4 ? (cols + 27) / 32 * 32 + 4 : (cols + 11) / 16 * 16 + 4;
}

// x rounded to TF32 (10 mantissa bits, to nearest, ties away from zero), as cvt.rna.tf32.f32
// does: the bits of a float whose low 13 mantissa bits are zero.
std::uint32_t tf32_bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u += 0x1000u;
    return u & 0xffffe000u;
}

// Dr and Ds in the order form 3 reads them: for node tile nt (8 rows), column step ks (4 columns)
// and matrix w (Dr, Ds), lane l = 4 g + t holds entry (8 nt + g, 4 ks + t), zero past NP.
std::vector<double> mma_fragments(const ReferenceElement& ref) {
    const int np = ref.np, nt = (np + 7) / 8, ks = (np + 3) / 4;
    std::vector<double> f(std::size_t(nt) * ks * 2 * 32, 0.0);
    for (int a = 0; a < nt; ++a)
        for (int b = 0; b < ks; ++b)
            for (int w = 0; w < 2; ++w)
                for (int lane = 0; lane < 32; ++lane) {
                    const int i = 8 * a + lane / 4, j = 4 * b + lane % 4;
                    if (i < np && j < np)
                        f[((std::size_t(a) * ks + b) * 2 + w) * 32 + lane] = (w ? ref.ds : ref.dr)(i, j);
                }
    return f;
}

// Form 4's operands: the fragments above in single precision, each split into TF32 parts, the
// high parts' bits first, then the low parts' (x - high rounded to TF32).
std::vector<std::uint32_t> tf32_fragments(const ReferenceElement& ref) {
    const std::vector<double> f = mma_fragments(ref);
    std::vector<std::uint32_t> bits(2 * f.size());
    for (std::size_t i = 0; i < f.size(); ++i) {
        const float x = float(f[i]);
        const std::uint32_t hi = tf32_bits(x);
        float h;
        std::memcpy(&h, &hi, 4);
        bits[i] = hi;
        bits[f.size() + i] = tf32_bits(x - h);
    }
    return bits;
}

// The volume kernel's work-items per group: VEPB elements, one node each, NPW nodes each
// (ceil(NP / NPW) per element, also in VEW 1, where NPW = NP is one work-item an element), or
// NPW nodes of EPW elements each (VEW 2).
std::size_t volume_items(int np, const VolumeShape& g) {
    const std::size_t per_element = std::size_t((np + g.npw - 1) / g.npw);
    if (g.vew == 1) return std::size_t(g.vepb) * per_element;
    if (g.vew == 2) return std::size_t(g.vepb / g.epw) * per_element;
    if (g.vew == 3 || g.vew == 4) return std::size_t(g.vepb) * 4; // a warp per 8 elements
    return std::size_t(g.vepb) * per_element;
}

// Its local memory in values.
std::size_t volume_local_values(int np, const VolumeShape& g, bool local_matrices) {
    const std::size_t e = std::size_t(g.vepb), n = std::size_t(np), npp = std::size_t(np | 1);
    if (g.vew == 1) return 3 * e * npp;
    if (g.vew == 2) return 3 * std::max(n * (e + 2), e * npp);
    if (g.vew == 3 || g.vew == 4) return 3 * e * mma_row(np, g.vew);
    return 3 * e * n + (local_matrices ? 2 * n * n : 0);
}

// The volume kernel's grid: VEPB elements (or VB batches of them) per work-group.
xgpu::Grid volume_grid(std::int32_t k, int np, const VolumeShape& g) {
    const std::size_t local = volume_items(np, g);
    const std::size_t per_group = std::size_t(g.vepb) * std::size_t(g.vb > 0 ? g.vb : 1);
    return xgpu::Grid{(std::size_t(k) + per_group - 1) / per_group * local, local};
}

// Dr and Ds as program-scope constant arrays c_dr and c_ds (row-major, NP x NP), for the volume
// kernel that takes its matrix entries as operands (VEW 1). Printed to round-trip: %.17e for
// double, %.9e with an f suffix for float (no double literal where a device lacks doubles).
std::string constant_matrices(const ReferenceElement& ref, bool f64) {
    std::string text;
    char buf[48];
    for (const auto& [name, m] : {std::pair{"c_dr", &ref.dr}, std::pair{"c_ds", &ref.ds}}) {
        text += "XGPU_CONSTANT T " + std::string(name) + "[NP * NP] = {";
        for (std::size_t i = 0; i < m->a.size(); ++i) {
            if (f64)
                std::snprintf(buf, sizeof buf, "%s%.17e", i ? ", " : "", m->a[i]);
            else
                std::snprintf(buf, sizeof buf, "%s%.9ef", i ? ", " : "", double(float(m->a[i])));
            text += buf;
        }
        text += "};\n";
    }
    return text;
}

} // namespace

bool has_mma_tf32(const xgpu::DeviceInfo& info) {
    return info.nv_compute_capability >= 80;
}

bool has_mma_f64(const xgpu::DeviceInfo& info) {
    return info.nv_compute_capability >= 80 && info.fp64;
}

// CPUs: about 32 work-items, PoCL running a group as a loop on one core (2 shared cores, K = 2048,
// the best of three runs of volume + surface: N = 2: 0.38/0.28/0.28 ms with 1/4/16 elements a
// group; N = 4: 0.76/0.70/0.75 ms; N = 7: 4.8/8.8/9.7 ms; noisy: the machine was shared). GPUs: at
// most 256 work-items (NVIDIA's OpenCL allows no more for this kernel). The shapes were swept
// (as examples/dg/surface_shapes.sh does) on the H200 (about 2 million dofs) after rhs came to
// be loaded before the flux gathers: elements a group 2-12, LIFT from memory or its rows in
// registers over 1-4 batches, the fluxes read back a value or 16 bytes at a time (sv); surface GB/s
// CUDA / OpenCL of the chosen shape against the runner-up of the other backend: f32 N = 6 9
// elements, sv: 2911 / 2945 (4 over 2 batches: 2976 / 2652); f32 N = 7 6 over 3 batches, sv: 2640 /
// 2611 (6 over 2: 2610 / 2523); f64 N = 5 6 elements: 2850 / 2963 (6 over 2 batches: 2933 / 2852;
// the earlier 4 over 4: 2686 / 2603). sv gains nothing in f64 at N = 5-7 and loses at N = 4 (an H100 sweep:
// 2531 against 2917 f64, 3041 against 3222 f32) and gains most in f32 at N = 6 (3010 against 2427 on the H200).
// N = 3 and above 7: about 128 work-items (not swept).
// The nodes of an element of order N, (N + 1)(N + 2) / 2, for the defaults below (which take the
// order, not a ReferenceElement).
static int element_nodes(int order) {
    return (order + 1) * (order + 2) / 2;
}

SurfaceShape default_surface_shape(int order, bool cpu, bool f64) {
    const int np = element_nodes(order);
    if (cpu) return {std::max(1, 32 / np), 0, 0};
    switch (order) {
    case 4: return {17, 0, 0};                                          // 255 work-items
    case 5: return {6, 0, f64 ? 0 : 1};                                 // 126
    case 6: return {9, 0, f64 ? 0 : 1};                                 // 252
    case 7: return f64 ? SurfaceShape{4, 0, 0} : SurfaceShape{6, 3, 1}; // 144; f32: 216 over 3 batches
    default: return {std::max(1, 128 / np), 0, 0};
    }
}

// Measured on the H200 (examples/dg/granularity.sh and single runs of dg, about 2
// million dofs, CUDA; NVIDIA's OpenCL within a few per cent): two nodes a work-item are fastest
// at N = 4 in f64; at N = 5 and 6 matrix rows in registers won over the first kernel by 6-23%.
// On CPUs (PoCL) one node a work-item.
int default_nodes_per_item(int order, bool cpu) {
    return !cpu && order == 4 ? 2 : 1;
}

// The later forms, in the same kind of runs (volume GFLOP/s, CUDA): in f32 one element per
// work-item with the matrices folded into the code (form 1) beats every other form at N = 3..7
// (N = 4: 15283 against 11978 for the best earlier shape, N = 5: 18757 against 13676, N = 6:
// 18780 against 16390); in f64, whose constants cannot be immediate operands, form 1 wins at
// N = 3 (7481 against 6632) and N = 5 (9807 against 8827), the rows at N = 6 (11350 against
// 11058 tiled) and the tiled kernel at N = 7 (3 nodes of 2 elements: 10888 against 9140).
// On the tensor cores (form 3, CUDA, f64; warps working alone, 16 x 8 x 8 products
// on sm_90, B read from local memory at each step): 10235 GFLOP/s at N = 4 (4 batches of 32
// elements; the earlier form 3: 8428), 10952 at N = 5 (1 of 16; form 1: 9581), 18057 at N = 6 (1
// of 16; the earlier form 3: 12972), 19199 at N = 7 (1 of 32; 11786); at N = 3 form 1 stays
// ahead (7420 against 7047 for 4 batches of 32).
VolumeShape default_volume_shape(int order, bool cpu, bool f64, bool mma) {
    const int np = element_nodes(order); // form 1 splits them by NPW
    if (cpu) return {default_nodes_per_item(order, cpu), 0, 0, 0, 1};
    if (f64 && mma && order >= 4 && order <= 7)
        return {1, order == 5 || order == 6 ? 16 : 32, order == 4 ? 4 : 1, 3, 1};
    // f32 at orders 4-7 and f64 at orders 3 and 5: form 1 with an element's nodes split among 2 or 4
    // work-items (H200, about 2M dofs, a sweep of 1-4 parts x
    // 32-128 elements a group; volume GFLOP/s CUDA / OpenCL against the earlier default in the same
    // job): f32 N = 4 2 parts of 32 elements 16951 / 14218 against 15482 / 11738 (one part); N = 5 2
    // of 64 19496 / 17364 against 18988 / 16816; N = 6 2 of 32 19970 / 18602 against 18980 /
    // 16721; N = 7 4 of 32 20031 / 18234 against form 4's (3xTF32 on the tensor cores) 17847 /
    // 17489; f64 N = 3 2 of 32 8901 / 8328 against 7646 / 7140; f64 N = 5 (form 1 where the device
    // has no f64 tensor cores) 2 of 64 10176 / 9201 against 9692 / 9140, 3-4 parts 7600-8100.
    if (!f64 && order >= 4 && order <= 7)
        return {order == 7 ? (np + 3) / 4 : (np + 1) / 2, order == 5 ? 64 : 32, 0, 1, 1};
    if (!f64 && order == 3) return {np, 64, 0, 1, 1};
    if (f64 && order == 3) return {(np + 1) / 2, 32, 0, 1, 1};
    if (f64 && order == 5) return {(np + 1) / 2, 64, 0, 1, 1};
    if (f64 && order == 6) return {1, 3, 16, 0, 1};
    if (f64 && order == 7) return {3, 32, 0, 2, 2};
    return {default_nodes_per_item(order, cpu), 0, 0, 0, 1};
}

DeviceMaxwell::DeviceMaxwell(const xgpu::Context& ctx, const Discretization& d, DeviceOptions options)
    : ctx_(ctx), queue_(ctx.queue()), d_(&d), options_(std::move(options)) {
    const auto& ref = d.ref;
    const auto& mesh = d.mesh;
    const bool f64 = options_.precision == "f64";
    if (!f64 && options_.precision != "f32")
        throw xgpu::InvalidArgument("dg: precision '" + options_.precision + "' is neither f32 nor f64");
    if (f64 && !ctx.device().has_fp64())
        throw xgpu::InvalidArgument("dg: precision f64 on " + ctx.device().name() + ", which has no double precision");
    if (options_.elements_per_group < 0)
        throw xgpu::InvalidArgument("dg: elements per group " + std::to_string(options_.elements_per_group) + " < 0");
    if (double(fields) * double(d.nodes()) > double(std::numeric_limits<std::int32_t>::max()))
        throw xgpu::InvalidArgument("dg: " + std::to_string(d.nodes()) + " nodes per field exceed 32-bit indices");
    value_size_ = f64 ? 8 : 4;
    const int np = ref.np, nfn = faces * ref.nfp;
    const bool cpu = ctx.device().type() == xgpu::DeviceType::cpu;
    const SurfaceShape surface_shape = default_surface_shape(ref.order, cpu, f64);
    epb_ = options_.elements_per_group ? options_.elements_per_group : surface_shape.epb;
    const auto& info = ctx.device().info();
    if (options_.nodes_per_item < 0 || options_.nodes_per_item > np)
        throw xgpu::InvalidArgument("dg: nodes per work-item " + std::to_string(options_.nodes_per_item) +
                                    " outside 0.." + std::to_string(np) + " (order " + std::to_string(ref.order) + ")");
    if (options_.volume_batches < 0)
        throw xgpu::InvalidArgument("dg: volume batches " + std::to_string(options_.volume_batches) + " < 0");
    if (options_.volume_batches > 0 && options_.nodes_per_item > 1 && options_.volume_form != 1)
        throw xgpu::InvalidArgument("dg: volume batches " + std::to_string(options_.volume_batches) +
                                    " (matrix rows in registers) need 1 node per work-item, not " +
                                    std::to_string(options_.nodes_per_item));
    if (options_.surface_batches < -1)
        throw xgpu::InvalidArgument("dg: surface batches " + std::to_string(options_.surface_batches) +
                                    " < 0 (-1: the default)");
    sb_ = options_.surface_batches >= 0 ? options_.surface_batches : options_.elements_per_group ? 0 : surface_shape.sb;
    if (options_.surface_vector < -1 || options_.surface_vector > 1)
        throw xgpu::InvalidArgument("dg: surface vector " + std::to_string(options_.surface_vector) +
                                    " is not 0, 1 or -1 (the default)");
    sv_ = options_.surface_vector >= 0 ? options_.surface_vector : options_.elements_per_group ? 0 : surface_shape.sv;
    const int form = options_.volume_form;
    if (form < 0 || form > 4)
        throw xgpu::InvalidArgument("dg: volume kernel form " + std::to_string(form) + " is not 0, 1, 2, 3 or 4");
    if (form == 3 && !(f64 && has_mma_f64(info)))
        throw xgpu::InvalidArgument("dg: volume kernel form 3 (tensor cores) needs f64 on an NVIDIA device of compute "
                                    "capability 8.0 or later, not " +
                                    options_.precision + " on " + info.backend + " " + info.name);
    if (form == 4 && !(!f64 && has_mma_tf32(info)))
        throw xgpu::InvalidArgument("dg: volume kernel form 4 (TF32 tensor cores) needs f32 on an NVIDIA device of "
                                    "compute capability 8.0 or later, not " +
                                    options_.precision + " on " + info.backend + " " + info.name);
    if (form == 2 && options_.volume_batches > 0)
        throw xgpu::InvalidArgument("dg: volume kernel form " + std::to_string(form) + " takes no batches (" +
                                    std::to_string(options_.volume_batches) + ")");
    if (form == 1 && options_.nodes_per_item && 4 * options_.nodes_per_item < np)
        throw xgpu::InvalidArgument("dg: volume kernel form 1 splits an element among at most 4 work-items: " +
                                    std::to_string(options_.nodes_per_item) + " nodes per work-item of " +
                                    std::to_string(np) + " (order " + std::to_string(ref.order) + ") need " +
                                    std::to_string((np + options_.nodes_per_item - 1) / options_.nodes_per_item));
    if (form >= 3 && options_.nodes_per_item > 1)
        throw xgpu::InvalidArgument("dg: volume kernel form " + std::to_string(form) +
                                    " takes no nodes per work-item (" + std::to_string(options_.nodes_per_item) + ")");
    if (options_.volume_elements_per_item < 0 || (options_.volume_elements_per_item > 0 && form != 2))
        throw xgpu::InvalidArgument("dg: volume elements per work-item " +
                                    std::to_string(options_.volume_elements_per_item) +
                                    " (only the tiled volume kernel, form 2, takes them)");
    if (options_.volume_elements_per_group < 0)
        throw xgpu::InvalidArgument("dg: volume elements per group " +
                                    std::to_string(options_.volume_elements_per_group) + " < 0");
    const bool shape_given = options_.nodes_per_item || options_.volume_elements_per_group || options_.volume_batches ||
                             form || options_.volume_elements_per_item;
    const VolumeShape shape =
        shape_given ? VolumeShape{default_nodes_per_item(ref.order, cpu), 0, 0, 0, 1}
                    : default_volume_shape(ref.order, cpu, f64, f64 ? has_mma_f64(info) : has_mma_tf32(info));
    vew_ = shape_given ? form : shape.vew;
    vb_ = options_.volume_batches ? options_.volume_batches
          : vew_ >= 3             ? std::max(1, shape.vb)
          : vew_ == 2             ? 0
                                  : shape.vb;
    npw_ = options_.nodes_per_item ? options_.nodes_per_item
           : vew_ == 2             ? (shape_given ? 4 : shape.npw)
           : vew_ == 1             ? (shape_given ? np : shape.npw)
           : vb_ || vew_           ? 1
                                   : shape.npw;
    epw_ = vew_ != 2                           ? 1
           : options_.volume_elements_per_item ? options_.volume_elements_per_item
           : shape_given                       ? 2
                                               : shape.epw;
    vepb_ = options_.volume_elements_per_group ? options_.volume_elements_per_group
            : shape.vepb                       ? shape.vepb
            : vew_                             ? 32
                                               : std::max(1, epb_ * np / ((np + npw_ - 1) / npw_));
    if (vew_ >= 3 && vepb_ % 8)
        throw xgpu::InvalidArgument("dg: " + std::to_string(vepb_) +
                                    " volume elements per group are not a multiple "
                                    "of 8 (form 3 gives a warp 8 elements)");
    if (vepb_ % epw_)
        throw xgpu::InvalidArgument("dg: " + std::to_string(vepb_) +
                                    " volume elements per group are not a multiple "
                                    "of the " +
                                    std::to_string(epw_) + " elements per work-item");
    const VolumeShape granularity{npw_, vepb_, vb_, vew_, epw_};
    if (volume_items(np, granularity) > info.max_work_group_size)
        throw xgpu::InvalidArgument("dg: " + std::to_string(vepb_) + " elements per volume group make " +
                                    std::to_string(volume_items(np, granularity)) +
                                    " work-items, more than the device's work-group size " +
                                    std::to_string(info.max_work_group_size));
    if (std::size_t(epb_) * np > info.max_work_group_size)
        throw xgpu::InvalidArgument("dg: " + std::to_string(epb_) + " elements per group of " + std::to_string(np) +
                                    " nodes exceed the device's work-group size " +
                                    std::to_string(info.max_work_group_size));
    const std::size_t local_volume = value_size_ * volume_local_values(np, granularity, options_.matrices_in_local);
    const std::size_t tvn = 16 / value_size_, nfns = sv_ ? (std::size_t(nfn) + tvn - 1) / tvn * tvn : nfn;
    const std::size_t local_surface =
        value_size_ * (3 * std::size_t(epb_) * nfns + (options_.matrices_in_local ? std::size_t(nfn) * np : 0));
    if (std::max(local_volume, local_surface) > info.static_local_memory)
        throw xgpu::InvalidArgument("dg: the kernels need " + std::to_string(std::max(local_volume, local_surface)) +
                                    " bytes of local memory, the device offers " +
                                    std::to_string(info.static_local_memory));
    k_ = mesh.k;
    knp_ = std::int32_t(d.nodes());

    const xgpu::KernelTemplate::Parameters params{{"T", f64 ? "double" : "float"},
                                                  {"NP", np},
                                                  {"NFP", ref.nfp},
                                                  {"EPB", epb_},
                                                  {"NPW", npw_},
                                                  {"VEPB", vepb_},
                                                  {"VB", vb_},
                                                  {"VEW", vew_},
                                                  {"EPW", epw_},
                                                  {"SB", sb_},
                                                  {"SV", sv_},
                                                  {"TV", f64 ? "double2" : "float4"},
                                                  {"TVN", f64 ? 2 : 4},
                                                  {"MAT_LOCAL", options_.matrices_in_local ? 1 : 0}};
    // One source, so the three kernels come from one compiled program (the context caches it).
    source_ = constant_matrices(ref, f64) + maxwell_kernel_source;
    surface_ = xgpu::KernelTemplate(ctx, source_, "dg_surface").get(params);
    update_ = xgpu::KernelTemplate(ctx, source_, "dg_update").get(params);

    dr_ = upload(transpose(ref.dr).a);
    if (f64 && has_mma_f64(info)) mma_ = upload(mma_fragments(ref));
    if (!f64 && has_mma_tf32(info)) {
        const auto bits = tf32_fragments(ref);
        mma_ = ctx_.alloc(bits.size() * 4);
        queue_.write(mma_, bits.data(), bits.size() * 4);
    }
    ds_ = upload(transpose(ref.ds).a);
    lift_ = upload(transpose(ref.lift).a);
    std::vector<double> vgeo(4 * std::size_t(k_)), sgeo(3 * std::size_t(k_) * faces);
    for (int e = 0; e < k_; ++e) {
        const auto i = std::size_t(e);
        vgeo[4 * i] = mesh.rx[i];
        vgeo[4 * i + 1] = mesh.sx[i];
        vgeo[4 * i + 2] = mesh.ry[i];
        vgeo[4 * i + 3] = mesh.sy[i];
    }
    for (std::size_t f = 0; f < std::size_t(k_) * faces; ++f) {
        sgeo[3 * f] = mesh.nx[f];
        sgeo[3 * f + 1] = mesh.ny[f];
        sgeo[3 * f + 2] = 0.5 * mesh.fscale[f];
    }
    vgeo_ = upload(vgeo);
    sgeo_ = upload(sgeo);
    const std::size_t map_bytes = mesh.vmap_m.size() * sizeof(std::int32_t);
    vmap_m_ = ctx.alloc(map_bytes);
    vmap_p_ = ctx.alloc(map_bytes);
    queue_.write(vmap_m_, mesh.vmap_m.data(), map_bytes);
    queue_.write(vmap_p_, mesh.vmap_p.data(), map_bytes);
    const std::size_t state_bytes = fields * d.nodes() * value_size_;
    q_ = ctx.alloc(state_bytes);
    rhs_ = ctx.alloc(state_bytes);
    res_ = ctx.alloc(state_bytes);
    for (const auto* b : {&q_, &rhs_, &res_}) {
        if (f64)
            queue_.fill(*b, 0.0);
        else
            queue_.fill(*b, 0.0f);
    }
    // The volume kernel's granularity: as the options say, else from the tuning database (per
    // XGPU_AUTOTUNE) with the measured default as its start.
    if (!shape_given) tune_volume(params);
    volume_ = xgpu::KernelTemplate(ctx, source_, "dg_volume").get(granular(params, {npw_, vepb_, vb_, vew_, epw_}));
}

void DeviceMaxwell::tune_volume(const xgpu::KernelTemplate::Parameters& params) {
    const int np = d_->ref.np;
    const auto& info = ctx_.device().info();
    const bool local_matrices = options_.matrices_in_local;
    const std::size_t value = value_size_;
    xgpu::tune::Space space;
    space.params = {{"NPW", {}},
                    {"VEPB", {1, 2, 4, 8, 16, 32, 64, 128}},
                    {"VB", {0, 1, 2, 4, 16}},
                    {"VEW", {0, 1, 2, 3, 4}},
                    {"EPW", {1, 2, 4}}};
    // Form 1 takes an element's nodes in 1-4 parts (NPW = NP, ceil(NP / 2), ...).
    for (const std::int64_t w : {1, 2, 3, 4, 6, (np + 3) / 4, (np + 2) / 3, (np + 1) / 2, np})
        if (w <= np &&
            std::find(space.params[0].values.begin(), space.params[0].values.end(), w) == space.params[0].values.end())
            space.params[0].values.push_back(w);
    std::sort(space.params[0].values.begin(), space.params[0].values.end());
    if (std::find(space.params[1].values.begin(), space.params[1].values.end(), vepb_) == space.params[1].values.end())
        space.params[1].values.push_back(vepb_);
    std::sort(space.params[1].values.begin(), space.params[1].values.end());
    const auto point_shape = [](const xgpu::tune::Point& pt) {
        return VolumeShape{int(pt.at("NPW")), int(pt.at("VEPB")), int(pt.at("VB")), int(pt.at("VEW")),
                           int(pt.at("EPW"))};
    };
    const bool mma = value_size_ == 8 && has_mma_f64(info), tf32 = value_size_ == 4 && has_mma_tf32(info);
    space.valid = [=, &info](const xgpu::tune::Point& pt) {
        const VolumeShape g = point_shape(pt);
        // Each form's own parameters only: the others stay at their neutral values.
        const bool form_ok =
            g.vew == 0   ? (g.vb == 0 || g.npw == 1) && g.epw == 1
            : g.vew == 1 ? 4 * g.npw >= np && g.vb <= 4 && g.epw == 1 && g.vepb >= 16
            : g.vew == 2 ? g.vb == 0 && g.npw >= 2 && g.vepb >= 16 && g.vepb % g.epw == 0
                         : (g.vew == 3 ? mma : tf32) && g.npw == 1 && g.epw == 1 && g.vb >= 1 && g.vepb % 8 == 0;
        const std::size_t items = volume_items(np, g);
        return g.npw >= 1 && g.npw <= np && form_ok && items <= info.max_work_group_size && items <= 1024 &&
               value * volume_local_values(np, g, local_matrices) <= info.static_local_memory;
    };
    const xgpu::tune::Point start{{"NPW", npw_}, {"VEPB", vepb_}, {"VB", vb_}, {"VEW", vew_}, {"EPW", epw_}};
    // Timed on this operator's own mesh, from a state of rough values (restored to zero after).
    const auto problem = [&] {
        std::vector<double> rough(fields * d_->nodes());
        for (std::size_t i = 0; i < rough.size(); ++i)
            rough[i] = std::sin(0.7 * double(i)) + 0.25 * std::cos(3.1 * double(i % 97));
        set_state(rough);
        xgpu::tune::Problem pr;
        pr.prepare = [this, params, np, point_shape](const xgpu::tune::Point& pt) {
            const xgpu::Kernel k =
                xgpu::KernelTemplate(ctx_, source_, "dg_volume").get(granular(params, point_shape(pt)));
            const xgpu::Grid grid = volume_grid(k_, np, point_shape(pt));
            return std::function<void()>([this, k, grid, &a = volume_matrices(int(pt.at("VEW")))] {
                k.launch(ctx_.current_queue(), grid, k_, knp_, a, ds_, vgeo_, q_, rhs_);
            });
        };
        pr.result = [this] { return rhs_values(); };
        // The same sums in other orders (contracted or not, in steps of 4 on the tensor cores):
        // on a fine mesh the terms reach 1e4-1e5 (rx ~ M, Dr entries ~ 10 N) and a cancelling sum
        // keeps their rounding, so 1e-12 could refuse a right variant; a wrong one errs by O(1).
        pr.tolerance = value_size_ == 8 ? 1e-10 : 1e-5;
        return pr;
    };
    // Version 5: form 3 rewritten, offered on NVIDIA's OpenCL too, VB 2 in the space;
    // 6: form 4 (f32, TF32 tensor cores) in the space; 7: form 1's NPW counts nodes (NP: one
    // work-item an element, as form 1 was before), split into up to 4 parts; 8: every form takes
    // the curl with two products (forms 1, 3, 4 since e9fd69b, the others since 0bb73ea).
    const xgpu::tune::Key key{"dg_volume", 8,
                              std::string(value_size_ == 8 ? "f64" : "f32") + ",N" + std::to_string(d_->ref.order) +
                                  (local_matrices ? ",local" : ""),
                              std::uint64_t(k_) * std::uint64_t(np)};
    const auto sel = xgpu::tune::select(ctx_, key, space, start, problem);
    npw_ = int(sel.point.at("NPW"));
    vepb_ = int(sel.point.at("VEPB"));
    vb_ = int(sel.point.at("VB"));
    vew_ = int(sel.point.at("VEW"));
    epw_ = int(sel.point.at("EPW"));
    if (sel.result) { // the problem's state: back to zero
        if (value_size_ == 8)
            queue_.fill(q_, 0.0);
        else
            queue_.fill(q_, 0.0f);
    }
}

xgpu::Buffer DeviceMaxwell::upload(const std::vector<double>& values) const {
    auto b = ctx_.alloc(values.size() * value_size_);
    if (value_size_ == 8) {
        queue_.write(b, values.data(), values.size() * 8);
    } else {
        const std::vector<float> f(values.begin(), values.end());
        queue_.write(b, f.data(), f.size() * 4);
    }
    return b;
}

std::vector<double> DeviceMaxwell::download(const xgpu::Buffer& b, std::size_t n) const {
    std::vector<double> out(n);
    if (value_size_ == 8) {
        queue_.read(b, out.data(), n * 8);
    } else {
        std::vector<float> f(n);
        queue_.read(b, f.data(), n * 4);
        std::copy(f.begin(), f.end(), out.begin());
    }
    return out;
}

void DeviceMaxwell::set_state(const std::vector<double>& q) {
    const std::size_t n = fields * d_->nodes();
    if (q.size() != n)
        throw xgpu::InvalidArgument("dg: a state of " + std::to_string(q.size()) + " values, expected " +
                                    std::to_string(n));
    if (value_size_ == 8) {
        queue_.write(q_, q.data(), n * 8);
        queue_.fill(res_, 0.0);
    } else {
        const std::vector<float> f(q.begin(), q.end());
        queue_.write(q_, f.data(), n * 4);
        queue_.fill(res_, 0.0f);
    }
}

std::vector<double> DeviceMaxwell::state() const {
    return download(q_, fields * d_->nodes());
}
std::vector<double> DeviceMaxwell::rhs_values() const {
    return download(rhs_, fields * d_->nodes());
}

void DeviceMaxwell::volume() const {
    volume_.launch(queue_, volume_grid(k_, d_->ref.np, {npw_, vepb_, vb_, vew_, epw_}), k_, knp_, volume_matrices(vew_),
                   ds_, vgeo_, q_, rhs_);
}

void DeviceMaxwell::surface() const {
    const std::size_t per_group = std::size_t(epb_) * std::size_t(sb_ ? sb_ : 1);
    const std::size_t groups = (std::size_t(k_) + per_group - 1) / per_group, local = std::size_t(epb_) * d_->ref.np;
    surface_.launch(queue_, xgpu::Grid{groups * local, local}, k_, knp_, lift_, sgeo_, vmap_m_, vmap_p_, q_, rhs_);
}

void DeviceMaxwell::update(double a, double b, double dt) const {
    const std::int32_t n = fields * knp_;
    const std::size_t local = 256, global = (std::size_t(n) + local - 1) / local * local;
    if (value_size_ == 8)
        update_.launch(queue_, xgpu::Grid{global, local}, n, a, b, dt, q_, res_, rhs_);
    else
        update_.launch(queue_, xgpu::Grid{global, local}, n, float(a), float(b), float(dt), q_, res_, rhs_);
}

void DeviceMaxwell::rhs() const {
    volume();
    surface();
}

void DeviceMaxwell::step(double dt) const {
    for (int stage = 0; stage < 5; ++stage) {
        rhs();
        update(rk4a[stage], rk4b[stage], dt);
    }
}

KernelCost DeviceMaxwell::volume_cost() const {
    const double np = d_->ref.np, k = k_, w = double(value_size_);
    // Ez' as Dr (rx Hy - ry Hx) + Ds (sx Hy - sy Hx) (every form): 4 NP multiply-adds a node and
    // 13 flops for the combinations and the chain rule.
    return {k * np * (8 * np + 13), w * (k * (6 * np + 4) + 2 * np * np)};
}

KernelCost DeviceMaxwell::surface_cost() const {
    const double np = d_->ref.np, nfn = faces * d_->ref.nfp, k = k_, w = double(value_size_);
    return {k * (nfn * 24 + np * (6 * nfn + 3)),
            k * (nfn * (2 * 4 + 6 * w) + faces * 3 * w + 6 * np * w) + w * nfn * np};
}

KernelCost DeviceMaxwell::update_cost() const {
    const double n = fields * double(knp_);
    return {5 * n, 5 * n * double(value_size_)};
}

} // namespace dg
