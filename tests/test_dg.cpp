// The DG Maxwell example (examples/dg): the device right-hand side against the host reference,
// energy under the upwind flux, the device time stepping against the host's, and h- and
// p-convergence to the exact cavity mode.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "device.hpp"
#include "support.hpp"

namespace {

std::vector<double> random_state(const dg::Discretization& d) {
    return xgpu::test::random_vector<double>(dg::fields * d.nodes(), -1.0, 1.0);
}

double max_abs(const std::vector<double>& v) {
    double m = 0;
    for (double x : v)
        m = std::max(m, std::abs(x));
    return m;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

// The L2 error at `final_time` of the cavity mode (1, 1) stepped on the device in f64 where it has
// double precision, else on the host.
double cavity_error(const xgpu::Context& ctx, int order, int mesh, double perturb, double final_time) {
    const auto d = dg::make_discretization(order, mesh, perturb);
    auto q = dg::cavity_mode(d, 1, 1, 0);
    const auto [dt, steps] = dg::time_steps(d, final_time);
    if (ctx.device().has_fp64()) {
        dg::DeviceMaxwell op(ctx, d);
        op.set_state(q);
        for (long s = 0; s < steps; ++s)
            op.step(dt);
        q = op.state();
    } else {
        dg::host_integrate(d, q, dt, steps);
    }
    return dg::l2_difference(d, q, dg::cavity_mode(d, 1, 1, final_time));
}

} // namespace

TEST_CASE("dg: the reference element", "[dg]") {
    for (int order = 1; order <= dg::max_order; ++order) {
        const auto ref = dg::make_reference_element(order);
        INFO("order " << order);
        REQUIRE(ref.np == (order + 1) * (order + 2) / 2);
        // Dr and Ds differentiate the polynomials of degree N exactly: here x^a y^b, a + b <= N.
        for (int a = 0; a <= order; ++a)
            for (int b = 0; a + b <= order; ++b) {
                double worst = 0;
                for (int i = 0; i < ref.np; ++i) {
                    double dr = 0, ds = 0;
                    for (int j = 0; j < ref.np; ++j) {
                        const double u = std::pow(ref.r[std::size_t(j)], a) * std::pow(ref.s[std::size_t(j)], b);
                        dr += ref.dr(i, j) * u;
                        ds += ref.ds(i, j) * u;
                    }
                    const double r = ref.r[std::size_t(i)], s = ref.s[std::size_t(i)];
                    const double want_r = a ? a * std::pow(r, a - 1) * std::pow(s, b) : 0;
                    const double want_s = b ? b * std::pow(r, a) * std::pow(s, b - 1) : 0;
                    worst = std::max({worst, std::abs(dr - want_r), std::abs(ds - want_s)});
                }
                CHECK(worst < 1e-10);
            }
        // The mass matrix integrates 1 to the triangle's area, 2.
        double area = 0;
        for (double m : ref.mass.a)
            area += m;
        CHECK(std::abs(area - 2) < 1e-12);
    }
    CHECK_THROWS_AS(dg::make_reference_element(0), std::invalid_argument);
    CHECK_THROWS_AS(dg::make_reference_element(dg::max_order + 1), std::invalid_argument);
    const auto ref = dg::make_reference_element(2);
    CHECK_THROWS_AS(dg::make_square_mesh(ref, 0), std::invalid_argument);
    CHECK_THROWS_AS(dg::make_square_mesh(ref, 2, 0.5), std::invalid_argument);
}

TEST_CASE("dg: the device right-hand side equals the host reference", "[dg]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        std::vector<std::string> precisions{"f32"};
        if (ctx.device().has_fp64()) precisions.push_back("f64");
        for (int order = 1; order <= 6; ++order) {
            const auto d = dg::make_discretization(order, 3, 0.2);
            const auto q = random_state(d);
            std::vector<double> want;
            dg::host_rhs(d, q, want);
            const double scale = max_abs(want);
            std::vector<dg::DeviceOptions> variants;
            for (const auto& p : precisions)
                variants.push_back({p});
            // The granularity parameters: several elements per group, with the matrices in local
            // memory and without, each leaving a partial group at the end (18 elements).
            if (ctx.device().has_fp64() && (order == 2 || order == 5)) {
                variants.push_back({"f64", 5, true});
                variants.push_back({"f64", 4, false});
            }
            // Several nodes per work-item in the volume kernel, the last work-item of an element
            // holding spare slots where NPW does not divide NP (order 5: 21 nodes).
            if (order == 3 || order == 5) {
                variants.push_back({"f32", 4, false, 4});
                if (ctx.device().has_fp64()) variants.push_back({"f64", 3, true, 2, 5});
                // Matrix rows in registers, 3 batches of 2 or 4 elements a group (18 elements: the
                // last group's batches run past the end).
                variants.push_back({"f32", 4, false, 1, 4, 3});
                if (ctx.device().has_fp64()) variants.push_back({"f64", 3, false, 0, 2, 3});
                // One element per work-item with the matrices as constants (form 1), 16 elements a
                // group: the second group holds 2 of 18.
                variants.push_back({"f32", 4, false, 0, 16, 0, 1});
                if (ctx.device().has_fp64()) variants.push_back({"f64", 3, false, 0, 16, 0, 1});
                // Form 1 with an element's nodes split among 2, 3 and 4 work-items (order 3: 5, 4
                // and 3 nodes each, the last part shorter; order 5: 11, 7 and 6), in groups of 16,
                // 8 and 32 elements (18 elements: partial last groups whose idle work-items still
                // reach the barriers).
                const int np = d.ref.np;
                variants.push_back({"f32", 4, false, (np + 1) / 2, 16, 0, 1});
                variants.push_back({"f32", 4, false, (np + 2) / 3, 8, 0, 1});
                if (ctx.device().has_fp64()) variants.push_back({"f64", 3, false, (np + 3) / 4, 32, 0, 1});
                // Form 1 over 3 batches a group, the next batch's fields loaded while one computes:
                // 2 parts of 4 elements a batch (18 elements: the second group's second batch is
                // partial, its third empty), one part of 8 over 2 batches in f64 (the second
                // group's first batch partial, its second empty).
                variants.push_back({"f32", 4, false, (np + 1) / 2, 4, 3, 1});
                if (ctx.device().has_fp64()) variants.push_back({"f64", 3, false, np, 8, 2, 1});
                // Tiled (form 2): 3 nodes of 2 elements a work-item (order 3: 10 nodes, the last
                // node group with 2 spare slots), and 4 nodes of 4 elements in groups of 8 (order
                // 5: 21 nodes; the third group holds 2 of its 8 elements).
                variants.push_back({"f32", 4, false, 3, 16, 0, 2, 2});
                if (ctx.device().has_fp64()) variants.push_back({"f64", 3, false, 4, 8, 0, 2, 4});
                // On the tensor cores (form 3) where the device has them: 2 warps of 8 elements a
                // group over 2 batches (18 elements: the second group's second batch is empty,
                // its first has 2 elements), and one warp a group.
                if (ctx.device().has_fp64() && dg::has_mma_f64(ctx.device().info())) {
                    variants.push_back({"f64", 3, false, 0, 16, 2, 3});
                    variants.push_back({"f64", 3, false, 0, 8, 0, 3});
                }
                // Form 4, f32 as three TF32 products, the same shapes.
                if (dg::has_mma_tf32(ctx.device().info())) {
                    variants.push_back({"f32", 3, false, 0, 16, 2, 4});
                    variants.push_back({"f32", 3, false, 0, 8, 0, 4});
                }
                // LIFT rows in registers, 4 batches of 4 or 3 elements a surface group (18
                // elements: the second group's last batches run past the end).
                variants.push_back({"f32", 4, false, 0, 0, 0, 0, 0, 4});
                if (ctx.device().has_fp64()) variants.push_back({"f64", 3, false, 0, 0, 0, 0, 0, 4});
                // The face fluxes read back 16 bytes at a time (order 5: 18 a face set, padded to
                // 20 floats; order 3: 12), with LIFT rows in registers over 2 batches, and with
                // LIFT from local memory.
                variants.push_back({"f32", 4, false, 0, 0, 0, 0, 0, 2, 1});
                if (ctx.device().has_fp64()) variants.push_back({"f64", 5, true, 0, 0, 0, 0, 0, 0, 1});
            }
            for (const auto& v : variants) {
                dg::DeviceMaxwell op(ctx, d, v);
                op.set_state(q);
                op.rhs();
                const auto got = op.rhs_values();
                const double tol = v.precision == "f64" ? 1e-13 : 1e-5;
                INFO("order " << order << ", " << v.precision << ", " << op.elements_per_group()
                              << " elements per group, " << op.nodes_per_item() << " nodes per item, "
                              << op.volume_batches() << " volume batches, volume form " << op.volume_form() << " ("
                              << op.volume_elements_per_item() << " elements per item, "
                              << op.volume_elements_per_group() << " per group), surface batches "
                              << op.surface_batches() << ", surface vector " << op.surface_vector()
                              << ", local matrices " << v.matrices_in_local << ": max |rhs| " << scale
                              << ", max difference " << max_diff(got, want));
                CHECK(max_diff(got, want) <= tol * scale);
            }
        }
    }
}

