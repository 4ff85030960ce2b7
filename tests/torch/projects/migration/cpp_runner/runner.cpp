// The consumer of export.py's artifact: a C++ server that loads the .so it is given.
#include <iostream>
#include <vector>

#include <torch/csrc/inductor/aoti_runner/model_container_runner_cpu.h>
#include <torch/torch.h>

int main(int argc, char** argv) {
  torch::inductor::AOTIModelContainerRunnerCpu runner(argv[1]);
  std::vector<torch::Tensor> inputs = {torch::randn({7, 8})};
  std::cout << runner.run(inputs)[0].sum() << std::endl;
  return 0;
}
