#pragma once
// The Δ control shared by the tabs: one slider and spin box per input axis (1-D shifts, 2-D
// image translations), a reset button, and arrow keys on the sliders.

#include <vector>

#include <QStringList>
#include <QWidget>

#include "npe/ground/task.h"

class QDoubleSpinBox;
class QSlider;

namespace npe::widgets {

class ShiftControl final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ShiftControl)

 public:
  /// One row per axis label; values in [-limit, limit] in steps of `step` shown with `decimals`.
  /// The sliders cover [-slider_limit, slider_limit] (0: the whole range); larger values are
  /// typed into the spin boxes.
  ShiftControl(const QStringList& axes, double limit, double step, int decimals,
               double slider_limit, QWidget* parent = nullptr);

  Translation value() const { return m_value; }
  /// Clamps to the limit and updates the controls without emitting changed().
  void setValue(const Translation& value);
  /// A new range [-limit, limit] (the Maps tab's grid changes with the file); values are
  /// clamped to it without emitting changed().
  void setLimit(double limit);

 Q_SIGNALS:
  /// The user moved a slider, typed a value (applied on Enter or focus loss) or reset.
  void changed(const npe::Translation& value);

 private:
  void apply(size_t axis, double value);

  double m_limit, m_step, m_slider_limit;
  Translation m_value;
  std::vector<QSlider*> m_sliders;
  std::vector<QDoubleSpinBox*> m_boxes;
};

}  // namespace npe::widgets
