#include "maps/map_controls.h"

#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "common/shift_control.h"
#include "npe/data/temperature_unit.h"

namespace npe::widgets {

void MapControls::showVariables(const std::vector<GriddedVariable>& variables,
                                const std::string& current) {
  QSignalBlocker block(m_variable);
  m_variable->clear();
  auto* model = qobject_cast<QStandardItemModel*>(m_variable->model());
  for (const auto& v : temperatures_first(variables)) {
    const bool temperature = is_temperature_unit(v.units);
    QString text = QString::fromStdString(v.name);
    if (!v.long_name.empty()) text += " — " + QString::fromStdString(v.long_name);
    text += v.units.empty() ? tr(" (no unit)") : " [" + QString::fromStdString(v.units) + "]";
    m_variable->addItem(text, QString::fromStdString(v.name));
    const int row = m_variable->count() - 1;
    if (!temperature && model) {
      // Shown, so that the user sees what the file holds, but not chosen: the models predict
      // temperatures.
      model->item(row)->setEnabled(false);
      model->item(row)->setToolTip(tr("Not a temperature: the models predict temperatures"));
    }
    if (v.name == current) m_variable->setCurrentIndex(row);
  }
  m_variable->setEnabled(m_variable->count() > 1);
}

MapControls::MapControls(const QStringList& data_suffixes, int stations, QWidget* parent)
    : QWidget(parent) {
  auto* panel = this;
  m_column = new QVBoxLayout(this);

  auto* data_box = new QGroupBox(tr("Data"), panel);
  auto* data_form = new QFormLayout(data_box);
  m_data_label = new QLabel(data_box);
  m_data_label->setWordWrap(true);
  auto* open = new QPushButton(tr("Open NetCDF / GRIB…"), data_box);
  // Files of forcing data and climatologies hold several variables (temperature, humidity,
  // wind...): the file's gridded variables, those in a temperature unit first; the first of those
  // is read when a file opens, and choosing another reads it.
  m_variable = new QComboBox(data_box);
  m_variable->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_variable->setMinimumContentsLength(12);
  m_variable->setToolTip(tr("The file's gridded variables, those in a temperature unit first"));
  connect(m_variable, &QComboBox::activated, this,
          [this](int index) { Q_EMIT variableChosen(m_variable->itemData(index).toString()); });
  data_form->addRow(m_data_label);
  data_form->addRow(tr("Variable"), m_variable);
  data_form->addRow(open);
  connect(open, &QPushButton::clicked, this, [this, data_suffixes] {
    QStringList patterns;
    for (const auto& suffix : data_suffixes) patterns << "*." + suffix;
    const auto path = QFileDialog::getOpenFileName(
        this, tr("Open gridded data"), {},
        tr("NetCDF or GRIB (%1);;All files (*)").arg(patterns.join(' ')));
    if (!path.isEmpty()) Q_EMIT openRequested(path);
  });

  auto* time_box = new QGroupBox(tr("Time"), panel);
  auto* time_layout = new QVBoxLayout(time_box);
  m_time = new QSlider(Qt::Horizontal, time_box);
  m_time_label = new QLabel(time_box);
  m_play = new QPushButton(tr("▶ Play"), time_box);
  m_play->setCheckable(true);
  m_play->setToolTip(tr("Advance one hour every half second"));
  auto* time_row = new QHBoxLayout;
  time_row->addWidget(m_time, 1);
  time_row->addWidget(m_play);
  time_layout->addLayout(time_row);
  time_layout->addWidget(m_time_label);
  connect(m_time, &QSlider::valueChanged, this, &MapControls::hourChosen);
  connect(m_play, &QPushButton::toggled, this, [this](bool on) {
    m_play->setText(on ? tr("❚❚ Pause") : tr("▶ Play"));
    Q_EMIT playToggled(on);
  });

  auto* station_box = new QGroupBox(tr("Stations"), panel);
  auto* station_form = new QFormLayout(station_box);
  m_random_count = new QSpinBox(station_box);
  m_random_count->setRange(1, 225);
  m_random_count->setValue(stations);
  auto* random = new QPushButton(tr("Random"), station_box);
  auto* clear = new QPushButton(tr("Clear"), station_box);
  auto* random_row = new QHBoxLayout;
  random_row->addWidget(m_random_count);
  random_row->addWidget(random);
  random_row->addWidget(clear);
  station_form->addRow(tr("Random stations"), random_row);
  m_station_note = new QLabel(station_box);
  m_station_note->setWordWrap(true);
  station_form->addRow(m_station_note);
  connect(random, &QPushButton::clicked, this,
          [this] { Q_EMIT randomStationsRequested(m_random_count->value()); });
  connect(clear, &QPushButton::clicked, this, &MapControls::clearStationsRequested);

  auto* shift_box = new QGroupBox(tr("Region shift Δ (grid cells)"), panel);
  auto* shift_layout = new QVBoxLayout(shift_box);
  m_shift = new ShiftControl({tr("north"), tr("east")}, 40, 1.0, 0, 0.0, shift_box);
  m_shift->setToolTip(
      tr("Move the target window and its stations across the map. The green "
         "outline is the region the shipped models were trained on."));
  shift_layout->addWidget(m_shift);
  connect(m_shift, &ShiftControl::changed, this, [this](const Translation& t) {
    Q_EMIT shiftChosen(static_cast<int>(std::lround(t[0])), static_cast<int>(std::lround(t[1])));
  });

  auto* view_box = new QGroupBox(tr("View"), panel);
  auto* view_form = new QFormLayout(view_box);
  m_layers = new QComboBox(view_box);
  m_layers->setObjectName("map_layers");
  m_three_d = new QCheckBox(tr("3-D relief (drag to rotate, wheel to zoom)"), view_box);
  view_form->addRow(tr("Layer"), m_layers);
  view_form->addRow(m_three_d);
  connect(m_layers, &QComboBox::activated, this,
          [this](int i) { Q_EMIT layerChosen(m_layers->itemData(i).toString()); });
  connect(m_three_d, &QCheckBox::toggled, this, &MapControls::threeDToggled);

  m_column->addWidget(data_box);
  m_column->addWidget(time_box);
  m_column->addWidget(station_box);
  m_column->addWidget(shift_box);
  m_column->addWidget(view_box);
  m_column->addStretch(1);
}

void MapControls::addGroup(QWidget* group) {
  m_column->insertWidget(m_column->count() - 1, group);  // above the stretch
}

}  // namespace npe::widgets
