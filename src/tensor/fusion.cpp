// Pending steps and the run of an elementwise chain as one kernel (decision 023).
#include "tensor/fusion.h"

#include <algorithm>
#include <atomic>
#include <bitset>
#include <cstdlib>
#include <mutex>
#include <string>

#include "kiln/tensor/fusion.h"
#include "runtime/deferred.h"
#include "runtime/scalar_convert.h"
#include "tensor/support.h"

namespace kiln {

namespace fusion {

namespace {
std::atomic<int> g_override{-1};  // -1: KILN_FUSION decides; 0 off; 1 on
}  // namespace

bool enabled() {
  const int o = g_override.load(std::memory_order_relaxed);
  if (o >= 0) return o == 1;
  const char* v = std::getenv("KILN_FUSION");
  if (!v || !*v) return true;
  const std::string w(v);
  if (w == "on") return true;
  if (w == "off") return false;
  throw Error("fusion.bad_mode", "KILN_FUSION is '" + w + "'; it takes on or off");
}

void set_enabled(std::optional<bool> on) { g_override.store(on ? int(*on) : -1, std::memory_order_relaxed); }

}  // namespace fusion

namespace tensor {

namespace {

// A chain has at most this many steps, and reads at most this many operands (shared ones counted
// per use): longer ones run in parts. (A kernel's own limit, on distinct inputs, is kept by run().)
constexpr int kMaxSteps = 48;
constexpr int kMaxOperands = 96;

// Held while steps are recorded or run: steps are shared between tensors, which may live on
// several threads. Recursive: a run may need an earlier step run first.
std::recursive_mutex& fusion_mutex() {
  static auto* m = new std::recursive_mutex();  // lives to exit, as the kernels do
  return *m;
}

// Every step recorded, oldest first, held weakly: flush() and flush_readers() find the chains
// that have not run here. Dead and run entries are pruned as the list grows.
struct Registry {
  std::vector<std::weak_ptr<Pending>> steps;
  size_t prune_at = 256;
};

Registry& registry() {
  static auto* r = new Registry();
  return *r;
}

void remember(const std::shared_ptr<Pending>& p) {
  Registry& r = registry();
  if (r.steps.size() >= r.prune_at) {
    std::erase_if(r.steps, [](const std::weak_ptr<Pending>& w) {
      std::shared_ptr<Pending> s = w.lock();
      return !s || s->done;
    });
    r.prune_at = std::max<size_t>(256, 2 * r.steps.size());
  }
  r.steps.push_back(p);
}

// The steps of a chain that have not run, each once, inputs before users (the root last), with a
// reference that holds each and the number of edges to it from the chain's own steps: a step
// held by more than those is held outside the chain (a variable, another chain).
struct Chain {
  std::vector<Pending*> steps;
  std::vector<const std::shared_ptr<Pending>*> holders;
  std::vector<long> uses;

  int index_of(const Pending* p) const {
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i] == p) return int(i);
    }
    return -1;
  }
  bool held_outside(size_t i) const { return holders[i]->use_count() > uses[i]; }
};

void collect(const std::shared_ptr<Pending>& p, Chain& chain) {
  // Inputs whose steps have run (stored by an earlier chain) are tensors now.
  for (Pending::Input& in : p->inputs) {
    if (in.kind != Pending::Kind::Step || !in.step->done) continue;
    in.tensor = in.owned && in.step.use_count() == 1 ? std::move(in.step->result) : in.step->result;
    in.step.reset();
    in.kind = Pending::Kind::Tensor;
  }
  for (Pending::Input& in : p->inputs) {
    if (in.kind != Pending::Kind::Step) continue;
    int i = chain.index_of(in.step.get());
    if (i < 0) {
      collect(in.step, chain);
      i = int(chain.steps.size()) - 1;
    }
    ++chain.uses[size_t(i)];
  }
  chain.steps.push_back(p.get());
  chain.holders.push_back(&p);
  chain.uses.push_back(0);
}

// The step's inputs as an op's operands (which point into them).
std::vector<Operand> operands_of(Pending& p) {
  std::vector<Operand> ops;
  ops.reserve(p.inputs.size());
  for (Pending::Input& in : p.inputs) {
    if (in.kind == Pending::Kind::Number) ops.emplace_back(in.number);
    else if (in.owned) ops.emplace_back(std::move(in.tensor));
    else ops.emplace_back(static_cast<const Tensor&>(in.tensor));
  }
  return ops;
}

bool same_view(const Tensor& a, const Tensor& b) {
  return a.handle().memory_id() == b.handle().memory_id() && a.handle().offset() == b.handle().offset() &&
         a.dtype() == b.dtype() && a.shape() == b.shape() && a.strides() == b.strides();
}

