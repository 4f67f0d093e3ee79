// The operation table. Each row's code functions get the operands' values in kernel code; numpy's
// semantics are kept where C's differ (floor modulo, x % 0, MIN % -1, NaN-propagating maximum,
// round half to even, integer powers).
#include "operations.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "xgpu/error.hpp"

namespace xgpu::codegen {

namespace {

bool is_complex(DType t) {
    return kind(t) == Kind::complex;
}
bool is_float(DType t) {
    return kind(t) == Kind::floating;
}
const char* dev(DType t) {
    return device_type(t);
}

} // namespace

std::string convert(const std::string& v, DType from, DType to) {
    if (from == to) return v;
    if (to == DType::bool_)
        return is_complex(from) ? fmt::format("(uint8_t)({0}.re != 0 || {0}.im != 0)", v)
                                : fmt::format("(uint8_t)({} != 0)", v);
    if (is_complex(to)) {
        const char* r = dev(real_type(to));
        if (is_complex(from)) return fmt::format("{}_make(({}){}.re, ({}){}.im)", dev(to), r, v, r, v);
        return fmt::format("{}_make(({}){}, ({})0)", dev(to), r, v, r);
    }
    if (is_complex(from)) return fmt::format("({}){}.re", dev(to), v);
    return fmt::format("({}){}", dev(to), v);
}

namespace {

// Operand k converted to the type the operation computes in.
std::string in(const Call& c, int k, DType t) {
    return convert(c.arg[k], c.type[k], t);
}
// Binary operations compute in their result type; comparisons in the operands' promoted type.
std::string a_(const Call& c) {
    return in(c, 0, c.result);
}
std::string b_(const Call& c) {
    return in(c, 1, c.result);
}
DType compared(const Call& c) {
    return promote(c.type[0], c.type[1]);
}

// ---- logic and comparisons ----
std::string logic(const Call& c) {
    return fmt::format("(uint8_t)({} {} {})", in(c, 0, DType::bool_), c.name == "and" ? "&&" : "||",
                       in(c, 1, DType::bool_));
}
std::string compare(const Call& c) {
    static constexpr std::array<std::pair<std::string_view, const char*>, 6> ops{
        {{"eq", "=="}, {"ne", "!="}, {"lt", "<"}, {"le", "<="}, {"gt", ">"}, {"ge", ">="}}};
    const auto op = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return o.first == c.name; })->second;
    const DType t = compared(c);
    return fmt::format("(uint8_t)({} {} {})", in(c, 0, t), op, in(c, 1, t));
}
std::string complex_equal(const Call& c) {
    const DType t = compared(c);
    return c.name == "eq" ? fmt::format("(uint8_t)({0}.re == {1}.re && {0}.im == {1}.im)", in(c, 0, t), in(c, 1, t))
                          : fmt::format("(uint8_t)({0}.re != {1}.re || {0}.im != {1}.im)", in(c, 0, t), in(c, 1, t));
}

