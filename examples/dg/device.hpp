// The DG Maxwell operator on an xgpu device: the state, the right-hand side and the RK stages in
// device buffers, the three kernels of maxwell_kernels.cpp compiled for this order and precision.
//
//   dg::DeviceMaxwell op(ctx, disc, {.precision = "f32"});
//   op.set_state(dg::cavity_mode(disc, 1, 1, 0));
//   for (long s = 0; s < steps; ++s) op.step(dt);
//   auto q = op.state();
#pragma once

#include <string>
#include <vector>

#include <xgpu/template.hpp>
#include <xgpu/xgpu.hpp>

#include "maxwell.hpp"

namespace dg {

extern const char* const maxwell_kernel_source;

struct DeviceOptions {
    std::string precision = "f64"; // f64 or f32
    // Elements per work-group (of the surface kernel, one work-item per node); 0:
    // default_surface_shape's.
    int elements_per_group = 0;
    // Dr, Ds and LIFT in local memory. Off by default: they are small and shared by every
    // work-group, so the caches serve them, and local memory is better spent on occupancy. On
    // PoCL (same runs as above) the local copy was slower at small groups (one element: N = 4
    // 1.05 against 0.76 ms, N = 7 8.0 against 4.8 ms) and within noise at 16 elements.
    bool matrices_in_local = false;
    // Nodes of an element per work-item in the volume kernel (1..NP), and its elements per
    // work-group. Both 0: xgpu::tune chooses them (family "dg_volume", keyed on precision, order
    // and size): the tuning database's entry per XGPU_AUTOTUNE (tuned on this mesh on first use
    // under `on`), else default_volume_shape. Some given: the others 0 take the first kernel
    // with default_nodes_per_item and about as many work-items as the surface kernel's group
    // (elements_per_group times the nodes).
    int nodes_per_item = 0;
    int volume_elements_per_group = 0;
    // The volume kernel with each work-item's rows of Dr and Ds in registers, over this many
    // batches of volume_elements_per_group elements per work-group (needs 1 node per work-item);
    // 0: the kernel that reads the matrices from memory. All three 0: the tuner chooses.
    int volume_batches = 0;
    // The volume kernel's form: 0 the kernels above (nodes per work-item, or rows in registers
    // with batches); 1 Dr and Ds written into the source as constants, an element's nodes computed
    // by one work-item (nodes_per_item 0 or NP) or split among up to 4 (nodes_per_item at least
    // NP / 4: ceil(NP / nodes_per_item) work-items an element), over volume_batches batches of
    // volume_elements_per_group elements a group (0: one, staged without registers; with batches
    // each batch's fields are loaded into registers while the one before computes); 2 tiled:
    // each work-item nodes_per_item nodes (0: 4) of volume_elements_per_item elements (0: 2),
    // no batches; 3 on the tensor cores (f64 on CUDA devices of compute capability 8.0 or later),
    // a warp per 8 elements, volume_elements_per_group (a multiple of 8) a group, over
    // volume_batches batches (0: 1). All unset: the tuner chooses.
    int volume_form = 0;
    int volume_elements_per_item = 0;
    // The surface kernel with each work-item's row of LIFT in registers, over this many batches
    // of elements_per_group elements per work-group; 0: LIFT read from memory; -1:
    // default_surface_shape's (when elements_per_group is 0 too; else 0).
    int surface_batches = -1;
    // 1: the surface kernel reads its face fluxes back from local memory 16 bytes at a time; 0:
    // a value at a time; -1: default_surface_shape's (when elements_per_group is 0 too; else 0).
    int surface_vector = -1;
};

// Whether the volume kernel can run on this device's tensor cores (form 3, f64): an NVIDIA device
// of compute capability 8.0 or later with doubles, on either backend (the dialect's
// XGPU_HAS_MMA_F64, inline PTX on both).
bool has_mma_f64(const xgpu::DeviceInfo& info);
// Whether form 4 (f32 as three TF32 products on the tensor cores) can run: an NVIDIA device of
// compute capability 8.0 or later, on either backend (the dialect's XGPU_HAS_MMA_TF32).
bool has_mma_tf32(const xgpu::DeviceInfo& info);

// The volume kernel's nodes per work-item when the options leave it at 0, for order N on a
// device of this type.
int default_nodes_per_item(int order, bool cpu);

// The volume kernel's shape (its launch parameters NPW, VEPB, VB, VEW, EPW in
// maxwell_kernels.cpp), here the one when no option sets it and the tuning database has none:
// nodes per work-item, elements per work-group (0: about the surface group's work-items),
// batches (rows in registers; form 3), the form (DeviceOptions::volume_form) and elements per
// work-item (form 2).
struct VolumeShape {
    int npw = 1, vepb = 0, vb = 0, vew = 0, epw = 1;
};
// mma: the device has the tensor-core products of the precision (has_mma_f64 for f64, has_mma_tf32
// for f32).
VolumeShape default_volume_shape(int order, bool cpu, bool f64, bool mma = false);

// The surface kernel's elements a work-group and LIFT-row batches (0: LIFT from memory) where
// DeviceOptions leaves them to the default.
struct SurfaceShape {
    int epb = 1, sb = 0, sv = 0;
};
SurfaceShape default_surface_shape(int order, bool cpu, bool f64);

// The flops and bytes one call of each kernel moves, counted from the algorithm (not measured):
//   volume : Ez' taken as Dr (rx Hy - ry Hx) + Ds (sx Hy - sy Hx) (the factors are constant on a
//            straight-sided element): per node 4 NP multiply-adds (Dr, Ds times the two
//            combinations and Ez) = 8 NP flops, and 13 (6 for the two combinations, 1 for their
//            sum, 6 for Hx' and Hy'); reads 3 fields + 4 geometric factors per element, writes 3
//            fields.
//   surface: per face node 3 jumps, the normal jump and 3 scaled fluxes = 24 flops; per node
//            3 NFN multiply-adds (LIFT) + 3 adds = 6 NFN + 3 flops; reads vmapM, vmapP (int32), 6
//            field values (inside and outside), 3 face factors per face, and rhs, writes rhs.
//   update : per value 5 flops (a res + dt rhs, q + b res); reads q, res, rhs, writes q, res.
// The operator matrices are counted once per call (they come from the caches after that).
struct KernelCost {
    double flops = 0, bytes = 0;
};

class DeviceMaxwell {
public:
    // Keeps a pointer to `d`, which must outlive the operator.
    DeviceMaxwell(const xgpu::Context& ctx, const Discretization& d, DeviceOptions options = {});