// The kernel's name: its steps' ops in order, a run of one op counted (addx32), cut at 48
// characters.
std::string fused_name(const Chain& chain) {
  std::string name = "tensor_fused";
  for (size_t i = 0; i < chain.steps.size();) {
    size_t j = i;
    while (j < chain.steps.size() && chain.steps[j]->op == chain.steps[i]->op) ++j;
    std::string part = std::string("_") + chain.steps[i]->op->name + (j - i > 1 ? "x" + std::to_string(j - i) : "");
    if (name.size() + part.size() > 48) return name + "_etc";
    name += part;
    i = j;
  }
  return name;
}

void finish(const Chain& chain) {
  // Inputs before users: a step's inputs are released once every step before it has been.
  for (Pending* p : chain.steps) {
    p->inputs.clear();
    p->inputs.shrink_to_fit();
  }
}

// The distinct inputs of a chain (a tensor view once however often it is read, a number once per
// value), each step's arguments over them, and which inputs each step reads through its own
// earlier steps.
struct Inputs {
  std::vector<Pending::Input*> first;       // the input's first occurrence
  std::vector<bool> given;                  // every occurrence given by std::move
  std::vector<std::vector<int>> args;       // per step, as WalkStep::args
  std::vector<std::bitset<128>> reads;      // per step: the inputs it depends on

  size_t size() const { return first.size(); }
};

bool same_input(const Pending::Input& a, const Pending::Input& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Pending::Kind::Number) return a.number.type == b.number.type && a.number.bits == b.number.bits;
  return same_view(a.tensor, b.tensor);
}

Inputs gather(const Chain& chain) {
  Inputs in;
  for (Pending* p : chain.steps) {
    std::vector<int> args;
    std::bitset<128> reads;
    for (Pending::Input& x : p->inputs) {
      if (x.kind == Pending::Kind::Step) {
        const int j = chain.index_of(x.step.get());
        args.push_back(-(j + 1));
        reads |= in.reads[size_t(j)];
        continue;
      }
      size_t k = 0;
      while (k < in.size() && !same_input(*in.first[k], x)) ++k;
      if (k == in.size()) {
        in.first.push_back(&x);
        in.given.push_back(x.kind == Pending::Kind::Tensor && x.owned);
      } else {
        in.given[k] = in.given[k] && x.owned;
      }
      args.push_back(int(k));
      reads.set(k);
    }
    in.args.push_back(std::move(args));
    in.reads.push_back(reads);
  }
  return in;
}

// Runs the chain that ends at `root` as one kernel, storing the root and every step held outside
// the chain. Some parts run first, each as its own chain: a step held outside that the root's walk
// cannot store (another shape, or more outputs than a walk has), and, while the chain reads more
// inputs than a kernel takes, its largest part that fits.
void run(const std::shared_ptr<Pending>& root) {
  Chain chain;
  Inputs inputs;
  std::vector<size_t> stored;  // steps stored, the root first
  for (;;) {
    chain = Chain{};
    collect(root, chain);
    const size_t last = chain.steps.size() - 1;
    stored.assign(1, last);
    std::shared_ptr<Pending> apart;
    for (size_t i = 0; i < last && !apart; ++i) {
      if (!chain.held_outside(i)) continue;
      if (chain.steps[i]->shape == root->shape && stored.size() < kMaxWalkOutputs) stored.push_back(i);
      else apart = *chain.holders[i];
    }
    if (!apart) {
      inputs = gather(chain);
      if (inputs.size() + stored.size() + 1 <= kMaxWalkParams) break;
      size_t best = 0;
      for (size_t i = 0; i < last; ++i) {
        const size_t n = inputs.reads[i].count();
        if (n + 2 <= kMaxWalkParams && n > inputs.reads[best].count()) best = i;
      }
      apart = *chain.holders[best];
    }
    run(apart);
  }
  Pending& r = *root;
  if (chain.steps.size() == 1) {  // one op: its own kernel, as if fusion were off
    std::vector<Operand> ops = operands_of(r);
    r.result = run_eager(*r.op, ops, ResultRule{}, Checked{r.in, r.out, r.shape, r.client});
    r.done = true;
    finish(chain);
    return;
  }

  WalkSpec spec;
  spec.name = fused_name(chain);
  std::vector<Operand> operands;
  operands.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    Pending::Input& x = *inputs.first[k];
    const bool number = x.kind == Pending::Kind::Number;
    spec.kinds.push_back(number ? OperandKind::Scalar : OperandKind::Tensor);
    spec.dtypes.push_back(number ? x.number.type : x.tensor.dtype());
    if (number) operands.emplace_back(x.number);
    else if (inputs.given[k]) operands.emplace_back(std::move(x.tensor));
    else operands.emplace_back(static_cast<const Tensor&>(x.tensor));
  }
  for (size_t i = 0; i < chain.steps.size(); ++i) {
    const Pending& p = *chain.steps[i];
    spec.steps.push_back(WalkStep{p.op->name, &p.op->fn, p.out, inputs.args[i]});
  }
  std::array<DType, kMaxWalkOutputs> out_types{};
  for (size_t j = 0; j < stored.size(); ++j) {
    spec.outputs.push_back(int(stored[j]));
    out_types[j] = chain.steps[stored[j]]->out;
  }
  std::array<Tensor, kMaxWalkOutputs> results;
  launch_walk(spec.name.c_str(), r.client, operands, r.shape, std::span<const DType>(out_types.data(), stored.size()), ResultRule{},
              [&](int rank, int width) {
                spec.rank = rank;
                spec.width = width;
                return walk_kernel(spec);
              },
              std::span<Tensor>(results.data(), stored.size()));
  for (size_t j = 0; j < stored.size(); ++j) {
    Pending& p = *chain.steps[stored[j]];
    p.result = std::move(results[j]);
    p.done = true;
  }
  finish(chain);
}

