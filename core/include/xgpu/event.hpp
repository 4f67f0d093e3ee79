// xgpu events: a point in a queue's work that the host can wait on and time.
#pragma once

#include <memory>

namespace xgpu {

namespace detail {
class EventImpl;
}

class Event {
public:
    Event() = default;
    explicit Event(std::shared_ptr<detail::EventImpl> impl) : impl_(std::move(impl)) {}

    // Blocks until the work before this event has finished. Throws if that work failed.
    void wait() const;
    // True once the work before this event has finished.
    bool is_complete() const;
    // Device time in milliseconds from this event to `later` (both must have completed or are waited for).
    double elapsed_ms(const Event& later) const;

    explicit operator bool() const { return impl_ != nullptr; }
    const std::shared_ptr<detail::EventImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::EventImpl> impl_;
};

} // namespace xgpu
