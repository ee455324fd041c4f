#pragma once
// Whether a modal dialog may ask the user something. Not on the offscreen platform (tests), nor
// in runs that nobody watches (--screenshot, --measure-edit-latency), where one would wait
// forever: there the caller takes its default and reports on stderr instead.

namespace npe::widgets {

bool dialogsAllowed();
/// Set once at start-up, before any window exists.
void setDialogsAllowed(bool allowed);

}  // namespace npe::widgets
