#include "function1d/bands_choice.h"

#include "function1d/function_plot.h"

namespace npe::widgets {

BandsChoice::BandsChoice(FunctionPlot* plot, QWidget* parent) : QComboBox(parent) {
  setObjectName("bands");
  addItem(tr("Model in focus"), "focused");
  addItem(tr("All models"), "all");
  addItem(tr("None"), "none");
  setToolTip(
      tr("Model in focus: the band of the model selected in the list, or of the model under the "
         "mouse (its curve, legend entry or list row); the others show their means"));
  connect(this, &QComboBox::currentIndexChanged, plot, [this, plot] {
    const auto choice = mode();
    plot->setBands(choice == "all"    ? FunctionPlot::Bands::all
                   : choice == "none" ? FunctionPlot::Bands::none
                                      : FunctionPlot::Bands::focused);
  });
}

}  // namespace npe::widgets
