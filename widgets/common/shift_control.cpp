#include "common/shift_control.h"

#include <algorithm>
#include <cmath>

#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>

namespace npe::widgets {

ShiftControl::ShiftControl(const QStringList& axes, double limit, double step, int decimals,
                           double slider_limit, QWidget* parent)
    : QWidget(parent),
      m_limit(limit),
      m_step(step),
      m_slider_limit(slider_limit),
      m_value(axes.size(), 0.0) {
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  for (int axis = 0; axis < axes.size(); ++axis) {
    auto* label = new QLabel(axes[axis], this);
    auto* slider = new QSlider(Qt::Horizontal, this);
    const double slider_range = slider_limit > 0.0 ? std::min(slider_limit, limit) : limit;
    const int ticks = static_cast<int>(std::lround(slider_range / step));
    slider->setRange(-ticks, ticks);
    slider->setPageStep(std::max(1, ticks / 20));
    auto* box = new QDoubleSpinBox(this);
    box->setRange(-limit, limit);
    box->setSingleStep(step);
    box->setDecimals(decimals);
    // Typed values apply on Enter or focus loss, not at every keystroke (which would reject
    // the rest of a number being typed).
    box->setKeyboardTracking(false);
    label->setBuddy(box);
    grid->addWidget(label, axis, 0);
    grid->addWidget(slider, axis, 1);
    grid->addWidget(box, axis, 2);
    const auto index = static_cast<size_t>(axis);
    connect(slider, &QSlider::valueChanged, this,
            // Dividing by ticks per unit keeps decimal values exact (75 / 100 = 0.75).
            [this, index](int v) { apply(index, v / std::round(1.0 / m_step)); });
    connect(box, &QDoubleSpinBox::valueChanged, this, [this, index](double v) { apply(index, v); });
    m_sliders.push_back(slider);
    m_boxes.push_back(box);
  }
  auto* reset = new QPushButton(tr("Δ = 0"), this);
  grid->addWidget(reset, 0, 3);
  grid->setColumnStretch(1, 1);
  connect(reset, &QPushButton::clicked, this, [this] {
    setValue(Translation(m_value.size(), 0.0));
    Q_EMIT changed(m_value);
  });
}

void ShiftControl::setValue(const Translation& value) {
  for (size_t axis = 0; axis < m_value.size() && axis < value.size(); ++axis) {
    if (!std::isfinite(value[axis])) continue;
    m_value[axis] = std::clamp(value[axis], -m_limit, m_limit);
    QSignalBlocker a(m_sliders[axis]), b(m_boxes[axis]);
    m_sliders[axis]->setValue(static_cast<int>(std::lround(m_value[axis] / m_step)));
    m_boxes[axis]->setValue(m_value[axis]);
  }
}

void ShiftControl::setLimit(double limit) {
  m_limit = limit;
  const double slider_range = m_slider_limit > 0.0 ? std::min(m_slider_limit, limit) : limit;
  const int ticks = static_cast<int>(std::lround(slider_range / m_step));
  for (size_t axis = 0; axis < m_sliders.size(); ++axis) {
    QSignalBlocker a(m_sliders[axis]), b(m_boxes[axis]);
    m_sliders[axis]->setRange(-ticks, ticks);
    m_sliders[axis]->setPageStep(std::max(1, ticks / 20));
    m_boxes[axis]->setRange(-limit, limit);
  }
  setValue(m_value);
}

void ShiftControl::apply(size_t axis, double value) {
  auto next = m_value;
  next[axis] = value;
  setValue(next);
  Q_EMIT changed(m_value);
}

}  // namespace npe::widgets
