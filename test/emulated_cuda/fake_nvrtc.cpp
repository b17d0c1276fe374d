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
// against libm (its math functions bind to libm's current versions) and libgcc alone: its few
// other references (memcpy) bind to the process's at load time, and the link takes about 8 ms
// instead of 25 with libstdc++ and libc. A module costs about 0.07 s of the
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

// The offset after moving back from `at` over blanks.
size_t blanks_before(const std::string& s, size_t at) {
  while (at > 0 && std::isspace(static_cast<unsigned char>(s[at - 1]))) --at;
  return at;
}

// `text` with every comment and the contents of every string and character literal blanked
// (newlines kept), so that offsets still index `text` and a `__global__` or `#if` in a comment
// or a literal is not read as code.
std::string code_only(const std::string& text) {
  std::string out = text;
  size_t i = 0;
  while (i < out.size()) {
    if (out.compare(i, 2, "//") == 0) {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      const size_t end = out.find("*/", i + 2);
      const size_t stop = end == std::string::npos ? out.size() : end + 2;
      for (; i < stop; ++i)
        if (out[i] != '\n') out[i] = ' ';
    } else if (out[i] == '"' || out[i] == '\'') {
      const char quote = out[i++];
      for (; i < out.size() && out[i] != quote && out[i] != '\n'; ++i) {
        if (out[i] == '\\' && i + 1 < out.size()) out[i++] = ' ';
        out[i] = ' ';
      }
      ++i;
    } else {
      if (out[i] == '\r') out[i] = ' ';
      ++i;
    }
  }
  return out;
}

// The logical lines of `code` (backslash-newlines joined) that are preprocessor directives,
// without their `#`.
std::vector<std::string> directives(const std::string& code) {
  std::vector<std::string> out;
  size_t i = 0;
  auto continued = [](std::string& line) {  // a backslash, then only blanks, ends the line
    const size_t last = line.find_last_not_of(" \t");
    if (last == std::string::npos || line[last] != '\\') return false;
    line.erase(last);
    return true;
  };
  while (i < code.size()) {
    size_t eol = code.find('\n', i);
    if (eol == std::string::npos) eol = code.size();
    std::string line = code.substr(i, eol - i);
    while (eol < code.size() && continued(line)) {
      const size_t next = code.find('\n', eol + 1);
      const size_t stop = next == std::string::npos ? code.size() : next;
      line += code.substr(eol + 1, stop - eol - 1);
      eol = stop;
    }
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '#') out.push_back(line.substr(first + 1));
    i = eol + 1;
  }
  return out;
}

// The kernels of a module read from its text as written, as NVRTC would name them: every
// `__global__` must be `extern "C" __global__ void [__launch_bounds__(...)] name(`. Nothing (the
// caller preprocesses first) when a directive is a conditional or defines a macro that writes
// `extern` or `__global__`, or when a macro (a #define or an -D option) is named like a kernel
// or a word the pattern reads.
std::optional<std::set<std::string>> kernels_as_written(const std::string& text,
                                                        const std::vector<std::string>& defines) {
  const std::string code = code_only(text);
  std::set<std::string> macros;
  for (const std::string& d : defines) macros.insert(d.substr(0, d.find_first_of("=(")));
  for (const std::string& d : directives(code)) {
    size_t at = d.find_first_not_of(" \t");
    if (at == std::string::npos) continue;
    if (d.compare(at, 2, "if") == 0 || d.compare(at, 4, "elif") == 0) return std::nullopt;
    if (d.find("__global__") != std::string::npos || d.find("extern") != std::string::npos) return std::nullopt;
    if (d.compare(at, 6, "define") != 0) continue;
    at = d.find_first_not_of(" \t", at + 6);
    if (at == std::string::npos) continue;
    size_t end = at;
    while (end < d.size() && is_ident(d[end])) ++end;
    macros.insert(d.substr(at, end - at));
  }
  for (const char* word : {"extern", "__global__", "void", "__launch_bounds__"})
    if (macros.count(word)) return std::nullopt;
  auto skip_space = [&](size_t i) {
    while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
    return i;
  };
  auto word_at = [&](size_t i, const char* w) {
    const size_t n = std::strlen(w);
    return code.compare(i, n, w) == 0 && (i + n == code.size() || !is_ident(code[i + n]));
  };
  std::set<std::string> names;
  for (size_t at = code.find("__global__"); at != std::string::npos; at = code.find("__global__", at + 1)) {
    if ((at > 0 && is_ident(code[at - 1])) || !word_at(at, "__global__")) return std::nullopt;
    // Back over `extern "C"`: the literal is blanked in `code`, so it is read from `text`.
    size_t b = blanks_before(code, at);
    if (b < 3 || text.compare(b - 3, 3, "\"C\"") != 0) return std::nullopt;
    b = blanks_before(code, b - 3);
    if (b < 6 || !word_at(b - 6, "extern") || (b > 6 && is_ident(code[b - 7]))) return std::nullopt;
    size_t i = skip_space(at + 10);
    if (!word_at(i, "void")) return std::nullopt;
    i = skip_space(i + 4);
    if (word_at(i, "__launch_bounds__")) {
      i = skip_space(i + 17);
      if (i >= code.size() || code[i] != '(') return std::nullopt;
      int depth = 0;
      do {
        depth += code[i] == '(' ? 1 : code[i] == ')' ? -1 : 0;
        ++i;
      } while (i < code.size() && depth > 0);
      if (depth != 0) return std::nullopt;
      i = skip_space(i);
    }
    const size_t name = i;
    while (i < code.size() && is_ident(code[i])) ++i;
    if (i == name || skip_space(i) >= code.size() || code[skip_space(i)] != '(') return std::nullopt;
    const std::string kernel = code.substr(name, i - name);
    if (macros.count(kernel)) return std::nullopt;
    names.insert(kernel);
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
    const size_t i = blanks_before(text, at);
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
  std::optional<std::set<std::string>> found = kernels_as_written(text, p.defines);
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
  if (!run(std::string(KILN_EMU_CXX) + " " + flags + " -shared -nodefaultlibs -x c++ " + quote(src) + " -lm -lgcc -o " +
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
