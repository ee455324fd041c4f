// Training as a resumable job: exact continuation from a checkpoint, what the checkpoint holds,
// the metrics measured during training, and clear errors for checkpoints that cannot resume.

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "npe/data/gp_tasks.h"
#include "npe/models/checkpoint.h"
#include "npe/models/compute_settings.h"
#include "npe/models/model_registry.h"
#include "npe/seeds.h"
#include "npe/training/optimizer_state.h"
#include "npe/training/training_job.h"
#include "test_support.h"

namespace npe {
namespace {

namespace fs = std::filesystem;
using npe::testing::tiny_config;

class TrainingJobTest : public npe::testing::TemporaryFolderTest {
 protected:
  static TrainingSpec spec(const std::string& kind, int64_t steps) {
    TrainingSpec s;
    s.model = tiny_config(kind);
    s.task = GpTaskGenerator().to_json();
    s.size = "custom";
    s.options.steps = steps;
    s.options.batch_size = 4;
    s.options.learning_rate = 3e-3;
    // The cosine schedule depends on the step: a resumed job that lost count would differ.
    s.options.lr_schedule = "cosine";
    s.options.seed = 7;
    s.options.validation_every = 4;
    s.options.validation_tasks = 32;  // two validation batches: a standard error
    return s;
  }

