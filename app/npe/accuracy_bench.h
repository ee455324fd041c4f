#pragma once
// npe bench accuracy: mean log-likelihood of every shipped (or given) model at each Δ, with
// coverage, paired differences and the gap to the Bayes-optimal ceiling where the task has one.

#include "commands.h"

namespace npe::cli {

/// Registers `bench accuracy` on `bench`; the returned command runs it once parsed.
Command add_accuracy_bench(CLI::App& bench);

}  // namespace npe::cli
