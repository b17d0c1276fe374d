// kiln/ir/text_attr.h — reading attribute values in the IR text formats (graphs and kernels).
//
// Both parsers (ir/text_parser.cpp for graphs, ir/kernel_text.cpp for kernels) read an
// attribute's value by its schema ArgType with these functions, so the two formats spell
// ints, floats (inf, nan), bools, strings, none, dtypes, scalars, size expressions and
// devices identically, with the same line:col errors.
#pragma once

#include "base/device.h"
#include "ir/attr.h"
#include "ir/expr.h"
#include "ir/op.h"
#include "ir/text_lexer.h"

#include <vector>

namespace kiln::ir::text {

// After '[': expressions separated by ',' up to and including ']'.
std::vector<Expr> parse_expr_list_tail(Lexer& lex);
// cpu, cuda or cuda:N.
Device parse_device(Lexer& lex);
// The value of attribute `arg`, typed by its schema ArgType.
AttrValue parse_attr_value(Lexer& lex, const SchemaArg& arg);

}  // namespace kiln::ir::text
