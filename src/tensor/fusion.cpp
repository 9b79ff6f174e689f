// Pending steps and the run of an elementwise chain as one kernel (decision 023).
#include "tensor/fusion.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bitset>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>

#include "kiln/runtime/extension.h"
#include "kiln/tensor/fusion.h"
#include "tensor/support.h"

namespace kiln {

namespace fusion {

namespace {
std::atomic<int> g_override{-1};  // -1: KILN_FUSION decides; 0 off; 1 on
// KILN_FUSION as last read: -1 not yet; 0 off; 1 on; 2 another word. Read once, not on every op:
// getenv walks the whole environment, which costs an elementwise op more than recording it.
std::atomic<int> g_from_env{-1};

int read_mode() {
  const char* v = std::getenv("KILN_FUSION");
  if (!v || !*v || std::strcmp(v, "on") == 0) return 1;
  return std::strcmp(v, "off") == 0 ? 0 : 2;
}
}  // namespace

bool enabled() {
  const int o = g_override.load(std::memory_order_relaxed);
  if (o >= 0) return o == 1;
  int e = g_from_env.load(std::memory_order_relaxed);
  if (e < 0) g_from_env.store(e = read_mode(), std::memory_order_relaxed);
  if (e == 2) {
    const char* v = std::getenv("KILN_FUSION");
    throw Error("fusion.bad_mode", "KILN_FUSION is '" + std::string(v ? v : "") + "'; it takes on or off");
  }
  return e == 1;
}

void set_enabled(std::optional<bool> on) {
  g_override.store(on ? int(*on) : -1, std::memory_order_relaxed);
  if (!on) g_from_env.store(-1, std::memory_order_relaxed);  // read KILN_FUSION again
}

}  // namespace fusion

namespace tensor {

namespace {

// A chain has at most this many distinct steps, and reads at most this many distinct inputs (a
// step or an input read many times, as y * y reads y, counted once): longer ones run in parts.
// (A kernel's own limit, 16 parameters, is kept by run(), which splits a chain that passes it.)
constexpr int kMaxSteps = 48;
constexpr int kMaxOperands = 96;
// A chain holds the tensors given to it, which the eager ops would have freed step by step: past
// twice its result's bytes (and 1 MiB), it runs, so that a loop such as acc = std::move(acc) + x
// does not keep every x alive.
constexpr int64_t kMinTakenBytes = int64_t(1) << 20;

std::atomic<size_t> g_live_steps{0};  // steps not yet destroyed: sync and assign skip the registry at 0
uint64_t g_runs = 0;                  // chains run so far (under the fusion mutex): Pending::generation
uint64_t g_walks = 0;                 // walks over chains so far (under the fusion mutex): Pending::mark

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

bool same_view(const Tensor& a, const Tensor& b);

// The exact size of a chain (Pending's steps, operands and taken_bytes): its distinct unrun
// steps, its distinct inputs and the bytes of the distinct tensors given to it. A chain is a DAG;
// the walk marks each step it counts with its own number, so that a step reached along several
// paths is counted once; inputs are told apart as gather() tells them. It stops counting once a
// limit is passed (the chain then runs in parts, whatever the exact figure).
class ChainSize {
 public:
  int steps = 1;  // the step being recorded
  int inputs = 0;
  int64_t taken = 0;