TEST_CASE("dg: device options out of range are refused with a message that names them", "[dg]") {
    using Catch::Matchers::Contains;
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto d = dg::make_discretization(3, 2);
        const auto refused = [&](dg::DeviceOptions o, const char* what) {
            CHECK_THROWS_WITH(dg::DeviceMaxwell(ctx, d, o), Contains(what));
        };
        refused({"f16"}, "precision 'f16'");
        refused({"f32", -1}, "elements per group -1");
        refused({"f32", 0, false, 11}, "nodes per work-item 11");
        refused({"f32", 0, false, 0, 0, -1}, "volume batches -1");
        refused({"f32", 0, false, 0, 0, 0, 5}, "volume kernel form 5");
        refused({"f32", 0, false, 2, 0, 0, 1}, "form 1 splits an element among at most 4 work-items");
        refused({"f32", 0, false, 0, 0, 0, 0, 0, -2}, "surface batches -2");
        refused({"f32", 0, false, 0, 0, 0, 0, 0, -1, 2}, "surface vector 2");
        refused({"f32", 0, false, 0, 0, 0, 0, 0, -1, -2}, "surface vector -2");
        refused({"f32", 4096}, "work-group size");
        if (ctx.device().has_fp64() && !dg::has_mma_f64(ctx.device().info()))
            refused({"f64", 0, false, 0, 16, 0, 3}, "form 3");
        if (!ctx.device().has_fp64()) refused({"f64"}, "no double precision");
    }
}

