#include "npe/models/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <torch/torch.h>

#include "archive_debug_records.h"
#include "archive_guard.h"
#include "models/first_line.h"
#include "npe/atomic_file.h"
#include "npe/errors.h"
#include "npe/json_numbers.h"
#include "npe/models/model_registry.h"

namespace npe {
namespace {

// Where libtorch's archive writer puts its bytes. Given a file name, libtorch's writer throws
// from its destructor when a write fails (a full disk: "unexpected pos"), which ends the
// program; given this function instead, it never sees a failure: the first error is kept, later
// bytes are dropped, and close() reports it, so a full disk is an ordinary CheckpointError.
class ArchiveFileSink {
 public:
  explicit ArchiveFileSink(const std::filesystem::path& path)
      : m_fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {
    if (m_fd < 0) m_problem = std::strerror(errno);
  }
  ArchiveFileSink(const ArchiveFileSink&) = delete;
  ArchiveFileSink& operator=(const ArchiveFileSink&) = delete;
  ~ArchiveFileSink() {
    if (m_fd >= 0) ::close(m_fd);
  }

  size_t write(const void* data, size_t size) {
    const auto* bytes = static_cast<const char*>(data);
    size_t done = 0;
    while (m_problem.empty() && done < size) {
      const ssize_t n = ::write(m_fd, bytes + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        m_problem = n < 0 ? std::strerror(errno) : "the disk accepted no more bytes";
        break;
      }
      done += static_cast<size_t>(n);
    }
    return size;  // always "all of it": see above
  }

  /// Closes the file; empty on success, else the first error.
  std::string close() {
    if (m_fd >= 0) {
      if (::close(m_fd) != 0 && m_problem.empty()) m_problem = std::strerror(errno);
      m_fd = -1;
    }
    return m_problem;
  }

 private:
  int m_fd;
  std::string m_problem;
};

constexpr const char* kMetadataKey = "npe_metadata";
constexpr const char* kChecksumKey = "npe_checksum";

// FNV-1a over the bytes of every named tensor, in name order: detects corrupted weights that
// the archive format itself would accept.
uint64_t checksum(const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
  uint64_t hash = 1469598103934665603ull;
  auto feed = [&](const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
      hash ^= bytes[i];
      hash *= 1099511628211ull;
    }
  };
  for (const auto& [name, tensor] : tensors) {
    feed(name.data(), name.size());
    auto t = tensor.detach().to(torch::kCPU).contiguous();
    feed(t.data_ptr(), t.numel() * t.element_size());
  }
  return hash;
}

std::vector<std::pair<std::string, torch::Tensor>> named_state(torch::nn::Module& model) {
  std::vector<std::pair<std::string, torch::Tensor>> state;
  for (const auto& item : model.named_parameters(true))
    state.emplace_back(item.key(), item.value());
  for (const auto& item : model.named_buffers(true)) state.emplace_back(item.key(), item.value());
  return state;
}

}  // namespace

torch::serialize::InputArchive open_checkpoint_archive(const std::filesystem::path& path,
                                                       std::optional<torch::Device> map_to) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw CheckpointError("checkpoint '" + path.string() + "' does not exist or is not a file");
  }
  torch::serialize::InputArchive archive;
  try {
    // Before libtorch reads a record, which it allocates at the sizes the file states.
    if (const auto problem = find_archive_problem(path)) {
      // A scripted model defines methods, which a checkpoint never holds: it is code to run,
      // opened only as a model the user chose (npe/predictors/torchscript_predictor.h).
      if (archive_defines_forward(path)) {
        throw CheckpointError("'" + path.string() +
                              "' is a TorchScript model, not an NP Explorer checkpoint: open it "
                              "as a model (a tab's Open checkpoint…, npe predict or npe eval "
                              "--checkpoint), which runs its code");
      }
      throw CheckpointError("checkpoint '" + path.string() + "' is corrupt or truncated (it has " +
                            *problem + ")");
    }
    const std::string bytes = archive_without_debug_records(path);
    // Always mapped: a record written from a GPU must open on a machine without one.
    archive.load_from(bytes.data(), bytes.size(), map_to.value_or(torch::Device(torch::kCPU)));
  } catch (const CheckpointError&) {
    throw;
  } catch (const c10::Error& e) {
    throw CheckpointError("checkpoint '" + path.string() +
                          "' is corrupt or truncated (cannot be read as a checkpoint archive: " +
                          first_line(e.what_without_backtrace()) + ")");
  } catch (const std::exception& e) {
    // libtorch's archive reader also throws standard exceptions (std::out_of_range from a map
    // lookup) on some corrupt files; found by fuzz_checkpoint_archive.
    throw CheckpointError("checkpoint '" + path.string() +
                          "' is corrupt or truncated (cannot be read as a checkpoint archive: " +
                          first_line(e.what()) + ")");
  }
  return archive;
}