  ChainSize() : walk_(++g_walks) {}
  bool over() const { return steps > kMaxSteps || inputs > kMaxOperands; }
  void step(Pending& p) {
    if (p.mark == walk_ || over()) return;
    p.mark = walk_;
    ++steps;
    for (Pending::Input& in : p.inputs) {
      if (in.kind == Pending::Kind::Number) number(in.number);
      else if (in.kind == Pending::Kind::Tensor) tensor(in.tensor, in.owned);
      else if (in.step->done) tensor(in.step->result, in.owned);
      else step(*in.step);
    }
  }
  void tensor(const Tensor& t, bool given) {
    if (over()) return;
    for (int i = 0; i < inputs; ++i) {
      if (seen_[size_t(i)].tensor && same_view(*seen_[size_t(i)].tensor, t)) return;
    }
    seen_[size_t(inputs++)] = Seen{&t, 0, ir::Scalar::Bool};
    if (given) taken += t.numel() * ir::scalar_bytes(t.dtype());
  }
  void number(const ScalarValue& v) {
    if (over()) return;
    uint64_t bits;
    std::memcpy(&bits, v.bits.data(), sizeof bits);
    for (int i = 0; i < inputs; ++i) {
      const Seen& s = seen_[size_t(i)];
      if (!s.tensor && s.type == v.type && s.bits == bits) return;
    }
    seen_[size_t(inputs++)] = Seen{nullptr, bits, v.type};
  }

