// kiln/codegen_cuda/cublaslt.cpp — dlopen-based cuBLASLt loader and the row-major matmul with bias and activation epilogues.
//
// The cuBLASLt entry points kiln uses are declared here as function-pointer types, with the few
// types and constants they need (no CUDA header is needed to build; each value is cited from
// the toolkit's cublasLt.h, cublas_api.h or library_types.h, cuBLAS 13.1.0). Loading happens
// once per process: libcublasLt.so.13 through the loader path, then the fixed toolkit
// locations; the library stays open for the life of the process, as do the per-device handles.
//
// Row-major to column-major: cuBLASLt is column-major, and a row-major m x n matrix C is, in
// the same memory, the column-major n x m matrix C^T with ld = n. So C = A * B is computed as
// C^T = B^T * A^T: cuBLASLt's "A" operand is our B (op(A) = B^T, n x k) and its "B" operand is
// our A (op(B) = A^T, k x m), and D is n x m column-major with ld = n. cuBLASLt's bias has one
// element per row of D (cublasLt.h, CUBLASLT_EPILOGUE_BIAS: "Bias vector length must match
// matrix D rows ... broadcasted to all columns"), and a row of D is a column of our C: the bias
// is indexed by n and broadcast over m, as a linear layer's is.
#include "codegen_cuda/cublaslt.h"

#include "base/dl_symbol.h"
#include "base/error.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace kiln::cuda {

namespace {

// ---- cuBLASLt's C API, as far as kiln uses it ---------------------------------------------
// Enums are int-sized in the C ABI and are passed as int / int32_t / uint32_t here.
using cublasStatus_t = int;  // cublas_api.h: 0 = CUBLAS_STATUS_SUCCESS
struct LtContext;
struct LtMatmulDescOpaque;
struct LtMatrixLayoutOpaque;
struct LtPreferenceOpaque;
using cublasLtHandle_t = LtContext*;                       // cublasLt.h: struct cublasLtContext*
using cublasLtMatmulDesc_t = LtMatmulDescOpaque*;          // cublasLtMatmulDescOpaque_t*
using cublasLtMatrixLayout_t = LtMatrixLayoutOpaque*;      // cublasLtMatrixLayoutOpaque_t*
using cublasLtMatmulPreference_t = LtPreferenceOpaque*;    // cublasLtMatmulPreferenceOpaque_t*

struct cublasLtMatmulAlgo_t {  // cublasLt.h: semi-opaque, uint64_t data[8]
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {  // cublasLt.h
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96, "cublasLtMatmulHeuristicResult_t's layout (cublasLt.h)");

constexpr cublasStatus_t kSuccess = 0;  // CUBLAS_STATUS_SUCCESS (cublas_api.h)

// cudaDataType_t (library_types.h)
constexpr int kCudaR32F = 0;    // CUDA_R_32F
constexpr int kCudaR64F = 1;    // CUDA_R_64F
constexpr int kCudaR16F = 2;    // CUDA_R_16F
constexpr int kCudaR16BF = 14;  // CUDA_R_16BF
// cublasComputeType_t (cublas_api.h)
constexpr int kCompute32F = 68;          // CUBLAS_COMPUTE_32F
constexpr int kCompute32FFastTF32 = 77;  // CUBLAS_COMPUTE_32F_FAST_TF32
constexpr int kCompute64F = 70;          // CUBLAS_COMPUTE_64F
// cublasOperation_t (cublas_api.h)
constexpr int32_t kOpN = 0;  // CUBLAS_OP_N
constexpr int32_t kOpT = 1;  // CUBLAS_OP_T
// cublasLtMatmulDescAttributes_t (cublasLt.h), with the attribute's type
constexpr int kDescTransA = 3;       // CUBLASLT_MATMUL_DESC_TRANSA, int32_t
constexpr int kDescTransB = 4;       // CUBLASLT_MATMUL_DESC_TRANSB, int32_t
constexpr int kDescEpilogue = 7;     // CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t
constexpr int kDescBiasPointer = 8;  // CUBLASLT_MATMUL_DESC_BIAS_POINTER, const void*
// cublasLtEpilogue_t (cublasLt.h)
constexpr uint32_t kEpilogueDefault = 1;    // CUBLASLT_EPILOGUE_DEFAULT
constexpr uint32_t kEpilogueRelu = 2;       // CUBLASLT_EPILOGUE_RELU
constexpr uint32_t kEpilogueBias = 4;       // CUBLASLT_EPILOGUE_BIAS
constexpr uint32_t kEpilogueReluBias = 6;   // CUBLASLT_EPILOGUE_RELU_BIAS = RELU | BIAS
constexpr uint32_t kEpilogueGelu = 32;      // CUBLASLT_EPILOGUE_GELU
constexpr uint32_t kEpilogueGeluBias = 36;  // CUBLASLT_EPILOGUE_GELU_BIAS = GELU | BIAS
// cublasLtMatrixLayoutAttribute_t (cublasLt.h)
constexpr int kLayoutBatchCount = 5;          // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t
constexpr int kLayoutStridedBatchOffset = 6;  // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t
// cublasLtMatmulPreferenceAttributes_t (cublasLt.h)
constexpr int kPrefMaxWorkspaceBytes = 1;  // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t
constexpr int kPrefMinAlignmentA = 5;      // CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t (B, C, D: 6, 7, 8)

using CreateFn = cublasStatus_t (*)(cublasLtHandle_t*);
using GetVersionFn = size_t (*)();
using StatusTextFn = const char* (*)(cublasStatus_t);
using DescCreateFn = cublasStatus_t (*)(cublasLtMatmulDesc_t*, int /*cublasComputeType_t*/, int /*cudaDataType_t*/);
using DescDestroyFn = cublasStatus_t (*)(cublasLtMatmulDesc_t);
using DescSetFn = cublasStatus_t (*)(cublasLtMatmulDesc_t, int, const void*, size_t);
using LayoutCreateFn = cublasStatus_t (*)(cublasLtMatrixLayout_t*, int /*cudaDataType_t*/, uint64_t, uint64_t, int64_t);
using LayoutDestroyFn = cublasStatus_t (*)(cublasLtMatrixLayout_t);
using LayoutSetFn = cublasStatus_t (*)(cublasLtMatrixLayout_t, int, const void*, size_t);
using PrefCreateFn = cublasStatus_t (*)(cublasLtMatmulPreference_t*);
using PrefDestroyFn = cublasStatus_t (*)(cublasLtMatmulPreference_t);
using PrefSetFn = cublasStatus_t (*)(cublasLtMatmulPreference_t, int, const void*, size_t);
using HeuristicFn = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                       cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t*, int*);
using MatmulFn = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
                                    cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,
                                    const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                                    const cublasLtMatmulAlgo_t*, void*, size_t, void* /*cudaStream_t*/);