  static void expect_same_weights(NeuralProcessImpl& a, NeuralProcessImpl& b) {
    auto pa = a.named_parameters(true);
    auto pb = b.named_parameters(true);
    ASSERT_EQ(pa.size(), pb.size());
    for (const auto& item : pa) {
      const auto& other = pb[item.key()];
      EXPECT_TRUE(torch::equal(item.value(), other))
          << item.key() << " differs by " << (item.value() - other).abs().max().item<double>();
    }
  }
};

TEST_F(TrainingJobTest, ResumedJobReachesTheSameWeightsBitwise) {
  TrainingJob uninterrupted(spec("tnp", 12));
  uninterrupted.run();

  const auto path = dir / "job.pt";
  {
    TrainingJob first(spec("tnp", 12));
    first.set_checkpoint(path, 0);
    // Stopping writes a final checkpoint at the step reached.
    auto result = first.run([](const TrainingStatus& s) { return s.step < 5; });
    EXPECT_TRUE(result.cancelled);
    EXPECT_EQ(result.steps, 5);
  }
  auto resumed = TrainingJob::resume(path);
  EXPECT_EQ(resumed->step(), 5);
  EXPECT_EQ(resumed->total_steps(), 12);
  resumed->run();
  EXPECT_EQ(resumed->step(), 12);
  expect_same_weights(uninterrupted.model(), resumed->model());
  // The validation history continues too: same records at the same steps.
  ASSERT_EQ(resumed->history().size(), uninterrupted.history().size());
  for (size_t i = 0; i < resumed->history().size(); ++i) {
    EXPECT_EQ(resumed->history()[i].step, uninterrupted.history()[i].step);
    EXPECT_DOUBLE_EQ(resumed->history()[i].validation_ll, uninterrupted.history()[i].validation_ll);
  }
}

// --keep-best: the model of the best validation so far, beside the resumable checkpoint.
TEST_F(TrainingJobTest, KeepBestWritesTheModelOfTheBestValidation) {
  auto s = spec("cnp", 16);
  s.options.validation_every = 2;
  s.options.keep_best = true;
  s.options.learning_rate = 3e-2;  // large enough to make the validation go up and down
  const auto path = dir / "job.pt";
  TrainingJob job(s);
  job.set_checkpoint(path, 0);
  job.run();
  const auto best = best_checkpoint_path(path);
  EXPECT_EQ(best, dir / "job.best.pt");
  ASSERT_TRUE(fs::exists(best));
  int64_t best_step = 0;
  double best_ll = -std::numeric_limits<double>::infinity();
  for (const auto& record : job.history()) {
    if (record.validation_ll > best_ll) best_ll = record.validation_ll, best_step = record.step;
  }
  const auto meta = read_checkpoint_metadata(best);
  EXPECT_EQ(meta.steps, best_step);
  EXPECT_DOUBLE_EQ(meta.validation_ll, best_ll);
  EXPECT_TRUE(meta.best_of_run);
  EXPECT_FALSE(read_checkpoint_metadata(path).best_of_run);
  // It resumes from that step, keeping the option.
  auto resumed = TrainingJob::resume(best);
  EXPECT_EQ(resumed->step(), best_step);
  EXPECT_TRUE(resumed->spec().options.keep_best);
  // A job started without it can take it up when resumed; earlier validations still count.
  auto plain = spec("cnp", 8);
  plain.options.validation_every = 2;
  const auto later = dir / "later.pt";
  {
    TrainingJob first(plain);
    first.set_checkpoint(later, 0);
    first.run([](const TrainingStatus& s) { return s.step < 4; });
  }
  auto taken_up = TrainingJob::resume(later);
  taken_up->keep_best();
  taken_up->set_checkpoint(later, 0);
  taken_up->run();
  double earlier_best = -std::numeric_limits<double>::infinity(), later_best = earlier_best;
  for (const auto& record : taken_up->history()) {
    auto& best_of = record.step <= 4 ? earlier_best : later_best;
    best_of = std::max(best_of, record.validation_ll);
  }
  EXPECT_EQ(fs::exists(best_checkpoint_path(later)), later_best > earlier_best);
}

TEST_F(TrainingJobTest, ResumingTwiceFromPeriodicCheckpointsIsStillExact) {
  TrainingJob uninterrupted(spec("tetnp", 9));
  uninterrupted.run();
  const auto path = dir / "job.pt";
  {
    TrainingJob job(spec("tetnp", 9));
    job.set_checkpoint(path, 3);
    job.run([](const TrainingStatus& s) { return s.step < 4; });  // checkpoints at 3, then 4
  }
  {
    auto job = TrainingJob::resume(path);
    job->set_checkpoint(path, 3);
    job->run([](const TrainingStatus& s) { return s.step < 6; });
  }
  auto job = TrainingJob::resume(path);
  EXPECT_EQ(job->step(), 6);
  job->run();
  expect_same_weights(uninterrupted.model(), job->model());
}

TEST_F(TrainingJobTest, CheckpointIsAnOrdinaryCheckpointWithItsPlan) {
  const auto path = dir / "job.pt";
  TrainingJob job(spec("cnp", 8));
  job.set_checkpoint(path, 0);
  job.run([](const TrainingStatus& s) { return s.step < 3; });
  // The explorer opens it like any checkpoint while training goes on.
  auto loaded = load_checkpoint(path);
  EXPECT_EQ(loaded.metadata.steps, 3);
  EXPECT_EQ(loaded.metadata.planned_steps, 8);
  EXPECT_EQ(loaded.metadata.model.kind, "cnp");
}

// Every run of a job is recorded in the metadata: the first with its command, each
// resumption with its own, the steps each trained and its wall time, so a shipped model says
// how it was made across machines.
TEST_F(TrainingJobTest, EveryResumptionIsRecordedInTheMetadata) {
  const auto path = dir / "job.pt";
  auto first = spec("cnp", 8);
  first.command = "npe train --model cnp --steps 8";
  {
    TrainingJob job(first);
    job.set_checkpoint(path, 0);
    job.run([](const TrainingStatus& s) { return s.step < 3; });
  }
  {
    auto job = TrainingJob::resume(path, torch::kCPU, "npe train --resume job.pt");
    job->set_checkpoint(path, 0);
    job->run([](const TrainingStatus& s) { return s.step < 5; });
  }
  auto job = TrainingJob::resume(path, torch::kCPU, "npe train --resume job.pt --steps 8");
  job->set_checkpoint(path, 0);
  job->run();
  const auto sessions = read_checkpoint_metadata(path).sessions;
  ASSERT_EQ(sessions.size(), 3u);
  EXPECT_EQ(sessions[0].command, first.command);
  EXPECT_EQ(sessions[1].command, "npe train --resume job.pt");
  EXPECT_EQ(sessions[2].command, "npe train --resume job.pt --steps 8");
  const std::vector<std::pair<int64_t, int64_t>> steps = {{0, 3}, {3, 5}, {5, 8}};
  double wall = 0.0;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sessions[i].from_step, steps[i].first) << i;
    EXPECT_EQ(sessions[i].to_step, steps[i].second) << i;
    EXPECT_GT(sessions[i].wall_time_s, 0.0) << i;
    EXPECT_FALSE(sessions[i].device.empty()) << i;
    EXPECT_EQ(sessions[i].started_at.size(), 20u) << sessions[i].started_at;  // ISO 8601, UTC
    wall += sessions[i].wall_time_s;
  }
  EXPECT_NEAR(wall, read_checkpoint_metadata(path).wall_time_s, 1e-9);
}

