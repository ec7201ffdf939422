// Stand-in for the CUDA header of the same name: everything lives in the shim.
#pragma once
#include "../cuda_cpu_shim.h"