constexpr const char* kLibraryCandidates[] = {
    "libcublasLt.so.13",
    "/usr/local/cuda/lib64/libcublasLt.so.13",
    "/usr/local/cuda/targets/x86_64-linux/lib/libcublasLt.so.13",
};

// cublasStatus_t's names (cublas_api.h), for a library without cublasLtGetStatusName.
const char* status_name(cublasStatus_t s) {
  switch (s) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return nullptr;
  }
}

struct Lt {
  std::string error;  // empty when usable
  size_t version = 0;  // cublasLtGetVersion(): major * 10000 + minor * 100 + patch
  CreateFn create = nullptr;
  StatusTextFn status_string = nullptr;  // optional
  DescCreateFn desc_create = nullptr;
  DescDestroyFn desc_destroy = nullptr;
  DescSetFn desc_set = nullptr;
  LayoutCreateFn layout_create = nullptr;
  LayoutDestroyFn layout_destroy = nullptr;
  LayoutSetFn layout_set = nullptr;
  PrefCreateFn pref_create = nullptr;
  PrefDestroyFn pref_destroy = nullptr;
  PrefSetFn pref_set = nullptr;
  HeuristicFn heuristic = nullptr;
  MatmulFn matmul = nullptr;
  std::unordered_map<int, cublasLtHandle_t> handles;  // per device, created on first use (guarded by mu)
  std::mutex mu;

  std::string describe(cublasStatus_t s) const {
    const char* name = status_name(s);
    const char* text = status_string ? status_string(s) : nullptr;
    if (name && text) return fmt::format("{} ({}): {}", name, s, text);
    if (name) return fmt::format("{} ({})", name, s);
    return text ? fmt::format("cuBLAS status {}: {}", s, text) : fmt::format("cuBLAS status {}", s);
  }
};

