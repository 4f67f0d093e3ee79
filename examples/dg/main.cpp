// dg: 2-D transverse-magnetic Maxwell in the perfectly conducting square [-1, 1]^2 by nodal DG of
// order N on K = 2 M^2 triangles, stepped on the default device (XGPU_BACKEND, XGPU_DEVICE) from
// the cavity mode Ez = sin(m pi x) sin(n pi y) to the final time, where the L2 error against the
// exact standing wave is printed with the time per step and each kernel's throughput.
//
//   dg --order 4 --mesh 16 --final-time 1 --precision f64 --perturb 0.1 --mode 2 1 --vtk out/
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "device.hpp"
#include "vtk.hpp"

namespace {

struct Settings {
    int order = 4, mesh = 8, frames = 10, epb = 0, npw = 0, vepb = 0, vb = 0, vew = 0, epw = 0, sb = -1, sv = -1;
    double final_time = 1.0, perturb = 0.0, cfl = 1.0;
    std::vector<int> mode{1, 1};
    std::string precision = "f64", vtk;
    bool local_matrices = false;
};

// Milliseconds per call of `launch`, from device events around `reps` calls after one warm-up.
template <class F> double time_ms(const xgpu::Queue& q, int reps, F&& launch) {
    launch();
    const auto a = q.marker();
    for (int i = 0; i < reps; ++i)
        launch();
    const auto b = q.marker();
    b.wait();
    return a.elapsed_ms(b) / reps;
}

} // namespace

