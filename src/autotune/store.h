// Where autotune's results live: in memory for this process, and on disk, one JSON file per
// device in the cache folder, so that a later process starts with them.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kiln/autotune.h"
#include "kiln/backend/device_info.h"

namespace kiln::autotune {

struct Result {
  std::string checksum;                                 // of the candidate set it was chosen from
  std::string best;                                     // the winner's name
  std::vector<std::pair<std::string, double>> seconds;  // each candidate's median (inf: failed)
};

// A device's file name: its runtime, model and architecture (device_key_text), in file-name-safe
// characters ("cuda_device_NVIDIA_H200__architecture_sm_90a_"). Two GPUs of one model share results.
std::string device_tag(std::string_view runtime, const DeviceInfo& info);
// The fields that tell devices apart for autotune, as a key's text (device_tag is it, for files).
std::string device_key_text(std::string_view runtime, const DeviceInfo& info);

// The checksum of a candidate set: of the names, in order.
std::string candidate_checksum(std::span<const Candidate> candidates);

// One device's results file, KILN_CACHE_DIR/autotune/<tag>.json.
class ResultFile {
 public:
  explicit ResultFile(std::string tag);
  const std::string& path() const { return path_; }
  // The stored result for `key`; nullopt when the file or the entry is missing or the file is
  // unreadable (`why` says which).
  std::optional<Result> find(const std::string& key, std::string* why) const;
  // Stores `r` for `key`: reads the file again (another process may have added to it), replaces
  // the entry and writes the whole file through a temporary and a rename. Failure to write is no
  // error (the results are an optimisation); the answer says whether it worked.
  bool put(const std::string& key, const Result& r) const;

 private:
  std::map<std::string, Result> read(std::string* why) const;
  std::string tag_;
  std::string path_;
};

}  // namespace kiln::autotune
