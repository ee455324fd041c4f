#pragma once
// QCustomPlot, for sources built with QT_NO_KEYWORDS. The project switches Qt's `signals`,
// `slots`, `emit` and `foreach` macros off (libtorch uses `slots` as an identifier, so with them
// on, libtorch had to be parsed before any Qt header); QCustomPlot's header still spells them
// out, so they are defined around it only.

#define signals Q_SIGNALS
#define slots Q_SLOTS
#define emit Q_EMIT
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef slots
#undef emit
#undef foreach
