#pragma once
// The maps tab's control column: the data file and its variable, the time (with play), random
// stations, the region shift Δ and the view (layer, 3-D relief). The tab adds its models box
// below and keeps the logic: these are the controls and the signals they give.

#include <string>
#include <vector>

#include <QWidget>

#include "npe/data/gridded_field.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QVBoxLayout;

namespace npe::widgets {

class ShiftControl;

class MapControls final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MapControls)

 public:
  /// `data_suffixes`: what the "Open" dialog offers; `stations`: the random stations' default.
  MapControls(const QStringList& data_suffixes, int stations, QWidget* parent = nullptr);
  /// Adds a group at the end of the column (the models box).
  void addGroup(QWidget* group);

  QLabel* dataLabel() const { return m_data_label; }
  /// The file's gridded variables (those in a temperature unit first; the others shown but not
  /// selectable), `current` selected.
  void showVariables(const std::vector<GriddedVariable>& variables, const std::string& current);
  /// The list showVariables fills: an item's data is the variable's name.
  QComboBox* variableList() const { return m_variable; }
  QSlider* time() const { return m_time; }
  QLabel* timeLabel() const { return m_time_label; }
  QLabel* stationNote() const { return m_station_note; }
  ShiftControl* shift() const { return m_shift; }
  QComboBox* layers() const { return m_layers; }
  QCheckBox* threeD() const { return m_three_d; }

 Q_SIGNALS:
  /// The user chose a gridded file to open.
  void openRequested(const QString& path);
  /// The user chose another variable of the open file.
  void variableChosen(const QString& name);
  void hourChosen(int hour);
  /// Play (advance one hour every half second) switched on or off.
  void playToggled(bool on);
  void randomStationsRequested(int count);
  void clearStationsRequested();
  void shiftChosen(int north, int east);
  void layerChosen(const QString& layer);
  void threeDToggled(bool on);

 private:
  QVBoxLayout* m_column = nullptr;
  QLabel* m_data_label = nullptr;
  QComboBox* m_variable = nullptr;
  QSlider* m_time = nullptr;
  QLabel* m_time_label = nullptr;
  QPushButton* m_play = nullptr;
  QSpinBox* m_random_count = nullptr;
  QLabel* m_station_note = nullptr;
  ShiftControl* m_shift = nullptr;
  QComboBox* m_layers = nullptr;
  QCheckBox* m_three_d = nullptr;
};

}  // namespace npe::widgets