Lt* load() {
  auto* lt = new Lt();  // never destroyed: matmuls may run during static destruction
  std::string tried;
  void* lib = dlopen_first(kLibraryCandidates, tried);
  if (!lib) {
    lt->error = "cuBLASLt is not available (libcublasLt.so.13 could not be loaded):" + tried;
    return lt;
  }
  const char* so = "libcublasLt.so.13";
  std::string& e = lt->error;
  GetVersionFn get_version = nullptr;
  bind_symbol(lib, so, "cublasLtGetVersion", get_version, e);
  bind_symbol(lib, so, "cublasLtCreate", lt->create, e);
  bind_symbol(lib, so, "cublasLtMatmulDescCreate", lt->desc_create, e);
  bind_symbol(lib, so, "cublasLtMatmulDescDestroy", lt->desc_destroy, e);
  bind_symbol(lib, so, "cublasLtMatmulDescSetAttribute", lt->desc_set, e);
  bind_symbol(lib, so, "cublasLtMatrixLayoutCreate", lt->layout_create, e);
  bind_symbol(lib, so, "cublasLtMatrixLayoutDestroy", lt->layout_destroy, e);
  bind_symbol(lib, so, "cublasLtMatrixLayoutSetAttribute", lt->layout_set, e);
  bind_symbol(lib, so, "cublasLtMatmulPreferenceCreate", lt->pref_create, e);
  bind_symbol(lib, so, "cublasLtMatmulPreferenceDestroy", lt->pref_destroy, e);
  bind_symbol(lib, so, "cublasLtMatmulPreferenceSetAttribute", lt->pref_set, e);
  bind_symbol(lib, so, "cublasLtMatmulAlgoGetHeuristic", lt->heuristic, e);
  bind_symbol(lib, so, "cublasLtMatmul", lt->matmul, e);
  if (!e.empty()) return lt;
  lt->version = get_version();
  // Optional: the status table above names every status without it.
  lt->status_string = reinterpret_cast<StatusTextFn>(dlsym(lib, "cublasLtGetStatusString"));
  return lt;
}

Lt& lt() {
  static Lt* l = load();
  return *l;
}

// ---- The problem, checked and described --------------------------------------------------

const char* dtype_name(LtDtype d) {
  switch (d) {
    case LtDtype::F32: return "f32";
    case LtDtype::F16: return "f16";
    case LtDtype::BF16: return "bf16";
    case LtDtype::F64: return "f64";
  }
  return "?";
}

const char* epilogue_name(LtEpilogue e) {
  switch (e) {
    case LtEpilogue::None: return "none";
    case LtEpilogue::Relu: return "relu";
    case LtEpilogue::GeluTanh: return "gelu_tanh";
  }
  return "?";
}

// For error messages: everything that shapes the call.
std::string describe_problem(const LtMatmul& p) {
  return fmt::format(
      "{} batch {} m {} n {} k {}, A strides (rs {}, cs {}, bs {}), B strides (rs {}, cs {}, bs {}), C batch stride {}, "
      "bias {}, epilogue {}{}, workspace {} bytes, cuda:{}",
      dtype_name(p.dtype), p.batch, p.m, p.n, p.k, p.a_rs, p.a_cs, p.a_bs, p.b_rs, p.b_cs, p.b_bs, p.c_bs,
      p.bias ? "yes" : "no", epilogue_name(p.epilogue), p.dtype == LtDtype::F32 && p.allow_tf32 ? ", tf32" : "",
      p.workspace_bytes, p.device);
}

// A row-major operand M (rows x cols, strides rs and cs) as the column-major matrix cuBLASLt
// reads, such that op(stored) = M^T (cols x rows). `rows` / `cols` / `ld` describe the matrix
// as stored (cuBLASLt's layout takes them before op is applied).
struct StoredOperand {
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t op = kOpN;
};

std::optional<StoredOperand> as_transposed(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  // Row-major (cs == 1): the memory is M^T, column-major cols x rows with ld = rs; op N.
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols))
    return StoredOperand{static_cast<uint64_t>(cols), static_cast<uint64_t>(rows), rows == 1 ? cols : rs, kOpN};
  // Column-major (rs == 1): the memory is M, column-major rows x cols with ld = cs; op T.
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= rows))
    return StoredOperand{static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), cols == 1 ? rows : cs, kOpT};
  return std::nullopt;
}

StoredOperand checked_operand(const LtMatmul& p, const char* name, int64_t rows, int64_t cols, int64_t rs,
                              int64_t cs) {
  std::optional<StoredOperand> s = as_transposed(rows, cols, rs, cs);
  if (!s)
    fail("matmul",
         "cuBLASLt: operand {} ({} x {}) with strides (rs {}, cs {}) is neither row-major nor a transposed row-major "
         "view (one stride must be 1 and the other at least the extent it steps over) ({})",
         name, rows, cols, rs, cs, describe_problem(p));
  return *s;
}

