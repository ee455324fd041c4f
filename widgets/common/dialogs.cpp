#include "common/dialogs.h"

#include <QGuiApplication>

namespace npe::widgets {
namespace {

bool g_dialogs_allowed = true;

}  // namespace

bool dialogsAllowed() {
  return g_dialogs_allowed && QGuiApplication::platformName() != QLatin1String("offscreen");
}

void setDialogsAllowed(bool allowed) {
  g_dialogs_allowed = allowed;
}

}  // namespace npe::widgets
