#pragma once
// npe's subcommands. Each takes the arguments after its name and returns the exit status;
// errors are thrown (UsageError, npe::Error) and reported by main.

#include <string>
#include <vector>

namespace npe::cli {

int run_train(std::vector<std::string> args, const std::string& command_line);
int run_eval(std::vector<std::string> args);
int run_bench(std::vector<std::string> args);

/// Shared options: --threads N (default all cores). Applies them and returns the thread count.
int apply_runtime_options(class Arguments& args);

}  // namespace npe::cli
