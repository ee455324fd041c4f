#pragma once
// Session files: one JSON document with a section per explorer tab.
//   {"format": "np-explorer-session", "version": 2, "current_tab": "images",
//    "tabs": {"functions": {...}, "images": {...}}}
// Version-1 files (the 1-D explorer only) are read as a file with just a "functions" section.

#include <QJsonObject>
#include <QString>

namespace npe::widgets {

struct SessionFile {
  static constexpr int kVersion = 2;
  QString current_tab;
  /// Tab id -> section.
  QJsonObject tabs;
};

/// Reads a session file. Throws npe::DataError (unreadable, not JSON, wrong format, future
/// version).
SessionFile read_session_file(const QString& path);
/// Parses a session document already in memory. Throws npe::DataError.
SessionFile session_from_json(const QJsonObject& json);
QJsonObject session_to_json(const SessionFile& session);
/// Writes atomically (temporary file, then rename). Throws npe::DataError.
void write_session_file(const QString& path, const SessionFile& session);

}  // namespace npe::widgets
