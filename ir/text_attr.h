// kiln/ir/text_attr.h — attribute values and tensor types in the IR text formats (graphs,
// kernels and plans).
//
// The parsers (ir/text_parser.cpp for graphs, ir/kernel_text.cpp for kernels,
// ir/exec_plan_text.cpp for plans) read an attribute's value by its schema ArgType with these
// functions, so the formats spell ints, floats (inf, nan), bools, strings, none, dtypes,
// scalars, size expressions, devices and tensor types identically, with the same line:col
// errors. Kernel instructions and plan steps print their attributes by name
// (named_attrs_str) and read them back with parse_named_attrs.
#pragma once

#include "base/device.h"
#include "ir/attr.h"
#include "ir/expr.h"
#include "ir/op.h"
#include "ir/tensor_type.h"
#include "ir/text_lexer.h"

#include <string>

#include <vector>

namespace kiln::ir::text {

// After '[': expressions separated by ',' up to and including ']'.
std::vector<Expr> parse_expr_list_tail(Lexer& lex);
// cpu, cuda or cuda:N.
Device parse_device(Lexer& lex);
// The value of attribute `arg`, typed by its schema ArgType.
AttrValue parse_attr_value(Lexer& lex, const SchemaArg& arg);
// dtype '[' sizes ']' ['@' device]: "f32[4, s0]", "f16[8]@cuda:0".
TensorType parse_tensor_type(Lexer& lex);

// " {name=value, ...}" with every attribute of op's schema in schema order, or "" for none.
std::string named_attrs_str(OpKind op, const AttrList& attrs);
// At '{': every attribute of op's schema, once each, in any order, up to and including '}'.
AttrList parse_named_attrs(Lexer& lex, OpKind op);

}  // namespace kiln::ir::text
