// kiln/test/test_support/model_zoo.cpp — the classes of tools/model_fixtures.py in kiln::nn, with
// the same module names, so that PyTorch's state_dict loads strictly.
#include "test/test_support/model_zoo.h"

#include <algorithm>
#include <map>

namespace kiln::test {

namespace {

using Conv2dOpts = nn::Conv2dOptions;

nn::Conv2d conv(int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t pad, bool bias) {
  return nn::Conv2d(Conv2dOpts(cin, cout, k).stride(stride).padding(pad).bias(bias));
}

// ---- ResNet-18 (torchvision's BasicBlock, [2, 2, 2, 2]) ----

struct BasicBlockImpl : nn::Module {
  BasicBlockImpl(int64_t cin, int64_t cout, int64_t stride) : Module("BasicBlock") {
    conv1 = register_module("conv1", conv(cin, cout, 3, stride, 1, false));
    bn1 = register_module("bn1", nn::BatchNorm2d(cout));
    conv2 = register_module("conv2", conv(cout, cout, 3, 1, 1, false));
    bn2 = register_module("bn2", nn::BatchNorm2d(cout));
    if (stride != 1 || cin != cout)
      downsample = register_module("downsample", nn::Sequential(conv(cin, cout, 1, stride, 0, false), nn::BatchNorm2d(cout)));
  }
  Tensor forward(const Tensor& x) const {
    const Tensor y = bn2->forward(conv2->forward(relu(bn1->forward(conv1->forward(x)))));
    return relu(y + (downsample.is_empty() ? x : downsample->forward(x)));
  }
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  nn::Sequential downsample{nullptr};
};
KILN_MODULE(BasicBlock);

struct ResNet18Impl : nn::Module {
  ResNet18Impl(int64_t width, int64_t classes) : Module("ResNet18") {
    conv1 = register_module("conv1", conv(3, width, 7, 2, 3, false));
    bn1 = register_module("bn1", nn::BatchNorm2d(width));
    int64_t cin = width;
    for (int i = 0; i < 4; ++i) {
      const int64_t cout = width << i;
      layers[i] = register_module("layer" + std::to_string(i + 1),
                                  nn::Sequential(BasicBlock(cin, cout, i == 0 ? 1 : 2), BasicBlock(cout, cout, 1)));
      cin = cout;
    }
    fc = register_module("fc", nn::Linear(cin, classes));
  }
  Tensor forward(const Tensor& input) const {
    Tensor x = max_pool2d(relu(bn1->forward(conv1->forward(input))), {3, 3}, {2, 2}, {1, 1});
    for (const nn::Sequential& layer : layers) x = layer->forward(x);
    return fc->forward(adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::Sequential layers[4] = {nn::Sequential{nullptr}, nn::Sequential{nullptr}, nn::Sequential{nullptr},
                              nn::Sequential{nullptr}};
  nn::Linear fc{nullptr};
};
KILN_MODULE(ResNet18);

// ---- GPT-2 (pre-norm blocks, tanh GELU, a head tied to the token embedding) ----

struct Gpt2BlockImpl : nn::Module {
  Gpt2BlockImpl(int64_t dim, int64_t heads) : Module("Gpt2Block"), heads(heads) {
    ln_1 = register_module("ln_1", nn::LayerNorm(std::vector<int64_t>{dim}));
    c_attn = register_module("c_attn", nn::Linear(dim, 3 * dim));
    c_proj = register_module("c_proj", nn::Linear(dim, dim));
    ln_2 = register_module("ln_2", nn::LayerNorm(std::vector<int64_t>{dim}));
    c_fc = register_module("c_fc", nn::Linear(dim, 4 * dim));
    mlp_proj = register_module("mlp_proj", nn::Linear(4 * dim, dim));
  }
  Tensor forward(const Tensor& x) const {
    const int64_t b = x.size(0), t = x.size(1), d = x.size(2);
    std::vector<Tensor> qkv = c_attn->forward(ln_1->forward(x)).split(d, 2);
    for (Tensor& z : qkv) z = z.view({b, t, heads, d / heads}).transpose(1, 2);
    const Tensor y = scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], std::nullopt, 0.0, /*is_causal=*/true);
    const Tensor h = x + c_proj->forward(y.transpose(1, 2).reshape({b, t, d}));
    return h + mlp_proj->forward(gelu(c_fc->forward(ln_2->forward(h)), "tanh"));
  }
  int64_t heads;
  nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  nn::Linear c_attn{nullptr}, c_proj{nullptr}, c_fc{nullptr}, mlp_proj{nullptr};
};
KILN_MODULE(Gpt2Block);

struct Gpt2Impl : nn::Module {
  Gpt2Impl(int64_t vocab, int64_t context, int64_t dim, int64_t heads, int64_t blocks) : Module("Gpt2") {
    wte = register_module("wte", nn::Embedding(vocab, dim));
    wpe = register_module("wpe", nn::Embedding(context, dim));
    for (int64_t i = 0; i < blocks; ++i) h->push_back(layers.emplace_back(Gpt2Block(dim, heads)));
    register_module("h", h);
    ln_f = register_module("ln_f", nn::LayerNorm(std::vector<int64_t>{dim}));
  }
  Tensor forward(const Tensor& ids) const {
    Tensor x = wte->forward(ids) + wpe->forward(arange(ids.size(1)));
    for (const Gpt2Block& b : layers) x = b->forward(x);
    return linear(ln_f->forward(x), wte->weight);
  }
  nn::Embedding wte{nullptr}, wpe{nullptr};
  nn::ModuleList h;
  std::vector<Gpt2Block> layers;
  nn::LayerNorm ln_f{nullptr};
};
KILN_MODULE(Gpt2);

// ---- U-Net (three levels, transposed convolutions up, skips concatenated) ----

nn::Sequential double_conv(int64_t cin, int64_t cout) {
  return nn::Sequential(conv(cin, cout, 3, 1, 1, false), nn::BatchNorm2d(cout), nn::ReLU(), conv(cout, cout, 3, 1, 1, false),
                        nn::BatchNorm2d(cout), nn::ReLU());
}

struct UNetImpl : nn::Module {
  UNetImpl(int64_t cin, int64_t width, int64_t classes) : Module("UNet") {
    inc = register_module("inc", double_conv(cin, width));
    for (int i = 0; i < 3; ++i) down->push_back(downs.emplace_back(double_conv(width << i, width << (i + 1))));
    for (int i = 2; i >= 0; --i) {
      up->push_back(ups.emplace_back(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(width << (i + 1), width << i, 2).stride(2))));
      dec->push_back(decs.emplace_back(double_conv(width << (i + 1), width << i)));
    }
    register_module("down", down);
    register_module("up", up);
    register_module("dec", dec);
    outc = register_module("outc", nn::Conv2d(width, classes, 1));
  }
  Tensor forward(const Tensor& input) const {
    std::vector<Tensor> skips{inc->forward(input)};
    for (const nn::Sequential& d : downs) skips.push_back(d->forward(max_pool2d(skips.back(), {2, 2})));
    Tensor x = skips.back();
    skips.pop_back();
    for (size_t i = 0; i < ups.size(); ++i) {
      x = decs[i]->forward(cat({skips.back(), ups[i]->forward(x)}, 1));
      skips.pop_back();
    }
    return outc->forward(x);
  }
  nn::Sequential inc{nullptr};
  nn::ModuleList down, up, dec;
  std::vector<nn::Sequential> downs, decs;
  std::vector<nn::ConvTranspose2d> ups;
  nn::Conv2d outc{nullptr};
};
KILN_MODULE(UNet);

// ---- BERT (embeddings with a LayerNorm, post-norm GELU encoder layers, the tanh pooler) ----

struct BertImpl : nn::Module {
  BertImpl(int64_t vocab, int64_t positions, int64_t dim, int64_t heads, int64_t ffn, int64_t n_layers) : Module("Bert") {
    word = register_module("word", nn::Embedding(vocab, dim));
    position = register_module("position", nn::Embedding(positions, dim));
    token_type = register_module("token_type", nn::Embedding(2, dim));
    ln = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({dim}).eps(1e-12)));
    for (int64_t i = 0; i < n_layers; ++i)
      layers->push_back(encoders.emplace_back(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(dim, heads)
                                                                              .dim_feedforward(ffn)
                                                                              .dropout(0.0)
                                                                              .activation("gelu")
                                                                              .layer_norm_eps(1e-12)
                                                                              .batch_first(true))));
    register_module("layers", layers);
    pooler = register_module("pooler", nn::Linear(dim, dim));
  }
  Tensor forward(const Tensor& ids, const Tensor& types) const {
    Tensor x = word->forward(ids) + position->forward(arange(ids.size(1))) + token_type->forward(types);
    x = ln->forward(x);
    for (const nn::TransformerEncoderLayer& layer : encoders) x = layer->forward(x);
    return tanh(pooler->forward(x.select(1, 0)));
  }
  nn::Embedding word{nullptr}, position{nullptr}, token_type{nullptr};
  nn::LayerNorm ln{nullptr};
  nn::ModuleList layers;
  std::vector<nn::TransformerEncoderLayer> encoders;
  nn::Linear pooler{nullptr};
};
KILN_MODULE(Bert);

