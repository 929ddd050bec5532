// numpy's printing and rounding, checked against what numpy 1.24 itself produced
// (tests/data/numpy_print.txt, numpy_print_2d.txt and numpy_round.txt, written by
// generate_print_fixtures.py).
#include <attn/numpy/numpy_print.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kData = ATTN_TEST_DATA_DIR;

double from_hex(const std::string& text) {
  return std::strtod(text.c_str(), nullptr);
}

struct PrintCase {
  arma::rowvec values;
  std::string expected;  // str(np.array(values)), lines joined by '\n'
};

std::vector<PrintCase> read_print_cases() {
  std::ifstream file(kData + "/numpy_print.txt");
  std::vector<PrintCase> cases;
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("in", 0) == 0) {
      std::istringstream words(line.substr(2));
      std::vector<double> v;
      for (std::string w; words >> w;)
        v.push_back(from_hex(w));
      cases.push_back({arma::rowvec(v), ""});
    } else if (line.rfind("out ", 0) == 0) {
      std::string& e = cases.back().expected;
      if (!e.empty())
        e += "\n";
      e += line.substr(4);
    }
  }
  return cases;
}

TEST(NumpyPrint, MatchesEveryArrayNumpyPrinted) {
  const auto cases = read_print_cases();
  ASSERT_GE(cases.size(), 40u) << "fixture file missing or truncated";
  for (const PrintCase& c : cases)
    EXPECT_EQ(attn::numpy::array_str(c.values), c.expected);
}

struct MatrixCase {
  std::string name;
  arma::mat values;
  std::vector<std::vector<double>> rows;  // as read, checked against the declared shape
  std::string expected;                   // str(matrix), lines joined by '\n'
};

std::vector<MatrixCase> read_matrix_cases() {
  std::ifstream file(kData + "/numpy_print_2d.txt");
  std::vector<MatrixCase> cases;
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("case ", 0) == 0) {
      std::istringstream words(line.substr(5));
      MatrixCase c;
      arma::uword rows = 0, cols = 0;
      words >> c.name >> rows >> cols;
      c.values.set_size(rows, cols);
      cases.push_back(c);
    } else if (line.rfind("in", 0) == 0) {
      std::istringstream words(line.substr(2));
      std::vector<double> row;
      for (std::string w; words >> w;)
        row.push_back(from_hex(w));
      cases.back().rows.push_back(row);
    } else if (line.rfind("out ", 0) == 0) {
      std::string& e = cases.back().expected;
      if (!e.empty())
        e += "\n";
      e += line.substr(4);
    }
  }
  return cases;
}

TEST(NumpyPrint, MatchesEveryMatrixNumpyPrinted) {
  auto cases = read_matrix_cases();
  ASSERT_GE(cases.size(), 15u) << "fixture file missing or truncated";
  for (MatrixCase& c : cases) {
    ASSERT_EQ(c.rows.size(), c.values.n_rows) << c.name;
    for (arma::uword r = 0; r < c.values.n_rows; ++r) {
      ASSERT_EQ(c.rows[r].size(), c.values.n_cols) << c.name << " row " << r;
      for (arma::uword j = 0; j < c.values.n_cols; ++j)
        c.values(r, j) = c.rows[r][j];
    }
    EXPECT_EQ(attn::numpy::matrix_str(c.values), c.expected) << "case " << c.name;
  }
}

TEST(NumpyPrint, ArticlePositionalEncodingLinesUp) {
  const arma::mat pe{{0.0, 1.0, 0.0, 1.0},
                     {0.8415, 0.5403, 0.01, 1.0},
                     {0.9093, -0.4161, 0.02, 0.9998},
                     {0.1411, -0.99, 0.03, 0.9996}};
  EXPECT_EQ(attn::numpy::matrix_str(pe),
            "[[ 0.      1.      0.      1.    ]\n"
            " [ 0.8415  0.5403  0.01    1.    ]\n"
            " [ 0.9093 -0.4161  0.02    0.9998]\n"
            " [ 0.1411 -0.99    0.03    0.9996]]");
}

TEST(NumpyPrint, SingleRowMatrixKeepsBothBrackets) {
  EXPECT_EQ(attn::numpy::matrix_str(arma::rowvec{0.2, 1.0, 0.7}), "[[0.2 1.  0.7]]");
  EXPECT_EQ(attn::numpy::matrix_str(arma::mat(0, 3)), "[]");
}

TEST(NumpyPrint, ArticleScoresPadToACommonWidth) {
  EXPECT_EQ(attn::numpy::array_str(arma::rowvec{0.2, 1.0, 0.7}), "[0.2 1.  0.7]");
}

TEST(NumpyPrint, ColumnVectorsPrintLikeRows) {
  EXPECT_EQ(attn::numpy::array_str(arma::vec{1.0, 1.0}), "[1. 1.]");
}

TEST(NumpyPrint, ShapeIsATuple) {
  EXPECT_EQ(attn::numpy::shape_str(arma::mat(5, 8)), "(5, 8)");
}

TEST(NumpyRound, MatchesNumpyIncludingTiesToEven) {
  std::ifstream file(kData + "/numpy_round.txt");
  int compared = 0;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream words(line);
    int decimals = 0;
    std::string x, expected;
    words >> decimals >> x >> expected;
    EXPECT_EQ(attn::numpy::round(from_hex(x), decimals), from_hex(expected)) << line;
    ++compared;
  }
  EXPECT_GE(compared, 400);
}

TEST(NumpyRound, WholeMatrices) {
  const arma::mat rounded = attn::numpy::round(arma::mat{{0.125, 0.135}, {2.5, -0.5}}, 2);
  EXPECT_EQ(rounded(0, 0), 0.12);
  EXPECT_EQ(rounded(0, 1), 0.14);
  EXPECT_EQ(rounded(1, 0), 2.5);
}

}  // namespace
