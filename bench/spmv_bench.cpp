// spmv-bench: y = A*x on the selected backend and device, f64 with int32 indices, in each format
// and the automatic choice, in effective GB/s (values, column indices, row pointers, x and y each
// counted once) and GFLOP/s (2 per entry), median of timed rounds after a warm-up, timed with device
// events; beside a DRAM-sized triad and a streaming kernel in the same run; the time to build each matrix and each
// format's layout (sell, packeted: partition included), and the packeted remainder's share; the upload (checks, row
// statistics, diagonal, copies) beside plain pageable and pinned copies of the same bytes.
//
// Matrices:
//   poisson   the 2-D 5-point Laplacian on an N x N grid (Dirichlet), rows in natural order; and the
//             same operator matrix-free (xgpu::Laplacian2D), counted as its vectors only;
//   powerlaw  2^P rows whose lengths follow a Pareto law (shape 1.5, at least 2 entries: mean
//             about 6, the longest tens of thousands), columns uniform at random, values in
//             [-1, 1), all from a fixed seed (std::mt19937_64, so every run builds the same one);
//   powerlaw_local  the same seed and drawn row lengths, each row's columns drawn within max(4 len,
//             256) of its own index: x gathered from near the diagonal (a graph ordered for
//             locality), where powerlaw's gathers scatter over all of x;
//   rmat      2^R rows and columns, the R-MAT graph generator of Chakrabarti, Zhan and Faloutsos
//             (2004) with Graph500's quadrant probabilities (0.57, 0.19, 0.19, 0.05) and 8 x 2^R
//             edges, each edge an entry (a row's repeated columns merged), values in [-1, 1), from
//             fixed seeds: power-law rows and columns, and unlike powerlaw the columns of a row are
//             not uniform: vertex labels are not permuted (Graph500 permutes them), so the
//             high-degree vertices sit at low labels and x's hot entries stay in cache, as in a
//             reordered real graph.
//
//   spmv-bench [--n N] [--p P] [--plocal P] [--rmat R] [--reps R] [--batch-ms B] [--triad T] [--save DIR]
//              [--formats F,F,...]
//     N: grid side (default 4096 on GPUs, 1024 on CPUs; 0 skips it); P: log2 of the power-law rows (default
//     24 on GPUs, 20 on CPUs; 0 skips it); --plocal: log2 of the rows of powerlaw_local (default 0:
//     skipped); --rmat: log2 of the R-MAT rows (default 0: skipped);
//     --reps: timed rounds (default 21); B: the length a timed
//     sample aims at, in calls of the row's work (default 10 ms); T: log2 of the triad's length
//     (default 25); --save: write each matrix's CSR arrays as raw files
//     DIR/<name>.{row_ptr,col_idx,values} for the CuPy peer (bench/peers/cupy_spmv.py); --formats:
//     the format rows to time (names as XGPU_SPMV_FORMAT takes them; default all six).
//
// Each table starts with the triad `a = b + 0.5*c` on 2^T doubles (3 vectors counted, far beyond
// the caches: the bandwidth the SpMV rows' share is printed against) and the streaming kernel
// `y = x + 0.5*x` over the matrix's rows (on a CPU it may stay in the last-level cache). All rows
// of a table are timed together in interleaved rounds (time_rows says how).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <xgpu/array.hpp>
#include <xgpu/codegen.hpp>
#include <xgpu/operator.hpp>
#include <xgpu/sparse.hpp>

