# kiln/tools/opdb_helpers.py — PyTorch steps the op database's expressions call as h.<name>.
#
# Entries whose PyTorch spelling is more than one expression (running statistics updated in
# place, the model tests) name a function here; tools/opdb_golden.py makes this module `h`.
# Each mirrors the kiln function of the same entry in test/test_support/opdb_*.cpp.
import torch
import torch.nn.attention
import torch.nn.functional as F


def batch_norm_train(x, w, b, rm, rv, momentum, eps):
    rm, rv = rm.clone(), rv.clone()
    return F.batch_norm(x, rm, rv, w, b, True, momentum, eps), rm, rv


def native_batch_norm_train(x, w, b, rm, rv, momentum, eps):
    rm, rv = rm.clone(), rv.clone()
    return (*torch.native_batch_norm(x, w, b, rm, rv, True, momentum, eps), rm, rv)


def instance_norm_train(x, rm, rv, momentum, eps):
    rm, rv = rm.clone(), rv.clone()
    return F.instance_norm(x, rm, rv, None, None, True, momentum, eps), rm, rv


# ---- models (test/test_support/opdb_models.cpp) ----

def resnet_block(x, w1, g1, b1, m1, v1, w2, g2, b2, m2, v2):
    y = F.relu(F.batch_norm(F.conv2d(x, w1, None, 1, 1), m1, v1, g1, b1, False, 0.1, 1e-5))
    y = F.batch_norm(F.conv2d(y, w2, None, 1, 1), m2, v2, g2, b2, False, 0.1, 1e-5)
    return F.max_pool2d(F.relu(y + x), [2, 2])


def transformer_block(x, ln1w, ln1b, wqkv, bqkv, wo, bo, ln2w, ln2b, w1, b1, w2, b2):
    B, T, D = x.shape
    H = 2
    h = F.layer_norm(x, [D], ln1w, ln1b)
    qkv = F.linear(h, wqkv, bqkv).reshape(B, T, 3, H, D // H).permute(2, 0, 3, 1, 4)
    a = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
    y = x + F.linear(a.transpose(1, 2).reshape(B, T, D), wo, bo)
    return y + F.linear(F.gelu(F.linear(F.layer_norm(y, [D], ln2w, ln2b), w1, b1)), w2, b2)


def text_classifier(tokens, table, w1, b1, w2, b2):
    e = F.embedding(tokens, table).mean(1)
    h = F.relu(F.linear(F.layer_norm(e, [e.shape[-1]]), w1, b1))
    return torch.log_softmax(F.linear(h, w2, b2), -1)


def sdpa_backward(g, q, k, v, attn_mask=None, is_causal=False, scale=None):
    # The gradients of query, key and value (kiln's scaled_dot_product_attention_backward), by
    # autograd through torch's sdpa, of the batch dims q, k and v broadcast to (as kiln's node
    # gives them), and differentiable again (the golden gradients differentiate them).
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    q, k, v = (t if t.requires_grad else t.detach().requires_grad_() for t in (q, k, v))
    q, k, v = (t.expand(*batch, *t.shape[-2:]) for t in (q, k, v))
    # The math kernel: the cpu's flash kernel has no second derivative.
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=scale)
        return torch.autograd.grad(out, (q, k, v), g, create_graph=True)
