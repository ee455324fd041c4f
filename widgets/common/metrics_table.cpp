#include "common/metrics_table.h"

#include <algorithm>
#include <cmath>

#include <QHeaderView>
#include <QScrollBar>
#include <QStyle>

namespace npe::widgets {
namespace {

QString format_number(double value, char format, int precision) {
  return std::isfinite(value) ? QString::number(value, format, precision) : QString("—");
}

}  // namespace

MetricsTable::MetricsTable(const QString& held_out_help, QWidget* parent)
    : QTableWidget(0, 4, parent), m_held_out_help(held_out_help) {
  setHorizontalHeaderLabels({tr("Model"), tr("Held-out LL"), tr("Equiv. error"), tr("ms")});
  horizontalHeaderItem(1)->setToolTip(held_out_help);
  horizontalHeaderItem(2)->setToolTip(
      tr("Largest difference between the prediction for the shifted data and the shifted "
         "prediction for the unshifted data, at the current Δ (0 = translation equivariant)"));
  verticalHeader()->hide();
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setMinimumHeight(150);
  fitWidthToColumns();
}

void MetricsTable::setLikelihoodUnits(double offset, const QString& help) {
  m_ll_offset = help.isEmpty() ? 0.0 : offset;
  horizontalHeaderItem(1)->setToolTip(help.isEmpty() ? m_held_out_help : help);
}

void MetricsTable::fitWidthToColumns() {
  // The widest texts the figures take ("updating…" in the ms column), so that the width is
  // reserved before they arrive: a pane that grew later was not relaid out in time.
  const QStringList widest = {QString(), "-100.000", "0.00e-00", tr("updating…")};
  const int padding = 2 * style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, this) + 8;
  int width = 2 * frameWidth() + verticalScrollBar()->sizeHint().width();
  for (int c = 0; c < columnCount(); ++c) {
    width += std::max({sizeHintForColumn(c), horizontalHeader()->sectionSizeHint(c),
                       fontMetrics().horizontalAdvance(widest.value(c)) + padding});
  }
  setMinimumWidth(std::max(minimumWidth(), width));
}

void MetricsTable::showResult(const PredictionResult& result, const ModelList& models) {
  setRowCount(static_cast<int>(result.models.size() + result.pending.size()));
  int row = 0;
  auto name_item = [&](const ModelEntry& entry, const QString& note) {
    // A name's parts ("ConvCNP 2-D · trained |Δ|≤4") on lines of their own: the narrow column
    // otherwise broke them inside "|Δ|≤4".
    auto text = QString(entry.name).replace(QStringLiteral(" · "), "\n");
    if (!note.isEmpty()) text += "\n(" + note + ")";
    auto* name = new QTableWidgetItem(colour_icon(entry.colour), text);
    name->setData(Qt::UserRole, entry.id);
    setItem(row, 0, name);
    return name;
  };
  for (const auto& prediction : result.models) {
    const auto* entry = models.find(prediction.id);
    if (!entry) continue;
    // The row says that the model is outside its training; its tooltip says where and why.
    auto note = prediction.subsetNote();
    if (!prediction.outside_training.isEmpty()) {
      note += (note.isEmpty() ? "" : ", ") + tr("outside training");
    }
    auto* name = name_item(*entry, note);
    if (!prediction.outside_training.isEmpty()) {
      name->setToolTip(
          tr("Outside what %1 saw in training: %2.%3")
              .arg(entry->name, prediction.outside_training.join("; "),
                   entry->capabilities.translation_equivariant
                       ? QString()
                       : tr(" It is not translation equivariant: moved inputs are new to it.")));
    }
    if (prediction.training_unknown) {
      name->setToolTip(tr("What %1 saw in training is unknown (its file records no task this "
                          "program knows), so no guardrail is drawn for it.")
                           .arg(entry->name));
    }
    if (prediction.context.subset()) {
      name->setToolTip(
          tr("Predicted from %1 of the %2 context points, evenly spread: the whole context "
             "would take about %3 s, over this round's budget of %4 s.")
              .arg(prediction.context.context)
              .arg(prediction.context.total)
              .arg(prediction.context.whole_ms / 1000.0, 0, 'f', 1)
              .arg((result.refine ? kSettledBudgetMs : kLiveBudgetMs) / 1000.0, 0, 'f', 1));
    }
    if (!prediction.error.isEmpty()) {
      name->setToolTip(prediction.error);
      setItem(row, 1, new QTableWidgetItem(tr("error")));
      item(row, 1)->setToolTip(prediction.error);
      setItem(row, 2, new QTableWidgetItem("—"));
      setItem(row, 3, new QTableWidgetItem("—"));
    } else {
      setItem(row, 1,
              new QTableWidgetItem(format_number(prediction.held_out_ll + m_ll_offset, 'f', 3)));
      setItem(
          row, 2,
          new QTableWidgetItem(result.refine ? format_number(prediction.equivariance_error, 'g', 2)
                                             : QString("…")));
      setItem(row, 3, new QTableWidgetItem(QString::number(prediction.milliseconds, 'f', 1)));
      if (prediction.updating) {  // its last round's figures, until this round's arrive
        for (int column = 1; column < 4; ++column) {
          item(row, column)->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
        }
        item(row, 3)->setText(tr("updating…"));
      }
    }
    ++row;
  }
  // Models still computing (or skipped for a newer edit, which computes them next).
  for (const auto& id : result.pending) {
    const auto* entry = models.find(id);
    if (!entry) continue;
    name_item(*entry, {});
    setItem(row, 1, new QTableWidgetItem("…"));
    setItem(row, 2, new QTableWidgetItem("…"));
    setItem(row, 3, new QTableWidgetItem(result.complete ? tr("waiting…") : tr("computing…")));
    ++row;
  }
  setRowCount(row);
  fitWidthToColumns();
}

void MetricsTable::markComputing(const QString& id) {
  for (int row = 0; row < rowCount(); ++row) {
    if (item(row, 0) && item(row, 0)->data(Qt::UserRole).toString() == id && item(row, 3)) {
      item(row, 3)->setText(tr("computing…"));
    }
  }
}

QString MetricsTable::cellText(const QString& id, int column) const {
  for (int row = 0; row < rowCount(); ++row) {
    if (item(row, 0) && item(row, 0)->data(Qt::UserRole).toString() == id && item(row, column)) {
      return item(row, column)->text();
    }
  }
  return {};
}

}  // namespace npe::widgets