namespace {

CheckpointMetadata read_metadata(torch::serialize::InputArchive& archive,
                                 const std::filesystem::path& path) {
  c10::IValue value;
  bool found = false;
  try {
    found = archive.try_read(kMetadataKey, value);
  } catch (const std::exception& e) {
    throw CheckpointError("checkpoint '" + path.string() +
                          "' is corrupt: its metadata record cannot be read (" +
                          first_line(e.what()) + ")");
  }
  if (!found || !value.isString()) {
    throw CheckpointError("'" + path.string() +
                          "' is not an NP Explorer checkpoint (no metadata record)");
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(value.toStringRef());
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError("checkpoint '" + path.string() + "' has corrupt metadata: " + e.what());
  }
  try {
    return CheckpointMetadata::from_json(json);
  } catch (const Error& e) {
    throw CheckpointError("checkpoint '" + path.string() + "': " + e.what());
  }
}

}  // namespace

std::string CheckpointMetadata::task_name() const {
  if (!task.is_object()) return {};
  for (const char* key : {"name", "kind"}) {
    auto found = task.find(key);
    if (found != task.end() && found->is_string()) return found->get<std::string>();
  }
  return {};
}

nlohmann::json CheckpointMetadata::to_json() const {
  nlohmann::json sessions_json = nlohmann::json::array();
  for (const auto& session : sessions) sessions_json.push_back(session.to_json());
  return {{"format_version", format_version},
          {"model", model.to_json()},
          {"task", task},
          {"steps", steps},
          {"planned_steps", planned_steps},
          {"best_of_run", best_of_run},
          {"wall_time_s", wall_time_s},
          {"device", device},
          {"validation_ll",
           std::isfinite(validation_ll) ? nlohmann::json(validation_ll) : nlohmann::json(nullptr)},
          {"seed", seed},
          {"size", size},
          {"command", command},
          {"created_at", created_at},
          {"libtorch_version", libtorch_version},
          {"sessions", sessions_json}};
}

nlohmann::json TrainingSession::to_json() const {
  nlohmann::json json = {{"command", command},       {"device", device},
                         {"started_at", started_at}, {"from_step", from_step},
                         {"to_step", to_step},       {"wall_time_s", wall_time_s}};
  if (!precision.empty()) json["precision"] = precision;
  return json;
}

TrainingSession TrainingSession::from_json(const nlohmann::json& json) {
  auto fail = [] { throw CheckpointError("malformed metadata: a training session is malformed"); };
  if (!json.is_object()) fail();
  TrainingSession s;
  for (const char* key : {"command", "device", "started_at"}) {
    if (!json.contains(key) || !json.at(key).is_string()) fail();
  }
  for (const char* key : {"from_step", "to_step"}) {
    if (!json.contains(key) || !json.at(key).is_number_integer()) fail();
  }
  if (!json.contains("wall_time_s") || !json.at("wall_time_s").is_number()) fail();
  if (json.contains("precision") && !json.at("precision").is_string()) fail();
  s.command = json.at("command").get<std::string>();
  s.device = json.at("device").get<std::string>();
  s.started_at = json.at("started_at").get<std::string>();
  s.from_step = json.at("from_step").get<int64_t>();
  s.to_step = json.at("to_step").get<int64_t>();
  s.wall_time_s = json.at("wall_time_s").get<double>();
  s.precision = json.value("precision", std::string());
  return s;
}

