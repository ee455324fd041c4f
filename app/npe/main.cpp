// npe: train, evaluate and benchmark neural processes from the command line.

#include <cstdio>
#include <string>
#include <vector>

#include <c10/util/Exception.h>
#include <CLI/CLI.hpp>

#include "commands.h"
#include "npe/blas_kernels.h"
#include "npe/crash_report.h"
#include "npe/errors.h"
#include "option_values.h"
#include "stop_signals.h"

namespace {

constexpr const char* kFooterRest = R"(
A shift with one value translates every input dimension; images take one value per axis (rows,
columns) in pixels, era5 one per input (latitude cells, longitude cells, time steps). Shipped
models are found in models/<task> (source tree or install prefix; $NPE_MODELS_DIR overrides).
Run 'npe COMMAND --help' (or 'npe bench SUITE --help') for a command's options.)";

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"npe: train, evaluate, benchmark and run neural processes", "npe"};
  app.footer("\nTasks: " + npe::cli::task_names_text() +
             " (default gp1d)\nModels: " + npe::cli::model_kinds_text() + "\n" + kFooterRest);
  app.require_subcommand(1);
  std::string command_line = "npe";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  const std::vector<npe::cli::Command> commands = {npe::cli::add_train_command(app, command_line),
                                                   npe::cli::add_eval_command(app),
                                                   npe::cli::add_bench_command(app),
                                                   npe::cli::add_import_command(app),
                                                   npe::cli::add_export_command(app),
                                                   npe::cli::add_export_pytorch_command(app),
                                                   npe::cli::add_place_command(app),
                                                   npe::cli::add_predict_command(app),
                                                   npe::cli::add_devices_command(app)};

  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "npe: %s\n", e.what());
    bool any_command = false;
    for (const auto& command : commands) any_command = any_command || command.app->parsed();
    // Without a command the whole usage helps; with one, point at its own --help.
    if (any_command) {
      std::fputs("Run 'npe COMMAND --help' for the command's options.\n", stderr);
    } else {
      std::fputs(app.help().c_str(), stderr);
    }
    return 2;
  }
  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    return 2;
  } catch (const npe::cli::UsageError& e) {
    std::fprintf(stderr, "npe: %s\nRun 'npe COMMAND --help' for usage.\n", e.what());
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

int main(int argc, char** argv) {
  npe::install_crash_report("npe");
  npe::use_the_cpus_blas_kernels(argv);
  // Before anything makes a thread: every thread made later inherits the blocked stop signals.
  npe::cli::receive_stop_signals_on_their_own_thread();
  int status = 1;
  // Setting up the parser allocates; nothing may escape main, not even bad_alloc.
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npe: error: %s\n", e.what());
  }
  // What was printed reaches its file before exit's destructors run: a crash there (a report
  // says "while exiting") then loses nothing the command said, such as `npe train`'s summary.
  std::fflush(stdout);
  npe::set_crash_phase("exiting (static destructors, libraries unloading)");
  return status;
}
