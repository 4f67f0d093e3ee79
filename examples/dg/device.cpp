#include "device.hpp"

#include <xgpu/tune.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <set>
#include <string>

namespace dg {

namespace {

// The volume kernel's work-items a group and local memory in values.
std::size_t volume_items(int np, const VolumeShape& v) {
    return v.form == 3 ? std::size_t(v.vepb) * 4 : std::size_t(v.vepb) * ((np + v.npw - 1) / v.npw);
}
std::size_t volume_local_values(int np, const VolumeShape& v) {
    const std::size_t ks = (np + 3) / 4, us = (4 * ks + 11) / 16 * 16 + 4; // form 3's rows (volume.kernel)
    return v.form == 3 ? std::size_t(v.vepb) * (3 * us + 4) : 3 * std::size_t(v.vepb) * (v.form == 1 ? np | 1 : np);
}

// Dr and Ds as form 3 reads them: for node tile nt (8 rows), column step ks (4 columns) and matrix
// w (Dr, Ds), lane l = 4 g + t holds entry (8 nt + g, 4 ks + t), zero past NP.
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

} // namespace

// The launch shapes where the options and the tuning database give none. CPUs (PoCL runs a
// work-group as a loop on one core): about 32 work-items, one node each, form 0. GPUs: each row is
// the fastest of the candidates in `dg --order N --mesh M --final-time 0.01 --precision P --volume
// F NPW VEPB VB` (M for about 2 million dofs, XGPU_AUTOTUNE=off) on CUDA and NVIDIA's OpenCL,
// which agree within a few per cent; XGPU_AUTOTUNE=on searches the same space on the device at hand.
VolumeShape default_volume_shape(int order, bool cpu, bool f64, bool mma) {
    const int np = (order + 1) * (order + 2) / 2;
    if (cpu) return {0, 1, 0, 0};
    // f64 N = 4-7 on the tensor cores (form 3): 16 or 32 elements a group, 4 batches at N = 4.
    if (f64 && mma && order >= 4 && order <= 7) return {3, 1, order == 5 || order == 6 ? 16 : 32, order == 4 ? 4 : 1};
    // Form 1, an element in 1, 2 or 4 parts: f32 N = 3-7; f64 N = 3 and 5, whose constants cannot
    // be immediate operands and whose unrolled code spills at higher orders.
    if (!f64 && order >= 3 && order <= 7)
        return {1, order == 3 ? np : order == 7 ? (np + 3) / 4 : (np + 1) / 2, order == 3 || order == 5 ? 64 : 32, 0};
    if (f64 && (order == 3 || order == 5)) return {1, (np + 1) / 2, order == 3 ? 32 : 64, 0};
    // The rest, f64 N = 6 and 7 without tensor cores included, form 0: it keeps only NPW partial
    // sums in registers, where form 1 holds the element's values and unrolls NP^2 products (254
    // registers and spills in f64 at N >= 4); two nodes a work-item at N = 4.
    return {0, order == 4 ? 2 : 1, 0, 0};
}

SurfaceShape default_surface_shape(int order, bool cpu, bool f64) {
    const int np = (order + 1) * (order + 2) / 2;
    if (cpu) return {std::max(1, 32 / np), 0, 0};
    // At most 256 work-items (NVIDIA's OpenCL allows no more for this kernel); chosen by `dg
    // --surface EPB SB SV` runs as above (N = 3 and 8: about 128 work-items, not swept).
    switch (order) {
    case 4: return {17, 0, 0};                                          // 255 work-items
    case 5: return {6, 0, f64 ? 0 : 1};                                 // 126
    case 6: return {9, 0, f64 ? 0 : 1};                                 // 252
    case 7: return f64 ? SurfaceShape{4, 0, 0} : SurfaceShape{6, 3, 1}; // 144; f32: 216 over 3 batches
    default: return {std::max(1, 128 / np), 0, 0};
    }
}

std::string kernel_source(const ReferenceElement& ref, bool f64) {
    // Dr and Ds as program-scope constants c_dr, c_ds (row-major) for form 1, printed to
    // round-trip: %.17e for double, %.9e with an f suffix for float (no double literal where a
    // device lacks doubles).
    std::string text(kernel_file("mma.kernel"));
    char buf[48];
    for (const auto& [name, m] : {std::pair{"c_dr", &ref.dr}, std::pair{"c_ds", &ref.ds}}) {
        text += "XGPU_CONSTANT T " + std::string(name) + "[NP * NP] = {";
        for (std::size_t i = 0; i < m->a.size(); ++i) {
            const double x = f64 ? m->a[i] : double(float(m->a[i]));
            std::snprintf(buf, sizeof buf, f64 ? "%s%.17e" : "%s%.9ef", i ? ", " : "", x);
            text += buf;
        }
        text += "};\n";
    }
    return text + std::string(kernel_file("volume.kernel")) + std::string(kernel_file("surface.kernel"));
}

xgpu::KernelTemplate::Parameters kernel_parameters(const ReferenceElement& ref, bool f64, const VolumeShape& v,
                                                   const SurfaceShape& s) {
    // clang-format off
    return {{"T", f64 ? "double" : "float"}, {"NP", ref.np}, {"NFP", ref.nfp}, {"TV", f64 ? "double2" : "float4"},
            {"TVN", f64 ? 2 : 4}, {"EPB", s.epb}, {"SB", s.sb}, {"SV", s.sv},
            {"FORM", v.form}, {"NPW", v.npw}, {"VEPB", v.vepb}, {"VB", v.vb}};
    // clang-format on
}

DeviceMaxwell::DeviceMaxwell(const xgpu::Context& ctx, const Discretization& d, DeviceOptions options)
    : ctx_(ctx), d_(&d), f64_(options.precision == "f64") {
    const auto& ref = d.ref;
    const auto& info = ctx.device().info();
    const bool cpu = ctx.device().type() == xgpu::DeviceType::cpu;
    mma_f64_ = f64_ && has_mma_f64(info);
    const auto refuse = [](const std::string& why) { throw xgpu::InvalidArgument("dg: " + why); };
    if (!f64_ && options.precision != "f32") refuse("precision '" + options.precision + "' is neither f32 nor f64");
    if (f64_ && !ctx.device().has_fp64()) refuse("precision f64 on " + info.name + ", which has no double precision");
    if (double(fields) * double(d.nodes()) > double(std::numeric_limits<std::int32_t>::max()))
        refuse(std::to_string(d.nodes()) + " nodes per field exceed 32-bit indices");
    const int np = ref.np;
    k_ = d.mesh.k;
    knp_ = std::int32_t(d.nodes());

    // The launch shapes: as given, else the defaults (the volume's then through the tuner, below).
    ss_ = options.surface.value_or(default_surface_shape(ref.order, cpu, f64_));
    vs_ = options.volume.value_or(default_volume_shape(ref.order, cpu, f64_, mma_f64_));
    if (vs_.vepb == 0 && vs_.npw >= 1)
        vs_.vepb = vs_.form ? 32 : std::max(1, ss_.epb * np / ((np + vs_.npw - 1) / vs_.npw));
    if (const auto why = shape_error(vs_); !why.empty()) refuse(why);

    // The operator's data: matrices transposed (the work-items of an element read consecutive
    // entries), the geometric factors an element and a face, the face maps.
    dr_ = upload(transpose(ref.dr).a);
    if (mma_f64_) mma_ = upload(mma_fragments(ref));
    ds_ = upload(transpose(ref.ds).a);
    lift_ = upload(transpose(ref.lift).a);
    std::vector<double> vgeo, sgeo;
    for (int e = 0; e < k_; ++e)
        vgeo.insert(vgeo.end(), {d.mesh.rx[e], d.mesh.sx[e], d.mesh.ry[e], d.mesh.sy[e]});
    for (std::size_t f = 0; f < std::size_t(k_) * faces; ++f)
        sgeo.insert(sgeo.end(), {d.mesh.nx[f], d.mesh.ny[f], 0.5 * d.mesh.fscale[f]});
    vgeo_ = upload(vgeo);
    sgeo_ = upload(sgeo);
    vmap_m_ = xgpu::to_device(ctx, d.mesh.vmap_m).buffer();
    vmap_p_ = xgpu::to_device(ctx, d.mesh.vmap_p).buffer();

    // The fields, zero; the RK update, one fused kernel over all three fields (5 values a degree of
    // freedom; as two array statements, res = a * res + dt * rhs and q += b * res, it would move 6).
    // Its loads come before its stores: the arrays' pointers may alias, so a load after a store
    // could not be moved ahead of it.
    const std::size_t n = fields * d.nodes();
    const auto zeros = [&]<class T>(T) {
        return Fields<T>{xgpu::zeros<T>(ctx, {n}), xgpu::zeros<T>(ctx, {n}), xgpu::zeros<T>(ctx, {n})};
    };
    if (f64_)
        fields_ = zeros(0.0);
    else
        fields_ = zeros(0.0f);
    const std::string t = f64_ ? "double" : "float";
    update_.emplace(ctx, t + " a, " + t + " b, " + t + " dt, " + t + "* q, " + t + "* res, const " + t + "* rhs",
                    "const " + t + " r = a * res[i] + dt * rhs[i], qi = q[i]; res[i] = r; q[i] = qi + b * r",
                    "dg_update");

    // One source, so that both kernels come from one compiled program (the context caches it).
    source_ = kernel_source(ref, f64_);
    if (!options.volume) choose_volume_shape();
    const auto params = kernel_parameters(ref, f64_, vs_, ss_);
    surface_ = xgpu::KernelTemplate(ctx, source_, "dg_surface").get(params);
    volume_ = xgpu::KernelTemplate(ctx, source_, "dg_volume").get(params);
}

// Why the volume shape `v` and the surface shape ss_ cannot run on this device (an empty string:
// they can): the shapes' own rules, then the work-groups' sizes and their local memory.
std::string DeviceMaxwell::shape_error(const VolumeShape& v) const {
    const auto& info = ctx_.device().info();
    const int np = d_->ref.np;
    const auto n = [](auto x) { return std::to_string(x); };
    if (ss_.epb < 1 || ss_.sb < 0 || ss_.sv < 0 || ss_.sv > 1)
        return "surface shape " + n(ss_.epb) + " " + n(ss_.sb) + " " + n(ss_.sv) +
               ": elements per group >= 1, batches >= 0, vector 0 or 1";
    if (v.form != 0 && v.form != 1 && v.form != 3) return "volume kernel form " + n(v.form) + " is not 0, 1 or 3";
    if (v.form == 3 && !mma_f64_)
        return "volume kernel form 3 (tensor cores) needs f64 on an NVIDIA device of compute capability 8.0 or later";
    if (v.npw < 1 || v.npw > np) return "nodes per work-item " + n(v.npw) + " outside 1.." + n(np);
    if (v.form == 1 && 4 * v.npw < np)
        return "volume kernel form 1 splits an element among at most 4 work-items, not " + n((np + v.npw - 1) / v.npw);
    if (v.vepb < 1) return "volume elements per group " + n(v.vepb) + " < 1";
    if (v.form == 3 && (v.npw != 1 || v.vepb % 8 || v.vb < 1))
        return "volume kernel form 3 takes 1 node per work-item, a multiple of 8 elements per group and batches >= 1";
    if (v.form != 3 && v.vb) return "volume batches " + n(v.vb) + " (only form 3 takes them)";
    for (const auto& [items, what] :
         {std::pair{volume_items(np, v), "volume"}, std::pair{std::size_t(ss_.epb) * np, "surface"}})
        if (items > info.max_work_group_size)
            return "the " + std::string(what) + " kernel's " + n(items) +
                   " work-items a group exceed the device's work-group size " + n(info.max_work_group_size);
    const std::size_t value = f64_ ? 8 : 4, nfn = faces * std::size_t(d_->ref.nfp), tvn = 16 / value;
    const std::size_t local = value * std::max(volume_local_values(np, v),
                                               3 * std::size_t(ss_.epb) * (ss_.sv ? (nfn + tvn - 1) / tvn * tvn : nfn));
    if (local > info.static_local_memory)
        return "the kernels need " + n(local) + " bytes of local memory, the device offers " +
               n(info.static_local_memory);
    return "";
}

// The volume shape per XGPU_AUTOTUNE (xgpu/tune.hpp): the database's entry, or tuned now on this
// mesh, or the default (vs_) as it stands.
void DeviceMaxwell::choose_volume_shape() {
    const int np = d_->ref.np;
    // Nodes a work-item: a few small counts and an element in 1-4 parts; elements a group: powers of 2.
    std::set<std::int64_t> npw{vs_.npw}, vepb{1, 2, 4, 8, 16, 32, 64, 128, vs_.vepb};
    for (const std::int64_t w : {1, 2, 3, 4, 6, (np + 3) / 4, (np + 2) / 3, (np + 1) / 2, np})
        if (w <= np) npw.insert(w);
    xgpu::tune::Space space;
    space.params = {{"FORM", {0, 1, 3}},
                    {"NPW", {npw.begin(), npw.end()}},
                    {"VEPB", {vepb.begin(), vepb.end()}},
                    {"VB", {0, 1, 2, 4}}};
    const auto shape = [](const xgpu::tune::Point& p) {
        return VolumeShape{int(p.at("FORM")), int(p.at("NPW")), int(p.at("VEPB")), int(p.at("VB"))};
    };
    // The shapes that run here, less form 1 under 16 elements a group and groups over 1024 work-items.
    space.valid = [this, np, shape](const xgpu::tune::Point& p) {
        const VolumeShape v = shape(p);
        return shape_error(v).empty() && (v.form != 1 || v.vepb >= 16) && volume_items(np, v) <= 1024;
    };
    const auto problem = [&] {
        // Timed on this operator's mesh, from rough values (the state goes back to zero after).
        std::vector<double> rough(fields * d_->nodes());
        for (std::size_t i = 0; i < rough.size(); ++i)
            rough[i] = std::sin(0.7 * double(i)) + 0.25 * std::cos(3.1 * double(i % 97));
        set_state(rough);
        xgpu::tune::Problem pr;
        pr.prepare = [this, shape](const xgpu::tune::Point& p) {
            const VolumeShape v = shape(p);
            const auto k =
                xgpu::KernelTemplate(ctx_, source_, "dg_volume").get(kernel_parameters(d_->ref, f64_, v, ss_));
            return std::function<void()>([this, k, v] { launch_volume(k, v); });
        };
        pr.result = [this] { return rhs_values(); };
        // The same sums in other orders: on a fine mesh the terms reach 1e4-1e5 (rx ~ M, Dr ~ 10 N)
        // and a cancelling sum keeps their rounding; a wrong variant errs by O(1).
        pr.tolerance = f64_ ? 1e-10 : 1e-5;
        return pr;
    };
    const xgpu::tune::Key key{"dg_volume", 9, std::string(f64_ ? "f64" : "f32") + ",N" + std::to_string(d_->ref.order),
                              std::uint64_t(k_) * std::uint64_t(np)};
    const xgpu::tune::Point start{{"FORM", vs_.form}, {"NPW", vs_.npw}, {"VEPB", vs_.vepb}, {"VB", vs_.vb}};
    const auto sel = xgpu::tune::select(ctx_, key, space, start, problem);
    vs_ = shape(sel.point);
    if (sel.result) set_state(std::vector<double>(fields * d_->nodes(), 0.0));
}

// Host values onto the device, in the kernels' precision.
xgpu::Buffer DeviceMaxwell::upload(const std::vector<double>& values) const {
    if (f64_) return xgpu::to_device(ctx_, values).buffer();
    return xgpu::to_device(ctx_, std::vector<float>(values.begin(), values.end())).buffer();
}

// The kernels take the arrays' buffers: each array is a whole allocation (offset 0), which the
// kernels index from its start.
const xgpu::Buffer& DeviceMaxwell::buffer(int which) const {
    return std::visit([which](const auto& f) -> const xgpu::Buffer& { return f[which].buffer(); }, fields_);
}

std::vector<double> DeviceMaxwell::download(int which) const {
    return std::visit(
        [which](const auto& f) {
            const auto v = f[which].get();
            return std::vector<double>(v.begin(), v.end());
        },
        fields_);
}

void DeviceMaxwell::set_state(const std::vector<double>& q) {
    if (q.size() != fields * d_->nodes())
        throw xgpu::InvalidArgument("dg: a state of " + std::to_string(q.size()) + " values, expected " +
                                    std::to_string(fields * d_->nodes()));
    std::visit(
        [&q]<class T>(const Fields<T>& f) {
            f[0].set(std::span<const T>(std::vector<T>(q.begin(), q.end())));
            f[1].fill(T(0));
        },
        fields_);
}

// The volume kernel `k` of shape `v` over the mesh: VEPB elements a group, VB batches of them (form 3).
void DeviceMaxwell::launch_volume(const xgpu::Kernel& k, const VolumeShape& v) const {
    const std::size_t local = volume_items(d_->ref.np, v), per_group = std::size_t(v.vepb) * std::max(v.vb, 1);
    k.launch(ctx_.current_queue(), xgpu::Grid{(std::size_t(k_) + per_group - 1) / per_group * local, local}, k_, knp_,
             v.form == 3 ? mma_ : dr_, ds_, vgeo_, buffer(0), buffer(2));
}

void DeviceMaxwell::surface() const {
    const std::size_t per_group = std::size_t(ss_.epb) * std::size_t(std::max(ss_.sb, 1));
    const std::size_t groups = (std::size_t(k_) + per_group - 1) / per_group, local = std::size_t(ss_.epb) * d_->ref.np;
    surface_.launch(ctx_.current_queue(), xgpu::Grid{groups * local, local}, k_, knp_, lift_, sgeo_, vmap_m_, vmap_p_,
                    buffer(0), buffer(2));
}

void DeviceMaxwell::update(double a, double b, double dt) const {
    std::visit([&]<class T>(const Fields<T>& f) { (*update_)(T(a), T(b), T(dt), f[0], f[1], f[2]); }, fields_);
}

void DeviceMaxwell::step(double dt) const {
    for (int stage = 0; stage < 5; ++stage) {
        rhs();
        update(rk4a[stage], rk4b[stage], dt);
    }
}

std::array<KernelCost, 3> DeviceMaxwell::costs() const {
    const double np = d_->ref.np, nfn = faces * d_->ref.nfp, k = k_, w = f64_ ? 8 : 4, n = fields * double(knp_);
    return {
        KernelCost{k * np * (8 * np + 13), w * (k * (6 * np + 4) + 2 * np * np)},
        {k * (nfn * 24 + np * (6 * nfn + 3)), k * (nfn * (2 * 4 + 6 * w) + faces * 3 * w + 6 * np * w) + w * nfn * np},
        {5 * n, 5 * n * w}};
}

} // namespace dg
