// The OpenCL backend: events, with profiling timestamps for elapsed time.
#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {
namespace {
void check_status(const cl::Event& e) {
    cl_int status = CL_COMPLETE;
    check(e.getInfo(CL_EVENT_COMMAND_EXECUTION_STATUS, &status), "clGetEventInfo");
    if (status < 0) fail(status, "enqueued command", "the command before this event failed");
}
} // namespace

void Event::wait() {
    const cl_int err = event.wait();
    if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) check_status(event);
    check(err, "clWaitForEvents");
}

bool Event::is_complete() {
    cl_int status = CL_COMPLETE;
    check(event.getInfo(CL_EVENT_COMMAND_EXECUTION_STATUS, &status), "clGetEventInfo");
    if (status < 0) fail(status, "enqueued command", "the command before this event failed");
    if (status == CL_COMPLETE) return true;
    // OpenCL starts enqueued work only once its queue is flushed (a blocking call does it): a host
    // that polls (the solvers' deferred checks) flushes, or some drivers would never run the work.
    cl_command_queue q = nullptr;
    check(event.getInfo(CL_EVENT_COMMAND_QUEUE, &q), "clGetEventInfo");
    if (q) check(clFlush(q), "clFlush");
    return false;
}

double Event::elapsed_ms(detail::EventImpl& later_impl) {
    auto* later = dynamic_cast<Event*>(&later_impl);
    if (!later) throw InvalidArgument("xgpu: elapsed_ms between events of different backends");
    wait();
    later->wait();
    cl_ulong t0 = 0, t1 = 0;
    check(event.getProfilingInfo(CL_PROFILING_COMMAND_END, &t0), "clGetEventProfilingInfo");
    check(later->event.getProfilingInfo(CL_PROFILING_COMMAND_END, &t1), "clGetEventProfilingInfo");
    return (double(t1) - double(t0)) * 1e-6;
}

} // namespace xgpu::opencl
