// kiln/test/test_io_files.cpp — safetensors, .npy and .npz files exchanged with real PyTorch
// and NumPy through committed fixtures (test/io_fixtures, written by tools/io_fixtures.py):
//   - files PyTorch and NumPy wrote load to the values they recorded;
//   - the files kiln writes are byte for byte the ones PyTorch and NumPy loaded when the
//     fixtures were made, to the values recorded then;
//   - truncated, corrupt and inconsistent files are clear errors naming the file and tensor,
//     and a failed write leaves the old file whole.
// With KILN_IO_EMIT=<dir>, KilnWritten.Emit writes kiln's files there for the tool.
#include "frontend/from_blob.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "kiln/kiln.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kiln {
namespace {

namespace fs = std::filesystem;

fs::path fixtures() { return fs::path(KILN_TEST_DATA_DIR) / "io_fixtures"; }

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void spit(const fs::path& p, std::string_view bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln_io_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// The values file the tool writes: "<file> <name> <dtype> <d0,d1,..> : v0 v1 ..." per tensor.
struct Recorded {
  ScalarType dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> values;
};
std::map<std::string, Recorded> read_values(const fs::path& p, const std::string& file) {
  std::map<std::string, Recorded> out;
  std::ifstream f(p);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string which, name, dtype, shape, colon;
    in >> which >> name >> dtype >> shape >> colon;
    if (which != file) continue;
    Recorded r;
    r.dtype = *dtype_from_short_name(dtype);
    std::stringstream ss(shape.substr(1, shape.size() - 2));
    for (std::string d; std::getline(ss, d, ',');) r.shape.push_back(std::stoll(d));
    for (std::string v; in >> v;) r.values.push_back(v);
    out[name] = r;
  }
  return out;
}

// t equals what the tool recorded: dtype, shape and every value exactly.
void expect_recorded(const Tensor& t, const Recorded& r, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(t.dtype(), r.dtype);
  EXPECT_EQ(t.sizes().vec(), r.shape);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(r.values.size()));
  if (is_floating_point(t.dtype())) {
    const std::vector<double> got = t.to(kDouble).to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = std::stod(r.values[i]);
      EXPECT_TRUE(got[i] == want || (std::isnan(got[i]) && std::isnan(want))) << i << ": " << got[i] << " vs " << want;
    }
  } else {
    const std::vector<int64_t> got = t.to(kLong).to_vector<int64_t>();
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], std::stoll(r.values[i])) << i;
  }
}

void expect_all_recorded(const std::map<std::string, Tensor>& got, const std::map<std::string, Recorded>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, r] : want) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << name;
    expect_recorded(it->second, r, name);
  }
}

// What kiln writes for the fixtures: every dtype, a scalar, an empty and a transposed tensor.
std::map<std::string, Tensor> kiln_tensors() {
  std::map<std::string, Tensor> t;
  t["a.f32"] = arange(6, kFloat).reshape({2, 3}) * 0.5 - 1;
  t["b.f64"] = test::make<double>({1.0 / 3, -2.5, 1e300});
  t["c.f16"] = test::make<float>({0.5f, -1.25f, 65504.0f, 6e-5f}, {2, 2}).to(kHalf);
  t["d.bf16"] = test::make<float>({1.5f, -3.0f, 1e30f}).to(kBFloat16);
  t["e.i64"] = test::make<int64_t>({1, -2, int64_t{1} << 40, -(int64_t{1} << 62)}, {2, 2});
  t["f.i32"] = test::make<int32_t>({7, -2147483647 - 1, 2147483647});
  t["g.i16"] = test::make<int16_t>({-32768, 5});
  t["h.i8"] = test::make<int8_t>({-128, 127, 0});
  t["i.u8"] = test::make<uint8_t>({0, 255, 17});
  t["j.bool"] = test::make<bool>({true, false, true});
  t["k.scalar"] = full({}, 3.25, kFloat);
  t["l.empty"] = zeros({0, 3}, kFloat);
  t["m.transposed"] = t["a.f32"].t();
  return t;
}

const std::map<std::string, std::string> kMetadata = {{"format", "pt"}, {"producer", "kiln"}};

TEST(KilnWritten, Emit) {
  const char* dir = std::getenv("KILN_IO_EMIT");
  if (!dir) GTEST_SKIP() << "set KILN_IO_EMIT=<dir> to write kiln's files for tools/io_fixtures.py";
  const std::map<std::string, Tensor> t = kiln_tensors();
  save_safetensors(t, std::string(dir) + "/kiln_written.safetensors", kMetadata);
  std::map<std::string, Tensor> numpy = t;
  numpy.erase("d.bf16");  // NumPy has no bfloat16
  save_npz(numpy, std::string(dir) + "/kiln_written.npz");
  save_npy(t.at("m.transposed"), std::string(dir) + "/kiln_written.npy");
}

