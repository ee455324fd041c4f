#pragma once
// Measures the time from a context edit to the redrawn view in the running window, for any
// tab: makes a small context edit through the tab's undo stack (as a drag or brush dab would),
// and times two moments: the first view drawn with a prediction computed after the edit (rounds
// deliver each model as it finishes) and the moment every shown model's prediction for it is
// drawn ("caught up"). Repeats, and prints the median, spread and maximum of both, then the
// parts: the models' prediction times (worker thread, per model) and the drawing (the repaint).

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
  void onPredictions(bool refined, bool caught_up);
  void onPartialPredictions();
  /// Repaints now (so the timing includes the drawing); returns the milliseconds since the edit.
  double repaintAndTime();
  void report();
  void giveUp();

  widgets::ExplorerPanel* m_panel;
  int m_edits;
  int m_time_limit_ms;
  bool m_started = false;
  bool m_waiting = false;
  bool m_seen = false;  // the current edit's first view is drawn
  QElapsedTimer m_timer;
  std::chrono::steady_clock::time_point m_edited;
  /// Per edit: edit to its first view, and edit to every model caught up.
  std::vector<double> m_ms, m_caught_up_ms;
  /// Per edit: the worker's time for the whole round, and the last repaint alone.
  std::vector<double> m_prediction_ms, m_drawing_ms;
  double m_last_drawing_ms = 0.0;
  std::map<QString, std::vector<double>> m_model_ms;
  std::map<QString, double> m_model_flops;  // the last round's, by name
};

}  // namespace npe::app
