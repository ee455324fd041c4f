#pragma once
// Measures the time from a context edit to the redrawn view in the running window, for any
// tab: makes a small context edit through the tab's undo stack (as a drag or brush dab would),
// waits for the predictions of every shown model to be drawn, repeats, and prints the median,
// spread and maximum, then the two halves: the models' prediction times (worker thread, per
// model) and the drawing (the repaint after the curves are set).

#include <chrono>
#include <map>
#include <vector>

#include <QElapsedTimer>
#include <QObject>
#include <QString>

namespace npe::widgets {
class ExplorerPanel;
}

namespace npe::app {

class EditLatencyProbe final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(EditLatencyProbe)

 public:
  /// Starts after the first settled prediction round; quits the application when done. Gives up
  /// after time_limit_ms in all (status 1 with a message, see unattended_exit.h).
  EditLatencyProbe(widgets::ExplorerPanel* panel, int edits, int time_limit_ms,
                   QObject* parent = nullptr);

 private:
  void edit();
  void onPredictions(bool refined);
  void report();
  void giveUp();

  widgets::ExplorerPanel* m_panel;
  int m_edits;
  int m_time_limit_ms;
  bool m_started = false;
  bool m_waiting = false;
  QElapsedTimer m_timer;
  std::chrono::steady_clock::time_point m_edited;
  std::vector<double> m_ms;
  /// Per edit: the sum of the models' prediction times, and the repaint alone.
  std::vector<double> m_prediction_ms, m_drawing_ms;
  std::map<QString, std::vector<double>> m_model_ms;
};

}  // namespace npe::app
