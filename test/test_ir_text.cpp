// kiln/test/test_ir_text.cpp — the graph text format (corpus round trip, parser errors with
// line:column), attribute printing and matching, and the verifier's error cases.
#include "base/error.h"
#include "ir/attr.h"
#include "ir/graph.h"
#include "ir/shape_env.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "test_support/check.h"
#include "test_support/files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace kiln::ir {
namespace {

using test::read_file;

std::vector<std::filesystem::path> corpus_files() {
  return test::files_with_extension(KILN_TEST_DATA_DIR "/ir_corpus", ".kir");
}

std::string parse_error(std::string_view text) {
  return test::error_of([&] { parse_graph(text); });
}

std::string verify_error(const Graph& g) {
  return test::error_of([&] { verify(g); });
}

TensorType f32(std::vector<Expr> sizes) { return TensorType(kFloat, std::move(sizes)); }

// ---- corpus ------------------------------------------------------------------------------

TEST(IrCorpus, EveryFileRoundTripsExactly) {
  auto files = corpus_files();
  ASSERT_GE(files.size(), 12u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    std::string text = read_file(f);
    std::unique_ptr<Graph> g = parse_graph(text);
    EXPECT_EQ(print_graph(*g), text);
    EXPECT_EQ(g->str(), text);
    EXPECT_NO_THROW(verify(*g));
  }
}

TEST(IrCorpus, CoversEveryOp) {
  std::set<std::string_view> seen;
  for (const auto& f : corpus_files()) {
    std::unique_ptr<Graph> g = parse_graph(read_file(f));
    for (const Node* n : g->nodes()) seen.insert(n->info().name);
  }
  for (int k = 0; k < kNumOps; ++k) EXPECT_TRUE(seen.count(op_name(static_cast<OpKind>(k)))) << op_name(static_cast<OpKind>(k));
}

TEST(IrCorpus, ParsedValuesKeepNamesTypesAndAttributes) {
  auto g = parse_graph(read_file(KILN_TEST_DATA_DIR "/ir_corpus/07_symbolic.kir"));
  ASSERT_EQ(g->inputs().size(), 3u);
  EXPECT_EQ(g->inputs()[0]->name(), "x");
  EXPECT_EQ(g->inputs()[0]->type(), f32({Expr::symbol("s0"), 4}));
  const Node* cat = *g->nodes().begin();
  EXPECT_EQ(cat->op(), OpKind::cat);
  EXPECT_EQ(cat->inputs().size(), 2u);
  EXPECT_EQ(cat->attr<int64_t>("dim"), 0);
  EXPECT_EQ(cat->output()->type().sizes[0], Expr::symbol("s0") + Expr::symbol("s1"));
  EXPECT_EQ(g->outputs().size(), 11u);
}

// ---- printing ----------------------------------------------------------------------------

TEST(IrPrint, NumbersUnnamedValuesAroundExistingNames) {
  Graph g;
  Value* a = g.add_input(f32({2}), "0");
  Value* b = g.add_input(f32({2}));
  Node* add = g.create(OpKind::add, {a, b}, AttrList());
  Node* mul = g.create(OpKind::mul, {add->output(), add->output()}, AttrList());
  mul->output()->set_name("not a name");  // not printable: numbered instead
  Node* neg = g.create(OpKind::neg, {mul->output()}, AttrList());
  neg->output()->set_name("0");  // taken by the first input: numbered instead
  Node* sum = g.create(OpKind::sum, {neg->output()}, AttrList({std::vector<int64_t>{0}, true}));
  sum->output()->set_name("total");
  g.add_output(sum->output());
  g.add_output(a);
  const std::string want =
      "graph(%0 : f32[2], %1 : f32[2]) {\n"
      "  %2 : f32[2] = add(%0, %1)\n"
      "  %3 : f32[2] = mul(%2, %2)\n"
      "  %4 : f32[2] = neg(%3)\n"
      "  %total : f32[1] = sum(%4, dims=[0], keepdim=true)\n"
      "  return (%total, %0)\n"
      "}\n";
  EXPECT_EQ(print_graph(g), want);
  EXPECT_EQ(print_graph(*parse_graph(want)), want);
  ValueNames names(g);
  EXPECT_EQ(node_summary(mul, names), "%3 = mul(%2, %2)");
}

TEST(IrPrint, VariadicAndEmptyGraphs) {
  Graph g;
  Value* a = g.add_input(f32({2}), "a");
  Node* cat = g.create(OpKind::cat, {a, a, a}, AttrList({int64_t{0}}));
  g.add_output(cat->output());
  EXPECT_EQ(print_graph(g), "graph(%a : f32[2]) {\n  %0 : f32[6] = cat([%a, %a, %a], dim=0)\n  return (%0)\n}\n");
  Graph empty;
  EXPECT_EQ(print_graph(empty), "graph() {\n  return ()\n}\n");
  EXPECT_EQ(print_graph(*parse_graph("graph() {\n  return ()\n}\n")), "graph() {\n  return ()\n}\n");
}

TEST(IrParse, AcceptsCommentsWhitespaceAndAnyAttributeOrder) {
  const char* text =
      "# leading comment\n"
      "graph( %x:f32[ s0 ,8] )   {   # trailing comment\n"
      "\t%s : f32[ s0 ]=sum( %x ,keepdim=false,dims=[ 1 ] )\n"
      "  %d:f32[s0] = div(%s, %s, rounding_mode = \"floor\")  # floor division\n"
      "  return ( %d )\n"
      "}";
  EXPECT_EQ(print_graph(*parse_graph(text)),
            "graph(%x : f32[s0, 8]) {\n"
            "  %s : f32[s0] = sum(%x, dims=[1], keepdim=false)\n"
            "  %d : f32[s0] = div(%s, %s, rounding_mode=\"floor\")\n"
            "  return (%d)\n"
            "}\n");
}

// A squeeze of s0 - 1 is valid only where the trace guarded s0 - 1 == 1: the header carries
// that guard, so the dump of such a trace parses again.
const char* const kGuardedSqueeze =
    "symbols(s0 = 2, s1 = 3)\n"
    "guards(s0 - 1 == 1)\n"
    "graph(%x : f32[s0, s1]) {\n"
    "  %0 : f32[s0 - 1, s1] = slice(%x, dim=0, start=1, end=s0, step=1)\n"
    "  %1 : f32[s1] = squeeze(%0, dims=[0])\n"
    "  return (%1)\n"
    "}\n";

TEST(IrParse, ASymbolsAndGuardsHeaderIsDeclaredAndRoundTrips) {
  ShapeEnv env;
  std::unique_ptr<Graph> g = parse_graph(kGuardedSqueeze, &env);
  EXPECT_EQ(print_graph(*g, &env), kGuardedSqueeze);
  ASSERT_EQ(env.symbols().size(), 2u);
  EXPECT_EQ(env.symbols()[1].name, "s1");
  EXPECT_EQ(env.symbols()[1].hint, 3);
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].str(), "s0 - 1 == 1");
  EXPECT_TRUE(declares_symbols(std::string("# a dump\n") + kGuardedSqueeze));
  // Without an env the header is declared in a private one; the graph prints without it.
  EXPECT_EQ(print_graph(*parse_graph(kGuardedSqueeze)).rfind("graph(", 0), 0u);
  // Without the guard the squeeze is refused, as a trace that never guarded it would be.
  const std::string text(kGuardedSqueeze);
  const std::string unguarded = text.substr(text.find("graph("));
  EXPECT_FALSE(declares_symbols(unguarded));
  EXPECT_EQ(parse_error(unguarded),
            "[parse] 3:18: [squeeze] dimension 0 has size s0 - 1; only dimensions of size 1 can be squeezed");
  // A static graph printed with an env that has no symbols has no header.
  ShapeEnv empty;
  EXPECT_EQ(print_graph(*g, &empty), print_graph(*g));
}

