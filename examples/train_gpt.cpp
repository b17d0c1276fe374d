// examples/train_gpt.cpp — trains a small GPT-style decoder, compiled, on a sequence task it
// learns in seconds: x[t] = (x[t-1] + x[t-2]) mod 16 from two random tokens. It starts from the
// weights PyTorch wrote and takes PyTorch's batches (test/train_fixtures, tools/train_fixtures.py).
//
//   train_gpt DATA_DIR [--device cuda] [--check]
//
// The model is written with kiln::nn as PyTorch's Gpt in the fixture script is: token and
// position embeddings, two pre-norm blocks of causal self-attention and a GELU MLP, a final
// LayerNorm and a linear head. The loss and its backward are one compiled function of the
// batch; AdamW's step is one compiled program. With --check the loss curve and the accuracy on
// held-out sequences are compared with PyTorch's.
#include <kiln/kiln.h>

#include "train_check.h"

#include <chrono>
#include <cstdio>
#include <string>

using namespace kiln;

namespace {

constexpr int64_t kVocab = 16, kContext = 32, kDim = 32, kHeads = 2;

struct BlockImpl : nn::Module {
  BlockImpl() : Module("Block") {
    ln1 = register_module("ln1", nn::LayerNorm(std::vector<int64_t>{kDim}));
    qkv = register_module("qkv", nn::Linear(kDim, 3 * kDim));
    proj = register_module("proj", nn::Linear(kDim, kDim));
    ln2 = register_module("ln2", nn::LayerNorm(std::vector<int64_t>{kDim}));
    fc1 = register_module("fc1", nn::Linear(kDim, 4 * kDim));
    fc2 = register_module("fc2", nn::Linear(4 * kDim, kDim));
  }
  Tensor attn(const Tensor& x) const {
    const int64_t b = x.size(0), t = x.size(1);
    std::vector<Tensor> q = qkv->forward(x).split(kDim, -1);  // q, k, v: [B, T, D] each
    for (Tensor& z : q) z = z.view({b, t, kHeads, kDim / kHeads}).transpose(1, 2);
    const Tensor y = scaled_dot_product_attention(q[0], q[1], q[2], std::nullopt, 0.0, /*is_causal=*/true);
    return y.transpose(1, 2).reshape({b, t, kDim});
  }
  Tensor forward(const Tensor& x) const {
    const Tensor h = x + proj->forward(attn(ln1->forward(x)));
    return h + fc2->forward(gelu(fc1->forward(ln2->forward(h))));
  }
  nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
};
KILN_MODULE(Block);

struct GptImpl : nn::Module {
  GptImpl() : Module("Gpt") {
    tok = register_module("tok", nn::Embedding(kVocab, kDim));
    pos = register_module("pos", nn::Embedding(kContext, kDim));
    for (int i = 0; i < 2; ++i) blocks->push_back(layers.emplace_back(Block()));
    register_module("blocks", blocks);
    ln_f = register_module("ln_f", nn::LayerNorm(std::vector<int64_t>{kDim}));
    head = register_module("head", nn::Linear(nn::LinearOptions(kDim, kVocab).bias(false)));
  }
  // ids [B, T] -> logits [B, T, vocab]
  Tensor forward(const Tensor& ids) const {
    Tensor x = tok->forward(ids) + pos->forward(arange(ids.size(1), TensorOptions(ids.device())));
    for (const Block& b : layers) x = b->forward(x);
    return head->forward(ln_f->forward(x));
  }
  nn::Embedding tok{nullptr}, pos{nullptr};
  nn::ModuleList blocks;
  std::vector<Block> layers;
  nn::LayerNorm ln_f{nullptr};
  nn::Linear head{nullptr};
};
KILN_MODULE(Gpt);

}  // namespace

int main(int argc, char** argv) {
  const train::Flags flags = train::parse_flags(argc, argv);
  if (flags.positional.empty()) {
    std::fprintf(stderr, "usage: %s DATA_DIR [--device cuda] [--check]\n", argv[0]);
    return 2;
  }
  const std::string dir = flags.positional[0];
  const bool check = flags.check;
  const Device dev = flags.device;
  try {
    const auto data = train::load(dir, "gpt_data.safetensors", dev);
    const Tensor batches = train::get(data, "train").to(kInt64), eval = train::get(data, "eval").to(kInt64);
    const auto reference = train::load(dir, "gpt_result.safetensors");

    Gpt model;
    model->load(dir + "/gpt_init.safetensors");
    model->to(dev);
    optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-3).betas({0.9, 0.98}).weight_decay(0.1));
    auto loss_of = kiln::compile([model](const Tensor& seq) {
      const Tensor logits = model->forward(seq.slice(1, 0, kContext));
      return cross_entropy(logits.reshape({-1, kVocab}), seq.slice(1, 1).reshape({-1}));
    });

    const auto t0 = std::chrono::steady_clock::now();
    std::vector<double> losses;
    for (int64_t i = 0; i < batches.size(0); ++i) {
      opt.zero_grad();
      Tensor loss = loss_of(batches[i]);
      loss.backward();
      opt.step();
      losses.push_back(loss.item<double>());
      if ((i + 1) % 50 == 0) std::printf("step %3lld: loss %.4f\n", static_cast<long long>(i + 1), losses.back());
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // Accuracy where the next token is determined (targets seq[2..32]).
    double acc = 0;
    {
      NoGradGuard no_grad;
      const Tensor pred = model->forward(eval.slice(1, 0, kContext)).argmax(-1);
      acc = pred.slice(1, 1).eq(eval.slice(1, 2)).to(kFloat64).mean().item<double>();
    }
    std::printf("gpt on %s: %zu steps in %.2f s, held-out accuracy %.4f\n", dev.str().c_str(), losses.size(), secs, acc);
    if (!check) return 0;
    const bool ok = train::check(losses, train::get(reference, "loss"), 300, 1e-3, acc,
                                 train::get(reference, "eval_accuracy").item<double>());
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_gpt: %s\n", e.what());
    return 1;
  }
}
