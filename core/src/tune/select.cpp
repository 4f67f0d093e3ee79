// XGPU_AUTOTUNE and what it means for one key: the start point, the database's point (with
// fallbacks), or a point tuned now and stored.
#include <fmt/format.h>

#include "../env.hpp"
#include "database.hpp"
#include "xgpu/warning.hpp"

namespace xgpu::tune {
namespace {

detail::Entry entry_for(const Context& ctx, const Key& key) {
    detail::Entry e;
    e.family = key.family;
    e.version = key.version;
    e.types = key.types;
    e.device = detail::device_id(ctx.device().info());
    e.bucket = detail::size_bucket(key.n);
    e.n = key.n;
    return e;
}

} // namespace

Mode mode() {
    const std::string m = xgpu::detail::env::autotune();
    if (m == "off") return Mode::off;
    if (m == "on") return Mode::on;
    if (m == "force") return Mode::force;
    return Mode::cached;
}

const char* name(Mode m) {
    switch (m) {
    case Mode::off: return "off";
    case Mode::on: return "on";
    case Mode::force: return "force";
    default: return "cached";
    }
}

const char* name(Source s) {
    switch (s) {
    case Source::database: return "database";
    case Source::fallback: return "fallback";
    case Source::tuned: return "tuned";
    default: return "start";
    }
}

double mode_budget_seconds() {
    return xgpu::detail::env::autotune_budget();
}

std::optional<Selection> lookup(const Context& ctx, const Key& key) {
    const detail::Entry e = entry_for(ctx, key);
    auto found = detail::find(e.family, e.version, e.types, e.device, e.bucket);
    if (!found) return std::nullopt;
    Selection s;
    s.point = std::move(found->first);
    s.source = found->second;
    return s;
}

void store(const Context& ctx, const Key& key, const Result& result) {
    detail::Entry e = entry_for(ctx, key);
    e.point = result.best;
    e.ms = result.best_ms;
    e.start_ms = result.start_ms;
    detail::put(e);
}

Selection select(const Context& ctx, const Key& key, const Space& space, const Point& start,
                 const std::function<Problem()>& make_problem, const Options& options) {
    return detail::select(mode(), ctx, key, space, start, make_problem, options);
}

Selection detail::select(Mode m, const Context& ctx, const Key& key, const Space& space, const Point& start,
                         const std::function<Problem()>& make_problem, const Options& options) {
    Selection start_sel;
    start_sel.point = start;
    if (m == Mode::off) return start_sel;
    const bool retune = m == Mode::force && detail::first_force(entry_for(ctx, key));
    if (!retune) {
        if (auto s = lookup(ctx, key)) {
            if (!space.allows(s->point)) {
                xgpu::detail::warn(fmt::format("tuning database: the point {} stored for {} (types {}) is not in its "
                                               "space on this device; it is ignored",
                                               to_string(s->point), key.family, key.types));
            } else if (m != Mode::on || s->source == Source::database) {
                return *s;
            }
        }
        if (m == Mode::cached || m == Mode::force) return start_sel;
    }
    Options o = options;
    if (!o.budget.seconds && !o.budget.evaluations) o.budget.seconds = mode_budget_seconds();
    Selection s;
    s.result = tune(ctx, space, start, make_problem(), o);
    s.point = s.result->best;
    s.source = Source::tuned;
    store(ctx, key, *s.result);
    return s;
}

} // namespace xgpu::tune
