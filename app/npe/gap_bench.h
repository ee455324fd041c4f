#pragma once
// npe bench gap: where each model's log-likelihood falls short of the Bayes ceiling on the 1-D
// GP tasks, task by task: its mean's share and its spread's, by kernel family, and on periodic
// tasks against how uncertain the context leaves the period.

#include "commands.h"

namespace npe::cli {

/// Registers `bench gap` on `bench`; the returned command runs it once parsed.
Command add_gap_bench(CLI::App& bench);

}  // namespace npe::cli
