#include "xgpu/event.hpp"

#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"

namespace xgpu {
namespace {
detail::EventImpl& get(const Event& e, const char* what) {
    if (!e.impl()) throw InvalidArgument(std::string("xgpu: ") + what + " on an empty Event");
    return *e.impl();
}
} // namespace

void Event::wait() const {
    get(*this, "wait").wait();
}
bool Event::is_complete() const {
    return get(*this, "is_complete").is_complete();
}
double Event::elapsed_ms(const Event& later) const {
    return get(*this, "elapsed_ms").elapsed_ms(get(later, "elapsed_ms"));
}

} // namespace xgpu
