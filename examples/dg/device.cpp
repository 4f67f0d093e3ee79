#include "device.hpp"

#include <xgpu/tune.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace dg {

namespace {

// `params` with the volume kernel's NPW, VEPB and VB set to these values.
xgpu::KernelTemplate::Parameters granular(xgpu::KernelTemplate::Parameters params, std::int64_t npw, std::int64_t vepb,
                                          std::int64_t vb) {
    for (auto& [name, value] : params) {
        if (name == "NPW") value = npw;
        if (name == "VEPB") value = vepb;
        if (name == "VB") value = vb;
    }
    return params;
}

// The volume kernel's grid: VEPB elements (or VB batches of them) per work-group.
xgpu::Grid volume_grid(std::int32_t k, int np, std::int64_t npw, std::int64_t vepb, std::int64_t vb) {
    const std::size_t local = std::size_t(vepb) * std::size_t((np + npw - 1) / npw);
    const std::size_t per_group = std::size_t(vepb) * std::size_t(vb > 0 ? vb : 1);
    return xgpu::Grid{(std::size_t(k) + per_group - 1) / per_group * local, local};
}

} // namespace

// Measured on the H200 (2026-12-01, examples/dg/granularity.sh, about 2 million dofs, CUDA; NVIDIA's
// OpenCL within a few per cent): two nodes a work-item are fastest at N = 4 in both precisions; at
// N = 5 and 6 matrix rows in registers win by 6-23% (f64: 16 batches of 3 or 4 elements, 84
// work-items; f32: 4 batches); at N >= 7 the rows (2 NP values each) no longer fit in registers and
// the first kernel wins in f64. On CPUs (PoCL) one node a work-item.
int default_nodes_per_item(int order, bool cpu) {
    return !cpu && order == 4 ? 2 : 1;
}

VolumeShape default_volume_shape(int order, bool cpu, bool f64) {
    if (cpu || order < 5 || order > 6) return {default_nodes_per_item(order, cpu), 0, 0};
    if (f64) return {1, order == 5 ? 4 : 3, 16};
    return {1, order == 5 ? 4 : 5, 4};
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
    epb_ = options_.elements_per_group ? options_.elements_per_group : std::max(1, (cpu ? 32 : 128) / np);
    const auto& info = ctx.device().info();
    if (options_.nodes_per_item < 0 || options_.nodes_per_item > np)
        throw xgpu::InvalidArgument("dg: nodes per work-item " + std::to_string(options_.nodes_per_item) +
                                    " outside 0.." + std::to_string(np) + " (order " + std::to_string(ref.order) + ")");
    if (options_.volume_batches < 0)
        throw xgpu::InvalidArgument("dg: volume batches " + std::to_string(options_.volume_batches) + " < 0");
    if (options_.volume_batches > 0 && options_.nodes_per_item > 1)
        throw xgpu::InvalidArgument("dg: volume batches " + std::to_string(options_.volume_batches) +
                                    " (matrix rows in registers) need 1 node per work-item, not " +
                                    std::to_string(options_.nodes_per_item));
    const bool shape_given = options_.nodes_per_item || options_.volume_elements_per_group || options_.volume_batches;
    const VolumeShape shape = shape_given ? VolumeShape{default_nodes_per_item(ref.order, cpu), 0, 0}
                                          : default_volume_shape(ref.order, cpu, f64);
    vb_ = options_.volume_batches ? options_.volume_batches : shape.vb;
    npw_ = options_.nodes_per_item ? options_.nodes_per_item : vb_ ? 1 : shape.npw;
    if (options_.volume_elements_per_group < 0)
        throw xgpu::InvalidArgument("dg: volume elements per group " +
                                    std::to_string(options_.volume_elements_per_group) + " < 0");
    const int per_element = (np + npw_ - 1) / npw_;
    vepb_ = options_.volume_elements_per_group ? options_.volume_elements_per_group
            : shape.vepb                       ? shape.vepb
                                               : std::max(1, epb_ * np / per_element);
    if (std::size_t(vepb_) * per_element > info.max_work_group_size)
        throw xgpu::InvalidArgument("dg: " + std::to_string(vepb_) + " elements per volume group of " +
                                    std::to_string(per_element) + " work-items exceed the device's work-group size " +
                                    std::to_string(info.max_work_group_size));
    if (std::size_t(epb_) * np > info.max_work_group_size)
        throw xgpu::InvalidArgument("dg: " + std::to_string(epb_) + " elements per group of " + std::to_string(np) +
                                    " nodes exceed the device's work-group size " +
                                    std::to_string(info.max_work_group_size));
    const std::size_t local_volume =
        value_size_ * (3 * std::size_t(vepb_) * np + (options_.matrices_in_local ? 2 * std::size_t(np) * np : 0));
    const std::size_t local_surface =
        value_size_ * (3 * std::size_t(epb_) * nfn + (options_.matrices_in_local ? std::size_t(nfn) * np : 0));
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
                                                  {"MAT_LOCAL", options_.matrices_in_local ? 1 : 0}};
    // One source, so the three kernels come from one compiled program (the context caches it).
    surface_ = xgpu::KernelTemplate(ctx, maxwell_kernel_source, "dg_surface").get(params);
    update_ = xgpu::KernelTemplate(ctx, maxwell_kernel_source, "dg_update").get(params);

    dr_ = upload(transpose(ref.dr).a);
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
    if (!options_.nodes_per_item && !options_.volume_elements_per_group && !options_.volume_batches)
        tune_volume(params);
    volume_ = xgpu::KernelTemplate(ctx, maxwell_kernel_source, "dg_volume").get(granular(params, npw_, vepb_, vb_));
}

