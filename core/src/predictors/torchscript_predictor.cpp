#include "npe/predictors/torchscript_predictor.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "models/checkpoint/archive_guard.h"
#include "models/first_line.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/ground/joint_gaussian.h"
#include "npe/models/model_config.h"

namespace npe {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTorchScriptContract =
    "forward(xc: [B, Nc, Dx], yc: [B, Nc, Dy], xt: [B, Nt, Dx]) -> (mean [B, Nt, Dy], std "
    "[B, Nt, Dy]) or (mean, std, covariance [B, Nt*Dy, Nt*Dy])";
constexpr const char* kMetadataFile = "npe.json";

std::string quoted(const fs::path& path) {
  return "'" + path.string() + "'";
}

// What the TorchScript interpreter says when a scripted function raises: a first line that only
// says so, the code around the failing operation, then the Python-style exception, last.
std::string interpreter_message(const std::string& text) {
  const auto first = first_line(text);
  if (first.rfind("The following operation failed in the TorchScript interpreter", 0) != 0)
    return first;
  std::istringstream lines(text);
  std::string line, last;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return first_line(last);
}

std::string output_shape_text(c10::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

std::string output_shape_text(const torch::Tensor& t) {
  return t.defined() ? output_shape_text(t.sizes()) : std::string("(none)");
}

struct Program {
  torch::jit::Module module;
  /// npe.json's text, empty when the archive has none.
  std::string metadata;
  /// Outputs forward() returns: 2 (mean, std) or 3 (and the covariance).
  size_t outputs = 2;
  /// The dtype of the program's parameters (inputs are cast to it), float32 when it has none.
  torch::Dtype dtype = torch::kFloat32;
};

// The archive checks that need no compiling, then libtorch's loader, then the signature.
Program load_program(const fs::path& path, torch::Device device) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw CheckpointError(quoted(path) + " does not exist or is not a file");
  }
  if (const auto problem = find_implausible_record_size(path)) {
    throw CheckpointError(quoted(path) + " is not a TorchScript model that can be read (it has " +
                          *problem + ")");
  }
  if (const auto problem = find_unsupported_layout(path)) {
    const bool version = problem->rfind("format version", 0) == 0;
    throw CheckpointError(quoted(path) + " is not a TorchScript model that can be read (it has " +
                          *problem + ")" +
                          (version ? ": it was written by a PyTorch newer than the libtorch "
                                     "NP Explorer runs on (" TORCH_VERSION ")"
                                   : ""));
  }
  if (!archive_defines_forward(path)) {
    throw CheckpointError(quoted(path) +
                          " is not a TorchScript model: it defines no forward method (expected a "
                          "file written by torch.jit.script(model).save(path))");
  }
  Program program;
  torch::jit::ExtraFilesMap extra{{kMetadataFile, ""}};
  try {
    program.module = torch::jit::load(path.string(), device, extra);
  } catch (const c10::Error& e) {
    throw CheckpointError(quoted(path) + " cannot be loaded as a TorchScript model by libtorch " +
                          TORCH_VERSION + ": " + interpreter_message(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw CheckpointError(quoted(path) +
                          " cannot be loaded as a TorchScript model: " + first_line(e.what()));
  }
  program.module.eval();
  program.metadata = extra[kMetadataFile];
  for (const auto& p : program.module.parameters()) {
    if (p.is_floating_point()) {
      program.dtype = p.scalar_type();
      break;
    }
  }

  const auto method = program.module.find_method("forward");
  if (!method) throw CheckpointError(quoted(path) + " has no forward method");
  const auto& schema = method->function().getSchema();
  const auto& arguments = schema.arguments();  // self first
  std::string signature;
  bool tensors = arguments.size() == 4;
  for (size_t i = 1; i < arguments.size(); ++i) {
    const auto& a = arguments[i];
    signature += (i > 1 ? ", " : "") + a.name() + ": " + a.type()->str();
    if (a.type()->kind() != c10::TypeKind::TensorType) tensors = false;
  }
  if (!tensors) {
    throw CheckpointError(quoted(path) + ": its forward(" + signature +
                          ") is not a neural process's: expected " + kTorchScriptContract);
  }
  const auto& returns = schema.returns();
  const auto tuple = returns.size() == 1 ? returns[0].type()->cast<c10::TupleType>() : nullptr;
  bool returns_tensors = tuple && (tuple->elements().size() == 2 || tuple->elements().size() == 3);
  if (returns_tensors) {
    for (const auto& element : tuple->elements())
      if (element->kind() != c10::TypeKind::TensorType) returns_tensors = false;
  }
  if (!returns_tensors) {
    std::string returned;
    for (const auto& r : returns) returned += (returned.empty() ? "" : ", ") + r.type()->str();
    throw CheckpointError(quoted(path) + ": its forward returns " + returned +
                          ", not a tuple of 2 or 3 tensors: expected " + kTorchScriptContract);
  }
  program.outputs = tuple->elements().size();
  return program;
}

// forward()'s outputs, unchecked, or the message of what it threw.
struct RawOutputs {
  std::vector<torch::Tensor> tensors;
  std::string error;
};

RawOutputs call_forward(torch::jit::Module& module, const torch::Tensor& xc,
                        const torch::Tensor& yc, const torch::Tensor& xt) {
  RawOutputs raw;
  try {
    torch::NoGradGuard no_grad;
    const auto out = module.forward({xc, yc, xt});
    if (!out.isTuple()) {
      raw.error = "it returned " + out.tagKind() + ", not a tuple";
      return raw;
    }
    for (const auto& element : out.toTuple()->elements()) {
      if (!element.isTensor()) {
        raw.error = "it returned a tuple holding " + element.tagKind();
        return raw;
      }
      raw.tensors.push_back(element.toTensor());
    }
  } catch (const c10::Error& e) {
    raw.error = interpreter_message(e.what_without_backtrace());
  } catch (const std::exception& e) {
    // A raise inside scripted code arrives as torch::jit::JITException, a std::runtime_error.
    raw.error = interpreter_message(e.what());
  }
  return raw;
}

bool has_shape(const torch::Tensor& t, std::initializer_list<int64_t> sizes) {
  return t.defined() && t.sizes() == c10::IntArrayRef(sizes);
}

// The dimensions of a program that does not say them: the first (D_x, D_y) for which a call
// with three context points and two targets returns outputs of the right shapes.
std::optional<std::pair<int64_t, int64_t>> probe_dimensions(Program& program, torch::Device device,
                                                            std::string& last_error) {
  const auto options = torch::TensorOptions().dtype(program.dtype).device(device);
  for (int64_t dim_x = 1; dim_x <= 4; ++dim_x) {
    for (int64_t dim_y = 1; dim_y <= 3; ++dim_y) {
      const auto xc = torch::linspace(-1.0, 1.0, 3 * dim_x, options).view({1, 3, dim_x});
      const auto yc = torch::linspace(-0.5, 0.5, 3 * dim_y, options).view({1, 3, dim_y});
      const auto xt = torch::linspace(-0.7, 0.9, 2 * dim_x, options).view({1, 2, dim_x});
      const auto raw = call_forward(program.module, xc, yc, xt);
      if (!raw.error.empty()) {
        last_error = raw.error;
        continue;
      }
      if (raw.tensors.size() >= 2 && has_shape(raw.tensors[0], {1, 2, dim_y}) &&
          has_shape(raw.tensors[1], {1, 2, dim_y})) {
        return std::make_pair(dim_x, dim_y);
      }
      last_error = "it returned a mean of shape " + output_shape_text(raw.tensors.at(0));
    }
  }
  return std::nullopt;
}

nlohmann::json task_configuration(const nlohmann::json& task, const fs::path& path) {
  try {
    if (task.is_string()) return make_task_source(task.get<std::string>())->to_json();
    if (task.is_object()) return task_source_from_json(task)->to_json();
  } catch (const Error& e) {
    throw CheckpointError(quoted(path) + ": npe.json's task: " + e.what());
  }
  throw CheckpointError(quoted(path) +
                        ": npe.json's task is neither a task's name nor a task configuration");
}

// A number or flag of npe.json, type-checked.
template <typename T>
bool read_field(const nlohmann::json& json, const char* key, T& value, const fs::path& path) {
  if (!json.contains(key)) return false;
  const auto& field = json.at(key);
  const bool ok = std::is_same_v<T, bool>      ? field.is_boolean()
                  : std::is_same_v<T, int64_t> ? field.is_number_integer()
                                               : field.is_number();
  if (!ok) {
    throw CheckpointError(quoted(path) + ": npe.json's '" + key + "' is not " +
                          (std::is_same_v<T, bool>      ? "true or false"
                           : std::is_same_v<T, int64_t> ? "an integer"
                                                        : "a number"));
  }
  value = field.get<T>();
  return true;
}

TorchScriptModelInfo describe(Program& program, const fs::path& path, torch::Device device) {
  TorchScriptModelInfo info;
  info.display_name = path.stem().string();
  nlohmann::json json = nlohmann::json::object();
  if (program.metadata.empty()) {
    info.assumptions.push_back("the file has no npe.json: its name is the file's");
  } else {
    try {
      json = nlohmann::json::parse(program.metadata);
    } catch (const nlohmann::json::exception& e) {
      throw CheckpointError(quoted(path) + ": its npe.json is not JSON (" + e.what() + ")");
    }
    if (!json.is_object()) throw CheckpointError(quoted(path) + ": its npe.json is not an object");
    static const std::set<std::string> known{
        "name",         "task",        "dim_x",      "dim_y",
        "dim_features", "input_scale", "covariance", "translation_equivariant"};
    for (const auto& item : json.items()) {
      if (!known.count(item.key())) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        throw CheckpointError(quoted(path) + ": npe.json has an unknown field '" + item.key() +
                              "' (known: " + list + ")");
      }
    }
    if (json.contains("name")) {
      if (!json["name"].is_string() || json["name"].get<std::string>().empty())
        throw CheckpointError(quoted(path) + ": npe.json's 'name' is not a non-empty string");
      info.display_name = json["name"].get<std::string>();
    }
  }

  bool have_x = read_field(json, "dim_x", info.dim_x, path);
  bool have_y = read_field(json, "dim_y", info.dim_y, path);
  const bool have_features = read_field(json, "dim_features", info.dim_features, path);
  if (json.contains("task")) {
    info.task = task_configuration(json["task"], path);
    // The dimensions and the place features the project's own models get for this task.
    const auto task = task_source_from_json(info.task);
    const auto config = default_model_config("cnp", "small", *task);
    if (!have_x) info.dim_x = config.dim_x;
    if (!have_y) info.dim_y = config.dim_y;
    if (!have_features) info.dim_features = config.dim_features;
    have_x = have_y = true;
  }
  if (!have_x || !have_y) {
    std::string last_error;
    const auto found = probe_dimensions(program, device, last_error);
    if (!found) {
      throw CheckpointError(quoted(path) +
                            ": its forward accepts none of D_x = 1..4, D_y = 1..3 (" + last_error +
                            "); give dim_x and dim_y in npe.json");
    }
    if (!have_x) info.dim_x = found->first;
    if (!have_y) info.dim_y = found->second;
    info.assumptions.push_back("D_x = " + std::to_string(info.dim_x) + " and D_y = " +
                               std::to_string(info.dim_y) + " were found by a trial call");
  }
  if (info.dim_x < 1 || info.dim_y < 1 || info.dim_features < 0 ||
      info.dim_features >= info.dim_x) {
    throw CheckpointError(quoted(path) + ": npe.json's dimensions are not D_x >= 1, D_y >= 1, " +
                          "0 <= dim_features < D_x");
  }
  if (info.task.is_null()) {
    // The tasks whose tabs show models of these dimensions.
    const char* name = info.dim_x == 1 && info.dim_y == 1   ? "gp1d"
                       : info.dim_x == 2 && info.dim_y == 1 ? "tfmnist"
                                                            : nullptr;
    if (name) {
      info.task = make_task_source(name)->to_json();
      info.assumptions.push_back(std::string("it is taken to be a model of the ") + name +
                                 " task (no task in npe.json)");
    } else {
      info.assumptions.push_back("no task is known for it (no task in npe.json)");
    }
  }
  if (read_field(json, "input_scale", info.input_scale, path)) {
    if (!std::isfinite(info.input_scale) || info.input_scale <= 0)
      throw CheckpointError(quoted(path) + ": npe.json's input_scale must be positive");
  }
  if (read_field(json, "covariance", info.covariance, path) && info.covariance &&
      program.outputs != 3) {
    throw CheckpointError(quoted(path) +
                          ": npe.json says forward returns a covariance, but it returns 2 tensors");
  }
  if (program.outputs == 3 && !info.covariance) {
    info.covariance = true;
    if (json.contains("covariance")) {
      throw CheckpointError(quoted(path) +
                            ": forward returns 3 tensors but npe.json says there is no covariance");
    }
    info.assumptions.push_back("its third output is taken to be the covariance over targets");
  }
  read_field(json, "translation_equivariant", info.translation_equivariant, path);
  return info;
}

std::string assumptions_text(const TorchScriptModelInfo& model) {
  std::string text;
  for (const auto& a : model.assumptions) text += (text.empty() ? "" : "; ") + a;
  return text;
}

PredictorInfo predictor_info_of(const TorchScriptModelInfo& model, const fs::path& path) {
  PredictorCapabilities caps;
  caps.translation_equivariant = model.translation_equivariant;
  caps.joint = model.covariance;
  std::string description = "TorchScript model " + path.filename().string() +
                            " (its own code, run by libtorch with your rights)";
  if (!model.assumptions.empty()) description += ". Assumed: " + assumptions_text(model);
  return {kTorchScriptKind, model.display_name, description, caps};
}

class TorchScriptPredictor final : public Predictor {
 public:
  TorchScriptPredictor(Program program, TorchScriptModelInfo model, fs::path path,
                       torch::Device device)
      : Predictor(predictor_info_of(model, path)),
        m_program(std::move(program)),
        m_model(std::move(model)),
        m_path(std::move(path)),
        m_device(device) {}

