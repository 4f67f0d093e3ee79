// Placeholder: the Philox generator's tests are being written (see core/include/xgpu/random.hpp).
#include "support.hpp"
