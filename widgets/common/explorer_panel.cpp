#include "common/explorer_panel.h"

#include "npe/errors.h"

namespace npe::widgets {

void ExplorerPanel::reportErrors(const QString& failure, const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    const auto why = QString::fromUtf8(e.what());
    Q_EMIT statusMessage(failure.isEmpty() ? why : failure + ": " + why);
  }
}

}  // namespace npe::widgets
