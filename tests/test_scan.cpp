// Placeholder: being written.
#include "support.hpp"
