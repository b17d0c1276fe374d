// kiln/test/test_nn_modules.cpp — kiln::nn against PyTorch: a model rebuilt with kiln's modules
// loads the state_dict PyTorch saved (test/nn_fixtures, tools/nn_fixtures.py) under the same
// names, and reproduces PyTorch's output and every parameter's gradient, eagerly and through
// compile(module). Also: registration and traversal, modes, conversion in place, strict
// loading's errors, checkpoints, and that compiled modules guard train/eval and read their
// parameters by reference.
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

namespace kiln {
namespace {

namespace fs = std::filesystem;

// PyTorch's Net in tools/nn_fixtures.py.
struct NetImpl : nn::Module {
  NetImpl() : Module("Net") {
    emb = register_module("emb", nn::Embedding(nn::EmbeddingOptions(10, 4).padding_idx(0)));
    body = register_module("body", nn::Sequential(nn::Linear(4, 8), nn::GELU(), nn::LayerNorm(std::vector<int64_t>{8}),
                                                  nn::Dropout(0.1), nn::Linear(8, 3)));
  }
  Tensor forward(const Tensor& ids) const { return body->forward(emb->forward(ids).mean({1})); }
  nn::Embedding emb{nullptr};
  nn::Sequential body{nullptr};
};
KILN_MODULE(Net);

// PyTorch's Cnn in tools/nn_fixtures.py.
struct CnnImpl : nn::Module {
  CnnImpl() : Module("Cnn") {
    features = register_module(
        "features", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(2, 4, 3).padding(1)), nn::BatchNorm2d(4), nn::ReLU(),
                                   nn::Conv2d(nn::Conv2dOptions(4, 6, 3).stride(2).bias(false)), nn::GroupNorm(2, 6),
                                   nn::SiLU()));
    norm = register_module("norm", nn::RMSNorm(nn::RMSNormOptions(std::vector<int64_t>{54}).eps(1e-6)));
    head = register_module("head", nn::Linear(54, 5));
  }
  Tensor forward(const Tensor& x) { return head(norm(features(x).flatten(1))); }
  nn::Sequential features{nullptr};
  nn::RMSNorm norm{nullptr};
  nn::Linear head{nullptr};
};
KILN_MODULE(Cnn);

// PyTorch's Zoo in tools/nn_fixtures.py.
struct ZooImpl : nn::Module {
  ZooImpl() : Module("Zoo") {
    nn::ModuleDict d;
    d->insert("up", nn::ConvTranspose2d(nn::ConvTranspose2dOptions(3, 8, 3).stride(2).padding(1).output_padding(1)));
    d->insert("bag", nn::EmbeddingBag(nn::EmbeddingBagOptions(7, 4).mode("sum")));
    d->insert("bi", nn::Bilinear(4, 8, 5));
    blocks = register_module("blocks", d);
  }
  Tensor forward(const Tensor& img, const Tensor& ids, const Tensor& offsets, const Tensor& weights) {
    const Tensor up = std::dynamic_pointer_cast<nn::ConvTranspose2dImpl>(blocks["up"])->forward(img).mean({2, 3});
    const Tensor bag = std::dynamic_pointer_cast<nn::EmbeddingBagImpl>(blocks["bag"])->forward(ids, offsets, weights);
    return std::dynamic_pointer_cast<nn::BilinearImpl>(blocks["bi"])->forward(bag, up);
  }
  nn::ModuleDict blocks{nullptr};
};
KILN_MODULE(Zoo);

fs::path fixtures() { return fs::path(KILN_TEST_DATA_DIR) / "nn_fixtures"; }

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("kiln_nn_" + std::to_string(::getpid()) + "_" + name);
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what, double tol = 1e-5) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what;
  EXPECT_TRUE(allclose(got.to(kDouble), want.to(kDouble), tol, tol)) << what << "\n got " << got << "\nwant " << want;
}

