// kiln/frontend/grad_mode.h — whether ops record autograd history on this thread.
//
// As libtorch's: GradMode is on by default; NoGradGuard turns it off for a scope (ops run, their
// outputs do not require grad), AutoGradMode sets it to a given value for a scope, and
// InferenceMode turns it off too and is what a serving loop uses. The state is per thread.
#pragma once

namespace kiln {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Sets grad mode for a scope and restores the previous value.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled);
  ~AutoGradMode();
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

// No autograd history for the scope (torch.no_grad()).
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

// torch.inference_mode(): no history for the scope; `enabled` false makes it a no-op scope.
class InferenceMode : public AutoGradMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  static bool is_enabled();

 private:
  bool prev_inference_;
};

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// While a function transform traces a function to differentiate it (frontend/function_transforms.cpp):
// an op with two formulations of one value records the one whose derivative is PyTorch's, as it
// does eagerly for inputs that require grad (max(x, dim) reads its values at its indices, so that
// the gradient goes to the one element the index names). The function is traced with grad mode
// on; a NoGradGuard inside it stops gradients where it stands (stops_gradients()).
class TracingForGrad {
 public:
  TracingForGrad();
  ~TracingForGrad();
  TracingForGrad(const TracingForGrad&) = delete;
  TracingForGrad& operator=(const TracingForGrad&) = delete;
  static bool is_enabled();
  // Tracing for grad under NoGradGuard (or InferenceMode): as in PyTorch, what the ops compute
  // has no gradient (the tracer records a detach of each floating result), and a tensor written
  // in place keeps its place for the gradient (Tensor::copy_ records no_grad_copy).
  static bool stops_gradients();

 private:
  bool prev_;
};

}  // namespace kiln