// The model's forward, eager and compiled, on the fixture's N inputs.
template <size_t N, typename Holder> ZooModel wrap(Holder holder, std::vector<Tensor> inputs, CompileOptions opts) {
  ZooModel m;
  m.module = holder.ptr();
  m.inputs = std::move(inputs);
  auto compiled = std::make_shared<decltype(kiln::compile(holder))>(kiln::compile(holder, std::move(opts)));
  const std::vector<Tensor> in = m.inputs;
  m.stats = [compiled] { return compiled->stats(); };
  if (in.size() != N) fail("load_zoo_model", "expected {} inputs, the fixture has {}", N, in.size());
  if constexpr (N == 1) {
    m.eager = [holder, in] { return holder->forward(in[0]); };
    m.compiled = [compiled, in] { return (*compiled)(in[0]); };
  } else {
    m.eager = [holder, in] { return holder->forward(in[0], in[1]); };
    m.compiled = [compiled, in] { return (*compiled)(in[0], in[1]); };
  }
  return m;
}

}  // namespace

ZooModel load_zoo_model(const std::string& dir, const std::string& name, CompileOptions opts) {
  if (std::find(kZooModels.begin(), kZooModels.end(), name) == kZooModels.end())
    fail("load_zoo_model", "unknown model \"{}\" (expected resnet18, gpt2, unet or bert)", name);
  std::map<std::string, Tensor> io = load_safetensors(dir + "/" + name + "_io.safetensors");
  const auto get = [&](const std::string& key) {
    auto it = io.find(key);
    if (it == io.end()) fail("load_zoo_model", "{}_io.safetensors in {} has no tensor \"{}\"", name, dir, key);
    return it->second;
  };
  const Tensor config = get("config");
  std::vector<int64_t> c(config.numel());
  for (int64_t i = 0; i < config.numel(); ++i) c[i] = config[i].item<int64_t>();
  const auto want = [&](size_t n) {
    if (c.size() != n) fail("load_zoo_model", "{}: config has {} sizes, expected {}", name, c.size(), n);
  };
  ZooModel m;
  if (name == "resnet18") {
    want(4);
    m = wrap<1>(ResNet18(c[2], c[3]), {get("input")}, std::move(opts));
  } else if (name == "gpt2") {
    want(7);
    m = wrap<1>(Gpt2(c[2], c[3], c[4], c[5], c[6]), {get("input")}, std::move(opts));
  } else if (name == "unet") {
    want(5);
    m = wrap<1>(UNet(c[2], c[3], c[4]), {get("input")}, std::move(opts));
  } else {  // bert
    want(8);
    m = wrap<2>(Bert(c[2], c[3], c[4], c[5], c[6], c[7]), {get("input"), get("token_type")}, std::move(opts));
  }
  m.name = name;
  m.module->load(dir + "/" + name + ".safetensors");
  m.module->eval();
  m.expected = get("output");
  return m;
}

}  // namespace kiln::test