  Prediction predict(const TaskBatch& batch) override {
    const auto out = run(batch.task);
    return {out.mean.to(torch::kCPU, torch::kFloat32), out.stddev.to(torch::kCPU, torch::kFloat32)};
  }
  torch::Tensor joint_log_likelihood(const TaskBatch& batch) override {
    if (!m_model.covariance) return Predictor::joint_log_likelihood(batch);
    validate_task(batch.task, /*require_target_outputs=*/true);
    const auto joint = joint_of(batch.task);
    return joint.log_likelihood(batch.task.yt.to(joint.mean.device(), joint.mean.scalar_type()))
        .to(torch::kCPU, torch::kFloat64);
  }
  torch::Tensor sample(const TaskBatch& batch, int64_t count, uint64_t seed) override {
    if (!m_model.covariance) return Predictor::sample(batch, count, seed);
    if (count < 1) throw InvalidInputError("the number of samples must be >= 1");
    return joint_of(batch.task)
        .sample(count, at::make_generator<at::CPUGeneratorImpl>(seed))
        .to(torch::kCPU, torch::kFloat32);
  }
  torch::Tensor predictive_covariance(const TaskBatch& batch) override {
    if (!m_model.covariance) return {};
    return joint_of(batch.task).covariance().cpu();
  }