TEST(NnModule, NamesAndTraversalFollowPyTorch) {
  Net net;
  EXPECT_EQ(net->named_parameters().keys(),
            (std::vector<std::string>{"emb.weight", "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias",
                                      "body.4.weight", "body.4.bias"}));
  EXPECT_EQ(net->named_modules().keys(),
            (std::vector<std::string>{"", "emb", "body", "body.0", "body.1", "body.2", "body.3", "body.4"}));
  EXPECT_EQ(net->children().size(), 2u);
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
  // Registration hands back the registered tensor: members and the dictionary share it.
  EXPECT_EQ(net->named_parameters()["emb.weight"].impl(), net->emb->weight.impl());
  // The padding row starts at zero.
  EXPECT_EQ(net->emb->weight.select(0, 0).abs().sum().item<float>(), 0.0f);
  net->eval();
  for (const auto& m : net->modules()) EXPECT_FALSE(m->is_training()) << m->name();
  net->train();
  EXPECT_TRUE(net->body[3]->is_training());
  std::ostringstream printed;
  printed << *net;
  EXPECT_NE(printed.str().find("(0): Linear(in_features=4, out_features=8, bias=true)"), std::string::npos)
      << printed.str();
  EXPECT_NE(printed.str().find("(3): Dropout(p=0.1)"), std::string::npos) << printed.str();
  // Names are checked as PyTorch checks them.
  nn::Module m;
  m.register_parameter("w", ones({2}));
  EXPECT_THROW(m.register_parameter("w", ones({2})), Error);
  EXPECT_THROW(m.register_buffer("a.b", ones({2})), Error);
  EXPECT_THROW(m.register_parameter("i", ones({2}, kLong)), Error);
}

// The model PyTorch initialized and ran: same output, loss and gradients.
TEST(NnModule, LoadsPyTorchWeightsAndMatchesItsOutputAndGradients) {
  const std::map<std::string, Tensor> io = load_safetensors(fixtures() / "net_io.safetensors");
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "eager");
    Net net;
    net->load(fixtures() / "net.safetensors");
    net->eval();
    auto fast = compile(net);
    const Tensor y = compiled ? fast(io.at("ids")) : net(io.at("ids"));
    expect_close(y, io.at("output"), "output");
    const Tensor loss = cross_entropy(y, io.at("target"));
    expect_close(loss, io.at("loss"), "loss");
    loss.backward();
    for (const auto& p : net->named_parameters()) expect_close(p.value().grad(), io.at("grad." + p.key()), p.key());
    net->zero_grad();
    for (const Tensor& p : net->parameters()) EXPECT_FALSE(p.grad().defined());
  }
}

// Convolutions and the norms in training mode: the same output and gradients, and the batch
// norm's running statistics updated as PyTorch updates them; then the evaluation output.
TEST(NnModule, TrainsAConvNetAsPyTorchDoes) {
  const std::map<std::string, Tensor> io = load_safetensors(fixtures() / "cnn_io.safetensors");
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "eager");
    Cnn cnn;
    cnn->load(fixtures() / "cnn.safetensors");
    auto fast = compile(cnn);
    const Tensor y = compiled ? fast(io.at("x")) : cnn(io.at("x"));
    expect_close(y, io.at("output"), "output", 1e-4);
    const Tensor loss = cross_entropy(y, io.at("target"));
    expect_close(loss, io.at("loss"), "loss", 1e-4);
    loss.backward();
    for (const auto& p : cnn->named_parameters())
      expect_close(p.value().grad(), io.at("grad." + p.key()), p.key(), 1e-4);
    for (const auto& b : cnn->named_buffers()) expect_close(b.value(), io.at("after." + b.key()), b.key(), 1e-5);
    cnn->eval();
    NoGradGuard no_grad;
    expect_close(compiled ? fast(io.at("x")) : cnn(io.at("x")), io.at("eval_output"), "eval output", 1e-4);
  }
}

// Attention: PyTorch's TransformerEncoderLayer (batch_first, gelu, a key padding mask) and
// MultiheadAttention (a float mask, head-averaged weights) with the same state_dicts.
TEST(NnModule, TransformerLayersMatchPyTorch) {
  const std::map<std::string, Tensor> io = load_safetensors(fixtures() / "transformer_io.safetensors");
  std::map<std::string, Tensor> layer_state, mha_state;
  for (const auto& [k, v] : load_safetensors(fixtures() / "transformer.safetensors")) {
    if (k.rfind("layer.", 0) == 0) layer_state[k.substr(6)] = v;
    else mha_state[k.substr(4)] = v;
  }
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.1).activation("gelu").batch_first(true));
  layer->load_state_dict(layer_state);
  layer->eval();
  const Tensor x = io.at("x").clone().requires_grad_();
  const Tensor y = layer(x, std::nullopt, io.at("padding"));
  expect_close(y, io.at("output"), "output", 1e-5);
  (y * linspace(-1, 1, 8)).sum().backward();
  expect_close(x.grad(), io.at("grad.x"), "grad.x", 1e-5);
  for (const auto& p : layer->named_parameters())
    expect_close(p.value().grad(), io.at("grad.layer." + p.key()), p.key(), 1e-5);

  nn::MultiheadAttention mha(8, 4);
  mha->load_state_dict(mha_state);
  mha->eval();
  const auto [out, weights] = mha(io.at("q"), io.at("kv"), io.at("kv"), std::nullopt, true, io.at("mask"));
  expect_close(out, io.at("mha_output"), "mha output", 1e-5);
  expect_close(weights, io.at("mha_weights"), "mha weights", 1e-5);
  // Without weights the product is scaled_dot_product_attention: the same output.
  const auto [fast_out, none] = mha(io.at("q"), io.at("kv"), io.at("kv"), std::nullopt, false, io.at("mask"));
  expect_close(fast_out, io.at("mha_output"), "mha output (sdpa)", 1e-5);
  EXPECT_FALSE(none.defined());
  EXPECT_THROW(nn::MultiheadAttention(8, 3), Error);
}

