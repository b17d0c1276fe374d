// kiln/test/emulated_cuda/fake_nvrtc.cpp — an emulated NVRTC (libnvrtc.so.13): CUDA C compiled as host C++.
//
// The NVRTC calls kiln binds (codegen_cuda/nvrtc.cpp). nvrtcCompileProgram writes the source to
// a scratch directory, preprocesses it with emu_device.h (CUDA's built-ins on the host) to find
// the kernels (the `extern "C"` functions that __global__ marked; macros such as
// sort_kernels.cuh's KILN_KERNEL expanded), appends for each one an entry point the emulated
// driver calls with a launch's kernelParams, and builds a shared object with the host compiler
// (KILN_EMU_CXX with KILN_EMU_FLAGS: -O1, no FMA contraction; emu_device.h precompiled).
// Its "cubin" (sm_XX) is that object's bytes. Its "PTX" (compute_XX) is PTX's header lines
// (.version, .target sm_XX, an .entry line per kernel) and then the same bytes in base64 after a
// comment, a C string as PTX is. A compile error is NVRTC_ERROR_COMPILATION with the compiler's output as the log.
// `extern __shared__` arrays (dynamic shared memory) become pointers to the launch's buffer.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

// Set by test/CMakeLists.txt: the compiler, its flags, the directory of emu_device.h and its
// precompiled form (built with those flags), and that of the stand-in CUDA headers.
#if !defined(KILN_EMU_CXX) || !defined(KILN_EMU_FLAGS) || !defined(KILN_EMU_PCH_DIR) || !defined(KILN_EMU_INCLUDE)
#error "the emulated NVRTC is configured by test/CMakeLists.txt"
#endif

namespace {

using nvrtcResult = int;
constexpr nvrtcResult kSuccess = 0, kInvalidInput = 3, kInvalidProgram = 4, kCompilation = 6;

struct Program {
  std::string source, name;
  std::vector<std::string> defines;
  std::string arch;
  std::string image;  // the shared object
  std::string ptx;
  std::string log;
};

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    acc = acc << 8 | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(k[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(k[(acc << (6 - bits)) & 63]);
  while (out.size() % 4) out.push_back('=');
  return out;
}

// Runs a command, its output (stdout and stderr) into `log`; whether it exited with 0.
bool run(const std::string& cmd, std::string& log) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return false;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) log.append(buf, n);
  const int status = ::pclose(p);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A shell word: single-quoted, a quote inside closed, escaped and reopened.
std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

nvrtcResult compile(Program& p) {
  char dir[] = "/tmp/kiln_emu_nvrtc_XXXXXX";
  if (!mkdtemp(dir)) return kInvalidInput;
  const std::string d = dir, src = d + "/module.cu.cpp", pre = d + "/module.i", so = d + "/module.so";
  // Dynamic shared memory: `extern __shared__ [__align__(n)] T name[]` -> a pointer to the launch's.
  std::string text = std::regex_replace(
      p.source, std::regex(R"(extern\s+__shared__\s+(__align__\s*\(\s*\d+\s*\)\s+)?([A-Za-z_][\w\s]*?)\s+([A-Za-z_]\w*)\s*\[\s*\])"),
      "$2* $3 = reinterpret_cast<$2*>(kiln_emu_dynamic_shared())");
  { std::ofstream(src) << text; }
  std::string flags = std::string(KILN_EMU_FLAGS) + " -I" + quote(KILN_EMU_INCLUDE) + " -include " +
                      quote(std::string(KILN_EMU_PCH_DIR) + "/emu_device.h");
  for (const std::string& def : p.defines) flags += " " + quote("-D" + def);
  std::string log;
  if (!run(std::string(KILN_EMU_CXX) + " " + flags + " -E -P -x c++ " + quote(src) + " -o " + quote(pre), log)) {
    p.log = log + "\n(the emulated NVRTC preprocessed " + src + "; the directory is kept)";
    return kCompilation;
  }
  // The kernels: extern "C" functions defined at namespace scope (kiln_emu_bind aside).
  std::set<std::string> names;
  const std::string preprocessed = read_all(pre);
  const std::regex kernel(R"(extern\s+"C"\s+void\s+([A-Za-z_]\w*)\s*\()");
  for (auto it = std::sregex_iterator(preprocessed.begin(), preprocessed.end(), kernel); it != std::sregex_iterator(); ++it)
    if ((*it)[1].str().rfind("kiln_emu_", 0) != 0) names.insert((*it)[1]);
  {
    std::ofstream f(src, std::ios::app);
    f << "\n// ---- entry points for the emulated driver ----\n";
    for (const std::string& n : names) {
      f << "extern \"C\" void kiln_emu_entry_" << n << "(void** p) { kiln_emu::invoke(" << n << ", p); }\n";
      f << "extern \"C\" void kiln_emu_sizes_" << n << "(size_t* s, size_t* c) { kiln_emu::param_sizes(" << n << ", s, c); }\n";
    }
  }
  if (!run(std::string(KILN_EMU_CXX) + " " + flags + " -shared -x c++ " + quote(src) + " -o " + quote(so), log)) {
    p.log = log + "\n(the emulated NVRTC compiled " + src + "; the directory is kept)";
    return kCompilation;
  }
  p.log = log;
  p.image = read_all(so);
  // PTX's header, then the object: a loader (or a test) reading the target finds NVRTC's form.
  const std::string target = p.arch.rfind("compute_", 0) == 0 ? "sm_" + p.arch.substr(8) : p.arch;
  p.ptx = ".version 8.0\n.target " + target + "\n.address_size 64\n";
  for (const std::string& n : names) p.ptx += ".entry " + n + "\n";
  p.ptx += "// kiln emulated module, base64:" + base64(p.image) + "\n";
  std::string ignored;
  run("rm -rf " + quote(d), ignored);
  return kSuccess;
}

}  // namespace

