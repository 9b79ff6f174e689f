// Builds the KernelId `kiln dump` traces a gallery kernel with, through make_kernel_id like every
// launch: comptime values come from --comptime NAME=VALUE (parsed by the parameter's type) or the
// entry's defaults; tensors are described with rank 2.
#pragma once

#include <charconv>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gallery/gallery.h"
#include "kiln/dsl.h"
#include "kiln/error.h"

namespace kiln::gallery {

template <class T>
T parse_comptime(const std::string& name, const std::string& text) {
  if constexpr (std::is_same_v<T, bool>) {
    if (text == "true" || text == "1") return true;
    if (text == "false" || text == "0") return false;
  } else if constexpr (std::is_integral_v<T>) {
    T v{};
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return v;
  } else if constexpr (std::is_floating_point_v<T>) {
    try {
      size_t used = 0;
      double d = std::stod(text, &used);
      if (used == text.size()) return static_cast<T>(d);
    } catch (const std::exception&) {
    }
  }
  throw Error("tool.bad_option", "--comptime " + name + "=" + text + ": not a valid value for this parameter");
}

template <KernelFunction K>
KernelId dump_id(const DumpOptions& o, ir::Dim3 cube_dim, int default_vector,
                 const std::map<std::string, std::string>& defaults) {
  using Params = detail::kernel_params_t<K>;
  LaunchFacts facts;
  facts.cube_dim = cube_dim;
  facts.mode = o.mode;
  facts.vector_width = uint8_t(o.vector ? o.vector : default_vector);
  std::vector<ParamDesc> descs = param_descs<K>(facts.vector_width);
  std::set<std::string> known;
  [&]<size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          using P = std::tuple_element_t<I, Params>;
          if constexpr (param_traits<P>::kind == ParamKind::Comptime) {
            using T = typename param_traits<P>::value_type;
            std::string name = detail::param_name<K>(I);
            known.insert(name);
            auto it = o.comptime.find(name);
            std::string text;
            if (it != o.comptime.end()) text = it->second;
            else if (auto d = defaults.find(name); d != defaults.end()) text = d->second;
            else throw Error("tool.bad_option", std::string(K::name) + " needs --comptime " + name + "=VALUE");
            descs[I].comptime = comptime_bits<T>(parse_comptime<T>(name, text));
          } else if constexpr (param_traits<P>::kind == ParamKind::Tensor) {
            descs[I].rank = 2;
          }
        }(),
        ...);
  }
  (std::make_index_sequence<std::tuple_size_v<Params>>{});
  for (const auto& [name, value] : o.comptime) {
    if (known.count(name)) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw Error("tool.bad_option", std::string(K::name) + " has no comptime parameter '" + name + "'" +
                                       (known.empty() ? std::string("; it takes none") : "; it takes " + list));
  }
  return kernel_id<K>(facts, descs);
}

}  // namespace kiln::gallery
