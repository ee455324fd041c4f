// The accuracy table (npe bench accuracy's numbers): which baselines suit which tasks, pairing on
// the same tasks at every Δ, the exact baselines measured once, and their rows reused from an
// earlier table only where everything that decides them matches.

#include <filesystem>
#include <fstream>

#include "npe/data/task_registry.h"
#include "npe/errors.h"
#include "npe/training/accuracy_table.h"
#include "test_support.h"

namespace npe {
namespace {

AccuracyBaselineOptions small_baselines(std::vector<std::string> names) {
  AccuracyBaselineOptions options;
  options.names = std::move(names);
  options.tasks = 32;
  options.seed = 5;
  options.predictor.gp_bayes.grid_points = 8;
  options.predictor.gp_bayes.periodic_grid_points = 16;
  return options;
}

AccuracyTableOptions two_shifts() {
  AccuracyTableOptions options;
  options.shifts = {0.0, 2.5};
  options.seed = 5;
  return options;
}

TEST(AccuracyTable, BaselinesSuitTheTasks) {
  const auto gp = make_task_source("gp1d");
  std::vector<std::string> names;
  for (const auto& entry : accuracy_baselines(*gp, small_baselines({}))) {
    names.push_back(entry.name);
    // The exact baselines record what decides their numbers; the fitted GP is not reused.
    EXPECT_EQ(entry.baseline.has_value(), entry.name != "gp-fitted") << entry.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"gp-oracle", "gp-bayes", "gp-fitted"}));

  // Pictures carry no oracle and no GP prior: the Bayes ceiling is refused by name.
  const auto images = make_task_source("tfmnist");
  for (const auto& entry : accuracy_baselines(*images, small_baselines({}))) {
    EXPECT_FALSE(entry.predictor->info().capabilities.needs_gp_prior) << entry.name;
    EXPECT_FALSE(entry.predictor->info().capabilities.needs_oracle) << entry.name;
  }
  NPE_EXPECT_THROW_WITH(accuracy_baselines(*images, small_baselines({"gp-bayes"})), ConfigError,
                        "gp-bayes averages over the prior of GP tasks");
}

TEST(AccuracyTable, GapsArePairedAndTheExactBaselinesAreMeasuredOnce) {
  const auto source = make_task_source("gp1d");
  AccuracyTable table(*source,
                      accuracy_baselines(*source, small_baselines({"gp-oracle", "gp-bayes"})),
                      two_shifts());
  // Each exact baseline is evaluated at the first Δ only.
  EXPECT_EQ(table.total_tasks(), 2 * 32);
  table.measure();
  ASSERT_EQ(table.oracle(), std::optional<size_t>(0));
  ASSERT_EQ(table.ceiling(), std::optional<size_t>(1));
  ASSERT_EQ(table.zero_shift(), std::optional<size_t>(0));
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_EQ(table.gap_to_oracle(0, s).mean, 0.0);
    EXPECT_EQ(table.gap_to_ceiling(1, s).mean, 0.0);
  }
  EXPECT_EQ(table.result(1, 1).batch_ll, table.result(1, 0).batch_ll);
  const auto rows = table.rows("north");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[3].at("model"), "gp-bayes");
  EXPECT_EQ(rows[3].at("shift"), 2.5);
  EXPECT_EQ(rows[3].at("variant"), "north");
  EXPECT_EQ(rows[3].at("evaluated_at_shift"), 0.0);
  EXPECT_EQ(rows[3].at("settings").at("bayes_grid"), 8);
  EXPECT_DOUBLE_EQ(rows[2].at("gap_to_oracle").get<double>(), table.gap_to_oracle(1, 0).mean);
  // Both baselines predict joint Gaussians: their gap is to gp-bayes' joint mixture.
  EXPECT_EQ(rows[2].at("ceiling"), "joint");
  EXPECT_DOUBLE_EQ(table.gap_to_ceiling(0, 0).mean,
                   paired_joint_difference(table.result(1, 0), table.result(0, 0)).mean);
}

TEST(AccuracyTable, StoredBaselinesAreReusedOnlyForTheSameTasks) {
  const auto source = make_task_source("gp1d");
  AccuracyTable first(*source, accuracy_baselines(*source, small_baselines({"gp-oracle"})),
                      two_shifts());
  first.measure();
  const auto file = std::filesystem::temp_directory_path() /
                    ("npe-accuracy-table-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << first.rows().dump();
  const StoredBaselines stored(file);

  auto options = two_shifts();
  options.stored = &stored;
  AccuracyTable again(*source, accuracy_baselines(*source, small_baselines({"gp-oracle"})),
                      options);
  EXPECT_EQ(again.total_tasks(), 0);
  again.measure();
  EXPECT_TRUE(again.from_stored(0));
  EXPECT_EQ(again.result(0, 1).batch_ll, first.result(0, 1).batch_ll);
  EXPECT_EQ(again.rows()[0].at("stored_in"), file.string());

  auto other_seed = small_baselines({"gp-oracle"});
  other_seed.seed = 6;
  NPE_EXPECT_THROW_WITH(AccuracyTable(*source, accuracy_baselines(*source, other_seed), options),
                        DataError, "seed 5 (here 6)");
  std::filesystem::remove(file);
  NPE_EXPECT_THROW_WITH(StoredBaselines{file}, DataError, "cannot read");
}

}  // namespace
}  // namespace npe
