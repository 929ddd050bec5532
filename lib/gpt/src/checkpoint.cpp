#include "attn/gpt/checkpoint.hpp"

#include <attn/math/validate.hpp>

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace attn::gpt {

namespace {

static_assert(std::endian::native == std::endian::little,
              "checkpoints store numbers little-endian, as amd64 and arm64 hold them");

constexpr std::string_view kMagic = "ATTN-GPT";
constexpr std::uint32_t kVersion = 2;  // 2: the training measurement and the history

// Appends numbers, strings and matrices to a byte string.
struct Writer {
  std::string bytes;
  template <typename T>
  void number(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    bytes.append(raw, sizeof(T));
  }
  void text(std::string_view s) {
    number<std::uint64_t>(s.size());
    bytes.append(s);
  }
  void matrix(const arma::mat& m) {
    number<std::uint64_t>(m.n_rows);
    number<std::uint64_t>(m.n_cols);
    bytes.append(reinterpret_cast<const char*>(m.memptr()), m.n_elem * sizeof(double));
  }
};

// Reads them back, refusing to read past the end.
struct Reader {
  std::string_view bytes;
  const std::string& path;
  std::size_t at = 0;
  std::string_view take(std::size_t n) {
    if (n > bytes.size() - at)
      throw math::InputError(
          fmt::format("{}: the checkpoint is truncated (it ends at byte {})", path, bytes.size()));
    const std::string_view out = bytes.substr(at, n);
    at += n;
    return out;
  }
  template <typename T>
  T number() {
    T value;
    std::memcpy(&value, take(sizeof(T)).data(), sizeof(T));
    return value;
  }
  std::string text() { return std::string(take(number<std::uint64_t>())); }
  // A count of items of `item_bytes` each, checked against the bytes left before anything is
  // allocated for them: a count the file cannot hold (a damaged file whose checksum was
  // recomputed) is refused instead of asking for gigabytes.
  std::size_t count(std::string_view what, std::size_t item_bytes) {
    const auto n = number<std::uint64_t>();
    const std::size_t left = bytes.size() - at;
    if (n > left / item_bytes)
      throw math::InputError(fmt::format(
          "{}: the checkpoint is truncated or damaged: it announces {} {}, of {} bytes each, "
          "with {} bytes left",
          path, n, what, item_bytes, left));
    return static_cast<std::size_t>(n);
  }
  // A number that must be finite.
  double finite(std::string_view what) {
    const auto value = number<double>();
    if (!std::isfinite(value))
      throw math::InputError(fmt::format("{}: {} is {} in the checkpoint", path, what, value));
    return value;
  }
  arma::mat matrix(const std::string& name, const arma::mat& like) {
    const auto rows = number<std::uint64_t>();
    const auto cols = number<std::uint64_t>();
    if (rows != like.n_rows || cols != like.n_cols)
      throw math::InputError(fmt::format("{}: {} is ({} × {}) in the checkpoint, {} in this model",
                                         path, name, rows, cols, math::shape_of(like)));
    const std::string_view values = take(like.n_elem * sizeof(double));  // before allocating
    arma::mat m(rows, cols);
    std::memcpy(m.memptr(), values.data(), values.size());
    const arma::uvec bad = arma::find_nonfinite(m);
    if (!bad.is_empty())
      throw math::InputError(fmt::format("{}: {} holds {} at row {}, column {} in the checkpoint",
                                         path, name, m(bad(0)), bad(0) % rows, bad(0) / rows));
    return m;
  }
};

// The first line where two fingerprints differ, for the message.
std::string first_difference(const std::string& saved, const std::string& wanted) {
  std::istringstream a(saved), b(wanted);
  std::string x, y;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(a, x));
    const bool more_b = static_cast<bool>(std::getline(b, y));
    if (!more_a && !more_b)
      return "(none)";
    if (!more_a || !more_b || x != y)
      return fmt::format("it has \"{}\", this run \"{}\"", more_a ? x : "", more_b ? y : "");
  }
}

}  // namespace

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis and prime, 64-bit
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string run_fingerprint(const TransformerConfig& m, const TrainingSettings& s,
                            const text::BpeTokenizer& tokenizer, std::string_view training,
                            std::string_view evaluation) {
  std::string merges;
  for (const text::Merge& merge : tokenizer.merges())
    merges += fmt::format("{} {}\n", merge.left, merge.right);
  return fmt::format(
      "vocabulary {}\nd_model {}\nheads {}\nlayers {}\nd_ff {}\nmax_length {}\n"
      "positions {}\ntied {}\ndropout {}\nkv_heads {}\nwindow {}\nnorm {}\nmlp {}\n"
      "steps {}\nbatch {}\npeak_learning_rate {}\nfinal_learning_rate {}\n"
      "warmup_steps {}\nweight_decay {}\nbetas {} {}\nclip_norm {}\nevaluate_every {}\n"
      "evaluate_at_start {}\nseed {}\nprecision {}\nmerges {:016x}\ntraining_text {:016x}\n"
      "evaluation {}\n",
      m.vocabulary, m.d_model, m.heads, m.layers, m.d_ff, m.max_length, to_string(m.positions),
      m.tied_embeddings, m.dropout, m.kv_heads, m.window, to_string(m.norm), to_string(m.mlp),
      s.steps, s.batch, s.peak_learning_rate, s.final_learning_rate, s.warmup_steps, s.weight_decay,
      s.beta1, s.beta2, s.clip_norm, s.evaluate_every, s.evaluate_at_start, s.seed,
      s.precision == Precision::float32 ? "float32" : "float64", fnv1a(merges), fnv1a(training),
      evaluation);
}

