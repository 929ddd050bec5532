#include "nimbus_thread.hpp"

namespace attn::ch02 {

NimbusThread nimbus_thread() {
  NimbusThread t;
  t.sentence = "Why did my Nimbus export fail?";
  t.tokens = {"why", "did", "my", "Nimbus", "export", "fail"};
  t.embeddings = {
      // about the problem, frames the question
      {-1.0, 1.5},  // why
      {-1.0, 0.5},  // did
      {-0.5, 1.0},  // my
      {1.0, -0.5},  // Nimbus
      {1.5, 0.5},   // export
      {1.5, 1.0},   // fail
  };
  t.projections.W_Q = {{0.2, 0.1}, {0.1, 0.14}};  // Q(export) = [0.35, 0.22]
  t.projections.W_K = {{0.6, 0.2}, {0.1, 0.4}};   // K(fail) = [1.0, 0.7]
  t.projections.W_V = {{0.8, 0.2}, {-0.2, 0.9}};
  return t;
}

}  // namespace attn::ch02