// ConvTranspose2d, EmbeddingBag (weighted sums) and Bilinear, held in a ModuleDict.
TEST(NnModule, MoreLayersMatchPyTorch) {
  const std::map<std::string, Tensor> io = load_safetensors(fixtures() / "zoo_io.safetensors");
  Zoo zoo;
  EXPECT_EQ(zoo->named_parameters().keys(),
            (std::vector<std::string>{"blocks.up.weight", "blocks.up.bias", "blocks.bag.weight", "blocks.bi.weight",
                                      "blocks.bi.bias"}));
  zoo->load(fixtures() / "zoo.safetensors");
  const Tensor y = zoo(io.at("img"), io.at("ids"), io.at("offsets"), io.at("weights"));
  expect_close(y, io.at("output"), "output");
  (y * arange(5, kFloat)).sum().backward();
  for (const auto& p : zoo->named_parameters()) expect_close(p.value().grad(), io.at("grad." + p.key()), p.key());
  EXPECT_TRUE(zoo->blocks->contains("bi"));
  EXPECT_THROW(zoo->blocks["nope"], Error);
}

TEST(NnModule, StrictLoadingNamesEveryKey) {
  Net net;
  std::map<std::string, Tensor> sd = load_safetensors(fixtures() / "net.safetensors");
  sd.erase("body.4.bias");
  sd["body.9.weight"] = ones({2});
  sd["emb.weight"] = ones({11, 4});
  try {
    net->load_state_dict(sd);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Error(s) in loading state_dict for Net:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Missing key(s) in state_dict: \"body.4.bias\"."), std::string::npos) << msg;
    EXPECT_NE(msg.find("Unexpected key(s) in state_dict: \"body.9.weight\"."), std::string::npos) << msg;
    EXPECT_NE(msg.find("size mismatch for emb.weight: copying a param with shape [11, 4] from checkpoint, the shape "
                       "in current model is [10, 4]."),
              std::string::npos)
        << msg;
  }
  // Non-strict loading takes what matches; sizes must still agree.
  sd["emb.weight"] = zeros({10, 4});
  net->load_state_dict(sd, /*strict=*/false);
  EXPECT_EQ(net->emb->weight.abs().sum().item<float>(), 0.0f);
}

TEST(NnModule, CheckpointsRoundTripAndConversionKeepsHandles) {
  Net a, b;
  const fs::path path = temp_file("ckpt.safetensors");
  a->save(path);
  b->load(path);
  fs::remove(path);
  for (const auto& p : a->named_parameters())
    EXPECT_TRUE(equal(p.value(), b->named_parameters()[p.key()])) << p.key();
  // to(dtype) converts in place: the members, the dictionary and the gradients follow.
  const TensorImpl* before = b->body->at<nn::LinearImpl>(0).weight.impl();
  cross_entropy(b(full({2, 3}, 1, kLong)), full({2}, 0, kLong)).backward();
  b->to(kDouble);
  EXPECT_EQ(b->body->at<nn::LinearImpl>(0).weight.impl(), before);
  EXPECT_EQ(b->body->at<nn::LinearImpl>(0).weight.dtype(), kDouble);
  EXPECT_EQ(b->emb->weight.grad().dtype(), kDouble);
  EXPECT_TRUE(b->emb->weight.requires_grad());
  EXPECT_EQ(b(full({2, 3}, 1, kLong)).dtype(), kDouble);
  // apply() visits every module once, this one first.
  std::vector<std::string> seen;
  b->apply([&](const std::string& path, nn::Module& m) { seen.push_back(path + ":" + m.name()); });
  EXPECT_EQ(seen.front(), ":Net");
  EXPECT_EQ(seen.size(), 8u);
}

