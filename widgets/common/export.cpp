#include "common/export.h"

#include <filesystem>

#include <QBuffer>
#include <QFileInfo>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QPixmap>
#include <QSvgGenerator>
#include <QWidget>

#include "npe/atomic_file.h"
#include "npe/errors.h"

namespace npe::widgets {

void write_encoded_atomically(const QString& path, const std::function<bool(QIODevice&)>& encode) {
  QBuffer buffer;
  buffer.open(QIODevice::WriteOnly);
  if (!encode(buffer))
    throw Error(("cannot write '" + path + "': the encoder failed").toStdString());
  const auto& bytes = buffer.data();
  write_file_atomically(path.toStdString(), std::string(bytes.constData(), bytes.size()));
}

void export_widget(QWidget* widget, const QString& path) {
  const auto suffix = QFileInfo(path).suffix().toLower();
  if (suffix != "png" && suffix != "pdf" && suffix != "svg") {
    throw Error(("cannot export to '" + path + "': use .png, .pdf or .svg").toStdString());
  }
  write_encoded_atomically(path, [&](QIODevice& device) {
    if (suffix == "png") {
      QPixmap pixmap(widget->size() * 2);
      pixmap.setDevicePixelRatio(2.0);
      pixmap.fill(Qt::white);
      widget->render(&pixmap);
      return pixmap.save(&device, "PNG");
    }
    if (suffix == "pdf") {
      QPdfWriter writer(&device);
      writer.setPageSize(QPageSize(widget->size(), QPageSize::Point));
      writer.setPageMargins({0, 0, 0, 0});
      writer.setResolution(72);
      QPainter painter;
      if (!painter.begin(&writer)) return false;
      widget->render(&painter);
      return painter.end();
    }
    QSvgGenerator generator;
    generator.setOutputDevice(&device);
    generator.setSize(widget->size());
    generator.setViewBox(widget->rect());
    generator.setTitle(QObject::tr("NP Explorer"));
    QPainter painter;
    if (!painter.begin(&generator)) return false;
    widget->render(&painter);
    return painter.end();
  });
}

}  // namespace npe::widgets
