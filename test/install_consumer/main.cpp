// kiln/test/install_consumer/main.cpp — uses an installed kiln the way a user's project does.
//
// Makes two tensors, adds them, prints the result and checks its values: exit 0 only when
// the installed headers, library and package configuration all work together.
#include <kiln/kiln.h>

#include <iostream>
#include <string>
#include <vector>

int main() {
  kiln::Tensor a = kiln::arange(6).reshape({2, 3}).to(kiln::kFloat);
  kiln::Tensor b = kiln::full({3}, 0.5);
  kiln::Tensor c = a + b;  // broadcasts over rows
  std::cout << c << "\n";

  const std::vector<float> expected = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  const std::string expected_text = "tensor([[0.5000, 1.5000, 2.5000],\n        [3.5000, 4.5000, 5.5000]])";
  if (c.to_vector<float>() != expected || c.str() != expected_text) {
    std::cerr << "install consumer: unexpected result\n";
    return 1;
  }
  std::cout << "install consumer: ok\n";
  return 0;
}
