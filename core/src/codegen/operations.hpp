// The operations of array expressions as a table: for each, its name, arity, the rule that gives
// its result type from its operands' types, and the code that computes it for real and for
// complex operands. Expression nodes point at their row (op_node looks it up once, and checks
// that the type the expression templates computed agrees with the rule).
#pragma once

#include <string>
#include <string_view>

#include "xgpu/dtype.hpp"

namespace xgpu::codegen {

// The kernel-code name of a type (the complex ones are the xgpu_cfloat/xgpu_cdouble structs).
inline const char* device_type(DType t) {
    return info(t).device_name;
}

// `v` (of type `from`) as type `to`, in kernel code, as a C++ cast does it (complex to real keeps
// the real part; to bool is != 0).
std::string convert(const std::string& v, DType from, DType to);

// Where an operation's code may put intermediate values: a new const variable of type `t`
// holding `value`, returning its name.
class Temporaries {
public:
    virtual std::string temp(DType t, const std::string& value) = 0;

protected:
    ~Temporaries() = default;
};

// One application of an operation: its operands' code and types, its result type.
struct Call {
    std::string_view name;
    DType result;
    DType type[3];      // the operands' types (unused ones are the result's)
    std::string arg[3]; // the operands' values, in kernel code
    Temporaries& temps;
};

enum class TypeRule : std::uint8_t {
    promoted,    // numpy.promote_types of the operands (add, maximum, neg, ...)
    integral,    // promoted, but two bools give int8 (mod, fmod, floor_divide, pow, as numpy's)
    true_divide, // promoted; integers and bool give float64
    floating,    // promoted, integers to the floating type that holds them (sin, atan2, ...)
    real,        // the real type of the operand (abs, real, imag)
    boolean,     // bool (comparisons, logic, isnan, ...)
    selected,    // where(c, a, b): promoted of a and b
};

struct Operation {
    std::string_view name;
    int arity;
    TypeRule rule;
    // The value of a call, for operands that are real (bool, integer, floating) and for operands
    // of which one is complex; null where the operation is not defined for them.
    std::string (*real)(const Call&);
    std::string (*complex)(const Call&);
};

// The row of `name`; throws InvalidArgument for an unknown name or a wrong number of operands.
const Operation& operation(std::string_view name, int arity);

// The result type the rule gives for operand types `a`, `b`, `c` (those past the arity unused).
DType result_type(const Operation& op, DType a, DType b, DType c);

// The code of one call; throws InvalidArgument ("xgpu: <name> is not defined for <type> arrays").
std::string code(const Operation& op, const Call& call);

} // namespace xgpu::codegen