 private:
  struct Seen {
    const Tensor* tensor;  // null: a number, of these bits and type
    uint64_t bits;
    ir::Scalar type;
  };
  uint64_t walk_;
  std::array<Seen, kMaxOperands + 1> seen_;  // the first `inputs` (the rest left unset: no clearing per walk)
};

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
  std::vector<Pending::Input*> first;   // the input's first occurrence
  std::vector<bool> given;              // every occurrence given by std::move
  std::vector<std::vector<int>> args;   // per step, as WalkStep::args
  std::vector<std::bitset<128>> reads;  // per step: the inputs it depends on

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
    ResultRule rule;
    rule.order = &r.order;  // as recorded: the vote of the operands as they were then
    r.result = run_eager(*r.op, ops, rule, Checked{r.in, r.out, r.shape, r.client});
    r.done = true;
    ++g_runs;
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
  spec.steps.reserve(chain.steps.size());
  for (size_t i = 0; i < chain.steps.size(); ++i) {
    const Pending& p = *chain.steps[i];
    spec.steps.push_back(WalkStep{p.op->name, &p.op->fn, p.out, std::move(inputs.args[i])});  // args are read no more
  }
  std::array<DType, kMaxWalkOutputs> out_types{};
  for (size_t j = 0; j < stored.size(); ++j) {
    spec.outputs.push_back(int(stored[j]));
    out_types[j] = chain.steps[stored[j]]->out;
  }
  std::array<Tensor, kMaxWalkOutputs> results;
  ResultRule rule;
  rule.order = &r.order;  // new memory laid out as the last op alone would have laid it out
  launch_walk(
      spec.name.c_str(), r.client, operands, r.shape, std::span<const DType>(out_types.data(), stored.size()), rule,
      [&](int rank, int width) -> const KernelRef& {
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
  ++g_runs;
  finish(chain);
}

// Reads `memory_id`, directly, through the result of a step that has run, or through a step that
// has not. A chain is a DAG (y * y reads one step twice): each step is visited once a walk, or a
// chain of 40 such steps would be visited 2^40 times.
bool reads(Pending& p, uint64_t memory_id, uint64_t walk) {
  if (p.mark == walk) return false;  // reached along another path, where it read nothing of it
  p.mark = walk;
  for (const Pending::Input& in : p.inputs) {
    if (in.kind == Pending::Kind::Tensor && in.tensor.handle().memory_id() == memory_id) return true;
    if (in.kind != Pending::Kind::Step) continue;
    if (in.step->done ? in.step->result.handle().memory_id() == memory_id : reads(*in.step, memory_id, walk))
      return true;
  }
  return false;
}

// Runs the chains (newest first, so that a chain runs whole rather than from its middle) whose
// root passes `wanted`. A chain that throws is marked failed and left to its own use (which runs it
// again, and throws again); the others still run, and the first error is thrown at the end.
template <class Wanted>
void run_pending(Wanted wanted) {
  if (g_live_steps.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::recursive_mutex> lock(fusion_mutex());
  // Read in place: a run records no steps, so the list does not change under it.
  const std::vector<std::weak_ptr<Pending>>& steps = registry().steps;
  std::exception_ptr first;
  for (size_t i = steps.size(); i-- > 0;) {
    std::shared_ptr<Pending> p = steps[i].lock();
    if (!p || p->done || p->failed || !wanted(*p)) continue;
    try {
      run(p);
    } catch (...) {
      p->failed = true;
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

void run_client(uint64_t client_id) {
  run_pending([&](Pending& p) { return p.client.id() == client_id; });
}

// The memory order the op's own result would have had, launched eagerly at this call: that of
// the operand it would be written into (the first given one, left to right, that holds its memory
// alone and has the result's shape and element type: a given pending operand is such a temporary
// when nothing else holds it), else the operands' vote. A pending operand's order is the one
// recorded for it. So `exp(wT) + a` is laid out as exp(wT) is, as eagerly, where the vote ties.
template <class LentElsewhere>
DimOrder own_order(std::span<Operand> operands, const Checked& checked, const LentElsewhere& lent_elsewhere) {
  for (size_t i = 0; i < operands.size(); ++i) {
    const Operand& o = operands[i];
    if (o.is_scalar() || !o.owned() || lent_elsewhere(i)) continue;
    const Tensor& t = o.tensor();
    if (t.shape() != *checked.shape || t.dtype() != checked.out) continue;
    if (const std::shared_ptr<Pending>& p = t.pending_step()) {
      if (p.use_count() == 1) return p->order;
    } else if (t.can_mut() && !self_overlapping(t.shape(), t.strides())) {
      return memory_order(t.shape(), t.strides());
    }
  }
  return voted_order(operands, *checked.shape);
}

}  // namespace

Pending::Pending() { g_live_steps.fetch_add(1, std::memory_order_relaxed); }
Pending::~Pending() { g_live_steps.fetch_sub(1, std::memory_order_relaxed); }

Tensor record_pending(OpInfo& info, std::span<Operand> operands, const Checked& checked) {
  static const bool runner = (runtime::register_deferred_runner(&run_client), true);
  (void)runner;
  std::lock_guard<std::recursive_mutex> lock(fusion_mutex());
  // A copy of a tensor whose chain has run is a plain tensor.
  for (Operand& o : operands) {
    if (!o.is_scalar() && o.tensor().pending_step() && o.tensor().pending_step()->done) o.tensor().eval();
  }
  // Given by std::move and not lent in the same call (std::move(z) * z): a tensor given and lent
  // at once is treated as lent.
  auto lent_elsewhere = [&](size_t i) {
    for (size_t j = 0; j < operands.size(); ++j) {
      if (j != i && !operands[j].is_scalar() && &operands[j].tensor() == &operands[i].tensor()) return true;
    }
    return false;
  };
  // The chain's size with this step (steps, inputs, bytes of tensors given to it), first as
  // bounds: the counts of the distinct pending operands (y * y reads one chain) summed, one input
  // per other operand. Only a bound past a limit walks the chain for the exact figures.
  int steps = 0, uses = 0;
  int64_t taken = 0;
  bool steps_exact = true;  // one pending operand whose count is exact (z = std::move(z) + 1), or none
  auto bound = [&] {
    steps = 1, uses = 0, taken = 0;
    std::array<const Pending*, 4> seen{};
    size_t n_seen = 0;
    for (size_t i = 0; i < operands.size(); ++i) {
      const Operand& o = operands[i];
      const Pending* p = o.is_scalar() ? nullptr : o.tensor().pending_step().get();
      if (!p) {
        ++uses;
        if (o.owned() && !lent_elsewhere(i)) taken += o.tensor().numel() * ir::scalar_bytes(o.tensor().dtype());
      } else if (std::find(seen.begin(), seen.begin() + n_seen, p) == seen.begin() + n_seen) {
        if (n_seen < seen.size()) seen[n_seen++] = p;
        steps += p->steps, uses += p->operands, taken += p->taken_bytes;
      }
    }
    steps_exact = n_seen == 0 || (n_seen == 1 && seen[0]->steps_exact && seen[0]->generation == g_runs);
  };
  int64_t count = 1;
  for (int64_t d : *checked.shape) count *= d;
  const int64_t result_bytes = count * ir::scalar_bytes(checked.out);
  const int64_t taken_limit = std::max(2 * result_bytes, kMinTakenBytes);
  auto over = [&] { return steps > kMaxSteps || uses > kMaxOperands || taken > taken_limit; };
  bound();
  // The walk gives the exact figures; not needed when the step count is exact and already over.
  if (over() && !(steps_exact && steps > kMaxSteps)) {
    ChainSize exact;
    for (size_t i = 0; i < operands.size(); ++i) {
      const Operand& o = operands[i];
      if (o.is_scalar()) {
        ScalarValue v;
        (void)runtime::convert_scalar(o.scalar(), checked.in, v);  // checked: it holds the value
        exact.number(v);
      } else if (o.tensor().pending_step()) {
        exact.step(*o.tensor().pending_step());
      } else {
        exact.tensor(o.tensor(), o.owned() && !lent_elsewhere(i));
      }
    }
    steps = exact.steps, uses = exact.inputs, taken = exact.taken;
    steps_exact = true;
  }
  if (over()) {
    for (Operand& o : operands) {  // the operands' chains run first
      if (!o.is_scalar()) o.tensor().eval();
    }
    bound();
  }
  auto p = std::make_shared<Pending>();
  p->op = &info;
  p->in = checked.in;
  p->out = checked.out;
  p->shape = *checked.shape;
  p->order = own_order(operands, checked, lent_elsewhere);
  p->client = *checked.client;
  p->steps = steps;
  p->operands = uses;
  p->taken_bytes = taken;
  p->steps_exact = steps_exact;
  p->generation = g_runs;
  p->inputs.resize(operands.size());
  // Lent operands first, then given ones: a tensor given and lent in one call (std::move(z) * z)
  // is read through its lent copy before it is taken.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < operands.size(); ++i) {
      Pending::Input& in = p->inputs[i];
      Operand& o = operands[i];
      if (o.is_scalar()) {
        if (pass == 0) {
          in.kind = Pending::Kind::Number;
          (void)runtime::convert_scalar(o.scalar(), checked.in, in.number);  // checked: it holds the value
        }
        continue;
      }
      const bool given = o.owned() && !lent_elsewhere(i);
      if (given != (pass == 1)) continue;
      in.owned = given;
      Tensor t = given ? o.take() : o.tensor();  // a given tensor is the chain's now
      if (t.pending_step()) {
        in.kind = Pending::Kind::Step;
        in.step = t.pending_step();
      } else {
        in.tensor = std::move(t);
      }
    }
  }
  remember(p);
  // From the step's own copies: checked's shape and client may be a given operand's, taken above.
  Client client = p->client;
  Shape shape = p->shape;
  return Tensor(std::move(client), std::move(shape), checked.out, std::move(p));
}

Tensor take_result(std::shared_ptr<Pending>& pending) {
  std::lock_guard<std::recursive_mutex> lock(fusion_mutex());
  if (!pending->done) {
    run(pending);  // throws again for a chain that failed; stays pending then
    pending->failed = false;
  }
  std::shared_ptr<Pending> mine = std::move(pending);
  if (mine.use_count() == 1) return std::move(mine->result);
  return mine->result;
}

void flush_readers(uint64_t memory_id) {
  run_pending([&](Pending& p) { return reads(p, memory_id, ++g_walks); });
}

}  // namespace tensor

void fusion::flush() {
  tensor::run_pending([](tensor::Pending&) { return true; });
}

}  // namespace kiln
