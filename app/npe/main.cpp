// npe: train, evaluate and benchmark neural processes from the command line.

#include <cstdio>
#include <string>
#include <vector>

#include <c10/util/Exception.h>

#include "arguments.h"
#include "commands.h"
#include "npe/errors.h"

namespace {

constexpr const char* kUsage = R"(usage: npe <command> [options]

commands:
  train  --model KIND --out PATH [--task TASK] [--steps N] [--size small|paper]
         [--device cpu|cuda|auto] [--seed S] [--batch-size 16] [--lr 5e-4]
         [--val-every N] [--val-tasks N] [--threads N]
         [--task-option KEY=VALUE]... [--model-option KEY=VALUE]...
         KIND: cnp, rcnp, tnp, pttnp, tetnp, tepttnp, convcnp, convcnp2d
  eval   (--checkpoint PATH | --model gp-oracle|gp-fitted|gp-se-ard) [--task TASK]
         [--shift D | --shift D1,D2,...] [--tasks N] [--seed S] [--split test|validation]
         [--json] [--device cpu|cuda|auto] [--fit-iterations N] [--task-option KEY=VALUE]...
         [--threads N]
  bench accuracy [--task TASK] [--tasks 4096] [--shifts 0,0.2,0.4,0.6,0.8,1,2,3] [--seed S]
         [--models LIST] [--models-dir DIR] [--fit-iterations 1000] [--fitted-tasks 256] [--json]
  bench latency  [--repeats 50] [--warmup 5] [--context 64] [--targets 256]
         [--device all|cpu|cuda] [--models LIST] [--models-dir DIR | --size small|paper]
         [--fit-iterations 60] [--json]
  bench train    [--task TASK] [--steps 20] [--warmup 3] [--size small|paper] [--models LIST]
         [--device cpu|cuda] [--json]

TASK: gp1d (default), tfmnist, tfmnist-central. A shift with one value translates every input
dimension; images take one value per axis (rows, columns) in pixels.
Shipped models are found in models/<task> (source tree or install prefix; $NPE_MODELS_DIR
overrides). --threads 0 (the default) uses all cores.
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  std::string command_line = "npe";
  for (const auto& a : args) command_line += " " + a;
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "train") return npe::cli::run_train(args, command_line);
    if (command == "eval") return npe::cli::run_eval(args);
    if (command == "bench") return npe::cli::run_bench(args);
    throw npe::cli::UsageError("unknown command '" + command + "'");
  } catch (const npe::cli::UsageError& e) {
    std::fprintf(stderr, "npe: %s\n\n%s", e.what(), kUsage);
    return 2;
  } catch (const npe::Error& e) {
    std::fprintf(stderr, "npe: error: %s\n", e.what());
    return 1;
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "npe: internal error from libtorch: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npe: error: %s\n", e.what());
    return 1;
  }
}
