#include "support.hpp"

#include <cstdlib>

namespace xgpu::test {

std::vector<Context> selected_contexts(const std::function<Context(const std::string& backend)>& make) {
    std::vector<Context> out;
    const char* backend = std::getenv("XGPU_BACKEND");
    const char* device = std::getenv("XGPU_DEVICE");
    if ((backend && *backend && std::string(backend) != "auto") || (device && *device)) {
        out.push_back(make(""));
    } else {
        for (const auto& b : backends())
            if (b.available && !b.devices.empty()) out.push_back(make(b.name));
    }
    if (out.empty()) throw Error("no xgpu backend is available to test on");
    return out;
}

const std::vector<Context>& contexts() {
    // Never destroyed, and finished at exit: PoCL was seen to crash when a context went away at
    // exit while its worker thread still compiled a queued kernel.
    static const std::vector<Context>& all = *new std::vector<Context>([] {
        auto out = selected_contexts(
            [](const std::string& b) { return b.empty() ? Context::from_env() : Context::create(b); });
        std::atexit([] {
            for (const auto& c : contexts())
                c.queue().finish();
        });
        return out;
    }());
    return all;
}

std::mt19937_64& rng() {
    static const std::uint64_t seed = [] {
        const char* s = std::getenv("XGPU_TEST_SEED");
        return s ? std::strtoull(s, nullptr, 10) : std::random_device{}() * 2654435761ull + std::random_device{}();
    }();
    static std::mt19937_64 gen(seed);
    static const bool announced = [] {
        std::printf("random seed: %llu (set XGPU_TEST_SEED to repeat)\n", static_cast<unsigned long long>(seed));
        return true;
    }();
    (void)announced;
    return gen;
}

} // namespace xgpu::test
