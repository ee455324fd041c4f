#pragma once
// Which models' ±2σ bands the 1-D plot draws: the model in focus (the default), all, or none.

#include <algorithm>

#include <QComboBox>

namespace npe::widgets {

class FunctionPlot;

class BandsChoice final : public QComboBox {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(BandsChoice)

 public:
  /// Sets the plot's bands whenever the choice changes.
  BandsChoice(FunctionPlot* plot, QWidget* parent = nullptr);
  /// "focused", "all" or "none" (session files).
  QString mode() const { return currentData().toString(); }
  /// An unknown mode chooses "focused".
  void setMode(const QString& mode) { setCurrentIndex(std::max(0, findData(mode))); }
};

}  // namespace npe::widgets
