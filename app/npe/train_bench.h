#pragma once
// npe bench train: training steps per second and FLOP rate of fresh models on a task's
// batches, or on the authors' reference workload.

#include "commands.h"

namespace npe::cli {

/// Registers `bench train` on `bench`; the returned command runs it once parsed.
Command add_train_bench(CLI::App& bench);

}  // namespace npe::cli
