#!/usr/bin/env python3
# kiln/tools/train_fixtures.py — PyTorch reference training runs for the end-to-end training tests.
#
# Writes into OUT (test/train_fixtures); everything a run needs is in the files, so kiln can
# retrain each model from the same initial weights on the same batches and compare loss curves:
#   digits.safetensors      sklearn's 8x8 digits (values 0..16) split into train/test by a fixed
#                           permutation, and "perm": each epoch's shuffled order of the train set
#   mlp_init.safetensors, mlp_result.safetensors   Linear-ReLU-Linear on digits with AdamW:
#                           the state_dict before training; per-step loss, test accuracy and the
#                           trained parameters ("final.<name>")
#   cnn_init.safetensors, cnn_result.safetensors   two conv layers + max pooling + Linear on
#                           digits with Nesterov SGD, cosine lr, gradient clipping: as above plus
#                           each step's lr and pre-clipping gradient norm
#   gpt_data.safetensors    batches of a synthetic sequence task (x[t] = x[t-1] + x[t-2] mod 16)
#   gpt_init.safetensors, gpt_result.safetensors   a 2-block causal transformer trained on them
#   README.md               what each file holds, every hyperparameter, results and timings
# Float32 and one thread throughout; the losses are recorded before each step's update.
# Needs scikit-learn (for load_digits, shipped with the package). Run by hand:
#   /tmp/pt/bin/python tools/train_fixtures.py test/train_fixtures
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from torch import nn

EPOCHS = 10          # digits: epochs for the MLP and the CNN
BATCH = 64           # digits: batch size; the last batch of each epoch has 1437 % 64 = 29 samples
N_TRAIN = 1437
N_TEST = 360
GPT_STEPS = 300
GPT_BATCH = 16
GPT_EVAL = 64
VOCAB = 16
SEQ = 33             # tokens per sequence; inputs seq[:32], targets seq[1:]


def save(tensors, out, name):
    save_file({k: v.detach().contiguous() for k, v in tensors.items()}, os.path.join(out, name))


def load_digits_split():
    from sklearn.datasets import load_digits
    d = load_digits()
    x = torch.from_numpy(d.data).to(torch.uint8)          # values 0..16
    y = torch.from_numpy(d.target).to(torch.int64)
    assert len(x) == N_TRAIN + N_TEST
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    train, test = order[:N_TRAIN], order[N_TRAIN:]
    g = torch.Generator().manual_seed(1)
    perm = torch.stack([torch.randperm(N_TRAIN, generator=g) for _ in range(EPOCHS)])
    return {"train_x": x[train], "train_y": y[train], "test_x": x[test], "test_y": y[test], "perm": perm}


def digit_batches(data):
    """Yields (x float [b, 64] in [0, 1], y int64 [b]) for every step of every epoch."""
    for order in data["perm"]:
        for start in range(0, N_TRAIN, BATCH):
            idx = order[start:start + BATCH]
            yield data["train_x"][idx].float() / 16, data["train_y"][idx]


def accuracy(pred, target):
    """float32 [1]: the fraction of pred equal to target."""
    return torch.tensor([(pred == target).float().mean().item()], dtype=torch.float32)


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x.view(-1, 1, 8, 8))), 2)   # [B, 8, 4, 4]
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)                     # [B, 16, 2, 2]
        return self.fc(x.flatten(1))


def train_digits(model, data, opt, sched=None, clip=None):
    """Trains on digit_batches; returns the per-step records and the test accuracy."""
    loss_log, lr_log, norm_log = [], [], []
    start = time.perf_counter()
    for x, y in digit_batches(data):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        loss_log.append(loss.item())
        lr_log.append(opt.param_groups[0]["lr"])
        if clip is not None:
            norm_log.append(torch.nn.utils.clip_grad_norm_(model.parameters(), clip).item())
        opt.step()
        if sched is not None:
            sched.step()
    seconds = time.perf_counter() - start
    with torch.no_grad():
        acc = accuracy(model(data["test_x"].float() / 16).argmax(-1), data["test_y"])
    return {"loss": loss_log, "lr": lr_log, "grad_norm": norm_log}, acc, seconds


