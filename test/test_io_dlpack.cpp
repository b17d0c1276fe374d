// kiln/test/test_io_dlpack.cpp — memory kiln does not own: from_blob and DLPack.
//
// A tensor over foreign memory reads and writes it in place (eager ops and compiled functions
// alike), keeps it until its last view goes and then runs the owner's deleter once; DLPack
// export and import round-trip without copies and refuse what they cannot describe.
#include "frontend/from_blob.h"
#include "io/dlpack.h"
#include "kiln/kiln.h"

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace kiln {
namespace {

TEST(FromBlob, ViewsTheCallersMemoryInPlace) {
  std::vector<float> data(6);
  std::iota(data.begin(), data.end(), 0.0f);
  Tensor t = from_blob(data.data(), {2, 3}, kFloat);
  EXPECT_EQ(t.data_ptr(), data.data());
  EXPECT_EQ(t.to_vector<float>(), data);
  t.mul_(2);  // an eager in-place op writes the caller's memory
  EXPECT_EQ(data[5], 10.0f);
  auto f = compile([](const Tensor& x) { return (x + 1).sum(); });
  EXPECT_EQ(f(t).item<float>(), 36.0f);
  // Strided: every other element of a row-major [3, 4] buffer.
  std::vector<double> wide(12);
  std::iota(wide.begin(), wide.end(), 0.0);
  Tensor s = from_blob(wide.data(), {3, 2}, {4, 2}, kDouble);
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_FALSE(s.is_contiguous());
}

TEST(FromBlob, TheDeleterRunsOnceWhenTheLastViewGoes) {
  int deleted = 0;
  float* buffer = new float[4]{1, 2, 3, 4};
  Tensor view;
  {
    Tensor t = from_blob(buffer, {4}, [&](void* p) {
      ++deleted;
      delete[] static_cast<float*>(p);
    });
    view = t.slice(0, 1, 3);
  }
  EXPECT_EQ(deleted, 0) << "a view still uses the memory";
  EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{2, 3}));
  view = Tensor();
  EXPECT_EQ(deleted, 1);
}

TEST(FromBlob, RefusesWhatItCannotDescribe) {
  std::vector<float> data(4);
  EXPECT_THROW(from_blob(data.data(), {-1}, kFloat), Error);
  EXPECT_THROW(from_blob(data.data(), {2, 2}, {2}, kFloat), Error);
  EXPECT_THROW(from_blob(data.data(), {2, 2}, {-1, 1}, kFloat), Error);
  EXPECT_THROW(from_blob(nullptr, {2}, kFloat), Error);
  try {
    from_blob(reinterpret_cast<char*>(data.data()) + 1, {2}, kFloat);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[from_blob]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not aligned to the 4-byte elements"), std::string::npos) << e.what();
  }
  EXPECT_EQ(from_blob(nullptr, {0, 3}, kFloat).numel(), 0);  // an empty tensor needs no memory
}

TEST(DLPack, ExportViewsTheTensorAndKeepsItAlive) {
  Tensor t = arange(12, kFloat).reshape({3, 4}).t();  // non-contiguous
  DLManagedTensor* m = to_dlpack(t);
  const DLTensor& d = m->dl_tensor;
  EXPECT_EQ(d.data, t.data_ptr());
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.shape[0], 4);
  EXPECT_EQ(d.shape[1], 3);
  EXPECT_EQ(d.strides[0], 1);
  EXPECT_EQ(d.strides[1], 4);
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 32);
  EXPECT_EQ(d.dtype.lanes, 1);
  const void* data = t.data_ptr();
  t = Tensor();  // the managed tensor keeps the memory
  EXPECT_EQ(static_cast<const float*>(data)[1], 1.0f);
  m->deleter(m);
}

TEST(DLPack, RoundTripsWithoutACopyForEveryDtype) {
  for (ScalarType type : {kBool, kUInt8, kInt8, kInt16, kInt32, kLong, kHalf, kBFloat16, kFloat, kDouble}) {
    SCOPED_TRACE(dtype_name(type));
    Tensor t = arange(6, kFloat).reshape({2, 3}).to(type);
    Tensor back = from_dlpack(to_dlpack(t));
    EXPECT_EQ(back.dtype(), type);
    EXPECT_EQ(back.sizes().vec(), t.sizes().vec());
    EXPECT_EQ(back.data_ptr(), t.data_ptr());
    EXPECT_TRUE(equal(back, t));
  }
}

// A producer's managed tensor, as another library would hand it over.
struct Producer {
  std::vector<int64_t> shape{2, 2};
  std::vector<int32_t> data{1, 2, 3, 4};
  int deleted = 0;
  DLManagedTensor m{};
  DLManagedTensor* make() {
    m.dl_tensor.data = data.data();
    m.dl_tensor.device = {kDLCPU, 0};
    m.dl_tensor.ndim = 2;
    m.dl_tensor.dtype = {kDLInt, 32, 1};
    m.dl_tensor.shape = shape.data();
    m.dl_tensor.strides = nullptr;  // contiguous
    m.dl_tensor.byte_offset = 0;
    m.manager_ctx = this;
    m.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
    return &m;
  }
};

TEST(DLPack, ImportTakesOwnershipOnlyWhenItSucceeds) {
  Producer p;
  {
    Tensor t = from_dlpack(p.make());
    EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4}));
    t.add_(10);
    EXPECT_EQ(p.data[3], 14);
    EXPECT_EQ(p.deleted, 0);
  }
  EXPECT_EQ(p.deleted, 1);

  Producer bad;
  DLManagedTensor* m = bad.make();
  m->dl_tensor.dtype = {kDLFloat, 32, 4};  // a vector type
  EXPECT_THROW(from_dlpack(m), Error);
  m->dl_tensor.dtype = {kDLInt, 32, 1};
  m->dl_tensor.device = {kDLVulkan, 0};
  try {
    from_dlpack(m);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[from_dlpack] unsupported device type 7"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bad.deleted, 0) << "a refused managed tensor stays the caller's";
  EXPECT_THROW(from_dlpack(nullptr), Error);
  EXPECT_THROW(to_dlpack(Tensor()), Error);
}

}  // namespace
}  // namespace kiln
