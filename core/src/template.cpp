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

// Identifiers separated by single spaces (float, uint64_t, unsigned int, xgpu_cdouble) or a number
// as C writes one (digits, '.', exponent, sign, suffix letters): nothing that could end the
// #define line or put other code in it.
bool valid_value(std::string_view v) {
    if (v.empty()) return false;
    if (std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v[0] == '+' || v[0] == '.')
        return std::all_of(v.begin(), v.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+';
        });
    std::size_t start = 0;
    while (start <= v.size()) {
        const std::size_t end = std::min(v.find(' ', start), v.size());
        if (!identifier(v.substr(start, end - start))) return false;
        start = end + 1;
    }
    return true;
}

} // namespace

KernelTemplate::KernelTemplate(const Context& ctx, std::string source, std::string kernel_name)
    : ctx_(ctx), source_(std::move(source)), name_(std::move(kernel_name)) {
    if (!ctx_.impl()) throw InvalidArgument("xgpu: KernelTemplate on an empty Context");
    if (!identifier(name_))
        throw InvalidArgument(fmt::format("xgpu: KernelTemplate: '{}' is not a kernel name", name_));
}

std::vector<std::string> KernelTemplate::definitions(const Parameters& values) {
    std::vector<std::pair<std::string, std::string>> sorted;
    for (const auto& [name, value] : values) {
        if (!identifier(name))
            throw InvalidArgument(fmt::format("xgpu: KernelTemplate: parameter name '{}' is not an identifier", name));
        if (!valid_value(value.text))
            throw InvalidArgument(fmt::format(
                "xgpu: KernelTemplate: the value '{}' of {} is not a name, type name or number", value.text, name));
        sorted.emplace_back(name, value.text);
    }
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 1; i < sorted.size(); ++i)
        if (sorted[i].first == sorted[i - 1].first)
            throw InvalidArgument(fmt::format("xgpu: KernelTemplate: parameter {} is given twice", sorted[i].first));
    std::vector<std::string> out;
    for (const auto& [name, value] : sorted)
        out.push_back(fmt::format("#define {} {}", name, value));
    return out;
}

Kernel KernelTemplate::get(const Parameters& values) const {
    const auto defs = definitions(values);
    {
        std::lock_guard lock(made_->mutex);
        if (auto it = made_->kernels.find(defs); it != made_->kernels.end()) return it->second;
    }
    std::string text;
    for (const auto& d : defs)
        text += d + "\n";
    text += "#line 1\n" + source_; // the compiler's messages keep the template's own line numbers
    Kernel k = ctx_.compile(text).kernel(name_);
    std::lock_guard lock(made_->mutex);
    return made_->kernels.emplace(defs, k).first->second;
}

} // namespace xgpu