TEST(NnInit, FreshLayersHavePyTorchsDistributions) {
  manual_seed(3);
  nn::Linear fc(256, 512);
  const double bound = 1.0 / 16;  // 1 / sqrt(256): kaiming_uniform_(a = sqrt(5)) and the bias rule
  const Tensor w = fc->weight.detach().to(kDouble);
  EXPECT_LE(w.abs().max().item<double>(), bound);
  EXPECT_NEAR(w.mean().item<double>(), 0.0, 0.002);
  EXPECT_NEAR(w.var().item<double>(), bound * bound / 3, bound * bound / 3 * 0.02);  // 131072 draws
  EXPECT_LE(fc->bias.detach().abs().max().item<double>(), bound);
  EXPECT_NEAR(nn::init::calculate_gain("leaky_relu", std::sqrt(5.0)), std::sqrt(2.0 / 6.0), 1e-12);
  EXPECT_NEAR(nn::init::calculate_gain("tanh"), 5.0 / 3.0, 1e-12);
  Tensor k = empty({400, 300});
  nn::init::kaiming_normal_(k, 0.0, "fan_out", "relu");  // std = sqrt(2 / 400)
  EXPECT_NEAR(k.to(kDouble).std().item<double>(), std::sqrt(2.0 / 400), 0.002);
  Tensor x = empty({200, 300});
  nn::init::xavier_uniform_(x);
  EXPECT_LE(x.abs().max().item<float>(), std::sqrt(6.0 / 500) + 1e-6);
  // A standard normal truncated to [-1, 2]: mean (phi(-1) - phi(2)) / (Phi(2) - Phi(-1)).
  Tensor t = empty({200000}, kDouble);
  nn::init::trunc_normal_(t, 0.0, 1.0, -1.0, 2.0);
  EXPECT_GE(t.min().item<double>(), -1.0);
  EXPECT_LE(t.max().item<double>(), 2.0);
  const double root_two_pi = std::sqrt(2 * std::acos(-1.0));
  const double phi_m1 = std::exp(-0.5) / root_two_pi, phi_2 = std::exp(-2.0) / root_two_pi;
  const double Z = 0.5 * (std::erf(2 / std::sqrt(2.0)) - std::erf(-1 / std::sqrt(2.0)));
  EXPECT_NEAR(t.mean().item<double>(), (phi_m1 - phi_2) / Z, 0.01);
  EXPECT_THROW(nn::init::kaiming_uniform_(empty({3})), Error);  // fewer than 2 dims
  EXPECT_THROW(nn::init::normal_(empty({3}, kLong)), Error);
}

TEST(CompiledModule, TrainAndEvalAreGuarded) {
  nn::Sequential net(nn::Linear(16, 16), nn::Dropout(0.5));
  auto fast = compile(net);
  const Tensor x = ones({64, 16});
  net->eval();
  const Tensor ref = net(x);
  EXPECT_TRUE(allclose(fast(x), ref));
  net->train();
  const Tensor dropped = fast(x);
  EXPECT_GT(eq(dropped, 0).sum().item<int64_t>(), 100) << "training mode must drop";
  net->eval();
  EXPECT_TRUE(allclose(fast(x), ref)) << "eval after train must not reuse the training program";
  // Mixed modes are a guard of their own: the Linear evaluates, the Dropout trains.
  net[1]->train();
  EXPECT_GT(eq(fast(x), 0).sum().item<int64_t>(), 100);
  net->eval();
  EXPECT_TRUE(allclose(fast(x), ref));
}

struct WrapImpl : nn::Module {
  WrapImpl() : Module("Wrap") { fc = register_module("fc", nn::Linear(3, 2)); }
  Tensor forward(const Tensor& x) const { return fc(x); }
  nn::Linear fc{nullptr};
};
KILN_MODULE(Wrap);

// A submodule replaced after compile() is traced again, not read stale.
TEST(CompiledModule, AReplacedSubmoduleIsTracedAgain) {
  Wrap w;
  auto fast = compile(w);
  const Tensor x = ones({4, 3});
  NoGradGuard no_grad;
  EXPECT_TRUE(allclose(fast(x), w(x)));
  w->fc = w->replace_module("fc", nn::Linear(3, 2).ptr());
  EXPECT_TRUE(allclose(fast(x), w(x)));
  EXPECT_EQ(w->named_parameters()["fc.weight"].impl(), w->fc->weight.impl());
}

// An optimizer's in-place update is seen by the next call, without a recompile.
TEST(CompiledModule, ParametersAreReadByReference) {
  nn::Linear fc(3, 2);
  auto fast = compile(fc);
  const Tensor x = ones({4, 3});
  EXPECT_TRUE(allclose(fast(x), fc(x)));
  const int64_t compiles = fast.stats().compiles;
  {
    NoGradGuard no_grad;
    fc->weight.mul_(2);
  }
  EXPECT_TRUE(allclose(fast(x), fc(x)));
  EXPECT_EQ(fast.stats().compiles, compiles);
}

}  // namespace
}  // namespace kiln