namespace {

// One row of a table: its work, and what it counts.
struct Row {
    std::string label;
    std::function<void()> work;
    double bytes = 0, flops = 0;
    bool spmv = false; // printed with its share of the triad's bandwidth
};

struct Timing {
    double ms = 0, lo = 0, hi = 0; // median and extremes over the rounds, per call
};

// Every row of a table timed on the device in interleaved rounds, so that a slow stretch of the
// machine (another process, the clock or the host's scheduling ramping up: on a small CPU a plain
// OpenMP triad runs its first calls much slower than later ones, and timing one row after another
// puts such a stretch on one row) falls on all rows alike instead of on whichever row it meets:
//   - warm-up: each row 3 times, then each row's batch (calls per sample) sized so that a sample
//     lasts about `batch_ms`, then one whole untimed round;
//   - `rounds` rounds, each row once a round: one untimed call ahead (the start marker then waits
//     for the device, not for the host's launch), a marker, `batch` calls, a marker; the per-call
//     time of the sample is the markers' elapsed time over the batch;
//   - each row's figure: the median over the rounds, with the fastest and slowest printed.
std::vector<Timing> time_rows(const xgpu::Context& ctx, const std::vector<Row>& rows, int rounds, double batch_ms) {
    auto q = ctx.queue();
    std::vector<int> batch(rows.size(), 1);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (int r = 0; r < 3; ++r)
            rows[i].work();
        q.finish();
        double best = 1e30;
        for (int r = 0; r < 3; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            rows[i].work();
            q.finish();
            best = std::min(best,
                            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        batch[i] = int(std::clamp(std::ceil(batch_ms / std::max(best, 1e-3)), 1.0, 1000.0));
    }
    for (std::size_t i = 0; i < rows.size(); ++i)
        for (int k = 0; k <= batch[i]; ++k)
            rows[i].work();
    q.finish();
    std::vector<std::vector<double>> ms(rows.size());
    for (int r = 0; r < rounds; ++r)
        for (std::size_t i = 0; i < rows.size(); ++i) {
            rows[i].work();
            auto e0 = q.marker();
            for (int k = 0; k < batch[i]; ++k)
                rows[i].work();
            auto e1 = q.marker();
            ms[i].push_back(e0.elapsed_ms(e1) / batch[i]);
        }
    std::vector<Timing> t(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        std::sort(ms[i].begin(), ms[i].end());
        t[i] = {ms[i][ms[i].size() / 2], ms[i].front(), ms[i].back()};
    }
    return t;
}

// A table of rows; the first row is the triad whose bandwidth the SpMV rows are compared with.
void print_rows(const std::vector<Row>& rows, const std::vector<Timing>& t) {
    const double triad = rows[0].bytes / (t[0].ms * 1e6);
    std::printf("| work | ms | GB/s | GFLOP/s | of the triad | spread (min-max ms) |\n|---|---|---|---|---|---|\n");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const double gbps = rows[i].bytes / (t[i].ms * 1e6);
        char flops[32] = "", share[32] = "";
        if (rows[i].flops > 0) std::snprintf(flops, sizeof flops, "%.1f", rows[i].flops / (t[i].ms * 1e6));
        if (rows[i].spmv) std::snprintf(share, sizeof share, "%.2f", gbps / triad);
        std::printf("| %s | %.3f | %.1f | %s | %s | %.3f-%.3f (%+.0f%%/%+.0f%%) |\n", rows[i].label.c_str(), t[i].ms,
                    gbps, flops, share, t[i].lo, t[i].hi, 100 * (t[i].lo / t[i].ms - 1), 100 * (t[i].hi / t[i].ms - 1));
    }
}

// Pareto row lengths (shape 1.5, scale 2), capped at the column count; columns sorted and
// distinct within a row, uniform at random over all columns, or (local) over the columns within
// max(4 len, 256) of the row's own index (clamped to the matrix): the same drawn row lengths
// (repeats within a row merge, so rows come out somewhat shorter), with x's entries gathered from
// near the diagonal, as in a graph ordered for locality.
xgpu::sparse::HostCsr<double> powerlaw(std::int64_t rows, bool local = false) {
    std::mt19937_64 rng(20261201);
    std::uniform_real_distribution<double> unit(0.0, 1.0), value(-1.0, 1.0);
    std::uniform_int_distribution<std::int64_t> anywhere(0, rows - 1);
    xgpu::sparse::HostCsr<double> h;
    h.rows = h.cols = rows;
    h.row_ptr.assign(1, 0);
    h.row_ptr.reserve(std::size_t(rows + 1));
    std::vector<std::int32_t> cols;
    for (std::int64_t r = 0; r < rows; ++r) {
        const double u = 1.0 - unit(rng); // (0, 1]
        const auto len = std::int64_t(std::min(double(rows), std::floor(2.0 / std::pow(u, 1.0 / 1.5))));
        cols.clear();
        if (local) {
            const std::int64_t w = std::max<std::int64_t>(4 * len, 256);
            std::uniform_int_distribution<std::int64_t> near(std::max<std::int64_t>(0, r - w),
                                                             std::min<std::int64_t>(rows - 1, r + w));
            for (std::int64_t k = 0; k < len; ++k)
                cols.push_back(std::int32_t(near(rng)));
        } else
            for (std::int64_t k = 0; k < len; ++k)
                cols.push_back(std::int32_t(anywhere(rng)));
        std::sort(cols.begin(), cols.end());
        cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
        for (auto c : cols) {
            h.col_idx.push_back(c);
            h.values.push_back(value(rng));
        }
        h.row_ptr.push_back(std::int32_t(h.col_idx.size()));
    }
    return h;
}

// R-MAT (see the header): 8 x 2^scale edges, each edge's row and column chosen bit by bit from
// the top, the quadrant drawn with probabilities a, b, c, d = 0.57, 0.19, 0.19, 0.05 (b: the
// column's bit set, c: the row's, d: both). Edges are drawn in chunks of 2^20, chunk i from seed
// i (splitmix64), so the matrix does not depend on how many threads draw it.
xgpu::sparse::HostCsr<double> rmat(int scale) {
    const std::int64_t n = std::int64_t(1) << scale, edges = 8 * n, chunk = std::int64_t(1) << 20;
    auto splitmix = [](std::uint64_t& s) {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    };
    std::vector<std::uint32_t> er(static_cast<std::size_t>(edges)), ec(static_cast<std::size_t>(edges));
    const std::uint32_t ta = std::uint32_t(0.57 * 4294967296.0), tb = std::uint32_t(0.76 * 4294967296.0),
                        tc = std::uint32_t(0.95 * 4294967296.0);
    const std::int64_t chunks = (edges + chunk - 1) / chunk;
    std::atomic<std::int64_t> next{0};
    auto draw = [&] {
        for (std::int64_t i; (i = next++) < chunks;) {
            std::uint64_t st = 0x5eed0000ull + std::uint64_t(i);
            for (std::int64_t e = i * chunk; e < std::min(edges, (i + 1) * chunk); ++e) {
                std::uint32_t r = 0, c = 0;
                for (int bit = scale - 1; bit >= 0; bit -= 2) {
                    const std::uint64_t z = splitmix(st);
                    for (int h = 0; h < 2 && bit - h >= 0; ++h) {
                        const std::uint32_t u = std::uint32_t(z >> (32 * h));
                        const std::uint32_t m = 1u << (bit - h);
                        if (u >= ta) {
                            if (u < tb)
                                c |= m;
                            else if (u < tc)
                                r |= m;
                            else
                                r |= m, c |= m;
                        }
                    }
                }
                er[std::size_t(e)] = r;
                ec[std::size_t(e)] = c;
            }
        }
    };
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    {
        std::vector<std::jthread> pool; // joined on the way out, also when one fails to start
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back(draw);
    }
    // Rows: a counting sort by row, then each row's columns sorted and merged.
    std::vector<std::int64_t> start(std::size_t(n + 1), 0);
    for (auto r : er)
        ++start[r + 1];
    for (std::int64_t r = 0; r < n; ++r)
        start[std::size_t(r + 1)] += start[std::size_t(r)];
    std::vector<std::int32_t> cols(static_cast<std::size_t>(edges));
    {
        std::vector<std::int64_t> at(start.begin(), start.end() - 1);
        for (std::int64_t e = 0; e < edges; ++e)
            cols[std::size_t(at[er[std::size_t(e)]]++)] = std::int32_t(ec[std::size_t(e)]);
    }
    er.clear();
    er.shrink_to_fit();
    ec.clear();
    ec.shrink_to_fit();
    std::vector<std::int64_t> kept(std::size_t(n), 0);
    next = 0;
    auto merge = [&] {
        for (std::int64_t i; (i = next++) < (n + 4095) / 4096;)
            for (std::int64_t r = i * 4096; r < std::min(n, (i + 1) * 4096); ++r) {
                auto b = cols.begin() + start[std::size_t(r)], e = cols.begin() + start[std::size_t(r + 1)];
                std::sort(b, e);
                kept[std::size_t(r)] = std::unique(b, e) - b;
            }
    };
    {
        std::vector<std::jthread> pool; // joined on the way out, also when one fails to start
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back(merge);
    }
    xgpu::sparse::HostCsr<double> h;
    h.rows = h.cols = n;
    h.row_ptr.assign(1, 0);
    h.row_ptr.reserve(std::size_t(n + 1));
    std::int64_t total = 0;
    for (auto k : kept)
        total += k;
    if (total > std::numeric_limits<std::int32_t>::max())
        throw std::runtime_error("spmv-bench: the R-MAT matrix has too many entries for int32 indices");
    h.col_idx.reserve(std::size_t(total));
    for (std::int64_t r = 0; r < n; ++r) {
        h.col_idx.insert(h.col_idx.end(), cols.begin() + start[std::size_t(r)],
                         cols.begin() + start[std::size_t(r)] + kept[std::size_t(r)]);
        h.row_ptr.push_back(std::int32_t(h.col_idx.size()));
    }
    std::mt19937_64 rng(20261202);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    h.values.resize(h.col_idx.size());
    for (auto& v : h.values)
        v = value(rng);
    return h;
}

struct Settings {
    int rounds = 21;
    double batch_ms = 10;
    int triad_log2 = 25;
    std::string save_dir;
    // The format rows (--formats csr_vector,merge_path,...: the others' layouts are not built).
    std::vector<xgpu::sparse::Format> formats{xgpu::sparse::Format::csr_scalar, xgpu::sparse::Format::csr_vector,
                                              xgpu::sparse::Format::merge_path, xgpu::sparse::Format::sell,
                                              xgpu::sparse::Format::packeted,   xgpu::sparse::Format::automatic};
};

template <class V> void save(const std::string& path, const std::vector<V>& v) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(V)));
    if (!out) throw std::runtime_error("spmv-bench: cannot write " + path);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Copies {
    double bytes = 0, pageable_ms = 0, pinned_ms = 0;
};