TEST(IrParseError, SymbolsAndGuards) {
  const std::string body = "graph(%x : f32[s0]) {\n  return (%x)\n}\n";
  EXPECT_EQ(parse_error("symbols(s1 = 4)\n" + body),
            "[parse] 1:9: symbols are declared s0, s1, ... in order; expected s0, got 's1'");
  EXPECT_EQ(parse_error("symbols(s0 = 1)\n" + body),
            "[parse] 1:14: s0 = 1: a symbolic size is at least 2 (sizes 0 and 1 are never symbolic)");
  EXPECT_EQ(parse_error("symbols(s0 = 4)\nguards(s0 == 5)\n" + body),
            "[parse] 2:8: [ShapeEnv] the guard 's0 == 5' does not hold for the symbols' sizes");
  // A guard that holds at the sizes only because int64 wraps (2 * -2^63 is 0 in two's complement).
  EXPECT_EQ(parse_error("symbols(s0 = 2)\nguards(s0*-9223372036854775808 == 0)\n" + body),
            "[parse] 2:8: [ShapeEnv] the guard '-9223372036854775808*s0 == 0' overflows int64 at the symbols' sizes");
  EXPECT_EQ(parse_error("symbols(s0 = 2)\nguards(s0*4611686018427387904 < 0)\n" + body),
            "[parse] 2:8: [ShapeEnv] the guard '4611686018427387904*s0 < 0' overflows int64 at the symbols' sizes");
  EXPECT_EQ(parse_error("symbols(s0 = 4)\nguards(s0 + 1)\n" + body),
            "[parse] 2:8: [ShapeEnv] a guard must be a comparison, got 's0 + 1'");
  EXPECT_NE(parse_error("symbols(s0 = 4)\nguards(s7 == 5)\n" + body).find("[parse] 2:8: "), std::string::npos);
  EXPECT_EQ(parse_error("symbols(s0 = 4) guards(s0 == 4\n" + body),
            "[parse] 2:1: expected ',' or ')' after a guard, got 'graph'");
  // An op typed by tracing its decomposition needs the symbols declared: without a header (and
  // outside a trace) that is a parse error naming the op, not an internal error.
  const std::string upsample =
      "graph(%x : f32[1, 2, 2, s0]) {\n  %0 : f32[1, 2, 4, 3] = upsample_nearest2d(%x, output_size=[4, 3], "
      "scales_h=0.0, scales_w=1.5)\n  return (%0)\n}\n";
  EXPECT_NE(parse_error(upsample).find("[upsample_nearest2d] an input of type f32[1, 2, 2, s0] has symbolic sizes"),
            std::string::npos)
      << parse_error(upsample);
  EXPECT_NO_THROW(parse_graph("symbols(s0 = 2)\n" + upsample));
  ShapeEnv used;
  used.create_symbol(5, "a.size(0)");
  EXPECT_EQ(test::error_of([&] { parse_graph("symbols(s0 = 4)\n" + body, &used); }),
            "[parse] 1:1: the text declares symbols, but the ShapeEnv it is parsed into has symbols already");
}

