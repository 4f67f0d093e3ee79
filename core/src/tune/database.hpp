// The tuning database, the module's side: entries in memory (loaded once per cache directory and
// process) and in tuning.json beside the compile cache, with the fallback chain of lookups.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "xgpu/codegen.hpp"
#include "xgpu/device.hpp"
#include "xgpu/tune.hpp"

namespace xgpu::tune::detail {

// Bumped whenever the file's layout changes; a file of another schema is ignored with a warning.
inline constexpr int schema_version = 1;

// How deep a tuning database's text may nest objects and arrays (a valid one nests 4 deep): checked
// before the text reaches nlohmann::json, whose parser, copies and destructor recurse.
inline constexpr std::size_t database_depth_limit = 64;

// What a device is filed under.
struct DeviceId {
    std::string backend, vendor, name, driver, arch;
};
DeviceId device_id(const DeviceInfo& d);

// floor(log2 n); 0 for n <= 1.
int size_bucket(std::uint64_t n);

struct Entry {
    std::string family;
    int version = 1;
    std::string types;
    DeviceId device;
    int bucket = 0;
    Point point;
    double ms = 0, start_ms = 0; // the winner's and the start point's median times when tuned
    std::uint64_t n = 0;         // the size it was tuned at
};

// The entry's key in tuning.json: every field that files it, readable.
std::string entry_key(const Entry& e);

// Why `text` is refused before it is parsed (larger than database_size_limit, nested deeper than
// database_depth_limit), or nothing.
std::optional<std::string> refuse_text(std::string_view text);

// The entries of a database text; `where` names it in warnings. Whatever the text holds, the
// result is some entries and at most a warning per problem, never an exception (the fuzzer's
// entry point).
std::map<std::string, Entry> parse_database(const std::string& text, const std::string& where);

// The best match for (family, version, types, bucket) on `device`: exact, then the same device
// under another driver, then the same architecture, then this device's nearest size bucket.
// Source::database for an exact match, Source::fallback otherwise.
std::optional<std::pair<Point, Source>> find(const std::string& family, int version, const std::string& types,
                                             const DeviceId& device, int bucket);

// Adds `e` in memory and writes it to disk (merged with what is there, under the lock file).
void put(const Entry& e);

// A number that changes whenever what lookups can find changes (a store, an import, a reset):
// tables that hold lookups in memory check it.
std::uint64_t generation();

// Whether this process has tuned the entry already (XGPU_AUTOTUNE=force re-tunes once), and
// marks it so.
bool first_force(const Entry& e);

// select() under mode `m`.
Selection select(Mode m, const Context& ctx, const Key& key, const Space& space, const Point& start,
                 const std::function<Problem()>& make_problem, const Options& options);

// The launch shape of a library family from the database per XGPU_AUTOTUNE, for a call on `n`
// elements (0: not known, the bucket of 2^22); none: the family's default chooser. Looked up once
// per device, family, type, bucket and mode, then held in memory.
std::optional<LaunchShape> database_shape(const Context& ctx, KernelFamily family, DType type, std::uint64_t n);

// The problem a library family's shapes are timed on, for `type` on `n` elements: the array
// layer's kernels, which that layer registers (set_shape_problems, core/src/array/tuning.cpp)
// before it first asks for a shape, so that this layer needs nothing above it. Until then
// database_shape only looks up (XGPU_AUTOTUNE=on acts as cached) and tune_library_shape throws.
using ShapeProblems = Problem (*)(const Context& ctx, KernelFamily family, DType type, std::uint64_t n);
void set_shape_problems(ShapeProblems make);
// tune_shape's work, on the registered problems.
ShapeTuning tune_library_shape(const Context& ctx, KernelFamily family, DType type, std::uint64_t n,
                               const Options& options);

// Forgets the shapes database_shape holds (reset() calls it).
void forget_shapes();

// Forgets everything held in memory, as a new process would start (tests).
void reset();

} // namespace xgpu::tune::detail
