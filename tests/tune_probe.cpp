// Helper for test_tune: a new process that selects a point of the synthetic busy-loop family
// (tests/tune_family.hpp, busy loops of argv[1] base iterations) under XGPU_AUTOTUNE, for the key
// "busy" and, when a tag (argv[2]) is given, for the key "busy-<tag>" too, then prints per key
// "<key> <source> timed=<evaluations> <point>".
#include <cstdio>
#include <string>

#include "tune_family.hpp"

int main(int argc, char** argv) try {
    auto ctx = xgpu::Context::from_env();
    xgpu::test::BusyFamily family(ctx, argc > 1 ? std::uint32_t(std::stoul(argv[1])) : 1000);
    std::vector<std::string> keys{"busy"};
    if (argc > 2) keys.push_back(std::string("busy-") + argv[2]);
    for (const auto& name : keys) {
        const xgpu::tune::Key key{name, 1, "f32", family.n};
        xgpu::tune::Options o;
        o.runs = 3;
        const auto sel = xgpu::tune::select(
            ctx, key, family.space(), family.start(), [&] { return family.problem(); }, o);
        std::printf("%s %s timed=%zu %s\n", name.c_str(), xgpu::tune::name(sel.source),
                    sel.result ? sel.result->evaluations.size() : std::size_t(0),
                    xgpu::tune::to_string(sel.point).c_str());
    }
    return 0;
} catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 1;
}
