// xgpu's autotuner: times the variants of a kernel family on the device at hand and keeps the
// winners in a tuning database beside the compile cache.
//
// A family is a parameter space (discrete values per parameter, a validity filter) with a start
// point (the family's default chooser), and a Problem that builds and runs the variant at a point
// on representative data. Each candidate is compiled (the compile cache keeps it), run once and
// checked against the start point's result (a variant that computes something else is rejected,
// never chosen), then timed with device events (median of several runs after a warm-up). Small
// spaces are searched exhaustively; large ones by random sampling then local improvement; every
// strategy keeps to the budget in evaluations and in seconds.
//
//   xgpu::tune::Space space{{{"TILE", {8, 16, 32}}, {"UNROLL", {1, 2, 4}}}, valid};
//   xgpu::tune::Key key{"my_transpose", 1, "f32", n};
//   xgpu::tune::Point p = xgpu::tune::select(ctx, key, space, {{"TILE", 16}, {"UNROLL", 1}}, make_problem);
//
// select() follows XGPU_AUTOTUNE=off|cached|on|force (default cached): off gives the start point;
// cached what the database holds (with fallbacks: the same device under another driver, then the
// same architecture, then the nearest size bucket on this device), else the start; on tunes a key
// the database lacks for this device (within XGPU_AUTOTUNE_BUDGET seconds, default 2) and stores
// it; force re-tunes each key once per process. The library's own elementwise, reduction and
// scan launch shapes go through the same database (families "elementwise", "reduction", "scan").
//
// The database is tuning.json in the compile cache directory (XGPU_CACHE_DIR, ...): readable,
// mergeable JSON with a checksum per entry, written atomically (temp file + rename) under a lock
// file, merged with what is on disk at write time so that concurrent processes lose nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xgpu/codegen.hpp"
#include "xgpu/context.hpp"
#include "xgpu/dtype.hpp"

namespace xgpu::tune {

// One parameter and the values it may take, in order (local improvement steps to neighbours).
struct Param {
    std::string name;
    std::vector<std::int64_t> values;
};

// A point of a space: a value for each parameter, by name.
using Point = std::map<std::string, std::int64_t>;

std::string to_string(const Point& p); // "group_size=256 items=4"

struct Space {
    std::vector<Param> params;
    // Whether a point may run on the device (local memory, work-group limits, divisibility);
    // none: every point.
    std::function<bool(const Point&)> valid;

