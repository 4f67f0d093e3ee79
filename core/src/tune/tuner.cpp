// The tuner's search: evaluation of one candidate (compile, check, time) and the strategies that
// pick candidates (exhaustive; random sampling then local improvement), all inside one budget.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <set>

#include <fmt/format.h>

#include "xgpu/error.hpp"
#include "xgpu/event.hpp"
#include "xgpu/queue.hpp"
#include "xgpu/tune.hpp"

namespace xgpu::tune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The first element where `got` and `want` differ beyond `tolerance`, or none.
std::optional<std::string> mismatch(const std::vector<double>& want, const std::vector<double>& got, double tolerance) {
    if (want.size() != got.size())
        return fmt::format("result has {} elements, the start point's {}", got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        const double a = want[i], b = got[i];
        if (a == b || (std::isnan(a) && std::isnan(b))) continue;
        const double scale = std::max({std::fabs(a), std::fabs(b), 1.0});
        if (!(std::fabs(a - b) / scale <= tolerance))
            return fmt::format("wrong result: element {} is {} where the start point gives {}", i, b, a);
    }
    return std::nullopt;
}

// Every valid point of `space`, in the order of its parameters' values.
std::vector<Point> enumerate(const Space& space) {
    std::vector<Point> out;
    Point p;
    std::function<void(std::size_t)> walk = [&](std::size_t d) {
        if (d == space.params.size()) {
            if (!space.valid || space.valid(p)) out.push_back(p);
            return;
        }
        for (auto v : space.params[d].values) {
            p[space.params[d].name] = v;
            walk(d + 1);
        }
    };
    walk(0);
    return out;
}

class Search {
public:
    Search(const Context& ctx, const Space& space, const Problem& problem, const Options& o)
        : ctx_(ctx), space_(space), problem_(problem), options_(o), t0_(Clock::now()) {}

    // Evaluates `p` unless already seen or out of budget; false when the budget is spent.
    bool evaluate(const Point& p) {
        if (seen_.count(p)) return true;
        if (!room()) return false;
        seen_.insert(p);
        const auto e0 = Clock::now();
        Evaluation e = run(p);
        slowest_ = std::max(slowest_, seconds_since(e0));
        ++count_;
        if (e.ok && (result_.evaluations.empty() || e.ms < result_.best_ms)) {
            result_.best = p;
            result_.best_ms = e.ms;
        }
        if (!e.ok && !result_.evaluations.empty()) result_.failed.push_back(e);
        result_.evaluations.push_back(std::move(e));
        return true;
    }

    // The start point: the reference result every other candidate is checked against.
    void start(const Point& p) {
        if (!space_.allows(p))
            throw InvalidArgument(fmt::format("xgpu: tune: the start point {} is not in the space", to_string(p)));
        seen_.insert(p);
        const auto e0 = Clock::now();
        Evaluation e = run(p);
        slowest_ = seconds_since(e0);
        ++count_;
        if (!e.ok)
            throw InvalidArgument(fmt::format("xgpu: tune: the start point {} fails: {}", to_string(p), e.reason));
        result_.start = result_.best = p;
        result_.start_ms = result_.best_ms = e.ms;
        result_.evaluations.push_back(std::move(e));
    }

    bool room() {
        const Budget& b = options_.budget;
        const bool ok = (!b.evaluations || count_ < b.evaluations) &&
                        (b.seconds <= 0 || seconds_since(t0_) + slowest_ <= b.seconds);
        if (!ok) result_.budget_hit = true;
        return ok;
    }

    Result finish(Strategy s) {
        result_.strategy = s;
        result_.seconds = seconds_since(t0_);
        return std::move(result_);
    }

    const Point& best() const { return result_.best; }
    double elapsed() const { return seconds_since(t0_); }
    double slowest() const { return slowest_; }
    std::mt19937_64& rng() { return rng_; }
    bool seen(const Point& p) const { return seen_.count(p) != 0; }

private:
    Evaluation run(const Point& p) {
        Evaluation e;
        e.point = p;
        try {
            const std::function<void()> launch = problem_.prepare(p);
            const Queue q = ctx_.current_queue();
            launch();
            q.finish();
            std::vector<double> got = problem_.result();
            if (reference_) {
                if (auto why = mismatch(*reference_, got, problem_.tolerance)) {
                    e.reason = *why;
                    return e;
                }
            } else {
                reference_ = std::move(got);
            }
            for (int w = 0; w < options_.warmups; ++w)
                launch();
            std::vector<double> ms;
            const int runs = std::max(options_.runs, 1);
            for (int r = 0; r < runs; ++r) {
                const Event a = q.marker();
                launch();
                const Event b = q.marker();
                ms.push_back(a.elapsed_ms(b));
                // A candidate already three times slower than the best cannot win: stop timing it.
                if (!result_.evaluations.empty() && ms.back() > 3 * result_.best_ms && r + 1 >= (runs + 1) / 2) break;
                if (options_.budget.seconds > 0 && seconds_since(t0_) > options_.budget.seconds) break;
            }
            e.ms = median(ms);
            e.ok = true;
        } catch (const std::exception& err) { // xgpu's errors, and whatever the problem's own code throws
            e.reason = err.what();
        }
        return e;
    }