// Reads `memory_id`, directly or through its steps that have not run.
bool reads(const Pending& p, uint64_t memory_id) {
  for (const Pending::Input& in : p.inputs) {
    if (in.kind == Pending::Kind::Tensor && in.tensor.handle().memory_id() == memory_id) return true;
    if (in.kind == Pending::Kind::Step && !in.step->done && reads(*in.step, memory_id)) return true;
  }
  return false;
}

// Runs the chains (newest first, so that a chain runs whole rather than from its middle) whose
// root passes `wanted`.
template <class Wanted>
void run_pending(Wanted wanted) {
  std::lock_guard<std::recursive_mutex> lock(fusion_mutex());
  std::vector<std::weak_ptr<Pending>> steps = registry().steps;  // a run may record no steps, but prune
  for (size_t i = steps.size(); i-- > 0;) {
    std::shared_ptr<Pending> p = steps[i].lock();
    if (p && !p->done && wanted(*p)) run(p);
  }
}

void run_client(uint64_t client_id) {
  run_pending([&](const Pending& p) { return p.client.id() == client_id; });
}

}  // namespace

Tensor record_pending(OpInfo& info, std::span<Operand> operands, const Checked& checked) {
  static const bool runner = (runtime::set_deferred_runner(&run_client), true);
  (void)runner;
  int64_t count = 1;
  for (int64_t d : checked.shape) count *= d;
  (void)checked_u32(count, info.name, "elements");  // at the call, as the eager op would
  std::lock_guard<std::recursive_mutex> lock(fusion_mutex());
  // A copy of a tensor whose chain has run is a plain tensor.
  for (Operand& o : operands) {
    if (!o.is_scalar() && o.tensor().pending() && o.tensor().pending_step()->done) o.tensor().eval();
  }
  auto sizes = [&](int& steps, int& inputs) {
    steps = 1;
    inputs = 0;
    for (const Operand& o : operands) {
      const bool step = !o.is_scalar() && o.tensor().pending();
      steps += step ? o.tensor().pending_step()->steps : 0;
      inputs += step ? o.tensor().pending_step()->operands : 1;
    }
  };
  int steps = 0, inputs = 0;
  sizes(steps, inputs);
  if (steps > kMaxSteps || inputs > kMaxOperands) {  // the operands' chains run first
    for (Operand& o : operands) {
      if (!o.is_scalar()) o.tensor().eval();
    }
    sizes(steps, inputs);
  }
  auto p = std::make_shared<Pending>();
  p->op = &info;
  p->in = checked.in;
  p->out = checked.out;
  p->shape = checked.shape;
  p->client = checked.client;
  p->steps = steps;
  p->operands = inputs;
  p->inputs.resize(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    Pending::Input& in = p->inputs[i];
    Operand& o = operands[i];
    if (o.is_scalar()) {
      in.kind = Pending::Kind::Number;
      (void)runtime::convert_scalar(o.scalar(), checked.in, in.number);  // checked: it holds the value
      continue;
    }
    in.owned = o.owned();
    Tensor t = o.take();  // a given tensor is the chain's now
    if (t.pending()) {
      in.kind = Pending::Kind::Step;
      in.step = t.pending_step();
    } else {
      in.tensor = std::move(t);
    }
  }
  remember(p);
  return Tensor(checked.client, checked.shape, checked.out, std::move(p));
}

Tensor take_result(std::shared_ptr<Pending>& pending) {
  std::lock_guard<std::recursive_mutex> lock(fusion_mutex());
  if (!pending->done) run(pending);
  std::shared_ptr<Pending> mine = std::move(pending);
  if (mine.use_count() == 1) return std::move(mine->result);
  return mine->result;
}

void flush_readers(uint64_t memory_id) {
  run_pending([&](const Pending& p) { return reads(p, memory_id); });
}

}  // namespace tensor

void fusion::flush() {
  tensor::run_pending([](const tensor::Pending&) { return true; });
}

}  // namespace kiln
