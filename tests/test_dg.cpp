// The DG Maxwell example (examples/dg): the device right-hand side against a host reference (the
// test's own, a plain loop over elements in double), energy under the upwind flux, the device time
// stepping against the host's, and h- and p-convergence to the exact cavity mode.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "device.hpp"
#include "support.hpp"

namespace {

// The right-hand side of the semi-discrete system on the host, in double: rhs = L(q).
std::vector<double> host_rhs(const dg::Discretization& d, const std::vector<double>& q) {
    using dg::ez, dg::faces, dg::fields, dg::hx, dg::hy;
    const auto& ref = d.ref;
    const auto& mesh = d.mesh;
    const int np = ref.np, nfp = ref.nfp, nf = faces * nfp;
    const std::size_t n = d.nodes();
    REQUIRE(q.size() == fields * n);
    std::vector<double> rhs(fields * n, 0.0), flux(std::size_t(fields) * nf);
    for (int e = 0; e < mesh.k; ++e) {
        const std::size_t base = std::size_t(e) * np;
        const double rx = mesh.rx[e], sx = mesh.sx[e], ry = mesh.ry[e], sy = mesh.sy[e];
        // Volume: local derivatives, then the chain rule.
        for (int i = 0; i < np; ++i) {
            double dr[fields] = {}, ds[fields] = {}; // Dr and Ds of Hx, Hy, Ez at node i
            for (int j = 0; j < np; ++j)
                for (int c = 0; c < fields; ++c) {
                    dr[c] += ref.dr(i, j) * q[c * n + base + j];
                    ds[c] += ref.ds(i, j) * q[c * n + base + j];
                }
            rhs[hx * n + base + i] = -(ry * dr[ez] + sy * ds[ez]);
            rhs[hy * n + base + i] = rx * dr[ez] + sx * ds[ez];
            rhs[ez * n + base + i] = (rx * dr[hy] + sx * ds[hy]) - (ry * dr[hx] + sy * ds[hx]);
        }
        // Surface: jumps, upwind flux (alpha = 1), scaled by Fscale / 2.
        for (int j = 0; j < nf; ++j) {
            const std::size_t f = std::size_t(e) * faces + j / nfp, id = std::size_t(e) * nf + j;
            const std::size_t m = mesh.vmap_m[id], p = mesh.vmap_p[id];
            double dhx = 0, dhy = 0, dez = 2 * q[ez * n + m]; // PEC: H+ = H-, Ez+ = -Ez-
            if (m != p) {
                dhx = q[hx * n + m] - q[hx * n + p];
                dhy = q[hy * n + m] - q[hy * n + p];
                dez = q[ez * n + m] - q[ez * n + p];
            }
            const double nx = mesh.nx[f], ny = mesh.ny[f], fs = 0.5 * mesh.fscale[f];
            const double ndh = nx * dhx + ny * dhy;
            flux[j] = fs * (ny * dez + ndh * nx - dhx);
            flux[nf + j] = fs * (-nx * dez + ndh * ny - dhy);
            flux[2 * nf + j] = fs * (-nx * dhy + ny * dhx - dez);
        }
        for (int i = 0; i < np; ++i)
            for (int c = 0; c < fields; ++c) {
                double acc = 0;
                for (int j = 0; j < nf; ++j)
                    acc += ref.lift(i, j) * flux[c * nf + j];
                rhs[c * n + base + i] += acc;
            }
    }
    return rhs;
}

// Integrates q over `steps` steps of dt on the host (the five-stage RK4 of dg::rk4a, dg::rk4b).
void host_integrate(const dg::Discretization& d, std::vector<double>& q, double dt, long steps) {
    std::vector<double> res(q.size(), 0.0);
    for (long step = 0; step < steps; ++step)
        for (int stage = 0; stage < 5; ++stage) {
            const auto rhs = host_rhs(d, q);
            for (std::size_t i = 0; i < q.size(); ++i) {
                res[i] = dg::rk4a[stage] * res[i] + dt * rhs[i];
                q[i] += dg::rk4b[stage] * res[i];
            }
        }
}

// 1/2 (Hx, Hx) + 1/2 (Hy, Hy) + 1/2 (Ez, Ez) in the DG mass norm.
double energy(const dg::Discretization& d, const std::vector<double>& q) {
    const double norm = dg::l2_difference(d, q, std::vector<double>(q.size(), 0.0));
    return 0.5 * norm * norm;
}

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
        host_integrate(d, q, dt, steps);
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
            const auto want = host_rhs(d, q);
            const double scale = max_abs(want);
            std::vector<dg::DeviceOptions> variants;
            for (const auto& p : precisions)
                variants.push_back({p});
            const bool f64 = ctx.device().has_fp64();
            // Surface groups of several elements, each leaving a partial group at the end (18
            // elements).
            if (f64 && (order == 2 || order == 5)) {
                variants.push_back({"f64", {}, dg::SurfaceShape{5, 0, 0}});
                variants.push_back({"f64", {}, dg::SurfaceShape{4, 0, 0}});
            }
            if (order == 3 || order == 5) {
                const int np = d.ref.np;
                // Form 0 with several nodes per work-item, the last work-item of an element
                // holding spare slots where NPW does not divide NP (order 5: 21 nodes).
                variants.push_back({"f32", dg::VolumeShape{0, 4, 0, 0}, dg::SurfaceShape{4, 0, 0}});
                if (f64) variants.push_back({"f64", dg::VolumeShape{0, 2, 5, 0}, dg::SurfaceShape{3, 0, 0}});
                // Form 1, one element a work-item, 16 elements a group: the second group holds 2 of 18.
                variants.push_back({"f32", dg::VolumeShape{1, np, 16, 0}});
                if (f64) variants.push_back({"f64", dg::VolumeShape{1, np, 16, 0}});
                // Form 1 with an element split among 2, 3 and 4 work-items (order 3: 5, 4 and 3
                // nodes each, the last part shorter; order 5: 11, 7 and 6), in groups of 16, 8 and
                // 32 elements (partial last groups whose idle work-items still reach the barriers).
                variants.push_back({"f32", dg::VolumeShape{1, (np + 1) / 2, 16, 0}});
                variants.push_back({"f32", dg::VolumeShape{1, (np + 2) / 3, 8, 0}});
                if (f64) variants.push_back({"f64", dg::VolumeShape{1, (np + 3) / 4, 32, 0}});
                // Form 3 where the device has the tensor cores: 2 warps of 8 elements a group over
                // 2 batches (the second group's second batch is empty, its first has 2 elements),
                // and one warp a group.
                if (f64 && dg::has_mma_f64(ctx.device().info())) {
                    variants.push_back({"f64", dg::VolumeShape{3, 1, 16, 2}});
                    variants.push_back({"f64", dg::VolumeShape{3, 1, 8, 1}});
                }
                // LIFT rows in registers, 4 batches of 4 or 3 elements a surface group (the second
                // group's last batches run past the end); the face fluxes read back 16 bytes at a
                // time (order 5: 18 a face set, padded to 20 floats; order 3: 12), with LIFT rows
                // in registers over 2 batches and with LIFT from memory.
                variants.push_back({"f32", {}, dg::SurfaceShape{4, 4, 0}});
                if (f64) variants.push_back({"f64", {}, dg::SurfaceShape{3, 4, 0}});
                variants.push_back({"f32", {}, dg::SurfaceShape{4, 2, 1}});
                if (f64) variants.push_back({"f64", {}, dg::SurfaceShape{5, 0, 1}});
            }
            for (const auto& v : variants) {
                dg::DeviceMaxwell op(ctx, d, v);
                op.set_state(q);
                op.rhs();
                const auto got = op.rhs_values();
                const double tol = v.precision == "f64" ? 1e-13 : 1e-5;
                const auto& vs = op.volume_shape();
                const auto& ss = op.surface_shape();
                INFO("order " << order << ", " << v.precision << ", volume form " << vs.form << " (" << vs.npw
                              << " nodes per item, " << vs.vepb << " elements per group, " << vs.vb
                              << " batches), surface " << ss.epb << " elements per group, " << ss.sb
                              << " batches, vector " << ss.sv << ": max |rhs| " << scale << ", max difference "
                              << max_diff(got, want));
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
        refused({"f32", {}, dg::SurfaceShape{-1, 0, 0}}, "surface shape -1 0 0");
        refused({"f32", {}, dg::SurfaceShape{1, 0, 2}}, "surface shape 1 0 2");
        refused({"f32", dg::VolumeShape{0, 11, 0, 0}}, "nodes per work-item 11");
        refused({"f32", dg::VolumeShape{5, 1, 0, 0}}, "volume kernel form 5");
        refused({"f32", dg::VolumeShape{1, 2, 0, 0}}, "form 1 splits an element among at most 4 work-items");
        refused({"f32", dg::VolumeShape{0, 1, 0, 2}}, "volume batches 2");
        refused({"f32", {}, dg::SurfaceShape{4096, 0, 0}}, "work-group size");
        if (ctx.device().has_fp64() && !dg::has_mma_f64(ctx.device().info()))
            refused({"f64", dg::VolumeShape{3, 1, 16, 1}}, "form 3");
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
        const auto want = host_rhs(d, q);
        const double tol = (precision == "f64" ? 1e-13 : 1e-5) * max_abs(want);
        ::setenv("XGPU_AUTOTUNE", "on", 1);
        dg::DeviceMaxwell tuned(ctx, d, {precision});
        const auto t = tuned.volume_shape();
        INFO("tuned: form " << t.form << ", " << t.npw << " nodes per work-item, " << t.vepb << " elements per group, "
                            << t.vb << " batches");
        CHECK((t.npw >= 1 && t.npw <= d.ref.np));
        CHECK(t.vepb >= 1);
        tuned.set_state(q);
        tuned.rhs();
        CHECK(max_diff(tuned.rhs_values(), want) <= tol);
        // Cached: the database's entry, without timing anything.
        ::setenv("XGPU_AUTOTUNE", "cached", 1);
        dg::DeviceMaxwell again(ctx, d, {precision});
        const auto a = again.volume_shape();
        CHECK((a.form == t.form && a.npw == t.npw && a.vepb == t.vepb && a.vb == t.vb));
        // Off: the default.
        ::setenv("XGPU_AUTOTUNE", "off", 1);
        dg::DeviceMaxwell plain(ctx, d, {precision});
        const auto shape = dg::default_volume_shape(4, ctx.device().type() == xgpu::DeviceType::cpu, precision == "f64",
                                                    precision == "f64" && dg::has_mma_f64(ctx.device().info()));
        CHECK(plain.volume_shape().form == shape.form);
        CHECK(plain.volume_shape().npw == shape.npw);
        CHECK(plain.volume_shape().vb == shape.vb);
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
        host_integrate(d, host, dt, steps);
        for (const auto& precision : precisions) {
            const bool f64 = precision == "f64";
            dg::DeviceMaxwell op(ctx, d, {precision});
            op.set_state(q0);
            const double e0 = energy(d, q0);
            double previous = e0;
            for (long s = 0; s < steps; ++s) {
                op.step(dt);
                const double e = energy(d, op.state());
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

TEST_CASE("dg: the tensor-core products of mma.kernel where the device has them", "[dg]") {
    // One warp: each product of A (16 x 8) and B (8 x 8) that mma.kernel offers, from fragments
    // loaded in the documented lane layout (lane 4g + t), added to C; small integers, so every
    // sum is exact in any order. flags (zeroed by the host): which of the functions it defined.
    static const char* body = R"(
        XGPU_KERNEL void mma(XGPU_GLOBAL const double* a, XGPU_GLOBAL const double* b, XGPU_GLOBAL const double* c,
                             XGPU_GLOBAL double* out, XGPU_GLOBAL int32_t* flags) {
            const int lane = (int)XGPU_LOCAL_ID(0), g = lane / 4, t = lane % 4;
            (void)a; (void)b; (void)c; (void)out; (void)flags; (void)g; (void)t;
        #ifdef DG_HAS_MMA_F64
            {
                double d[2] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1]};
                dg_mma_m8n8k4_f64(d, a[g * 8 + t], b[t * 8 + g]);
                out[2 * lane] = d[0];
                out[2 * lane + 1] = d[1];
                if (lane == 0) flags[0] = 1;
            }
        #endif
        #ifdef DG_HAS_MMA_F64_M16
            {
                double d[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
                dg_mma_m16n8k4_f64(d, a[g * 8 + t], a[(g + 8) * 8 + t], b[t * 8 + g]);
                for (int i = 0; i < 4; ++i) out[64 + 4 * lane + i] = d[i];
                double e[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
                dg_mma_m16n8k8_f64(e, a[g * 8 + t], a[(g + 8) * 8 + t], a[g * 8 + t + 4], a[(g + 8) * 8 + t + 4],
                                     b[t * 8 + g], b[(t + 4) * 8 + g]);
                for (int i = 0; i < 4; ++i) out[192 + 4 * lane + i] = e[i];
                if (lane == 0) flags[1] = 1;
            }
        #endif
        }
    )";
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto& info = ctx.device().info();
        if (!ctx.device().has_fp64()) continue; // the kernel takes doubles
        auto q = ctx.queue();
        std::vector<double> a(16 * 8), b(8 * 8), c(16 * 8);
        for (auto* v : {&a, &b, &c}) {
            *v = xgpu::test::random_vector<double>(v->size(), -8.0, 8.0);
            for (auto& x : *v)
                x = std::round(x);
        }
        auto da = ctx.alloc(a.size() * 8), db = ctx.alloc(b.size() * 8), dc = ctx.alloc(c.size() * 8),
             dout = ctx.alloc(320 * 8), dflags = ctx.alloc(2 * 4);
        q.write(da, a.data(), a.size() * 8);
        q.write(db, b.data(), b.size() * 8);
        q.write(dc, c.data(), c.size() * 8);
        const std::int32_t zero[2] = {0, 0};
        q.write(dflags, zero, sizeof zero);
        ctx.compile(std::string(dg::kernel_file("mma.kernel")) + body)
            .kernel("mma")
            .launch(q, xgpu::Grid{32, 32}, da, db, dc, dout, dflags);
        std::vector<double> out(320);
        std::int32_t flags[2];
        q.read(dout, out.data(), out.size() * 8);
        q.read(dflags, flags, sizeof flags);
        const unsigned cc = info.nv_compute_capability;
        INFO(ctx.backend() << " " << ctx.device().name() << ", compute capability " << cc);
        // Never offered where the device lacks them; offered where it has them, except that on
        // CUDA they follow NVRTC's target, which is below the device where NVRTC does
        // not know it (NVRTC 12 and later know compute capability 9.0).
        const bool nvrtc12 =
            ctx.backend() != "cuda" || std::atoi(info.compiler_version.c_str() + std::strlen("NVRTC ")) >= 12;
        CHECK(flags[0] <= (cc >= 80 ? 1 : 0));
        CHECK(flags[1] <= (cc >= 90 ? 1 : 0));
        if (cc >= 80) CHECK(flags[0] == 1);
        if (cc >= 90 && nvrtc12) CHECK(flags[1] == 1);
        // D[i][j] = C[i][j] + sum over k < kk of A[i][k] B[k][j].
        auto want = [&](int i, int j, int kk) {
            double s = c[std::size_t(i * 8 + j)];
            for (int k = 0; k < kk; ++k)
                s += a[std::size_t(i * 8 + k)] * b[std::size_t(k * 8 + j)];
            return s;
        };
        for (int lane = 0; lane < 32; ++lane) {
            const int g = lane / 4, t = lane % 4;
            if (flags[0])
                for (int i = 0; i < 2; ++i)
                    CHECK(out[std::size_t(2 * lane + i)] == want(g, 2 * t + i, 4));
            if (flags[1])
                for (int i = 0; i < 4; ++i) {
                    const int row = g + 8 * (i / 2), col = 2 * t + i % 2;
                    CHECK(out[std::size_t(64 + 4 * lane + i)] == want(row, col, 4));
                    CHECK(out[std::size_t(192 + 4 * lane + i)] == want(row, col, 8));
                }
        }
    }
}
