#pragma once
// npe bench peak: one core's float32 and bfloat16 arithmetic peak, as instructions and as the
// TE attention kernel's tile product, for reading the precision benchmarks (where bfloat16
// cannot beat float32 on a CPU, no bf16 training step can).

#include "commands.h"

namespace npe::cli {

/// Registers `bench peak` on `bench`; the returned command runs it once parsed.
Command add_peak_bench(CLI::App& bench);

}  // namespace npe::cli