extern "C" {

// 13.99: an NVRTC 13 that no real one is, so that a module cached by the emulated device (a
// shared object) is never served to a GPU by a compile cache both share (the key holds the
// version, runtime/cuda/cubin_key.h).
nvrtcResult nvrtcVersion(int* major, int* minor) {
  *major = 13;
  *minor = 99;
  return kSuccess;
}
nvrtcResult nvrtcGetNumSupportedArchs(int* n) {
  *n = 4;
  return kSuccess;
}
nvrtcResult nvrtcGetSupportedArchs(int* archs) {
  const int a[] = {75, 80, 89, 90};
  std::memcpy(archs, a, sizeof a);
  return kSuccess;
}
const char* nvrtcGetErrorString(nvrtcResult rc) {
  switch (rc) {
    case kSuccess: return "NVRTC_SUCCESS";
    case kInvalidInput: return "NVRTC_ERROR_INVALID_INPUT";
    case kInvalidProgram: return "NVRTC_ERROR_INVALID_PROGRAM";
    case kCompilation: return "NVRTC_ERROR_COMPILATION";
    default: return "NVRTC_ERROR (emulated)";
  }
}
nvrtcResult nvrtcCreateProgram(Program** prog, const char* src, const char* name, int headers, const char* const*,
                               const char* const*) {
  if (!prog || !src || headers != 0) return kInvalidInput;
  *prog = new Program{src, name ? name : "module", {}, "", "", "", ""};
  return kSuccess;
}
nvrtcResult nvrtcDestroyProgram(Program** prog) {
  if (!prog) return kInvalidProgram;
  delete *prog;
  *prog = nullptr;
  return kSuccess;
}
nvrtcResult nvrtcCompileProgram(Program* p, int n, const char* const* options) {
  if (!p) return kInvalidProgram;
  for (int i = 0; i < n; ++i) {
    const std::string o = options[i];
    if (o.rfind("--gpu-architecture=", 0) == 0) p->arch = o.substr(19);
    else if (o.rfind("-arch=", 0) == 0) p->arch = o.substr(6);
    else if (o.rfind("-D", 0) == 0) p->defines.push_back(o.substr(2));
    else if (o.rfind("--define-macro=", 0) == 0) p->defines.push_back(o.substr(15));
  }
  return compile(*p);
}
nvrtcResult nvrtcGetPTXSize(Program* p, size_t* n) {
  *n = p->ptx.size() + 1;
  return kSuccess;
}
nvrtcResult nvrtcGetPTX(Program* p, char* out) {
  std::memcpy(out, p->ptx.c_str(), p->ptx.size() + 1);
  return kSuccess;
}
nvrtcResult nvrtcGetCUBINSize(Program* p, size_t* n) {
  *n = p->image.size();
  return kSuccess;
}
nvrtcResult nvrtcGetCUBIN(Program* p, char* out) {
  std::memcpy(out, p->image.data(), p->image.size());
  return kSuccess;
}
nvrtcResult nvrtcGetProgramLogSize(Program* p, size_t* n) {
  *n = p->log.size() + 1;
  return kSuccess;
}
nvrtcResult nvrtcGetProgramLog(Program* p, char* out) {
  std::memcpy(out, p->log.c_str(), p->log.size() + 1);
  return kSuccess;
}

}  // extern "C"