// PyTorch's safetensors.torch.save_file wrote it.
TEST(TorchWritten, SafetensorsLoad) {
  const fs::path file = fixtures() / "torch_written.safetensors";
  expect_all_recorded(load_safetensors(file), read_values(fixtures() / "torch_written.txt", "torch_written.safetensors"));
  EXPECT_EQ(load_safetensors_metadata(file), (std::map<std::string, std::string>{{"format", "pt"}}));
}

// numpy.save (C and Fortran order, big-endian), numpy.savez and numpy.savez_compressed wrote them.
TEST(NumpyWritten, NpyAndNpzLoad) {
  const fs::path values = fixtures() / "numpy_written.txt";
  for (const char* f : {"c_order.npy", "fortran_order.npy", "big_endian.npy", "bools.npy", "scalar.npy"}) {
    SCOPED_TRACE(f);
    const auto want = read_values(values, f);
    ASSERT_EQ(want.size(), 1u);
    expect_recorded(load_npy(fixtures() / f), want.begin()->second, f);
  }
  for (const char* f : {"stored.npz", "compressed.npz"}) {
    SCOPED_TRACE(f);
    expect_all_recorded(load_npz(fixtures() / f), read_values(values, f));
  }
}

// kiln writes exactly the bytes PyTorch and NumPy loaded when the fixtures were made, and they
// read back the values kiln meant.
TEST(KilnWritten, PyTorchAndNumpyLoadWhatKilnWrites) {
  const std::map<std::string, Tensor> t = kiln_tensors();
  TempDir dir;
  save_safetensors(t, dir.path / "k.safetensors", kMetadata);
  const char* rerun = "kiln's bytes changed: rerun tools/io_fixtures.py so that PyTorch and NumPy read them again";
  EXPECT_TRUE(slurp(dir.path / "k.safetensors") == slurp(fixtures() / "kiln_written.safetensors")) << rerun;
  std::map<std::string, Tensor> numpy = t;
  numpy.erase("d.bf16");
  save_npz(numpy, dir.path / "k.npz");
  EXPECT_TRUE(slurp(dir.path / "k.npz") == slurp(fixtures() / "kiln_written.npz")) << rerun;
  save_npy(t.at("m.transposed"), dir.path / "k.npy");
  EXPECT_TRUE(slurp(dir.path / "k.npy") == slurp(fixtures() / "kiln_written.npy")) << rerun;

  const fs::path read = fixtures() / "read_by_torch.txt";
  expect_all_recorded(t, read_values(read, "kiln_written.safetensors"));
  expect_all_recorded(numpy, read_values(read, "kiln_written.npz"));
  expect_recorded(t.at("m.transposed"), read_values(read, "kiln_written.npy").begin()->second, "npy");
}

TEST(KilnWritten, RoundTripsOnItsOwn) {
  TempDir dir;
  const std::map<std::string, Tensor> t = kiln_tensors();
  save_safetensors(t, dir.path / "r.safetensors");
  const std::map<std::string, Tensor> back = load_safetensors(dir.path / "r.safetensors");
  ASSERT_EQ(back.size(), t.size());
  for (const auto& [name, v] : t) {
    SCOPED_TRACE(name);
    EXPECT_EQ(back.at(name).dtype(), v.dtype());
    EXPECT_EQ(back.at(name).sizes().vec(), v.sizes().vec());
    EXPECT_TRUE(equal(back.at(name), v));
  }
  EXPECT_TRUE(load_safetensors_metadata(dir.path / "r.safetensors").empty());
  // A requires-grad parameter saves its values; the loaded tensor is a plain one.
  Tensor w = ones({2, 2}).requires_grad_();
  save_safetensors({{"w", w}}, dir.path / "w.safetensors");
  EXPECT_FALSE(load_safetensors(dir.path / "w.safetensors").at("w").requires_grad());
}

// A header of `json` (padded as written) followed by `data`.
std::string safetensors_bytes(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json + data;
}

void expect_load_error(const fs::path& p, const std::string& needle) {
  try {
    load_safetensors(p);
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[load_safetensors]"), std::string::npos) << e.what();
  }
}

