// dg: 2-D transverse-magnetic Maxwell in the perfectly conducting square [-1, 1]^2 by nodal DG of
// order N on K = 2 M^2 triangles, stepped on the default device (XGPU_BACKEND, XGPU_DEVICE) from
// the cavity mode Ez = sin(m pi x) sin(n pi y) to the final time, where the L2 error against the
// exact standing wave is printed with the time per step and each kernel's throughput.
//
//   dg --order 4 --mesh 16 --final-time 1 --precision f64 --perturb 0.1 --mode 2 1 --vtk out/
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "device.hpp"

namespace {

// Legacy VTK (ParaView, VisIt): the element's nodes as points and each element cut into the N^2
// triangles of its nodal lattice, so the high-order field is drawn piecewise linearly between all
// its nodes. Point data Hx, Hy, Ez.
void write_vtk(const std::string& path, const dg::Discretization& d, const std::vector<double>& q, double time) {
    const int n = d.ref.order, np = d.ref.np, k = d.mesh.k;
    const std::size_t nodes = d.nodes(), cells = std::size_t(k) * n * n;
    // The N^2 sub-triangles of the lattice: node j of row i (row i holds N + 1 - i nodes) is
    // numbered row by row, as make_reference_element numbers them.
    const auto id = [n](int i, int j) { return i * (n + 1) - i * (i - 1) / 2 + j; };
    std::vector<std::array<int, 3>> sub;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n - i; ++j) {
            sub.push_back({id(i, j), id(i, j + 1), id(i + 1, j)});
            if (j < n - i - 1) sub.push_back({id(i, j + 1), id(i + 1, j + 1), id(i + 1, j)});
        }
    std::ofstream out(path);
    if (!out) throw std::runtime_error("dg: cannot write " + path);
    out << "# vtk DataFile Version 3.0\nxgpu dg Maxwell TM, order " << n << ", t = " << time
        << "\nASCII\nDATASET UNSTRUCTURED_GRID\n";
    out << "POINTS " << nodes << " double\n" << std::setprecision(9); // as %.9g
    for (std::size_t i = 0; i < nodes; ++i)
        out << d.mesh.x[i] << ' ' << d.mesh.y[i] << " 0\n";
    out << "CELLS " << cells << ' ' << 4 * cells << '\n';
    for (int e = 0; e < k; ++e)
        for (const auto& t : sub)
            out << "3 " << e * np + t[0] << ' ' << e * np + t[1] << ' ' << e * np + t[2] << '\n';
    out << "CELL_TYPES " << cells << '\n';
    for (std::size_t c = 0; c < cells; ++c)
        out << "5\n"; // VTK_TRIANGLE
    out << "POINT_DATA " << nodes << '\n';
    const char* names[dg::fields] = {"Hx", "Hy", "Ez"};
    for (int f = 0; f < dg::fields; ++f) {
        out << "SCALARS " << names[f] << " double 1\nLOOKUP_TABLE default\n";
        for (std::size_t i = 0; i < nodes; ++i)
            out << q[f * nodes + i] << '\n';
    }
    if (!out) throw std::runtime_error("dg: writing " + path + " failed");
}

} // namespace