 private:
  struct Outputs {
    torch::Tensor mean, stddev, covariance;
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw ModelError("the TorchScript model " + quoted(m_path) + " " + what);
  }

  torch::Tensor inputs(const torch::Tensor& x) const {
    auto scaled = x.to(m_device, m_program.dtype);
    if (m_model.input_scale == 1.0) return scaled;
    const int64_t coordinates = m_model.dim_x - m_model.dim_features;
    if (coordinates == x.size(-1)) return scaled * m_model.input_scale;
    return torch::cat({scaled.narrow(-1, 0, coordinates) * m_model.input_scale,
                       scaled.narrow(-1, coordinates, x.size(-1) - coordinates)},
                      -1);
  }

  Outputs run(const Task& task) {
    validate_task(task);
    const int64_t batch = task.batch_size(), targets = task.num_targets(), dim_y = task.yc.size(-1);
    if (task.xc.size(-1) != m_model.dim_x || dim_y != m_model.dim_y) {
      throw InvalidInputError(
          m_model.display_name + " takes D_x = " + std::to_string(m_model.dim_x) +
          ", D_y = " + std::to_string(m_model.dim_y) +
          ", not D_x = " + std::to_string(task.xc.size(-1)) + ", D_y = " + std::to_string(dim_y));
    }
    if (m_model.covariance) check_joint_size(targets, dim_y, m_model.display_name.c_str());
    auto raw = call_forward(m_program.module, inputs(task.xc),
                            task.yc.to(m_device, m_program.dtype), inputs(task.xt));
    if (!raw.error.empty()) fail("failed in forward(): " + raw.error);
    if (raw.tensors.size() != m_program.outputs) {
      fail("returned " + std::to_string(raw.tensors.size()) + " tensors, not " +
           std::to_string(m_program.outputs));
    }
    const auto expected = output_shape_text(c10::IntArrayRef{batch, targets, dim_y});
    const char* names[] = {"mean", "std"};
    for (size_t i = 0; i < 2; ++i) {
      const auto& t = raw.tensors[i];
      if (!has_shape(t, {batch, targets, dim_y})) {
        fail(std::string("returned a ") + names[i] + " of shape " + output_shape_text(t) + " for " +
             std::to_string(targets) + " targets: expected [B, Nt, Dy] = " + expected);
      }
      if (!t.is_floating_point())
        fail(std::string("returned a ") + names[i] + " that is not float");
      if (!torch::isfinite(t).all().item<bool>()) {
        fail(std::string("returned a ") + names[i] + " with NaN or infinite values (" +
             std::to_string(task.num_context()) + " context points)");
      }
    }
    if (!(raw.tensors[1] > 0).all().item<bool>()) {
      fail("returned a std that is not positive everywhere (its minimum is " +
           std::to_string(raw.tensors[1].min().item<double>()) + ")");
    }
    Outputs out{raw.tensors[0], raw.tensors[1], {}};
    if (m_program.outputs == 3) {
      const int64_t n = targets * dim_y;
      out.covariance = raw.tensors[2];
      if (!has_shape(out.covariance, {batch, n, n})) {
        fail("returned a covariance of shape " + output_shape_text(out.covariance) +
             ": expected [B, Nt*Dy, Nt*Dy] = " + output_shape_text(c10::IntArrayRef{batch, n, n}));
      }
      if (!torch::isfinite(out.covariance).all().item<bool>())
        fail("returned a covariance with NaN or infinite values");
    }
    return out;
  }

