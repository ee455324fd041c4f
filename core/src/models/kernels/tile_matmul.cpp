#include "npe/models/tile_matmul.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <torch/torch.h>

#ifdef NPE_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include "guarded_operands.h"

namespace npe {
namespace {

void check_arguments(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                     const TileMatmulEpilogue& epilogue) {
  const auto dims = a.dim();
  TORCH_CHECK((dims == 2 || dims == 3) && b.dim() == dims && out.dim() == dims,
              "tile_matmul: 2-D (or batched 3-D) tensors, all of one rank");
  const auto m = dims - 2, k = dims - 1;  // the matrix dimensions
  TORCH_CHECK(a.size(k) == b.size(m) && out.size(m) == a.size(m) && out.size(k) == b.size(k) &&
                  (dims == 2 || (a.size(0) == b.size(0) && out.size(0) == a.size(0))),
              "tile_matmul: shapes ", a.sizes(), " @ ", b.sizes(), " -> ", out.sizes());
  TORCH_CHECK(out.stride(k) == 1 || out.size(k) == 1, "tile_matmul: out needs unit stride along N");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "tile_matmul: a and b differ in dtype");
  TORCH_CHECK(out.scalar_type() == torch::kFloat32 || out.scalar_type() == a.scalar_type(),
              "tile_matmul: out must be float32 or of the operands' dtype");
  TORCH_CHECK(
      !epilogue.bias || (dims == 2 && epilogue.bias->dim() == 1 &&
                         epilogue.bias->size(0) == b.size(1) && epilogue.bias->is_contiguous()),
      "tile_matmul: bias must be a contiguous [N], of 2-D products");
}

// The same product from libtorch operations, used where oneDNN is not available.
void composed_matmul(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                     const TileMatmulEpilogue& epilogue) {
  if (a.dim() == 3) {
    auto product = at::bmm(a, b);
    if (epilogue.accumulate) {
      out.add_(product);
    } else {
      out.copy_(product);
    }
    return;
  }
  const bool same_dtype = out.scalar_type() == a.scalar_type();
  if (epilogue.accumulate) {
    if (same_dtype && !epilogue.bias) {
      out.addmm_(a, b);
    } else {
      auto product = at::mm(a, b);
      if (epilogue.bias) product.add_(*epilogue.bias);
      out.add_(product);
    }
  } else if (same_dtype) {
    if (epilogue.bias) {
      at::addmm_out(const_cast<torch::Tensor&>(out), epilogue.bias->to(a.scalar_type()), a, b);
    } else {
      at::mm_out(const_cast<torch::Tensor&>(out), a, b);
    }
  } else {
    out.copy_(epilogue.bias ? at::addmm(epilogue.bias->to(a.scalar_type()), a, b) : at::mm(a, b));
  }
  if (epilogue.relu) out.relu_();
}

#ifdef NPE_HAVE_ONEDNN

using dnnl::memory;

memory::data_type onednn_type(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32:
      return memory::data_type::f32;
    case torch::kBFloat16:
      return memory::data_type::bf16;
    default:
      throw std::invalid_argument("tile_matmul: float32 or bfloat16 only");
  }
}

memory::desc describe(const torch::Tensor& t) {
  return memory::desc(memory::dims(t.sizes().begin(), t.sizes().end()),
                      onednn_type(t.scalar_type()),
                      memory::dims(t.strides().begin(), t.strides().end()));
}

// Everything a primitive depends on: sizes, strides, dtypes and the epilogue.
struct ProductKey {
  // Per operand (a, b, out): rank, sizes and strides, padded with zeros to three dimensions.
  std::array<int64_t, 3 * 7> layout{};
  int8_t operand_type, out_type, bias_type;  // bias_type -1: no bias
  bool relu, accumulate;
  bool operator==(const ProductKey& o) const {
    return layout == o.layout && operand_type == o.operand_type && out_type == o.out_type &&
           bias_type == o.bias_type && relu == o.relu && accumulate == o.accumulate;
  }
};

ProductKey key_of(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                  const TileMatmulEpilogue& epilogue) {
  ProductKey key{};
  size_t i = 0;
  for (const auto* t : {&a, &b, &out}) {
    key.layout[i++] = t->dim();
    for (int64_t d = 0; d < 3; ++d) {
      key.layout[i++] = d < t->dim() ? t->size(d) : 0;
      key.layout[i++] = d < t->dim() ? t->stride(d) : 0;
    }
  }
  key.operand_type = static_cast<int8_t>(a.scalar_type());
  key.out_type = static_cast<int8_t>(out.scalar_type());
  key.bias_type = epilogue.bias ? static_cast<int8_t>(epilogue.bias->scalar_type()) : int8_t{-1};
  key.relu = epilogue.relu;
  key.accumulate = epilogue.accumulate;
  return key;
}

struct ProductKeyHash {
  size_t operator()(const ProductKey& key) const {
    size_t h = 0;
    for (int64_t v : key.layout) h = h * 1000003u ^ std::hash<int64_t>()(v);
    for (int64_t v : {int64_t{key.operand_type}, int64_t{key.out_type}, int64_t{key.bias_type},
                      int64_t{key.relu}, int64_t{key.accumulate}}) {
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    }
    return h;
  }
};

struct Product {
  dnnl::matmul primitive;
  memory::desc a, b, bias, out;
  size_t scratchpad_bytes = 0;
};

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