def result(model, log, acc, extra=()):
    tensors = {"loss": torch.tensor(log["loss"], dtype=torch.float32), "test_accuracy": acc}
    for name in extra:
        tensors[name] = torch.tensor(log[name], dtype=torch.float64 if name == "lr" else torch.float32)
    for name, p in model.state_dict().items():
        tensors["final." + name] = p
    return tensors


class Block(nn.Module):
    def __init__(self, d=32, heads=2):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def attn(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)                           # each [B, T, 32]
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)       # [B, 2, T, 16]
        return y.transpose(1, 2).reshape(b, t, d)

    def forward(self, x):
        h = x + self.proj(self.attn(self.ln1(x)))
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))


class Gpt(nn.Module):
    def __init__(self, vocab=VOCAB, ctx=SEQ - 1, d=32, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):                                               # ids int64 [B, T]
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))                                    # [B, T, vocab]


def fib_sequences(shape, seed):
    """uint8 [*shape, SEQ]: two uniform tokens, then x[t] = (x[t-1] + x[t-2]) % VOCAB."""
    g = torch.Generator().manual_seed(seed)
    seq = torch.zeros(*shape, SEQ, dtype=torch.int64)
    seq[..., :2] = torch.randint(0, VOCAB, (*shape, 2), generator=g)
    for t in range(2, SEQ):
        seq[..., t] = (seq[..., t - 1] + seq[..., t - 2]) % VOCAB
    return seq.to(torch.uint8)


def train_gpt(out):
    data = {"train": fib_sequences((GPT_STEPS, GPT_BATCH), 5), "eval": fib_sequences((GPT_EVAL,), 6)}
    save(data, out, "gpt_data.safetensors")
    torch.manual_seed(4)
    model = Gpt()
    save(model.state_dict(), out, "gpt_init.safetensors")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.98), weight_decay=0.1)
    losses = []
    start = time.perf_counter()
    for batch in data["train"]:
        seq = batch.long()
        logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        losses.append(loss.item())
        opt.step()
    seconds = time.perf_counter() - start
    with torch.no_grad():
        seq = data["eval"].long()
        pred = model(seq[:, :-1]).argmax(-1)                              # pred[:, j] guesses seq[:, j+1]
        # Only targets seq[:, t] with t >= 2 (prediction index j = t-1 >= 1) follow from the inputs.
        acc = accuracy(pred[:, 1:], seq[:, 2:])
    tensors = {"loss": torch.tensor(losses, dtype=torch.float32), "eval_accuracy": acc}
    tensors.update({"final." + k: v for k, v in model.state_dict().items()})
    save(tensors, out, "gpt_result.safetensors")
    return losses, acc.item(), seconds


