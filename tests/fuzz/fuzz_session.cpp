// Session files: the document envelope and the 1-D tab's section, from JSON in memory (Qt's
// parser, then the project's validation).

#include <cstddef>
#include <cstdint>

#include <QByteArray>
#include <QJsonDocument>

#include "common/session_file.h"
#include "function1d/function_session.h"
#include "npe/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto document =
      QJsonDocument::fromJson(QByteArray(reinterpret_cast<const char*>(data), int(size)));
  if (!document.isObject()) return 0;
  try {
    const auto session = npe::widgets::session_from_json(document.object());
    const auto section = session.tabs.value(QStringLiteral("functions"));
    if (section.isObject()) {
      const auto functions = npe::widgets::Session::from_json(section.toObject());
      (void)functions.to_json();
    }
    (void)npe::widgets::session_to_json(session);
  } catch (const npe::DataError&) {
  }
  return 0;
}
