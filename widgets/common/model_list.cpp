#include "common/model_list.h"

#include <QJsonArray>

namespace npe::widgets {

ModelList::ModelList(QWidget* parent) : QListWidget(parent) {
  connect(this, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    const auto id = item->data(Qt::UserRole).toString();
    const bool on = item->checkState() == Qt::Checked;
    for (auto& m : m_entries) {
      if (m.id == id) m.enabled = on;
    }
    Q_EMIT modelToggled(id, on);
  });
  setMouseTracking(true);  // itemEntered without a pressed button
  connect(this, &QListWidget::itemEntered, this, [this](QListWidgetItem* item) {
    Q_EMIT modelHovered(item->data(Qt::UserRole).toString());
  });
  connect(this, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* current) {
    Q_EMIT modelSelected(current ? current->data(Qt::UserRole).toString() : QString());
  });
}

void ModelList::leaveEvent(QEvent* event) {
  Q_EMIT modelHovered({});
  QListWidget::leaveEvent(event);
}

QString ModelList::selectedId() const {
  return currentItem() ? currentItem()->data(Qt::UserRole).toString() : QString();
}

bool ModelList::select(const QString& id) {
  for (int i = 0; i < count(); ++i) {
    if (item(i)->data(Qt::UserRole).toString() == id) {
      setCurrentRow(i);
      return true;
    }
  }
  return false;
}

void ModelList::setHighlighted(const QString& id) {
  if (id == m_highlighted) return;
  m_highlighted = id;
  QSignalBlocker block(this);  // a font change is not a check-state change
  for (int i = 0; i < count(); ++i) {
    QFont bold = font();
    bold.setBold(!id.isEmpty() && item(i)->data(Qt::UserRole).toString() == id);
    item(i)->setFont(bold);
  }
}

QString ModelList::add(ModelEntry entry, bool enabled) {
  for (auto& existing : m_entries) {
    const bool same_file =
        !entry.checkpoint_path.isEmpty() && existing.checkpoint_path == entry.checkpoint_path;
    if (same_file) {
      // The file may have changed (a job being trained writes it at every checkpoint): the
      // entry takes the freshly loaded model, keeping its id and colour.
      existing.predictor = entry.predictor;
      existing.refined_predictor = entry.refined_predictor;
      existing.name = entry.name;
      existing.tooltip = entry.tooltip;
      existing.capabilities = entry.capabilities;
      existing.task = entry.task;
      existing.outputs = entry.outputs;
      for (int i = 0; i < count(); ++i) {
        if (item(i)->data(Qt::UserRole).toString() == existing.id) {
          QSignalBlocker block(this);
          item(i)->setText(existing.name);
          item(i)->setToolTip(existing.tooltip);
        }
      }
    }
    if (existing.id == entry.id || same_file) {
      setEnabled(existing.id, true);
      return existing.id;
    }
  }
  entry.enabled = enabled;
  auto* item = new QListWidgetItem(colour_icon(entry.colour), entry.name);
  item->setToolTip(entry.tooltip);
  item->setData(Qt::UserRole, entry.id);
  item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
  {
    QSignalBlocker block(this);
    item->setCheckState(enabled ? Qt::Checked : Qt::Unchecked);
    addItem(item);
  }
  auto id = entry.id;  // not const: returned by move
  m_entries.push_back(std::move(entry));
  return id;
}

void ModelList::setEnabled(const QString& id, bool enabled) {
  for (int i = 0; i < count(); ++i) {
    if (item(i)->data(Qt::UserRole).toString() == id) {
      item(i)->setCheckState(enabled ? Qt::Checked : Qt::Unchecked);  // -> modelToggled
    }
  }
}

void ModelList::setEnabledIds(const QStringList& ids) {
  for (int i = 0; i < count(); ++i) {
    const auto id = item(i)->data(Qt::UserRole).toString();
    const bool on = ids.contains(id);
    {
      QSignalBlocker block(this);
      item(i)->setCheckState(on ? Qt::Checked : Qt::Unchecked);
    }
    for (auto& m : m_entries) {
      if (m.id == id) m.enabled = on;
    }
    if (!on) Q_EMIT modelToggled(id, false);
  }
}

std::vector<ModelEntry> ModelList::enabledEntries() const {
  std::vector<ModelEntry> out;
  for (const auto& m : m_entries) {
    if (m.enabled) out.push_back(m);
  }
  return out;
}

const ModelEntry* ModelList::find(const QString& id) const {
  for (const auto& m : m_entries) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

QStringList ModelList::enabledIds() const {
  QStringList ids;
  for (const auto& m : m_entries) {
    if (m.enabled) ids << m.id;
  }
  return ids;
}

QStringList ModelList::userCheckpoints() const {
  QStringList paths;
  for (const auto& m : m_entries) {
    if (!m.checkpoint_path.isEmpty() && m.id == m.checkpoint_path) paths << m.id;
  }
  return paths;
}

QStringList ModelList::enabledNames() const {
  QStringList names;
  for (const auto& m : enabledEntries()) names << m.name;
  return names;
}

std::vector<ModelEntry> ModelList::loadMissing(const QStringList& checkpoint_paths,
                                               const torch::Device& device) const {
  std::vector<ModelEntry> loaded;
  for (const auto& path : checkpoint_paths) {
    if (find(path)) continue;
    loaded.push_back(
        load_model_entry(path, model_colour(int(m_entries.size() + loaded.size())), device));
  }
  return loaded;
}

QJsonObject ModelList::sessionModels() const {
  return {{"enabled", QJsonArray::fromStringList(enabledIds())},
          {"checkpoints", QJsonArray::fromStringList(userCheckpoints())}};
}

namespace {
QStringList strings_of(const QJsonValue& value) {
  QStringList list;
  for (const auto& v : value.toArray()) list << v.toString();
  return list;
}
}  // namespace

QStringList ModelList::sessionEnabledIds(const QJsonObject& models) {
  return strings_of(models.value("enabled"));
}

QStringList ModelList::sessionCheckpoints(const QJsonObject& models) {
  return strings_of(models.value("checkpoints"));
}

}  // namespace npe::widgets
