// npe bench: the one place where accuracy and speed are measured. Each suite is a file of its
// own (accuracy_bench, gap_bench, latency_bench, train_bench, memory_bench, peak_bench).

#include "accuracy_bench.h"
#include "commands.h"
#include "gap_bench.h"
#include "latency_bench.h"
#include "memory_bench.h"
#include "peak_bench.h"
#include "train_bench.h"

namespace npe::cli {

Command add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand(
      "bench", "Measure accuracy, prediction latency, training speed, memory or arithmetic peak");
  // An unknown suite is reported by name (below) rather than as a missing subcommand.
  bench->allow_extras();
  const std::vector<Command> suites = {add_accuracy_bench(*bench), add_gap_bench(*bench),
                                       add_latency_bench(*bench),  add_train_bench(*bench),
                                       add_memory_bench(*bench),   add_peak_bench(*bench)};
  return {
      bench, [bench, suites] {
        for (const auto& suite : suites) {
          if (suite.app->parsed()) return suite.run();
        }
        const auto extras = bench->remaining();
        throw UsageError(extras.empty()
                             ? "bench needs a suite: accuracy, gap, latency, train, memory or peak"
                             : "unknown bench suite '" + extras.front() +
                                   "' (accuracy, gap, latency, train, memory, peak)");
      }};
}

}  // namespace npe::cli
