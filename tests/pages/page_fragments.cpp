// Every fragment a book page pulls from another file resolves to something: a page that cuts
// printed output with \dontinclude, \skip, \until, \line and \skipline, or code with \snippet,
// must find every pattern it names and show at least one non-blank line. Doxygen says nothing
// when a pattern matches no line; it renders an empty box. This program walks the commands of
// every page the way Doxygen does and fails, naming the page, the line and the pattern, when one
// of them would render nothing.
//
// usage: page_fragments SOURCE_DIR   (the test book.page_fragments, tests/CMakeLists.txt)
// Exit status: 0 when every fragment resolves, 1 when one does not, 2 for a bad command line.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Doxygen's EXAMPLE_PATH (docs/Doxyfile.in), relative to the repository: where \dontinclude and
// \snippet look for the file they name.
const std::vector<std::string> kExampleDirs = {"chapters", "lib", "tests"};
// Doxygen's INPUT and FILE_PATTERNS: the pages and headers whose comments may cut fragments.
const std::vector<std::string> kPageDirs = {"docs", "chapters", "lib", "exercises"};
const std::vector<std::string> kPageExtensions = {".md", ".hpp"};

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos)
    return "";
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// The file a page names, found as Doxygen finds it: below one of the example folders, either
// at that relative path or as the only file whose path ends in it.
std::optional<fs::path> find_example(const fs::path& source, const std::string& name,
                                     std::string& why_not) {
  for (const std::string& dir : kExampleDirs) {
    const fs::path direct = source / dir / name;
    if (fs::is_regular_file(direct))
      return direct;
  }
  std::vector<fs::path> found;
  const std::string tail = "/" + name;
  for (const std::string& dir : kExampleDirs)
    for (const auto& entry : fs::recursive_directory_iterator(source / dir)) {
      const std::string path = entry.path().generic_string();
      if (entry.is_regular_file() && path.size() > tail.size() &&
          path.compare(path.size() - tail.size(), tail.size(), tail) == 0)
        found.push_back(entry.path());
    }
  if (found.size() == 1)
    return found.front();
  why_not = found.empty()
                ? "no such file in the example path (chapters, lib, tests)"
                : "the name is ambiguous: " + std::to_string(found.size()) + " files end in it";
  return std::nullopt;
}

// One page's fragments, resolved command by command. Each failure is one line of `problems`.
class PageWalk {
 public:
  // How many commands this walk has met.
  int commands() const { return commands_; }

  PageWalk(fs::path source, fs::path page, std::vector<std::string>& problems)
      : source_(std::move(source)), page_(std::move(page)), problems_(problems) {}

  void command(int page_line, const std::string& name, const std::string& argument) {
    page_line_ = page_line;
    ++commands_;
    if (name == "dontinclude")
      open(argument);
    else if (name == "skip")
      skip(argument);
    else if (name == "until")
      until(argument);
    else if (name == "line")
      line(argument);
    else if (name == "skipline") {
      if (skip(argument))
        line(argument);
    } else if (name == "snippet")
      snippet(argument);
  }

 private:
  void fail(const std::string& what) {
    problems_.push_back(fs::relative(page_, source_).generic_string() + ":" +
                        std::to_string(page_line_) + ": " + what);
  }

  void open(const std::string& name) {
    std::string why_not;
    const auto file = find_example(source_, name, why_not);
    lines_.clear();
    position_ = 0;
    file_name_ = name;
    if (!file) {
      fail("\\dontinclude " + name + ": " + why_not);
      return;
    }
    lines_ = lines_of(*file);
  }

  // \skip: moves to the next line holding the pattern (the line itself is not shown).
  bool skip(const std::string& pattern) {
    for (std::size_t i = position_; i < lines_.size(); ++i)
      if (lines_[i].find(pattern) != std::string::npos) {
        position_ = i;
        return true;
      }
    fail("\\skip " + pattern + ": no line of " + file_name_ + " from line " +
         std::to_string(position_ + 1) + " on holds it");
    position_ = lines_.size();
    return false;
  }

  // \until: shows the lines from here up to and including the next one holding the pattern.
  void until(const std::string& pattern) {
    bool shown = false;
    for (std::size_t i = position_; i < lines_.size(); ++i) {
      shown = shown || !is_blank(lines_[i]);
      if (lines_[i].find(pattern) != std::string::npos) {
        position_ = i + 1;
        if (!shown)
          fail("\\until " + pattern + ": the fragment is blank");
        return;
      }
    }
    fail("\\until " + pattern + ": no line of " + file_name_ + " from line " +
         std::to_string(position_ + 1) + " on holds it, so the fragment is empty");
    position_ = lines_.size();
  }

