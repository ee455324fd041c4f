#include "function1d/ground_truth_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QPushButton>
#include <QSpinBox>

namespace npe::widgets {

GroundTruthBox::GroundTruthBox(QWidget* parent) : QGroupBox(tr("Ground truth"), parent) {
  auto* form = new QFormLayout(this);
  m_mode = new QComboBox(this);
  m_mode->addItems({tr("GP sample"), tr("Free-hand (points only)")});
  m_kernel = new QComboBox(this);
  m_kernel->addItem(tr("Squared exponential"), "se");
  m_kernel->addItem(tr("Periodic"), "periodic");
  m_kernel->addItem(tr("Matérn-5/2"), "matern52");
  m_lengthscale = new QDoubleSpinBox(this);
  m_lengthscale->setRange(0.1, 10.0);
  m_lengthscale->setSingleStep(0.05);
  m_lengthscale->setValue(0.5);
  m_lengthscale->setToolTip(
      tr("The kernel's scale ℓ (paper eq. 36): the lengthscale of the squared-exponential and "
         "Matérn-5/2 kernels, the period of the periodic kernel"));
  m_noise = new QDoubleSpinBox(this);
  m_noise->setRange(0.0, 2.0);
  m_noise->setSingleStep(0.05);
  m_noise->setValue(0.2);
  m_sample_count = new QSpinBox(this);
  m_sample_count->setRange(1, 256);
  m_sample_count->setValue(10);
  m_show_truth = new QCheckBox(tr("Show true function"), this);
  m_show_truth->setChecked(true);
  form->addRow(tr("Mode"), m_mode);
  form->addRow(tr("Kernel"), m_kernel);
  form->addRow(tr("Scale ℓ"), m_lengthscale);
  form->addRow(tr("Noise σ"), m_noise);
  form->addRow(tr("Points to sample"), m_sample_count);
  form->addRow(m_show_truth);
  auto* buttons = new QHBoxLayout;
  auto* resample = new QPushButton(tr("Resample"), this);
  resample->setToolTip(tr("Draw a new function from the GP"));
  auto* sample = new QPushButton(tr("Sample context"), this);
  sample->setToolTip(
      tr("Replace the context with noisy samples of the true function in the "
         "training range"));
  auto* clear = new QPushButton(tr("Clear"), this);
  buttons->addWidget(resample);
  buttons->addWidget(sample);
  buttons->addWidget(clear);
  form->addRow(buttons);

  m_truth = GroundTruth(spec(1));
  connect(resample, &QPushButton::clicked, this, [this] {
    m_truth = GroundTruth(spec(m_truth.spec().seed + 1));
    Q_EMIT truthChanged();
  });
  connect(sample, &QPushButton::clicked, this,
          [this] { Q_EMIT sampleRequested(m_sample_count->value()); });
  connect(clear, &QPushButton::clicked, this, &GroundTruthBox::clearRequested);
  auto changed = [this] {
    enableForMode();
    m_truth = GroundTruth(spec(m_truth.spec().seed));
    Q_EMIT truthChanged();
  };
  connect(m_mode, &QComboBox::currentIndexChanged, this, changed);
  connect(m_kernel, &QComboBox::currentIndexChanged, this, changed);
  connect(m_lengthscale, &QDoubleSpinBox::valueChanged, this, changed);
  connect(m_noise, &QDoubleSpinBox::valueChanged, this, changed);
  connect(m_show_truth, &QCheckBox::toggled, this, &GroundTruthBox::showTruthToggled);
}

bool GroundTruthBox::hasTruth() const {
  return m_mode->currentIndex() == 0;
}

GroundTruthSpec GroundTruthBox::spec(uint64_t seed) const {
  GroundTruthSpec spec;
  spec.kernel = kernel_kind_from_name(m_kernel->currentData().toString().toStdString());
  spec.lengthscale = m_lengthscale->value();
  spec.noise_std = m_noise->value();
  spec.seed = seed;
  return spec;
}

bool GroundTruthBox::showTruth() const {
  return m_show_truth->isChecked();
}

int GroundTruthBox::sampleCount() const {
  return m_sample_count->value();
}

void GroundTruthBox::set(bool has_truth, const GroundTruthSpec& spec, bool show_truth) {
  QSignalBlocker a(m_mode), b(m_kernel), c(m_lengthscale), d(m_noise), e(m_show_truth);
  m_mode->setCurrentIndex(has_truth ? 0 : 1);
  m_kernel->setCurrentIndex(m_kernel->findData(QString::fromStdString(kernel_name(spec.kernel))));
  m_lengthscale->setValue(spec.lengthscale);
  m_noise->setValue(spec.noise_std);
  m_show_truth->setChecked(show_truth);
  enableForMode();
  m_truth = GroundTruth(spec);
}

void GroundTruthBox::enableForMode() {
  const bool truth = hasTruth();
  m_kernel->setEnabled(truth);
  m_lengthscale->setEnabled(truth);
  m_show_truth->setEnabled(truth);
}

}  // namespace npe::widgets
