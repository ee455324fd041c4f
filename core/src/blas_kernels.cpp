#include "npe/blas_kernels.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

namespace npe {
namespace {

// Set beside OPENBLAS_CORETYPE when this program chose it: the kernels OpenBLAS had picked.
constexpr const char* kReplacedCore = "NPE_OPENBLAS_REPLACED_CORE";

}  // namespace

std::string openblas_core() {
  // OpenBLAS is libtorch's BLAS here (Debian's libblas.so.3 alternative); look its function up
  // where it is loaded rather than link to it, so that other BLAS libraries still work.
  using CoreName = char* (*)();
  const auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (core_name == nullptr) return {};
  const char* name = core_name();
  return name != nullptr ? std::string(name) : std::string();
}

std::optional<std::string> better_openblas_core(const std::string& chosen, const CpuInfo& cpu) {
  // OpenBLAS's names (case as it reports them) of kernels older than AVX2.
  static const std::array<const char*, 20> kGeneric = {
      "prescott", "core2",      "penryn",     "dunnington",  "nehalem",   "sandybridge", "atom",
      "katmai",   "coppermine", "northwood",  "banias",      "opteron",   "barcelona",   "bobcat",
      "athlon",   "bulldozer",  "piledriver", "steamroller", "excavator", "generic"};
  std::string lower = chosen;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool generic = std::find(kGeneric.begin(), kGeneric.end(), lower) != kGeneric.end() ||
                       lower.rfind("opteron", 0) == 0;  // "Opteron(SSE3)"
  if (!generic) return std::nullopt;
  if (cpu.has("avx512f") && cpu.has("avx512bw") && cpu.has("avx512vl") && cpu.has("avx512dq")) {
    return "SkylakeX";
  }
  if (cpu.has("avx2") && cpu.has("fma")) return "Haswell";
  return std::nullopt;
}

void use_the_cpus_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const auto better = better_openblas_core(openblas_core(), this_cpu());
  if (!better) return;
  const auto chosen = openblas_core();
  if (setenv("OPENBLAS_CORETYPE", better->c_str(), 1) != 0) return;
  setenv(kReplacedCore, chosen.c_str(), 1);
  // The program's own file, not /proc/self/exe: the process is named after the file it runs
  // (ps, top, pkill -x npe would see "exe").
  std::array<char, 4096> self{};
  const auto length = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (length > 0) execv(self.data(), argv);
  // Not replaced (no /proc): go on with OpenBLAS's own kernels, and do not hand the variables to
  // child processes as if they were in effect here.
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kReplacedCore);
}

std::string describe_blas_kernels() {
  const auto core = openblas_core();
  if (core.empty()) return {};
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr) return core;
  const char* replaced = std::getenv(kReplacedCore);
  if (replaced != nullptr && *replaced != '\0') {
    return core + " (chosen for this CPU; OpenBLAS took it for " + replaced + ")";
  }
  return core + " (OPENBLAS_CORETYPE)";
}

}  // namespace npe
