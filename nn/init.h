// kiln/nn/init.h — parameter initialization, as torch::nn::init: each fills a tensor in place
// (without recording history) from kiln's seedable generator and returns it. The formulas are
// PyTorch's, so a fresh layer's parameters have PyTorch's distributions (not its exact draws:
// kiln's generator is its own).
#pragma once

#include "frontend/tensor.h"

#include <string>
#include <utility>

namespace kiln::nn::init {

// "linear", "conv1d/2d/3d", "sigmoid": 1; "tanh": 5/3; "relu": sqrt(2); "leaky_relu":
// sqrt(2 / (1 + slope^2)) (slope `param`, default 0.01); "selu": 3/4.
double calculate_gain(const std::string& nonlinearity, double param = 0.01);
// fan_in = size(1) * receptive field, fan_out = size(0) * receptive field; at least 2 dims.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);

Tensor uniform_(Tensor t, double a = 0.0, double b = 1.0);
Tensor normal_(Tensor t, double mean = 0.0, double std = 1.0);
Tensor constant_(Tensor t, double value);
Tensor ones_(Tensor t);
Tensor zeros_(Tensor t);
Tensor eye_(Tensor t);  // 2-D

Tensor xavier_uniform_(Tensor t, double gain = 1.0);
Tensor xavier_normal_(Tensor t, double gain = 1.0);
// mode "fan_in" or "fan_out"; a: the negative slope of the leaky_relu that follows.
Tensor kaiming_uniform_(Tensor t, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu");
Tensor kaiming_normal_(Tensor t, double a = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu");
// A normal(mean, std) truncated to [a, b], drawn by the inverse CDF as PyTorch draws it.
Tensor trunc_normal_(Tensor t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0);

}  // namespace kiln::nn::init
