#include <stdexcept>

#include "xgpu/codegen.hpp"

namespace xgpu::codegen {

namespace {
void indent(std::string& out, int depth) {
    out.append(std::size_t(depth) * 4, ' ');
}
} // namespace

Source& Source::kernel(std::string_view name) {
    return signature("XGPU_KERNEL void", name);
}

Source& Source::function(std::string_view type, std::string_view name) {
    return signature("XGPU_DEVICE_FN " + std::string(type), name);
}

Source& Source::signature(std::string_view head, std::string_view name) {
    indent(text_, depth_);
    text_ += head;
    text_ += ' ';
    text_ += name;
    text_ += '(';
    params_ = 0;
    return *this;
}

Source& Source::param(std::string_view type, std::string_view name) {
    if (params_ < 0) throw std::logic_error("xgpu::codegen::Source: param() outside a signature");
    if (params_++ > 0) text_ += ", ";
    text_ += type;
    text_ += ' ';
    text_ += name;
    return *this;
}

Source& Source::image_param(unsigned dims, std::string_view name, bool writable) {
    if (params_ < 0) throw std::logic_error("xgpu::codegen::Source: image_param() outside a signature");
    if (dims < 1 || dims > 3 || (writable && dims != 2))
        throw std::invalid_argument("xgpu::codegen::Source: images are 1-, 2- or 3-D, writable ones 2-D");
    if (params_++ > 0) text_ += ", ";
    text_ += writable ? "XGPU_WIMAGE" : "XGPU_IMAGE";
    text_ += char('0' + dims);
    text_ += "D_PARAM(";
    text_ += name;
    text_ += ')';
    return *this;
}

Source& Source::body() {
    if (params_ < 0) throw std::logic_error("xgpu::codegen::Source: body() without a signature");
    if (params_ == 0) text_ += "void";
    text_ += ") {\n";
    params_ = -1;
    ++depth_;
    return *this;
}

Source& Source::open(std::string_view head) {
    indent(text_, depth_);
    text_ += head;
    text_ += head.empty() ? "{\n" : " {\n";
    ++depth_;
    return *this;
}

Source& Source::close() {
    if (depth_ == 0) throw std::logic_error("xgpu::codegen::Source: close() with no open block");
    --depth_;
    indent(text_, depth_);
    text_ += "}\n";
    return *this;
}

Source& Source::line(std::string_view text) {
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        const std::string_view one = text.substr(0, end);
        if (!one.empty()) indent(text_, depth_);
        text_ += one;
        text_ += '\n';
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return *this;
}

Source& Source::raw(std::string_view text) {
    text_ += text;
    return *this;
}

const std::string& Source::str() const {
    return text_;
}

} // namespace xgpu::codegen
