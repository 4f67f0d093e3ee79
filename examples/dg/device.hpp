// The DG Maxwell operator on an xgpu device: the state q (Hx, Hy, Ez), the RK residual and the
// right-hand side in xgpu::Arrays; the volume and surface kernels (volume.kernel, surface.kernel)
// compiled for this order, precision and launch shape; the RK update through the array layer.
//
//   dg::DeviceMaxwell op(ctx, disc, {.precision = "f32"});
//   op.set_state(dg::cavity_mode(disc, 1, 1, 0));
//   for (long s = 0; s < steps; ++s) op.step(dt);
//   auto q = op.state();
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <xgpu/array.hpp>
#include <xgpu/elementwise.hpp>
#include <xgpu/template.hpp>
#include <xgpu/xgpu.hpp>

#include "maxwell.hpp"

namespace dg {

// The text of a kernel file of this folder (embedded at build time: see CMakeLists.txt).
std::string_view kernel_file(std::string_view name);

// The volume kernel's launch shape (volume.kernel): the form (0 portable, 1 constant matrices, 3
// f64 tensor cores), nodes a work-item (form 0) or a part (form 1; an element in ceil(NP / npw) <=
// 4 parts), elements a work-group (0: about as many work-items as the surface kernel's group) and
// batches a work-group (form 3).
struct VolumeShape {
    int form = 0, npw = 1, vepb = 0, vb = 0;
};
// The surface kernel's (surface.kernel): elements a work-group, batches with LIFT's rows in
// registers (0: LIFT from memory), and whether the fluxes are read back 16 bytes at a time.
struct SurfaceShape {
    int epb = 1, sb = 0, sv = 0;
};

struct DeviceOptions {
    std::string precision = "f64"; // f64 or f32
    // Unset: the volume shape comes from xgpu::tune (family "dg_volume"): the tuning database's
    // entry per XGPU_AUTOTUNE, else default_volume_shape. The surface shape: default_surface_shape.
    std::optional<VolumeShape> volume = {};
    std::optional<SurfaceShape> surface = {};
};

// Whether the device has the f64 tensor cores of form 3: NVIDIA, compute capability 8.0 or later,
// with doubles, on either backend (mma.kernel).
inline bool has_mma_f64(const xgpu::DeviceInfo& info) {
    return info.nv_compute_capability >= 80 && info.fp64;
}
VolumeShape default_volume_shape(int order, bool cpu, bool f64, bool mma);
SurfaceShape default_surface_shape(int order, bool cpu, bool f64);

// The source the kernels are compiled from (mma.kernel, Dr and Ds as constants, volume.kernel,
// surface.kernel) and its parameters for these shapes (the #define lines KernelTemplate writes).
std::string kernel_source(const ReferenceElement& ref, bool f64);
xgpu::KernelTemplate::Parameters kernel_parameters(const ReferenceElement& ref, bool f64, const VolumeShape& v,
                                                   const SurfaceShape& s);

// The flops and bytes one call of each kernel moves, counted from the algorithm (not measured):
//   volume : Ez' = Dr P + Ds Q, Hx' and Hy' from Dr Ez and Ds Ez: 8 NP + 13 flops a node; reads 3
//            fields and 4 geometric factors an element, writes 3 fields.
//   surface: per face node 3 jumps, the normal jump and 3 scaled fluxes = 24 flops; per node
//            6 NFN + 3 flops (LIFT); reads vmapM, vmapP (int32), 6 field values (inside and
//            outside), 3 face factors a face, and rhs; writes rhs.
//   update : per value 5 flops (res = a res + dt rhs, q += b res); reads q, res, rhs, writes q, res.
// The operator matrices are counted once a call (they come from the caches after that).
struct KernelCost {
    double flops = 0, bytes = 0;
};

class DeviceMaxwell {
public:
    // Keeps a pointer to `d`, which must outlive the operator.
    DeviceMaxwell(const xgpu::Context& ctx, const Discretization& d, DeviceOptions options = {});

    void set_state(const std::vector<double>& q);
    std::vector<double> state() const { return download(0); }
    std::vector<double> rhs_values() const { return download(2); }

    void rhs() const { // rhs = L(q)
        volume();
        surface();
    }
    void step(double dt) const;                          // five stages of rhs() and the update
    void volume() const { launch_volume(volume_, vs_); } // the kernels one at a time (for timing)
    void surface() const;
    void update(double a, double b, double dt) const; // res = a res + dt rhs; q += b res

    std::array<KernelCost, 3> costs() const; // volume, surface, update

    const VolumeShape& volume_shape() const { return vs_; }
    const SurfaceShape& surface_shape() const { return ss_; }

private:
    // The state q, the residual and the right-hand side (0, 1, 2): three blocks (Hx, Hy, Ez) of
    // K NP values each, in the kernels' precision.
    template <class T> using Fields = std::array<xgpu::Array<T>, 3>;
    std::variant<Fields<float>, Fields<double>> fields_;

    xgpu::Context ctx_;
    const Discretization* d_;
    VolumeShape vs_;
    SurfaceShape ss_;
    std::string source_;
    bool f64_ = true, mma_f64_ = false;
    std::int32_t k_ = 0, knp_ = 0;
    xgpu::Kernel volume_, surface_;
    std::optional<xgpu::ElementwiseKernel> update_;
    // Dr, Ds and LIFT transposed, Dr and Ds as form 3's A fragments (where the device has the
    // tensor cores), the geometric factors and the face maps.
    xgpu::Buffer dr_, ds_, lift_, mma_, vgeo_, sgeo_, vmap_m_, vmap_p_;

    std::string shape_error(const VolumeShape& v) const; // empty where `v` and ss_ can run here
    void choose_volume_shape();                          // through xgpu::tune
    void launch_volume(const xgpu::Kernel& k, const VolumeShape& v) const;
    xgpu::Buffer upload(const std::vector<double>& values) const;
    const xgpu::Buffer& buffer(int which) const;
    std::vector<double> download(int which) const;
};

} // namespace dg