void validate(const LtMatmul& p) {
  if (p.batch <= 0 || p.m <= 0 || p.n <= 0 || p.k <= 0)
    fail("matmul",
         "cuBLASLt: batch, m, n and k must be positive, got batch {}, m {}, n {}, k {} (an empty matmul is the "
         "caller's to handle)",
         p.batch, p.m, p.n, p.k);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (p.batch > kMax || p.m > kMax || p.n > kMax || p.k > kMax)
    fail("matmul", "cuBLASLt: batch, m, n and k must fit in int32, got batch {}, m {}, n {}, k {}", p.batch, p.m, p.n,
         p.k);
  if (p.dtype != LtDtype::F32 && p.dtype != LtDtype::F16 && p.dtype != LtDtype::BF16 && p.dtype != LtDtype::F64)
    fail("matmul", "cuBLASLt: unknown dtype value {}", static_cast<int>(p.dtype));
  if (p.epilogue != LtEpilogue::None && p.epilogue != LtEpilogue::Relu && p.epilogue != LtEpilogue::GeluTanh)
    fail("matmul", "cuBLASLt: unknown epilogue value {}", static_cast<int>(p.epilogue));
  if (!p.a || !p.b || !p.c)
    fail("matmul", "cuBLASLt: A, B and C must be device pointers, got a null {} ({})", !p.a ? "A" : !p.b ? "B" : "C",
         describe_problem(p));
  if (p.workspace_bytes > 0 && !p.workspace)
    fail("matmul", "cuBLASLt: workspace_bytes is {} but the workspace pointer is null", p.workspace_bytes);
  if (p.device < 0) fail("matmul", "cuBLASLt: device index {} is negative", p.device);
  if (p.batch > 1) {
    if (p.a_bs < 0 || p.b_bs < 0)
      fail("matmul", "cuBLASLt: batch strides must not be negative ({})", describe_problem(p));
    if (p.c_bs < p.m * p.n)
      fail("matmul", "cuBLASLt: C's batch stride {} is less than m * n = {}: the outputs of the batch would overlap ({})",
           p.c_bs, p.m * p.n, describe_problem(p));
  }
}

// The largest power of two (at most 256) dividing the address, as cuBLASLt's MIN_ALIGNMENT
// preferences take it (default 256: the heuristic would otherwise pick kernels that need it).
uint32_t alignment_of(const void* ptr) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  uint32_t a = 256;
  while (a > 1 && address % a != 0) a /= 2;
  return a;
}

// The descriptors of one call, destroyed on every path out.
struct Descriptors {
  const Lt& lt;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;  // cuBLASLt's A (our B), B (our A), C = D
  cublasLtMatmulPreference_t pref = nullptr;

  explicit Descriptors(const Lt& l) : lt(l) {}
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    if (pref) lt.pref_destroy(pref);
    if (d) lt.layout_destroy(d);
    if (b) lt.layout_destroy(b);
    if (a) lt.layout_destroy(a);
    if (op) lt.desc_destroy(op);
  }
};

// The device's handle, created on first use in the context current on this thread.
cublasLtHandle_t handle_for(Lt& l, const LtMatmul& p) {
  std::lock_guard<std::mutex> lock(l.mu);
  if (auto it = l.handles.find(p.device); it != l.handles.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  if (cublasStatus_t s = l.create(&h); s != kSuccess || !h)
    fail("matmul", "cuBLASLt cublasLtCreate failed on cuda:{}: {} ({})", p.device, l.describe(s),
         describe_problem(p));
  l.handles.emplace(p.device, h);
  return h;
}

}  // namespace

bool cublaslt_available(std::string* why) {
  const Lt& l = lt();
  if (why) *why = l.error;
  return l.error.empty();
}

std::string cublaslt_version() {
  const Lt& l = lt();
  if (!l.error.empty()) return {};
  return fmt::format("{}.{}.{}", l.version / 10000, l.version / 100 % 100, l.version % 100);
}