TEST_CASE("dg: the volume kernel's granularity comes from the tuner, checked against the default", "[dg]") {
    // A tuning database of its own (XGPU_CACHE_DIR), tuned on first use within half a second.
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("xgpu-test-dg-" + std::to_string(xgpu::test::rng()()));
    const char* old_dir = std::getenv("XGPU_CACHE_DIR");
    const std::string saved = old_dir ? old_dir : "";
    struct Restore {
        fs::path dir;
        std::string saved;
        bool had;
        ~Restore() {
            if (had)
                ::setenv("XGPU_CACHE_DIR", saved.c_str(), 1);
            else
                ::unsetenv("XGPU_CACHE_DIR");
            ::unsetenv("XGPU_AUTOTUNE");
            ::unsetenv("XGPU_AUTOTUNE_BUDGET");
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    } restore{dir, saved, old_dir != nullptr};
    ::setenv("XGPU_CACHE_DIR", dir.c_str(), 1);
    ::setenv("XGPU_AUTOTUNE_BUDGET", "0.5", 1);
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::string precision = ctx.device().has_fp64() ? "f64" : "f32";
        const auto d = dg::make_discretization(4, 4, 0.2);
        const auto q = random_state(d);
        std::vector<double> want;
        dg::host_rhs(d, q, want);
        const double tol = (precision == "f64" ? 1e-13 : 1e-5) * max_abs(want);
        ::setenv("XGPU_AUTOTUNE", "on", 1);
        dg::DeviceMaxwell tuned(ctx, d, {precision});
        const int npw = tuned.nodes_per_item(), vepb = tuned.volume_elements_per_group();
        INFO("tuned: " << npw << " nodes per work-item, " << vepb << " elements per volume group");
        CHECK((npw >= 1 && npw <= d.ref.np));
        CHECK(vepb >= 1);
        tuned.set_state(q);
        tuned.rhs();
        CHECK(max_diff(tuned.rhs_values(), want) <= tol);
        // Cached: the database's entry, without timing anything.
        ::setenv("XGPU_AUTOTUNE", "cached", 1);
        dg::DeviceMaxwell again(ctx, d, {precision});
        CHECK(again.nodes_per_item() == npw);
        CHECK(again.volume_elements_per_group() == vepb);
        CHECK(again.volume_batches() == tuned.volume_batches());
        CHECK(again.volume_form() == tuned.volume_form());
        CHECK(again.volume_elements_per_item() == tuned.volume_elements_per_item());
        // Off: the measured default.
        ::setenv("XGPU_AUTOTUNE", "off", 1);
        dg::DeviceMaxwell plain(ctx, d, {precision});
        const auto shape = dg::default_volume_shape(4, ctx.device().type() == xgpu::DeviceType::cpu, precision == "f64",
                                                    precision == "f64" ? dg::has_mma_f64(ctx.device().info())
                                                                       : dg::has_mma_tf32(ctx.device().info()));
        CHECK(plain.nodes_per_item() == shape.npw);
        CHECK(plain.volume_batches() == shape.vb);
        CHECK(plain.volume_form() == shape.vew);
    }
}

