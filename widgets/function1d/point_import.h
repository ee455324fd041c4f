#pragma once
// Reading the 1-D tab's context points from a CSV, TSV or whitespace-separated text file.

#include <optional>
#include <vector>

#include <QPointF>
#include <QString>

class QWidget;

namespace npe::widgets {

struct ImportedPoints {
  /// (x, y) as the file has them.
  std::vector<QPointF> points;
  /// "(x: a, y: b) from file.csv · 2 NaN row(s) skipped" for the status bar.
  QString summary;
};

/// The (x, y) points of a file: columns named x and y, else the first two, or (with more
/// columns and dialogs allowed) the ones the user picks. NaN and bad rows are skipped and
/// counted. Returns nullopt when the user cancels the choice. Throws npe::DataError for a file
/// that cannot be read or has no usable row.
std::optional<ImportedPoints> import_points(QWidget* parent, const QString& path);

}  // namespace npe::widgets