// The CSR arrays' bytes written into one device buffer, from the HostCsr's own (pageable) vectors
// and from page-locked host memory, three times each (median; the pinned data copied in untimed).
Copies upload_copies(const xgpu::Context& ctx, const xgpu::sparse::HostCsr<double>& h) {
    const std::size_t b0 = h.row_ptr.size() * sizeof(std::int32_t), b1 = h.col_idx.size() * sizeof(std::int32_t),
                      b2 = h.values.size() * sizeof(double), total = b0 + b1 + b2;
    Copies c;
    c.bytes = double(total);
    if (total == 0) return c;
    const xgpu::Buffer dev = ctx.alloc(total);
    const xgpu::Queue q = ctx.queue();
    const auto timed = [&](const void* p0, const void* p1, const void* p2) {
        std::vector<double> ms;
        for (int i = 0; i < 3; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            q.write(dev, p0, b0, 0);
            if (b1) q.write(dev, p1, b1, b0);
            if (b2) q.write(dev, p2, b2, b0 + b1);
            q.finish();
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        return median(ms);
    };
    c.pageable_ms = timed(h.row_ptr.data(), h.col_idx.data(), h.values.data());
    const xgpu::HostBuffer pinned = ctx.alloc_host(total);
    auto* p = static_cast<unsigned char*>(pinned.data());
    std::memcpy(p, h.row_ptr.data(), b0);
    if (b1) std::memcpy(p + b0, h.col_idx.data(), b1);
    if (b2) std::memcpy(p + b0 + b1, h.values.data(), b2);
    c.pinned_ms = timed(p, p + b0, p + b0 + b1);
    return c;
}

// One matrix: the triad, the streaming kernel, each format and the automatic choice (and the
// `extra` rows: the matrix-free stencil), timed together in rounds; the build times.
void run(const xgpu::Context& ctx, const std::string& name, const xgpu::sparse::HostCsr<double>& h, double host_ms,
         const Settings& s, std::vector<Row> extra = {}) {
    const bool cpu = ctx.device().type() == xgpu::DeviceType::cpu;
    const auto st = xgpu::sparse::row_stats(h);
    std::printf("\n%s: %lld rows, %lld entries, row length min %lld mean %.1f max %lld (sd %.1f)\n\n", name.c_str(),
                (long long)h.rows, (long long)h.nnz(), (long long)st.min, st.mean, (long long)st.max, st.stddev);
    if (!s.save_dir.empty()) {
        save(s.save_dir + "/" + name + ".row_ptr", h.row_ptr);
        save(s.save_dir + "/" + name + ".col_idx", h.col_idx);
        save(s.save_dir + "/" + name + ".values", h.values);
    }
    // The upload (checks, row statistics, diagonal, copies) beside plain copies of the same bytes
    // into device memory, pageable from the HostCsr's vectors and pinned (Context::alloc_host),
    // each the median of three: what the upload is measured against.
    const auto copies = upload_copies(ctx, h);
    std::vector<double> uploads;
    std::optional<xgpu::sparse::Csr<double>> kept;
    for (int i = 0; i < 3; ++i) {
        kept.reset(); // one matrix on the device at a time
        const auto t0 = std::chrono::steady_clock::now();
        kept.emplace(ctx, h);
        ctx.queue().finish();
        uploads.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    xgpu::sparse::Csr<double> a = std::move(*kept);
    kept.reset();
    const double upload_ms = median(uploads);
    const double rows = double(h.rows), nnz = double(h.nnz());
    auto x = xgpu::full<double>(ctx, {std::size_t(h.cols)}, 1.0), y = xgpu::empty<double>(ctx, {std::size_t(h.rows)});
    // The triad on vectors far beyond any cache (at least 2^25 doubles: 768 MiB over the three),
    // the bandwidth the SpMV rows are compared with.
    const std::size_t tn = std::max<std::size_t>(std::size_t(1) << s.triad_log2, std::size_t(h.rows));
    auto ta = xgpu::zeros<double>(ctx, {tn}), tb = xgpu::full<double>(ctx, {tn}, 1.0),
         tc = xgpu::full<double>(ctx, {tn}, 2.0);
    // Counted bytes: values and indices once, row pointers once, x and y once each.
    const double bytes = nnz * (8 + 4) + (rows + 1) * 4 + (double(h.cols) + rows) * 8;
    std::vector<Row> table;
    table.push_back({"triad `a = b + 0.5*c`, " + std::to_string(tn) + " doubles (3 vectors counted)",
                     [&] { ta = tb + 0.5 * tc; }, 24.0 * double(tn)});
    // x and y: on a CPU whose last-level cache holds them (16 MB at 1024^2), a cache bandwidth.
    table.push_back({"streaming `y = x + 0.5*x` (2 vectors counted; cache-resident where they fit)",
                     [&] { y = x + 0.5 * x; }, rows * 16});
    std::vector<std::string> shapes;
    // The layouts' build times start on an idle queue, not behind the fills above (on a CPU device
    // those take longer than a layout).
    ctx.queue().finish();
    for (auto f : s.formats) {
        const auto plan = xgpu::sparse::plan_spmv(a, f);
        xgpu::sparse::spmv(a, x, y, 1.0, 0.0, f); // builds the format's layout (packeted: its remainder share)
        char shape[96]; // packeted: the packet size and the share of entries left to the remainder
        if (plan.format == xgpu::sparse::Format::packeted)
            std::snprintf(shape, sizeof shape, "packets of <= %lld rows, remainder %.2f%%", (long long)plan.packet_rows,
                          100 * a.remainder_share().value_or(0));
        else
            std::snprintf(shape, sizeof shape, "%u lanes, %u rows a work-item", plan.lanes, plan.rows);
        table.push_back(
            {std::string("spmv ") + xgpu::sparse::name(f) + " (" + xgpu::sparse::name(plan.format) + ", " + shape + ")",
             [&a, &x, &y, f] { xgpu::sparse::spmv(a, x, y, 1.0, 0.0, f); }, bytes, 2 * nnz, true});
    }
    // The merge path under other launch shapes (GPUs; KernelFamily::merge): work-group size, steps
    // a work-item, staged through local memory or not; where merge_path is among the format rows.
    if (!cpu && std::find(s.formats.begin(), s.formats.end(), xgpu::sparse::Format::merge_path) != s.formats.end())
        for (unsigned g : {128u, 256u, 512u})
            for (unsigned items : {4u, 8u, 16u, 32u})
                for (bool staged : {true, false}) {
                    if (!staged && (g != 256 || items > 8)) continue;
                    xgpu::LaunchShape shape;
                    shape.group_size = g;
                    shape.items = items;
                    shape.staged = staged;
                    try { // a shape the device cannot take (work-group, local memory) is skipped
                        xgpu::LaunchShapeScope scope(xgpu::KernelFamily::merge, shape);
                        xgpu::sparse::spmv(a, x, y, 1.0, 0.0, xgpu::sparse::Format::merge_path);
                    } catch (const xgpu::Error& e) {
                        std::printf("merge shape %s skipped: %s\n", shape.key().c_str(), e.what());
                        continue;
                    }
                    table.push_back({"spmv merge_path, shape " + shape.key(),
                                     [&a, &x, &y, shape] {
                                         xgpu::LaunchShapeScope scope(xgpu::KernelFamily::merge, shape);
                                         xgpu::sparse::spmv(a, x, y, 1.0, 0.0, xgpu::sparse::Format::merge_path);
                                     },
                                     bytes, 2 * nnz, true});
                }
    // A bound for every CSR format: sum val[k] * x[col[k]] over all entries (values and indices
    // coalesced, 8 or 16 entries in flight per work-item, 8 or 32 work-groups of 256 a compute
    // unit, no rows), counted with the SpMV's bytes so
    // its GB/s is the most any SpMV that reads x entry by entry can reach on this matrix. On a
    // matrix whose columns scatter over an x beyond the caches it is the gathers' rate.
    if (!cpu)
        for (const auto& [flight, per_unit] :
             {std::pair{8, 8}, std::pair{16, 8}, std::pair{8, 32}, std::pair{16, 32}}) {
            const unsigned gwg = 256;
            const std::size_t ggroups = std::size_t(std::max(1u, ctx.device().info().compute_units)) * per_unit;
            auto sums = std::make_shared<xgpu::Array<double>>(xgpu::empty<double>(ctx, {ggroups * gwg}));
            const xgpu::Kernel entries = ctx.compile("#define FLIGHT " + std::to_string(flight) + R"(
XGPU_KERNEL void entries_bound(XGPU_GLOBAL const int* col, XGPU_GLOBAL const double* val,
                               XGPU_GLOBAL const double* x, XGPU_GLOBAL double* out, const uint64_t nnz) {
    const uint64_t t = XGPU_GLOBAL_ID(0), threads = XGPU_GLOBAL_SIZE(0);
    double s = 0;
    for (uint64_t base = t; base < nnz; base += FLIGHT * threads) {
        int c[FLIGHT];
        double v[FLIGHT];
        for (int q = 0; q < FLIGHT; ++q) {
            const uint64_t k = base + (uint64_t)q * threads;
            c[q] = k < nnz ? col[k] : -1;
            v[q] = k < nnz ? val[k] : 0.0;
        }
        for (int q = 0; q < FLIGHT; ++q)
            if (c[q] >= 0) s += v[q] * x[c[q]];
    }
    out[t] = s;
}
)")
                                             .kernel("entries_bound");
            table.push_back(
                {"bound: sum of val[k] * x[col[k]] over the entries, no rows (SpMV bytes counted), " +
                     std::to_string(flight) + " in flight a work-item, " + std::to_string(ggroups) + " work-groups",
                 [&ctx, &a, &x, entries, sums, ggroups, gwg] {
                     entries.launch(ctx.queue(), xgpu::Grid{ggroups * gwg, gwg}, a.col_idx().buffer(),
                                    a.values().buffer(), x.buffer(), sums->buffer(), std::uint64_t(a.nnz()));
                 },
                 bytes, 2 * nnz, true});
        }
    // The product with the dot product x.y fused in (what classic CG runs: Csr::apply_dot), with as
    // many work-groups as the solvers give it (4 a compute unit on CPUs, 8 on GPUs) and with one
    // pass of the rows (a work-group per block of rows, as the plain kernel launches).
    const auto plan = xgpu::sparse::plan_spmv(a, xgpu::sparse::Format::csr_scalar);
    const unsigned wg =
        std::min<unsigned>(256u, unsigned(std::max<std::size_t>(ctx.device().info().max_work_group_size, 1)));
    const std::size_t units = std::max(1u, ctx.device().info().compute_units);
    std::vector<std::shared_ptr<xgpu::Array<double>>> partials;
    for (std::size_t groups : {units * (cpu ? 4 : 8), std::size_t((h.rows + wg * plan.rows - 1) / (wg * plan.rows))}) {
        auto partial = std::make_shared<xgpu::Array<double>>(xgpu::empty<double>(ctx, {groups}));
        partials.push_back(partial);
        if (!a.apply_dot(x, y, *partial, xgpu::sparse::Format::csr_scalar)) break;
        table.push_back({"spmv csr_scalar with x.y fused (apply_dot), " + std::to_string(groups) + " work-groups",
                         [&a, &x, &y, partial] { a.apply_dot(x, y, *partial, xgpu::sparse::Format::csr_scalar); },
                         bytes, 2 * nnz, true});
    }
    for (auto& r : extra)
        table.push_back(std::move(r));
    print_rows(table, time_rows(ctx, table, s.rounds, s.batch_ms));
    std::printf("\nbuild: host CSR %.0f ms, upload (with row statistics and diagonal) %.1f ms; plain copy of the same "
                "%.0f MB pageable %.1f ms (%.1f GB/s), pinned %.1f ms (%.1f GB/s); upload / pageable copy %.2f\n",
                host_ms, upload_ms, copies.bytes / 1e6, copies.pageable_ms, copies.bytes / (copies.pageable_ms * 1e6),
                copies.pinned_ms, copies.bytes / (copies.pinned_ms * 1e6), upload_ms / copies.pageable_ms);
    std::printf("layouts:");
    for (auto f : {xgpu::sparse::Format::sell, xgpu::sparse::Format::packeted})
        if (const auto ms = a.build_ms(f)) std::printf(" %s %.1f ms", xgpu::sparse::name(f), *ms);
    std::printf("\n");
}

template <class F> double ms_of(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char** argv) try {
    auto ctx = xgpu::Context::from_env();
    const bool cpu = ctx.device().type() == xgpu::DeviceType::cpu;
    std::int64_t n = cpu ? 1024 : 4096;
    int p = cpu ? 20 : 24, rmat_scale = 0, plocal = 0;
    Settings s;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--n"))
            n = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--p"))
            p = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--plocal"))
            plocal = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--formats")) {
            s.formats.clear();
            std::string list = argv[i + 1];
            for (std::size_t at = 0; at <= list.size();) {
                const std::size_t end = std::min(list.find(',', at), list.size());
                s.formats.push_back(xgpu::sparse::parse_format(list.substr(at, end - at)));
                at = end + 1;
            }
        } else if (!std::strcmp(argv[i], "--rmat"))
            rmat_scale = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps"))
            s.rounds = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--batch-ms"))
            s.batch_ms = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--triad"))
            s.triad_log2 = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--save"))
            s.save_dir = argv[i + 1];
    }
    // 8 x 2^R edges: past R = 28 the entries cannot fit int32 indices.
    if (rmat_scale < 0 || rmat_scale > 28) throw std::runtime_error("spmv-bench: --rmat takes 1 to 28 (0: none)");
    std::printf("spmv-bench: %s on %s (f64 values, int32 indices), median of %d rounds\n", ctx.backend().c_str(),
                ctx.device().name().c_str(), s.rounds);

    xgpu::sparse::HostCsr<double> h;
    double host_ms = 0;
    if (n > 0) {
        host_ms = ms_of([&] { h = xgpu::sparse::poisson<double>(n, n); });
        // The same operator matrix-free: x read and y written once each (neighbours come from cache).
        xgpu::Laplacian2D<double> lap(ctx, n, n);
        auto x = xgpu::full<double>(ctx, {std::size_t(n * n)}, 1.0), y = xgpu::empty<double>(ctx, {std::size_t(n * n)});
        const double vbytes = double(n * n) * 16, flops = double(h.nnz()) * 2;
        std::vector<Row> extra;
        extra.push_back({"matrix-free 5-point stencil (x and y counted)", [&] { lap.apply(x, y); }, vbytes, flops});
        // The same with x.y fused (what CG runs), its work-groups looping over the walks: as many
        // as the device holds at once (8 a compute unit on GPUs), and more (16 and 32), each a row
        // beside the plain product.
        const std::size_t cus = std::max(1u, ctx.device().info().compute_units);
        for (std::size_t per : cpu ? std::vector<std::size_t>{4} : std::vector<std::size_t>{8, 16, 32}) {
            auto partial = std::make_shared<xgpu::Array<double>>(xgpu::empty<double>(ctx, {cus * per}));
            extra.push_back({"matrix-free 5-point stencil with x.y fused (apply_dot), " + std::to_string(cus * per) +
                                 " work-groups",
                             [&lap, &x, &y, partial] { lap.apply_dot(x, y, *partial); }, vbytes, flops});
        }
        if (!cpu) // the same kernel under other shapes: work-group size, points walked per work-item
            for (unsigned g : {128u, 256u, 512u})
                for (unsigned walk : {1u, 2u, 4u, 8u, 16u})
                    for (bool staged : {false, true}) { // staged: neighbours in a line through local memory
                        if (staged && (walk == 1 || walk == 16)) continue;
                        xgpu::LaunchShape shape;
                        shape.group_size = g;
                        shape.items = walk;
                        shape.staged = staged;
                        try { // a shape past the compiled kernel's work-group limit is refused: skipped
                            xgpu::LaunchShapeScope scope(xgpu::KernelFamily::stencil, shape);
                            lap.apply(x, y);
                        } catch (const xgpu::Error& e) {
                            std::printf("shape %s skipped: %s\n", shape.key().c_str(), e.what());
                            continue;
                        }
                        extra.push_back({"matrix-free 5-point stencil, shape " + shape.key(),
                                         [&lap, &x, &y, shape] {
                                             xgpu::LaunchShapeScope scope(xgpu::KernelFamily::stencil, shape);
                                             lap.apply(x, y);
                                         },
                                         vbytes, flops});
                    }
        run(ctx, "poisson" + std::to_string(n), h, host_ms, s, std::move(extra));
    }
    if (p > 0) {
        host_ms = ms_of([&] { h = powerlaw(std::int64_t(1) << p); });
        run(ctx, "powerlaw" + std::to_string(p), h, host_ms, s);
    }
    if (plocal > 0) {
        host_ms = ms_of([&] { h = powerlaw(std::int64_t(1) << plocal, true); });
        run(ctx, "powerlaw_local" + std::to_string(plocal), h, host_ms, s);
    }
    if (rmat_scale > 0) {
        host_ms = ms_of([&] { h = rmat(rmat_scale); });
        run(ctx, "rmat" + std::to_string(rmat_scale), h, host_ms, s);
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
