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
    nb::class_<Device>(m, "Device",
                       "A device of one backend, as it reports itself (ctx.device, BackendStatus.devices).")
        .def_prop_ro("name", &Device::name, "The device's name, e.g. 'NVIDIA H200'.")
        .def_prop_ro("vendor", &Device::vendor, "The vendor's name.")
        .def_prop_ro("backend", &Device::backend, "'cuda' or 'opencl'.")
        .def_prop_ro("index", &Device::index, "The index within its backend's device list (XGPU_DEVICE).")
        .def_prop_ro(
            "type", [](const Device& d) { return std::string(to_string(d.type())); },
            "'GPU', 'CPU', 'accelerator' or 'other'.")
        .def_prop_ro("has_fp64", &Device::has_fp64, "Whether kernels may use double precision.")
        .def_prop_ro("global_memory", &Device::global_memory, "Global memory, bytes.")
        .def_prop_ro(
            "max_allocation", [](const Device& d) { return d.info().max_allocation; },
            "The largest single buffer, bytes.")
        .def_prop_ro(
            "platform", [](const Device& d) { return d.info().platform; },
            "The OpenCL platform's name; 'CUDA' on CUDA.")
        .def_prop_ro(
            "version", [](const Device& d) { return d.info().version; },
            "The OpenCL device version, or the compute capability on CUDA.")
        .def_prop_ro(
            "driver_version", [](const Device& d) { return d.info().driver_version; }, "The driver's version.")
        .def_prop_ro(
            "compute_units", [](const Device& d) { return d.info().compute_units; },
            "Compute units (multiprocessors on CUDA, cores on a CPU).")
        .def_prop_ro(
            "max_work_group_size", [](const Device& d) { return d.info().max_work_group_size; },
            "The largest work-group (block) a kernel may have.")
        .def_prop_ro(
            "local_memory", [](const Device& d) { return d.info().local_memory; },
            "Local (shared) memory per work-group, bytes.")
        .def_prop_ro(
            "simd_width", [](const Device& d) { return d.info().simd_width; },
            "The warp size on CUDA; the preferred work-group multiple on OpenCL.")
        .def("__repr__", [](const Device& d) { return "<xgpu.Device " + d.backend() + ": " + d.name() + ">"; });

    nb::class_<BackendStatus>(m, "BackendStatus",
                              "What one backend offers here, or why it cannot start (xgpu.backends()).")
        .def_ro("name", &BackendStatus::name, "'cuda' or 'opencl'.")
        .def_ro("available", &BackendStatus::available, "Whether the backend started and has a device.")
        .def_ro("reason", &BackendStatus::reason, "Why the backend is unavailable ('' when it is available).")
        .def_ro("devices", &BackendStatus::devices, "The backend's devices.")
        .def_ro("libraries", &BackendStatus::libraries,
                "The libraries behind the backend, one line each with its path: the CUDA driver and NVRTC; "
                "the OpenCL ICD loader and the drivers (ICDs) it was given.");
    m.def(
        "backends",
        [] {
            nb::gil_scoped_release unlocked;
            return backends();
        },
        "Probes every backend compiled in (loading its driver) and returns a BackendStatus for each: "
        "its devices, or why it is unavailable.");
    m.def("backend_names", &backend_names, "The backends compiled in, in the order XGPU_BACKEND=auto tries them.");

    nb::class_<Event>(m, "Event", "A point in a queue (Queue.marker()): wait for it, or time the work between two.")
        .def("wait", &Event::wait, nb::call_guard<nb::gil_scoped_release>(),
             "Blocks until the work before the event is done.")
        .def_prop_ro("is_complete", &Event::is_complete, "Whether the work before the event is done.")
        .def("elapsed_ms", &Event::elapsed_ms, nb::arg("later"), nb::call_guard<nb::gil_scoped_release>(),
             "Device time from this event to a later one of the same queue, in milliseconds.");

    nb::class_<Queue>(m, "Queue",
                      "An in-order queue of a context (ctx.queue, ctx.new_queue()); queues are not ordered with "
                      "one another.")
        .def("finish", &Queue::finish, nb::call_guard<nb::gil_scoped_release>(),
             "Blocks until everything enqueued so far is done.")
        .def("marker", &Queue::marker, "An Event after everything enqueued so far.")
        .def("__eq__", [](const Queue& a, const Queue& b) { return a.impl() == b.impl(); })
        .def("__hash__", [](const Queue& q) { return std::hash<const void*>()(q.impl().get()); });
    nb::class_<QueueScope>(m, "QueueScope", "Makes a queue its context's current one while it lives (internal).")
        .def(nb::init<const Queue&>());

    nb::class_<Local>(m, "Local", "A kernel argument of local (shared) memory, nbytes per work-group.")
        .def(nb::init<std::size_t>(), nb::arg("nbytes"), "Local memory of nbytes bytes per work-group.")
        .def_ro("nbytes", &Local::bytes, "Bytes per work-group.")
        .def("__repr__", [](const Local& l) { return "xgpu.Local(" + std::to_string(l.bytes) + ")"; });

    nb::class_<Kernel>(m, "Kernel",
                       "A kernel of a Program. Called as PyOpenCL's, k(queue, global_size, *args) or "
                       "k(queue, global_size, local_size, *args), or as PyCUDA's, k(*args, block=..., grid=...); "
                       "see docs/python.md for the arguments.")
        .def_prop_ro("name", &Kernel::name, "The kernel's name.")
        .def_prop_ro("num_args", &Kernel::num_args, "The number of parameters it declares.")
        .def_prop_ro("max_group_size", &Kernel::max_group_size,
                     "The largest work-group this kernel may be launched with on its device.")
        .def("_launch", &launch, "Launches with packed arguments (internal: call the kernel instead).");

    nb::class_<Program>(m, "Program",
                        "Compiled source (Context.compile): its kernels by name, program.kernel('name'), "
                        "program.name (PyOpenCL) or program.get_function('name') (PyCUDA).")
        .def("kernel", &Program::kernel, nb::arg("name"), "The kernel of that name; InvalidArgument if there is none.")
        .def_prop_ro("kernel_names", &Program::kernel_names, "The names of the program's kernels.")
        .def_prop_ro("build_log", &Program::build_log, "The compiler's log ('' when it said nothing).")
        .def_prop_ro(
            "origin",
            [](const Program& p) {
                switch (p.origin()) {
                case ProgramOrigin::disk_cache: return "disk_cache";
                case ProgramOrigin::memory_cache: return "memory_cache";
                default: return "compiled";
                }
            },
            "'compiled', 'disk_cache' or 'memory_cache': where the binary came from.");

    nb::class_<Context>(m, "Context", "A device of one backend, its queues, memory and compiled programs.")
        .def_static("from_env", &Context::from_env, nb::call_guard<nb::gil_scoped_release>(),
                    "A context on the device XGPU_BACKEND and XGPU_DEVICE select (default: CUDA when the "
                    "driver has a device, else OpenCL, GPUs before CPUs). Raises BackendUnavailable naming "
                    "what is missing.")
        .def_static(
            "create",
            [](std::string_view backend, std::string_view device) { return Context::create(backend, device); },
            nb::arg("backend"), nb::arg("device") = "", nb::call_guard<nb::gil_scoped_release>(),
            "A context on `backend` ('cuda', 'opencl' or 'auto') and `device` (an index, or a case-insensitive "
            "part of the device, platform or vendor name; '' for the first).")
        .def_prop_ro("device", &Context::device, "The context's Device.")
        .def_prop_ro("backend", &Context::backend, "'cuda' or 'opencl'.")
        .def_prop_ro("queue", &Context::queue, "The default queue.")
        .def_prop_ro("current_queue", &Context::current_queue, "The queue array operations run on now.")
        .def("new_queue", &Context::new_queue, "A new queue, independent of the others.")
        .def(
            "finish", [](const Context& c) { c.current_queue().finish(); }, nb::call_guard<nb::gil_scoped_release>(),
            "Blocks until the current queue's work is done.")
        .def("compile", &Context::compile, nb::arg("source"), nb::arg("options") = std::vector<std::string>{},
             nb::call_guard<nb::gil_scoped_release>(),
             "Compiles source in xgpu's kernel dialect (the same text on both backends) and returns a Program; "
             "cached in memory and on disk. Raises CompileError with the build log.")
        .def("compile_native", &Context::compile_native, nb::arg("source"),
             nb::arg("options") = std::vector<std::string>{}, nb::call_guard<nb::gil_scoped_release>(),
             "Compiles CUDA C++ or OpenCL C as it stands (no dialect preamble) and returns a Program.")
        .def_prop_ro("preamble", &Context::preamble, "The dialect's preamble this backend puts before a source.")
        .def_prop_ro("launch_count", &Context::launch_count, "Kernels launched on this context so far.")
        .def("__eq__", [](const Context& a, const Context& b) { return a == b; })
        .def("__hash__", [](const Context& c) { return std::hash<const void*>()(c.impl().get()); })
        .def("__repr__",
             [](const Context& c) { return "<xgpu.Context " + c.backend() + ": " + c.device().name() + ">"; });
}

} // namespace xgpu::python
