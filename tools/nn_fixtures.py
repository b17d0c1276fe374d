#!/usr/bin/env python3
# kiln/tools/nn_fixtures.py — a small PyTorch model for test/test_nn_modules.cpp.
#
# Writes into OUT (test/nn_fixtures):
#   net.safetensors     the state_dict of Net below (PyTorch's names and initialization)
#   net_io.safetensors  its input ids and target, the eval-mode output, the cross-entropy loss
#                       and the gradient of every parameter (named "grad.<parameter>")
#   cnn.safetensors, cnn_io.safetensors   the same for Cnn, run in training mode (batch
#                       statistics), with its buffers after the step ("after.<buffer>") and its
#                       output in evaluation mode afterwards ("eval_output")
#   transformer.safetensors, transformer_io.safetensors   a TransformerEncoderLayer
#                       (batch_first, gelu) run in evaluation mode with a key padding mask, its
#                       output and gradients; a MultiheadAttention with a float attn_mask, its
#                       output and head-averaged weights
#   zoo.safetensors, zoo_io.safetensors   ConvTranspose2d, EmbeddingBag and Bilinear in a
#                       ModuleDict: output and gradients
# kiln rebuilds them with kiln::nn, loads their state and must reproduce the rest.
# Run by hand: /tmp/pt/bin/python tools/nn_fixtures.py test/nn_fixtures
import os
import sys

import torch
from safetensors.torch import save_file
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4, padding_idx=0)
        self.body = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Dropout(0.1), nn.Linear(8, 3))

    def forward(self, ids):
        return self.body(self.emb(ids).mean(1))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                      nn.Conv2d(4, 6, 3, stride=2, bias=False), nn.GroupNorm(2, 6), nn.SiLU())
        self.norm = nn.RMSNorm(6 * 3 * 3, eps=1e-6)
        self.head = nn.Linear(6 * 3 * 3, 5)

    def forward(self, x):
        return self.head(self.norm(self.features(x).flatten(1)))


class Zoo(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"up": nn.ConvTranspose2d(3, 8, 3, stride=2, padding=1, output_padding=1),
                                     "bag": nn.EmbeddingBag(7, 4, mode="sum"),
                                     "bi": nn.Bilinear(4, 8, 5)})

    def forward(self, img, ids, offsets, weights):
        up = self.blocks["up"](img).mean((2, 3))
        bag = self.blocks["bag"](ids, offsets, per_sample_weights=weights)
        return self.blocks["bi"](bag, up)


def classify(model, inputs, target):
    """Runs model on inputs, takes the cross-entropy against target and backward; returns the
    tensors to record: the inputs, output, loss and every parameter's gradient."""
    y = model(inputs)
    loss = nn.functional.cross_entropy(y, target)
    loss.backward()
    tensors = {"target": target, "output": y.detach(), "loss": loss.detach()}
    for name, p in model.named_parameters():
        tensors["grad." + name] = p.grad
    return tensors


def transformer_fixture(out):
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, activation="gelu", batch_first=True)
    mha = nn.MultiheadAttention(8, 4)
    state = {"layer." + k: v for k, v in layer.state_dict().items()}
    state.update({"mha." + k: v for k, v in mha.state_dict().items()})
    save_file({k: v.contiguous() for k, v in state.items()}, os.path.join(out, "transformer.safetensors"))
    layer.eval()
    mha.eval()
    x = torch.randn(2, 5, 8, requires_grad=True)
    padding = torch.tensor([[False, False, False, True, True], [False] * 5])
    y = layer(x, src_key_padding_mask=padding)
    # Off the fast path PyTorch takes in evaluation without grad: the regular computation.
    loss = (y * torch.linspace(-1, 1, 8)).sum()
    loss.backward()
    tensors = {"x": x.detach(), "padding": padding, "output": y.detach(), "grad.x": x.grad}
    for name, p in layer.named_parameters():
        tensors["grad.layer." + name] = p.grad
    q = torch.randn(4, 2, 8)
    kv = torch.randn(6, 2, 8)
    causal = torch.randn(4, 6)
    attn, weights = mha(q, kv, kv, attn_mask=causal)
    tensors.update({"q": q, "kv": kv, "mask": causal, "mha_output": attn.detach(), "mha_weights": weights.detach()})
    save_file(tensors, os.path.join(out, "transformer_io.safetensors"))


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    net = Net()
    save_file({k: v.contiguous() for k, v in net.state_dict().items()}, os.path.join(out, "net.safetensors"))
    net.eval()
    ids = torch.tensor([[1, 2, 0, 4, 9], [3, 3, 5, 0, 0], [7, 8, 6, 2, 1]])
    target = torch.tensor([2, 0, 1])
    tensors = classify(net, ids, target)
    tensors["ids"] = ids
    save_file(tensors, os.path.join(out, "net_io.safetensors"))

    cnn = Cnn()
    with torch.no_grad():  # running statistics that are not the defaults
        cnn.features[1].running_mean.uniform_(-0.5, 0.5)
        cnn.features[1].running_var.uniform_(0.5, 1.5)
    save_file({k: v.contiguous() for k, v in cnn.state_dict().items()}, os.path.join(out, "cnn.safetensors"))
    x = torch.randn(3, 2, 8, 8)
    target = torch.tensor([4, 0, 2])
    tensors = classify(cnn, x, target)
    tensors["x"] = x
    for name, b in cnn.named_buffers():
        tensors["after." + name] = b.clone()
    cnn.eval()
    with torch.no_grad():
        tensors["eval_output"] = cnn(x)
    save_file(tensors, os.path.join(out, "cnn_io.safetensors"))
    transformer_fixture(out)

    torch.manual_seed(2)
    zoo = Zoo()
    save_file({k: v.contiguous() for k, v in zoo.state_dict().items()}, os.path.join(out, "zoo.safetensors"))
    img = torch.randn(2, 3, 4, 4)
    ids = torch.tensor([1, 6, 2, 2, 0])
    offsets = torch.tensor([0, 3])
    weights = torch.rand(5)
    y = zoo(img, ids, offsets, weights)
    (y * torch.arange(5.0)).sum().backward()
    tensors = {"img": img, "ids": ids, "offsets": offsets, "weights": weights, "output": y.detach()}
    for name, p in zoo.named_parameters():
        tensors["grad." + name] = p.grad
    save_file(tensors, os.path.join(out, "zoo_io.safetensors"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: nn_fixtures.py OUT")
    main(sys.argv[1])