// Metadata from before sessions were recorded still loads (a resumed job then reconstructs the
// first run from its command, steps and wall time); malformed sessions are a clear error.
TEST_F(TrainingJobTest, MetadataWithoutSessionsLoadsAndMalformedSessionsAreRefused) {
  const auto path = dir / "job.pt";
  auto first = spec("cnp", 6);
  first.command = "npe train --model cnp --steps 6";
  {
    TrainingJob job(first);
    job.set_checkpoint(path, 0);
    job.run([](const TrainingStatus& s) { return s.step < 2; });
  }
  auto json = read_checkpoint_metadata(path).to_json();
  json.erase("sessions");
  auto old = CheckpointMetadata::from_json(json);
  EXPECT_TRUE(old.sessions.empty());
  json["sessions"] = "not a list";
  NPE_EXPECT_THROW_WITH(CheckpointMetadata::from_json(json), CheckpointError, "sessions");
  json["sessions"] = nlohmann::json::array({{{"command", 3}}});
  NPE_EXPECT_THROW_WITH(CheckpointMetadata::from_json(json), CheckpointError, "session");
}

// Each session records the precision it trained in, and a resumption reads the run's precision
// from the latest session that says: its recorded field, or for sessions from before it was
// recorded the --precision their commands name (so `auto` cannot switch a float32 run to
// bfloat16 halfway, which it did on CPUs with bf16 arithmetic).
TEST_F(TrainingJobTest, SessionsRecordThePrecisionAResumptionContinuesIn) {
  const auto path = dir / "job.pt";
  const auto before = pairwise_precision();
  set_pairwise_precision(Precision::bf16);
  {
    TrainingJob job(spec("cnp", 4));
    job.set_checkpoint(path, 0);
    job.run([](const TrainingStatus& s) { return s.step < 2; });
  }
  set_pairwise_precision(Precision::fp32);
  {
    auto job = TrainingJob::resume(path, torch::kCPU, "npe train --resume job.pt");
    job->set_checkpoint(path, 0);
    job->run();
  }
  set_pairwise_precision(before);
  auto metadata = read_checkpoint_metadata(path);
  ASSERT_EQ(metadata.sessions.size(), 2u);
  EXPECT_EQ(metadata.sessions[0].precision, "bf16");
  EXPECT_EQ(metadata.sessions[1].precision, "fp32");
  EXPECT_EQ(metadata.training_precision(), "fp32");

  // Sessions from before the field: the latest command that names one, in either spelling.
  for (auto& session : metadata.sessions) session.precision.clear();
  metadata.sessions[0].command = "npe train --model cnp --precision bf16 --out job.pt";
  metadata.sessions[1].command = "npe train --resume job.pt --threads 1";
  EXPECT_EQ(metadata.training_precision(), "bf16");
  metadata.sessions[1].command = "npe train --resume job.pt --precision=fp32";
  EXPECT_EQ(metadata.training_precision(), "fp32");
  metadata.sessions.clear();
  metadata.command = "npe train --model cnp --precision bf16";
  EXPECT_EQ(metadata.training_precision(), "bf16");
  metadata.command = "npe train --model cnp";
  EXPECT_EQ(metadata.training_precision(), "");

  // The field survives the JSON round trip, may be absent, and must be a string.
  auto json = read_checkpoint_metadata(path).to_json();
  EXPECT_EQ(CheckpointMetadata::from_json(json).sessions[0].precision, "bf16");
  json["sessions"][0].erase("precision");
  EXPECT_EQ(CheckpointMetadata::from_json(json).sessions[0].precision, "");
  json["sessions"][0]["precision"] = 16;
  NPE_EXPECT_THROW_WITH(CheckpointMetadata::from_json(json), CheckpointError, "session");
}

