// Devices, contexts, queues, events, programs and kernels.
#include "common.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include <xgpu/array.hpp>
#include <xgpu/image.hpp>
#include <xgpu/xgpu.hpp>

namespace xgpu::python {

namespace {

Range to_range(const std::vector<std::size_t>& v, const char* what) {
    switch (v.size()) {
    case 1: return Range(v[0]);
    case 2: return Range(v[0], v[1]);
    case 3: return Range(v[0], v[1], v[2]);
    default:
        throw nb::value_error(
            (std::string("xgpu: the ") + what + " size has " + std::to_string(v.size()) + " dimensions, not 1 to 3")
                .c_str());
    }
}

// A kernel's arguments as the Python side hands them over: arrays (their buffer and element
// offset), scalars as their bytes, local-memory sizes.
void launch(const Kernel& k, const Queue& q, const std::vector<std::size_t>& global,
            const std::optional<std::vector<std::size_t>>& local, const nb::list& args) {
    std::vector<detail::KernelArg> packed;
    packed.reserve(2 * args.size());
    std::vector<std::string> large; // scalars over 16 bytes: kept alive until the call returns
    large.reserve(args.size());
    for (nb::handle a : args) {
        if (nb::isinstance<detail::ArrayDesc>(a)) {
            const auto& d = nb::cast<const detail::ArrayDesc&>(a);
            packed.push_back(detail::make_arg(d.buffer));
            packed.push_back(detail::make_arg(d.offset));
        } else if (nb::isinstance<nb::tuple>(a)) { // (desc,): one pointer to the first element
            const auto& d = nb::cast<const detail::ArrayDesc&>(nb::cast<nb::tuple>(a)[0]);
            if (d.offset == 0) {
                packed.push_back(detail::make_arg(d.buffer));
            } else {
                const std::uint64_t base = d.buffer.device_address();
                if (!base)
                    throw InvalidArgument("xgpu: an array that starts inside its buffer is not one pointer on this "
                                          "backend: pass the array (a pointer and an offset)");
                large.emplace_back(sizeof(std::uint64_t), '\0');
                const std::uint64_t p = base + std::uint64_t(d.offset) * info(d.dtype).size;
                std::memcpy(large.back().data(), &p, sizeof p);
                packed.push_back(detail::KernelArg::scalar(large.back().data(), sizeof p));
            }
        } else if (nb::isinstance<nb::bytes>(a)) {
            const auto b = nb::cast<nb::bytes>(a);
            large.emplace_back(b.c_str(), b.size());
            packed.push_back(detail::KernelArg::scalar(large.back().data(), large.back().size()));
        } else if (nb::isinstance<Local>(a)) {
            packed.push_back(detail::make_arg(nb::cast<const Local&>(a)));
        } else if (nb::isinstance<SampledImage>(a)) {
            packed.push_back(detail::make_arg(nb::cast<const SampledImage&>(a)));
        } else if (nb::isinstance<WritableImage>(a)) {
            packed.push_back(detail::make_arg(nb::cast<const WritableImage&>(a)));
        } else {
            throw nb::type_error("xgpu: a kernel argument must be an array, a numpy scalar, xgpu.Local or an image");
        }
    }
    const Grid grid(to_range(global, "global"), local ? to_range(*local, "local") : Range());
    nb::gil_scoped_release unlocked;
    k.launch_args(q, grid, packed);
}

} // namespace

void bind_runtime(nb::module_& m) {
    nb::class_<Device>(m, "Device")
        .def_prop_ro("name", &Device::name)
        .def_prop_ro("vendor", &Device::vendor)
        .def_prop_ro("backend", &Device::backend)
        .def_prop_ro("index", &Device::index)
        .def_prop_ro("type", [](const Device& d) { return std::string(to_string(d.type())); })
        .def_prop_ro("has_fp64", &Device::has_fp64)
        .def_prop_ro("global_memory", &Device::global_memory)
        .def_prop_ro("max_allocation", [](const Device& d) { return d.info().max_allocation; })
        .def_prop_ro("platform", [](const Device& d) { return d.info().platform; })
        .def_prop_ro("version", [](const Device& d) { return d.info().version; })
        .def_prop_ro("driver_version", [](const Device& d) { return d.info().driver_version; })
        .def_prop_ro("compute_units", [](const Device& d) { return d.info().compute_units; })
        .def_prop_ro("max_work_group_size", [](const Device& d) { return d.info().max_work_group_size; })
        .def_prop_ro("local_memory", [](const Device& d) { return d.info().local_memory; })
        .def_prop_ro("simd_width", [](const Device& d) { return d.info().simd_width; })
        .def("__repr__", [](const Device& d) { return "<xgpu.Device " + d.backend() + ": " + d.name() + ">"; });

    nb::class_<BackendStatus>(m, "BackendStatus")
        .def_ro("name", &BackendStatus::name)
        .def_ro("available", &BackendStatus::available)
        .def_ro("reason", &BackendStatus::reason)
        .def_ro("devices", &BackendStatus::devices);
    m.def("backends", [] {
        nb::gil_scoped_release unlocked;
        return backends();
    });
    m.def("backend_names", &backend_names);

    nb::class_<Event>(m, "Event")
        .def("wait", &Event::wait, nb::call_guard<nb::gil_scoped_release>())
        .def_prop_ro("is_complete", &Event::is_complete)
        .def("elapsed_ms", &Event::elapsed_ms, nb::arg("later"), nb::call_guard<nb::gil_scoped_release>());

    nb::class_<Queue>(m, "Queue")
        .def("finish", &Queue::finish, nb::call_guard<nb::gil_scoped_release>())
        .def("marker", &Queue::marker)
        .def("__eq__", [](const Queue& a, const Queue& b) { return a.impl() == b.impl(); })
        .def("__hash__", [](const Queue& q) { return std::hash<const void*>()(q.impl().get()); });
    nb::class_<QueueScope>(m, "QueueScope").def(nb::init<const Queue&>());

    nb::class_<Local>(m, "Local")
        .def(nb::init<std::size_t>(), nb::arg("nbytes"))
        .def_ro("nbytes", &Local::bytes)
        .def("__repr__", [](const Local& l) { return "xgpu.Local(" + std::to_string(l.bytes) + ")"; });

    nb::class_<Kernel>(m, "Kernel")
        .def_prop_ro("name", &Kernel::name)
        .def_prop_ro("num_args", &Kernel::num_args)
        .def_prop_ro("max_group_size", &Kernel::max_group_size)
        .def("_launch", &launch);

    nb::class_<Program>(m, "Program")
        .def("kernel", &Program::kernel, nb::arg("name"))
        .def_prop_ro("kernel_names", &Program::kernel_names)
        .def_prop_ro("build_log", &Program::build_log)
        .def_prop_ro("origin", [](const Program& p) {
            switch (p.origin()) {
            case ProgramOrigin::disk_cache: return "disk_cache";
            case ProgramOrigin::memory_cache: return "memory_cache";
            default: return "compiled";
            }
        });

    nb::class_<Context>(m, "Context")
        .def_static("from_env", &Context::from_env, nb::call_guard<nb::gil_scoped_release>())
        .def_static(
            "create",
            [](std::string_view backend, std::string_view device) { return Context::create(backend, device); },
            nb::arg("backend"), nb::arg("device") = "", nb::call_guard<nb::gil_scoped_release>())
        .def_prop_ro("device", &Context::device)
        .def_prop_ro("backend", &Context::backend)
        .def_prop_ro("queue", &Context::queue)
        .def_prop_ro("current_queue", &Context::current_queue)
        .def("new_queue", &Context::new_queue)
        .def(
            "finish", [](const Context& c) { c.current_queue().finish(); }, nb::call_guard<nb::gil_scoped_release>())
        .def("compile", &Context::compile, nb::arg("source"), nb::arg("options") = std::vector<std::string>{},
             nb::call_guard<nb::gil_scoped_release>())
        .def("compile_native", &Context::compile_native, nb::arg("source"),
             nb::arg("options") = std::vector<std::string>{}, nb::call_guard<nb::gil_scoped_release>())
        .def_prop_ro("preamble", &Context::preamble)
        .def_prop_ro("launch_count", &Context::launch_count)
        .def("__eq__", [](const Context& a, const Context& b) { return a == b; })
        .def("__hash__", [](const Context& c) { return std::hash<const void*>()(c.impl().get()); })
        .def("__repr__",
             [](const Context& c) { return "<xgpu.Context " + c.backend() + ": " + c.device().name() + ">"; });
}

} // namespace xgpu::python