void cublaslt_matmul(const LtMatmul& p) {
  validate(p);
  // C^T (n x m) = B^T (n x k) * A^T (k x m): cuBLASLt's A is our B, its B is our A.
  const StoredOperand sa = checked_operand(p, "B", p.k, p.n, p.b_rs, p.b_cs);
  const StoredOperand sb = checked_operand(p, "A", p.m, p.k, p.a_rs, p.a_cs);
  Lt& l = lt();
  if (!l.error.empty()) fail("matmul", "cuBLASLt is not available: {}", l.error);

  auto check = [&](cublasStatus_t s, const char* call) {
    if (s != kSuccess) fail("matmul", "cuBLASLt {} failed: {} ({})", call, l.describe(s), describe_problem(p));
  };
  const cublasLtHandle_t handle = handle_for(l, p);

  const bool f64 = p.dtype == LtDtype::F64;
  const int type = f64                        ? kCudaR64F
                   : p.dtype == LtDtype::F32 ? kCudaR32F
                   : p.dtype == LtDtype::F16 ? kCudaR16F
                                             : kCudaR16BF;
  const int compute = f64 ? kCompute64F : p.dtype == LtDtype::F32 && p.allow_tf32 ? kCompute32FFastTF32 : kCompute32F;
  Descriptors desc(l);
  // alpha and beta are of the scale type: f64 for an f64 product, f32 otherwise.
  check(l.desc_create(&desc.op, compute, f64 ? kCudaR64F : kCudaR32F), "cublasLtMatmulDescCreate");
  check(l.desc_set(desc.op, kDescTransA, &sa.op, sizeof(sa.op)), "cublasLtMatmulDescSetAttribute(TRANSA)");
  check(l.desc_set(desc.op, kDescTransB, &sb.op, sizeof(sb.op)), "cublasLtMatmulDescSetAttribute(TRANSB)");
  uint32_t epilogue = kEpilogueDefault;
  switch (p.epilogue) {
    case LtEpilogue::None: epilogue = p.bias ? kEpilogueBias : kEpilogueDefault; break;
    case LtEpilogue::Relu: epilogue = p.bias ? kEpilogueReluBias : kEpilogueRelu; break;
    case LtEpilogue::GeluTanh: epilogue = p.bias ? kEpilogueGeluBias : kEpilogueGelu; break;
  }
  check(l.desc_set(desc.op, kDescEpilogue, &epilogue, sizeof(epilogue)), "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  if (p.bias) {
    // Set before the heuristic, which reads the pointer's alignment. The bias type defaults
    // to D's type (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = -1), and its batch stride to 0: one
    // bias for every matrix of the batch.
    const void* bias = p.bias;
    check(l.desc_set(desc.op, kDescBiasPointer, &bias, sizeof(bias)), "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }

  check(l.layout_create(&desc.a, type, sa.rows, sa.cols, sa.ld), "cublasLtMatrixLayoutCreate(A)");
  check(l.layout_create(&desc.b, type, sb.rows, sb.cols, sb.ld), "cublasLtMatrixLayoutCreate(B)");
  check(l.layout_create(&desc.d, type, static_cast<uint64_t>(p.n), static_cast<uint64_t>(p.m), p.n),
        "cublasLtMatrixLayoutCreate(C)");
  if (p.batch > 1) {
    const int32_t count = static_cast<int32_t>(p.batch);
    const std::pair<cublasLtMatrixLayout_t, int64_t> batched[] = {{desc.a, p.b_bs}, {desc.b, p.a_bs}, {desc.d, p.c_bs}};
    for (const auto& [layout, stride] : batched) {
      check(l.layout_set(layout, kLayoutBatchCount, &count, sizeof(count)),
            "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
      check(l.layout_set(layout, kLayoutStridedBatchOffset, &stride, sizeof(stride)),
            "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
    }
  }

  check(l.pref_create(&desc.pref), "cublasLtMatmulPreferenceCreate");
  const uint64_t workspace = p.workspace_bytes;
  check(l.pref_set(desc.pref, kPrefMaxWorkspaceBytes, &workspace, sizeof(workspace)),
        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  const uint32_t alignments[] = {alignment_of(p.b), alignment_of(p.a), alignment_of(p.c), alignment_of(p.c)};
  for (int i = 0; i < 4; ++i)
    check(l.pref_set(desc.pref, kPrefMinAlignmentA + i, &alignments[i], sizeof(alignments[i])),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");

  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  check(l.heuristic(handle, desc.op, desc.a, desc.b, desc.d, desc.d, desc.pref, 1, &result, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    fail("matmul", "cuBLASLt found no algorithm (cublasLtMatmulAlgoGetHeuristic returned 0 results) for {}",
         describe_problem(p));
  check(result.state, "cublasLtMatmulAlgoGetHeuristic (its result's state)");

  const float alpha = 1.0f, beta = 0.0f;
  const double alpha64 = 1.0, beta64 = 0.0;
  check(l.matmul(handle, desc.op, f64 ? static_cast<const void*>(&alpha64) : &alpha, p.b, desc.a, p.a, desc.b,
                 f64 ? static_cast<const void*>(&beta64) : &beta, p.c, desc.d, p.c, desc.d, &result.algo, p.workspace,
                 p.workspace_bytes, p.stream),
        "cublasLtMatmul");
}

}  // namespace kiln::cuda
