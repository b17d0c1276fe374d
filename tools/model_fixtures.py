#!/usr/bin/env python3
# kiln/tools/model_fixtures.py — four whole models from their PyTorch definitions, with random
# weights: a ResNet-18, a 2-block GPT-2, a U-Net and a 2-layer BERT (issue 33).
#
#   model_fixtures.py OUT [--scale test|bench] [--models resnet18,gpt2,unet,bert]
#
# Writes into OUT, per model:
#   <model>.safetensors     its state_dict (PyTorch's names; batch norm running statistics that
#                           are not the defaults)
#   <model>_io.safetensors  "config" (int64: the sizes the C++ side builds the model from),
#                           "input" and, for BERT, "token_type"; "output", the model's output in
#                           evaluation mode without grad
# The test scale (committed as test/model_fixtures, read by test/test_models.cpp) keeps the
# architectures and shrinks widths and inputs; the bench scale is what bench/models_peers.py
# measures (kiln's side: bench/bench_models.cpp --zoo, whose builders mirror these classes in
# test/test_support/model_zoo.cpp).
# Run by hand: /tmp/pt/bin/python tools/model_fixtures.py test/model_fixtures
import argparse
import math
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from torch import nn

# Sizes per scale. resnet18: [batch, image side, base width, classes]; gpt2: [batch, tokens,
# vocab, context, dim, heads, blocks]; unet: [batch, image side, in channels, base width,
# classes]; bert: [batch, tokens, vocab, positions, dim, heads, ffn dim, layers].
SCALES = {
    "test": {"resnet18": [2, 32, 8, 10], "gpt2": [2, 16, 64, 32, 32, 2, 2], "unet": [2, 32, 3, 8, 2],
             "bert": [2, 16, 64, 32, 32, 2, 64, 2]},
    "bench": {"resnet18": [1, 224, 64, 1000], "gpt2": [2, 64, 1024, 128, 128, 4, 2],
              "unet": [2, 64, 3, 16, 2], "bert": [2, 64, 1024, 128, 128, 4, 512, 2]},
}


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    """torchvision's resnet18 (BasicBlock, [2, 2, 2, 2]) with a configurable base width."""

    def __init__(self, width, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        cin = width
        for i in range(4):
            cout = width * 2 ** i
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class Gpt2Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.mlp_proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    """GPT-2's decoder: token and position embeddings, pre-norm blocks, a final LayerNorm and a
    head tied to the token embedding."""

    def __init__(self, vocab, context, dim, heads, blocks):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        self.h = nn.ModuleList(Gpt2Block(dim, heads) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class UNet(nn.Module):
    """The U-Net of Ronneberger et al. with padded convolutions: three levels down (max pooling),
    transposed convolutions up, skip connections concatenated, a 1x1 head."""

    def __init__(self, cin, width, classes):
        super().__init__()
        self.inc = double_conv(cin, width)
        self.down = nn.ModuleList(double_conv(width * 2 ** i, width * 2 ** (i + 1)) for i in range(3))
        self.up = nn.ModuleList(nn.ConvTranspose2d(width * 2 ** (i + 1), width * 2 ** i, 2, stride=2)
                                for i in reversed(range(3)))
        self.dec = nn.ModuleList(double_conv(width * 2 ** (i + 1), width * 2 ** i) for i in reversed(range(3)))
        self.outc = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.down:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        x = skips.pop()
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([skips.pop(), up(x)], 1))
        return self.outc(x)


class Bert(nn.Module):
    """BERT's encoder: word, position and token-type embeddings with a LayerNorm, post-norm
    encoder layers (GELU), and the tanh pooler over the first token. Returns the pooled output."""

    def __init__(self, vocab, positions, dim, heads, ffn, layers):
        super().__init__()
        self.word = nn.Embedding(vocab, dim)
        self.position = nn.Embedding(positions, dim)
        self.token_type = nn.Embedding(2, dim)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, heads, ffn, dropout=0.0, activation="gelu", layer_norm_eps=1e-12,
                                       batch_first=True) for _ in range(layers))
        self.pooler = nn.Linear(dim, dim)

    def forward(self, ids, token_type):
        x = self.word(ids) + self.position(torch.arange(ids.shape[1])) + self.token_type(token_type)
        x = self.ln(x)
        for layer in self.layers:
            x = layer(x)
        return torch.tanh(self.pooler(x[:, 0]))


def build(name, config):
    """The model and its example inputs for `name` at `config` (a row of SCALES)."""
    if name == "resnet18":
        batch, side, width, classes = config
        return ResNet18(width, classes), [torch.randn(batch, 3, side, side)]
    if name == "gpt2":
        batch, tokens, vocab, context, dim, heads, blocks = config
        return Gpt2(vocab, context, dim, heads, blocks), [torch.randint(0, vocab, (batch, tokens))]
    if name == "unet":
        batch, side, cin, width, classes = config
        return UNet(cin, width, classes), [torch.randn(batch, cin, side, side)]
    if name == "bert":
        batch, tokens, vocab, positions, dim, heads, ffn, layers = config
        return Bert(vocab, positions, dim, heads, ffn, layers), [torch.randint(0, vocab, (batch, tokens)),
                                                                  torch.randint(0, 2, (batch, tokens))]
    raise ValueError(f"unknown model {name}")


def make(name, config, seed=0):
    """Builds `name` with seeded random weights (GPT-2's scaled as GPT-2 initializes them) and
    running statistics, in evaluation mode."""
    torch.manual_seed(seed)
    model, inputs = build(name, config)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.2, 0.2)
            if name in ("gpt2", "bert") and isinstance(mod, (nn.Linear, nn.Embedding)):
                mod.weight.normal_(0.0, 0.02)
                if isinstance(mod, nn.Linear) and mod.bias is not None:
                    mod.bias.normal_(0.0, 0.02)
    return model.eval(), inputs


def write(out, name, config):
    model, inputs = make(name, config)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    if name == "gpt2":  # the head is the token embedding, stored once as PyTorch does
        state = {k: v for k, v in state.items() if not k.startswith("lm_head")}
    save_file(state, os.path.join(out, f"{name}.safetensors"))
    with torch.no_grad():
        y = model(*inputs)
    io = {"config": torch.tensor(config, dtype=torch.int64), "input": inputs[0], "output": y}
    if name == "bert":
        io["token_type"] = inputs[1]
    save_file(io, os.path.join(out, f"{name}_io.safetensors"))
    assert math.isfinite(float(y.abs().max()))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--scale", default="test", choices=sorted(SCALES))
    p.add_argument("--models", default="resnet18,gpt2,unet,bert")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(1)  # the expected outputs do not depend on the generating host's threads
    for name in a.models.split(","):
        write(a.out, name, SCALES[a.scale][name])


if __name__ == "__main__":
    main()