TEST_CASE("dg: energy does not grow under the upwind flux, and the device steps as the host does", "[dg]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        std::vector<std::string> precisions{"f32"};
        if (ctx.device().has_fp64()) precisions.push_back("f64");
        const auto d = dg::make_discretization(3, 3, 0.2);
        const auto q0 = random_state(d); // rough data: its jumps are what the upwind flux dissipates
        const auto [dt, steps] = dg::time_steps(d, 0.3);
        auto host = q0;
        dg::host_integrate(d, host, dt, steps);
        for (const auto& precision : precisions) {
            const bool f64 = precision == "f64";
            dg::DeviceMaxwell op(ctx, d, {precision});
            op.set_state(q0);
            const double e0 = dg::energy(d, q0);
            double previous = e0;
            for (long s = 0; s < steps; ++s) {
                op.step(dt);
                const double e = dg::energy(d, op.state());
                INFO(precision << ", step " << s + 1 << " of " << steps << ": energy " << previous << " -> " << e);
                CHECK(e <= previous * (1 + (f64 ? 1e-13 : 1e-6)));
                previous = e;
            }
            CHECK(previous < 0.9 * e0);
            const auto device = op.state();
            INFO(precision << ": max |q| " << max_abs(host) << ", device - host " << max_diff(device, host));
            CHECK(max_diff(device, host) <= (f64 ? 1e-12 : 1e-4) * max_abs(host));
        }
    }
}

TEST_CASE("dg: h-convergence at order N + 1 on perturbed meshes", "[dg]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (int order = 1; order <= 5; ++order) {
            // The two finest meshes; order 5 needs a finer pair to leave the pre-asymptotic range.
            const int coarse = order == 5 ? 6 : 4, fine = 2 * coarse;
            const double e1 = cavity_error(ctx, order, coarse, 0.1, 0.5);
            const double e2 = cavity_error(ctx, order, fine, 0.1, 0.5);
            const double observed = std::log2(e1 / e2);
            INFO("order " << order << ": error " << e1 << " on M = " << coarse << ", " << e2 << " on M = " << fine
                          << ", observed order " << observed);
            CHECK(observed >= order + 0.8);
        }
    }
}

TEST_CASE("dg: p-convergence: the error falls 10x per two orders until rounding", "[dg]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        std::vector<double> error(dg::max_order + 1);
        for (int order = 1; order <= dg::max_order; ++order)
            error[std::size_t(order)] = cavity_error(ctx, order, 4, 0.1, 0.5);
        for (int order = 1; order + 2 <= dg::max_order; ++order) {
            const double a = error[std::size_t(order)], b = error[std::size_t(order) + 2];
            INFO("order " << order << ": " << a << ", order " << order + 2 << ": " << b);
            if (b < 1e-11) break; // rounding
            CHECK(a >= 10 * b);
        }
    }
}
