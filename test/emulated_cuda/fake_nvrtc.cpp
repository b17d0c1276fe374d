// kiln/test/emulated_cuda/fake_nvrtc.cpp — an emulated NVRTC (libnvrtc.so.13): CUDA C compiled as host C++.
//
// The NVRTC calls kiln binds (codegen_cuda/nvrtc.cpp). nvrtcCompileProgram writes the source to
// a scratch directory, finds its kernels (the `extern "C"` functions that __global__ marks),
// appends for each one an entry point the emulated driver calls with a launch's kernelParams,
// and builds a shared object with the host compiler (KILN_EMU_CXX with KILN_EMU_FLAGS: -O1, no
// FMA contraction; emu_device.h precompiled). The kernels are read from the text as written
// when no preprocessor directive could add or remove one (kiln's generated modules); a module
// with conditionals or kernel-making macros (sort_kernels.cuh's KILN_KERNEL, the attention
// kernels) is preprocessed with emu_device.h first and read from that. The object is linked
// without the standard libraries: its few references (libm, libstdc++) bind to the process's
// at load time, and the link takes 5 ms instead of 25. A module costs about 0.07 s of the
// compiler's time (0.17 s with a preprocessing pass, the default link and <cmath> in the
// precompiled header), and the op database compiles some 1,400 of them on every CI run.
// Its "cubin" (sm_XX) is that object's bytes. Its "PTX" (compute_XX) is PTX's header lines
// (.version, .target sm_XX, an .entry line per kernel) and then the same bytes in base64 after a
// comment, a C string as PTX is. A compile error is NVRTC_ERROR_COMPILATION with the compiler's output as the log.
// `extern __shared__` arrays (dynamic shared memory) become pointers to the launch's buffer.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
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

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The logical lines of `text` (backslash-newlines joined) that are preprocessor directives.
std::vector<std::string> directives(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t eol = text.find('\n', i);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(i, eol - i);
    while (!line.empty() && line.back() == '\\' && eol < text.size()) {  // a continued line
      const size_t next = text.find('\n', eol + 1);
      const size_t stop = next == std::string::npos ? text.size() : next;
      line.pop_back();
      line += text.substr(eol + 1, stop - eol - 1);
      eol = stop;
    }
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '#') out.push_back(line.substr(first + 1));
    i = eol + 1;
  }
  return out;
}

// The kernels of a module read from its text as written: every `__global__` must open
// `__global__ void [__launch_bounds__(...)] name(`, and no directive may be a conditional or
// a macro that writes a kernel. Otherwise nothing (the caller preprocesses first).
std::optional<std::set<std::string>> kernels_as_written(const std::string& text) {
  for (const std::string& d : directives(text)) {
    const size_t word = d.find_first_not_of(" \t");
    if (word == std::string::npos) continue;
    if (d.compare(word, 2, "if") == 0 || d.compare(word, 4, "elif") == 0) return std::nullopt;
    if (d.find("__global__") != std::string::npos || d.find("extern") != std::string::npos) return std::nullopt;
  }
  std::set<std::string> names;
  auto skip_space = [&](size_t i) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    return i;
  };
  auto word_at = [&](size_t i, const char* w) {
    const size_t n = std::strlen(w);
    return text.compare(i, n, w) == 0 && (i + n == text.size() || !is_ident(text[i + n]));
  };
  for (size_t at = text.find("__global__"); at != std::string::npos; at = text.find("__global__", at + 1)) {
    if ((at > 0 && is_ident(text[at - 1])) || !word_at(at, "__global__")) return std::nullopt;
    size_t i = skip_space(at + 10);
    if (!word_at(i, "void")) return std::nullopt;
    i = skip_space(i + 4);
    if (word_at(i, "__launch_bounds__")) {
      const size_t close = text.find(')', i);
      if (close == std::string::npos) return std::nullopt;
      i = skip_space(close + 1);
    }
    const size_t name = i;
    while (i < text.size() && is_ident(text[i])) ++i;
    if (i == name || text[skip_space(i)] != '(') return std::nullopt;
    names.insert(text.substr(name, i - name));
  }
  return names;
}

// The kernels of a preprocessed module: extern "C" functions defined at namespace scope
// (kiln_emu_bind aside).
std::set<std::string> kernels_preprocessed(const std::string& text) {
  std::set<std::string> names;
  const std::regex kernel(R"(extern\s+"C"\s+void\s+([A-Za-z_]\w*)\s*\()");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kernel); it != std::sregex_iterator(); ++it)
    if ((*it)[1].str().rfind("kiln_emu_", 0) != 0) names.insert((*it)[1]);
  return names;
}

// Whether `text` has an `extern __shared__` declaration (the regex below is slow on every module).
bool has_dynamic_shared(const std::string& text) {
  for (size_t at = text.find("__shared__"); at != std::string::npos; at = text.find("__shared__", at + 1)) {
    size_t i = at;
    while (i > 0 && std::isspace(static_cast<unsigned char>(text[i - 1]))) --i;
    if (i >= 6 && i < at && text.compare(i - 6, 6, "extern") == 0) return true;
  }
  return false;
}

nvrtcResult compile(Program& p) {
  char dir[] = "/tmp/kiln_emu_nvrtc_XXXXXX";
  if (!mkdtemp(dir)) return kInvalidInput;
  const std::string d = dir, src = d + "/module.cu.cpp", pre = d + "/module.i", so = d + "/module.so";
  // Dynamic shared memory: `extern __shared__ [__align__(n)] T name[]` -> a pointer to the launch's.
  std::string text = p.source;
  if (has_dynamic_shared(text))
    text = std::regex_replace(
        text, std::regex(R"(extern\s+__shared__\s+(__align__\s*\(\s*\d+\s*\)\s+)?([A-Za-z_][\w\s]*?)\s+([A-Za-z_]\w*)\s*\[\s*\])"),
        "$2* $3 = reinterpret_cast<$2*>(kiln_emu_dynamic_shared())");
  { std::ofstream(src) << text; }
  std::string flags = std::string(KILN_EMU_FLAGS) + " -I" + quote(KILN_EMU_INCLUDE) + " -include " +
                      quote(std::string(KILN_EMU_PCH_DIR) + "/emu_device.h");
  for (const std::string& def : p.defines) flags += " " + quote("-D" + def);
  std::string log;
  std::optional<std::set<std::string>> found = kernels_as_written(text);
  if (!found) {
    if (!run(std::string(KILN_EMU_CXX) + " " + flags + " -E -P -x c++ " + quote(src) + " -o " + quote(pre), log)) {
      p.log = log + "\n(the emulated NVRTC preprocessed " + src + "; the directory is kept)";
      return kCompilation;
    }
    found = kernels_preprocessed(read_all(pre));
  }
  const std::set<std::string>& names = *found;
  {
    std::ofstream f(src, std::ios::app);
    f << "\n// ---- entry points for the emulated driver ----\n";
    for (const std::string& n : names) {
      f << "extern \"C\" void kiln_emu_entry_" << n << "(void** p) { kiln_emu::invoke(" << n << ", p); }\n";
      f << "extern \"C\" void kiln_emu_sizes_" << n << "(size_t* s, size_t* c) { kiln_emu::param_sizes(" << n << ", s, c); }\n";
    }
  }
  if (!run(std::string(KILN_EMU_CXX) + " " + flags + " -shared -nodefaultlibs -x c++ " + quote(src) + " -x none -lgcc -o " +
               quote(so), log)) {
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
