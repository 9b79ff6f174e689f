// Launch helpers shared by the suite's cases: type sweeps, and run_map, which uploads inputs,
// poisons outputs, launches an elementwise kernel over n elements and reads every output back.
#pragma once

#include <array>
#include <tuple>
#include <utility>

#include "suite.h"

namespace kiln::suite {

// Calls f.template operator()<T>() for each T.
template <class... Ts, class F>
void for_types(F&& f) {
  (f.template operator()<Ts>(), ...);
}

// Uploads a host vector for a parameter of element type P: as it is, or, for a bool parameter
// fed from uint8_t (host_t<bool>), viewed as bool.
template <class P, class H>
Handle upload_input(Client& client, const std::vector<H>& host) {
  Handle h = client.upload(host);
  if constexpr (std::is_same_v<P, bool> && std::is_same_v<H, uint8_t>) h = h.view_as<bool>();
  return h;
}

// Uploads each input, gives NOut poisoned outputs of n elements of O, launches K (checked) with
// (inputs..., outputs...) over n / width units in cubes of `cube` units, reads the outputs back.
template <class K, class O, size_t NOut, class... In>
std::array<std::vector<host_t<O>>, NOut> run_map(Client& client, int width, uint32_t cube, size_t n,
                                                 const std::vector<In>&... ins) {
  // A host vector of uint8_t stands for a bool parameter (host_t<bool>): only that one is viewed as
  // the parameter's type; any other mismatch stays launch.type_mismatch.
  std::array<Handle, sizeof...(In)> in_handles;
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((in_handles[I] = upload_input<typename param_traits<std::tuple_element_t<I, detail::kernel_params_t<K>>>::scalar>(
          client, ins)),
     ...);
  }
  (std::index_sequence_for<In...>{});
  std::array<Handle, NOut> outs;
  for (auto& h : outs) h = poisoned_elems<O>(client, n);
  size_t units = n / size_t(width);
  CubeCount count{cubes_for(units, cube)};
  [&]<size_t... I, size_t... J>(std::index_sequence<I...>, std::index_sequence<J...>) {
    launch<K>(client, count, CubeDim{cube}, width, in_handles[I]..., outs[J]...);
  }
  (std::make_index_sequence<sizeof...(In)>{}, std::make_index_sequence<NOut>{});
  std::array<std::vector<host_t<O>>, NOut> r;
  for (size_t k = 0; k < NOut; ++k) r[k] = client.read<host_t<O>>(outs[k]);
  return r;
}

// Applies f to every element (index i) to build a reference.
template <class R, class F>
std::vector<R> tabulate(size_t n, F&& f) {
  std::vector<R> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = f(i);
  return v;
}

// "v4"
inline std::string vw(int width) { return "v" + std::to_string(width); }
// "n1000"
inline std::string nn(size_t n) { return "n" + std::to_string(n); }

}  // namespace kiln::suite