void save_checkpoint(const std::string& path, const std::string& fingerprint,
                     const TrainingState& state) {
  Writer w;
  w.bytes.append(kMagic);
  w.number(kVersion);
  w.text(fingerprint);
  w.number<std::int64_t>(state.step);
  w.number<std::int64_t>(state.optimizer.steps);
  for (const std::uint64_t half : {state.rng_state.high, state.rng_state.low,
                                   state.rng_increment.high, state.rng_increment.low})
    w.number(half);
  w.number(state.loss_sum);
  w.number<std::int64_t>(state.loss_count);
  w.number<std::uint64_t>(state.curve.size());
  for (const CurvePoint& p : state.curve) {
    w.number<std::int64_t>(p.step);
    w.number(p.learning_rate);
    w.number(p.training_loss);
    w.number(p.measured.held_out);
    w.number<std::uint8_t>(p.measured.training.has_value());
    w.number(p.measured.training.value_or(0.0));
  }
  w.number<std::uint64_t>(state.history.size());
  for (const StepRecord& r : state.history) {
    w.number(r.loss);
    w.number(r.gradient_norm);
  }
  const std::vector<ConstParameter> parameters = gpt::parameters(state.weights);
  w.number<std::uint64_t>(parameters.size());
  for (const ConstParameter& p : parameters) {
    w.text(p.name);
    w.matrix(*p.value);
  }
  w.number<std::uint64_t>(state.optimizer.first.size());
  for (std::size_t k = 0; k < state.optimizer.first.size(); ++k) {
    w.matrix(state.optimizer.first[k]);
    w.matrix(state.optimizer.second[k]);
  }
  w.number(fnv1a(w.bytes));

  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(w.bytes.data(), static_cast<std::streamsize>(w.bytes.size()));
    out.flush();
    if (!out)
      throw math::InputError(fmt::format("cannot write the checkpoint {}", partial));
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error)
    throw math::InputError(
        fmt::format("cannot rename {} to {}: {}", partial, path, error.message()));
}

