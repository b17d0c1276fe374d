// kiln/runtime/debug/repro.h — repro files: a graph, its input tensors and what differed, on disk.
//
// A repro is a directory holding
//   graph.kir   the graph in the text format of ir/text.h (a '#' header says what it reproduces)
//   inputs.txt  the input tensors, bit-exact (format below)
//   repro.txt   "backends: cpu interpreter" and "differs: <what differed>", one key per line
// `kiln check DIR` replays it on both backends, `kiln run DIR/graph.kir DIR/inputs.txt` runs
// it, `kiln minimize DIR` shrinks it. The tensor format, one tensor after another:
//
//   tensor f32 [2, 2]
//   0x3f800000 0x80000000 0x7fc00000 0xff800000   # 1 -0 nan -inf
//
// A header "tensor <dtype> [sizes]" then numel values in row-major order. Floating values are
// written as their bit patterns in hex (f16/bf16 16 bits, f32 32, f64 64), so NaN payloads
// and -0.0 survive; the reader also accepts decimals ("0.5", "nan", "-inf"). Integers are
// decimal, bools 0/1 (or true/false). '#' starts a comment to the end of the line.
#pragma once

#include "frontend/tensor.h"
#include "ir/graph.h"

#include <memory>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

// The text of `tensors` (CPU tensors of any layout; written contiguously).
std::string write_tensors(const std::vector<Tensor>& tensors);
// Parses write_tensors' format; errors are kiln::Error "[repro] line N: ...".
std::vector<Tensor> parse_tensors(std::string_view text);

// Deterministic small values for every input of a graph (used when a .kir file is run without
// an inputs file): floats cycle through -1.5 .. 1.5 in steps of 0.5, integers 0..4, bools
// alternate; each on the device its input is typed on. Symbolic sizes take the values in
// `sizes` (a text's `symbols(...)` header gives them); an unbound one is a kiln::Error.
std::vector<Tensor> default_inputs(const ir::Graph& g, const std::map<std::string, int64_t>& sizes = {});
// Moves each input (parsed or made on the host) to the device its graph input is typed on; a
// device this machine lacks fails there, with the driver's reason.
void on_graph_devices(const ir::Graph& g, std::vector<Tensor>& inputs);

struct Repro {
  std::shared_ptr<ir::Graph> graph;
  std::vector<Tensor> inputs;
  std::string backend_a = "cpu";
  std::string backend_b = "interpreter";
  std::string differs;  // what differed when it was written, one line
};

// Writes the three files into `dir` (created if missing). Throws kiln::Error on I/O failure.
void write_repro(const std::string& dir, const Repro& r);
// Reads a repro directory, or a .kir file (inputs from the tensor file `inputs` when given,
// else from inputs.txt beside it when present, else default_inputs at the sizes its symbols
// header declares; backends from repro.txt beside it when present).
Repro read_repro(const std::string& path, const std::string& inputs = "");

// The whole text of a file; kiln::Error "[op] cannot open PATH" when it cannot be read.
std::string read_text_file(const std::string& path, std::string_view op);

}  // namespace kiln::rt
