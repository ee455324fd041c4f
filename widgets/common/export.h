#pragma once
// Exporting a tab's view: PNG, PDF or SVG, chosen by suffix, written atomically.

#include <functional>

#include <QString>

class QPainter;
class QWidget;

namespace npe::widgets {

/// npe::write_atomically for Qt's writers: calls write(temporary_path) and renames the result
/// onto `path` only when it succeeded, so a failed export never leaves half a file. Throws
/// npe::Error naming the path.
void write_atomically(const QString& path, const std::function<bool(const QString&)>& write);

/// Renders `widget` (and its children) to PNG (at 2x), PDF or SVG by suffix, atomically.
/// Throws npe::Error for another suffix or a failed write.
void export_widget(QWidget* widget, const QString& path);

}  // namespace npe::widgets
