#include "image/image_controls.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "common/shift_control.h"
#include "image/image_source.h"

namespace npe::widgets {

ImageControls::ImageControls(int test_images, int max_translation, QWidget* parent)
    : QWidget(parent) {
  auto* panel = this;
  m_column = new QVBoxLayout(this);

  auto* source_box = new QGroupBox(tr("Picture"), panel);
  auto* source_form = new QFormLayout(source_box);
  m_collection = new QComboBox(source_box);
  m_collection->setObjectName("picture_collection");
  m_collection->addItem(tr("Fashion-MNIST test set"), QString());
  m_collection->setToolTip(
      tr("Which test pictures to browse: Fashion-MNIST's, or those held out of the data a model "
         "you opened was trained on (grey or colour, of their own size and canvas)"));
  m_index = new QSpinBox(source_box);
  m_index->setRange(0, std::max(0, test_images - 1));
  m_index->setKeyboardTracking(false);
  auto* browse = new QHBoxLayout;
  auto* previous = new QPushButton(tr("◀"), source_box);
  auto* next = new QPushButton(tr("▶"), source_box);
  auto* random = new QPushButton(tr("Random"), source_box);
  previous->setToolTip(tr("Previous test image"));
  next->setToolTip(tr("Next test image"));
  browse->addWidget(m_index, 1);
  browse->addWidget(previous);
  browse->addWidget(next);
  browse->addWidget(random);
  // Without the dataset there is nothing to browse: own pictures still work.
  const bool have_test_images = test_images > 0;
  m_browse = {m_index, previous, next, random};
  for (auto* control : m_browse) control->setEnabled(have_test_images);
  auto* open = new QPushButton(tr("Open picture…"), source_box);
  open->setToolTip(
      tr("Your own picture (PNG, JPEG, BMP, …), fitted into the pictures' size keeping its "
         "aspect ratio: in grey for Fashion-MNIST's models, in colour for a colour model's. You "
         "can also drop it on the window."));
  m_source_label = new QLabel(source_box);
  m_source_label->setWordWrap(true);
  source_form->addRow(m_collection);
  source_form->addRow(tr("Test picture"), browse);
  source_form->addRow(open);
  source_form->addRow(m_source_label);
  connect(m_index, &QSpinBox::valueChanged, this, &ImageControls::testImageChosen);
  connect(m_collection, qOverload<int>(&QComboBox::activated), this,
          [this] { Q_EMIT collectionChosen(m_collection->currentData().toString()); });
  connect(previous, &QPushButton::clicked, this,
          [this] { m_index->setValue(m_index->value() - 1); });
  connect(next, &QPushButton::clicked, this, [this] { m_index->setValue(m_index->value() + 1); });
  connect(random, &QPushButton::clicked, this, [this] {
    std::mt19937_64 engine(m_random_seed++);
    m_index->setValue(std::uniform_int_distribution<int>(0, m_index->maximum())(engine));
  });
  connect(open, &QPushButton::clicked, this, [this] {
    const auto path = QFileDialog::getOpenFileName(
        this, tr("Open picture"), {},
        tr("Pictures (%1);;All files (*)").arg("*." + picture_suffixes().join(" *.")));
    if (!path.isEmpty()) Q_EMIT pictureChosen(path);
  });

  auto* context_box = new QGroupBox(tr("Context"), panel);
  auto* context_form = new QFormLayout(context_box);
  m_brush = new QSpinBox(context_box);
  m_brush->setRange(1, 9);
  m_brush->setValue(2);
  m_brush->setSuffix(tr(" px"));
  connect(m_brush, &QSpinBox::valueChanged, this, &ImageControls::brushChanged);
  m_percent = new QSpinBox(context_box);
  m_percent->setRange(1, 100);
  m_percent->setValue(10);
  m_percent->setSuffix(" %");
  auto* random_context = new QPushButton(tr("Random"), context_box);
  random_context->setToolTip(tr("Replace the context with this share of the canvas pixels"));
  auto* clear = new QPushButton(tr("Clear"), context_box);
  auto* random_row = new QHBoxLayout;
  random_row->addWidget(m_percent);
  random_row->addWidget(random_context);
  random_row->addWidget(clear);
  context_form->addRow(tr("Brush size"), m_brush);
  context_form->addRow(tr("Random pixels"), random_row);
  connect(random_context, &QPushButton::clicked, this,
          [this] { Q_EMIT randomContextRequested(m_percent->value()); });
  connect(clear, &QPushButton::clicked, this, &ImageControls::clearContextRequested);

  auto* shift_box = new QGroupBox(tr("Translation Δ (pixels)"), panel);
  auto* shift_layout = new QVBoxLayout(shift_box);
  m_shift = new ShiftControl({tr("Δh"), tr("Δv")}, max_translation, 1.0, 0, 0.0, shift_box);
  m_shift->setToolTip(
      tr("Move the picture and its context across the canvas (arrow keys too). "
         "The dashed square is where the shown models saw pictures in "
         "training."));
  shift_layout->addWidget(m_shift);
  connect(m_shift, &ShiftControl::changed, this, [this](const Translation& t) {
    Q_EMIT translationChosen(static_cast<int>(std::lround(t[0])),
                             static_cast<int>(std::lround(t[1])));
  });

  m_column->addWidget(source_box);
  m_column->addWidget(context_box);
  m_column->addWidget(shift_box);
  m_column->addStretch(1);
}

void ImageControls::addGroup(QWidget* group) {
  m_column->insertWidget(m_column->count() - 1, group);  // above the stretch
}

void ImageControls::addCollection(const QString& id, const QString& name) {
  if (m_collection->findData(id) < 0) m_collection->addItem(tr("%1: test pictures").arg(name), id);
}

void ImageControls::showCollection(const QString& id, int count) {
  const QSignalBlocker block(m_collection), block_index(m_index);
  m_collection->setCurrentIndex(std::max(0, m_collection->findData(id)));
  m_index->setRange(0, std::max(0, count - 1));
  for (auto* control : m_browse) control->setEnabled(count > 0);
}

void ImageControls::setMaxTranslation(int pixels) {
  m_shift->setLimit(pixels);
}

void ImageControls::showTestImage(int index) {
  QSignalBlocker block(m_index);
  m_index->setValue(index);
}

void ImageControls::setSourceText(const QString& text) {
  m_source_label->setText(text);
}

int ImageControls::brush() const {
  return m_brush->value();
}

void ImageControls::setBrush(int pixels) {
  m_brush->setValue(pixels);
}

}  // namespace npe::widgets