TEST_F(TrainingJobTest, RecordsLossValidationShiftedLikelihoodAndEquivarianceError) {
  TrainingJob plain(spec("tnp", 8));
  plain.run();
  TrainingJob equivariant(spec("tetnp", 8));
  equivariant.run();
  ASSERT_EQ(plain.history().size(), 2u);  // steps 4 and 8
  for (const auto* job : {&plain, &equivariant}) {
    for (const auto& r : job->history()) {
      EXPECT_TRUE(std::isfinite(r.loss));
      EXPECT_TRUE(std::isfinite(r.validation_ll));
      EXPECT_TRUE(std::isfinite(r.validation_ll_stderr));
      EXPECT_TRUE(std::isfinite(r.shifted_ll));
      EXPECT_GT(r.wall_time_s, 0.0);
    }
  }
  // Δ = 2 takes the context outside the training range: only the TE model is unaffected.
  // Measured under every BLAS kernel and thread count of tests/measure-learning-spread.sh: the
  // TE model's error below 1e-6 and its shifted LL equal to six digits, the TNP's error 0.0365.
  const auto& te = equivariant.history().back();
  testing::report_learning("equivariance error, TE and plain", te.equivariance_error,
                           plain.history().back().equivariance_error);
  testing::report_learning("TE validation LL, at 0 and shifted", te.validation_ll, te.shifted_ll);
  EXPECT_LT(te.equivariance_error, 1e-3);
  EXPECT_NEAR(te.shifted_ll, te.validation_ll, 1e-3);
  EXPECT_GT(plain.history().back().equivariance_error, 1e-2);
}

TEST_F(TrainingJobTest, WeightsOnlyCheckpointCannotBeResumed) {
  const auto path = dir / "weights.pt";
  auto model = make_model(tiny_config("cnp"));
  CheckpointMetadata meta;
  meta.model = model->config();
  save_checkpoint(path, *model, meta);
  NPE_EXPECT_THROW_WITH(TrainingJob::resume(path), CheckpointError, "weights only");
}

TEST_F(TrainingJobTest, CorruptTrainingStateIsAClearError) {
  const auto path = dir / "bad.pt";
  auto model = make_model(tiny_config("cnp"));
  CheckpointMetadata meta;
  meta.model = model->config();
  save_checkpoint(path, *model, meta, [](torch::serialize::OutputArchive& archive) {
    archive.write("npe_training_state", c10::IValue(std::string("{\"version\": 1, \"step\"")));
  });
  NPE_EXPECT_THROW_WITH(TrainingJob::resume(path), CheckpointError, "corrupt training state");
  NPE_EXPECT_THROW_WITH(TrainingJob::resume(dir / "missing.pt"), CheckpointError, "does not exist");
}

