#include "xgpu/template.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <fmt/format.h>

#include "xgpu/error.hpp"

namespace xgpu {
namespace {

bool identifier(std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// An identifier (a type name such as float, uint64_t, xgpu_cdouble) or a number as C writes one
// (digits, '.', exponent, sign, suffix letters): nothing that could end or split the option
// (OpenCL takes its options as one string, split at spaces).
bool valid_value(std::string_view v) {
    if (v.empty()) return false;
    if (std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v[0] == '+' || v[0] == '.')
        return std::all_of(v.begin(), v.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+';
        });
    return identifier(v);
}

} // namespace

KernelTemplate::KernelTemplate(const Context& ctx, std::string source, std::string kernel_name)
    : ctx_(ctx), source_(std::move(source)), name_(std::move(kernel_name)) {
    if (!ctx_.impl()) throw InvalidArgument("xgpu: KernelTemplate on an empty Context");
    if (!identifier(name_))
        throw InvalidArgument(fmt::format("xgpu: KernelTemplate: '{}' is not a kernel name", name_));
}

std::vector<std::string> KernelTemplate::options(const Parameters& values) {
    std::vector<std::pair<std::string, std::string>> sorted;
    for (const auto& [name, value] : values) {
        if (!identifier(name))
            throw InvalidArgument(fmt::format("xgpu: KernelTemplate: parameter name '{}' is not an identifier", name));
        if (!valid_value(value.text))
            throw InvalidArgument(
                fmt::format("xgpu: KernelTemplate: the value '{}' of {} is not an identifier, a one-word type "
                            "name or a number",
                            value.text, name));
        sorted.emplace_back(name, value.text);
    }
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 1; i < sorted.size(); ++i)
        if (sorted[i].first == sorted[i - 1].first)
            throw InvalidArgument(fmt::format("xgpu: KernelTemplate: parameter {} is given twice", sorted[i].first));
    std::vector<std::string> out;
    for (const auto& [name, value] : sorted)
        out.push_back(fmt::format("-D{}={}", name, value));
    return out;
}

Kernel KernelTemplate::get(const Parameters& values) const {
    const auto opts = options(values);
    {
        std::lock_guard lock(made_->mutex);
        if (auto it = made_->kernels.find(opts); it != made_->kernels.end()) return it->second;
    }
    Kernel k = ctx_.compile(source_, opts).kernel(name_);
    std::lock_guard lock(made_->mutex);
    return made_->kernels.emplace(opts, k).first->second;
}

} // namespace xgpu
