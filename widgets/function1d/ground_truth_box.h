#pragma once
// The 1-D tab's "Ground truth" group and the function it defines: GP sample or free-hand mode,
// the kernel, its scale and the noise, and buttons to resample the function, sample context
// points or clear them; or, once a model trained on a series is open, a window of that series
// (its split and window).

#include <memory>
#include <optional>

#include <QGroupBox>

#include "function1d/ground_truth.h"
#include "function1d/series_truth.h"
#include "npe/ground/kernels.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace npe::widgets {

class GroundTruthBox final : public QGroupBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(GroundTruthBox)

 public:
  explicit GroundTruthBox(QWidget* parent = nullptr);

  /// GP-sample mode (else free-hand: points only, no function to compare with, or a series).
  bool hasTruth() const;
  /// A series model's data is shown: series() is its window.
  bool seriesMode() const;
  /// The window shown in series mode, else null.
  const SeriesTruth* series() const { return seriesMode() ? m_series.get() : nullptr; }
  /// The model whose data is offered (empty: none).
  const QString& seriesModelId() const { return m_series_model; }
  /// Offers the data of a model trained on a series as a third mode and switches to it (its
  /// first test window), emitting truthChanged. A later offer replaces an earlier one.
  void offerSeries(std::shared_ptr<const SeriesTaskSource> source, const QString& model_id,
                   const QString& model_name);
  /// Shows another window of the series (sessions, tests); throws npe::ConfigError for one that
  /// does not exist.
  void setSeriesWindow(Split split, int64_t window);
  /// The function of the settings shown (kept in free-hand mode, so that switching back
  /// brings the same function).
  const GroundTruth& truth() const { return m_truth; }
  bool showTruth() const;
  /// Shows or hides the truth as its checkbox would (emits showTruthToggled on a change).
  void setShowTruth(bool show);
  /// How many points "Sample context" draws.
  int sampleCount() const;
  /// Shows these settings and makes their function, without emitting signals (restoring a
  /// session).
  void set(bool has_truth, const GroundTruthSpec& spec, bool show_truth);

 Q_SIGNALS:
  /// Mode, kernel, scale or noise changed (the function is drawn again from the settings with
  /// the same seed), or a new function was drawn (the next seed).
  void truthChanged();
  void showTruthToggled();
  void sampleRequested(int count);
  void clearRequested();

 private:
  void enableForMode();
  GroundTruthSpec spec(uint64_t seed) const;
  /// Makes the series window of the split and window controls, keeping the old one (and
  /// saying why in the label) when it cannot be made.
  void showSeriesWindow();

  QComboBox* m_mode = nullptr;
  QComboBox* m_kernel = nullptr;
  QDoubleSpinBox* m_lengthscale = nullptr;
  QDoubleSpinBox* m_noise = nullptr;
  QSpinBox* m_sample_count = nullptr;
  QCheckBox* m_show_truth = nullptr;
  QComboBox* m_split = nullptr;
  QSpinBox* m_window = nullptr;
  QLabel* m_series_label = nullptr;
  GroundTruth m_truth;
  std::unique_ptr<SeriesTruth> m_series;
  std::shared_ptr<const SeriesTaskSource> m_series_source;
  QString m_series_model;
};

}  // namespace npe::widgets
