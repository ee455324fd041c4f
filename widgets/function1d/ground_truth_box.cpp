#include "function1d/ground_truth_box.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSpinBox>

#include "npe/errors.h"

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
  m_split = new QComboBox(this);
  m_split->addItem(tr("Test (held out)"), static_cast<int>(Split::Test));
  m_split->addItem(tr("Validation"), static_cast<int>(Split::Validation));
  m_split->addItem(tr("Training"), static_cast<int>(Split::Train));
  m_split->setToolTip(
      tr("Which part of the model's data the window comes from: the test part "
         "was never seen in training"));
  m_window = new QSpinBox(this);
  m_window->setRange(1, 1);
  m_window->setToolTip(tr("Windows start at successive rows; the arrows move by half a window"));
  m_series_label = new QLabel(this);
  m_series_label->setWordWrap(true);
  m_series_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  form->addRow(tr("Mode"), m_mode);
  form->addRow(tr("Kernel"), m_kernel);
  form->addRow(tr("Scale ℓ"), m_lengthscale);
  form->addRow(tr("Noise σ"), m_noise);
  form->addRow(tr("Data"), m_split);
  form->addRow(tr("Window"), m_window);
  form->addRow(m_series_label);
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
  enableForMode();
  connect(resample, &QPushButton::clicked, this, [this] {
    if (seriesMode()) {
      // Another window of the series, at random.
      m_window->setValue(
          static_cast<int>(QRandomGenerator::global()->bounded(m_window->maximum())) + 1);
      return;
    }
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
  connect(m_mode, &QComboBox::currentIndexChanged, this, [this, changed] {
    if (seriesMode()) {
      enableForMode();
      showSeriesWindow();
      Q_EMIT truthChanged();
    } else {
      changed();
    }
  });
  connect(m_split, &QComboBox::currentIndexChanged, this, [this] {
    showSeriesWindow();
    Q_EMIT truthChanged();
  });
  connect(m_window, &QSpinBox::valueChanged, this, [this] {
    showSeriesWindow();
    Q_EMIT truthChanged();
  });
  connect(m_kernel, &QComboBox::currentIndexChanged, this, changed);
  connect(m_lengthscale, &QDoubleSpinBox::valueChanged, this, changed);
  connect(m_noise, &QDoubleSpinBox::valueChanged, this, changed);
  connect(m_show_truth, &QCheckBox::toggled, this, &GroundTruthBox::showTruthToggled);
}

bool GroundTruthBox::hasTruth() const {
  return m_mode->currentIndex() == 0;
}

bool GroundTruthBox::seriesMode() const {
  return m_mode->currentIndex() == 2 && m_series;
}

void GroundTruthBox::offerSeries(std::shared_ptr<const SeriesTaskSource> source,
                                 const QString& model_id, const QString& model_name) {
  m_series_source = std::move(source);
  m_series_model = model_id;
  m_series.reset();
  const auto text = tr("Data of %1").arg(model_name);
  {
    QSignalBlocker block(m_mode), split(m_split), window(m_window);
    if (m_mode->count() < 3) {
      m_mode->addItem(text);
    } else {
      m_mode->setItemText(2, text);
    }
    m_split->setCurrentIndex(0);
    m_window->setValue(1);
    m_mode->setCurrentIndex(2);
    // Half the most context the model saw in training: inside what it learned.
    const auto most = m_series_source->config().max_num_context;
    m_sample_count->setValue(static_cast<int>(std::clamp<int64_t>(most / 2, 1, 256)));
  }
  enableForMode();
  showSeriesWindow();
  Q_EMIT truthChanged();
}

void GroundTruthBox::setSeriesWindow(Split split, int64_t window) {
  if (!m_series_source) throw ConfigError("no model's series is open");
  const auto count = m_series_source->num_windows(split);
  if (window < 0 || window >= count) {
    throw ConfigError("window " + std::to_string(window + 1) + " does not exist: the " +
                      split_name(split).toStdString() + " data has " + std::to_string(count));
  }
  {
    QSignalBlocker block(m_mode), b(m_split), c(m_window);
    m_mode->setCurrentIndex(2);
    m_split->setCurrentIndex(m_split->findData(static_cast<int>(split)));
    m_window->setMaximum(static_cast<int>(std::min<int64_t>(count, INT32_MAX)));
    m_window->setValue(static_cast<int>(window) + 1);
  }
  enableForMode();
  showSeriesWindow();
}

void GroundTruthBox::showSeriesWindow() {
  if (!m_series_source) return;
  const auto split = static_cast<Split>(m_split->currentData().toInt());
  const auto count = m_series_source->num_windows(split);
  if (count == 0) {
    m_series_label->setText(
        tr("The %1 data has no window (validation_fraction=0?).").arg(split_name(split)));
    return;
  }
  {
    QSignalBlocker block(m_window);
    m_window->setMaximum(static_cast<int>(std::min<int64_t>(count, INT32_MAX)));
  }
  try {
    m_series = std::make_unique<SeriesTruth>(m_series_source, split, m_window->value() - 1);
    // The arrows step half a window: the next view overlaps the last by half.
    m_window->setSingleStep(std::max(1, static_cast<int>(m_series->points().size()) / 2));
    m_series_label->setText(m_series->describe());
  } catch (const Error& e) {
    m_series_label->setText(QString::fromStdString(e.what()));
  }
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

void GroundTruthBox::setShowTruth(bool show) {
  m_show_truth->setChecked(show);
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
  const bool series = m_mode->currentIndex() == 2;
  auto* form = static_cast<QFormLayout*>(layout());
  form->setRowVisible(m_kernel, !series);
  form->setRowVisible(m_lengthscale, !series);
  form->setRowVisible(m_noise, !series);
  form->setRowVisible(m_split, series);
  form->setRowVisible(m_window, series);
  form->setRowVisible(m_series_label, series);
  m_kernel->setEnabled(truth);
  m_lengthscale->setEnabled(truth);
  m_show_truth->setEnabled(truth || series);
  m_show_truth->setText(series ? tr("Show the series") : tr("Show true function"));
}

}  // namespace npe::widgets
