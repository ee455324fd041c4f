#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>

#include <torch/torch.h>

#include "commands.h"
#include "field_options.h"
#include "npe/atomic_file.h"
#include "npe/crash_report.h"
#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/json_fields.h"
#include "npe/models/auto_precision.h"
#include "npe/models/checkpoint.h"
#include "npe/models/compute_settings.h"
#include "npe/models/model_registry.h"
#include "npe/output_lock.h"
#include "npe/runtime.h"
#include "npe/training/distributed.h"
#include "npe/training/training_job.h"
#include "npe/training/training_recipe.h"
#include "option_values.h"
#include "terminal_progress.h"
#include "training_control.h"

namespace npe::cli {

void add_thread_option(CLI::App& command, RuntimeArguments& runtime) {
  command.add_option("--threads", runtime.threads, "Intra-op threads (0 = all cores)")
      ->check(CLI::Range(0, kMaxThreads))
      ->capture_default_str();
}

void add_runtime_options(CLI::App& command, RuntimeArguments& runtime) {
  add_thread_option(command, runtime);
  command
      .add_option("--precision", runtime.precision,
                  "Pairwise MLPs of TE models and BSA-TNP's linear layers in fp32 or bf16 "
                  "(float32 softmax, loss and optimiser); auto: bf16 where the TE attention "
                  "kernel runs >1.15x faster in it on this CPU (measured at start), fp32 on CUDA")
      ->check(CLI::IsMember({"fp32", "bf16", "auto"}))
      ->capture_default_str();
  command
      .add_option("--te-attention", runtime.attention,
                  "TE attention: fused (the CPU's tiled kernel, float32), plain (libtorch ops "
                  "on whole pair tensors), blocked (query blocks recomputed in the backward pass: "
                  "memory bounded by one block, any device) or auto (fused on the CPU unless its "
                  "training memory would not fit, blocked on CUDA)")
      ->check(CLI::IsMember({"auto", "fused", "plain", "blocked"}))
      ->capture_default_str();
  command
      .add_option("--te-attention-block-mib", runtime.attention_block_mib,
                  "Memory of one block of the blocked TE attention (0: a sixteenth of the "
                  "available memory on the CPU, an eighth of the free memory on CUDA)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
}

int apply_runtime_options(const RuntimeArguments& runtime, torch::Device device) {
  configure_allocator();
  const int threads = configure_threads(runtime.threads);
  // "auto" times the CPU's fused TE kernel in both precisions, which says nothing about a GPU:
  // there it keeps float32 unless bf16 is asked for.
  const bool auto_on_cuda = runtime.precision == "auto" && device.is_cuda();
  set_pairwise_precision(auto_on_cuda ? Precision::fp32 : parse_precision(runtime.precision));
  set_attention_implementation(parse_attention_implementation(runtime.attention));
  set_attention_block_bytes(runtime.attention_block_mib * (int64_t{1} << 20));
  return threads;
}

std::string describe_precision(const RuntimeArguments& runtime, torch::Device device) {
  std::string text = precision_name(pairwise_precision());
  if (runtime.precision != "auto" || device.is_cuda()) return text;
  return text + " (auto: " + auto_precision().reason + ")";  // decided by parse_precision("auto")
}

namespace {

struct TrainArguments {
  std::string kind, out, task = "gp1d", size = "small", device = "cpu", resume, spec;
  std::vector<std::string> task_options, model_options;
  TrainOptions options;
  int64_t checkpoint_every = 500;
  bool progress_json = false;
  bool steps_given = false;
  bool precision_given = false;
  RuntimeArguments runtime;
};

// One JSON object per line on stdout, flushed at once: the protocol of --progress-json.
void emit(const nlohmann::json& event) {
  const auto line = event.dump() + "\n";
  const bool written = std::fwrite(line.data(), 1, line.size(), stdout) == line.size();
  if (std::fflush(stdout) != 0 || !written) {
    // The reader is gone (a dropped ssh connection, a closed pipe): stop after a final
    // checkpoint instead of training on unseen. Later lines are dropped, not retried.
    std::clearerr(stdout);
    TrainingControl::output_lost();
  }
}

// A recipe is a few hundred bytes; a larger "recipe" is the wrong file.
constexpr size_t kMaxRecipeBytes = size_t{1} << 20;

// A recipe given as `--spec -`: one line of standard input, read byte by byte so that nothing
// after it (the pause / resume / stop commands of --progress-json) is taken from the stream.
std::string read_recipe_line() {
  std::string line;
  char c = 0;
  for (;;) {
    const auto n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    if (line.size() >= kMaxRecipeBytes) throw UsageError("--spec -: the recipe line is too long");
    line += c;
  }
  if (line.empty()) throw UsageError("--spec -: standard input has no recipe line");
  return line;
}

// The recipe of --spec FILE (or - for a line of standard input).
TrainingRecipe read_recipe(const std::string& path) {
  std::string text;
  if (path == "-") {
    text = read_recipe_line();
  } else {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw UsageError("--spec: cannot read " + path);
    text.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    if (text.size() > kMaxRecipeBytes) throw UsageError("--spec: " + path + " is too large");
  }
  const auto where = path == "-" ? std::string("standard input") : path;
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw UsageError("--spec: " + where + " is not JSON");
  try {
    return TrainingRecipe::from_json(json);
  } catch (const Error& e) {  // a setting above its maximum is a ResourceLimitError
    throw UsageError("--spec: " + where + ": " + e.what());
  }
}

// What to train: the recipe of --spec, or the one the options describe.
TrainingRecipe recipe_of(const TrainArguments& a) {
  if (!a.spec.empty()) return read_recipe(a.spec);
  if (a.kind.empty()) {
    throw UsageError("train: --model is required (unless --resume or --spec is given)");
  }
  TrainingRecipe recipe;
  recipe.task = a.task;
  recipe.task_options = parse_key_values(a.task_options, "--task-option");
  recipe.model = a.kind;
  recipe.size = a.size;
  recipe.model_options = parse_key_values(a.model_options, "--model-option");
  recipe.training = a.options;
  return recipe;
}

// The command line a checkpoint records: with `--spec -`, the recipe read from standard input
// follows it as a here-string, so that the line alone repeats the run.
std::string recorded_command(const TrainArguments& a, const std::string& command_line,
                             const TrainingRecipe& recipe) {
  if (a.spec != "-") return command_line;
  std::string quoted;
  for (char c : recipe.to_json().dump())
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return command_line + " <<< '" + quoted + "'";
}

// A resumed run continues in the precision it trained in, unless --precision says otherwise:
// the default, auto, may pick another one on this machine (bf16 on CPUs with bf16 arithmetic).
RuntimeArguments runtime_for(const TrainArguments& a) {
  RuntimeArguments runtime = a.runtime;
  if (a.resume.empty() || a.precision_given) return runtime;
  std::string recorded;
  try {
    recorded = read_checkpoint_metadata(a.resume).training_precision();
  } catch (const Error&) {
    return runtime;  // TrainingJob::resume reports what is wrong with the file
  }
  if (recorded == "fp32" || recorded == "bf16") runtime.precision = recorded;
  return runtime;
}

int run_train(const TrainArguments& a, const std::string& command_line) {
  auto device = parse_device(a.device);
  const auto runtime = runtime_for(a);
  apply_runtime_options(runtime, device);
  const auto environment = distributed_environment_from_env();
  const bool distributed = environment && environment->world_size > 1;
  if (distributed && device.is_cuda()) {
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(environment->local_rank));
  }
  // Every process of a torchrun group would read the one standard input.
  if (distributed && a.spec == "-") {
    throw UsageError("--spec -: under torchrun give the recipe as a file (every process reads it)");
  }
  std::shared_ptr<DataParallelGroup> group;
  if (distributed) group = join_process_group(*environment, device);
  const bool leader = !group || group->rank() == 0;
  const bool json = a.progress_json;
  // A new job's recipe is read before the commands of --progress-json: `--spec -` takes its
  // line of standard input first.
  std::optional<TrainingRecipe> recipe;
  try {
    if (a.resume.empty()) {
      if (a.out.empty()) throw UsageError("train: --out is required (unless --resume is given)");
      recipe = recipe_of(a);
    }
  } catch (const std::exception& e) {
    if (json && leader) emit({{"event", "error"}, {"message", e.what()}});
    throw;
  }
  TrainingControl control(json && leader);

  std::unique_ptr<TrainingJob> job;
  std::filesystem::path out = a.out;
  OutputLock output_lock;
  try {
    const auto locked_path = out.empty() ? std::filesystem::path(a.resume) : out;
    if (leader && !locked_path.empty()) {
      // One writer per checkpoint. A resume waits for a run still ending on this file (after a
      // dropped SSH connection it writes its final checkpoint, which the resume continues).
      using namespace std::chrono_literals;
      output_lock = OutputLock::acquire(locked_path, a.resume.empty() ? 0ms : 120000ms);
    }
    if (!a.resume.empty()) {
      job = TrainingJob::resume(a.resume, device, command_line);
      if (a.steps_given) job->set_total_steps(a.options.steps);
      if (a.options.keep_best) job->keep_best();
      if (out.empty()) out = a.resume;
    } else {
      auto spec = recipe->resolve(recorded_command(a, command_line, *recipe));
      spec.options.device = device;
      job = std::make_unique<TrainingJob>(std::move(spec));
    }
    if (group) job->set_process_group(group);
    job->set_checkpoint(out, a.checkpoint_every);
  } catch (const Error& e) {
    if (json && leader) emit({{"event", "error"}, {"message", e.what()}});
    throw;
  }

  const auto& spec = job->spec();
  const auto& info = model_info(spec.model.kind);
  int64_t parameters = 0;
  for (const auto& p : job->model().parameters()) parameters += p.numel();
  const auto device_text = describe_device(device);
  const int world_size = group ? group->world_size() : 1;
  if (leader) {
    std::fprintf(stderr, "%s %s (%s size, %lld parameters) on %s, %s%s, %s, steps %lld to %lld\n",
                 a.resume.empty() ? "training" : "resuming", info.display_name.c_str(),
                 spec.size.c_str(), (long long)parameters, job->source().name().c_str(),
                 device_text.c_str(),
                 world_size > 1 ? (" x " + std::to_string(world_size) + " processes").c_str() : "",
                 describe_precision(runtime, device).c_str(), (long long)job->step() + 1,
                 (long long)job->total_steps());
    if (const auto data = job->source().describe(); !data.empty()) {
      std::fprintf(stderr, "%s\n", data.c_str());
    }
  }
  if (json && leader) {
    emit({{"event", "start"},
          {"step", job->step()},
          {"total_steps", job->total_steps()},
          {"model", spec.model.kind},
          {"model_name", info.display_name},
          {"task", job->source().name()},
          {"size", spec.size},
          {"parameters", parameters},
          {"device", device_text},
          {"precision", precision_name(pairwise_precision())},
          {"world_size", world_size},
          {"checkpoint", out.string()},
          {"resumed", !a.resume.empty()}});
    for (const auto& record : job->history()) {
      auto event = record.to_json();
      event["event"] = "validation";
      emit(event);
    }
  }

  // A human-readable copy of the metadata next to the checkpoint (and the best one's), rewritten
  // with every checkpoint so that the pair always matches, even if the run then dies.
  const auto write_metadata_copies = [&] {
    const auto best = best_checkpoint_path(out);
    for (const auto& path : {out, best}) {
      if (path == best && !job->spec().options.keep_best) continue;
      if (!std::filesystem::exists(path)) continue;  // --checkpoint-every 0, or not yet better
      write_file_atomically(path.string() + ".json",
                            read_checkpoint_metadata(path).to_json().dump(2) + "\n");
    }
  };

  std::unique_ptr<TerminalProgress> bar;
  if (leader && !json) {
    bar = std::make_unique<TerminalProgress>("train " + spec.model.kind, job->total_steps(),
                                             job->step());
  }
  // Progress lines at most this often (validations and checkpoints are always reported).
  constexpr double kJsonInterval = 0.25;
  auto last_line = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  TrainResult result;
  try {
    result = job->run([&](const TrainingStatus& s) {
      if (!leader) return !control.stop_requested();
      // A validation may have written a new best checkpoint.
      if (s.checkpoint || s.validation) write_metadata_copies();
      if (json) {
        const auto now = std::chrono::steady_clock::now();
        const bool due = std::chrono::duration<double>(now - last_line).count() >= kJsonInterval;
        if (due || s.validation || s.checkpoint || s.step == s.total_steps) {
          emit({{"event", "progress"},
                {"step", s.step},
                {"total_steps", s.total_steps},
                {"loss", json_number_or_null(s.loss)},
                {"smoothed_loss", json_number_or_null(s.smoothed_loss)},
                {"steps_per_s", s.steps_per_s},
                {"eta_s", json_number_or_null(s.eta_s)},
                {"wall_time_s", s.wall_time_s},
                {"device", device_text}});
          last_line = now;
        }
        if (s.validation) {
          auto event = s.validation->to_json();
          event["event"] = "validation";
          emit(event);
        }
        if (s.checkpoint) {
          emit({{"event", "checkpoint"}, {"step", s.step}, {"path", s.checkpoint->string()}});
        }
      } else {
        char details[128];
        const auto* v = s.validation ? s.validation
                                     : (job->history().empty() ? nullptr : &job->history().back());
        std::snprintf(
            details, sizeof details, "loss %.4f  val ll %s  %.1f steps/s", s.smoothed_loss,
            v && std::isfinite(v->validation_ll) ? std::to_string(v->validation_ll).c_str() : "-",
            s.steps_per_s);
        bar->update(s.step, details);
      }
      return control.proceed([&](bool paused) {
        if (json) emit({{"event", paused ? "paused" : "resumed"}, {"step", s.step}});
      });
    });
  } catch (const Error& e) {
    if (json && leader) emit({{"event", "error"}, {"message", e.what()}});
    throw;
  }
  if (bar) bar->finish();
  if (!leader) return 0;

  set_crash_phase("writing the metadata copies");
  write_metadata_copies();
  set_crash_phase("reporting the end of the run");
  if (json) {
    emit({{"event", "finished"},
          {"step", result.steps},
          {"total_steps", job->total_steps()},
          {"stopped", result.cancelled},
          {"val_ll", json_number_or_null(result.validation_ll)},
          {"val_ll_stderr", json_number_or_null(result.validation_ll_stderr)},
          {"wall_time_s", result.wall_time_s},
          {"checkpoint", out.string()}});
  }
  // With --progress-json, stdout carries JSON only: the summary goes to stderr.
  FILE* summary = json ? stderr : stdout;
  if (result.cancelled) {
    std::fprintf(summary,
                 "stopped %s at step %lld of %lld; checkpoint %s (continue with: npe train "
                 "--resume %s)\n",
                 spec.model.kind.c_str(), (long long)result.steps, (long long)job->total_steps(),
                 out.c_str(), out.c_str());
  } else if (spec.options.validation_tasks == 0 || !std::isfinite(result.validation_ll)) {
    // --val-tasks 0: nothing was validated, so there is no figure to print (not "nan ± nan").
    std::fprintf(summary, "trained %s for %lld steps in %s (not validated); saved %s\n",
                 spec.model.kind.c_str(), (long long)result.steps,
                 format_duration(result.wall_time_s).c_str(), out.c_str());
  } else {
    // Validation in one batch (under 16 tasks) has no spread between batches to report.
    char spread[32] = "";
    if (std::isfinite(result.validation_ll_stderr))
      std::snprintf(spread, sizeof spread, " ± %.4f", result.validation_ll_stderr);
    std::fprintf(summary,
                 "trained %s for %lld steps in %s; validation log-likelihood %.4f%s (%lld "
                 "tasks); saved %s\n",
                 spec.model.kind.c_str(), (long long)result.steps,
                 format_duration(result.wall_time_s).c_str(), result.validation_ll, spread,
                 (long long)spec.options.validation_tasks, out.c_str());
  }
  return 0;
}

}  // namespace

Command add_train_command(CLI::App& app, const std::string& command_line) {
  auto* command = app.add_subcommand(
      "train",
      "Train a model and write a resumable checkpoint (data-parallel under torchrun: "
      "torchrun --nproc-per-node N --no-python npe train ...)");
  auto a = std::make_shared<TrainArguments>();
  auto* model = command->add_option("--model", a->kind, "Model kind (" + model_kinds_text() + ")");
  command->add_option("--out", a->out,
                      "Checkpoint to write (metadata also to PATH.json); with --resume, "
                      "defaults to the resumed file");
  auto* task =
      command->add_option("--task", a->task, "Task: " + task_names_text())->capture_default_str();
  auto* task_option =
      command->add_option("--task-option", a->task_options, "KEY=VALUE setting of the task");
  auto* data_option = add_data_option(command, a->task_options);
  auto* model_option = command->add_option("--model-option", a->model_options,
                                           "KEY=VALUE field of the model config");
  auto* size = command->add_option("--size", a->size, "Size preset")
                   ->check(CLI::IsMember(model_sizes()))
                   ->capture_default_str();
  command->add_option("--device", a->device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  auto* seed =
      command->add_option("--seed", a->options.seed, "Seed of the weights and the training tasks")
          ->capture_default_str();
  // The training settings, their ranges and help are core's (TrainOptions::fields); three keep
  // their short names.
  const auto settings = add_field_options(
      *command, [options = &a->options](OptionVisitor& v) { options->fields(v); },
      [](const std::string& field) {
        if (field == "learning_rate") return std::string("--lr");
        if (field == "validation_every") return std::string("--val-every");
        if (field == "validation_tasks") return std::string("--val-tasks");
        return dashed_flag(field);
      });
  command
      ->add_option("--checkpoint-every", a->checkpoint_every,
                   "Write the resumable checkpoint every N steps (0: only at the end); it is "
                   "always written when training ends or is stopped")
      ->check(at_least(0))
      ->capture_default_str();
  auto* resume = command->add_option(
      "--resume", a->resume,
      "Continue the training job of this checkpoint (its model, task and options) from its "
      "step, in the precision it last trained in unless --precision is given");
  command->add_flag("--progress-json", a->progress_json,
                    "Report progress as one JSON object per line on stdout, and read the "
                    "commands pause, resume and stop from stdin");
  auto* spec = command->add_option(
      "--spec", a->spec,
      "Train what this recipe file says (JSON: task, task_options, model, size, model_options, "
      "training; '-' reads it as one line of standard input, as the Training tab passes it) "
      "instead of the options that describe it");
  // What a checkpoint fixes cannot be changed when resuming it; a new total of steps and
  // keeping the best model can. A recipe describes a whole new job.
  for (auto* fixed : {model, task, task_option, data_option, model_option, size, seed}) {
    resume->excludes(fixed);
    spec->excludes(fixed);
  }
  spec->excludes(resume);
  for (const auto& [field, option] : settings) {
    spec->excludes(option);
    if (field != "steps" && field != "keep_best") resume->excludes(option);
  }
  add_runtime_options(*command, a->runtime);
  return {command, [a, command, command_line] {
            a->steps_given = command->count("--steps") > 0;
            a->precision_given = command->count("--precision") > 0;
            return run_train(*a, command_line);
          }};
}

}  // namespace npe::cli
