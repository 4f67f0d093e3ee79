// Test support: the contexts every backend-neutral test runs on, and fresh random inputs.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include <catch2/catch.hpp>
#include <xgpu/xgpu.hpp>

namespace xgpu::test {

// With XGPU_BACKEND (or XGPU_DEVICE) set: the one context the environment selects. Otherwise one context per
// backend that is available here (its default device). Created once per process.
const std::vector<Context>& contexts();
// The same choice with contexts made by `make`: make("") for the one the environment selects,
// make(name) for each available backend with a device.
std::vector<Context> selected_contexts(const std::function<Context(const std::string& backend)>& make);

// A random generator seeded afresh each run; the seed is printed when a check fails.
std::mt19937_64& rng();

template <class T> std::vector<T> random_vector(std::size_t n, T lo, T hi) {
    std::vector<T> v(n);
    if constexpr (std::is_floating_point_v<T>) {
        std::uniform_real_distribution<T> d(lo, hi);
        for (auto& x : v)
            x = d(rng());
    } else {
        std::uniform_int_distribution<long long> d(lo, hi);
        for (auto& x : v)
            x = T(d(rng()));
    }
    return v;
}

// numpy's order of sort keys: NaN after everything, -0.0 == 0.0.
template <class T> bool numpy_less(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (a != a) return false;
        if (b != b) return true;
    }
    return a < b;
}

// A fresh private directory, named `prefix` and a random number, set as XGPU_CACHE_DIR (the
// compile cache and tuning database) while the object lives, XGPU_CACHE unset.
struct TempCacheDir {
    std::filesystem::path dir;
    explicit TempCacheDir(const std::string& prefix) {
        namespace fs = std::filesystem;
        dir = fs::temp_directory_path() / (prefix + std::to_string(rng()()));
        fs::remove_all(dir);
        fs::create_directory(dir);
        fs::permissions(dir, fs::perms::owner_all);
        ::setenv("XGPU_CACHE_DIR", dir.c_str(), 1);
        ::unsetenv("XGPU_CACHE");
    }
    ~TempCacheDir() {
        std::error_code ec;
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
        std::filesystem::remove_all(dir, ec);
        ::unsetenv("XGPU_CACHE_DIR");
    }
    TempCacheDir(const TempCacheDir&) = delete;
    TempCacheDir& operator=(const TempCacheDir&) = delete;
};

} // namespace xgpu::test

// Runs the block once per test context, as a Catch2 section named after backend and device.
#define XGPU_FOR_EACH_CONTEXT(ctx)                                                                                     \
    for (const xgpu::Context& ctx : xgpu::test::contexts())                                                            \
    DYNAMIC_SECTION(ctx.backend() << ": " << ctx.device().name())