  JointGaussian joint_of(const Task& task) {
    const auto out = run(task);
    try {
      return joint_gaussian_from_covariance(out.mean.to(torch::kCPU, torch::kFloat64),
                                            out.covariance.to(torch::kCPU, torch::kFloat64));
    } catch (const c10::Error& e) {
      fail("returned a covariance that cannot be factorised (" +
           first_line(e.what_without_backtrace()) + ")");
    }
  }

  Program m_program;
  TorchScriptModelInfo m_model;
  fs::path m_path;
  torch::Device m_device;
};

}  // namespace

bool is_torchscript_model(const std::filesystem::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && archive_defines_forward(path);
}

CheckpointMetadata TorchScriptModelInfo::metadata() const {
  CheckpointMetadata meta;
  meta.model.kind = kTorchScriptKind;
  meta.model.dim_x = dim_x;
  meta.model.dim_y = dim_y;
  meta.model.dim_features = dim_features;
  meta.model.input_scale = input_scale;
  meta.task = task;
  meta.libtorch_version = TORCH_VERSION;
  return meta;
}

TorchScriptModelInfo read_torchscript_model(const std::filesystem::path& path,
                                            torch::Device device) {
  auto program = load_program(path, device);
  return describe(program, path, device);
}

std::unique_ptr<Predictor> load_torchscript_predictor(const std::filesystem::path& path,
                                                      torch::Device device) {
  auto program = load_program(path, device);
  auto model = describe(program, path, device);
  return std::make_unique<TorchScriptPredictor>(std::move(program), std::move(model), path, device);
}

}  // namespace npe