TEST_F(TrainingJobTest, LeftoversOfAKilledSaveAreRemovedAndTheCheckpointIsIntact) {
  const auto path = dir / "job.pt";
  {
    TrainingJob job(spec("cnp", 4));
    job.set_checkpoint(path, 0);
    job.run();
  }
  // What a process killed while writing its next checkpoint leaves: a partial temporary file.
  const auto partial = fs::path(path.string() + ".tmp-123");
  std::ofstream(partial) << "PK\x03\x04 partial";
  EXPECT_NO_THROW(load_checkpoint(path));
  auto job = TrainingJob::resume(path);
  job->set_checkpoint(path, 0);
  EXPECT_FALSE(fs::exists(partial));
}

TEST_F(TrainingJobTest, ExtendingAResumedJobAndRefusingToShrinkIt) {
  const auto path = dir / "job.pt";
  {
    TrainingJob job(spec("cnp", 4));
    job.set_checkpoint(path, 0);
    job.run();
  }
  auto job = TrainingJob::resume(path);
  NPE_EXPECT_THROW_WITH(job->set_total_steps(3), ConfigError, "already at step 4");
  job->set_total_steps(6);
  EXPECT_EQ(job->run().steps, 6);
}

// Settings outside today's input ranges that older versions accepted (a learning rate down to
// 1e-12, no maxima) still run and resume: the ranges apply where settings are given.
TEST_F(TrainingJobTest, ACheckpointWithSettingsOlderVersionsAcceptedResumes) {
  const auto path = dir / "old.pt";
  auto s = spec("cnp", 2);
  s.options.learning_rate = 1e-8;
  s.options.validation_every = int64_t{2'000'000'000};
  EXPECT_THROW(s.options.validate(), Error);
  {
    TrainingJob job(s);
    job.set_checkpoint(path, 0);
    job.run();
  }
  auto job = TrainingJob::resume(path);
  EXPECT_EQ(job->spec().options.learning_rate, 1e-8);
  job->set_total_steps(3);
  EXPECT_EQ(job->run().steps, 3);
}

TEST_F(TrainingJobTest, InvalidOptionsAreRejectedBeforeAnyWork) {
  auto s = spec("cnp", 4);
  s.options.accumulate = 0;
  NPE_EXPECT_THROW_WITH(TrainingJob job(s), ConfigError, "accumulate");
  s = spec("cnp", 4);
  s.options.lr_schedule = "linear";
  NPE_EXPECT_THROW_WITH(TrainingJob job(s), ConfigError, "lr_schedule must be");
}

// The optimiser's state travels by parameter name: a model built anew (other tensor addresses,
// as after a restart, on another device or under another libtorch) gets every moment back, and a
// model whose parameter has another shape is refused by name.
TEST(AdamwState, TravelsByParameterNameAndRefusesAShapeMismatch) {
  auto make = [](int64_t width) {
    auto module = std::make_shared<torch::nn::Module>();
    module->register_module("layer", torch::nn::Linear(3, width));
    return module;
  };
  auto source = make(4);
  torch::optim::AdamW optimizer(source->parameters(), torch::optim::AdamWOptions(1e-2));
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    const auto out = source->children()[0]->as<torch::nn::Linear>()->forward(torch::ones({2, 3}));
    out.pow(2).sum().backward();
    optimizer.step();
  }
  std::stringstream bytes;
  {
    torch::serialize::OutputArchive archive;
    write_adamw_state(archive, optimizer, *source);
    archive.save_to(bytes);
  }
  auto read_into = [&bytes](const torch::nn::Module& target, torch::optim::AdamW& into) {
    bytes.seekg(0);
    torch::serialize::InputArchive archive;
    archive.load_from(bytes);
    return read_adamw_state(archive, into, target, "test.pt");
  };

  auto same = make(4);
  torch::optim::AdamW restored(same->parameters(), torch::optim::AdamWOptions(1e-2));
  ASSERT_TRUE(read_into(*same, restored));
  check_adamw_state(restored, *same, "test.pt");  // every state fits its parameter
  // Written out again, the restored optimiser gives the original's records.
  auto records_of = [](const torch::optim::AdamW& of, const torch::nn::Module& model) {
    torch::serialize::OutputArchive out;
    write_adamw_state(out, of, model);
    std::stringstream stream;
    out.save_to(stream);
    torch::serialize::InputArchive in, records;
    in.load_from(stream);
    EXPECT_TRUE(in.try_read("npe_adamw_state", records));
    return records;
  };
  auto original = records_of(optimizer, *source);
  auto copy = records_of(restored, *same);
  for (const std::string name : {"layer.weight", "layer.bias"}) {
    for (const std::string record : {"/exp_avg", "/exp_avg_sq"}) {
      torch::Tensor a, b;
      ASSERT_TRUE(original.try_read(name + record, a)) << name << record;
      ASSERT_TRUE(copy.try_read(name + record, b)) << name << record;
      EXPECT_TRUE(torch::equal(a, b)) << name << record;
      EXPECT_GT(a.abs().sum().item<double>(), 0.0) << name << record;
    }
    c10::IValue step;
    ASSERT_TRUE(copy.try_read(name + "/step", step));
    EXPECT_EQ(step.toInt(), 3);
  }

  auto wider = make(5);
  torch::optim::AdamW refused(wider->parameters(), torch::optim::AdamWOptions(1e-2));
  NPE_EXPECT_THROW_WITH(read_into(*wider, refused), CheckpointError, "layer.weight");

  // An archive without the record (a checkpoint from before it existed) is not an error.
  torch::serialize::OutputArchive empty;
  std::stringstream empty_bytes;
  empty.save_to(empty_bytes);
  torch::serialize::InputArchive empty_archive;
  empty_archive.load_from(empty_bytes);
  EXPECT_FALSE(read_adamw_state(empty_archive, refused, *wider, "old.pt"));
}

