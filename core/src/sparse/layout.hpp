// The device layouts a Csr keeps beside its CSR arrays, one per format that needs its own
// (SELL-C-sigma, packeted, the merge path's tile rows): built on first use, once however many threads ask, timed, and
// shared by every copy of the matrix. A format's builder lives in its own file and reaches its layout through
// layout<L>(a, format, make); nothing here knows any format.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "xgpu/sparse.hpp"

namespace xgpu::sparse::detail {

// A format's device arrays; each format derives its own.
struct Layout {
    virtual ~Layout() = default;
};

class LayoutCache {
public:
    // The layout of format f, made by make() (returning std::shared_ptr<const L>) the first time.
    // A second thread asking while the first builds waits for it; other formats build meanwhile.
    template <class L, class Make> std::shared_ptr<const L> get(Format f, Make&& make) {
        Slot& slot = this->slot(f);
        std::lock_guard lock(slot.mutex);
        if (!slot.layout) {
            const auto t0 = std::chrono::steady_clock::now();
            std::shared_ptr<const L> built = make();
            slot.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            slot.layout = std::move(built);
        }
        return std::static_pointer_cast<const L>(slot.layout);
    }

    // f's layout if it is built (nothing is built here).
    template <class L> std::shared_ptr<const L> find(Format f) {
        Slot& slot = this->slot(f);
        std::lock_guard lock(slot.mutex);
        return std::static_pointer_cast<const L>(slot.layout);
    }

    // The build time of f's layout, once built.
    std::optional<double> build_ms(Format f) {
        Slot& slot = this->slot(f);
        std::lock_guard lock(slot.mutex);
        return slot.layout ? std::optional<double>(slot.ms) : std::nullopt;
    }

private:
    struct Slot {
        std::mutex mutex;
        std::shared_ptr<const Layout> layout;
        double ms = 0;
    };
    Slot& slot(Format f) {
        std::lock_guard lock(mutex_);
        auto& s = slots_[f];
        if (!s) s = std::make_unique<Slot>();
        return *s;
    }

    std::mutex mutex_;
    std::map<Format, std::unique_ptr<Slot>> slots_; // a Slot never moves once made
};

template <class L, Value T, Index I, class Make>
std::shared_ptr<const L> layout(const Csr<T, I>& a, Format f, Make&& make) {
    return a.layouts().template get<L>(f, std::forward<Make>(make));
}

} // namespace xgpu::sparse::detail
