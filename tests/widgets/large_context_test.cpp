// Rounds on large contexts: the cheapest models draw first, models whose whole-context cost
// exceeds the round's budget predict from an evenly spread subset and say so, GP baselines
// beyond their exact limit use a subset of data, and large pictures are read scaled.

#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include "common/context_budget.h"
#include "common/metrics_table.h"
#include "common/model_entry.h"
#include "common/model_list.h"
#include "common/prediction_service.h"
#include "image/image_source.h"

using namespace npe::widgets;

namespace {

// A predictor whose cost model and speed the test chooses: `flops_per_point` FLOPs per context
// point (plus `fixed_flops`), and it sleeps `sleep_ms` per call. It records the context sizes
// it was given.
class ScriptedPredictor final : public npe::Predictor {
 public:
  ScriptedPredictor(double flops_per_point, double fixed_flops, int sleep_ms)
      : Predictor({"scripted", "Scripted", "a test predictor", {}}),
        m_flops_per_point(flops_per_point),
        m_fixed_flops(fixed_flops),
        m_sleep_ms(sleep_ms) {}
  npe::Prediction predict(const npe::TaskBatch& batch) override {
    {
      std::lock_guard lock(m_mutex);
      m_seen.push_back(batch.task.num_context());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(m_sleep_ms));
    const auto shape = std::vector<int64_t>{batch.task.batch_size(), batch.task.num_targets(), 1};
    return {torch::zeros(shape), torch::ones(shape)};
  }
  double prediction_flops(const npe::BatchShape& shape) const override {
    return m_fixed_flops + m_flops_per_point * double(shape.num_context);
  }
  std::vector<int64_t> seen() const {
    std::lock_guard lock(m_mutex);
    return m_seen;
  }

 private:
  double m_flops_per_point, m_fixed_flops;
  int m_sleep_ms;
  mutable std::mutex m_mutex;
  std::vector<int64_t> m_seen;
};

ModelEntry scripted_entry(const QString& id, std::shared_ptr<ScriptedPredictor> predictor) {
  ModelEntry entry;
  entry.id = id;
  entry.name = id;
  entry.enabled = true;
  entry.colour = Qt::red;
  entry.predictor = std::move(predictor);
  return entry;
}

// One 1-D task: `context` points on [-2, 2] and 64 query points.
PredictionRequest request_with_context(int64_t context) {
  PredictionRequest request;
  auto xc = torch::linspace(-2.0, 2.0, context).view({1, context, 1});
  request.batch.task = {xc, torch::sin(xc), torch::linspace(-2.0, 2.0, 64).view({1, 64, 1}), {}};
  return request;
}

}  // namespace

class LargeContextTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void theFastModelIsDeliveredBeforeTheSlowOne() {
    // Listed slow first: the round still runs and delivers the cheap one first.
    auto slow = std::make_shared<ScriptedPredictor>(0.0, 0.6e9, 400);  // ~300 ms estimated
    auto fast = std::make_shared<ScriptedPredictor>(0.0, 1.0e3, 0);
    auto request = request_with_context(100);
    request.models = {scripted_entry("slow", slow), scripted_entry("fast", fast)};
    std::vector<PredictionResult> deliveries;
    std::mutex mutex;
    RoundHooks hooks;
    hooks.on_progress = [&](const PredictionResult& so_far) {
      std::lock_guard lock(mutex);
      deliveries.push_back(so_far);
    };
    const auto final_result = compute_predictions(request, hooks);
    QVERIFY(!deliveries.empty());
    const auto& first = deliveries.front();
    QVERIFY(!first.complete);
    QCOMPARE(first.models.size(), size_t(1));
    QCOMPARE(first.models[0].id, QString("fast"));
    QCOMPARE(first.pending, std::vector<QString>{"slow"});
    // The last delivery has both, in the request's order.
    QVERIFY(final_result.complete);
    QVERIFY(final_result.pending.empty());
    QCOMPARE(final_result.models.size(), size_t(2));
    QCOMPARE(final_result.models[0].id, QString("slow"));
    QCOMPARE(final_result.models[1].id, QString("fast"));
  }

  void everyModelButTheLastIsDeliveredAsItFinishes() {
    // Fast models too: the tab draws each one at once and never waits for the slowest.
    auto a = std::make_shared<ScriptedPredictor>(0.0, 1.0e3, 0);
    auto b = std::make_shared<ScriptedPredictor>(0.0, 1.0e3, 0);
    auto request = request_with_context(100);
    request.models = {scripted_entry("a", a), scripted_entry("b", b)};
    std::vector<PredictionResult> deliveries;
    std::mutex mutex;
    RoundHooks hooks;
    hooks.on_progress = [&](const PredictionResult& so_far) {
      std::lock_guard lock(mutex);
      deliveries.push_back(so_far);
    };
    const auto result = compute_predictions(request, hooks);
    QCOMPARE(deliveries.size(), size_t(1));
    QVERIFY(!deliveries[0].complete);
    QCOMPARE(deliveries[0].models.size() + deliveries[0].pending.size(), size_t(2));
    QCOMPARE(result.models.size(), size_t(2));
    // One model alone is delivered once, complete.
    request.models = {scripted_entry("a", a)};
    deliveries.clear();
    QCOMPARE(compute_predictions(request, hooks).models.size(), size_t(1));
    QVERIFY(deliveries.empty());
  }

  void aModelStillComputingKeepsItsLastPredictionMarkedUpdating() {
    auto a = std::make_shared<ScriptedPredictor>(0.0, 1.0e3, 0);
    auto b = std::make_shared<ScriptedPredictor>(0.0, 1.0e3, 0);
    auto request = request_with_context(100);
    request.models = {scripted_entry("a", a), scripted_entry("b", b)};
    const auto shown = compute_predictions(request);
    // The next round has delivered "a" only.
    PredictionResult delivery = compute_predictions(request);
    delivery.complete = false;
    delivery.models.resize(1);
    delivery.pending = {"b"};
    auto merged = with_previous_predictions(delivery, shown);
    QCOMPARE(merged.models.size(), size_t(2));
    QVERIFY(!merged.models[0].updating);
    QCOMPARE(merged.models[1].id, QString("b"));
    QVERIFY(merged.models[1].updating);
    QVERIFY(torch::equal(merged.models[1].mean, shown.models[1].mean));
    QVERIFY(merged.pending.empty());
    // At other query points the old prediction would be drawn in the wrong place: not kept.
    delivery.xt = delivery.xt + 1.0;
    merged = with_previous_predictions(delivery, shown);
    QCOMPARE(merged.models.size(), size_t(1));
    QCOMPARE(merged.pending, std::vector<QString>{"b"});
    // A model that failed last time has nothing to keep.
    auto failed = shown;
    failed.xt = delivery.xt;
    failed.models[1].error = "broken";
    failed.models[1].mean = torch::Tensor();
    QCOMPARE(with_previous_predictions(delivery, failed).pending, std::vector<QString>{"b"});
  }

  void aContextOverTheBudgetIsSubsampledAndTheRowSaysSo() {
    // 10^5 FLOPs per point: 200,000 points would take ~10 s at the default speed, far over the
    // live budget; the model gets the largest evenly spread subset that fits.
    auto model = std::make_shared<ScriptedPredictor>(1.0e5, 0.0, 0);
    auto request = request_with_context(200000);
    request.models = {scripted_entry("big", model)};
    const auto result = compute_predictions(request);
    QCOMPARE(result.models.size(), size_t(1));
    const auto& prediction = result.models[0];
    QVERIFY2(prediction.error.isEmpty(), qPrintable(prediction.error));
    QVERIFY(prediction.context.subset());
    QCOMPARE(prediction.context.total, int64_t(200000));
    QCOMPARE(model->seen(), std::vector<int64_t>{prediction.context.context});
    QVERIFY(prediction.context.context >= kMinimumContext);
    QVERIFY(prediction.context.estimated_ms <= kLiveBudgetMs);
    // At the default speed the budget allows about 9,960 points (the bisection stops within
    // 1/64 of the answer, below it).
    const double allowed = (kLiveBudgetMs - CostCalibration::kOverheadMs) *
                           CostCalibration::kDefaultFlopsPerMs / 1.0e5;
    QVERIFY(prediction.context.context <= allowed);
    QVERIFY(prediction.context.context > allowed * 0.95);
    QVERIFY(prediction.subsetNote().endsWith("of 200,000 points"));

    // The settled round's budget is larger: more points.
    request.refine = true;
    const auto settled = compute_predictions(request);
    QVERIFY(settled.models[0].context.context > prediction.context.context);

    // The metrics row carries the note.
    ModelList list;
    list.add(scripted_entry("big", model), true);
    MetricsTable table(QString{});
    table.showResult(result, list);
    QVERIFY(table.cellText("big", 0).contains(prediction.subsetNote()));
  }

  void subsetsAreEvenlySpreadAndDeterministic() {
    auto request = request_with_context(1000);
    const auto subset = subsample_context(request.batch.task, 10);
    QCOMPARE(subset.num_context(), int64_t(10));
    // Points 0, 100, ..., 900 of the context.
    for (int64_t i = 0; i < 10; ++i) {
      QCOMPARE(subset.xc[0][i][0].item<float>(),
               request.batch.task.xc[0][i * 100][0].item<float>());
      QCOMPARE(subset.yc[0][i][0].item<float>(),
               request.batch.task.yc[0][i * 100][0].item<float>());
    }
    QVERIFY(torch::equal(subsample_context(request.batch.task, 10).xc, subset.xc));
    QCOMPARE(subsample_context(request.batch.task, 5000).num_context(), int64_t(1000));
  }

  void theCalibrationLearnsAModelsSpeed() {
    CostCalibration calibration;
    QCOMPARE(calibration.flops_per_ms("m"), CostCalibration::kDefaultFlopsPerMs);
    calibration.record("m", 1.0e9, 102.0);  // 10^7 FLOPs per ms
    QVERIFY(std::abs(calibration.flops_per_ms("m") - 1.0e7) < 1.0);
    calibration.record("m", 1.0e9, 0.0);  // no time measured: ignored
    QVERIFY(std::abs(calibration.flops_per_ms("m") - 1.0e7) < 1.0);
    calibration.record("m", 4.0e9, 102.0);  // 4 * 10^7: half-way on the log scale
    QVERIFY(std::abs(calibration.flops_per_ms("m") - 2.0e7) < 1.0);
    QCOMPARE(calibration.flops_per_ms("other"), CostCalibration::kDefaultFlopsPerMs);
    // A short call counts, with at most half of it put down to the overhead: a model the
    // default speed overestimates a hundredfold learns it from a 3 ms call.
    calibration.record("quick", 4.0e8, 3.0);
    QVERIFY(std::abs(calibration.flops_per_ms("quick") - 4.0e8 / 1.5) < 1.0);
  }

  void theGpBaselineUsesASubsetBeyondItsExactLimit() {
    auto request = request_with_context(5000);
    request.models = {baseline_entry("gp-fitted", 5, 5, 1000)};
    const auto result = compute_predictions(request);
    const auto& prediction = result.models[0];
    QVERIFY2(prediction.error.isEmpty(), qPrintable(prediction.error));
    QVERIFY(prediction.context.context <= 1000);
    QCOMPARE(prediction.context.total, int64_t(5000));
    QVERIFY(prediction.subsetNote().endsWith("of 5,000 points"));
    QVERIFY(torch::isfinite(prediction.mean).all().item<bool>());
    // sin(x) is predicted well from the subset.
    auto truth = torch::sin(torch::linspace(-2.0, 2.0, 64)).view({64, 1});
    QVERIFY((prediction.mean - truth).abs().max().item<double>() < 0.05);
  }

  void anEightThousandPixelPictureOpens() {
    QTemporaryDir dir;
    const auto path = dir.filePath("big.png");
    {
      // Colour, so that Qt would decode it as 32-bit pixels: 256 MB, over its 128 MB limit.
      QImage image(8000, 8000, QImage::Format_RGB32);
      image.fill(QColor(20, 20, 20));
      for (int y = 2000; y < 6000; ++y) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(y));
        for (int x = 3000; x < 5000; ++x) line[x] = qRgb(230, 200, 180);
      }
      QVERIFY(image.save(path, "PNG", 100));
    }
    const auto source = picture_file(path);
    QCOMPARE(source.pixels.size(0), int64_t(ImageSource::kSide));
    // The bright block in the middle, the dark border around it.
    const int mid = ImageSource::kSide / 2;
    QVERIFY(source.pixels[mid][mid].item<float>() > 0.6f);
    QVERIFY(source.pixels[1][1].item<float>() < 0.2f);
    QVERIFY(source.description.contains("8000×8000"));
  }
};

QTEST_MAIN(LargeContextTest)
#include "large_context_test.moc"
