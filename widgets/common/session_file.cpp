#include "common/session_file.h"

#include <QFile>
#include <QJsonDocument>

#include "npe/atomic_file.h"
#include "npe/errors.h"

namespace npe::widgets {
namespace {
constexpr const char* kFormat = "np-explorer-session";
}

SessionFile session_from_json(const QJsonObject& json) {
  if (json.value("format").toString() != kFormat) {
    throw DataError("session: not an NP Explorer session file");
  }
  const int version = json.value("version").toInt(-1);
  if (version < 1 || version > SessionFile::kVersion) {
    throw DataError("session: unsupported version " + std::to_string(version) +
                    " (this program reads versions 1 to " + std::to_string(SessionFile::kVersion) +
                    ")");
  }
  SessionFile session;
  if (version == 1) {
    // Version 1 held the 1-D explorer's state at the top level.
    session.current_tab = "functions";
    session.tabs["functions"] = json;
    return session;
  }
  if (!json.value("tabs").isObject()) throw DataError("session: 'tabs' must be an object");
  session.tabs = json.value("tabs").toObject();
  session.current_tab = json.value("current_tab").toString();
  return session;
}

QJsonObject session_to_json(const SessionFile& session) {
  return {{"format", kFormat},
          {"version", SessionFile::kVersion},
          {"current_tab", session.current_tab},
          {"tabs", session.tabs}};
}

SessionFile read_session_file(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    throw DataError(("cannot open session '" + path + "': " + file.errorString()).toStdString());
  }
  QJsonParseError error;
  const auto document = QJsonDocument::fromJson(file.readAll(), &error);
  if (document.isNull() || !document.isObject()) {
    throw DataError(
        ("'" + path + "' is not a valid session file (" + error.errorString() + ")").toStdString());
  }
  try {
    return session_from_json(document.object());
  } catch (const DataError& e) {
    throw DataError(("'" + path + "': ").toStdString() + e.what());
  }
}

void write_session_file(const QString& path, const SessionFile& session) {
  try {
    write_file_atomically(path.toStdString(),
                          QJsonDocument(session_to_json(session)).toJson().toStdString());
  } catch (const Error& e) {
    throw DataError(("cannot write session '" + path + "': ").toStdString() + e.what());
  }
}

}  // namespace npe::widgets