namespace {

// The value of `--precision X` or `--precision=X` in a recorded command line; empty if absent.
std::string precision_in_command(const std::string& command) {
  std::istringstream words(command);
  std::string word, value;
  const std::string option = "--precision";
  while (words >> word) {
    if (word == option) {
      words >> value;
    } else if (word.rfind(option + "=", 0) == 0) {
      value = word.substr(option.size() + 1);
    }
  }
  return value;
}

}  // namespace

std::string CheckpointMetadata::training_precision() const {
  for (auto it = sessions.rbegin(); it != sessions.rend(); ++it) {
    if (!it->precision.empty()) return it->precision;
    if (auto named = precision_in_command(it->command); !named.empty()) return named;
  }
  return precision_in_command(command);
}

CheckpointMetadata CheckpointMetadata::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw CheckpointError("metadata is not a JSON object");
  try {
    check_json_numbers(json, "metadata");
  } catch (const ConfigError& e) {
    throw CheckpointError(e.what());
  }
  CheckpointMetadata m;
  try {
    // Read as int64 (check_json_numbers bounds every number to it), range-checked before it
    // becomes an int: get<int>() of 6.7e9 is undefined behaviour (found by
    // fuzz_checkpoint_metadata).
    const auto version = json.at("format_version").get<int64_t>();
    if (version < 1 || version > kFormatVersion) {
      throw CheckpointError("unsupported checkpoint format version " + std::to_string(version) +
                            " (this build reads 1.." + std::to_string(kFormatVersion) + ")");
    }
    m.format_version = static_cast<int>(version);
    m.model = ModelConfig::from_json(json.at("model"));
    const auto& info = model_info(m.model.kind);
    if (m.format_version < info.definition_version) {
      throw CheckpointError(
          "this " + info.display_name + " checkpoint (format version " +
          std::to_string(m.format_version) +
          ") predates the model's corrected definition (paper eq. 10 on attention weights, "
          "two-layer token embedders); its weights do not fit it: retrain it with the command "
          "in its metadata");
    }
    m.task = json.value("task", nlohmann::json::object());
    m.steps = json.value("steps", int64_t{0});
    m.planned_steps = json.value("planned_steps", int64_t{0});
    const auto& best =
        json.contains("best_of_run") ? json.at("best_of_run") : nlohmann::json(false);
    if (!best.is_boolean())
      throw CheckpointError("malformed metadata: 'best_of_run' is not true or false");
    m.best_of_run = best.get<bool>();
    m.wall_time_s = json.value("wall_time_s", 0.0);
    m.device = json.value("device", std::string());
    const auto& ll = json.contains("validation_ll") ? json.at("validation_ll") : nlohmann::json();
    m.validation_ll = ll.is_number() ? ll.get<double>() : std::nan("");
    if (json.contains("seed")) {
      // A negative floating-point seed cast to uint64 would be undefined behaviour.
      const auto& seed = json.at("seed");
      if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
        throw CheckpointError("malformed metadata: 'seed' must be a non-negative integer");
      m.seed = seed.get<uint64_t>();
    }
    m.size = json.value("size", std::string());
    m.command = json.value("command", std::string());
    m.created_at = json.value("created_at", std::string());
    m.libtorch_version = json.value("libtorch_version", std::string());
    if (json.contains("sessions")) {
      const auto& sessions = json.at("sessions");
      if (!sessions.is_array())
        throw CheckpointError("malformed metadata: 'sessions' is not a list");
      for (const auto& session : sessions)
        m.sessions.push_back(TrainingSession::from_json(session));
    }
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(std::string("malformed metadata: ") + e.what());
  }
  return m;
}

namespace {

void write_checkpoint_archive(const std::filesystem::path& path,
                              torch::serialize::OutputArchive& archive) {
  try {
    write_atomically(path, [&archive, &path](const std::filesystem::path& tmp) {
      ArchiveFileSink sink(tmp);
      try {
        archive.save_to([&sink](const void* data, size_t size) { return sink.write(data, size); });
      } catch (const c10::Error& e) {
        throw CheckpointError("cannot write checkpoint '" + path.string() +
                              "': " + first_line(e.what_without_backtrace()));
      }
      const auto problem = sink.close();
      if (!problem.empty()) {
        throw CheckpointError("cannot write checkpoint '" + path.string() + "': " + problem);
      }
      return true;
    });
  } catch (const CheckpointError&) {
    throw;
  } catch (const Error& e) {
    throw CheckpointError("cannot write checkpoint '" + path.string() + "': " + e.what());
  }
}

}  // namespace

