// numpy.take on the device: one generated gather kernel per (element type, index type, mode).
// Indices were checked by the caller for TakeMode::raise; clip and wrap make any index valid.
#include <fmt/format.h>

#include "../codegen/elementwise.hpp"
#include "../codegen/generated.hpp"
#include "../codegen/operations.hpp"
#include "../codegen/skeleton.hpp"
#include "xgpu/indexing.hpp"

namespace xgpu::detail {

ArrayDesc take(const ArrayDesc& a, const ArrayDesc& indices, TakeMode mode) {
    if (!a.buffer || !indices.buffer) throw InvalidArgument("xgpu: take of or with an empty Array");
    if (!(a.context == indices.context)) throw InvalidArgument("xgpu: take: the arrays belong to different contexts");
    const Context& ctx = a.context;
    ArrayDesc out = make_array(ctx, a.dtype, indices.shape, Order::C);
    const std::uint64_t count = out.size(), n = a.size();
    if (count == 0) return out;
    if (n == 0) throw InvalidArgument("xgpu: take: cannot take elements from an empty array");
    const ArrayDesc src = a.is_c_contiguous() ? a : [&] {
        ArrayDesc c = make_array(ctx, a.dtype, a.shape, Order::C);
        assign(c, a);
        return c;
    }();
    const ArrayDesc idx = indices.is_c_contiguous() ? indices : [&] {
        ArrayDesc c = make_array(ctx, indices.dtype, indices.shape, Order::C);
        assign(c, indices);
        return c;
    }();
    // numpy: raise counts negative indices from the end; clip sends them to 0; wrap is modulo n.
    const char* resolve = mode == TakeMode::clip   ? "j < 0 ? 0 : (j >= n ? n - 1 : j)"
                          : mode == TakeMode::wrap ? "((j % n) + n) % n"
                                                   : "j < 0 ? j + n : j";
    const LaunchShape shape = codegen::stream_shape(ctx, a.dtype);
    const std::string key = fmt::format("take|{}|{}|{}|{}", name(a.dtype), name(indices.dtype), int(mode), shape.key());
    const Kernel k = generated_kernel(
        ctx, key,
        [&] {
            const char* T = codegen::device_type(a.dtype);
            return codegen::stream_source(
                {"xgpu_take", std::string(codegen::kernel_file("array.h")),
                 fmt::format("XGPU_GLOBAL {0}* out, XGPU_GLOBAL const {0}* a, const int64_t a_off, const int64_t n, "
                             "XGPU_GLOBAL const {1}* idx, const int64_t idx_off, ",
                             T, codegen::device_type(indices.dtype)),
                 "i",
                 fmt::format("        const int64_t j = (int64_t)idx[idx_off + (int64_t)i];\n"
                             "        out[i] = a[a_off + ({})];\n",
                             resolve)},
                shape);
        },
        "xgpu_take");
    const std::int64_t a_off = src.offset, size = std::int64_t(n), idx_off = idx.offset;
    codegen::launch_stream(ctx, k,
                           {make_arg(out.buffer), make_arg(src.buffer), make_arg(a_off), make_arg(size),
                            make_arg(idx.buffer), make_arg(idx_off)},
                           count, shape);
    return out;
}

} // namespace xgpu::detail
