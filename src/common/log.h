// KILN_LOG (compile, launch, memory, all; to stderr or KILN_LOG_FILE) and KILN_DUMP (a
// folder that receives every compiled kernel's IR and generated source). Read once per process.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln::common {

// A channel exists once something writes to it (autotune comes with the autotuner).
enum class LogChannel : unsigned { Compile = 1, Launch = 2, Memory = 4 };

// Cheap: a load of a flag word. Callers test it before building a message.
bool log_enabled(LogChannel c);
void log(LogChannel c, const std::string& message);

// KILN_DUMP's folder, created on first use; nullopt when unset.
const std::optional<std::string>& dump_dir();
// Writes `text` to KILN_DUMP/<file> when KILN_DUMP is set.
void dump_file(const std::string& file, std::string_view text);

}  // namespace kiln::common
