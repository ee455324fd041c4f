#pragma once
// npe's subcommands, declared on a CLI11 application. Each add_*_command registers its options
// (typed, range-checked, with --help) and returns what runs it once parsed; errors are thrown
// (UsageError, npe::Error) and reported by main.

#include <functional>
#include <stdexcept>
#include <string>

#include <torch/types.h>
#include <CLI/CLI.hpp>

namespace npe::cli {

/// A mistake in how npe was called that CLI11 cannot see (e.g. two options that exclude each
/// other semantically); main prints it and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A registered subcommand and what runs it once parsed (returns the exit status).
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command add_train_command(CLI::App& app, const std::string& command_line);
Command add_eval_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_import_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_export_pytorch_command(CLI::App& app);
Command add_place_command(CLI::App& app);
Command add_devices_command(CLI::App& app);
Command add_predict_command(CLI::App& app);

/// How a command computes: threads, and for commands that run models the precision and the TE
/// attention implementation (compute_settings.h).
struct RuntimeArguments {
  int threads = 0;
  std::string precision = "auto";
  std::string attention = "auto";
  int64_t attention_block_mib = 0;  // 0: from the memory available
};

/// --threads N (default 0: all cores), shared by every subcommand.
void add_thread_option(CLI::App& command, RuntimeArguments& runtime);
/// --threads, --precision fp32|bf16|auto, --te-attention auto|fused|plain|blocked and
/// --te-attention-block-mib, for commands that run models.
void add_runtime_options(CLI::App& command, RuntimeArguments& runtime);
/// Applies the thread count, the allocator tuning, the precision and the attention
/// implementation for models that run on `device`; returns the threads in effect.
int apply_runtime_options(const RuntimeArguments& runtime, torch::Device device = torch::kCPU);
/// The precision in effect after apply_runtime_options, and for "auto" on the CPU the measured
/// reason that chose it (auto_precision.h), e.g. "bf16 (auto: the TE kernel's bf16 speedup is
/// 1.59x on this CPU (timed 2026-12-03 on a quiet machine, kept in ...))".
std::string describe_precision(const RuntimeArguments& runtime, torch::Device device);

}  // namespace npe::cli
