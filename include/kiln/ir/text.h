// The one text form of the IR: print() and parse() are inverses (print(parse(print(k))) == print(k)).
#pragma once

#include <string>
#include <string_view>

#include "kiln/ir/kernel.h"

namespace kiln::ir {

struct PrintOptions {
  // Print `// #N` after each op with its pre-order number, the number verifier messages use.
  bool op_numbers = false;
};

std::string print(const Kernel& k, const PrintOptions& options = {});
std::string print_type(const Type& t);

// Throws Error{"ir.parse"} naming the line and column of the first problem.
Kernel parse(std::string_view text);

}  // namespace kiln::ir