// ---- parse errors ------------------------------------------------------------------------

const char* const kHead = "graph(%x : f32[4], %i : i64[4]) {\n";

std::string one_node(const std::string& line) { return kHead + line + "\n  return ()\n}\n"; }

TEST(IrParseError, UnknownOp) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = foo(%x)")), "[parse] 2:17: unknown op 'foo'");
}
TEST(IrParseError, UndefinedValue) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = exp(%y)")), "[parse] 2:21: undefined value %y");
}
TEST(IrParseError, Redefinition) {
  EXPECT_EQ(parse_error(one_node("  %x : f32[4] = exp(%x)")), "[parse] 2:3: redefinition of %x");
  EXPECT_EQ(parse_error("graph(%x : f32[4], %x : f32[4]) {\n  return ()\n}\n"), "[parse] 1:20: redefinition of %x");
}
TEST(IrParseError, BadDtype) {
  EXPECT_EQ(parse_error("graph(%x : f31[4]) {\n  return ()\n}\n"), "[parse] 1:12: unknown dtype 'f31'");
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = convert_element_type(%x, dtype=float)")),
            "[parse] 2:48: unknown dtype 'float'");
}
TEST(IrParseError, ExpectedCommaOrParen) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = exp(%x foo)")),
            "[parse] 2:24: expected ',' or ')' after argument, got 'foo'");
}
TEST(IrParseError, MissingAttribute) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[] = sum(%x, dims=[0])")),
            "[parse] 2:32: missing attribute 'keepdim' for sum (schema: sum(Tensor self, int[] dims, bool keepdim) -> Tensor)");
}
TEST(IrParseError, UnknownAttribute) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = exp(%x, alpha=1)")),
            "[parse] 2:25: unknown attribute 'alpha' for exp (schema: exp(Tensor self) -> Tensor)");
}
TEST(IrParseError, DuplicateAttribute) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = cumsum(%x, dim=0, dim=0)")), "[parse] 2:35: duplicate attribute 'dim'");
}
TEST(IrParseError, AttributeOfTheWrongType) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = cumsum(%x, dim=true)")),
            "[parse] 2:32: expected int for attribute 'dim', got 'true'");
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = sum(%x, dims=[0], keepdim=1)")),
            "[parse] 2:43: expected bool for attribute 'keepdim', got '1'");
}
TEST(IrParseError, DeclaredTypeDisagreesWithShapeFunction) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[5] = exp(%x)")), "[parse] 2:3: %0 is declared as f32[5], but exp gives f32[4]");
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = exp(%i)")),
            "[parse] 2:17: [exp] expected a floating point tensor, got int64");
}
TEST(IrParseError, TensorArguments) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = add(%x)")),
            "[parse] 2:23: add takes 2 tensor arguments, got 1 (schema: add(Tensor self, Tensor other) -> Tensor)");
  EXPECT_EQ(parse_error(one_node("  %0 : f32[8] = cat(%x, %x, dim=0)")),
            "[parse] 2:21: cat takes its tensors as one list [%a, %b, ...]");
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = cumsum(dim=0, %x)")), "[parse] 2:31: tensor argument %x after attributes");
}
TEST(IrParseError, Lexical) {
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = exp(%x) $")), "[parse] 2:25: unexpected character '$'");
  EXPECT_EQ(parse_error(one_node("  %0 : f32[4] = div(%x, %x, rounding_mode=\"floor)")), "[parse] 2:43: unterminated string");
}
TEST(IrParseError, Structure) {
  EXPECT_EQ(parse_error("graph(%x : f32[4]) {\n}\n"),
            "[parse] 2:1: expected a node '%name : type = op(...)' or 'return', got '}'");
  EXPECT_EQ(parse_error("graph(%x : f32[4]) {\n  return (%x)\n}\ngraph"), "[parse] 4:1: expected end of input after '}', got 'graph'");
  EXPECT_EQ(parse_error("graph(%x : f32[4]@gpu) {\n  return ()\n}\n"), "[parse] 1:19: expected a device (cpu or cuda:N), got 'gpu'");
  EXPECT_EQ(parse_error("graph(%x : f32[4]) {\n  return (%x\n}\n"), "[parse] 3:1: expected ',' or ')' after returned value, got '}'");
  EXPECT_EQ(parse_error("func(%x : f32[4]) {}"), "[parse] 1:1: expected 'graph', got 'func'");
  EXPECT_EQ(parse_error(""), "[parse] 1:1: expected 'graph', got end of input");
}
TEST(IrParseError, SizeExpressions) {
  EXPECT_EQ(parse_error("graph(%x : f32[s0 < s1 < s2]) {\n  return ()\n}\n"),
            "[parse] 1:24: comparisons do not chain; add parentheses");
  EXPECT_EQ(parse_error("graph(%x : f32[4 4]) {\n  return ()\n}\n"),
            "[parse] 1:18: expected ',' or ']' in a list of sizes, got '4'");
}