    void set_state(const std::vector<double>& q);
    std::vector<double> state() const;
    std::vector<double> rhs_values() const;

    // rhs = L(q): the volume kernel, then the surface kernel.
    void rhs() const;
    // One time step: five stages of rhs() and the update.
    void step(double dt) const;

    // The kernels one at a time (for timing).
    void volume() const;
    void surface() const;
    void update(double a, double b, double dt) const;

    KernelCost volume_cost() const;
    KernelCost surface_cost() const;
    KernelCost update_cost() const;

    const xgpu::Context& context() const { return ctx_; }
    const DeviceOptions& options() const { return options_; }
    int elements_per_group() const { return epb_; }
    int nodes_per_item() const { return npw_; }
    int volume_elements_per_group() const { return vepb_; }
    int volume_batches() const { return vb_; }
    int volume_form() const { return vew_; }
    int volume_elements_per_item() const { return epw_; }
    int surface_batches() const { return sb_; }
    int surface_vector() const { return sv_; }

private:
    xgpu::Context ctx_;
    xgpu::Queue queue_;
    const Discretization* d_;
    DeviceOptions options_;
    int epb_ = 1, npw_ = 1, vepb_ = 1, vb_ = 0, vew_ = 0, epw_ = 1, sb_ = 0, sv_ = 0;
    std::string source_; // the kernels' source: constant_matrices, then maxwell_kernel_source
    std::size_t value_size_ = 8;
    std::int32_t k_ = 0, knp_ = 0;
    xgpu::Kernel volume_, surface_, update_;
    xgpu::Buffer q_, rhs_, res_, dr_, ds_, lift_, vgeo_, sgeo_, vmap_m_, vmap_p_;
    // Dr and Ds as form 3's A operands (f64) or form 4's TF32 parts (f32), where the device has
    // the tensor cores.
    xgpu::Buffer mma_;
    // The matrix argument of volume form `form`: Dr transposed, or forms 3 and 4's operands.
    const xgpu::Buffer& volume_matrices(int form) const { return form >= 3 ? mma_ : dr_; }

    // Chooses npw_ and vepb_ through xgpu::tune (the tuning database, or tuning on this mesh
    // under XGPU_AUTOTUNE=on/force), the measured default as the start.
    void tune_volume(const xgpu::KernelTemplate::Parameters& params);
    xgpu::Buffer upload(const std::vector<double>& values) const;
    std::vector<double> download(const xgpu::Buffer& b, std::size_t n) const;
};

} // namespace dg
