// Backend and device selection: XGPU_BACKEND and XGPU_DEVICE (docs/runtime.md).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "env.hpp"
#include "selection.hpp"
#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"

namespace xgpu {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return out;
}

bool is_index(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string list_devices(const std::vector<Device>& devices) {
    std::string s;
    for (const auto& d : devices)
        s += fmt::format("\n  {}: {} [{}]", d.index(), d.name(), d.info().platform);
    return s;
}

// The device `selector` picks among `devices`; with no selector, the nth GPU (round robin), or
// the nth device where there is no GPU. Returns nullptr when nothing matches.
const Device* pick(const std::vector<Device>& devices, std::string_view selector, std::size_t nth) {
    if (devices.empty()) return nullptr;
    if (selector.empty()) {
        std::vector<const Device*> gpus;
        for (const auto& d : devices)
            if (d.type() == DeviceType::gpu) gpus.push_back(&d);
        return gpus.empty() ? &devices[nth % devices.size()] : gpus[nth % gpus.size()];
    }
    if (is_index(selector)) {
        const auto i = std::strtoull(std::string(selector).c_str(), nullptr, 10);
        return i < devices.size() ? &devices[i] : nullptr;
    }
    const std::string want = lower(selector);
    for (const auto& d : devices)
        if (lower(d.name()).find(want) != std::string::npos ||
            lower(d.info().platform).find(want) != std::string::npos ||
            lower(d.vendor()).find(want) != std::string::npos)
            return &d;
    return nullptr;
}

Context create_on(detail::BackendImpl& backend, std::string_view selector, std::size_t nth) {
    const auto devices = backend.devices(); // throws BackendUnavailable naming what is missing
    const Device* d = pick(devices, selector, nth);
    if (!d) {
        if (devices.empty())
            throw BackendUnavailable(fmt::format("xgpu: backend '{}' loaded but reports no device", backend.name()),
                                     {backend.name(), "", 0, ""});
        throw InvalidArgument(fmt::format("xgpu: device selector '{}' (XGPU_DEVICE) matches no {} device; devices:{}",
                                          selector, backend.name(), list_devices(devices)),
                              {backend.name(), "", 0, ""});
    }
    return Context(backend.create_context(*d));
}

} // namespace

Context detail::create_context(std::string_view name, std::string_view selector, std::size_t nth) {
    const std::string backend = lower(name);
    const auto names = backend_names();
    if (backend.empty() || backend == "auto") {
        // CUDA when the driver loads and has a (matching) device, else OpenCL, GPUs first.
        std::string reasons;
        for (const auto& n : names) {
            try {
                return create_on(*detail::find_backend(n), selector, nth);
            } catch (const BackendUnavailable& e) {
                reasons += fmt::format("\n  {}: {}", n, e.what());
            } catch (const InvalidArgument& e) {
                reasons += fmt::format("\n  {}: {}", n, e.what());
            }
        }
        throw BackendUnavailable(fmt::format("xgpu: no backend could start a device{}", reasons));
    }
    auto b = detail::find_backend(backend);
    if (!b) {
        std::string valid;
        for (const auto& n : names)
            valid += n + ", ";
        throw InvalidArgument(
            fmt::format("xgpu: unknown backend '{}' (XGPU_BACKEND); valid names: {}auto", name, valid));
    }
    return create_on(*b, selector, nth);
}

Context Context::create(std::string_view name, std::string_view selector) {
    return detail::create_context(name, selector, 0);
}

Context Context::from_env() {
    return create(detail::env::backend(), detail::env::device());
}

Context Context::create(const Device& device) {
    auto b = detail::find_backend(device.backend());
    if (!b) throw InvalidArgument(fmt::format("xgpu: unknown backend '{}'", device.backend()));
    return Context(b->create_context(device));
}

} // namespace xgpu
