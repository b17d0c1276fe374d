// kiln/test/test_opdb_golden_grad.cpp — every op-database sample's gradient against PyTorch's.
//
// test/opdb_golden_grad/<family>.txt holds, per sample, which outputs PyTorch differentiates
// and the gradient of each floating input (f64 leaves, the cotangents of test_support/grad_run.h),
// written by tools/opdb_golden_grad.py. kiln must differentiate the same outputs (an output that
// PyTorch marks non-differentiable must not require grad, and the other way round) and give the
// same gradients within atol 1e-7 + rtol 1e-6: f64 arithmetic whose order differs. Unlike the
// finite differences, this checks the gradients at kinks, ties and jumps against PyTorch's
// conventions (relu'(0) = 0, a max's gradient split among ties, ...).
//
// The compiled and Dynamic::True tests also check each sample's gradients against finite
// differences of the compiled function (test_support/grad_check.h), so that the training entry
// compiled for the PyTorch comparison serves both.
#include "test_support/files.h"
#include "test_support/grad_check.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace kiln {
namespace {

constexpr double kAtol = 1e-7, kRtol = 1e-6;

// Samples where kiln's gradient is the derivative and PyTorch's is not, with the reason (the
// finite differences of test_opdb_gradcheck.cpp side with kiln there).
const std::map<std::string, const char*> kPyTorchDiffers = {
    {"scatter_reduce:amax_exclude#1",
     "with include_self=False, PyTorch still counts a self element equal to the maximum among the ties and "
     "gives the one source value half the gradient; self does not take part, so the source's slope is 1"},
    {"scatter_reduce:amin_exclude#1", "as scatter_reduce:amax_exclude#1"},
    {"ctc_loss:none#3",
     "a target whose last label is the blank: ATen's backward assumes the last two states differ and assigns the "
     "last frame's collected probability instead of adding to it"},
};

// Entries (by the name before ':') whose gradient needs static sizes, with the reason: under
// Dynamic::True their training entry raises a kiln::Error that says so, which is checked.
const std::map<std::string, const char*> kStaticSizesOnly = {
    {"pdist", "its rule scatters the gradient into the triangle of an [n, n] matrix built from a constant n"},
    {"native_layer_norm_backward",
     "its own rule (a second derivative of layer_norm) builds the statistics' gradients over the normalized sizes, "
     "which it needs as numbers"},
};

bool static_sizes_only(const std::string& entry) { return kStaticSizesOnly.count(entry.substr(0, entry.find(':'))) > 0; }

struct GradRecord {
  std::string inputs_hash;  // of the forward golden record's inputs this was computed from
  std::optional<std::vector<size_t>> outputs;  // absent: skipped by the tool
  std::map<size_t, std::optional<std::vector<double>>> grads;  // input -> values (none: unused)
  std::map<size_t, std::vector<int64_t>> shapes;
};

// "begin <entry> <sample>" ... "end" records of one family's file.
std::map<std::string, GradRecord> load(const std::string& family) {
  std::ifstream f(std::string(KILN_TEST_DATA_DIR) + "/opdb_golden_grad/" + family + ".txt");
  std::map<std::string, GradRecord> out;
  std::string line, key;
  GradRecord cur;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "begin") {
      std::string entry, sample;
      in >> entry >> sample;
      key = entry + "#" + sample;
      cur = GradRecord{};
    } else if (word == "end") {
      out[key] = cur;
    } else if (word == "inputs") {
      in >> cur.inputs_hash;
    } else if (word == "outputs") {
      cur.outputs.emplace();
      std::string j;
      while (in >> j)
        if (j != "none") cur.outputs->push_back(std::stoul(j));
    } else if (word == "grad") {
      size_t i = 0;
      std::string dtype;
      in >> i >> dtype;
      if (dtype == "none") {
        cur.grads[i] = std::nullopt;
        continue;
      }
      std::string shape, colon;
      in >> shape >> colon;
      std::vector<int64_t> sizes;
      std::stringstream ss(shape.substr(1, shape.size() - 2));
      for (std::string d; std::getline(ss, d, ',');) sizes.push_back(std::stoll(d));
      std::vector<double> values;
      for (std::string v; in >> v;) values.push_back(std::strtod(v.c_str(), nullptr));
      cur.grads[i] = values;
      cur.shapes[i] = sizes;
    }
  }
  return out;
}

// FNV-1a (64 bit) of a golden record's input lines joined by newlines, as the tool writes it.
std::string inputs_hash(const opdb::GoldenRecord& r) {
  uint64_t h = 0xcbf29ce484222325ull;
  std::string text;
  for (size_t i = 0; i < r.inputs.size(); ++i) text += (i ? "\nin " : "in ") + r.inputs[i];
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return fmt::format("{:016x}", h);
}

struct Tally {
  int samples = 0, values = 0;
  opdb::GradCheckTally differences;
};

