// Tuning your own kernel family: the templated transpose of examples/templated.cpp, whose tile
// (TILE) and work-item rows per tile (ROWS) become a parameter space for xgpu::tune. The tuner
// compiles each valid variant, checks it against the start point's result and times it; the
// winner is kept in the tuning database (tuning.json beside the compile cache) for this device,
// types and size bucket, so later runs take it without timing anything.
//
//   XGPU_AUTOTUNE=on tune [rows cols]   # tunes on first use (XGPU_AUTOTUNE_BUDGET seconds, default 2)
//   tune [rows cols]                    # XGPU_AUTOTUNE=cached (default): what the database holds
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <xgpu/template.hpp>
#include <xgpu/tune.hpp>
#include <xgpu/xgpu.hpp>

static const char* source = R"(
XGPU_KERNEL void transpose(XGPU_GLOBAL float* out, XGPU_GLOBAL const float* in, const uint32_t rows,
                           const uint32_t cols) {
    XGPU_LOCAL float tile[TILE][TILE + 1];
    const uint32_t lx = (uint32_t)XGPU_LOCAL_ID(0), ly = (uint32_t)XGPU_LOCAL_ID(1);
    const uint32_t c0 = (uint32_t)XGPU_GROUP_ID(0) * TILE, r0 = (uint32_t)XGPU_GROUP_ID(1) * TILE;
    for (uint32_t k = 0; k < TILE; k += ROWS) {
        const uint32_t r = r0 + ly + k, c = c0 + lx;
        if (r < rows && c < cols) tile[ly + k][lx] = in[(size_t)r * cols + c];
    }
    XGPU_BARRIER();
    for (uint32_t k = 0; k < TILE; k += ROWS) {
        const uint32_t r = c0 + ly + k, c = r0 + lx;
        if (r < cols && c < rows) out[(size_t)r * rows + c] = tile[lx][ly + k];
    }
}
)";

int main(int argc, char** argv) try {
    auto ctx = xgpu::Context::from_env();
    const auto& dev = ctx.device().info();
    const bool cpu = dev.type == xgpu::DeviceType::cpu;
    const std::uint32_t rows = argc > 2 ? std::uint32_t(std::atoi(argv[1])) : cpu ? 1024 : 4096;
    const std::uint32_t cols = argc > 2 ? std::uint32_t(std::atoi(argv[2])) : rows;

    // The space: discrete values per parameter, and what a device allows (work-group size, local
    // memory) and the kernel needs (ROWS divides TILE).
    xgpu::tune::Space space;
    space.params = {{"TILE", {8, 16, 32}}, {"ROWS", {1, 2, 4, 8, 16, 32}}};
    space.valid = [&](const xgpu::tune::Point& p) {
        const auto tile = p.at("TILE"), r = p.at("ROWS");
        return r <= tile && tile % r == 0 && std::uint64_t(tile * r) <= dev.max_work_group_size &&
               std::uint64_t(tile * (tile + 1) * 4) <= dev.static_local_memory;
    };
    const xgpu::tune::Point start{{"TILE", 16}, {"ROWS", 4}}; // the family's default chooser

    xgpu::KernelTemplate family(ctx, source, "transpose");
    auto in = ctx.alloc(std::size_t(rows) * cols * 4), out = ctx.alloc(std::size_t(rows) * cols * 4);
    std::vector<float> host(std::size_t(rows) * cols);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& x : host)
        x = u(rng);
    ctx.queue().write(in, host.data(), host.size() * 4);

    auto launcher = [&](const xgpu::tune::Point& p) {
        const auto tile = std::uint32_t(p.at("TILE")), r = std::uint32_t(p.at("ROWS"));
        const auto k = family.get({{"TILE", tile}, {"ROWS", r}});
        const xgpu::Grid grid{{std::size_t((cols + tile - 1) / tile) * tile, std::size_t((rows + tile - 1) / tile) * r},
                              {tile, r}};
        return std::function<void()>([=] { k.launch(ctx.current_queue(), grid, out, in, rows, cols); });
    };
    // Built only when the tuner runs (XGPU_AUTOTUNE=on for a new key, or force).
    auto problem = [&] {
        xgpu::tune::Problem pr;
        pr.prepare = launcher;
        pr.result = [&] {
            std::vector<float> got(host.size());
            ctx.queue().read(out, got.data(), got.size() * 4);
            return std::vector<double>(got.begin(), got.end());
        };
        return pr; // tolerance 0: a transpose moves values exactly
    };
    const xgpu::tune::Key key{"example_transpose", 1, "float32", std::uint64_t(rows) * cols};
    const auto sel = xgpu::tune::select(ctx, key, space, start, problem);
    std::printf("transpose %ux%u on %s, XGPU_AUTOTUNE=%s: %s from %s\n", rows, cols, dev.name.c_str(),
                xgpu::tune::name(xgpu::tune::mode()), xgpu::tune::to_string(sel.point).c_str(),
                xgpu::tune::name(sel.source));
    if (sel.result) {
        const auto& r = *sel.result;
        const double bytes = 2.0 * 4 * rows * cols;
        std::printf("tuned in %.2f s (%s, %zu variants, %zu rejected): start %s %.1f GB/s, winner %.1f GB/s\n",
                    r.seconds, r.strategy == xgpu::tune::Strategy::exhaustive ? "exhaustive" : "search",
                    r.evaluations.size(), r.failed.size(), xgpu::tune::to_string(r.start).c_str(),
                    bytes / (r.start_ms * 1e6), bytes / (r.best_ms * 1e6));
    }
    // Use the selected variant.
    launcher(sel.point)();
    std::vector<float> got(host.size());
    ctx.queue().read(out, got.data(), got.size() * 4);
    for (std::uint32_t r = 0; r < rows; ++r)
        for (std::uint32_t c = 0; c < cols; ++c)
            if (got[std::size_t(c) * rows + r] != host[std::size_t(r) * cols + c]) {
                std::printf("wrong result at (%u, %u)\n", r, c);
                return 1;
            }
    std::printf("result checked\n");
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tune: %s\n", e.what());
    return 1;
}
