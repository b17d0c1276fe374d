// kiln/frontend/autograd_inplace.cpp — history of in-place writes and device moves.
//
// An in-place op (x.add_(y), x.copy_(v), x.fill_(c)) computes the new value out of place with
// history (add(x, y) reads x's old history), then Tensor::assign_ writes it into x. Here that
// write becomes x's history:
//   - x a plain tensor: x := CopyBackwards(value), the identity into what was written, and
//     zeros into x's old contents when the value was not computed from them (copy_, fill_);
//   - x a view of a base B that requires grad (or the value does): B's contents changed, so
//     B := CopySlices(B_old, value), whose backward gives the value the gradient of the view's
//     region and B_old the rest (zeros over the region); x := a view of the new B again.
// The storage's version counts the write, so a tensor saved before it refuses to be used.
#include "frontend/autograd_inplace.h"

#include "base/error.h"
#include "frontend/autograd_meta.h"
#include "frontend/autograd_node.h"
#include "frontend/dispatch.h"
#include "frontend/grad_mode.h"
#include "frontend/ops_factory.h"

namespace kiln::autograd {

namespace {

// Where a tensor's elements sit in its storage: enough to lay a gradient out as the tensor is
// (kept by value: a node holding the base itself would be a reference cycle through its history).
struct Layout {
  size_t nbytes = 0;
  ScalarType dtype = ScalarType::Float;
  Device device;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  static Layout of(const Tensor& t) {
    const TensorImpl& i = *t.impl();
    return {i.storage()->nbytes(), i.dtype(), i.device(), i.sizes().vec(), i.strides().vec(), i.storage_offset()};
  }
  // A fresh zeroed storage of that size, seen with that geometry.
  Tensor zeros() const {
    Storage s = make_intrusive<StorageImpl>(nbytes, device);
    Tensor(make_intrusive<TensorImpl>(s, ScalarType::UInt8, std::vector<int64_t>{static_cast<int64_t>(nbytes)})).fill_(0);
    return Tensor(make_intrusive<TensorImpl>(s, dtype, sizes, strides, offset));
  }
};

Tensor view_in(const Tensor& layout, const ViewInfo& v) {
  const TensorImpl& i = *layout.impl();
  return Tensor(make_intrusive<TensorImpl>(i.storage(), i.dtype(), v.sizes, v.strides, v.storage_offset));
}

// Whether the history behind edge `from` reaches edge `to` within `depth` nodes.
bool reads_within(const Edge& from, const Edge& to, int depth) {
  if (!from.valid() || depth == 0) return false;
  for (const Edge& e : from.fn->next_edges())
    if ((e.fn == to.fn && e.input_nr == to.input_nr) || reads_within(e, to, depth - 1)) return true;
  return false;
}

}  // namespace

void check_inplace(const Tensor& self) {
  if (!GradMode::is_enabled()) return;
  const AutogradMeta* m = meta_of(self);
  const TensorImpl* base = m && m->view ? m->view->base.impl() : self.impl()->view_base();
  if (m && m->requires_grad && !m->grad_fn && !base)
    fail("inplace", "a leaf Variable that requires grad is being used in an in-place operation.");
  if (base) {
    const auto* b = static_cast<const AutogradMeta*>(base->autograd_meta());
    if (b && b->requires_grad && !b->grad_fn)
      fail("inplace", "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

void after_inplace(const Tensor& self, const Tensor& value) {
  if (const Storage& s = self.impl()->storage()) s->bump_version();
  if (!GradMode::is_enabled()) return;
  AutogradMeta* m = meta_of(self);
  const bool value_grad = value.impl()->requires_grad();
  if (!value_grad && !(m && m->requires_grad)) return;
  const TensorMeta self_meta = TensorMeta::of(self);

  // A view made by an eager view op when no input required grad knows its base only through
  // the TensorImpl (base/tensor_impl.h); the write gives that base history too, as in PyTorch.
  std::shared_ptr<ViewInfo> view = m ? m->view : nullptr;
  if (!view && self.impl()->view_base()) {
    const TensorImpl& i = *self.impl();
    view = std::make_shared<ViewInfo>(ViewInfo{Tensor(IntrusivePtr<TensorImpl>(i.view_base())), i.sizes().vec(),
                                               i.strides().vec(), i.storage_offset()});
  }
  if (view) {
    const Tensor& base = view->base;
    // The base's new history: its old one outside the view's region, the value inside.
    const Layout layout = Layout::of(base);
    const ViewInfo where{Tensor(), view->sizes, view->strides, view->storage_offset};
    auto copy_slices = std::make_shared<FunctionNode>("CopySlices", [layout, where](std::vector<Tensor> grads) {
      if (GradMode::is_enabled())
        fail("backward", "a second derivative through an in-place write into a view is not supported; write out of "
                         "place (torch.where, index_put, slice_scatter) to differentiate twice");
      Tensor laid = layout.zeros();
      laid.copy_(grads.at(0));
      Tensor region = view_in(laid, where);
      Tensor g_value = region.clone();
      region.fill_(0);
      return std::vector<Tensor>{laid.clone(), g_value};
    });
    copy_slices->mutable_next_edges() = {gradient_edge(base), gradient_edge(value)};
    copy_slices->set_output_meta({TensorMeta::of(base)});
    set_history(base, copy_slices, 0);
    // The view reads the new base: its gradient lands in the base's layout at the view's place.
    auto as_view = std::make_shared<FunctionNode>("AsStridedBackward0", [layout, where](std::vector<Tensor> grads) {
      Tensor laid = layout.zeros();
      view_in(laid, where).copy_(grads.at(0));
      return std::vector<Tensor>{laid.clone()};
    });
    as_view->mutable_next_edges() = {gradient_edge(base)};
    as_view->set_output_meta({self_meta});
    set_history(self, as_view, 0);
    return;
  }
  // The old contents, when the value was not computed from them (copy_ of another tensor,
  // fill_, a random draw): overwritten, they get a gradient of zeros, as PyTorch's CopyBackwards
  // gives them. Their history still leads to inputs, whose .grad is then zeros rather than
  // undefined (`y = x * 2; y.fill_(3); y.sum().backward()` gives x.grad zeros), which an
  // optimizer's weight decay or momentum treats differently. An in-place op's value reads them
  // within two steps (add_: add(self, other); mul_: mul(clone(self), other)), and its nodes pass
  // their gradient on: no zeros to add.
  const Edge old = gradient_edge(self);
  const Edge from = gradient_edge(value);
  if (!old.valid() || reads_within(from, old, 2)) {
    auto copy = std::make_shared<FunctionNode>("CopyBackwards",
                                               [](std::vector<Tensor> grads) { return std::vector<Tensor>{grads.at(0)}; });
    copy->mutable_next_edges() = {from};
    copy->set_output_meta({self_meta});
    set_history(self, copy, 0);
    return;
  }
  auto copy = std::make_shared<FunctionNode>("CopyBackwards", [](std::vector<Tensor> grads) {
    return std::vector<Tensor>{grads.at(0), zeros_like(grads.at(0))};
  });
  copy->mutable_next_edges() = {from, old};
  copy->set_output_meta({self_meta});
  set_history(self, copy, 0);
}

Tensor record_device_move(const Tensor& src, const Tensor& moved) {
  if (!GradMode::is_enabled() || !src.impl()->requires_grad()) return moved;
  const Device back = src.device();
  auto node = std::make_shared<FunctionNode>("ToCopyBackward0", [back](std::vector<Tensor> grads) {
    return std::vector<Tensor>{grads.at(0).to(back)};
  });
  node->mutable_next_edges() = {gradient_edge(src)};
  node->set_output_meta({TensorMeta::of(moved)});
  set_history(moved, node, 0);
  return moved;
}

Tensor detach_traced(const Tensor& t) { return dispatch1(ir::OpKind::detach, {t}); }

}  // namespace kiln::autograd
