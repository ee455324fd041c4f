// npe export-pytorch: a model trained here as a self-contained Python package (issue 106): the
// architecture of its kind in plain PyTorch (python/npe_models, built into npe), its weights as a
// state_dict in torch.save's format and model.json with its options, task and standardisation.

#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include <torch/torch.h>

#include "commands.h"
#include "npe/atomic_file.h"
#include "npe/errors.h"
#include "npe/models/checkpoint.h"
#include "npe/models/model_registry.h"
#include "option_values.h"
#include "python_package.h"

namespace npe::cli {
namespace {

namespace fs = std::filesystem;

// The kinds python/npe_models builds (its loading.py's KINDS).
const std::set<std::string>& exported_kinds() {
  static const std::set<std::string> kinds = {"cnp",    "rcnp",    "tnp",      "tnpd",  "tnpnd",
                                              "tnpa",   "pttnp",   "tepttnp",  "tetnp", "tetnpnd",
                                              "bsatnp", "convcnp", "convcnp2d"};
  return kinds;
}

// The task's fields that relate the model's units to the data's, where it has any.
nlohmann::json standardisation_of(const nlohmann::json& task) {
  nlohmann::json out = nlohmann::json::object();
  if (!task.is_object()) return out;
  for (const char* key : {"x_scale", "window", "y_mean", "y_std", "mean", "stddev"}) {
    if (task.contains(key)) out[key] = task[key];
  }
  const auto kind = task.value("kind", std::string());
  if (kind == "series") {
    // As npe predict does it (predict_series.cpp): the window centred on the points.
    out["how"] =
        "x = (x_data - centre) / x_scale, x_data in hours since the file's first row for "
        "date-times, centre the middle of the context and targets' x_data; y = (y_data - y_mean) "
        "/ y_std; back: y_data = y_mean + y_std * mean, its std = y_std * std";
  } else if (kind == "era5") {
    out["how"] =
        "y = (kelvin - mean) / stddev; back: kelvin = mean + stddev * mean_model, its std = "
        "stddev * std_model; inputs as the task's coordinates (latitude_unit, longitude_unit, "
        "split_latitude, origin_longitude) give them";
  }
  return out;
}

struct ExportPytorchArguments {
  std::string checkpoint;
  std::string output;
};

int run_export_pytorch(const ExportPytorchArguments& a) {
  auto loaded = load_checkpoint(a.checkpoint);
  const auto& config = loaded.metadata.model;
  if (!exported_kinds().count(config.kind)) {
    std::string kinds;
    for (const auto& k : exported_kinds()) kinds += (kinds.empty() ? "" : ", ") + k;
    throw CheckpointError("cannot export '" + a.checkpoint + "': its kind, " + config.kind + " (" +
                          model_info(config.kind).display_name +
                          "), has no PyTorch module yet (export-pytorch covers " + kinds + ")");
  }
  const fs::path out(a.output);
  std::error_code error;
  fs::create_directories(out / "npe_models", error);
  if (error) {
    throw Error("cannot make the folder '" + (out / "npe_models").string() +
                "': " + error.message());
  }
  // The weights under npe's names, float32 on the CPU, as torch.load reads them.
  c10::Dict<std::string, torch::Tensor> state;
  size_t count = 0;
  for (const auto& p : loaded.model->named_parameters(/*recurse=*/true)) {
    state.insert(p.key(), p.value().detach().to(torch::kCPU, torch::kFloat32).contiguous());
    ++count;
  }
  for (const auto& b : loaded.model->named_buffers(/*recurse=*/true)) {
    state.insert(b.key(), b.value().detach().to(torch::kCPU).contiguous());
    ++count;
  }
  const auto bytes = torch::pickle_save(c10::IValue(state));
  write_file_atomically(out / "weights.pt", std::string(bytes.begin(), bytes.end()));
  const nlohmann::json description = {{"format", "npe-pytorch-export/1"},
                                      {"kind", config.kind},
                                      {"name", model_info(config.kind).display_name},
                                      {"options", config.to_json()},
                                      {"task", loaded.metadata.task},
                                      {"standardisation", standardisation_of(loaded.metadata.task)},
                                      {"checkpoint", fs::absolute(a.checkpoint).string()},
                                      {"steps", loaded.metadata.steps}};
  write_file_atomically(out / "model.json", description.dump(2) + "\n");
  for (const auto& [name, contents] : python_package_files()) {
    write_file_atomically(out / "npe_models" / name, contents);
  }
  std::printf(
      "exported %s (%s, %zu tensors) to %s: model.json, weights.pt and the package npe_models\n"
      "in Python (beside %s):\n"
      "  import sys; sys.path.insert(0, '%s')\n"
      "  import npe_models\n"
      "  model = npe_models.load('%s')\n"
      "  mean, std = model(xc, yc, xt)  # [B, Nc, Dx], [B, Nc, Dy], [B, Nt, Dx]\n",
      a.checkpoint.c_str(), model_info(config.kind).display_name.c_str(), count,
      out.string().c_str(), out.string().c_str(), out.string().c_str(), out.string().c_str());
  return 0;
}

}  // namespace

Command add_export_pytorch_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "export-pytorch", "Write a checkpoint as a Python package: the model in plain PyTorch");
  command->footer(
      "\nOUT receives model.json (kind, options, task, standardisation), weights.pt (the\n"
      "state_dict, in torch.save's format) and npe_models/, the architecture in plain PyTorch\n"
      "(1.13 and 2.x). npe_models.load(OUT) returns the torch.nn.Module in eval mode, its\n"
      "weights loaded strictly; forward(xc, yc, xt) returns (mean, std) in the model's units,\n"
      "and torch.jit.script takes it, so the scripted module opens in npe again.");
  auto a = std::make_shared<ExportPytorchArguments>();
  command->add_option("checkpoint", a->checkpoint, "npe checkpoint")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--out", a->output, "Folder to write (made when missing; files atomically)")
      ->required();
  return {command, [a] { return run_export_pytorch(*a); }};
}

}  // namespace npe::cli