void DeviceMaxwell::tune_volume(const xgpu::KernelTemplate::Parameters& params) {
    const int np = d_->ref.np;
    const auto& info = ctx_.device().info();
    const bool local_matrices = options_.matrices_in_local;
    const std::size_t value = value_size_;
    const auto per_element = [np](std::int64_t w) { return (np + w - 1) / w; };
    xgpu::tune::Space space;
    space.params = {{"NPW", {}}, {"VEPB", {1, 2, 4, 8, 16, 32}}, {"VB", {0, 1, 4, 16}}};
    for (const std::int64_t w : {1, 2, 3, 4, 6})
        if (w <= np) space.params[0].values.push_back(w);
    if (std::find(space.params[1].values.begin(), space.params[1].values.end(), vepb_) == space.params[1].values.end())
        space.params[1].values.push_back(vepb_);
    std::sort(space.params[1].values.begin(), space.params[1].values.end());
    space.valid = [=, &info](const xgpu::tune::Point& pt) {
        const std::int64_t w = pt.at("NPW"), e = pt.at("VEPB"), b = pt.at("VB");
        const std::size_t items = std::size_t(e * per_element(w));
        const std::size_t local = value * (3 * std::size_t(e) * np + (local_matrices ? 2 * std::size_t(np) * np : 0));
        return w >= 1 && w <= np && (b == 0 || w == 1) && items <= info.max_work_group_size && items <= 1024 &&
               local <= info.static_local_memory;
    };
    const xgpu::tune::Point start{{"NPW", npw_}, {"VEPB", vepb_}, {"VB", vb_}};
    // Timed on this operator's own mesh, from a state of rough values (restored to zero after).
    const auto problem = [&] {
        std::vector<double> rough(fields * d_->nodes());
        for (std::size_t i = 0; i < rough.size(); ++i)
            rough[i] = std::sin(0.7 * double(i)) + 0.25 * std::cos(3.1 * double(i % 97));
        set_state(rough);
        xgpu::tune::Problem pr;
        pr.prepare = [this, params, np](const xgpu::tune::Point& pt) {
            const xgpu::Kernel k = xgpu::KernelTemplate(ctx_, maxwell_kernel_source, "dg_volume")
                                       .get(granular(params, pt.at("NPW"), pt.at("VEPB"), pt.at("VB")));
            const xgpu::Grid grid = volume_grid(k_, np, pt.at("NPW"), pt.at("VEPB"), pt.at("VB"));
            return std::function<void()>(
                [this, k, grid] { k.launch(ctx_.current_queue(), grid, k_, knp_, dr_, ds_, vgeo_, q_, rhs_); });
        };
        pr.result = [this] { return rhs_values(); };
        pr.tolerance = value_size_ == 8 ? 1e-12 : 1e-5; // the same sums; contracted or not
        return pr;
    };
    const xgpu::tune::Key key{"dg_volume", 2,
                              std::string(value_size_ == 8 ? "f64" : "f32") + ",N" + std::to_string(d_->ref.order) +
                                  (local_matrices ? ",local" : ""),
                              std::uint64_t(k_) * std::uint64_t(np)};
    const auto sel = xgpu::tune::select(ctx_, key, space, start, problem);
    npw_ = int(sel.point.at("NPW"));
    vepb_ = int(sel.point.at("VEPB"));
    vb_ = int(sel.point.at("VB"));
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
    volume_.launch(queue_, volume_grid(k_, d_->ref.np, npw_, vepb_, vb_), k_, knp_, dr_, ds_, vgeo_, q_, rhs_);
}

void DeviceMaxwell::surface() const {
    const std::size_t groups = (std::size_t(k_) + epb_ - 1) / epb_, local = std::size_t(epb_) * d_->ref.np;
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
    return {k * np * (12 * np + 14), w * (k * (6 * np + 4) + 2 * np * np)};
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
