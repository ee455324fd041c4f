#pragma once
// npe bench memory: the peak resident memory of one prediction and one training step at a
// given context and target size, for checking that a model's memory grows with N_c + N_t and
// not with N_c * N_t (BSA-TNP at N_t 100,000 and N_c 10,000).

#include <string>
#include <vector>

#include "commands.h"

namespace npe::cli {

struct MemoryBenchArguments {
  std::string models = "bsatnp", size = "paper", device = "cpu";
  /// Empty: the reference tasks (1-D, --context and --targets points); else tasks drawn from
  /// this task (its own context and target counts), e.g. tfmnist.
  std::string task;
  std::vector<std::string> task_options;
  int64_t context = 10000, targets = 100000, batch_size = 1;
  bool json = false;
  RuntimeArguments runtime;
};

/// Registers `bench memory` on `bench`; the returned command runs it once parsed.
Command add_memory_bench(CLI::App& bench);

}  // namespace npe::cli