README = """\
# Training fixtures

PyTorch {torch} (scikit-learn {sklearn}) reference runs for kiln's end-to-end training tests, written by
`tools/train_fixtures.py`. Regenerate (needs scikit-learn, which ships the digits data):

    /tmp/pt/bin/python tools/train_fixtures.py test/train_fixtures

Everything is float32 and single-threaded (`torch.set_num_threads(1)`, deterministic algorithms).
Each run's initial weights and batches are in the files, so a run is fully determined by them.
`loss[i]` is the mean cross-entropy of step i's batch, computed before step i's update.

## digits.safetensors

sklearn `load_digits()` (1797 8x8 images, pixel values 0..16). Split by
`torch.randperm(1797, generator=torch.Generator().manual_seed(0))`: first 1437 train, last 360 test.

| name | dtype | shape | |
|---|---|---|---|
| train_x | uint8 | [1437, 64] | pixels 0..16; models take `x.float() / 16` |
| train_y | int64 | [1437] | class 0..9 |
| test_x | uint8 | [360, 64] | |
| test_y | int64 | [360] | |
| perm | int64 | [{epochs}, 1437] | epoch e visits train rows in order `perm[e]` |

`perm` rows are `torch.randperm(1437, generator=g)` drawn one after another from one generator
seeded 1. Step s of epoch e uses rows `perm[e, 64*s : 64*s+64]`; 23 batches per epoch, the last
with 29 samples, {steps} steps in all. Same batches for the MLP and the CNN.

## MLP: mlp_init.safetensors, mlp_result.safetensors

`nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))`, default init after
`torch.manual_seed(2)`. `torch.optim.AdamW(lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
weight_decay=1e-2)` (amsgrad off, single-tensor CPU implementation), {epochs} epochs.

- mlp_init: `0.weight` [64, 64], `0.bias` [64], `2.weight` [10, 64], `2.bias` [10] (float32)
- mlp_result: `loss` float32 [{steps}], `test_accuracy` float32 [1] (fraction of the 360 test
  images whose argmax is right, after training), `final.<name>` for each of the four above.

## CNN: cnn_init.safetensors, cnn_result.safetensors

    x.view(-1,1,8,8) -> relu(conv1) -> max_pool2d(2) -> relu(conv2) -> max_pool2d(2) -> flatten(1) -> fc
    conv1 = Conv2d(1, 8, 3, padding=1); conv2 = Conv2d(8, 16, 3, padding=1); fc = Linear(64, 10)

Default init after `torch.manual_seed(3)`. Each step: forward, backward,
`clip_grad_norm_(model.parameters(), 1.0)` (L2 over all parameters), `SGD(lr=0.05,
momentum=0.9, dampening=0, nesterov=True, weight_decay=1e-4).step()`, then
`CosineAnnealingLR(T_max={steps}, eta_min=0).step()`; so step i uses
lr = 0.05 * (1 + cos(pi * i / {steps})) / 2 (up to the scheduler's recursive float64 update).

- cnn_init: `conv1.weight` [8, 1, 3, 3], `conv1.bias` [8], `conv2.weight` [16, 8, 3, 3],
  `conv2.bias` [16], `fc.weight` [10, 64], `fc.bias` [10]
- cnn_result: `loss` float32 [{steps}], `lr` float64 [{steps}] (lr used by step i),
  `grad_norm` float32 [{steps}] (clip_grad_norm_'s returned total norm, i.e. before clipping),
  `test_accuracy` float32 [1], `final.<name>`.

## GPT: gpt_data.safetensors, gpt_init.safetensors, gpt_result.safetensors

Task: vocab 16, sequences of 33 tokens, `seq[0], seq[1]` uniform in [0, 16),
`seq[t] = (seq[t-1] + seq[t-2]) % 16`. Inputs `seq[:, :32]`, targets `seq[:, 1:]`.
`gpt_data`: `train` uint8 [{gsteps}, {gbatch}, 33] (batch i is `train[i]`; first two tokens from
`torch.randint(0, 16, ({gsteps}, {gbatch}, 2), generator=Generator().manual_seed(5))`), `eval` uint8
[{geval}, 33] (same, `randint(0, 16, ({geval}, 2))` with a generator seeded 6).

Model (`Gpt` in the script), d=32, 2 heads of 16, 2 blocks, default init after
`torch.manual_seed(4)`:

    x = tok(ids) + pos(arange(T))                       tok = Embedding(16, 32), pos = Embedding(32, 32)
    for each block in blocks.0, blocks.1:
        q, k, v = qkv(ln1(x)).split(32, -1)             ln1 = LayerNorm(32), qkv = Linear(32, 96)
        each -> view(B, T, 2, 16).transpose(1, 2)       [B, 2, T, 16]
        a = scaled_dot_product_attention(q, k, v, is_causal=True)   (scale 1/sqrt(16))
        h = x + proj(a.transpose(1, 2).reshape(B, T, 32))           proj = Linear(32, 32)
        x = h + fc2(gelu(fc1(ln2(h))))                  ln2 = LayerNorm(32), fc1 = Linear(32, 128),
                                                        fc2 = Linear(128, 32), exact erf gelu
    logits = head(ln_f(x))                              ln_f = LayerNorm(32), head = Linear(32, 16, bias=False)

LayerNorms have eps=1e-5 and affine weight/bias. Loss: `cross_entropy(logits.reshape(-1, 16),
targets.reshape(-1))` (mean over all B*32 positions). `AdamW(lr=3e-3, betas=(0.9, 0.98), eps=1e-8,
weight_decay=0.1)` on all parameters (LayerNorm and embeddings included), {gsteps} steps of batch {gbatch}.

- gpt_init: the state_dict (`tok.weight`, `pos.weight`, `blocks.N.{{ln1,ln2}}.{{weight,bias}}`,
  `blocks.N.{{qkv,proj,fc1,fc2}}.{{weight,bias}}`, `ln_f.weight`, `ln_f.bias`, `head.weight`)
- gpt_result: `loss` float32 [{gsteps}], `eval_accuracy` float32 [1], `final.<name>`.

`eval_accuracy`: with `pred = logits(eval[:, :32]).argmax(-1)` ([64, 32]; `pred[:, j]` guesses
`eval[:, j+1]`), the fraction of `pred[:, 1:] == eval[:, 2:]`, i.e. prediction positions j = 1..31
(targets `seq[t]`, t = 2..32), 64 x 31 = 1984 tokens. Position j = 0 (target `seq[1]`, random) is left out.

## Results (PyTorch, eager, 1 thread; times for reference only)

| run | first loss | last loss | accuracy | training time |
|---|---|---|---|---|
{rows}
"""


