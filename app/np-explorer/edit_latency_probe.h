#pragma once
// Measures the time from a context edit to the redrawn plot in the running window: moves a
// context point (through the undo stack, as a drag would), waits for the predictions of every
// shown model to be drawn, repeats, and prints the median and spread.

#include <QElapsedTimer>
#include <QObject>
#include <vector>

namespace npe::widgets {
class FunctionExplorer;
}

namespace npe::app {

class EditLatencyProbe final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(EditLatencyProbe)

 public:
  /// Starts after the first settled prediction round; quits the application when done.
  EditLatencyProbe(widgets::FunctionExplorer* explorer, int edits, QObject* parent = nullptr);

 private:
  void edit();
  void onPredictions(bool refined);
  void report();

  widgets::FunctionExplorer* m_explorer;
  int m_edits;
  bool m_started = false;
  bool m_waiting = false;
  QElapsedTimer m_timer;
  std::vector<double> m_ms;
};

}  // namespace npe::app
