// Array transfers and fills: direct where the layout is contiguous, through a contiguous
// temporary (one generated copy kernel) where it is not.
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "../codegen/elementwise.hpp"
#include "../codegen/generated.hpp"
#include "../codegen/operations.hpp"
#include "../codegen/skeleton.hpp"
#include "../mirror.hpp"
#include "xgpu/array.hpp"

namespace xgpu::detail {

namespace {
std::size_t bytes_of(const ArrayDesc& a) {
    return a.size() * info(a.dtype).size;
}
std::size_t byte_offset(const ArrayDesc& a) {
    return std::size_t(a.offset) * info(a.dtype).size;
}

ArrayDesc contiguous_copy(const ArrayDesc& a) {
    ArrayDesc c = make_array(a.context, a.dtype, a.shape, Order::C);
    assign(c, a);
    return c;
}
} // namespace

void to_host(const ArrayDesc& a, void* dst) {
    // A blocking read where no copy kernel is needed: no event, and the backend may stage a small
    // one through page-locked memory (a reduction's result read on the host).
    if (a.mirror && a.buffer && read_mirror(*a.mirror, a.buffer, byte_offset(a), bytes_of(a), dst)) return;
    if (!a.buffer || a.size() == 0 || !a.is_c_contiguous()) {
        to_host_async(a, dst).wait();
        return;
    }
    a.context.current_queue().read(a.buffer, dst, bytes_of(a), byte_offset(a));
}

Event to_host_async(const ArrayDesc& a, void* dst) {
    if (!a.buffer) throw InvalidArgument("xgpu: get from an empty Array");
    if (a.size() == 0) return a.context.current_queue().marker();
    const ArrayDesc src = a.is_c_contiguous() ? a : contiguous_copy(a);
    // A contiguous array's lowest element is at its offset (positive strides) or not (a view with
    // negative steps, which is never C-contiguous with more than one element).
    return src.context.current_queue().read_async(src.buffer, dst, bytes_of(src), byte_offset(src));
}

void from_host(const ArrayDesc& a, const void* src) {
    if (!a.buffer) throw InvalidArgument("xgpu: set on an empty Array");
    if (a.size() == 0) return;
    if (a.is_c_contiguous()) {
        a.context.current_queue().write(a.buffer, src, bytes_of(a), byte_offset(a));
        return;
    }
    ArrayDesc tmp = make_array(a.context, a.dtype, a.shape, Order::C);
    tmp.context.current_queue().write(tmp.buffer, src, bytes_of(tmp));
    assign(a, tmp);
}

void fill(const ArrayDesc& a, const void* value) {
    if (!a.buffer) throw InvalidArgument("xgpu: fill of an empty Array");
    if (a.size() == 0) return;
    if (a.is_c_contiguous()) {
        const std::size_t es = info(a.dtype).size;
        a.context.current_queue().fill(a.buffer, value, es, bytes_of(a), byte_offset(a));
        return;
    }
    evaluate(*scalar_node(a.dtype, value, a.dtype), a);
}

ArrayDesc arange(const Context& ctx, DType dtype, double start, double stop, double step) {
    if (kind(dtype) == Kind::complex || dtype == DType::bool_)
        throw InvalidArgument(fmt::format("xgpu: arange of {} is not supported; use a real type", name(dtype)));
    if (step == 0) throw InvalidArgument("xgpu: arange: step must not be zero");
    const double count = std::ceil((stop - start) / step);
    if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step) || !(count < 0x1p63))
        throw InvalidArgument(fmt::format("xgpu: arange({}, {}, {}): the number of elements is not finite or too big",
                                          start, stop, step));
    const std::size_t n = count > 0 ? std::size_t(count) : 0;
    ArrayDesc a = make_array(ctx, dtype, {n}, Order::C);
    if (n == 0) return a;
    // numpy computes start + i * step in double precision, then casts.
    const bool fp64 = ctx.device().has_fp64();
    const char* acc = fp64 ? "double" : "float";
    const LaunchShape shape = codegen::stream_shape(ctx, dtype);
    const std::string key = fmt::format("arange|{}|{}|{}", int(dtype), acc, shape.key());
    auto k = generated_kernel(
        ctx, key,
        [&] {
            // Integers wrap as numpy's do: through int64_t, since a float-to-small-integer
            // conversion out of range is undefined (NVIDIA's OpenCL saturates).
            const char* T = codegen::device_type(dtype);
            return codegen::stream_source(
                {"xgpu_arange", std::string(codegen::kernel_file("array.h")),
                 fmt::format("XGPU_GLOBAL {0}* out, const {1} start, const {1} step, ", T, acc), "i",
                 fmt::format("        out[i] = ({}){}(start + ({})i * step);\n", T,
                             is_integer(dtype) ? "(int64_t)" : "", acc)},
                shape);
        },
        "xgpu_arange");
    const double d_start = start, d_step = step;
    const float f_start = float(start), f_step = float(step);
    std::vector<KernelArg> args{make_arg(a.buffer), fp64 ? make_arg(d_start) : make_arg(f_start),
                                fp64 ? make_arg(d_step) : make_arg(f_step)};
    codegen::launch_stream(ctx, k, std::move(args), n, shape);
    return a;
}

} // namespace xgpu::detail
