// The CUDA backend: events, recorded on a stream, with timing.
#include "cuda.hpp"

namespace xgpu::cuda {

Event::Event(std::shared_ptr<Context> ctx, CUstream stream) : context(std::move(ctx)) {
    context->make_current();
    check(api::cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
    if (const CUresult r = api::cuEventRecord(event, stream); r != CUDA_SUCCESS) {
        api::cuEventDestroy(event);
        fail(r, "cuEventRecord");
    }
}

Event::~Event() {
    if (context->try_make_current()) api::cuEventDestroy(event); // a destructor cannot report failure
}

void Event::wait() {
    context->make_current();
    check(api::cuEventSynchronize(event), "cuEventSynchronize");
}

bool Event::is_complete() {
    context->make_current();
    const CUresult r = api::cuEventQuery(event);
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(r, "cuEventQuery");
    return true;
}

double Event::elapsed_ms(detail::EventImpl& later_impl) {
    auto* later = dynamic_cast<Event*>(&later_impl);
    if (!later)
        throw InvalidArgument("xgpu: elapsed_ms between events of different backends", {"cuda", "elapsed_ms", 0, ""});
    wait();
    later->wait();
    float ms = 0;
    check(api::cuEventElapsedTime(&ms, event, later->event), "cuEventElapsedTime");
    return ms;
}

} // namespace xgpu::cuda
