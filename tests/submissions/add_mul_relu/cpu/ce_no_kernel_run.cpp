#include "add_mul_relu.h"
int other(const kernel_args *a) { return 0; }
