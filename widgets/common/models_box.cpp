#include "common/models_box.h"

#include <QFileDialog>
#include <QPushButton>
#include <QVBoxLayout>

#include "common/model_list.h"

namespace npe::widgets {

ModelsBox::ModelsBox(QWidget* parent) : QGroupBox(tr("Models"), parent) {
  auto* layout = new QVBoxLayout(this);
  m_list = new ModelList(this);
  m_list->setMinimumHeight(150);
  auto* open = new QPushButton(tr("Open checkpoint…"), this);
  layout->addWidget(m_list);
  layout->addWidget(open);
  connect(open, &QPushButton::clicked, this, [this] {
    // A TorchScript model is a program: the caption says so before anyone picks one.
    const auto path = QFileDialog::getOpenFileName(
        this, tr("Open a checkpoint or a TorchScript model (which runs its own code)"), {},
        tr("Models (*.pt *.pth *.ts *.jit);;All files (*)"));
    if (!path.isEmpty()) Q_EMIT checkpointChosen(path);
  });
}

}  // namespace npe::widgets
