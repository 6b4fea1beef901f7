// Bindings of the partial JPEG decoder (jpeg_partial.h), kept beside it.
#pragma once

#include <nanobind/nanobind.h>

namespace tfrx {

void bind_jpeg_partial(nanobind::module_& m);

}  // namespace tfrx
