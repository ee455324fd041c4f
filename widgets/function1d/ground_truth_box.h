#pragma once
// The 1-D tab's "Ground truth" group and the function it defines: GP sample or free-hand mode,
// the kernel, its scale and the noise, and buttons to resample the function, sample context
// points or clear them.

#include <QGroupBox>

#include "function1d/ground_truth.h"
#include "npe/ground/kernels.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace npe::widgets {

class GroundTruthBox final : public QGroupBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(GroundTruthBox)

 public:
  explicit GroundTruthBox(QWidget* parent = nullptr);

  /// GP-sample mode (else free-hand: points only, no function to compare with).
  bool hasTruth() const;
  /// The function of the settings shown (kept in free-hand mode, so that switching back
  /// brings the same function).
  const GroundTruth& truth() const { return m_truth; }
  bool showTruth() const;
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

  QComboBox* m_mode = nullptr;
  QComboBox* m_kernel = nullptr;
  QDoubleSpinBox* m_lengthscale = nullptr;
  QDoubleSpinBox* m_noise = nullptr;
  QSpinBox* m_sample_count = nullptr;
  QCheckBox* m_show_truth = nullptr;
  GroundTruth m_truth;
};

}  // namespace npe::widgets
