#include "dcuda/dcuda_rank.h"
