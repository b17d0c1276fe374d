// kiln/frontend/grad_mode.cpp — the per-thread grad and inference modes (frontend/grad_mode.h).
#include "frontend/grad_mode.h"

namespace kiln {

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_inference = false;
thread_local bool t_tracing_for_grad = false;
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }

AutoGradMode::AutoGradMode(bool enabled) : prev_(t_grad_enabled) { t_grad_enabled = enabled; }
AutoGradMode::~AutoGradMode() { t_grad_enabled = prev_; }

InferenceMode::InferenceMode(bool enabled) : AutoGradMode(enabled ? false : t_grad_enabled), prev_inference_(t_inference) {
  t_inference = enabled || t_inference;
}
InferenceMode::~InferenceMode() { t_inference = prev_inference_; }
bool InferenceMode::is_enabled() { return t_inference; }

bool is_grad_enabled() { return t_grad_enabled; }

TracingForGrad::TracingForGrad() : prev_(t_tracing_for_grad) { t_tracing_for_grad = true; }
TracingForGrad::~TracingForGrad() { t_tracing_for_grad = prev_; }
bool TracingForGrad::is_enabled() { return t_tracing_for_grad; }
bool TracingForGrad::stops_gradients() { return t_tracing_for_grad && !t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }

}  // namespace kiln