def main(out):
    import sklearn
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.set_default_dtype(torch.float32)
    os.makedirs(out, exist_ok=True)

    data = load_digits_split()
    save(data, out, "digits.safetensors")
    rows = []

    torch.manual_seed(2)
    mlp = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    save(mlp.state_dict(), out, "mlp_init.safetensors")
    opt = torch.optim.AdamW(mlp.parameters(), lr=1e-2, weight_decay=1e-2)
    log, acc, secs = train_digits(mlp, data, opt)
    save(result(mlp, log, acc), out, "mlp_result.safetensors")
    rows.append(("MLP (digits)", log["loss"], acc.item(), secs))

    torch.manual_seed(3)
    cnn = Cnn()
    save(cnn.state_dict(), out, "cnn_init.safetensors")
    opt = torch.optim.SGD(cnn.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=EPOCHS * math.ceil(N_TRAIN / BATCH))
    log, acc, secs = train_digits(cnn, data, opt, sched, clip=1.0)
    save(result(cnn, log, acc, extra=("lr", "grad_norm")), out, "cnn_result.safetensors")
    rows.append(("CNN (digits)", log["loss"], acc.item(), secs))

    losses, acc, secs = train_gpt(out)
    rows.append(("GPT (sequences)", losses, acc, secs))

    table = "\n".join("| %s | %.4f | %.4f | %.4f | %.2f s |" % (name, l[0], l[-1], a, s) for name, l, a, s in rows)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(README.format(torch=torch.__version__.split("+")[0], sklearn=sklearn.__version__, epochs=EPOCHS,
                              steps=EPOCHS * math.ceil(N_TRAIN / BATCH), gsteps=GPT_STEPS,
                              gbatch=GPT_BATCH, geval=GPT_EVAL, rows=table))
    for name, l, a, s in rows:
        print("%-16s loss %.4f -> %.4f  accuracy %.4f  %.2f s" % (name, l[0], l[-1], a, s))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: train_fixtures.py OUT")
    main(sys.argv[1])
