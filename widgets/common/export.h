#pragma once
// Exporting a tab's view: PNG, PDF or SVG, chosen by suffix, written atomically.

#include <functional>

#include <QString>

class QIODevice;
class QPainter;
class QWidget;

namespace npe::widgets {

/// For Qt's writers: `encode` writes the file into memory (returns false on failure), then
/// npe::write_file_atomically puts it at `path`. QPdfWriter and QSvgGenerator do not report a
/// failed write to a file (a full disk gave a truncated PDF and no error); from memory the
/// error names the file and says why. Throws npe::Error naming the path.
void write_encoded_atomically(const QString& path, const std::function<bool(QIODevice&)>& encode);

/// Renders `widget` (and its children) to PNG (at 2x), PDF or SVG by suffix, atomically.
/// Throws npe::Error for another suffix or a failed write.
void export_widget(QWidget* widget, const QString& path);

}  // namespace npe::widgets
