#pragma once
// Replacing a file so that it is either the old one or the whole new one, never half of it: the
// one way this project writes files (checkpoints and their metadata, tables, NetCDF and PNG
// outputs, the GUI's exports and session files).

#include <filesystem>
#include <functional>
#include <string>

namespace npe {

/// Writes `contents` to `path`: a temporary sibling (PATH.tmp-PID-N) is written, flushed to the
/// disk and renamed over `path`, then the folder is flushed. Throws Error naming the file on
/// failure; `path` is then untouched and no temporary is left. A success also removes the
/// temporaries of `path` whose writer process has ended (one killed mid-write).
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

/// The same for writers that make the file themselves (an archive's save_to, QPixmap::save):
/// `write` gets the temporary path and returns false, or throws, on failure; the exception is
/// passed on after the temporary is removed.
void write_atomically(const std::filesystem::path& path,
                      const std::function<bool(const std::filesystem::path& temporary)>& write);

/// Removes every temporary of `path` ("PATH.tmp-*"), a live writer's too: for the one writer
/// that owns `path` (npe train, under its OutputLock), at its start.
void remove_stale_temporaries(const std::filesystem::path& path);

}  // namespace npe
