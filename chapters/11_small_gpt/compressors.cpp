#include "compressors.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>

namespace attn::ch11 {

namespace {

namespace fs = std::filesystem;

constexpr const char* kInputName = "text";  // the input file's name, the same in every run
constexpr std::size_t kErrorTail = 400;     // how much of a program's stderr an error quotes

// A folder of its own under the system's temporary folder, removed with everything in it.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (fs::temp_directory_path() / "attn-ch11-compressor-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw CompressorError(
          fmt::format("cannot make a scratch folder {}: {}", pattern, std::strerror(errno)));
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A file descriptor, closed once.
class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  ~Descriptor() { close(); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  void close() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// posix_spawn's file actions and attributes, destroyed once.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw CompressorError(fmt::format("cannot write {}", path.string()));
}

// The last kErrorTail bytes of a file, on one line, or nothing.
std::string tail_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (text.size() > kErrorTail)
    text = "..." + text.substr(text.size() - kErrorTail);
  for (char& c : text)
    c = c == '\n' || c == '\r' ? ' ' : c;
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return text;
}

// A pipe: what is written to `write_end` is read from `read_end`. Neither end leaks into a
// program started meanwhile (O_CLOEXEC); the program this pipe feeds gets a copy of its read end
// as its standard input.
struct Pipe {
  Descriptor read_end, write_end;
};

// How a program ended: its wait status, and whether it left part of its input unread.
struct Ended {
  int status = 0;
  bool stopped_reading = false;
};

// How long a full pipe is waited on before asking whether its reader has ended.
constexpr int kPollMilliseconds = 50;

// Waits for the program `pid` to end and returns its wait status.
int wait_for(pid_t pid, const std::string& program) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw CompressorError(fmt::format("cannot wait for {}: {}", program, std::strerror(errno)));
  }
  return status;
}

// Writes `bytes` into `input` while the program `pid` runs, then waits for the program to end.
// This process keeps the pipe's read end open, so a write never fails for want of a reader
// (no SIGPIPE, no EPIPE): a full pipe is waited on instead, and the program's end checked
// meanwhile. A program that ends with bytes not yet written, or written but still in the pipe,
// stopped reading: that is known for certain, whatever the timing, however few the bytes.
Ended feed_and_wait(pid_t pid, const std::string& program, Pipe& input, std::string_view bytes) {
  const auto fail = [&](const char* what) {
    throw CompressorError(fmt::format("cannot {} {}: {}", what, program, std::strerror(errno)));
  };
  const int fd = input.write_end.get();
  if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
    fail("make a non-blocking pipe to");
  Ended ended;
  bool exited = false;
  int write_error = 0;  // reported once the program has ended, so that none is left unwaited for
  std::size_t written = 0;
  while (written < bytes.size() && !exited) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      write_error = errno;
      break;
    }
    const pid_t done = ::waitpid(pid, &ended.status, WNOHANG);
    if (done < 0 && errno != EINTR)
      fail("wait for");
    exited = done == pid;
    pollfd writable{.fd = fd, .events = POLLOUT, .revents = 0};
    if (!exited)
      ::poll(&writable, 1, kPollMilliseconds);
  }
  input.write_end.close();  // the program sees the end of its input
  if (!exited)
    ended.status = wait_for(pid, program);
  if (write_error != 0) {
    errno = write_error;
    fail("write the text to");
  }
  int unread = 0;
  if (::ioctl(input.read_end.get(), FIONREAD, &unread) != 0)
    fail("count the bytes left unread by");
  ended.stopped_reading = written < bytes.size() || unread > 0;
  return ended;
}