TEST(SafetensorsErrors, TruncatedAndInconsistentFilesNameTheTensor) {
  TempDir dir;
  const std::string good = slurp(fixtures() / "torch_written.safetensors");
  const fs::path p = dir.path / "bad.safetensors";
  spit(p, good.substr(0, good.size() - 3));
  expect_load_error(p, "(truncated?)");
  spit(p, good.substr(0, 5));
  expect_load_error(p, "too short");
  spit(p, good.substr(0, 40));
  expect_load_error(p, "runs past the end");
  const std::string four(16, '\0');
  spit(p, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", four));
  expect_load_error(p, "tensor 'w' (F32 [2, 2]) needs 16 bytes");
  spit(p, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"v":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", four));
  expect_load_error(p, "an overlap");
  spit(p, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", four));
  expect_load_error(p, "tensor 'w' starts at byte 8 of the data, expected 0 (a gap");
  spit(p, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", four));
  expect_load_error(p, "the data section holds 16 bytes, but the tensors cover 8");
  spit(p, safetensors_bytes(R"({"w":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0')));
  expect_load_error(p, "tensor 'w' has dtype C64");
  spit(p, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", std::string(4, '\0')));
  expect_load_error(p, "tensor 'w' has a dimension of -1");
  spit(p, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1]}})", std::string(4, '\0')));
  expect_load_error(p, "tensor 'w' lacks one of");
  spit(p, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_off)", std::string(4, '\0')));
  expect_load_error(p, "not valid JSON");
  spit(p, safetensors_bytes(R"({"b":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})", std::string(1, '\x07')));
  expect_load_error(p, "tensor 'b' (BOOL) holds byte 7");
  std::string huge(8, '\xff');
  spit(p, huge + "{}");
  expect_load_error(p, "past the format's limit");
  expect_load_error(dir.path / "missing.safetensors", "cannot read");
}

// In memory (an exported program's weights): viewed in place where aligned, copied where not,
// with the file reader's checks.
TEST(SafetensorsBytes, ViewsAlignedTensorsInPlaceAndCopiesTheRest) {
  const Tensor a = test::mk<float>({1, 2, 3}), d = test::mk<double>({0.5, -2.0});
  const std::string bytes = safetensors_bytes(std::map<std::string, Tensor>{{"a", a}, {"d", d}});
  auto owner = std::make_shared<const std::string>(std::string(64, '\0') + bytes);  // 64-byte offset, as in a package
  const std::string_view view = std::string_view(*owner).substr(64);
  const std::map<std::string, Tensor> got = view_safetensors_bytes(view, "w", owner);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(equal(got.at("a"), a));
  EXPECT_TRUE(equal(got.at("d"), d));
  auto inside = [&](const Tensor& t) {
    const char* p = static_cast<const char*>(t.data_ptr());
    return p >= view.data() && p < view.data() + view.size();
  };
  // The data starts 8-byte aligned; "a" (12 bytes) first, so "d" sits 4 bytes off an 8-byte
  // boundary: a view of "a", a copy of "d".
  EXPECT_TRUE(inside(got.at("a")));
  EXPECT_FALSE(inside(got.at("d")));
  // One byte further, both are misaligned and copied; equal all the same.
  auto shifted = std::make_shared<const std::string>(std::string(65, '\0') + bytes);
  const std::map<std::string, Tensor> copied = view_safetensors_bytes(std::string_view(*shifted).substr(65), "w", shifted);
  EXPECT_TRUE(equal(copied.at("a"), a));
  EXPECT_TRUE(equal(copied.at("d"), d));
  EXPECT_NE(test::error_of([&] { view_safetensors_bytes(view.substr(0, view.size() - 3), "w", owner); }), "<no error>");
}

TEST(SafetensorsErrors, AFailedWriteLeavesTheOldFileWhole) {
  TempDir dir;
  const fs::path p = dir.path / "ckpt.safetensors";
  save_safetensors({{"w", ones({3})}}, p);
  const std::string before = slurp(p);
  // A traced or undefined tensor fails before anything is renamed over the file.
  EXPECT_THROW(save_safetensors({{"a", ones({2})}, {"b", Tensor()}}, p), Error);
  EXPECT_THROW(save_safetensors({{"__metadata__", ones({2})}}, p), Error);
  EXPECT_EQ(slurp(p), before);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++files;
  EXPECT_EQ(files, 1u) << "a temporary file was left behind";
  // A directory that does not exist is a clear error.
  EXPECT_THROW(save_safetensors({{"w", ones({3})}}, dir.path / "no" / "such.safetensors"), Error);
}

TEST(NpyErrors, BadFilesAreClearErrors) {
  TempDir dir;
  const fs::path p = dir.path / "bad.npy";
  const std::string good = slurp(fixtures() / "c_order.npy");
  spit(p, good.substr(0, good.size() - 1));
  try {
    load_npy(p);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(truncated?)"), std::string::npos) << e.what();
  }
  spit(p, "not numpy at all");
  EXPECT_THROW(load_npy(p), Error);
  std::string complex = good;
  const size_t at = complex.find("<f4");
  ASSERT_NE(at, std::string::npos);
  complex.replace(at, 3, "<c8");
  spit(p, complex);
  try {
    load_npy(p);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dtype '<c8'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(save_npy(ones({2}, kBFloat16), p), Error);
  spit(p, "PK\x03\x04 garbage");
  EXPECT_THROW(load_npz(p), Error);
}

}  // namespace
}  // namespace kiln