void check_sample(const opdb::OpEntry& e, const opdb::Sample& s, const GradRecord& want, opdb::Mode m, Tally& tally) {
  std::string error;
  std::optional<opdb::GradRun> r = opdb::grad_run(e, s, m, &error);
  if (!r) {
    // A sample that runs eagerly must run compiled too: grad_run's null is for samples that
    // raise (or have non-finite inputs) in every mode; the entries of kStaticSizesOnly raise
    // under Dynamic::True.
    const bool expected = m == opdb::Mode::Dynamic && static_sizes_only(e.name) && !error.empty();
    if (m != opdb::Mode::Eager && !expected && opdb::grad_run(e, s, opdb::Mode::Eager))
      ADD_FAILURE() << "the sample runs eagerly but raised " << opdb::mode_name(m) << ": " << error;
    return;
  }
  EXPECT_EQ(r->diff_outputs, *want.outputs) << "the outputs that require grad differ from PyTorch's";
  if (r->diff_outputs != *want.outputs || r->diff_outputs.empty()) return;
  const std::vector<Tensor> grads = opdb::grads_of(*r);
  // The compiled gradients against finite differences of the compiled function too (the eager
  // ones: test_opdb_gradcheck.cpp), while its training entry is compiled.
  if (m != opdb::Mode::Eager && !opdb::not_by_differences(e.name)) opdb::check_finite_differences(*r, grads, tally.differences);
  for (size_t n = 0; n < r->inputs.size(); ++n) {
    const size_t i = r->inputs[n];
    auto it = want.grads.find(i);
    if (it == want.grads.end()) {
      ADD_FAILURE() << "input " << i << " has no golden gradient";
      continue;
    }
    const Tensor& x = r->leaves[i];
    const Tensor got = grads[n].defined() ? grads[n].contiguous() : zeros_like(x.detach());
    EXPECT_EQ(got.sizes().vec(), x.sizes().vec()) << "input " << i;
    if (got.sizes() != x.sizes() || got.dtype() != kDouble) {
      ADD_FAILURE() << "input " << i << ": gradient of dtype " << c10_type_name(got.dtype());
      continue;
    }
    const std::vector<double> g = got.to_vector<double>();
    const std::vector<double> w = it->second ? *it->second : std::vector<double>(g.size(), 0.0);
    if (w.size() != g.size()) {
      ADD_FAILURE() << "input " << i << ": " << g.size() << " values, PyTorch has " << w.size();
      continue;
    }
    int bad = 0;
    for (size_t k = 0; k < g.size(); ++k) {
      const bool ok = (std::isnan(w[k]) && std::isnan(g[k])) || std::abs(g[k] - w[k]) <= kAtol + kRtol * std::abs(w[k]);
      if (!ok && bad++ < 3)
        ADD_FAILURE() << "input " << i << " element " << k << ": kiln " << g[k] << ", PyTorch " << w[k];
      ++tally.values;
    }
  }
  ++tally.samples;
}


// Every gradient record was computed from the forward golden record's current inputs, and
// every non-random forward record has one (else: run tools/opdb_golden_grad.py).
TEST(GoldenGradFiles, AreCurrent) {
  std::map<std::string, std::map<std::string, GradRecord>> files;
  for (const std::string& f : opdb::families()) files[f] = load(f);
  int checked = 0;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (e.random) continue;
    for (size_t s = 0; s < e.samples.size(); ++s) {
      const std::string key = e.name + "#" + std::to_string(s);
      auto fwd = opdb::golden().find(key);
      if (fwd == opdb::golden().end()) continue;  // OpDbGolden reports it
      auto it = files[e.family].find(key);
      if (it == files[e.family].end()) {
        ADD_FAILURE() << key << " has no gradient record";
        continue;
      }
      EXPECT_EQ(it->second.inputs_hash, inputs_hash(fwd->second)) << key << ": computed from other inputs";
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000);
}

struct Case {
  std::string family;
  opdb::Mode mode;
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.family << ", " << opdb::mode_name(c.mode); }
};

std::vector<Case> cases() {
  std::vector<Case> c;
  for (opdb::Mode m : {opdb::Mode::Eager, opdb::Mode::Compiled, opdb::Mode::Dynamic})
    for (const std::string& f : opdb::families()) c.push_back({f, m});
  return c;
}

class GoldenGrad : public ::testing::TestWithParam<Case> {};

// Eager: the tape. Compiled and Dynamic::True: compile() of the entry called on tensors that
// require grad, whose backward is a compiled program; their finite differences too.
TEST_P(GoldenGrad, MatchesPyTorch) {
  const std::string& family = GetParam().family;
  const opdb::Mode mode = GetParam().mode;
  const std::map<std::string, GradRecord> golden = load(family);
  Tally tally;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (e.family != family || e.random) continue;
    for (size_t s = 0; s < e.samples.size(); ++s) {
      SCOPED_TRACE(e.name + " sample " + std::to_string(s) + ", " + opdb::mode_name(mode));
      auto it = golden.find(e.name + "#" + std::to_string(s));
      if (it == golden.end()) {
        ADD_FAILURE() << "no golden gradient record (run tools/opdb_golden_grad.py)";
        continue;
      }
      if (!it->second.outputs || kPyTorchDiffers.count(it->first)) continue;
      try {
        check_sample(e, e.samples[s], it->second, mode, tally);
      } catch (const std::exception& err) {
        ADD_FAILURE() << "raised: " << err.what();
      }
    }
  }
  std::printf("[golden grad] %s, %s: %d samples, %d values compared; finite differences: %d samples, %d elements "
              "checked, %d non-smooth elements skipped\n",
              family.c_str(), opdb::mode_name(mode), tally.samples, tally.values, tally.differences.samples,
              tally.differences.elements, tally.differences.skipped_kinks);
}

INSTANTIATE_TEST_SUITE_P(Families, GoldenGrad, ::testing::ValuesIn(cases()), [](const ::testing::TestParamInfo<Case>& i) {
  const opdb::Mode m = i.param.mode;
  return i.param.family + (m == opdb::Mode::Eager ? "" : m == opdb::Mode::Compiled ? "_compiled" : "_dynamic");
});

}  // namespace
}  // namespace kiln
