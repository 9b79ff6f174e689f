// Running a fuzz program on a kiln device through the public runtime: the kernel as a recorded
// program (kernel_ref), its buffers uploaded (outputs poisoned), one launch, everything read back.
// The pipeline of passes and the backend run as they do for any program.
#include <span>

#include "kiln/error.h"
#include "kiln/kernel_ref.h"
#include "kiln/runtime/client.h"
#include "kiln/runtime/launch.h"
#include "program.h"

namespace kiln::fuzz {

Outcome run_on_device(const Program& p, const std::string& device) {
  Outcome o;
  const Client& client = client_for(device);
  const std::vector<Handle> handles = upload(client, p.kernel.params, p.args);
  std::vector<Arg> args;
  for (const Handle& h : handles) args.emplace_back(h);
  LaunchConfig config;
  config.count = CubeCount{p.cubes};
  config.dim = CubeDim{p.units};
  config.mode = p.checked ? ir::ExecMode::Checked : ir::ExecMode::Unchecked;
  try {
    launch(client, kernel_ref(p.kernel), config, std::span<const Arg>(args.data(), args.size()));
    client.sync();
  } catch (const Error& e) {
    o.error_kind = e.kind();
    o.error_message = e.what();
  }
  read_back(client, handles, p.args, o);
  return o;
}

}  // namespace kiln::fuzz
