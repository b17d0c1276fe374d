// kiln/io/dlpack.cpp — DLPack export and import (io/dlpack.h).
#include "io/dlpack.h"

#include "base/error.h"
#include "frontend/from_blob.h"

#include <dlpack/dlpack.h>

#include <memory>
#include <optional>
#include <vector>

namespace kiln {

namespace {

// DLPack 0.8 added kDLBool (6); Debian's 0.6 header predates it. PyTorch writes bool with it.
constexpr uint8_t kBoolCode = 6;

DLDataType dl_type(ScalarType t) {
  const uint8_t bits = static_cast<uint8_t>(element_size(t) * 8);
  switch (t) {
    case ScalarType::Bool: return {kBoolCode, 8, 1};
    case ScalarType::UInt8: return {kDLUInt, 8, 1};
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64: return {kDLInt, bits, 1};
    case ScalarType::BFloat16: return {kDLBfloat, 16, 1};
    case ScalarType::Half:
    case ScalarType::Float:
    case ScalarType::Double: return {kDLFloat, bits, 1};
  }
  internal_fail("to_dlpack: dtype {}", static_cast<int>(t));
}

std::optional<ScalarType> scalar_type(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
    case kDLInt:
      if (t.bits == 8) return ScalarType::Int8;
      if (t.bits == 16) return ScalarType::Int16;
      if (t.bits == 32) return ScalarType::Int32;
      if (t.bits == 64) return ScalarType::Int64;
      break;
    case kDLUInt:
      if (t.bits == 8) return ScalarType::UInt8;
      break;
    case kDLFloat:
      if (t.bits == 16) return ScalarType::Half;
      if (t.bits == 32) return ScalarType::Float;
      if (t.bits == 64) return ScalarType::Double;
      break;
    case kDLBfloat:
      if (t.bits == 16) return ScalarType::BFloat16;
      break;
    case kBoolCode:
      if (t.bits == 8) return ScalarType::Bool;
      break;
    default: break;
  }
  return std::nullopt;
}

// What an exported DLManagedTensor owns: the tensor (its memory) and the arrays it points at.
struct Export {
  DLManagedTensor managed{};
  Tensor tensor;
  std::vector<int64_t> shape, strides;
};

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) {
  if (!t.defined()) fail("to_dlpack", "the tensor is undefined");
  if (t.impl()->is_traced())
    fail("to_dlpack", "a traced tensor has no memory to share; call to_dlpack outside compile()");
  auto e = std::make_unique<Export>();
  e->tensor = t;
  e->shape = t.sizes().vec();
  e->strides = t.strides().vec();
  DLTensor& d = e->managed.dl_tensor;
  d.data = t.data_ptr();
  d.device = {t.device().is_cuda() ? kDLCUDA : kDLCPU, t.device().is_cuda() ? t.device().index : 0};
  d.ndim = static_cast<int>(e->shape.size());
  d.dtype = dl_type(t.dtype());
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = [](DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); };
  return &e.release()->managed;
}

Tensor from_dlpack(DLManagedTensor* managed) {
  const std::string_view op = "from_dlpack";
  if (managed == nullptr) fail(op, "the managed tensor is a null pointer");
  const DLTensor& d = managed->dl_tensor;
  Device device;
  if (d.device.device_type == kDLCPU || d.device.device_type == kDLCUDAHost)
    device = Device(DeviceType::CPU);
  else if (d.device.device_type == kDLCUDA)
    device = Device(DeviceType::CUDA, d.device.device_id);
  else
    fail(op, "unsupported device type {} (kiln takes cpu ({}) and cuda ({}))", static_cast<int>(d.device.device_type),
         static_cast<int>(kDLCPU), static_cast<int>(kDLCUDA));
  const std::optional<ScalarType> dtype = scalar_type(d.dtype);
  if (!dtype)
    fail(op, "unsupported dtype: code {}, {} bits, {} lanes (kiln takes one lane of bool, uint8, int8-64, float16, "
             "bfloat16, float32 or float64)",
         static_cast<int>(d.dtype.code), static_cast<int>(d.dtype.bits), static_cast<int>(d.dtype.lanes));
  if (d.ndim < 0 || (d.ndim > 0 && d.shape == nullptr)) fail(op, "ndim {} with no shape", d.ndim);
  const std::vector<int64_t> sizes(d.shape, d.shape + d.ndim);
  const std::vector<int64_t> strides = d.strides ? std::vector<int64_t>(d.strides, d.strides + d.ndim)
                                                 : contiguous_strides(sizes);
  void* data = static_cast<char*>(d.data) + d.byte_offset;
  // from_blob checks before it takes the deleter: when it raises, the caller still owns it.
  return from_blob(data, sizes, strides, [managed](void*) {
    if (managed->deleter) managed->deleter(managed);
  }, TensorOptions(*dtype).device(device));
}

}  // namespace kiln