  // \line: shows the next non-blank line, only if it holds the pattern.
  void line(const std::string& pattern) {
    std::size_t i = position_;
    while (i < lines_.size() && is_blank(lines_[i]))
      ++i;
    if (i == lines_.size()) {
      fail("\\line " + pattern + ": no line of " + file_name_ + " is left to show");
    } else if (lines_[i].find(pattern) == std::string::npos) {
      fail("\\line " + pattern + ": the next line of " + file_name_ + " (line " +
           std::to_string(i + 1) + ") does not hold it, so nothing is shown");
    }
    position_ = std::min(i + 1, lines_.size());
  }

  // \snippet FILE NAME: the lines between the two lines that hold [NAME].
  void snippet(const std::string& argument) {
    std::istringstream words(argument);
    std::string name, region;
    words >> name >> region;
    std::string why_not;
    const auto file = find_example(source_, name, why_not);
    if (!file) {
      fail("\\snippet " + argument + ": " + why_not);
      return;
    }
    const std::vector<std::string> lines = lines_of(*file);
    const std::string marker = "[" + region + "]";
    std::vector<std::size_t> markers;
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find(marker) != std::string::npos)
        markers.push_back(i);
    if (markers.size() < 2) {
      fail("\\snippet " + argument + ": " + name + " holds " + std::to_string(markers.size()) +
           " line(s) with " + marker + ", a region needs two");
      return;
    }
    const bool blank =
        std::all_of(lines.begin() + static_cast<std::ptrdiff_t>(markers[0]) + 1,
                    lines.begin() + static_cast<std::ptrdiff_t>(markers[1]), is_blank);
    if (blank)
      fail("\\snippet " + argument + ": the region is empty");
  }

  fs::path source_, page_;
  int commands_ = 0;
  std::vector<std::string>& problems_;
  int page_line_ = 0;
  std::string file_name_;
  std::vector<std::string> lines_;
  std::size_t position_ = 0;
};

// The commands of one line of a page: a backslash, the command's name, then its argument, the
// rest of the line (\snippet and \dontinclude take the rest as words; the others as one pattern).
void walk_line(PageWalk& walk, int number, const std::string& text) {
  static const std::vector<std::string> kCommands = {"dontinclude", "skipline", "skip",
                                                     "until",       "line",     "snippet"};
  std::string rest = trimmed(text);
  if (rest.rfind("///", 0) == 0)
    rest = trimmed(rest.substr(3));  // a header's comment
  if (rest.empty() || rest[0] != '\\')
    return;
  for (const std::string& name : kCommands) {
    const std::string word = rest.substr(1, name.size());
    const std::size_t after = name.size() + 1;  // just past the backslash and the name
    const bool ends = rest.size() == after || (rest.size() > after && rest[after] == ' ');
    if (word == name && ends) {
      walk.command(number, name, trimmed(rest.substr(name.size() + 1)));
      return;
    }
  }
}

std::vector<fs::path> pages(const fs::path& source) {
  std::vector<fs::path> found;
  for (const std::string& dir : kPageDirs)
    for (const auto& entry : fs::recursive_directory_iterator(source / dir)) {
      const std::string extension = entry.path().extension().string();
      if (entry.is_regular_file() && std::find(kPageExtensions.begin(), kPageExtensions.end(),
                                               extension) != kPageExtensions.end())
        found.push_back(entry.path());
    }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || !fs::is_directory(argv[1])) {
    std::cerr << "usage: page_fragments SOURCE_DIR   (the repository's root folder)\n";
    return 2;
  }
  const fs::path source = argv[1];
  std::vector<std::string> problems;
  int commands = 0;
  const std::vector<fs::path> all_pages = pages(source);
  for (const fs::path& page : all_pages) {
    PageWalk walk(source, page, problems);
    const std::vector<std::string> lines = lines_of(page);
    for (std::size_t i = 0; i < lines.size(); ++i)
      walk_line(walk, static_cast<int>(i + 1), lines[i]);
    commands += walk.commands();
  }
  if (!problems.empty()) {
    std::cerr << problems.size() << " fragment(s) of the book would render empty:\n";
    for (const std::string& problem : problems)
      std::cerr << "  " << problem << '\n';
    return 1;
  }
  std::cout << "all " << commands << " fragment commands of " << all_pages.size()
            << " pages and headers resolve\n";
  return 0;
}
