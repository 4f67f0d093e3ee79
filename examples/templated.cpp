// Templated kernels (PyCUDA's demo_meta_*): one matrix-transpose source with named parameters
// T (element type), TILE (the square tile staged in local memory) and ROWS (work-item rows per
// tile: each work-item moves TILE / ROWS elements, a loop the compiler unrolls), compiled once
// per set of values by xgpu::KernelTemplate. Each variant is checked against the host and timed.
//
//   templated [rows cols]        (default 4096 x 4096 on GPUs, 1024 x 1024 on CPUs)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <xgpu/template.hpp>
#include <xgpu/xgpu.hpp>

static const char* source = R"(
XGPU_KERNEL void transpose(XGPU_GLOBAL T* out, XGPU_GLOBAL const T* in, const uint32_t rows, const uint32_t cols) {
    XGPU_LOCAL T tile[TILE][TILE + 1]; /* +1: columns of the tile fall in different banks */
    const uint32_t lx = (uint32_t)XGPU_LOCAL_ID(0), ly = (uint32_t)XGPU_LOCAL_ID(1);
    const uint32_t c0 = (uint32_t)XGPU_GROUP_ID(0) * TILE, r0 = (uint32_t)XGPU_GROUP_ID(1) * TILE;
    for (uint32_t k = 0; k < TILE; k += ROWS) {
        const uint32_t r = r0 + ly + k, c = c0 + lx;
        if (r < rows && c < cols) tile[ly + k][lx] = in[(size_t)r * cols + c];
    }
    XGPU_BARRIER();
    for (uint32_t k = 0; k < TILE; k += ROWS) {
        const uint32_t r = c0 + ly + k, c = r0 + lx; /* row r of the output is column r of the input */
        if (r < cols && c < rows) out[(size_t)r * rows + c] = tile[lx][ly + k];
    }
}
)";

template <class T>
static void run(const xgpu::Context& ctx, const xgpu::KernelTemplate& family, const char* type, std::uint32_t rows,
                std::uint32_t cols) {
    std::vector<T> host(std::size_t(rows) * cols);
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& x : host)
        x = T(u(rng));
    auto in = ctx.alloc(host.size() * sizeof(T)), out = ctx.alloc(host.size() * sizeof(T));
    auto q = ctx.queue();
    q.write(in, host.data(), host.size() * sizeof(T));
    const auto& dev = ctx.device().info();
    for (auto [tile, rows_per] : {std::pair{8u, 8u}, {16u, 4u}, {16u, 16u}, {32u, 8u}, {32u, 32u}}) {
        if (std::size_t(tile) * rows_per > dev.max_work_group_size ||
            std::size_t(tile) * (tile + 1) * sizeof(T) > dev.static_local_memory)
            continue;
        const auto k = family.get({{"T", type}, {"TILE", tile}, {"ROWS", rows_per}});
        const xgpu::Grid grid{
            {std::size_t((cols + tile - 1) / tile) * tile, std::size_t((rows + tile - 1) / tile) * rows_per},
            {tile, rows_per}};
        q.fill(out, T(0));
        k.launch(q, grid, out, in, rows, cols);
        std::vector<T> got(host.size());
        q.read(out, got.data(), got.size() * sizeof(T));
        std::size_t wrong = 0;
        for (std::uint32_t r = 0; r < rows; ++r)
            for (std::uint32_t c = 0; c < cols; ++c)
                wrong += got[std::size_t(c) * rows + r] != host[std::size_t(r) * cols + c];
        std::vector<double> ms;
        for (int rep = 0; rep < 12; ++rep) {
            auto a = q.marker();
            k.launch(q, grid, out, in, rows, cols);
            auto b = q.marker();
            b.wait();
            if (rep >= 2) ms.push_back(a.elapsed_ms(b)); // two warm-up runs
        }
        std::sort(ms.begin(), ms.end());
        const double med = ms[ms.size() / 2], bytes = 2.0 * double(host.size()) * sizeof(T);
        std::printf("  %-6s TILE=%-2u ROWS=%-2u  %s  %8.3f ms  %8.1f GB/s\n", type, tile, rows_per,
                    wrong ? "WRONG" : "ok   ", med, bytes / med / 1e6);
        if (wrong) throw std::runtime_error(std::to_string(wrong) + " elements wrong");
    }
}

int main(int argc, char** argv) try {
    auto ctx = xgpu::Context::from_env();
    const bool cpu = ctx.device().type() == xgpu::DeviceType::cpu;
    const std::uint32_t rows = argc > 2 ? std::uint32_t(std::atoi(argv[1])) : cpu ? 1024 : 4096;
    const std::uint32_t cols = argc > 2 ? std::uint32_t(std::atoi(argv[2])) : rows;
    std::printf("xgpu templated transpose on %s: %s, %u x %u (median of 10 after 2 warm-up runs, bytes read + "
                "written)\n",
                ctx.backend().c_str(), ctx.device().name().c_str(), rows, cols);
    xgpu::KernelTemplate family(ctx, source, "transpose");
    run<float>(ctx, family, "float", rows, cols);
    if (ctx.device().has_fp64()) run<double>(ctx, family, "double", rows, cols);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