int main(int argc, char** argv) try {
    Settings s;
    CLI::App app{"Nodal DG for 2-D Maxwell (TM) in the PEC square, on the default device (XGPU_BACKEND, XGPU_DEVICE)"};
    app.add_option("--order", s.order, "polynomial order N")
        ->check(CLI::Range(1, dg::max_order))
        ->capture_default_str();
    app.add_option("--mesh", s.mesh, "M: an M x M grid of squares, each cut into two triangles")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--final-time", s.final_time, "final time")->check(CLI::Range(1e-9, 1e9))->capture_default_str();
    app.add_option("--precision", s.precision, "f32 or f64")
        ->check(CLI::IsMember({"f32", "f64"}))
        ->capture_default_str();
    app.add_option("--perturb", s.perturb, "move interior vertices at random by up to this fraction of the spacing")
        ->check(CLI::Range(0.0, 0.29))
        ->capture_default_str();
    app.add_option("--mode", s.mode, "the cavity mode m n")->expected(2)->check(CLI::Range(1, 1000));
    app.add_option("--vtk", s.vtk, "write legacy-VTK files of the fields into this folder");
    app.add_option("--frames", s.frames, "with --vtk: the number of intervals between outputs")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--cfl", s.cfl, "a factor on the stable time step")
        ->check(CLI::Range(1e-6, 1.0))
        ->capture_default_str();
    app.add_option("--elements-per-group", s.epb,
                   "elements per work-group (0: about 32 work-items on CPUs; on GPUs 126-255 at N = 4-7, measured)")
        ->check(CLI::Range(0, 4096));
    app.add_option("--nodes-per-item", s.npw, "nodes per work-item in the volume kernel (0: the measured default)")
        ->check(CLI::Range(0, 64));
    app.add_option("--volume-elements-per-group", s.vepb,
                   "elements per work-group in the volume kernel (0: about the surface group's work-items)")
        ->check(CLI::Range(0, 4096));
    app.add_option("--volume-batches", s.vb,
                   "the volume kernel over this many batches of elements per work-group: matrix rows in "
                   "registers (0: off; with --nodes-per-item 1 or 0), or forms 1, 3 and 4 with the next batch's "
                   "fields loaded while one computes")
        ->check(CLI::Range(0, 4096));
    app.add_option("--volume-form", s.vew,
                   "the volume kernel: 1 the matrices as constants in the source, an element per work-item (or split "
                   "among up to 4 by --nodes-per-item), "
                   "2 tiled (nodes per work-item x elements per work-item), 3 on the tensor cores (f64, NVIDIA compute "
                   "capability 8.0+, either backend), 4 on the TF32 tensor cores, three products a product (f32, "
                   "the same devices); 0: the others")
        ->check(CLI::Range(0, 4));
    app.add_option("--volume-elements-per-item", s.epw, "with --volume-form 2: elements per work-item (0: 2)")
        ->check(CLI::Range(0, 64));
    app.add_option("--surface-batches", s.sb,
                   "the surface kernel with LIFT rows in registers, over this many batches of elements per "
                   "work-group (0: off; default: the measured default where --elements-per-group is unset, else 0)")
        ->check(CLI::Range(0, 4096));
    app.add_option("--surface-vector", s.sv,
                   "1: the surface kernel reads its face fluxes from local memory 16 bytes at a time, 0: a value "
                   "at a time (default: the measured default where --elements-per-group is unset, else 0)")
        ->check(CLI::Range(0, 1));
    app.add_flag("--local-matrices", s.local_matrices, "stage Dr, Ds and LIFT in local memory");
    CLI11_PARSE(app, argc, argv);

    const auto disc = dg::make_discretization(s.order, s.mesh, s.perturb);
    auto ctx = xgpu::Context::from_env();
    dg::DeviceMaxwell op(ctx, disc,
                         {s.precision, s.epb, s.local_matrices, s.npw, s.vepb, s.vb, s.vew, s.epw, s.sb, s.sv});
    const auto timing = dg::time_steps(disc, s.final_time, s.cfl);
    const double dt = timing.dt; // not a structured binding: lambdas below capture it
    const long steps = timing.steps;
    const int m = s.mode[0], n = s.mode[1];
    const auto q0 = dg::cavity_mode(disc, m, n, 0);
    op.set_state(q0);

    const std::size_t dofs = dg::fields * disc.nodes();
    std::printf("dg: 2-D Maxwell TM, PEC square, cavity mode (%d, %d)\n", m, n);
    std::printf("backend     %s\ndevice      %s\n", ctx.backend().c_str(), ctx.device().name().c_str());
    std::printf("order       %d (%d nodes per element)\n", s.order, disc.ref.np);
    std::printf("elements    %d (mesh %d x %d, perturb %g)\n", disc.mesh.k, s.mesh, s.mesh, s.perturb);
    std::printf("dofs        %zu (3 fields x %zu nodes)\n", dofs, disc.nodes());
    const std::string register_rows =
        op.volume_form() == 1
            ? " (matrices as constants, " +
                  (op.nodes_per_item() >= disc.ref.np
                       ? std::string("one work-item")
                       : std::to_string((disc.ref.np + op.nodes_per_item() - 1) / op.nodes_per_item()) +
                             " work-items") +
                  " an element" +
                  (op.volume_batches() ? ", " + std::to_string(op.volume_batches()) + " batches)" : std::string(")"))
        : op.volume_form() == 2
            ? " (tiled, " + std::to_string(op.volume_elements_per_item()) + " elements per work-item)"
        : op.volume_form() >= 3 ? std::string(op.volume_form() == 4 ? " (TF32 tensor cores, " : " (tensor cores, ") +
                                      std::to_string(op.volume_batches()) + " batches)"
        : op.volume_batches() ? " (matrix rows in registers, " + std::to_string(op.volume_batches()) + " batches)"
                              : "";
    std::printf("precision   %s, %d elements (%d work-items) per group, volume %d nodes per work-item and %d elements "
                "per group%s, matrices in %s memory%s\n",
                s.precision.c_str(), op.elements_per_group(), op.elements_per_group() * disc.ref.np,
                op.nodes_per_item(), op.volume_elements_per_group(), register_rows.c_str(),
                s.local_matrices ? "local" : "global",
                ((op.surface_batches()
                      ? ", surface LIFT rows in registers over " + std::to_string(op.surface_batches()) + " batches"
                      : std::string()) +
                 (op.surface_vector() ? ", surface fluxes read 16 bytes at a time" : ""))
                    .c_str());
    std::printf("steps       %ld of dt = %.4e to t = %g (dt = cfl 2/3 min inradius min Gauss spacing)\n", steps, dt,
                s.final_time);

    const auto queue = ctx.queue();
    const auto write = [&](long step) {
        if (s.vtk.empty()) return;
        char name[64];
        std::snprintf(name, sizeof name, "dg_%04ld.vtk", step);
        dg::write_vtk((std::filesystem::path(s.vtk) / name).string(), disc, op.state(), double(step) * dt);
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

    const auto q = op.state();
    const double error = dg::l2_difference(disc, q, dg::cavity_mode(disc, m, n, s.final_time));
    std::printf("L2 error    %.6e\n", error);
    std::printf("time/step   %.4f ms (device events%s; wall %.1f ms in all)\n", step_ms,
                s.vtk.empty() ? "" : ", VTK output included", wall_ms);

    // Each kernel alone, after the run (the update with a = b = dt = 0 leaves the state as it is).
    const int reps = 10;
    struct Row {
        const char* name;
        double ms;
        dg::KernelCost cost;
    };
    const Row rows[] = {
        {"volume", time_ms(queue, reps, [&] { op.volume(); }), op.volume_cost()},
        {"surface", time_ms(queue, reps, [&] { op.surface(); }), op.surface_cost()},
        {"update", time_ms(queue, reps, [&] { op.update(0, 0, 0); }), op.update_cost()},
    };
    std::printf("kernel      calls/step  ms/call     GFLOP/s    GB/s   (flops, bytes counted from the algorithm)\n");
    for (const auto& r : rows)
        std::printf("%-11s %10d %8.4f %11.2f %7.2f\n", r.name, 5, r.ms, r.cost.flops / r.ms / 1e6,
                    r.cost.bytes / r.ms / 1e6);

    // The CPU baseline: the host reference right-hand side (one thread, double).
    std::vector<double> rhs;
    const int host_reps = 3;
    const auto h0 = std::chrono::steady_clock::now();
    for (int i = 0; i < host_reps; ++i)
        dg::host_rhs(disc, q0, rhs);
    const double host_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count() / host_reps;
    std::printf("host rhs    %.4f ms per evaluation (reference, one thread, f64); device volume + surface %.4f ms\n",
                host_ms, rows[0].ms + rows[1].ms);
    return 0;
} catch (const std::exception& e) {
    // The operator's errors name the program already ("dg: ..."); others get the prefix.
    const bool named = std::strncmp(e.what(), "dg: ", 4) == 0;
    std::fprintf(stderr, "%s%s\n", named ? "" : "dg: ", e.what());
    return 1;
}