namespace {

// The file's bytes, once it is known to be a whole checkpoint of this format: a file that
// starts with the magic, of this version, whose checksum matches its bytes.
std::string read_checked(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw math::InputError(
        fmt::format("cannot read the checkpoint {}: there is no such file", path));
  if (!std::filesystem::is_regular_file(path, error))
    throw math::InputError(fmt::format("{} is not a file, so not a checkpoint", path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw math::InputError(fmt::format("cannot read the checkpoint {}", path));
  std::string file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (file.compare(0, kMagic.size(), kMagic) != 0)
    throw math::InputError(fmt::format(
        "{} is not a checkpoint of this book's GPT (no {} at its start)", path, kMagic));
  constexpr std::size_t kChecksum = sizeof(std::uint64_t);
  if (file.size() < kMagic.size() + sizeof(kVersion) + kChecksum)
    throw math::InputError(
        fmt::format("{}: the checkpoint is truncated ({} bytes)", path, file.size()));
  std::uint32_t version = 0;
  std::memcpy(&version, file.data() + kMagic.size(), sizeof(version));
  if (version != kVersion)
    throw math::InputError(
        fmt::format("{}: checkpoint format {}, where this book reads {}", path, version, kVersion));
  std::uint64_t stored = 0;
  std::memcpy(&stored, file.data() + file.size() - kChecksum, kChecksum);
  file.resize(file.size() - kChecksum);
  if (stored != fnv1a(file))
    throw math::InputError(fmt::format(
        "{}: the checkpoint is corrupted or truncated (its checksum does not match its bytes)",
        path));
  return file;
}

}  // namespace

void check_checkpoint_file(const std::string& path) {
  read_checked(path);
}

TrainingState load_checkpoint(const std::string& path, const std::string& fingerprint,
                              const TransformerConfig& model) {
  const std::string body = read_checked(path);
  Reader r{body, path};
  r.take(kMagic.size() + sizeof(kVersion));
  const std::string saved = r.text();
  if (saved != fingerprint)
    throw math::InputError(
        fmt::format("{} was made for another run: {}", path, first_difference(saved, fingerprint)));
  TrainingState state;
  state.weights = init_transformer(model, [](arma::uword rows, arma::uword cols) {
    return arma::mat(rows, cols, arma::fill::zeros);
  });
  state.step = r.number<std::int64_t>();
  state.optimizer.steps = r.number<std::int64_t>();
  state.rng_state.high = r.number<std::uint64_t>();
  state.rng_state.low = r.number<std::uint64_t>();
  state.rng_increment.high = r.number<std::uint64_t>();
  state.rng_increment.low = r.number<std::uint64_t>();
  state.loss_sum = r.finite("the sum of the batch losses");
  state.loss_count = r.number<std::int64_t>();
  constexpr std::size_t kPointBytes = sizeof(std::int64_t) + 4 * sizeof(double) + 1;
  state.curve.resize(r.count("curve points", kPointBytes));
  for (CurvePoint& p : state.curve) {
    p.step = r.number<std::int64_t>();
    p.learning_rate = r.finite("a curve point's learning rate");
    p.training_loss = r.finite("a curve point's training loss");
    p.measured.held_out = r.finite("a curve point's held-out measurement");
    const auto has_training = r.number<std::uint8_t>();
    const double training = r.finite("a curve point's training measurement");
    if (has_training > 1)
      throw math::InputError(
          fmt::format("{}: the checkpoint is damaged: a curve point's flag is {}, not 0 or 1", path,
                      has_training));
    if (has_training == 1)
      p.measured.training = training;
  }
  constexpr std::size_t kRecordBytes = 2 * sizeof(double);
  state.history.resize(r.count("step records", kRecordBytes));
  for (StepRecord& record : state.history) {
    record.loss = r.finite("a step's loss");
    record.gradient_norm = r.finite("a step's gradient norm");
  }
  const std::vector<Parameter> parameters = gpt::parameters(state.weights);
  const auto count = r.number<std::uint64_t>();
  if (count != parameters.size())
    throw math::InputError(fmt::format("{}: the checkpoint has {} parameters, this model {}", path,
                                       count, parameters.size()));
  for (const Parameter& p : parameters) {
    const std::string name = r.text();
    if (name != p.name)
      throw math::InputError(
          fmt::format("{}: the checkpoint has {} where this model has {}", path, name, p.name));
    *p.value = r.matrix(p.name, *p.value);
  }
  const auto moments = r.number<std::uint64_t>();
  if (moments != 0 && moments != parameters.size())
    throw math::InputError(fmt::format("{}: {} optimiser moments for {} parameters", path, moments,
                                       parameters.size()));
  for (std::size_t k = 0; k < moments; ++k) {
    state.optimizer.first.push_back(
        r.matrix(parameters[k].name + " (first moment)", *parameters[k].value));
    state.optimizer.second.push_back(
        r.matrix(parameters[k].name + " (second moment)", *parameters[k].value));
  }
  if (r.at != body.size())
    throw math::InputError(
        fmt::format("{}: {} bytes after the checkpoint's last field", path, body.size() - r.at));
  return state;
}

}  // namespace attn::gpt
