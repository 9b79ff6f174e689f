// Running a fuzz program on a kiln device through the public runtime: the kernel as a recorded
// program (kernel_ref), its buffers uploaded (outputs poisoned), one launch, everything read back.
// The pipeline of passes and the backend run as they do for any program.
#include <map>
#include <span>

#include "kiln/error.h"
#include "kiln/kernel_ref.h"
#include "kiln/runtime/device.h"
#include "kiln/runtime/launch.h"
#include "program.h"

namespace kiln::fuzz {

namespace {

// One client per device for the whole process: a client holds the device's context, its pool
// and its compiled kernels, which thousands of small runs should share rather than remake.
const Client& client_for(const std::string& device) {
  static std::map<std::string, Client> clients;
  auto it = clients.find(device);
  if (it == clients.end()) it = clients.emplace(device, Device::parse(device).client()).first;
  return it->second;
}

}  // namespace

Outcome run_on_device(const Program& p, const std::string& device) {
  Outcome o;
  const Client& client = client_for(device);
  std::vector<Handle> handles;
  for (size_t i = 0; i < p.args.size(); ++i) {
    Handle raw = client.upload_bytes(p.args[i].data(), p.args[i].size());
    handles.push_back(ir::visit_scalar(p.kernel.params[i].type.scalar, [&]<class T>() { return raw.view_as<T>(); }));
  }
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
  for (size_t i = 0; i < handles.size(); ++i) {
    o.after.emplace_back(p.args[i].size());
    client.read_bytes(handles[i], o.after.back().data(), o.after.back().size());
  }
  return o;
}

}  // namespace kiln::fuzz
