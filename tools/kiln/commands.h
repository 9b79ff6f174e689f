// The `kiln` tool's subcommands; each takes the arguments after its name and returns the exit code.
#pragma once

#include <string>
#include <vector>

namespace kiln::tool {

using Args = std::vector<std::string>;

int dump(const Args& args);
int info(const Args& args);
int demo(const Args& args);
int cache(const Args& args);
int bench(const Args& args);

// Throws Error{tool.bad_option} with the usage line when an option is unknown or lacks a value.
[[noreturn]] void usage_error(const std::string& what, const std::string& usage);

}  // namespace kiln::tool