// ---- attributes --------------------------------------------------------------------------

TEST(IrAttr, PrintsEveryKind) {
  EXPECT_EQ(attr_str(std::monostate{}), "none");
  EXPECT_EQ(attr_str(int64_t{-3}), "-3");
  EXPECT_EQ(attr_str(1.0), "1.0");
  EXPECT_EQ(attr_str(-0.0), "-0.0");
  EXPECT_EQ(attr_str(0.1), "0.1");
  EXPECT_EQ(attr_str(1e20), "1e+20");
  EXPECT_EQ(attr_str(1e-7), "1e-07");
  EXPECT_EQ(attr_str(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(attr_str(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(attr_str(std::nan("")), "nan");
  EXPECT_EQ(attr_str(true), "true");
  EXPECT_EQ(attr_str(std::string("a\"b\\c\nd\x01")), "\"a\\\"b\\\\c\\nd\\x01\"");
  EXPECT_EQ(attr_str(std::vector<int64_t>{1, 2}), "[1, 2]");
  EXPECT_EQ(attr_str(std::vector<int64_t>{}), "[]");
  EXPECT_EQ(attr_str(kBFloat16), "bf16");
  EXPECT_EQ(attr_str(kLong), "i64");
  EXPECT_EQ(attr_str(Scalar(3)), "3");
  EXPECT_EQ(attr_str(Scalar(3.0)), "3.0");
  EXPECT_EQ(attr_str(Scalar(false)), "false");
  EXPECT_EQ(attr_str(Expr::symbol("s0") * 2), "2*s0");
  EXPECT_EQ(attr_str(std::vector<Expr>{Expr::symbol("s0"), 4}), "[s0, 4]");
  EXPECT_EQ(attr_str(Device()), "cpu");
  EXPECT_EQ(attr_str(Device(kCUDA, 1)), "cuda:1");
}

TEST(IrAttr, MatchesSchemaTypes) {
  EXPECT_TRUE(attr_matches(Expr(3), ArgType::SymInt));
  EXPECT_FALSE(attr_matches(int64_t{3}, ArgType::SymInt));
  EXPECT_TRUE(attr_matches(std::vector<Expr>{}, ArgType::SymIntList));
  EXPECT_FALSE(attr_matches(std::vector<int64_t>{}, ArgType::SymIntList));
  EXPECT_TRUE(attr_matches(Scalar(1.5), ArgType::Scalar));
  EXPECT_FALSE(attr_matches(1.5, ArgType::Scalar));
  EXPECT_TRUE(attr_matches(int64_t{0}, ArgType::OptInt));
  EXPECT_TRUE(attr_matches(std::monostate{}, ArgType::OptInt));
  EXPECT_FALSE(attr_matches(std::monostate{}, ArgType::Int));
  EXPECT_TRUE(attr_matches(std::string("floor"), ArgType::OptStr));
  EXPECT_TRUE(attr_matches(std::monostate{}, ArgType::OptStr));
  EXPECT_FALSE(attr_matches(std::monostate{}, ArgType::Str));
  EXPECT_TRUE(attr_matches(kFloat, ArgType::ScalarType));
  EXPECT_TRUE(attr_matches(Device(), ArgType::Device));
  EXPECT_FALSE(attr_matches(true, ArgType::Int));
  EXPECT_FALSE(attr_matches(int64_t{1}, ArgType::Tensor));
}

TEST(IrAttr, ReadsByNameAndRejectsUnknownNamesAndTypes) {
  AttrList attrs({std::vector<int64_t>{1}, true});
  EXPECT_EQ(attrs.get<std::vector<int64_t>>(OpKind::sum, "dims"), std::vector<int64_t>{1});
  EXPECT_TRUE(attrs.get<bool>(OpKind::sum, "keepdim"));
  try {
    attrs.at(OpKind::sum, "dim");
    ADD_FAILURE() << "no error";
  } catch (const InternalError& e) {
    EXPECT_EQ(std::string(e.what()),
              "internal error: op sum has no attribute 'dim' (schema: sum(Tensor self, int[] dims, bool keepdim) -> Tensor)");
  }
  EXPECT_THROW(attrs.get<int64_t>(OpKind::sum, "keepdim"), InternalError);
  AttrList opt({std::monostate{}, false});
  EXPECT_EQ(opt.get_opt<int64_t>(OpKind::argmax, "dim"), std::nullopt);
  EXPECT_THROW(AttrList().at(OpKind::cumsum, "dim"), InternalError);
}

// ---- verifier ----------------------------------------------------------------------------

struct TwoInputs {
  Graph g;
  Value* x = g.add_input(f32({4}), "x");
  Value* y = g.add_input(f32({4}), "y");
};

TEST(IrVerify, AcceptsAWellFormedGraph) {
  TwoInputs t;
  Node* add = t.g.create(OpKind::add, {t.x, t.y}, AttrList());
  Node* cat = t.g.create(OpKind::cat, {add->output(), t.x}, AttrList({int64_t{0}}));
  t.g.add_output(cat->output());
  t.g.add_output(t.x);
  EXPECT_NO_THROW(verify(t.g));
}

TEST(IrVerify, OutputTypeMustMatchTheShapeFunction) {
  TwoInputs t;
  t.g.create(OpKind::add, {t.x, t.y}, AttrList(), {f32({5})});
  EXPECT_EQ(verify_error(t.g), "[verify] node %0 = add(%x, %y): output 0 (%0) has type f32[5], but add infers f32[4]");
}

TEST(IrVerify, AttributesMustMatchTheSchema) {
  TwoInputs t;
  t.g.create(OpKind::sum, {t.x}, AttrList({int64_t{0}, false}), {f32({})});
  EXPECT_EQ(verify_error(t.g), "[verify] node %0 = sum(%x): [sum] attribute 'dims' expects int[], got int 0");
}

TEST(IrVerify, TensorInputCountMustMatchTheSchema) {
  TwoInputs t;
  t.g.create(OpKind::add, {t.x}, AttrList(), {f32({4})});
  EXPECT_EQ(verify_error(t.g), "[verify] node %0 = add(%x): add takes 2 tensor inputs, the node has 1");
  TwoInputs u;
  u.g.create(OpKind::cat, {}, AttrList({int64_t{0}}), {f32({0})});
  EXPECT_EQ(verify_error(u.g), "[verify] node %0 = cat([]): cat needs at least one tensor in its list");
}

TEST(IrVerify, InputsMustBeDefinedBeforeUse) {
  TwoInputs t;
  Node* e = t.g.create(OpKind::exp, {t.x}, AttrList());
  t.g.create_before(e, OpKind::neg, {e->output()}, AttrList());
  EXPECT_EQ(verify_error(t.g), "[verify] node %0 = neg(%1): input 0 (%1) is used before its definition");
}

TEST(IrVerify, ValuesMustBelongToTheGraph) {
  TwoInputs t, other;
  Node* e = t.g.create(OpKind::exp, {t.x}, AttrList());
  e->replace_input(0, other.x);
  EXPECT_EQ(verify_error(t.g), "[verify] node %0 = exp(%<foreign>): input 0 belongs to another graph");
  TwoInputs u;
  u.g.add_output(u.x);
  u.g.set_output(0, other.y);
  EXPECT_EQ(verify_error(u.g), "[verify] graph output 0 belongs to another graph");
}

TEST(IrVerify, LocatorPrefixesNodeMessages) {
  TwoInputs t;
  t.g.create(OpKind::add, {t.x, t.y}, AttrList(), {f32({5})});
  try {
    verify(t.g, [](const Node*) { return std::string("7:3: "); });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "[verify] 7:3: node %0 = add(%x, %y): output 0 (%0) has type f32[5], but add infers f32[4]");
  }
}

}  // namespace
}  // namespace kiln::ir
