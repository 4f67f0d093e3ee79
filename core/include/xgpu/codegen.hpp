// xgpu's run-time code generation, the public part: the launch shape of a generated kernel as a
// value (chosen per device by a default chooser in one place, or from outside: tests, benchmarks,
// the autotuner), and the source builder the library writes its generated code with, for users
// who generate kernels of their own.
//
// The module itself (core/src/codegen/) holds the operand protocol that lowers array expressions
// in one pass, the table of operations, the default chooser and the kernel skeletons' filler; the
// skeletons are files in kernels/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "xgpu/context.hpp"
#include "xgpu/dtype.hpp"

namespace xgpu {

// The kernel families the library generates, each with its own launch shape.
enum class KernelFamily : std::uint8_t {
    elementwise, // array expressions, ElementwiseKernel, the random-number bodies
    reduction,   // sums, norms, dot, min/max, arg*, ReductionKernel
    scan,        // inclusive/exclusive and segmented scans, copy_if, ScanKernel
    stencil,     // the matrix-free Laplacians (xgpu/operator.hpp): items = points a work-item walks
    merge,       // SpMV along the merge path (xgpu/sparse.hpp): items = merge steps (rows plus entries) a
                 // work-item takes, staged = the work-group's tile goes through local memory
                 // (at most 32 steps a work-item)
    sort,        // radix sorts (xgpu/sort.hpp): a tile of group_size work-items of `items` keys each
                 // per work-group of a pass
};
const char* name(KernelFamily f);

// How a family maps its work onto work-items. Part of every generated kernel's cache key, so two
// shapes are two kernels.
struct LaunchShape {
    unsigned group_size = 256; // work-items per work-group (a power of two for reductions and scans)
    unsigned items = 1;        // elements per work-item: computed together before any is stored
                               // (elementwise), accumulators in flight (reduction), a run (scan)
    bool staged = false;       // scans: the tile goes through local memory (GPUs)
    bool blocked = false;      // reductions: each work-item takes a contiguous block (CPUs), not a
                               // strided share (GPUs: coalesced)
    bool whole_groups = false; // elementwise: whole work-groups run without a per-item guard and one
                               // guarded group takes the rest (CPUs: PoCL vectorises across
                               // work-items only without the guard)
    unsigned vector = 1;       // elementwise: the vector width, consecutive elements a work-item
                               // takes per item (1, 2, 4 or 8), adjacent addresses the compiler may
                               // load and store as one vector

    // "g256i4", "g2i8192", "g256i16s", "g256i8b", "g256i1w", "g256i2v4": a readable key fragment.
    std::string key() const;
    friend bool operator==(const LaunchShape&, const LaunchShape&) = default;
};

// The library's default shape for `family` on `ctx`'s device, for elements of type `type`
// (segmented: a segmented scan, which keeps a flag per element). Today's per-device-type choices,
// measured with `array-bench --sweep`, live here; what depends on one call's size (a reduction's number
// of work-groups) is decided at its launch. Streaming kernels whose bodies store as they go
// (ElementwiseKernel, take, arange, random numbers) use the elementwise shape with one item.
LaunchShape default_launch_shape(const Context& ctx, KernelFamily family, DType type, bool segmented = false);

// The shape that kernels of `family` generated and launched now, on this thread, will use: the
// innermost LaunchShapeScope's, else the default. Throws InvalidArgument naming the problem when a
// scope's shape does not suit the device (a work-group larger than it allows, a non-power-of-two
// group for a family that needs one, no items).
LaunchShape launch_shape(const Context& ctx, KernelFamily family, DType type, bool segmented = false);

// Sets the shape of one family on this thread while alive (innermost wins), for every context:
// how a benchmark sweeps shapes and how the autotuner applies what it found.
class LaunchShapeScope {
public:
    LaunchShapeScope(KernelFamily family, LaunchShape shape);
    ~LaunchShapeScope();
    LaunchShapeScope(const LaunchShapeScope&) = delete;
    LaunchShapeScope& operator=(const LaunchShapeScope&) = delete;

private:
    KernelFamily family_;
    std::optional<LaunchShape> previous_;
};

namespace codegen {

// A small source builder (in the spirit of VexCL's source_generator): kernel text as lines with
// indentation, kernels opened with typed parameters, blocks that close themselves in order.
//
//   Source s;
//   s.kernel("scale").param("XGPU_GLOBAL double*", "x").param("const double", "a").body();
//   s.line("x[XGPU_GLOBAL_ID(0)] *= a;");
//   s.close();
class Source {
public:
    // `depth`: the indentation (in levels of four spaces) the text starts at.
    explicit Source(int depth = 0) : depth_(depth) {}

    // Starts a kernel; parameters follow, then body().
    Source& kernel(std::string_view name);
    // Starts a device function returning `type`; parameters follow, then body().
    Source& function(std::string_view type, std::string_view name);
    Source& param(std::string_view type, std::string_view name);
    // An image parameter (xgpu/image.hpp): sampled, of 1 to 3 dimensions, or writable (2-D), read
    // and written in the body with the dialect's XGPU_SAMPLE*, XGPU_FETCH*, XGPU_WRITE2D_* on `name`.
    Source& image_param(unsigned dims, std::string_view name, bool writable = false);
    // Ends the parameter list and opens the body.
    Source& body();
    // Opens a block after `head` ("for (...)", "if (...)", or empty for a bare block).
    Source& open(std::string_view head = {});
    // Closes the innermost block or body.
    Source& close();
    // One line at the current indentation; multi-line text is indented line by line.
    Source& line(std::string_view text);
    // Text as it is (a preamble, a skeleton's part).
    Source& raw(std::string_view text);

    const std::string& str() const;
    int depth() const { return depth_; }

private:
    Source& signature(std::string_view head, std::string_view name);

    std::string text_;
    int depth_ = 0;
    int params_ = -1; // parameters written in the open signature; -1 when none is open
};

} // namespace codegen
} // namespace xgpu