// ---- arithmetic ----
std::string arithmetic(const Call& c) {
    const char* sym = c.name == "add" ? "+" : c.name == "sub" ? "-" : c.name == "mul" ? "*" : "/";
    return fmt::format("({} {} {})", a_(c), sym, b_(c));
}
std::string complex_arithmetic(const Call& c) {
    return fmt::format("{}_{}({}, {})", dev(c.result), c.name, a_(c), b_(c));
}
// numpy: % takes the divisor's sign (floor modulo), fmod the dividend's; x % 0 is 0 for integers,
// and so is MIN % -1 (undefined in C).
std::string remainder(const Call& c) {
    const DType t = c.result;
    const std::string x = c.temps.temp(t, a_(c)), y = c.temps.temp(t, b_(c));
    const std::string r = is_float(t) ? fmt::format("fmod({}, {})", x, y)
                                      : fmt::format("(({1} == 0{3}) ? ({2})0 : {0} % {1})", x, y, dev(t),
                                                    kind(t) == Kind::signed_int ? fmt::format(" || {} == -1", y) : "");
    if (c.name == "fmod") return r;
    const std::string rv = c.temps.temp(t, r);
    return fmt::format("(({0} != 0 && (({0} < 0) != ({1} < 0))) ? ({2})({0} + {1}) : {0})", rv, y, dev(t));
}
// numpy's floor_divide. Floats as numpy's npy_divmod (the quotient of x - fmod(x, y), rounded to
// the nearest integer, so that 1 // 0.1 is 9 as in numpy); x / 0 is x / y. Integers round toward
// minus infinity; x // 0 is 0 and MIN // -1 wraps to MIN, as numpy gives them.
std::string floor_divide(const Call& c) {
    const DType t = c.result;
    const std::string T = dev(t), x = c.temps.temp(t, a_(c)), y = c.temps.temp(t, b_(c));
    if (is_float(t)) {
        const std::string m = c.temps.temp(t, fmt::format("fmod({}, {})", x, y));
        const std::string d = c.temps.temp(
            t, fmt::format("(({0} - {1}) / {2} - (({1} != 0 && (({2} < 0) != ({1} < 0))) ? ({3})1 : ({3})0))", x, m, y,
                           T));
        const std::string f = c.temps.temp(t, fmt::format("floor({})", d));
        return fmt::format("(({1} == 0) ? {0} / {1} : ({2} != 0) ? {3} + (({2} - {3} > ({4})0.5) ? ({4})1 : ({4})0) "
                           ": copysign(({4})0, {0} / {1}))",
                           x, y, d, f, T);
    }
    if (kind(t) != Kind::signed_int) return fmt::format("(({1} == 0) ? ({2})0 : ({2})({0} / {1}))", x, y, T);
    return fmt::format("(({1} == 0) ? ({2})0 : ({1} == -1) ? ({2})(0ull - (uint64_t)(int64_t){0}) : "
                       "({2})({0} / {1} - (({0} % {1} != 0 && (({0} < 0) != ({1} < 0))) ? 1 : 0)))",
                       x, y, T);
}
std::string extremum(const Call& c) { // NaN propagates, as numpy's maximum/minimum
    const std::string x = c.temps.temp(c.result, a_(c)), y = c.temps.temp(c.result, b_(c));
    const char* op = c.name == "maximum" ? ">" : "<";
    if (is_float(c.result)) return fmt::format("(({0} != {0} || {0} {2} {1}) ? {0} : {1})", x, y, op);
    return fmt::format("({0} {2} {1} ? {0} : {1})", x, y, op);
}
std::string power(const Call& c) {
    const DType t = c.result;
    if (is_float(t)) return fmt::format("pow({}, {})", a_(c), b_(c));
    // Integers: computed unsigned (wrapping, as numpy); a negative exponent gives 0 or +-1.
    const bool sgn = kind(t) == Kind::signed_int || t == DType::bool_;
    return fmt::format("({})xgpu_{}pow({}, {})", dev(t), sgn ? "i" : "u", a_(c), b_(c));
}
std::string call2(const Call& c) { // atan2, hypot
    return fmt::format("{}({}, {})", c.name, a_(c), b_(c));
}

// ---- unary ----
std::string logical_not(const Call& c) {
    return fmt::format("(uint8_t)!{}", in(c, 0, DType::bool_));
}
std::string identity(const Call& c) {
    return c.arg[0];
}
std::string negate(const Call& c) {
    return convert(fmt::format("(-{})", c.arg[0]), c.type[0], c.result);
}
std::string imaginary_zero(const Call& c) {
    return fmt::format("({})0", dev(c.result));
}
std::string magnitude(const Call& c) {
    const DType t = c.type[0];
    if (is_float(t)) return fmt::format("fabs({})", c.arg[0]);
    if (kind(t) == Kind::signed_int) return fmt::format("({0} < 0 ? ({1})(-{0}) : {0})", c.arg[0], dev(t));
    return c.arg[0];
}
std::string rounding(const Call& c) { // floor, ceil, trunc: integers are their own
    return is_float(c.type[0]) ? fmt::format("{}({})", c.name, c.arg[0]) : c.arg[0];
}
std::string classify(const Call& c) { // isnan, isinf, isfinite
    if (is_float(c.type[0])) return fmt::format("(uint8_t)({}({}) != 0)", c.name, c.arg[0]);
    return c.name == "isfinite" ? "(uint8_t)1" : "(uint8_t)0";
}
std::string math(const Call& c) { // in the floating result type; numpy rounds half to even: rint
    return fmt::format("{}({})", c.name == "round" ? std::string_view("rint") : c.name, a_(c));
}
std::string complex_unary(const Call& c) { // neg, conj, abs
    return fmt::format("{}_{}({})", dev(c.type[0]), c.name, c.arg[0]);
}
std::string complex_part(const Call& c) { // real, imag
    return c.arg[0] + (c.name == "real" ? ".re" : ".im");
}
std::string complex_classify(const Call& c) {
    const char* join = c.name == "isfinite" ? "&&" : "||";
    return fmt::format("(uint8_t)({1}({0}.re) {2} {1}({0}.im))", c.arg[0], c.name, join);
}

// ---- where ----
std::string select(const Call& c) {
    return fmt::format("({} ? {} : {})", in(c, 0, DType::bool_), in(c, 1, c.result), in(c, 2, c.result));
}