Product make_product(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                     const TileMatmulEpilogue& epilogue) {
  Product product;
  product.a = describe(a);
  product.b = describe(b);
  product.out = describe(out);
  dnnl::post_ops post_ops;
  if (epilogue.accumulate) post_ops.append_sum(1.f);
  if (epilogue.relu) post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attributes;
  attributes.set_post_ops(post_ops);
  // Each thread brings its own scratch memory: the primitives of different threads may share
  // an implementation in oneDNN's cache, and a library-managed scratchpad is shared with them.
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (epilogue.bias) {
    product.bias = memory::desc({1, b.size(1)}, onednn_type(epilogue.bias->scalar_type()),
                                memory::format_tag::ab);
  }
  const auto descriptor = epilogue.bias
                              ? dnnl::matmul::desc(product.a, product.b, product.bias, product.out)
                              : dnnl::matmul::desc(product.a, product.b, product.out);
  const dnnl::matmul::primitive_desc primitive_desc(descriptor, attributes, cpu_engine());
  product.scratchpad_bytes = primitive_desc.scratchpad_desc().get_size();
  product.primitive = dnnl::matmul(primitive_desc);
  return product;
}

struct ThreadState {
  dnnl::stream stream{cpu_engine()};
  std::unordered_map<ProductKey, Product, ProductKeyHash> products;
  torch::Tensor scratchpad = torch::empty({0}, torch::kUInt8);
};

void onednn_matmul(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                   const TileMatmulEpilogue& epilogue) {
  thread_local ThreadState state;
  const auto key = key_of(out, a, b, epilogue);
  auto found = state.products.find(key);
  if (found == state.products.end()) {
    // Tiles come in a handful of shapes; a bound keeps odd callers from growing the cache.
    if (state.products.size() > 256) state.products.clear();
    found = state.products.emplace(key, make_product(out, a, b, epilogue)).first;
  }
  const auto& product = found->second;
  if (state.scratchpad.numel() < int64_t(product.scratchpad_bytes)) {
    state.scratchpad = torch::empty({int64_t(product.scratchpad_bytes)}, torch::kUInt8);
  }
  const auto& engine = cpu_engine();
  std::unordered_map<int, memory> arguments{
      {DNNL_ARG_SRC, memory(product.a, engine, a.data_ptr())},
      {DNNL_ARG_WEIGHTS, memory(product.b, engine, b.data_ptr())},
      {DNNL_ARG_DST, memory(product.out, engine, out.data_ptr())},
      {DNNL_ARG_SCRATCHPAD, memory(memory::desc({int64_t(product.scratchpad_bytes)},
                                                memory::data_type::u8, memory::format_tag::a),
                                   engine, state.scratchpad.data_ptr())}};
  if (epilogue.bias) {
    arguments.emplace(DNNL_ARG_BIAS, memory(product.bias, engine, epilogue.bias->data_ptr()));
  }
  product.primitive.execute(state.stream, arguments);
  state.stream.wait();
}

// The product on guarded copies of its operands (guarded_operands.h), checked afterwards; the
// result is copied back. A stray write throws, naming the product's layout.
void guarded_onednn_matmul(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                           const TileMatmulEpilogue& epilogue) {
  const GuardedOperand guarded_out(out), guarded_a(a), guarded_b(b);
  std::optional<GuardedOperand> guarded_bias;
  if (epilogue.bias) guarded_bias.emplace(*epilogue.bias);
  TileMatmulEpilogue guarded_epilogue = epilogue;
  if (guarded_bias) guarded_epilogue.bias = &guarded_bias->view();
  onednn_matmul(guarded_out.view(), guarded_a.view(), guarded_b.view(), guarded_epilogue);
  std::string problem;
  const char* name = "";
  auto check = [&](const GuardedOperand& operand, const char* what, bool is_output) {
    if (!problem.empty()) return;
    problem = operand.find_stray_write(is_output);
    name = what;
  };
  check(guarded_out, "out", true);
  check(guarded_a, "a", false);
  check(guarded_b, "b", false);
  if (guarded_bias) check(*guarded_bias, "bias", false);
  if (!problem.empty()) {
    std::ostringstream layout;
    for (const auto& [t, what] : {std::pair{&out, "out"}, {&a, "a"}, {&b, "b"}}) {
      layout << " " << what << " " << t->sizes() << " strides " << t->strides() << " "
             << t->scalar_type() << ";";
    }
    TORCH_CHECK(false, "tile_matmul: the product wrote outside its output (operand ", name, ": ",
                problem, "; bias ", epilogue.bias != nullptr, ", relu ", epilogue.relu,
                ", accumulate ", epilogue.accumulate, ";", layout.str(), ")");
  }
  out.copy_(guarded_out.view());
}

#endif

std::atomic<bool>& guard_switch() {
  static std::atomic<bool> on{std::getenv("NPE_TILE_MATMUL_GUARD") != nullptr};
  return on;
}

}  // namespace

void set_tile_matmul_guard(bool on) {
  guard_switch() = on;
}

bool tile_matmul_guard() {
  return guard_switch();
}

void tile_matmul(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                 const TileMatmulEpilogue& epilogue) {
  check_arguments(out, a, b, epilogue);
#ifdef NPE_HAVE_ONEDNN
  if (a.device().is_cpu() && out.device().is_cpu() && a.numel() > 0 && b.numel() > 0) {
    if (tile_matmul_guard()) {
      guarded_onednn_matmul(out, a, b, epilogue);
    } else {
      onednn_matmul(out, a, b, epilogue);
    }
    return;
  }
#endif
  composed_matmul(out, a, b, epilogue);
}

bool tile_matmul_uses_onednn() {
#ifdef NPE_HAVE_ONEDNN
  return true;
#else
  return false;
#endif
}

std::string tile_matmul_onednn_version() {
#ifdef NPE_HAVE_ONEDNN
  const auto* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
#else
  return {};
#endif
}

}  // namespace npe
