// What every family's case does the same way: one client per device, buffers uploaded and read
// back, a device's refusal told from an error it ran into, a verdict written into the report.
#include "kiln/runtime/client.h"
#include "kiln/runtime/device.h"
#include "program.h"

namespace kiln::fuzz {

const Client& client_for(const std::string& device) {
  static std::map<std::string, Client> clients;
  auto it = clients.find(device);
  if (it == clients.end()) it = clients.emplace(device, Device::parse(device).client()).first;
  return it->second;
}

std::vector<Handle> upload(const Client& client, const std::vector<ir::Param>& params,
                           const std::vector<std::vector<unsigned char>>& args) {
  std::vector<Handle> handles;
  for (size_t i = 0; i < args.size(); ++i) {
    Handle raw = client.upload_bytes(args[i].data(), args[i].size());
    handles.push_back(ir::visit_scalar(params[i].type.scalar, [&]<class T>() { return raw.view_as<T>(); }));
  }
  return handles;
}

void read_back(const Client& client, const std::vector<Handle>& handles,
               const std::vector<std::vector<unsigned char>>& args, Outcome& o) {
  for (size_t i = 0; i < handles.size(); ++i) {
    o.after.emplace_back(args[i].size());
    client.read_bytes(handles[i], o.after.back().data(), o.after.back().size());
  }
}

bool refused_by_device(const Outcome& want, const Outcome& got, CaseReport& r) {
  if (got.error_kind.empty() || !want.error_kind.empty()) return false;
  bool refusal = false;
  for (const char* prefix : {"compile.", "trace.", "ir.", "verify", "emit.", "record.", "lower."}) {
    refusal = refusal || got.error_kind.rfind(prefix, 0) == 0;
  }
  if (!refusal) return false;
  r.status = CaseReport::Status::Refused;
  r.difference = got.error_kind + ": " + got.error_message;
  return true;
}

bool errors_differ(const Outcome& want, const Outcome& got, Verdict& v) {
  if (want.error_kind == got.error_kind) return false;
  v.agree = false;
  v.first_difference = "the evaluator ended with '" + want.error_kind + "' (" + want.error_message +
                       "), the device with '" + got.error_kind + "' (" + got.error_message + ")";
  return true;
}

bool settle(CaseReport& r, const Verdict& v) {
  r.exact = v.exact;
  r.approximate = v.approximate;
  r.unknown = v.unknown;
  if (v.agree) return false;
  r.status = CaseReport::Status::Disagree;
  r.both_failed = false;
  r.difference = v.first_difference;
  return true;
}

}  // namespace kiln::fuzz
