#pragma once
// npe bench latency: the time of one prediction per model (median, p10, p90), with its FLOP
// rate against the machine's peak; or the authors' reference workload.

#include "commands.h"

namespace npe::cli {

/// Registers `bench latency` on `bench`; the returned command runs it once parsed.
Command add_latency_bench(CLI::App& bench);

}  // namespace npe::cli
