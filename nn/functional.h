// kiln/nn/functional.h — kiln::nn::functional, as torch::nn::functional: the stateless forms of
// the layers. They are kiln's own ops (frontend/), named here so that code written against
// `namespace F = torch::nn::functional;` ports with a namespace change.
#pragma once

#include "frontend/ops.h"
#include "frontend/ops_activation.h"
#include "frontend/ops_attention.h"
#include "frontend/ops_conv.h"
#include "frontend/ops_dropout.h"
#include "frontend/ops_linear.h"
#include "frontend/ops_norm.h"
#include "frontend/ops_pool.h"
#include "frontend/ops_softmax.h"

namespace kiln::nn::functional {

using kiln::batch_norm;
using kiln::binary_cross_entropy;
using kiln::binary_cross_entropy_with_logits;
using kiln::cosine_embedding_loss;
using kiln::ctc_loss;
using kiln::gaussian_nll_loss;
using kiln::hinge_embedding_loss;
using kiln::huber_loss;
using kiln::kl_div;
using kiln::l1_loss;
using kiln::margin_ranking_loss;
using kiln::mse_loss;
using kiln::multi_margin_loss;
using kiln::multilabel_margin_loss;
using kiln::multilabel_soft_margin_loss;
using kiln::nll_loss;
using kiln::poisson_nll_loss;
using kiln::smooth_l1_loss;
using kiln::soft_margin_loss;
using kiln::triplet_margin_loss;
using kiln::conv1d;
using kiln::conv2d;
using kiln::cross_entropy;
using kiln::dropout;
using kiln::dropout1d;
using kiln::dropout2d;
using kiln::dropout3d;
using kiln::elu;
using kiln::embedding;
using kiln::gelu;
using kiln::group_norm;
using kiln::layer_norm;
using kiln::leaky_relu;
using kiln::linear;
using kiln::log_softmax;
using kiln::celu;
using kiln::glu;
using kiln::hardshrink;
using kiln::hardsigmoid;
using kiln::hardswish;
using kiln::hardtanh;
using kiln::normalize;
using kiln::prelu;
using kiln::relu6;
using kiln::rrelu;
using kiln::selu;
using kiln::softmin;
using kiln::softshrink;
using kiln::softsign;
using kiln::tanhshrink;
using kiln::threshold;
// F.logsigmoid
inline Tensor logsigmoid(const Tensor& x) { return kiln::log_sigmoid(x); }
using kiln::mish;
using kiln::relu;
using kiln::rms_norm;
using kiln::silu;
using kiln::softmax;
using kiln::softplus;

}  // namespace kiln::nn::functional
