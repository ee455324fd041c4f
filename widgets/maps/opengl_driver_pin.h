#pragma once

namespace npe::widgets {

// In a build with AddressSanitizer, keeps the OpenGL driver modules (Mesa's *_dri.so) that are
// loaded now mapped until the process ends; elsewhere it does nothing. Why: Mesa's driver keeps
// two small allocations in its own globals until exit, and the display connection unloads the
// driver before LeakSanitizer looks, so they were reported as leaks from an "unknown module"
// that no suppression can name (2 × 56 bytes under Xvfb; gone with the driver kept mapped).
void keepOpenGlDriverLoadedForLeakChecks();

}  // namespace npe::widgets