using R = TypeRule;
// Sorted by name, for the lookup.
constexpr Operation table[] = {
    {"abs", 1, R::real, magnitude, complex_unary},
    {"acos", 1, R::floating, math, nullptr},
    {"acosh", 1, R::floating, math, nullptr},
    {"add", 2, R::promoted, arithmetic, complex_arithmetic},
    {"and", 2, R::boolean, logic, logic},
    {"asin", 1, R::floating, math, nullptr},
    {"asinh", 1, R::floating, math, nullptr},
    {"atan", 1, R::floating, math, nullptr},
    {"atan2", 2, R::floating, call2, nullptr},
    {"atanh", 1, R::floating, math, nullptr},
    {"cbrt", 1, R::floating, math, nullptr},
    {"ceil", 1, R::promoted, rounding, nullptr},
    {"conj", 1, R::promoted, identity, complex_unary},
    {"cos", 1, R::floating, math, nullptr},
    {"cosh", 1, R::floating, math, nullptr},
    {"div", 2, R::true_divide, arithmetic, complex_arithmetic},
    {"eq", 2, R::boolean, compare, complex_equal},
    {"erf", 1, R::floating, math, nullptr},
    {"erfc", 1, R::floating, math, nullptr},
    {"exp", 1, R::floating, math, nullptr},
    {"exp2", 1, R::floating, math, nullptr},
    {"expm1", 1, R::floating, math, nullptr},
    {"fabs", 1, R::floating, math, nullptr},
    {"floor", 1, R::promoted, rounding, nullptr},
    {"floor_divide", 2, R::integral, floor_divide, nullptr},
    {"fmod", 2, R::integral, remainder, nullptr},
    {"ge", 2, R::boolean, compare, nullptr},
    {"gt", 2, R::boolean, compare, nullptr},
    {"hypot", 2, R::floating, call2, nullptr},
    {"imag", 1, R::real, imaginary_zero, complex_part},
    {"isfinite", 1, R::boolean, classify, complex_classify},
    {"isinf", 1, R::boolean, classify, complex_classify},
    {"isnan", 1, R::boolean, classify, complex_classify},
    {"le", 2, R::boolean, compare, nullptr},
    {"log", 1, R::floating, math, nullptr},
    {"log10", 1, R::floating, math, nullptr},
    {"log1p", 1, R::floating, math, nullptr},
    {"log2", 1, R::floating, math, nullptr},
    {"lt", 2, R::boolean, compare, nullptr},
    {"maximum", 2, R::promoted, extremum, nullptr},
    {"minimum", 2, R::promoted, extremum, nullptr},
    {"mod", 2, R::integral, remainder, nullptr},
    {"mul", 2, R::promoted, arithmetic, complex_arithmetic},
    {"ne", 2, R::boolean, compare, complex_equal},
    {"neg", 1, R::promoted, negate, complex_unary},
    {"not", 1, R::boolean, logical_not, logical_not},
    {"or", 2, R::boolean, logic, logic},
    {"pos", 1, R::promoted, identity, identity},
    {"pow", 2, R::integral, power, nullptr},
    {"real", 1, R::real, identity, complex_part},
    {"rint", 1, R::floating, math, nullptr},
    {"round", 1, R::floating, math, nullptr},
    {"sin", 1, R::floating, math, nullptr},
    {"sinh", 1, R::floating, math, nullptr},
    {"sqrt", 1, R::floating, math, nullptr},
    {"sub", 2, R::promoted, arithmetic, complex_arithmetic},
    {"tan", 1, R::floating, math, nullptr},
    {"tanh", 1, R::floating, math, nullptr},
    {"trunc", 1, R::promoted, rounding, nullptr},
    {"where", 3, R::selected, select, select},
};

constexpr bool sorted() {
    for (std::size_t k = 1; k < std::size(table); ++k)
        if (!(table[k - 1].name < table[k].name)) return false;
    return true;
}
static_assert(sorted(), "the operation table is looked up by binary search");

} // namespace

const Operation& operation(std::string_view name, int arity) {
    const auto it = std::lower_bound(std::begin(table), std::end(table), name,
                                     [](const Operation& o, std::string_view n) { return o.name < n; });
    if (it == std::end(table) || it->name != name)
        throw InvalidArgument(fmt::format("xgpu: no array operation named '{}'", name));
    if (it->arity != arity)
        throw InvalidArgument(
            fmt::format("xgpu: the array operation '{}' takes {} operands, not {}", name, it->arity, arity));
    return *it;
}

DType result_type(const Operation& op, DType a, DType b, DType c) {
    const DType p = op.arity == 1 ? a : promote(a, b);
    switch (op.rule) {
    case R::promoted: return p;
    case R::integral: return p == DType::bool_ ? DType::int8 : p;
    case R::true_divide: return true_divide_type(p);
    case R::floating: return float_type(p);
    case R::real: return real_type(a);
    case R::boolean: return DType::bool_;
    default: return promote(b, c);
    }
}

std::string code(const Operation& op, const Call& call) {
    bool complex = false;
    for (int k = 0; k < op.arity; ++k)
        complex = complex || is_complex(call.type[k]);
    const auto fn = complex ? op.complex : op.real;
    if (!fn) {
        DType t = call.type[0];
        for (int k = 0; k < op.arity; ++k)
            if (is_complex(call.type[k])) t = call.type[k];
        throw InvalidArgument(fmt::format("xgpu: {} is not defined for {} arrays", op.name, name(t)));
    }
    return fn(call);
}

} // namespace xgpu::codegen
