// run_ir_on_cpu(text, buffers, lens, cubes): runs a kernel written as IR text (parsed, verified,
// through the pass pipeline) on the CPU backend over byte buffers, `cubes` cubes along x, and
// answers every buffer's bytes after the launch; run_kernel_on_cpu does the same for a kernel
// already lowered. The CPU is exact whatever a kernel allows, so
// tests of generated CUDA use it as the reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln::test {

// A kernel already through the pass pipeline; lens[i] is what `len` of buffer i answers.
inline std::vector<std::vector<unsigned char>> run_kernel_on_cpu(const ir::Kernel& k,
                                                                 std::vector<std::vector<unsigned char>> bufs,
                                                                 const std::vector<uint32_t>& lens, uint32_t cubes) {
  auto cpu = cpu::make_cpu_backend();
  auto stream = cpu->create_stream();
  std::vector<backend::ArgBinding> args;
  for (size_t i = 0; i < bufs.size(); ++i) {
    backend::ArgBinding a;
    a.kind = backend::ArgBinding::Kind::Buffer;
    a.address = cpu->allocate(bufs[i].size());
    a.bytes = bufs[i].size();
    a.len = lens[i];
    cpu->copy_to_device(*stream, a.address, bufs[i].data(), bufs[i].size());
    args.push_back(a);
  }
  auto exe = cpu->compile(k);
  cpu->launch(*exe, backend::LaunchDims{ir::Dim3{cubes, 1, 1}, k.facts.cube_dim}, args, *stream);
  for (size_t i = 0; i < bufs.size(); ++i) cpu->copy_to_host(*stream, bufs[i].data(), args[i].address, bufs[i].size());
  cpu->sync(*stream);
  for (const auto& a : args) cpu->deallocate(a.address);
  return bufs;
}

inline std::vector<std::vector<unsigned char>> run_ir_on_cpu(const std::string& text,
                                                             std::vector<std::vector<unsigned char>> bufs,
                                                             const std::vector<uint32_t>& lens, uint32_t cubes) {
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "test");
  passes::run_pipeline(k);
  return run_kernel_on_cpu(k, std::move(bufs), lens, cubes);
}

}  // namespace kiln::test
