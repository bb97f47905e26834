// fusor/fusor.hpp — the umbrella header: everything needed on the host.
#pragma once

#include "fusor/core/config.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/core/settings.hpp"
#include "fusor/core/tags.hpp"
#include "fusor/memory/array.hpp"
#include "fusor/memory/buffer.hpp"
#include "fusor/memory/space.hpp"
#include "fusor/shared.hpp"
#include "fusor/eval.hpp"
#include "fusor/compile/function.hpp"
#include "fusor/random/stream.hpp"
#include "fusor/grad/reverse.hpp"
#include "fusor/expr/print.hpp"
