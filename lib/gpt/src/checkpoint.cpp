#include "attn/gpt/checkpoint.hpp"

#include <attn/math/optimizer.hpp>
#include <attn/math/validate.hpp>
#include <attn/numpy/numpy_random.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace attn::gpt {

namespace {

static_assert(std::endian::native == std::endian::little,
              "checkpoints store numbers little-endian, as amd64 and arm64 hold them");

constexpr std::string_view kMagic = "ATTN-GPT";
constexpr std::uint32_t kVersion = 3;  // 2: the training measurement and the history; 3: others

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
  // A matrix of `like`'s shape, every entry finite and within ±`largest`.
  arma::mat matrix(const std::string& name, const arma::mat& like, double largest) {
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
    const arma::uvec large = arma::find(arma::abs(m) > largest);
    if (!large.is_empty())
      throw math::InputError(fmt::format(
          "{}: {} holds {} at row {}, column {} in the checkpoint, beyond the ±{} a checkpoint's "
          "weights may reach",
          path, name, m(large(0)), large(0) % rows, large(0) / rows, largest));
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

namespace {

// The lines of a fingerprint that every run has: the model, then the settings and the groups.
std::string model_and_settings(const TransformerConfig& m, const TrainingSettings& s) {
  std::string groups = fmt::format("parameter_groups {}\n", s.groups.size());
  for (const ParameterGroup& g : s.groups)
    groups += g.frozen ? fmt::format("group \"{}\" frozen\n", g.prefix)
                       : fmt::format("group \"{}\" rate_factor {} weight_decay {}\n", g.prefix,
                                     g.rate_factor, g.weight_decay.value_or(s.weight_decay));
  return describe(m) +
         fmt::format(
             "steps {}\nbatch {}\npeak_learning_rate {}\nfinal_learning_rate {}\n"
             "warmup_steps {}\nweight_decay {}\nbetas {} {}\nclip_norm {}\nevaluate_every {}\n"
             "evaluate_at_start {}\nseed {}\nprecision {}\n",
             s.steps, s.batch, s.peak_learning_rate, s.final_learning_rate, s.warmup_steps,
             s.weight_decay, s.beta1, s.beta2, s.clip_norm, s.evaluate_every, s.evaluate_at_start,
             s.seed, to_string(s.precision)) +
         groups;
}

}  // namespace

std::string run_fingerprint(const TransformerConfig& m, const TrainingSettings& s,
                            const text::BpeTokenizer& tokenizer, std::string_view training,
                            std::string_view evaluation) {
  std::string merges;
  for (const text::Merge& merge : tokenizer.merges())
    merges += fmt::format("{} {}\n", merge.left, merge.right);
  return model_and_settings(m, s) +
         fmt::format("merges {:016x}\ntraining_text {:016x}\nevaluation {}\n", fnv1a(merges),
                     fnv1a(training), evaluation);
}

std::string run_fingerprint(const TransformerConfig& m, const TrainingSettings& s,
                            std::string_view data, std::string_view evaluation) {
  return model_and_settings(m, s) + fmt::format("data {}\nevaluation {}\n", data, evaluation);
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
    w.number<std::uint64_t>(p.measured.others.size());
    for (const double other : p.measured.others)
      w.number(other);
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

namespace {

// What train() leaves in a state at step `t` of a run of `settings`, for the checks of
// check_state(): where its curve has points, and where the last of them that ended a stretch of
// batch losses is.
struct CurvePlan {
  const TrainingSettings& settings;
  std::int64_t t;
  bool start_point;  // the point at step 0, measured before any step (evaluate_at_start)

  // Points at step 0 (if any), at each multiple of evaluate_every up to t, and at the last
  // step, when it is reached and is no multiple.
  std::int64_t points() const {
    const std::int64_t every = settings.evaluate_every;
    const bool last = t == settings.steps && t % every != 0;
    return (start_point ? 1 : 0) + t / every + (last ? 1 : 0);
  }
  // The step of point `k` (below points()).
  std::int64_t step_of(std::int64_t k) const {
    if (start_point && k == 0)
      return 0;
    const std::int64_t regular = k - (start_point ? 1 : 0);
    return regular < t / settings.evaluate_every ? (regular + 1) * settings.evaluate_every
                                                 : settings.steps;
  }
};

// The sum of `history[from, to)`'s losses, added one by one from 0, as train() adds them into
// TrainingState::loss_sum: the same additions in the same order give the same bits.
double loss_sum(const std::vector<StepRecord>& history, std::int64_t from, std::int64_t to) {
  double sum = 0.0;
  for (std::int64_t k = from; k < to; ++k)
    sum += history[static_cast<std::size_t>(k)].loss;
  return sum;
}

// The largest m² / v that AdamW's moments can reach after `steps` steps of any gradients:
// with m = (1 − β1) Σ β1^(t−i) g_i and v = (1 − β2) Σ β2^(t−i) g_i², Cauchy–Schwarz gives
// m² ≤ (1 − β1)² / (1 − β2) · Σ_{k<t} (β1²/β2)^k · v, and one step of AdamW keeps the bound
// (it is this sum's recurrence). Infinite where nothing bounds m by v (β2 = 0: v is the last
// g² alone). Within it, an update's size is at most the learning rate times √bound, however
// small v is; a forged m beside v = 0 would move a weight by m / ε = m · 10⁸.
double moment_ratio_bound(double beta1, double beta2, std::int64_t steps) {
  if (!(beta2 > 0.0))
    return std::numeric_limits<double>::infinity();
  const double r = beta1 * beta1 / beta2;
  const auto t = static_cast<double>(steps);
  const double sum = r == 1.0 ? t : (1.0 - std::pow(r, t)) / (1.0 - r);  // Σ_{k<t} r^k
  return (1.0 - beta1) * (1.0 - beta1) / (1.0 - beta2) * sum;
}

// Row and column of entry `k` of `m`, as the messages name them.
std::string where(const arma::mat& m, arma::uword k) {
  return fmt::format("row {}, column {}", k % m.n_rows, k / m.n_rows);
}

// Every field of `state`, read from `path`, against the others and against `settings`: what
// train() would have left at the state's step. Each refusal names the file, the field and the
// values that disagree.
void check_state(const std::string& path, const TrainingState& state,
                 const TrainingSettings& settings, const std::vector<Parameter>& trained) {
  const auto refuse = [&path](const std::string& what) {
    throw math::InputError(fmt::format("{}: {}", path, what));
  };
  if (settings.evaluate_every < 1)
    throw math::InputError(fmt::format(
        "{} cannot be checked against a run whose evaluate_every is {}; it must be at least 1",
        path, settings.evaluate_every));
  const std::int64_t t = state.step;
  if (t < 0 || t > settings.steps)
    refuse(fmt::format("the checkpoint's step is {}, outside this run's 0 to {} steps", t,
                       settings.steps));
  // Bounded by the file's size (Reader::count), so t is too from here on.
  if (state.history.size() != static_cast<std::uint64_t>(t))
    refuse(fmt::format("the checkpoint is at step {} but its history holds {} steps (one a step)",
                       t, state.history.size()));
  if (state.optimizer.steps != t)
    refuse(
        fmt::format("the checkpoint's AdamW step count is {} but its step is {} (AdamW steps "
                    "once a training step)",
                    state.optimizer.steps, t));
  const std::size_t pairs = t > 0 ? trained.size() : 0;
  if (state.optimizer.first.size() != pairs)
    refuse(
        fmt::format("the checkpoint holds {} pairs of AdamW moments at step {}, where a run "
                    "holds {} (none before its first step, one a trained parameter after it)",
                    state.optimizer.first.size(), t, pairs));

  for (std::size_t k = 0; k < state.history.size(); ++k) {
    const StepRecord& r = state.history[k];
    if (r.loss < 0.0)
      refuse(
          fmt::format("the checkpoint's history has loss {} at step {}; a cross-entropy is "
                      "never negative",
                      r.loss, k + 1));
    if (r.gradient_norm < 0.0)
      refuse(
          fmt::format("the checkpoint's history has gradient norm {} at step {}; a norm is "
                      "never negative",
                      r.gradient_norm, k + 1));
  }

  const CurvePlan plan{settings, t, settings.evaluate_at_start && (t > 0 || !state.curve.empty())};
  if (state.curve.size() != static_cast<std::uint64_t>(plan.points()))
    refuse(
        fmt::format("the checkpoint's curve has {} points at step {}, where this run has {} "
                    "(a point every {} steps of {}{})",
                    state.curve.size(), t, plan.points(), settings.evaluate_every, settings.steps,
                    settings.evaluate_at_start ? ", and one at step 0" : ""));
  const math::WarmupCosine schedule = schedule_of(settings);
  std::int64_t measured = 0;  // the step of the last point that ended a stretch of losses
  for (std::size_t k = 0; k < state.curve.size(); ++k) {
    const CurvePoint& p = state.curve[k];
    const std::int64_t step = plan.step_of(static_cast<std::int64_t>(k));
    if (p.step != step)
      refuse(
          fmt::format("the checkpoint's curve point {} is at step {}, where this run measures "
                      "at step {}",
                      k, p.step, step));
    // The rate of the point's last step; the cosine goes through the C library, whose last
    // bit may differ on another machine, so within a relative 1e-12 of it.
    const double rate = math::learning_rate(schedule, std::max<std::int64_t>(step - 1, 0));
    if (!(std::abs(p.learning_rate - rate) <= 1e-12 * std::abs(rate)))
      refuse(
          fmt::format("the checkpoint's curve point {} (step {}) has learning rate {}, where "
                      "this run's schedule has {}",
                      k, step, p.learning_rate, rate));
    // A point at step 0 holds the first step's loss once it is taken; any other, the mean of
    // the losses since the point before, as train() divides them.
    double loss = 0.0;
    if (step == 0 && t > 0)
      loss = state.history.front().loss;
    else if (step > 0)
      loss = loss_sum(state.history, measured, step) / static_cast<double>(step - measured);
    if (p.training_loss != loss)
      refuse(
          fmt::format("the checkpoint's curve point {} (step {}) has training loss {}, where "
                      "its history's losses give {}",
                      k, step, p.training_loss, loss));
    measured = std::max(measured, step);
  }
  if (state.loss_count != t - measured)
    refuse(
        fmt::format("the checkpoint's count of the batch losses is {}; its step is {} and {}, "
                    "so the count is {}",
                    state.loss_count, t,
                    measured > 0 ? fmt::format("its curve's last point is at step {}", measured)
                                 : std::string("its curve has no point after step 0"),
                    t - measured));
  const double sum = loss_sum(state.history, measured, t);
  if (state.loss_sum != sum)
    refuse(
        fmt::format("the checkpoint's sum of the batch losses is {}, where its history's "
                    "losses after step {} sum to {}",
                    state.loss_sum, measured, sum));

  // The stream's increment is fixed by the seed; its state may be anywhere on the stream.
  const numpy::UInt128 increment = numpy::default_rng(settings.seed).bit_generator().increment();
  if (state.rng_increment.high != increment.high || state.rng_increment.low != increment.low)
    refuse(
        fmt::format("the checkpoint's random stream has increment {:016x}{:016x}, where "
                    "default_rng({}) has {:016x}{:016x}",
                    state.rng_increment.high, state.rng_increment.low, settings.seed,
                    increment.high, increment.low));

  // Rounding in the moments' sums may reach the bound's last digits; below 1e-150 a first
  // moment moves nothing, whatever its second moment (which may have underflowed to 0).
  const double bound = std::sqrt(moment_ratio_bound(settings.beta1, settings.beta2, t)) * 1.000001;
  for (std::size_t i = 0; i < state.optimizer.first.size(); ++i) {
    const arma::mat& m = state.optimizer.first[i];
    const arma::mat& v = state.optimizer.second[i];
    for (arma::uword k = 0; k < v.n_elem; ++k) {
      if (v(k) < 0.0)
        refuse(
            fmt::format("the checkpoint's second moment of {} holds {} at {}; a mean of "
                        "squared gradients is never negative",
                        trained[i].name, v(k), where(v, k)));
      if (!(std::abs(m(k)) <= bound * std::sqrt(v(k)) + 1e-150))
        refuse(fmt::format(
            "the checkpoint's first moment of {} holds {} at {}, where its second "
            "moment holds {}: after {} AdamW steps with betas {} and {}, |m| is at "
            "most {:.4g} √v",
            trained[i].name, m(k), where(m, k), v(k), t, settings.beta1, settings.beta2, bound));
    }
  }
}

}  // namespace

TrainingState load_checkpoint(const std::string& path, const std::string& fingerprint,
                              const TransformerConfig& model, const TrainingSettings& settings) {
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
  constexpr std::size_t kPointBytes =
      sizeof(std::int64_t) + 4 * sizeof(double) + 1 + sizeof(std::uint64_t);
  state.curve.resize(r.count("curve points", kPointBytes));
  for (std::size_t k = 0; k < state.curve.size(); ++k) {
    CurvePoint& p = state.curve[k];
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
    else if (std::bit_cast<std::uint64_t>(training) != 0)  // +0, bit for bit, as saved
      throw math::InputError(fmt::format(
          "{}: the checkpoint's curve point {} holds {} for its training measurement, which its "
          "flag says was not taken (the format writes 0)",
          path, k, training));
    p.measured.others.resize(r.count("a curve point's other measurements", sizeof(double)));
    for (double& other : p.measured.others)
      other = r.finite("a curve point's other measurement");
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
    *p.value = r.matrix(p.name, *p.value, kLargestCheckpointWeight);
  }
  // AdamW keeps moments for the parameters the run trains: all, unless a group freezes some.
  std::vector<Parameter> trained;
  for (const TrainedParameter& p : trained_parameters(state.weights, settings))
    trained.push_back(p.parameter);
  const auto moments = r.number<std::uint64_t>();
  if (moments != 0 && moments != trained.size())
    throw math::InputError(fmt::format("{}: {} optimiser moments for {} trained parameters", path,
                                       moments, trained.size()));
  constexpr double kAny = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < moments; ++k) {
    state.optimizer.first.push_back(
        r.matrix(trained[k].name + " (first moment)", *trained[k].value, kAny));
    state.optimizer.second.push_back(
        r.matrix(trained[k].name + " (second moment)", *trained[k].value, kAny));
  }
  if (r.at != body.size())
    throw math::InputError(
        fmt::format("{}: {} bytes after the checkpoint's last field", path, body.size() - r.at));
  check_state(path, state, settings, trained);
  return state;
}

TrainingState resume_or_start(const std::string& path, const std::string& fingerprint,
                              const TransformerConfig& model, const TrainingSettings& settings) {
  std::error_code error;  // a file that cannot be looked at is not there
  if (path.empty() || !std::filesystem::exists(path, error))
    return start(model, settings);
  return load_checkpoint(path, fingerprint, model, settings);
}

TrainingState trained_once(std::ostream& log, const std::string& path,
                           const std::string& fingerprint, const TransformerConfig& model,
                           const TrainingSettings& settings,
                           const std::function<void(TrainingState& state)>& train) {
  TrainingState state;
  try {
    state = resume_or_start(path, fingerprint, model, settings);
  } catch (const math::InputError& e) {  // another run's checkpoint, or no whole one
    fmt::print(log, "{}; training it again\n", e.what());
    state = start(model, settings);
  }
  if (state.step == settings.steps)
    return state;
  if (state.step > 0) {  // a run is kept only when it is whole: none stops half-way
    fmt::print(log, "{}: the checkpoint stops at step {} of {}; training it again\n", path,
               state.step, settings.steps);
    state = start(model, settings);
  }
  train(state);
  if (!path.empty())
    save_checkpoint(path, fingerprint, state);
  return state;
}

}  // namespace attn::gpt