// A resumable checkpoint written before the optimiser state was keyed by name (libtorch's own
// optimiser archive; written by npe of 2026-11-26 under libtorch 1.13) still resumes, with every
// parameter's state restored.
TEST_F(TrainingJobTest, CheckpointWithLibtorchsOptimiserArchiveStillResumes) {
  const auto path = dir / "legacy.pt";
  fs::copy_file(fs::path(NPE_TEST_DATA_DIR) / "legacy-optimizer-cnp.pt", path);
  auto job = TrainingJob::resume(path);
  ASSERT_EQ(job->step(), 3);
  const auto parameters = job->model().named_parameters();
  ASSERT_GT(parameters.size(), 0U);
  EXPECT_EQ(job->optimizer().state().size(), parameters.size());
  job->set_total_steps(5);
  EXPECT_EQ(job->run().steps, 5);
  // Saved again, it is in the new form, and resumes from that.
  job->save(path);
  auto again = TrainingJob::resume(path);
  EXPECT_EQ(again->step(), 5);
  EXPECT_EQ(again->optimizer().state().size(), parameters.size());
}

TEST(TrainOptions, JsonRoundTrip) {
  TrainOptions o;
  o.steps = 123;
  o.batch_size = 5;
  o.accumulate = 3;
  o.lr_schedule = "cosine";
  o.seed = 99;
  const auto back = TrainOptions::from_json(o.to_json());
  EXPECT_EQ(back.to_json(), o.to_json());
}

TEST(TrainingBatchSeed, ShardZeroIsTheSingleProcessStream) {
  EXPECT_EQ(training_batch_seed(3, 10, 0), derive_seed(3, kTrainStream, 10));
  EXPECT_NE(training_batch_seed(3, 10, 1), training_batch_seed(3, 10, 0));
  EXPECT_NE(training_batch_seed(3, 10, 1), training_batch_seed(3, 11, 1));
}

}  // namespace
}  // namespace npe