    const Context& ctx_;
    const Space& space_;
    const Problem& problem_;
    const Options& options_;
    Clock::time_point t0_;
    std::mt19937_64 rng_{options_.seed};
    std::set<Point> seen_;
    std::optional<std::vector<double>> reference_;
    std::uint64_t count_ = 0;
    double slowest_ = 0;
    Result result_;
};

// A random point of the space that its filter allows, or none after many tries.
std::optional<Point> sample(const Space& space, std::mt19937_64& rng) {
    for (int tries = 0; tries < 1000; ++tries) {
        Point p;
        for (const auto& prm : space.params)
            p[prm.name] = prm.values[std::uniform_int_distribution<std::size_t>(0, prm.values.size() - 1)(rng)];
        if (!space.valid || space.valid(p)) return p;
    }
    return std::nullopt;
}

// The points one step from `p` along one parameter's list of values.
std::vector<Point> neighbours(const Space& space, const Point& p) {
    std::vector<Point> out;
    for (const auto& prm : space.params) {
        const auto it = std::find(prm.values.begin(), prm.values.end(), p.at(prm.name));
        const std::size_t i = std::size_t(it - prm.values.begin());
        for (std::size_t j : {i - 1, i + 1}) {
            if (j >= prm.values.size()) continue; // i - 1 wraps when i == 0
            Point q = p;
            q[prm.name] = prm.values[j];
            if (!space.valid || space.valid(q)) out.push_back(q);
        }
    }
    return out;
}

} // namespace

std::string to_string(const Point& p) {
    std::string s;
    for (const auto& [k, v] : p)
        s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
    return s;
}

bool Space::allows(const Point& p) const {
    if (p.size() != params.size()) return false;
    for (const auto& prm : params) {
        const auto it = p.find(prm.name);
        if (it == p.end() || std::find(prm.values.begin(), prm.values.end(), it->second) == prm.values.end())
            return false;
    }
    return !valid || valid(p);
}

std::uint64_t Space::size() const {
    std::uint64_t n = 1;
    for (const auto& prm : params)
        n = prm.values.empty() ? 0 : std::min<std::uint64_t>(n * prm.values.size(), std::uint64_t(1) << 62);
    return n;
}

Result tune(const Context& ctx, const Space& space, const Point& start, const Problem& problem,
            const Options& options) {
    if (!problem.prepare || !problem.result) throw InvalidArgument("xgpu: tune: the problem needs prepare and result");
    for (const auto& prm : space.params)
        if (prm.values.empty()) throw InvalidArgument(fmt::format("xgpu: tune: parameter {} has no values", prm.name));
    Search s(ctx, space, problem, options);
    s.start(start);
    Strategy strategy = options.strategy;
    if (strategy == Strategy::automatic) {
        // Exhaustive when the whole space fits the budget: in evaluations, and in seconds at the
        // start point's cost (its compile included).
        std::uint64_t limit = options.exhaustive_limit;
        if (options.budget.evaluations) limit = std::min(limit, options.budget.evaluations);
        if (options.budget.seconds > 0 && s.slowest() > 0)
            limit = std::min<std::uint64_t>(limit, std::uint64_t(options.budget.seconds / s.slowest()));
        strategy = space.size() <= limit ? Strategy::exhaustive : Strategy::search;
    }
    if (strategy == Strategy::exhaustive) {
        // In a random order: a budget that ends the walk early leaves a uniform sample of the
        // space, not its first corner.
        std::vector<Point> all = enumerate(space);
        std::shuffle(all.begin(), all.end(), s.rng());
        for (const Point& p : all)
            if (!s.evaluate(p)) break;
        return s.finish(strategy);
    }
    // Random sampling: a third of the evaluation budget; else, with a time budget, until half of
    // it is spent (at most half the space); else 8 to 32 points. Always within half the time budget...
    const std::uint64_t samples = options.budget.evaluations
                                      ? std::max<std::uint64_t>(options.budget.evaluations / 3, 1)
                                  : options.budget.seconds > 0 ? std::max<std::uint64_t>(space.size() / 2, 1)
                                                               : std::clamp<std::uint64_t>(space.size() / 8, 8, 32);
    bool open = true;
    std::uint64_t sampled = 0;
    const double sampling_seconds = options.budget.seconds > 0 ? options.budget.seconds / 2 : 0;
    for (std::uint64_t tries = 0; open && sampled < samples && tries < samples * 8; ++tries) {
        if (sampling_seconds > 0 && s.elapsed() > sampling_seconds) break;
        const auto p = sample(space, s.rng());
        if (!p) break;
        if (s.seen(*p)) continue;
        open = s.evaluate(*p);
        ++sampled;
    }
    // ...then local improvement: move to the best neighbour while one is faster.
    while (open) {
        const Point from = s.best();
        for (const Point& q : neighbours(space, from))
            if (!(open = s.evaluate(q))) break;
        if (s.best() == from) break;
    }
    return s.finish(strategy);
}

} // namespace xgpu::tune