void save_checkpoint(const std::filesystem::path& path, NeuralProcessImpl& model,
                     const CheckpointMetadata& metadata, const ArchiveWriter& extra) {
  auto state = named_state(model);
  torch::serialize::OutputArchive archive;
  archive.write(kMetadataKey, c10::IValue(metadata.to_json().dump(2)));
  archive.write(kChecksumKey, c10::IValue(std::to_string(checksum(state))));
  for (const auto& [name, tensor] : state) {
    archive.write(name, tensor.detach().to(torch::kCPU));
  }
  if (extra) extra(archive);
  // The folder is made (again) if it is missing: a training run whose output folder was deleted
  // under it puts it back at its next checkpoint, also when the folder vanished mid-write (then
  // the write is tried once more).
  const auto folder_missing = [&path] {
    if (!path.has_parent_path()) return false;
    std::error_code ec;
    const bool missing = !std::filesystem::exists(path.parent_path(), ec);
    if (missing) std::filesystem::create_directories(path.parent_path(), ec);
    return missing;
  };
  folder_missing();
  for (int attempt = 0;; ++attempt) {
    try {
      write_checkpoint_archive(path, archive);
      return;
    } catch (const Error&) {
      if (attempt > 0 || !folder_missing()) throw;
    }
  }
}

CheckpointMetadata read_checkpoint_metadata(const std::filesystem::path& path) {
  auto archive = open_checkpoint_archive(path);
  return read_metadata(archive, path);
}

LoadedCheckpoint load_checkpoint(const std::filesystem::path& path, torch::Device device) {
  auto archive = open_checkpoint_archive(path);
  LoadedCheckpoint loaded{nullptr, read_metadata(archive, path)};
  try {
    loaded.model = make_model(loaded.metadata.model);
  } catch (const Error& e) {
    throw CheckpointError("checkpoint '" + path.string() + "': " + e.what());
  } catch (const c10::Error& e) {
    throw CheckpointError("checkpoint '" + path.string() + "': its model cannot be built: " +
                          first_line(e.what_without_backtrace()));
  }
  auto state = named_state(*loaded.model);
  torch::NoGradGuard no_grad;
  try {
    for (auto& [name, target] : state) {
      torch::Tensor stored;
      if (!archive.try_read(name, stored)) {
        throw CheckpointError("checkpoint '" + path.string() + "' lacks weights '" + name +
                              "' required by its " + loaded.metadata.model.kind + " model");
      }
      if (const auto problem = find_view_beyond_storage(stored)) {
        throw CheckpointError("checkpoint '" + path.string() + "' is corrupt: weights '" + name +
                              "' are " + *problem);
      }
      if (stored.sizes() != target.sizes()) {
        std::ostringstream msg;
        msg << "checkpoint '" << path.string() << "': weights '" << name << "' have shape "
            << stored.sizes() << " but the model needs " << target.sizes();
        throw CheckpointError(msg.str());
      }
      target.copy_(stored);
    }
    c10::IValue stored_checksum;
    if (!archive.try_read(kChecksumKey, stored_checksum) || !stored_checksum.isString() ||
        stored_checksum.toStringRef() != std::to_string(checksum(state))) {
      throw CheckpointError("checkpoint '" + path.string() +
                            "' is corrupt: its weights do not match the stored checksum");
    }
  } catch (const c10::Error& e) {
    throw CheckpointError("checkpoint '" + path.string() +
                          "' is corrupt: " + first_line(e.what_without_backtrace()));
  } catch (const std::out_of_range& e) {
    throw CheckpointError("checkpoint '" + path.string() + "' is corrupt: " + first_line(e.what()));
  }
  loaded.model->to(device);
  loaded.model->eval();
  return loaded;
}

}  // namespace npe