    bool allows(const Point& p) const; // in the space (each value listed) and valid
    // The number of points of the cartesian product, before the filter.
    std::uint64_t size() const;
};

struct Budget {
    std::uint64_t evaluations = 0; // 0: no limit
    double seconds = 0;            // 0: no limit
};

enum class Strategy { automatic, exhaustive, search };

struct Options {
    Budget budget;
    Strategy strategy = Strategy::automatic;
    std::uint64_t exhaustive_limit = 64; // automatic: exhaustive when the space has at most this many points
    int warmups = 1;                     // untimed runs after the checked one
    int runs = 5;                        // timed runs; the median counts
    std::uint64_t seed = 1;              // random sampling
};

// What the tuner needs of a family on representative data.
struct Problem {
    // Prepares the variant at `p` (compiling it) and returns what enqueues one run of it on the
    // context's current queue. Throwing rejects the point (reported in Result::failed).
    std::function<std::function<void()>(const Point&)> prepare;
    // The result of the last run, read to the host, for comparison with the start point's.
    std::function<std::vector<double>()> result;
    // Largest accepted |a - b| / max(|a|, |b|, 1) element by element.
    double tolerance = 0;
};

struct Evaluation {
    Point point;
    double ms = 0;      // median device time of one run; 0 when not timed
    bool ok = false;    // ran, matched the start's result and was timed
    std::string reason; // why not, when !ok
};

struct Result {
    Point best, start;
    double best_ms = 0, start_ms = 0;
    std::vector<Evaluation> evaluations; // in order, the start first
    std::vector<Evaluation> failed;      // wrong results and errors: never chosen
    Strategy strategy = Strategy::automatic;
    double seconds = 0; // the tuner's own wall time
    bool budget_hit = false;
};

// Tunes `problem` over `space` from `start` (which must be in the space and run correctly: the
// reference every candidate is checked against; an error there is thrown).
Result tune(const Context& ctx, const Space& space, const Point& start, const Problem& problem, const Options& options);

// What a database entry is filed under, besides the device (taken from the context).
struct Key {
    std::string family;
    int version = 1;     // bump when the family's kernels change: older entries stop matching
    std::string types;   // element types, e.g. "f64" or "f32,i32"
    std::uint64_t n = 0; // problem size; entries are kept per size bucket, floor(log2 n)
};

enum class Mode { off, cached, on, force };
Mode mode(); // XGPU_AUTOTUNE; an unknown value throws InvalidArgument naming the variable
const char* name(Mode m);
double mode_budget_seconds(); // XGPU_AUTOTUNE_BUDGET, 2 when unset

// Where a selected point came from.
enum class Source { start, database, fallback, tuned };
const char* name(Source s);

struct Selection {
    Point point;
    Source source = Source::start;
    std::optional<Result> result; // when tuned now
};

// The database's point for `key` on `ctx`'s device, with the fallbacks above; none when absent.
std::optional<Selection> lookup(const Context& ctx, const Key& key);

// Stores a tuning result for `key` on `ctx`'s device (in memory, and on disk when the cache
// directory is writable; failure there costs a warning).
void store(const Context& ctx, const Key& key, const Result& result);

// The point for `key` per XGPU_AUTOTUNE (see above), tuning with the problem `make_problem`
// returns (called only to tune) when the mode asks for it. Options' budget defaults to the mode's.
Selection select(const Context& ctx, const Key& key, const Space& space, const Point& start,
                 const std::function<Problem()>& make_problem, const Options& options = {});

// The database as JSON text (what tuning.json holds), and merging such text into it (entries of
// the same key are replaced; an invalid entry is skipped with a warning). Throws InvalidArgument
// for text that is not a tuning database, is larger than database_size_limit or nests objects
// and arrays more than 64 deep (a valid database nests 4 deep).
//
// tuning.json is read as hostile until checked: it is loaded only from a directory the compile
// cache trusts (owned by this user or root, not writable by group or others unless sticky), only
// if it is a regular file (not a symbolic link, FIFO or device) owned by this user or root and not
// writable by group or others, of at most database_size_limit bytes and nested at most 64 deep.
// Anything else costs a warning and the defaults are used; it never throws.
std::string export_database();
void import_database(const std::string& json);
// The most bytes a tuning database may hold (tens of thousands of entries of a few hundred bytes):
// checked before a file is read, so that a huge file or a device costs no memory.
inline constexpr std::size_t database_size_limit = std::size_t(16) << 20;
// Where the database lives; empty when the compile cache is off.
std::string database_path();

// The library's own families: the launch shapes of elementwise kernels (work-group size, items
// per work-item, whole guard-free groups) tuned on `z = a*x + b*y`, of reductions (work-group
// size, accumulators per work-item, blocked or strided) tuned on dot(x, y), and of scans (tile:
// work-items, elements per work-item, staged through local memory or direct) tuned on cumsum(x),
// for float32 and float64. Kernels take the database's shape by the rule: a LaunchShapeScope,
// else (for scans) XGPU_SCAN_TILE, else the database (per XGPU_AUTOTUNE, for the size bucket of
// the call), else the family's default chooser. Segmented scans are not tuned.
struct ShapeTuning {
    Key key;
    Result result;
    double bytes = 0; // moved by one run, each input read and the output written once: GB/s = bytes / ms / 1e6
};
bool tunable(KernelFamily family, DType type);
Space shape_space(const Context& ctx, KernelFamily family, DType type);
Point to_point(KernelFamily family, const LaunchShape& s);
LaunchShape to_shape(const Point& p);
// Tunes `family` for `type` on `n` elements (the key's size bucket), and stores the winner.
ShapeTuning tune_shape(const Context& ctx, KernelFamily family, DType type, std::uint64_t n, const Options& options);

} // namespace xgpu::tune
