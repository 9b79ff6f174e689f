// The runtime compiles for the device's target: the kernel a backend is given has been through the
// pass pipeline for that backend's target (docs/ir.md, "Targets"), so passes may differ per target.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kiln/ir/text.h"
#include "kiln/kernel_ref.h"
#include "kiln/kiln.h"
#include "runtime/device_state.h"
#include "runtime/kernel_cache.h"

namespace kiln {
namespace {

// A backend that compiles nothing: it records the kernel it is given.
class RecordingBackend : public backend::Backend {
 public:
  explicit RecordingBackend(ir::Target t) : target_(t) {}

  std::string_view runtime_name() const override { return "recording"; }
  const DeviceInfo& info() const override { return info_; }
  ir::Target target() const override { return target_; }
  uint64_t allocate(size_t) override { return 0; }
  void deallocate(uint64_t) override {}
  std::unique_ptr<backend::Stream> create_stream() override { return nullptr; }
  void copy_to_device(backend::Stream&, uint64_t, const void*, size_t) override {}
  void copy_to_host(backend::Stream&, void*, uint64_t, size_t) override {}
  void copy_on_device(backend::Stream&, uint64_t, uint64_t, size_t) override {}
  void fill(backend::Stream&, uint64_t, unsigned char, size_t) override {}
  void sync(backend::Stream&) override {}
  std::unique_ptr<backend::Event> record_event(backend::Stream&) override { return nullptr; }
  double seconds_between(backend::Event&, backend::Event&) override { return 0; }
  void launch(backend::Executable&, const backend::LaunchDims&, std::span<const backend::ArgBinding>,
              backend::Stream&) override {}

  std::shared_ptr<backend::Executable> compile(const ir::Kernel& k) override {
    compiled = ir::print(k);
    seen = k.facts.target;
    struct Nothing : backend::Executable {
      std::string_view entry_name() const override { return "nothing"; }
    };
    return std::make_shared<Nothing>();
  }

  std::string compiled;
  ir::Target seen;

 private:
  ir::Target target_;
  DeviceInfo info_;
};

// A kernel with a Var carried by a loop: the pipeline's promote_vars turns it into a loop argument.
ir::Kernel sum_kernel() {
  return ir::parse(
      "kernel @sum(%x: buffer<f32, ro>, %out: buffer<f32, rw>, %n: u32) {cube_dim = [32, 1, 1], mode = unchecked, "
      "address = u32, vector = 1} {\n"
      "  %0 = var.decl : var<f32>\n  %1 = const 0.0 : f32\n  var.store %0, %1\n"
      "  %2 = const 0 : u32\n  %3 = const 1 : u32\n"
      "  for %2, %n, %3 (%4: u32) {\n    %5 = load %x, %4 : f32\n    %6 = var.load %0 : f32\n"
      "    %7 = add %6, %5 : f32\n    var.store %0, %7\n  }\n"
      "  %8 = var.load %0 : f32\n  store %out, %2, %8\n}\n");
}

TEST(CompileTarget, TheBackendGetsTheKernelPassedForItsTarget) {
  for (ir::Target target : {ir::Target::cpu(), ir::Target::cuda(90, true), ir::Target::cuda(80)}) {
    runtime::KernelCache cache;
    RecordingBackend backend(target);
    KernelRef sum = kernel_ref(sum_kernel());
    LaunchFacts facts;
    facts.cube_dim = {32, 1, 1};
    KernelId id = make_kernel_id(sum.signature(), facts, default_descs(sum.signature(), 1));
    cache.get(id, sum, backend);
    EXPECT_EQ(backend.seen, target) << ir::to_string(target);
    EXPECT_NE(backend.compiled.find("target = " + ir::to_string(target) + "}"), std::string::npos) << backend.compiled;
    EXPECT_EQ(backend.compiled.find("var."), std::string::npos) << "the pipeline ran: the Var is promoted\n"
                                                                << backend.compiled;
  }
}

TEST(CompileTarget, TheCpuBackendCompilesForTheCpu) {
  EXPECT_EQ(Device::cpu().state()->backend->target(), ir::Target::cpu());
  EXPECT_EQ(Device::cpu().info().target, ir::Target::cpu()) << "what the device's info says it compiles for";
}

}  // namespace
}  // namespace kiln
