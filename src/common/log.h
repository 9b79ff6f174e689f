// KILN_LOG (compile, launch, memory, autotune, all; to stderr or KILN_LOG_FILE), KILN_DUMP (a
// folder that receives every compiled kernel's IR and generated source), both read once per
// process, and the cache folder (KILN_CACHE_DIR), read at each call.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln::common {

enum class LogChannel : unsigned { Compile = 1, Launch = 2, Memory = 4, Autotune = 8 };

// Cheap: a load of a flag word. Callers test it before building a message.
bool log_enabled(LogChannel c);
void log(LogChannel c, const std::string& message);

// The folder of kiln's on-disk caches (compiled kernels, autotune results): KILN_CACHE_DIR, else
// $XDG_CACHE_HOME/kiln, else ~/.cache/kiln (then the system temp dir).
std::string cache_dir();

// KILN_DUMP's folder, created on first use; nullopt when unset.
const std::optional<std::string>& dump_dir();
// Writes `text` to KILN_DUMP/<file> when KILN_DUMP is set.
void dump_file(const std::string& file, std::string_view text);

}  // namespace kiln::common