int main(int argc, char** argv) try {
    struct {
        int order = 4, mesh = 8, frames = 10;
        double final_time = 1.0, perturb = 0.0, cfl = 1.0;
        std::vector<int> mode{1, 1}, volume, surface;
        std::string precision = "f64", vtk;
    } s;
    CLI::App app{"Nodal DG for 2-D Maxwell (TM) in the PEC square, on the default device (XGPU_BACKEND, XGPU_DEVICE)"};
    // An option whose default --help shows, checked on parsing.
    const auto option = [&app](const char* name, auto& value, const char* what, const CLI::Validator& check) {
        app.add_option(name, value, what)->check(check)->capture_default_str();
    };
    option("--order", s.order, "polynomial order N", CLI::Range(1, dg::max_order));
    option("--mesh", s.mesh, "M: an M x M grid of squares, each cut into two triangles", CLI::Range(1, 100000));
    option("--final-time", s.final_time, "final time", CLI::Range(1e-9, 1e9));
    option("--precision", s.precision, "f32 or f64", CLI::IsMember({"f32", "f64"}));
    option("--perturb", s.perturb, "move interior vertices at random by up to this fraction of the spacing",
           CLI::Range(0.0, 0.29));
    app.add_option("--mode", s.mode, "the cavity mode m n")->expected(2)->check(CLI::Range(1, 1000));
    app.add_option("--vtk", s.vtk, "write legacy-VTK files of the fields into this folder");
    option("--frames", s.frames, "with --vtk: the number of intervals between outputs", CLI::Range(1, 100000));
    option("--cfl", s.cfl, "a factor on the stable time step", CLI::Range(1e-6, 1.0));
    app.add_option("--volume", s.volume,
                   "the volume kernel's shape FORM NPW VEPB VB: form 0 (portable), 1 (matrices as constants, an "
                   "element in ceil(NP / NPW) <= 4 parts) or 3 (f64 tensor cores, NVIDIA 8.0+), nodes per "
                   "work-item or part, elements per group (0: the default), batches (form 3); default: the tuner's")
        ->expected(4);
    app.add_option("--surface", s.surface,
                   "the surface kernel's shape EPB SB SV: elements per group, batches with LIFT rows in registers "
                   "(0: none), fluxes read 16 bytes at a time (0 or 1)")
        ->expected(3);
    CLI11_PARSE(app, argc, argv);

    const auto disc = dg::make_discretization(s.order, s.mesh, s.perturb);
    auto ctx = xgpu::Context::from_env();
    dg::DeviceOptions options{s.precision};
    if (!s.volume.empty()) options.volume = dg::VolumeShape{s.volume[0], s.volume[1], s.volume[2], s.volume[3]};
    if (!s.surface.empty()) options.surface = dg::SurfaceShape{s.surface[0], s.surface[1], s.surface[2]};
    dg::DeviceMaxwell op(ctx, disc, options);
    const auto timing = dg::time_steps(disc, s.final_time, s.cfl);
    const double dt = timing.dt; // not a structured binding: lambdas below capture it
    const long steps = timing.steps;
    const int m = s.mode[0], n = s.mode[1];
    op.set_state(dg::cavity_mode(disc, m, n, 0));

    std::printf("dg: 2-D Maxwell TM, PEC square, cavity mode (%d, %d)\n", m, n);
    std::printf("backend     %s\ndevice      %s\n", ctx.backend().c_str(), ctx.device().name().c_str());
    std::printf("order       %d (%d nodes per element)\n", s.order, disc.ref.np);
    std::printf("elements    %d (mesh %d x %d, perturb %g)\n", disc.mesh.k, s.mesh, s.mesh, s.perturb);
    std::printf("dofs        %zu (3 fields x %zu nodes)\n", dg::fields * disc.nodes(), disc.nodes());
    const auto& v = op.volume_shape();
    const auto& f = op.surface_shape();
    const char* forms[] = {"portable", "matrices as constants", "", "tensor cores"};
    std::printf("precision   %s, volume form %d (%s): %d nodes per work-item, %d elements per group, %d batches; "
                "surface %d elements (%d work-items) per group, %d batches, vector %d\n",
                s.precision.c_str(), v.form, forms[v.form], v.npw, v.vepb, v.vb, f.epb, f.epb * disc.ref.np, f.sb,
                f.sv);
    std::printf("steps       %ld of dt = %.4e to t = %g (dt = cfl 2/3 min inradius min Gauss spacing)\n", steps, dt,
                s.final_time);

    const auto queue = ctx.queue();
    const auto write = [&](long step) {
        if (s.vtk.empty()) return;
        char name[64];
        std::snprintf(name, sizeof name, "dg_%04ld.vtk", step);
        write_vtk((std::filesystem::path(s.vtk) / name).string(), disc, op.state(), double(step) * dt);
    };
    if (!s.vtk.empty()) std::filesystem::create_directories(s.vtk);
    write(0);
    long next_frame = 1;
    const auto start = queue.marker();
    const auto wall0 = std::chrono::steady_clock::now();
    for (long step = 1; step <= steps; ++step) {
        op.step(dt);
        if (!s.vtk.empty() && step * s.frames >= next_frame * steps) {
            write(step);
            ++next_frame;
        }
    }
    const auto stop = queue.marker();
    stop.wait();
    const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count();
    const double step_ms = start.elapsed_ms(stop) / double(steps);

    const double error = dg::l2_difference(disc, op.state(), dg::cavity_mode(disc, m, n, s.final_time));
    std::printf("L2 error    %.6e\n", error);
    std::printf("time/step   %.4f ms (device events%s; wall %.1f ms in all)\n", step_ms,
                s.vtk.empty() ? "" : ", VTK output included", wall_ms);

    // Each kernel alone, after the run (the update with a = b = dt = 0 leaves the state as it is):
    // milliseconds per call from device events around 10 calls after one warm-up.
    const auto row = [&queue](const char* name, dg::KernelCost cost, auto launch) {
        launch();
        const auto a = queue.marker();
        for (int i = 0; i < 10; ++i)
            launch();
        const auto b = queue.marker();
        b.wait();
        const double ms = a.elapsed_ms(b) / 10;
        std::printf("%-11s %10d %8.4f %11.2f %7.2f\n", name, 5, ms, cost.flops / ms / 1e6, cost.bytes / ms / 1e6);
    };
    std::printf("kernel      calls/step  ms/call     GFLOP/s    GB/s   (flops, bytes counted from the algorithm)\n");
    const auto cost = op.costs();
    row("volume", cost[0], [&] { op.volume(); });
    row("surface", cost[1], [&] { op.surface(); });
    row("update", cost[2], [&] { op.update(0, 0, 0); });
    return 0;
} catch (const std::exception& e) {
    // The operator's errors name the program already ("dg: ..."); others get the prefix.
    const bool named = std::strncmp(e.what(), "dg: ", 4) == 0;
    std::fprintf(stderr, "%s%s\n", named ? "" : "dg: ", e.what());
    return 1;
}