// Runs `argv` (argv[0] the program's path) in `folder`, standard output and error into files
// there, and returns how it ended. Its standard input is /dev/null, or with `input`, that
// pipe, into which `bytes` go while it runs.
Ended run(const std::vector<std::string>& argv, const fs::path& folder, Pipe* input,
          std::string_view bytes) {
  SpawnSetup setup;
  const std::string out = (folder / "stdout").string();
  const std::string err = (folder / "stderr").string();
  if (input != nullptr)
    posix_spawn_file_actions_adddup2(&setup.actions, input->read_end.get(), STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&setup.actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addchdir_np(&setup.actions, folder.c_str());
  // The program starts with no signal blocked and SIGPIPE at its default, whatever this
  // thread's state.
  sigset_t none, pipe_signal;
  sigemptyset(&none);
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  posix_spawnattr_setflags(&setup.attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask(&setup.attributes, &none);
  posix_spawnattr_setsigdefault(&setup.attributes, &pipe_signal);
  std::vector<char*> pointers;
  for (const std::string& a : argv)
    pointers.push_back(const_cast<char*>(a.c_str()));
  pointers.push_back(nullptr);
  // An environment of PATH alone: XZ_OPT, ZSTD_CLEVEL, BZIP2 and the like, which these programs
  // read before their arguments, cannot change what they are asked to do.
  const char* path = std::getenv("PATH");
  std::string path_entry = std::string("PATH=") + (path != nullptr ? path : "/usr/bin:/bin");
  char* environment[] = {path_entry.data(), nullptr};
  pid_t pid = 0;
  const int error = posix_spawn(&pid, argv.front().c_str(), &setup.actions, &setup.attributes,
                                pointers.data(), environment);
  if (error != 0)
    throw CompressorError(fmt::format("cannot start {}: {}", argv.front(), std::strerror(error)));
  if (input != nullptr)
    return feed_and_wait(pid, argv.front(), *input, bytes);
  return {.status = wait_for(pid, argv.front()), .stopped_reading = false};
}

}  // namespace

std::string find_program(const std::vector<std::string>& names) {
  const auto runnable = [](const fs::path& path) {
    std::error_code error;
    return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
  };
  const char* path_variable = std::getenv("PATH");
  const std::string folders = path_variable != nullptr ? path_variable : "/usr/bin:/bin";
  for (const std::string& name : names) {
    if (name.find('/') != std::string::npos) {
      if (runnable(name))
        return name;
      continue;
    }
    std::size_t start = 0;
    while (start <= folders.size()) {
      const std::size_t end = std::min(folders.find(':', start), folders.size());
      const std::string folder = folders.substr(start, end - start);
      const fs::path candidate = fs::path(folder.empty() ? "." : folder) / name;
      if (runnable(candidate))
        return candidate.string();
      start = end + 1;
    }
  }
  return {};
}

std::size_t compressed_size(const Compressor& compressor, const std::string& program,
                            std::string_view bytes) {
  const ScratchFolder folder;
  bool input_file = false, output_file = false;
  std::vector<std::string> argv{program};
  for (const std::string& a : compressor.arguments) {
    input_file = input_file || a == kInputFile;
    output_file = output_file || a == kOutputFile;
    argv.push_back(a == kInputFile ? kInputName : a == kOutputFile ? compressor.output_name : a);
  }
  if (output_file && compressor.output_name.empty())
    throw CompressorError(
        fmt::format("{}: {} names no output file", compressor.label, kOutputFile));
  Ended ended;
  if (input_file) {
    write_file(folder.path() / kInputName, bytes);
    ended = run(argv, folder.path(), nullptr, {});
  } else {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0)
      throw CompressorError(fmt::format("cannot make a pipe: {}", std::strerror(errno)));
    Pipe pipe{.read_end = Descriptor(ends[0]), .write_end = Descriptor(ends[1])};
    ended = run(argv, folder.path(), &pipe, bytes);
  }
  const int status = ended.status;
  const std::string who = fmt::format("{} ({})", compressor.label, program);
  if (WIFSIGNALED(status))
    throw CompressorError(fmt::format("{} was stopped by signal {} ({})", who, WTERMSIG(status),
                                      strsignal(WTERMSIG(status))));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string said = tail_of(folder.path() / "stderr");
    throw CompressorError(fmt::format("{} exited with status {}{}", who, WEXITSTATUS(status),
                                      said.empty() ? std::string() : ": " + said));
  }
  // A program that exits 0 without reading all its input has measured part of the text.
  if (ended.stopped_reading)
    throw CompressorError(fmt::format("{} stopped reading its input before the end of the {} bytes",
                                      who, bytes.size()));
  const fs::path result = folder.path() / (output_file ? compressor.output_name : "stdout");
  std::error_code error;
  const std::uintmax_t size = fs::file_size(result, error);
  if (error)
    throw CompressorError(fmt::format("{} wrote no {}", who, result.filename().string()));
  return static_cast<std::size_t>(size);
}

CompressorRun bits_per_byte(const Compressor& compressor, const std::string& training,
                            const std::string& test) {
  CompressorRun r;
  if (test.empty()) {
    r.problem = "the test text is empty: there is nothing to score";
    return r;
  }
  r.program = find_program(compressor.programs);
  if (r.program.empty()) {
    std::string names;
    for (const std::string& name : compressor.programs)
      names += (names.empty() ? "" : " or ") + name;
    r.problem = fmt::format("not installed (no {} on PATH; Debian's package {}); skipped", names,
                            compressor.package);
    return r;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    const std::string both = training + test;
    // Side by side: the training text alone on another thread, both texts on this one.
    std::future<std::size_t> alone = std::async(
        std::launch::async, [&] { return compressed_size(compressor, r.program, training); });
    std::size_t together = 0;
    try {
      together = compressed_size(compressor, r.program, both);
    } catch (...) {
      alone.wait();  // the other run ends before its arguments go out of scope
      throw;
    }
    r.training_bytes = alone.get();
    r.both_bytes = together;
    r.bits_per_byte = 8.0 *
                      (static_cast<double>(r.both_bytes) - static_cast<double>(r.training_bytes)) /
                      static_cast<double>(test.size());
  } catch (const std::exception& e) {  // CompressorError, or a thread or file system error
    r.problem = e.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace attn::ch11
